// cluster_replace: a dead voter of the consensus group replaced by a live member (issue 35;
// docs/replication.md), asked of the group's leader and waited for up to wait_ms. Its token grants
// the Cluster object, read and write: it changes which nodes keep the replicated collections,
// not what they hold (administrators only: kernel:admin).
#include "cluster_members.h"
#include "../tool_def.h"
#include "../../tool_exec.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <mcp/policy/roles.h>
#include <netcfg/ipv4_config.h>


namespace mcpd::tools {
namespace {

constexpr const char* kReplaceIn =
    R"({"type":"object","properties":{)"
    R"("dead":{"type":"string","minLength":1,"maxLength":31,"description":"the voter to replace: its member name or IPv4 address"},)"
    R"("with":{"type":"string","minLength":1,"maxLength":31,"description":"the live member to take its place (not a voter): name or IPv4 address"},)"
    R"("wait_ms":{"type":"integer","minimum":0,"maximum":9000,"description":"how long to wait for the replacement to finish, default 8000; it goes on after the answer"}},)"
    R"("required":["dead","with"],"additionalProperties":false})";
constexpr const char* kReplaceOut =
    R"({"type":"object","properties":{"status":{"enum":["done","in_progress","failed"]},)"
    R"("step":{"type":"string"},"dead":{"type":"string"},"with":{"type":"string"},"took_ms":{"type":"integer"},)"
    R"("failure":{"type":["string","null"]},"engine_code":{"type":"integer"},)"
    R"("voters":{"type":"array","items":{"type":"string"}}},"required":["status","step","dead","with"]})";

// A member name (as cluster_status lists them) or a dotted IPv4 address: the address (0: neither).
uint32_t resolve(std::string_view text, const MemberInfo* members, int64_t n) {
    if (auto ip = netcfg::parse_ipv4(text))
        return *ip;
    for (int64_t i = 0; i < n; ++i)
        if (text == std::string_view(members[i].name))
            return members[i].ip;
    return 0;
}

void write_ip(json::Writer& w, uint32_t ip) {
    char text[16];
    netcfg::format_ipv4(ip, text, sizeof text);
    w.string(text);
}

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    auto dead_text = args.find("dead").plain_string();
    auto with_text = args.find("with").plain_string();
    if (!dead_text || !with_text) {
        err = { mcp::ErrorCode::ValidationFailed, "dead and with must be plain member names or IPv4 addresses" };
        return false;
    }
    const uint64_t wait_ms = args.find("wait_ms").as_uint64().value_or(8000);
    MemberInfo members[kMaxMembers];
    ClusterInfo info {};
    int64_t n = 0;
    if (!read_info(ctx.cap, info, members, kMaxMembers, n)) {
        err = { mcp::ErrorCode::InternalError, "cluster state unavailable" };
        return false;
    }
    const uint32_t dead = resolve(*dead_text, members, n), with = resolve(*with_text, members, n);
    if (dead == 0 || with == 0) {
        err = { mcp::ErrorCode::NotFound,
                dead == 0 ? "no member or address named by dead" : "no member or address named by with",
                "unknown_member" };
        return false;
    }
    const int64_t rc = sys::cluster_replace(ctx.cap, dead, with);
    if (rc < 0) {
        switch (static_cast<ktl::Error>(-rc)) {
        case ktl::Error::NotLeader:
            err = { mcp::ErrorCode::ValidationFailed,
                    "only the consensus group's leader replaces voters: ask it (cluster_status: "
                    "consensus.leader_address)",
                    "not_leader" };
            break;
        case ktl::Error::Exists:
            err = { mcp::ErrorCode::Unavailable,
                    "a voter replacement runs already (cluster_status: consensus.replacement)", "replacement_running" };
            break;
        case ktl::Error::NotFound:
            err = { mcp::ErrorCode::ValidationFailed, "with must be a member the cluster holds alive", "not_alive" };
            break;
        case ktl::Error::InvalidArgs:
            err = { mcp::ErrorCode::ValidationFailed,
                    "dead must be a voter other than this node, and with a member that is not a voter (cluster_status: "
                    "consensus.servers)",
                    "not_replaceable" };
            break;
        default:
            err = { mcp::ErrorCode::ValidationFailed, "this node runs no consensus group (raft_voters=)",
                    "no_consensus_group" };
            break;
        }
        return false;
    }
    const uint64_t start = sys::clock_ns();
    // Polled: the cluster task runs the steps; each is a configuration change the group commits.
    for (;;) {
        if (!read_info(ctx.cap, info, nullptr, 0, n)) {
            err = { mcp::ErrorCode::InternalError, "cluster state unavailable" };
            return false;
        }
        const auto step = static_cast<cluster_abi::ReplaceStep>(info.replace_step);
        const bool ours = info.replace_dead_ip == dead && info.replace_with_ip == with;
        const bool ended = ours && (step == cluster_abi::ReplaceStep::Done || step == cluster_abi::ReplaceStep::Failed);
        if (ended || ctx.should_stop() || (sys::clock_ns() - start) / kMs >= wait_ms)
            break;
        sys::sleep_ns(20 * kMs);
    }
    const auto step = static_cast<cluster_abi::ReplaceStep>(info.replace_step);
    w.begin_object().key("status").string(step == cluster_abi::ReplaceStep::Done     ? "done"
                                          : step == cluster_abi::ReplaceStep::Failed ? "failed"
                                                                                     : "in_progress");
    w.key("step").string(replace_step_name(info.replace_step));
    w.key("dead");
    write_ip(w, dead);
    w.key("with");
    write_ip(w, with);
    w.key("took_ms").number(info.replace_ms);
    w.key("failure");
    if (step == cluster_abi::ReplaceStep::Failed)
        w.string(replace_failure_name(info.replace_failure));
    else
        w.null();
    w.key("engine_code").number(static_cast<int64_t>(info.replace_code));
    w.key("voters").begin_array();
    for (uint32_t i = 0; i < info.raft_server_count && i < cluster_abi::kRaftMaxServers; ++i)
        if (info.raft_servers[i].role == 1)
            write_ip(w, info.raft_servers[i].ip);
    w.end_array().end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "cluster_replace",
    "Replace a consensus voter",
    "At the consensus group's leader: replaces a voter (usually a dead one) by a live member outside the group. "
    "The newcomer is added, receives the log (or a snapshot and the replicated collections it covers), becomes a "
    "voter once caught up, and the old voter is removed: one committed configuration change at a time. Answers "
    "when done, or in_progress after wait_ms (cluster_status shows consensus.replacement).",
    kReplaceIn,
    kReplaceOut,
    mcp::kKernelAdmin,
    nullptr
};

} // namespace

MCPD_TOOL(cluster_replace) { kTool, run, Grant::Cluster, abi::kRead | abi::kWrite, Effect::read_only() };

} // namespace mcpd::tools
