// test_fault (boot argument profile=faults, tests only): a tool that misbehaves on purpose. It
// takes kernel heap and then faults, hangs past its stop, or spends its system-call budget, so
// tests can show from outside that the kernel answers at once and takes everything back.
#include "../tool_def.h"
#include "../../tool_exec.h"
#include <abi/rights.h>
#include "../../../fault_injection.h"
#include "../../../mm/kheap.h"

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr const char* kFaultIn =
    R"({"type":"object","properties":{)"
    R"("mode":{"type":"string","enum":["data","write","exec","undef","brk","hang","tamper","reparent","no_token"],)"
    R"("description":"how to end: a fault of that kind, or hang: ignore the stop and be killed; tamper: the arguments change after the token is issued; reparent: the call's provenance node does; no_token: the token is withheld"},)"
    R"("blocks":{"type":"integer","minimum":0,"maximum":256,"description":"200-byte heap blocks taken first, default 16"},)"
    R"("large_kib":{"type":"integer","minimum":0,"maximum":4096,"description":"one large heap block taken first, default 64"}},)"
    R"("required":["mode"],"additionalProperties":false})";
constexpr const char* kFaultOut =
    R"({"type":"object","properties":{"survived":{"type":"boolean"}},"required":["survived"]})";

// Takes heap it never gives back itself, then ends the way it was asked to. Only the kernel's
// reclaim on death returns the memory.
bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext&) {
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

constexpr mcp::Tool kTool = {
    "test_fault",
    "Misbehaving tool (tests)",
    "Takes kernel heap, then faults or hangs past its stop: the kernel must answer at once and take everything back.",
    kFaultIn,
    kFaultOut,
    mcp::kKernelRead,
    nullptr
};

} // namespace

MCPD_TOOL(test_fault) { kTool, run, Grant::Nothing, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools
