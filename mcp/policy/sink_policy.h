#pragma once
// The sink policy (the adapter contract): the decision about a call that has an effect, taken
// after its execution token is redeemed and before it runs, with three outcomes. A call without
// its token, or whose token does not match its binding (arguments, provenance node), is BLOCKed.
// A call on a critical sink from UNTRUSTED provenance — everything a client sends — gets STEP_UP
// whatever the caller's role: a human confirms it (elicitation) or an administrator approves it
// as a proposal; only that approval turns it into ALLOW. Everything else is ALLOWed.
#include <cstdint>
#include <string_view>

#include "provenance.h"

namespace mcp {

enum class Verdict : uint8_t { Allow, Block, StepUp };
const char* verdict_name(Verdict verdict); // "ALLOW", "BLOCK", "STEP_UP"

// What a call would do. BulkDelete is a delete of more ids than the threshold. (An import never
// replaces an existing collection — the store refuses the name — so it destroys nothing.)
enum class Sink : uint8_t { None, Drop, BulkDelete, Delete, Write, Create };
const char* sink_name(Sink sink); // "drop", "bulk_delete", "delete", "write", "create", "none"
constexpr uint32_t sink_bit(Sink sink) { return 1u << static_cast<uint8_t>(sink); }

struct SinkRules {
    // The defaults, the least the policy ever covers: dropping a collection, and deleting more
    // than kDefaultDeleteOver vectors in one call.
    static constexpr uint32_t kDefaultCritical = sink_bit(Sink::Drop) | sink_bit(Sink::BulkDelete);
    static constexpr uint32_t kDefaultDeleteOver = 100;
    uint32_t critical = kDefaultCritical;
    uint32_t delete_over = kDefaultDeleteOver;

    // Boot arguments, which can only widen the policy: `step_up=delete,write,create` adds sinks
    // (every delete, every upsert, collection creation); `step_up_delete_over=N`
    // lowers the threshold (a higher one is ignored). False (and nothing changed) for a name
    // that is not a sink.
    bool add_sinks(std::string_view list);
    void lower_delete_threshold(uint32_t n);
    // The sink a delete of `ids` ids is.
    Sink delete_sink(uint64_t ids) const { return ids > delete_over ? Sink::BulkDelete : Sink::Delete; }
    bool critical_sink(Sink sink) const;
};

// What the decision is taken on.
struct SinkCall {
    bool token_present = false; // the call's execution token was issued
    bool token_matches = false; // and redeemed against the call's binding (arguments, node)
    Integrity integrity = Integrity::Untrusted;
    Sink sink = Sink::None;
    bool approved = false; // a human confirmed it, or an administrator approved its proposal
};

struct Decision {
    Verdict verdict;
    const char*
        reason; // token_missing, token_mismatch, no_sink, not_critical, trusted, approved, untrusted_critical_sink
};

Decision decide(const SinkRules& rules, const SinkCall& call);

} // namespace mcp
