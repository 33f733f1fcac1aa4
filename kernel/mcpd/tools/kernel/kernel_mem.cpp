// kernel_mem: physical pages, kernel heap, task stacks and what ended tasks left behind.
// Reads through the introspection object its token granted (read), nothing else.
#include "../schemas.h"
#include "../tool_def.h"
#include "../../tool_exec.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr const char* kMemOut =
    R"({"type":"object","properties":{"page_bytes":{"type":"integer"},"total_pages":{"type":"integer"},)"
    R"("free_pages":{"type":"integer"},"used_pages":{"type":"integer"},"largest_free_block_pages":{"type":"integer"},)"
    R"("heap":{"type":"object"},"stacks":{"type":"object"},"reclaimed":{"type":"object"}},"required":["total_pages","free_pages"]})";

bool run(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    abi::MemInfo mem {};
    if (sys::mem_stats(ctx.cap, &mem) < 0) {
        err = { mcp::ErrorCode::InternalError, "memory statistics unavailable" };
        return false;
    }
    w.begin_object();
    w.key("page_bytes").number(uint64_t(4096));
    w.key("total_pages").number(mem.total_pages).key("free_pages").number(mem.free_pages);
    w.key("used_pages").number(mem.used_pages).key("largest_free_block_pages").number(mem.largest_free_block);
    w.key("heap").begin_object().key("live_allocations").number(mem.heap_live_allocations);
    w.key("bytes_requested").number(mem.heap_bytes_requested).key("slab_pages").number(mem.heap_slab_pages);
    w.key("large_pages").number(mem.heap_large_pages).end_object();
    w.key("stacks")
        .begin_object()
        .key("used")
        .number(mem.stacks_used)
        .key("total")
        .number(mem.stacks_total)
        .end_object();
    // What tasks that ended (faulted, killed) still held and the kernel took back.
    w.key("reclaimed").begin_object().key("heap_allocations").number(mem.reclaimed_heap_allocations);
    w.key("heap_bytes").number(mem.reclaimed_heap_bytes).key("objects").number(mem.reclaimed_objects);
    w.key("mutexes").number(mem.reclaimed_mutexes).end_object();
    w.end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "kernel_mem", "Kernel memory", "Physical pages, kernel heap, task stacks and what ended tasks left behind.",
    kNoArgs,      kMemOut,         mcp::kKernelRead,
    nullptr
};

} // namespace

MCPD_TOOL(kernel_mem) { kTool, run, Grant::Introspection, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools
