// The cluster's MCP surface (issue 18): tools cluster_status and cluster_ping, resource
// cluster://members. Tool bodies hold one capability, the Cluster object with read (status) or
// write (ping) as their token granted; the resource is read through the bridge's own. Listed
// only on a node that runs membership (`cluster=`).
#include "cluster_tools.h"
#include "tool_exec.h"

#include "../cap/kcap.h"
#include "../cluster/cluster_service.h"
#include "../syscall/sys.h"

#include <cstdio>

#include <netcfg/ipv4_config.h>

namespace mcpd {
namespace {

using cluster_abi::ClusterInfo;
using cluster_abi::MemberInfo;

constexpr uint32_t kMaxMembers = 64;
constexpr uint64_t kMs = 1'000'000ull;

const char* state_name(uint8_t s) { return s == 0 ? "alive" : s == 1 ? "suspect" : s == 2 ? "dead" : "?"; }

void write_address(json::Writer& w, uint32_t ip, uint16_t port) {
    char text[24];
    size_t n = netcfg::format_ipv4(ip, text, sizeof text);
    snprintf(text + n, sizeof text - n, ":%u", port);
    w.string(text);
}

void write_members(json::Writer& w, const MemberInfo* m, int64_t n) {
    w.key("members").begin_array();
    for (int64_t i = 0; i < n; ++i) {
        w.begin_object().key("name").string(m[i].name).key("address");
        write_address(w, m[i].ip, m[i].port);
        w.key("state").string(state_name(m[i].state)).key("incarnation").number(m[i].incarnation);
        w.key("self").boolean(m[i].self != 0);
        // Milliseconds since an authenticated message from it; null: never heard directly.
        w.key("last_heard_ms");
        if (m[i].self || m[i].last_heard_ago_ns == 0)
            w.null();
        else
            w.number(m[i].last_heard_ago_ns / kMs);
        w.key("rtt_us");
        if (m[i].rtt_ns)
            w.number(m[i].rtt_ns / 1000);
        else
            w.null();
        w.key("state_for_ms").number(m[i].state_for_ns / kMs).end_object();
    }
    w.end_array();
}

// The summary (and up to 64 members) through `cap`; false when the call is refused.
bool read_info(uint32_t cap, ClusterInfo& info, MemberInfo* members, uint32_t max, int64_t& n) {
    n = sys::call(sys::Number::cluster_info, cap, reinterpret_cast<uint64_t>(&info), reinterpret_cast<uint64_t>(members), max);
    return n >= 0;
}

const char* kStatusOut =
    R"({"type":"object","properties":{"node":{"type":"string"},"cluster":{"type":"string"},"address":{"type":"string"},)"
    R"("running":{"type":"boolean"},"incarnation":{"type":"integer"},"generation":{"type":"integer"},)"
    R"("counts":{"type":"object"},"protocol":{"type":"object"},"counters":{"type":"object"},"members":{"type":"array"}},)"
    R"("required":["node","cluster","running","members"]})";

bool cluster_status(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    ClusterInfo info;
    MemberInfo members[kMaxMembers];
    int64_t n;
    if (!read_info(ctx.cap, info, members, kMaxMembers, n)) {
        err = { mcp::ErrorCode::InternalError, "cluster state unavailable" };
        return false;
    }
    w.begin_object().key("node").string(info.self).key("cluster").string(info.cluster).key("address");
    write_address(w, info.self_ip, info.port);
    w.key("running").boolean(info.running != 0).key("incarnation").number(info.incarnation);
    w.key("generation").number(info.generation);
    w.key("counts").begin_object().key("members").number(info.members).key("alive").number(info.alive);
    w.key("suspect").number(info.suspect).key("dead").number(info.dead).end_object();
    w.key("protocol").begin_object().key("period_ms").number(info.period_ms).key("ack_timeout_ms").number(info.ack_timeout_ms);
    w.key("suspicion_ms").number(info.suspicion_ms).key("indirect_probes").number(info.indirect).end_object();
    w.key("counters").begin_object().key("sent").number(info.sent).key("received").number(info.received);
    w.key("accepted").number(info.accepted).key("bad_mac").number(info.bad_mac).key("malformed").number(info.malformed);
    w.key("replayed").number(info.replayed).key("probes").number(info.probes).key("suspicions").number(info.suspicions);
    w.key("deaths").number(info.deaths).key("refutations").number(info.refutations);
    w.key("wrong_version").number(info.wrong_version).key("table_full").number(info.table_full);
    w.key("restarts").number(info.restarts).key("incarnation_jumps").number(info.incarnation_jumps);
    w.key("refusals_unreported").number(info.refusals_unreported);
    w.key("refusals_unaudited").number(info.refusals_unaudited);
    w.key("udp").begin_object().key("rx").number(info.udp_rx).key("tx").number(info.udp_tx);
    w.key("rx_dropped").number(info.udp_rx_dropped).key("tx_refused").number(info.udp_tx_refused);
    w.key("tx_errors").number(info.udp_tx_errors).end_object().end_object();
    write_members(w, members, n);
    w.end_object();
    return true;
}

const char* kPingIn = R"({"type":"object","properties":{)"
                      R"("node":{"type":"string","minLength":1,"maxLength":31,"description":"the member to probe"},)"
                      R"("timeout_ms":{"type":"integer","minimum":10,"maximum":10000,"description":"how long to wait for the answer, default 2000"}},)"
                      R"("required":["node"],"additionalProperties":false})";
const char* kPingOut = R"({"type":"object","properties":{"node":{"type":"string"},"answered":{"type":"boolean"},)"
                       R"("rtt_us":{"type":["integer","null"]},"waited_ms":{"type":"integer"}},"required":["node","answered"]})";

bool cluster_ping(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    auto name = args.find("node").plain_string();
    if (!name) {
        err = { mcp::ErrorCode::ValidationFailed, "node must be a plain member name" };
        return false;
    }
    uint64_t timeout_ms = args.find("timeout_ms").as_uint64().value_or(2000);
    int64_t id = sys::call(sys::Number::cluster_ping, ctx.cap, reinterpret_cast<uint64_t>(name->data()), name->size());
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
        if (sys::call(sys::Number::cluster_ping_result, ctx.cap, static_cast<uint64_t>(id), reinterpret_cast<uint64_t>(&r)) < 0 ||
            r.status != 0)
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

constexpr ToolImpl kImpls[] = {
    { "cluster_status", cluster_status, Grant::Cluster, kcap::kRead },
    { "cluster_ping", cluster_ping, Grant::Cluster, kcap::kRead | kcap::kWrite },
};

const mcp::Tool kTools[] = {
    { "cluster_status", "Cluster status",
      "This node's view of the cluster: every member's state, incarnation, last contact and round trip, and the protocol's counters.",
      R"({"type":"object","properties":{},"additionalProperties":false})", kStatusOut, mcp::kKernelRead, nullptr },
    { "cluster_ping", "Probe a cluster member", "Sends an authenticated probe to a member now and reports whether and how fast it answered.",
      kPingIn, kPingOut, mcp::kKernelRead, nullptr },
};

} // namespace

std::span<const mcp::Tool> cluster_tools() {
    return clusterd::configured() ? std::span<const mcp::Tool>(kTools) : std::span<const mcp::Tool>();
}
std::span<const ToolImpl> cluster_tool_impls() {
    return clusterd::configured() ? std::span<const ToolImpl>(kImpls) : std::span<const ToolImpl>();
}

bool read_cluster_members(uint32_t cap, json::Writer& w, mcp::ToolError& err) {
    ClusterInfo info;
    MemberInfo members[kMaxMembers];
    int64_t n;
    if (!read_info(cap, info, members, kMaxMembers, n)) {
        err = { mcp::ErrorCode::InternalError, "cluster state unavailable" };
        return false;
    }
    w.key("node").string(info.self).key("cluster").string(info.cluster).key("generation").number(info.generation);
    write_members(w, members, n);
    return true;
}

uint64_t cluster_generation(uint32_t cap) {
    ClusterInfo info;
    int64_t n;
    return read_info(cap, info, nullptr, 0, n) ? info.generation : 0;
}

} // namespace mcpd
