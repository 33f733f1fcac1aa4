// cluster_status: this node's view of the cluster. Its token grants the Cluster object, read.
// Listed only on a node that runs membership (`cluster=`).
#include "../schemas.h"
#include "cluster_members.h"
#include "../tool_def.h"
#include "../../tool_exec.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr const char* kStatusOut =
    R"({"type":"object","properties":{"node":{"type":"string"},"cluster":{"type":"string"},"address":{"type":"string"},)"
    R"("running":{"type":"boolean"},"incarnation":{"type":"integer"},"generation":{"type":"integer"},)"
    R"("counts":{"type":"object"},"protocol":{"type":"object"},"counters":{"type":"object"},"members":{"type":"array"},)"
    R"("consensus":{"type":"object"},"federation":{"type":"object"}},)"
    R"("required":["node","cluster","running","members"]})";

bool run(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
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
    w.key("protocol")
        .begin_object()
        .key("period_ms")
        .number(info.period_ms)
        .key("ack_timeout_ms")
        .number(info.ack_timeout_ms);
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
    // Federated searches (vector_search scope "cluster"): asked here, partial, served for others.
    w.key("federation").begin_object().key("searches").number(info.fed_searches);
    w.key("partial").number(info.fed_partial).key("served").number(info.fed_served);
    w.key("refused").number(info.fed_refused).end_object();
    if (info.raft_id != 0) {
        // The cluster's consensus group (raft_voters=): as cluster://members shows it, and more.
        w.key("consensus").begin_object();
        write_consensus(w, info);
        // Where its term, vote and log live, and what it took up from there when it started.
        w.key("storage").string(info.raft_durable ? "disk" : "memory");
        w.key("recovered").begin_object().key("term").number(info.raft_recovered_term);
        w.key("entries").number(info.raft_recovered_entries).end_object();
        // The snapshot bounding its log (index 0: none yet) and the entries the log keeps.
        w.key("snapshot").begin_object().key("index").number(info.raft_snapshot_index);
        w.key("term").number(info.raft_snapshot_term).key("taken").number(info.raft_snapshots_taken);
        w.key("installed").number(info.raft_snapshots_installed).end_object();
        w.key("log_entries").number(info.raft_log_entries);
        // The last voter replacement this node ran as leader (cluster_replace, raft_replace_after_s=).
        if (info.replace_step != 0) {
            w.key("replacement").begin_object().key("step").string(replace_step_name(info.replace_step));
            w.key("dead");
            write_address(w, info.replace_dead_ip, static_cast<uint16_t>(info.port + 1));
            w.key("with");
            write_address(w, info.replace_with_ip, static_cast<uint16_t>(info.port + 1));
            w.key("automatic").boolean(info.replace_automatic != 0).key("took_ms").number(info.replace_ms);
            w.key("failure").string(replace_failure_name(info.replace_failure));
            w.key("completed").number(info.replace_done).end_object();
        }
        // The replicated collections' changes this member applied, proposed and refused.
        w.key("replication").begin_object().key("applied").number(info.repl_applied);
        w.key("failed").number(info.repl_failed).key("proposed").number(info.repl_proposed);
        w.key("refused").number(info.repl_refused).key("outcome_unknown").number(info.repl_timed_out);
        w.key("snapshots_installed")
            .number(info.repl_installs)
            .key("forwarded_to_leader")
            .number(info.repl_forwarded_out);
        w.key("forwarded_from_followers")
            .number(info.repl_forwarded_in)
            .key("linearizable_reads")
            .number(info.repl_reads);
        w.key("read_rounds").number(info.repl_read_rounds).key("placements").number(info.repl_placements);
        w.key("commit_beacons").number(info.repl_beacons);
        // Catching up with a snapshot: the collections it covers fetched from another voter.
        w.key("catch_up").begin_object().key("in_progress").boolean(info.xfer_active != 0);
        w.key("completed").number(info.xfer_done).key("collections").number(info.xfer_collections);
        w.key("bytes").number(info.xfer_bytes).key("restarts").number(info.xfer_restarts);
        w.key("incomplete").number(info.xfer_incomplete);
        w.key("served_pages").number(info.xfer_served_pages).key("served_bytes").number(info.xfer_served_bytes);
        w.end_object().end_object();
        w.key("datagrams").begin_object();
        w.key("sent").number(info.raft_sent).key("received").number(info.raft_received);
        w.key("refused").number(info.raft_refused).end_object().end_object();
    }
    w.end_object();
    return true;
}

constexpr mcp::Tool kTool = {
    "cluster_status",
    "Cluster status",
    "This node's view of the cluster: every member's state, incarnation, last contact and round trip, the "
    "protocol's counters, and (with raft_voters=) its consensus group's term, role and leader.",
    kNoArgs,
    kStatusOut,
    mcp::kKernelRead,
    nullptr
};

} // namespace

MCPD_TOOL(cluster_status) { kTool, run, Grant::Cluster, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools
