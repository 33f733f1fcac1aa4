#include "cluster_members.h"

#include <abi/sys.h>

#include <cstdio>

#include <netcfg/ipv4_config.h>

namespace mcpd {
namespace tools {
namespace {

const char* state_name(uint8_t s) { return s == 0 ? "alive" : s == 1 ? "suspect" : s == 2 ? "dead" : "?"; }

} // namespace

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
const char* replace_step_name(uint8_t step) {
    static constexpr const char* kSteps[] = { "none", "adding", "standby", "promoting", "removing", "done", "failed" };
    return step < sizeof kSteps / sizeof kSteps[0] ? kSteps[step] : "?";
}

const char* replace_failure_name(uint8_t failure) {
    static constexpr const char* kFailures[] = { "none", "leadership_lost", "refused", "catch_up_timed_out",
                                                 "configuration_changed" };
    return failure < sizeof kFailures / sizeof kFailures[0] ? kFailures[failure] : "?";
}

namespace {

void write_ip(json::Writer& w, uint32_t ip) {
    char address[16];
    w.string({ address, netcfg::format_ipv4(ip, address, sizeof address) });
}

// This node's member of a collection's group: its role, term, leader and log; at the leader, how
// far behind each voter is. (null: this node runs no member of it.)
void write_group(json::Writer& w, const ClusterInfo& info, uint32_t group) {
    static constexpr const char* kRoles[] = { "unavailable", "follower", "candidate", "leader" };
    w.key("member");
    const cluster_abi::GroupInfo* g = nullptr;
    for (uint32_t i = 0; i < info.group_count && i < cluster_abi::kMaxGroups; ++i)
        if (info.groups[i].group == group)
            g = &info.groups[i];
    if (!g) {
        w.null();
        return;
    }
    w.begin_object().key("role").string(kRoles[g->role < 4 ? g->role : 0]).key("term").number(g->term);
    w.key("leader");
    if (g->leader_ip)
        write_ip(w, g->leader_ip);
    else
        w.null();
    w.key("commit").number(g->commit).key("last_index").number(g->last_index).key("applied").number(g->applied);
    w.key("snapshot").begin_object().key("index").number(g->snapshot_index).key("taken").number(g->snapshots_taken);
    w.key("installed").number(g->snapshots_installed).end_object();
    if (g->role == 3) {
        w.key("replicas").begin_array();
        for (uint8_t i = 0; i < g->server_count && i < 5; ++i) {
            w.begin_object().key("address");
            write_ip(w, g->server_ip[i]);
            w.key("match").number(g->server_match[i]);
            w.key("lag").number(g->last_index > g->server_match[i] ? g->last_index - g->server_match[i] : 0);
            w.end_object();
        }
        w.end_array();
    }
    w.end_object();
}

} // namespace

void write_consensus(json::Writer& w, const ClusterInfo& info) {
    static constexpr const char* kRoles[] = { "unavailable", "follower", "candidate", "leader" };
    w.key("member").number(info.raft_id).key("voters").number(info.raft_voters);
    w.key("role").string(kRoles[info.raft_role < 4 ? info.raft_role : 0]).key("term").number(info.raft_term);
    w.key("leader").number(info.raft_leader).key("leader_address");
    if (info.raft_leader_ip)
        write_address(w, info.raft_leader_ip, static_cast<uint16_t>(info.port + 1));
    else
        w.null();
    w.key("commit").number(info.raft_commit).key("last_index").number(info.raft_last_index);
    // The configuration as this member knows it: every server's id, address and role.
    static constexpr const char* kServerRoles[] = { "standby", "voter", "spare" };
    w.key("in_configuration").boolean(info.raft_member != 0).key("removed").boolean(info.raft_removed != 0);
    w.key("servers").begin_array();
    for (uint32_t i = 0; i < info.raft_server_count && i < cluster_abi::kRaftMaxServers; ++i) {
        const cluster_abi::RaftServer& v = info.raft_servers[i];
        w.begin_object().key("member").number(v.id).key("address");
        write_address(w, v.ip, static_cast<uint16_t>(info.port + 1));
        w.key("role").string(v.role < 3 ? kServerRoles[v.role] : "?").end_object();
    }
    w.end_array();
    // Group 0's directory (a voter's view): each replicated collection's group and voters.
    w.key("collections").begin_array();
    for (uint32_t i = 0; i < info.placement_count && i < cluster_abi::kMaxPlacements; ++i) {
        const cluster_abi::Placement& p = info.placements[i];
        w.begin_object().key("name").string({ p.name, p.name_length < sizeof p.name ? p.name_length : sizeof p.name });
        w.key("group").number(p.group).key("voters").begin_array();
        for (uint8_t v = 0; v < p.voter_count && v < 5; ++v)
            write_ip(w, p.voters[v]);
        w.end_array();
        write_group(w, info, p.group);
        w.end_object();
    }
    w.end_array();
    // At the leader: how far each server's log is known to reach, and how far it is behind.
    if (info.raft_role == 3) {
        w.key("replicas").begin_array();
        for (uint32_t i = 0; i < info.raft_server_count && i < cluster_abi::kRaftMaxServers; ++i) {
            const cluster_abi::RaftServer& v = info.raft_servers[i];
            w.begin_object().key("member").number(v.id).key("match").number(v.match);
            w.key("lag").number(info.raft_last_index > v.match ? info.raft_last_index - v.match : 0).end_object();
        }
        w.end_array();
    }
}

bool read_info(uint32_t cap, ClusterInfo& info, MemberInfo* members, uint32_t max, int64_t& n) {
    n = sys::cluster_info(cap, &info, members, max);
    return n >= 0;
}

} // namespace tools

using namespace tools;

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
    if (info.raft_id != 0) { // every replicated collection is the consensus group's (one group)
        w.key("consensus").begin_object();
        write_consensus(w, info);
        w.end_object();
    }
    return true;
}

bool write_consensus_status(uint32_t cap, json::Writer& w) {
    ClusterInfo info;
    int64_t n;
    if (!read_info(cap, info, nullptr, 0, n) || info.raft_id == 0)
        return false;
    w.key("consensus").begin_object();
    write_consensus(w, info);
    w.end_object();
    return true;
}

uint64_t cluster_generation(uint32_t cap) {
    ClusterInfo info;
    int64_t n;
    return read_info(cap, info, nullptr, 0, n) ? info.generation : 0;
}

} // namespace mcpd
