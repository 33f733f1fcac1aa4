#include "sink_policy.h"

namespace mcp {
namespace {

constexpr const char* kSinkNames[] = { "none", "drop", "bulk_delete", "delete", "write", "create" };

} // namespace

const char* verdict_name(Verdict verdict) {
    switch (verdict) {
    case Verdict::Allow: return "ALLOW";
    case Verdict::Block: return "BLOCK";
    case Verdict::StepUp: return "STEP_UP";
    }
    return "BLOCK";
}

const char* sink_name(Sink sink) {
    auto i = static_cast<uint8_t>(sink);
    return i < sizeof kSinkNames / sizeof kSinkNames[0] ? kSinkNames[i] : "none";
}

bool SinkRules::add_sinks(std::string_view list) {
    uint32_t added = 0;
    while (!list.empty()) {
        size_t comma = list.find(',');
        std::string_view name = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        bool known = false;
        for (uint8_t i = 1; i < sizeof kSinkNames / sizeof kSinkNames[0]; ++i)
            if (name == kSinkNames[i]) {
                added |= 1u << i;
                known = true;
            }
        if (!known)
            return false;
    }
    if (added & sink_bit(Sink::Delete))
        added |= sink_bit(Sink::BulkDelete); // every delete includes the large ones
    critical |= added;
    return true;
}

void SinkRules::lower_delete_threshold(uint32_t n) {
    if (n < delete_over)
        delete_over = n;
}

bool SinkRules::critical_sink(Sink sink) const { return sink != Sink::None && (critical & sink_bit(sink)) != 0; }

Decision decide(const SinkRules& rules, const SinkCall& call) {
    // Fail-closed first: without its token, or with one bound to something else, nothing runs.
    if (!call.token_present)
        return { Verdict::Block, "token_missing" };
    if (!call.token_matches)
        return { Verdict::Block, "token_mismatch" };
    if (call.sink == Sink::None)
        return { Verdict::Allow, "no_sink" };
    if (!rules.critical_sink(call.sink))
        return { Verdict::Allow, "not_critical" };
    if (call.integrity == Integrity::Trusted)
        return { Verdict::Allow, "trusted" };
    if (call.approved)
        return { Verdict::Allow, "approved" };
    // The caller's role is not an input: an administrator's model is a model.
    return { Verdict::StepUp, "untrusted_critical_sink" };
}

} // namespace mcp
