// kernel_log: records of the kernel log ring from a sequence number, optionally above a level.
// Reads through the introspection object its token granted (read), nothing else.
#include "../tool_def.h"
#include "../../tool_exec.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <ktl/log_ring.h>
#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr const char* kLogIn =
    R"({"type":"object","properties":{)"
    R"("since":{"type":"integer","minimum":0,"maximum":9007199254740991,"description":"first sequence number wanted"},)"
    R"("limit":{"type":"integer","minimum":1,"maximum":200,"description":"records at most, default 50"},)"
    R"("min_level":{"type":"string","maxLength":8,"enum":["debug","info","notice","warning","error","critical"]}},)"
    R"("additionalProperties":false})";
constexpr const char* kLogOut =
    R"({"type":"object","properties":{"records":{"type":"array","items":{"type":"object",)"
    R"("properties":{"seq":{"type":"integer"},"uptime_ns":{"type":"integer"},"level":{"type":"string"},"text":{"type":"string"}}}},)"
    R"("next":{"type":"integer"},"missed":{"type":"integer"}},"required":["records","next"]})";

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    uint64_t since = args.find("since").as_uint64().value_or(0);
    uint64_t limit = args.find("limit").as_uint64().value_or(50);
    int min_level = 0;
    json::Value lv = args.find("min_level");
    for (int l = 0; l <= static_cast<int>(ktl::LogLevel::Critical); ++l)
        if (lv.string_equals(ktl::log_level_name(static_cast<ktl::LogLevel>(l))))
            min_level = l;
    ktl::LogRecord rec;
    w.begin_object().key("records").begin_array();
    uint64_t seq = since, missed = 0, count = 0;
    // Bounded: at most the ring's size of records is examined per call.
    for (int guard = 0; guard < 4096 && count < limit; ++guard) {
        int64_t next = sys::log_read(ctx.cap, seq, &rec);
        if (next < 0)
            break;
        if (rec.seq > seq && count == 0 && guard == 0)
            missed = rec.seq - seq; // overwritten before anyone read them
        seq = static_cast<uint64_t>(next);
        if (static_cast<int>(rec.level) < min_level)
            continue;
        w.begin_object().key("seq").number(rec.seq).key("uptime_ns").number(rec.mono_ns);
        w.key("level").string(ktl::log_level_name(rec.level)).key("text").string({ rec.text, rec.length }).end_object();
        ++count;
    }
    w.end_array().key("next").number(seq).key("missed").number(missed).end_object();
    (void)err;
    return true;
}

constexpr mcp::Tool kTool = {
    "kernel_log", "Kernel log", "Records of the kernel log ring from a sequence number, optionally above a level.",
    kLogIn,       kLogOut,      mcp::kKernelRead,
    nullptr
};

} // namespace

MCPD_TOOL(kernel_log) { kTool, run, Grant::Introspection, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools
