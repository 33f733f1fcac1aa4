#include "tamper.h"
#include "../profile.h"
#include "../tool_def.h"

#include <string_view>

namespace mcpd {

namespace tools {
extern const ToolDef test_fault; // test_fault.cpp
}

void tamper_if_asked(const ToolDef& def, char* args, size_t len, uint64_t& provenance, uint32_t& token) {
    if (!faults_profile() || &def != &tools::test_fault)
        return;
    constexpr std::string_view kAsk = "\"tamper\"";
    constexpr std::string_view kReparent = "\"reparent\"";
    constexpr std::string_view kNoToken = "\"no_token\"";
    for (size_t i = 0; i + kNoToken.size() <= len; ++i)
        if (std::string_view(args + i, kNoToken.size()) == kNoToken) {
            token = ~0u; // the task is never told its token: it must not run
            return;
        }
    for (size_t i = 0; i + kAsk.size() <= len; ++i)
        if (std::string_view(args + i, kAsk.size()) == kAsk) {
            args[i + 1] = 'T'; // "Tamper": still valid JSON, no longer what the token was bound to
            return;
        }
    for (size_t i = 0; i + kReparent.size() <= len; ++i)
        if (std::string_view(args + i, kReparent.size()) == kReparent) {
            provenance ^= 1u << 31; // the arguments as bound, but acting for a node no request has
            return;
        }
}

} // namespace mcpd
