// cluster_ping: an authenticated probe to a member, now. Its token grants the Cluster object,
// read and write (a probe changes no stored data). Listed only on a node that runs membership.
#include "cluster_members.h"
#include "../tool_def.h"
#include "../../tool_exec.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr const char* kPingIn =
    R"({"type":"object","properties":{)"
    R"("node":{"type":"string","minLength":1,"maxLength":31,"description":"the member to probe"},)"
    R"("timeout_ms":{"type":"integer","minimum":10,"maximum":10000,"description":"how long to wait for the answer, default 2000"}},)"
    R"("required":["node"],"additionalProperties":false})";
constexpr const char* kPingOut =
    R"({"type":"object","properties":{"node":{"type":"string"},"answered":{"type":"boolean"},)"
    R"("rtt_us":{"type":["integer","null"]},"waited_ms":{"type":"integer"}},"required":["node","answered"]})";

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    auto name = args.find("node").plain_string();
    if (!name) {
        err = { mcp::ErrorCode::ValidationFailed, "node must be a plain member name" };
        return false;
    }
    uint64_t timeout_ms = args.find("timeout_ms").as_uint64().value_or(2000);
    int64_t id = sys::cluster_ping(ctx.cap, name->data(), name->size());
    if (id == -static_cast<int64_t>(ktl::Error::NotFound)) {
        err = { mcp::ErrorCode::NotFound, "no such member" };
        return false;
    }
    if (id < 0) {
        err = { mcp::ErrorCode::InternalError, "the membership protocol is not running yet (the node has no address)" };
        return false;
    }
    const uint64_t start = sys::clock_ns();
    cluster_abi::PingInfo r {};
    // Polled: the answer arrives through the cluster task; 5 ms steps keep the wait cheap.
    for (uint64_t waited = 0; waited <= timeout_ms && !ctx.should_stop(); waited = (sys::clock_ns() - start) / kMs) {
        if (sys::cluster_ping_result(ctx.cap, id, &r) < 0 || r.status != 0)
            break;
        sys::sleep_ns(5 * kMs);
    }
    w.begin_object().key("node").string(*name).key("answered").boolean(r.status == 1).key("rtt_us");
    if (r.status == 1)
        w.number(r.rtt_ns / 1000);
    else
        w.null();
    w.key("waited_ms").number((sys::clock_ns() - start) / kMs).end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "cluster_ping",
    "Probe a cluster member",
    "Sends an authenticated probe to a member now and reports whether and how fast it answered.",
    kPingIn,
    kPingOut,
    mcp::kKernelRead,
    nullptr
};

} // namespace

MCPD_TOOL(cluster_ping) { kTool, run, Grant::Cluster, abi::kRead | abi::kWrite, Effect::read_only() };

} // namespace mcpd::tools
