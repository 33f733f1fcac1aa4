#include "fault_tools.h"
#include "tool_exec.h"

#include "../bootargs.h"
#include "../cap/kcap.h"
#include "../fault_injection.h"
#include "../mm/kheap.h"

#include <mcp/policy/roles.h>

namespace mcpd {
namespace {

const char* kFaultIn = R"({"type":"object","properties":{)"
                       R"("mode":{"type":"string","enum":["data","write","exec","undef","brk","hang","tamper","reparent","no_token"],)"
                       R"("description":"how to end: a fault of that kind, or hang: ignore the stop and be killed; tamper: the arguments change after the token is issued; reparent: the call's provenance node does; no_token: the token is withheld"},)"
                       R"("blocks":{"type":"integer","minimum":0,"maximum":256,"description":"200-byte heap blocks taken first, default 16"},)"
                       R"("large_kib":{"type":"integer","minimum":0,"maximum":4096,"description":"one large heap block taken first, default 64"}},)"
                       R"("required":["mode"],"additionalProperties":false})";
const char* kFaultOut = R"({"type":"object","properties":{"survived":{"type":"boolean"}},"required":["survived"]})";

// Takes heap it never gives back itself, then ends the way it was asked to. Only the kernel's
// reclaim on death returns the memory.
bool test_fault(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext&) {
    auto mode = args.find("mode").plain_string().value_or("");
    uint64_t blocks = args.find("blocks").as_uint64().value_or(16);
    uint64_t large = args.find("large_kib").as_uint64().value_or(64) * 1024;
    for (uint64_t i = 0; i < blocks; ++i)
        if (auto p = kheap::alloc(200))
            static_cast<volatile char*>(*p)[0] = 1;
    if (large)
        if (auto p = kheap::alloc(large))
            static_cast<volatile char*>(*p)[0] = 1;
    if (mode == "hang") {
        // Checks nothing and makes no system call: only a kill ends it (2^62 turns is forever).
        volatile uint64_t turns = 0;
        while (turns < (1ull << 62))
            turns = turns + 1;
    } else {
        fault_injection::trigger(mode);
    }
    err = { mcp::ErrorCode::InternalError, "the fault did not happen" };
    w.begin_object().key("survived").boolean(true).end_object();
    return false;
}

constexpr ToolImpl kImpls[] = {
    { "test_fault", test_fault, Grant::Nothing, kcap::kRead },
};

const mcp::Tool kTools[] = {
    { "test_fault", "Misbehaving tool (tests)",
      "Takes kernel heap, then faults or hangs past its stop: the kernel must answer at once and take everything back.",
      kFaultIn, kFaultOut, mcp::kKernelRead, nullptr },
};

} // namespace

void tamper_if_asked(const char* tool, char* args, size_t len, uint64_t& provenance, uint32_t& token) {
    if (!faults_profile() || std::string_view(tool) != "test_fault")
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

bool faults_profile() { return bootargs::get().profile == "faults"; }
std::span<const mcp::Tool> fault_tools() { return faults_profile() ? std::span<const mcp::Tool>(kTools) : std::span<const mcp::Tool>(); }
std::span<const ToolImpl> fault_tool_impls() { return faults_profile() ? std::span<const ToolImpl>(kImpls) : std::span<const ToolImpl>(); }

} // namespace mcpd
