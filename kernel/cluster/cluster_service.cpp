#include "cluster_service.h"

#include "consensus.h"
#include "federation.h"

#include "../arch/aarch64/cpu.h"
#include "../audit/trail.h"
#include "../bootargs.h"
#include "../cap/kcap.h"
#include "../clock.h"
#include "../composition.h"
#include "../log.h"
#include "../ipc/sync.h"
#include "../net/datagram.h"
#include "../net/net_status.h"
#include "../panic.h"
#include "../rng.h"
#include "../sched/scheduler.h"
#include <abi/replication.h>
#include <abi/sys.h>
#include <raft/directory.h>

#include <cluster/node.h>
#include <ktl/le_bytes.h>
#include <raft/wire.h>
#include <storage/records.h>
#include <ktl/decimal.h>
#include <netcfg/ipv4_config.h>

#include <cstdio>
#include <cstring>
#include <new>

namespace clusterd {
namespace {

constexpr uint64_t kMs = 1'000'000ull;

struct TaskCaps {
    uint32_t netstack = ~0u;     // udp_open
    uint32_t audit_region = ~0u; // the MCP audit trail: refused peers are recorded there
    uint32_t raft_log = ~0u;     // the consensus group's durable state
    uint32_t store = ~0u;        // where the group's replicated collections are applied
    uint32_t factory = ~0u;      // regions: a collection exported for a voter catching up
};

void copy_name(char* dst, size_t cap, std::string_view src);

TaskCaps g_caps;
cluster::Key g_key {};
alignas(cluster::Node) unsigned char g_node_storage[sizeof(cluster::Node)];
cluster::Node* g_node = nullptr; // set once the protocol runs (IRQs masked around every use)
net::Datagram* g_endpoint = nullptr;
uint32_t g_endpoint_slot = ~0u;
char g_self[cluster::kMaxNameLen + 1] = "";
uint32_t g_self_ip = 0;
Federation g_federation;
Federation::Counters g_fed_counters {}; // the last round's, for cluster_info (IRQs masked)

// Sends through the task's Datagram capability (the task's own path) ...
struct TaskTransport final : cluster::Transport {
    void send(cluster::Address to, std::span<const uint8_t> d) override {
        sys::udp_send(g_endpoint_slot, to.ip, to.port, d.data(), d.size());
    }
};
// ... or, from a system call made by a tool task (cluster_ping), straight into the endpoint
// the task opened: the caller's Cluster capability is the authority for that one probe.
struct KernelTransport final : cluster::Transport {
    void send(cluster::Address to, std::span<const uint8_t> d) override {
        if (g_endpoint)
            (void)g_endpoint->send(to.ip, to.port, d.data(), static_cast<uint32_t>(d.size()));
    }
};

cluster::Config config_from_args() {
    cluster::Config c;
    const auto& a = bootargs::get();
    if (a.cluster_period_ms) {
        c.period_ms = a.cluster_period_ms;
        c.ack_timeout_ms = c.period_ms * 2 / 5;
        c.announce_ms = c.period_ms * 2;
    }
    if (a.cluster_suspicion_mult)
        c.suspicion_mult = a.cluster_suspicion_mult;
    return c;
}

// `peers=A.B.C.D[:PORT],...`; a seed that does not parse is logged and skipped.
void add_seeds(cluster::Node& node) {
    std::string_view rest = bootargs::get().peers;
    for (uint32_t guard = 0; guard < cluster::kMaxSeeds && !rest.empty(); ++guard) {
        size_t comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        uint32_t port = bootargs::get().cluster_port;
        size_t colon = item.find(':');
        auto ip = netcfg::parse_ipv4(item.substr(0, colon));
        bool port_ok = colon == std::string_view::npos ||
                       (ktl::parse_decimal(item.substr(colon + 1), port) && port > 0 && port < 65536);
        if (!ip || !port_ok || !node.add_seed({ *ip, static_cast<uint16_t>(port) }))
            KLOG_WARN("cluster: seed '%.*s' ignored", static_cast<int>(item.size()), item.data());
    }
}

// Peers' refusals in the MCP audit trail: the node already limits them per kind (a handful a
// minute in a flood, one an hour per kind after that), and a boot writes at most this share of
// the trail's ring for them, so no flood from the network, however long, pushes MCP decisions
// out. Beyond it refusals are only counted (cluster_status: refusals_unaudited).
uint64_t g_peer_records = 0;
uint64_t g_refusals_unaudited = 0;

uint64_t peer_record_budget() {
    const uint64_t share = audit::trail::bytes() / audit::trail::record_bytes() / 16;
    return share < 64 ? share : 64;
}

// One record of a peer's datagram in the MCP audit trail (kind peer, over UDP).
void record_peer(uint32_t ip, mcp::AuditOutcome outcome, const char* code, const char* action, std::string_view target,
                 const char* reason = "") {
    char from[24];
    netcfg::format_ipv4(ip, from, sizeof from);
    char at[32];
    clock::rfc3339_now(at, sizeof at);
    mcp::AuditEvent a { "", at,     nullptr, "udp", mcp::AuditKind::Peer, from, outcome, code, 0, 0, 0,
                        0,  action, target,  reason };
    (void)audit::trail::record(a);
}

void audit_refusal(const cluster::Event& e) {
    if (g_peer_records >= peer_record_budget()) {
        ++g_refusals_unaudited;
        return;
    }
    ++g_peer_records;
    char more[40] = "";
    if (e.unreported)
        snprintf(more, sizeof more, "%llu more unreported before it", static_cast<unsigned long long>(e.unreported));
    record_peer(e.addr.ip, mcp::AuditOutcome::Deny, cluster::verdict_name(e.verdict), "receive", more);
}

void report(const cluster::Event& e) {
    char ip[24];
    netcfg::format_ipv4(e.addr.ip, ip, sizeof ip);
    using K = cluster::Event::Kind;
    switch (e.kind) {
    case K::Joined: KLOG_INFO("cluster: %s (%s) joined, incarnation %u", e.name, ip, e.incarnation); break;
    case K::Alive: KLOG_INFO("cluster: %s (%s) is alive, incarnation %u", e.name, ip, e.incarnation); break;
    case K::Suspect: KLOG_INFO("cluster: %s (%s) is suspect, incarnation %u", e.name, ip, e.incarnation); break;
    case K::Dead: KLOG_WARN("cluster: %s (%s) is dead, incarnation %u", e.name, ip, e.incarnation); break;
    case K::Refuted: KLOG_INFO("cluster: refuted a rumour about us: now incarnation %u", e.incarnation); break;
    case K::Refused:
        KLOG_WARN("cluster: refused a datagram from %s:%u (%s; %llu more of that kind unreported before it)", ip,
                  e.addr.port, cluster::verdict_name(e.verdict), static_cast<unsigned long long>(e.unreported));
        audit_refusal(e);
        break;
    }
}

void drain_events() {
    cluster::Event events[8];
    for (uint32_t round = 0; round < 16; ++round) {
        size_t n;
        {
            arch::IrqGuard guard;
            n = g_node->drain_events(events, 8);
        }
        for (size_t i = 0; i < n; ++i)
            report(events[i]);
        if (n < 8)
            return;
    }
}

// The interface's address (DHCP may take a while): the protocol needs it to be reachable.
net::Status wait_for_address() {
    net::Status s;
    for (;;) {
        if (net::read_status(s) && s.up && s.address)
            return s;
        sys::sleep_ns(200 * kMs);
    }
}

int64_t task_main(void*) {
    if (g_caps.audit_region != ~0u && !audit::trail::attach(g_caps.audit_region))
        KLOG_WARN("cluster: no audit trail: refused peers are only logged");
    net::Status net = wait_for_address();
    const uint16_t port = bootargs::get().cluster_port;
    int64_t slot = sys::udp_open(g_caps.netstack, port);
    if (slot < 0) {
        KLOG_ERROR("cluster: cannot open UDP port %u: %s", port, ktl::error_name(static_cast<ktl::Error>(-slot)));
        return 1;
    }
    g_endpoint_slot = static_cast<uint32_t>(slot);
    auto resolved = kcap::lookup(sched::current(), g_endpoint_slot, kcap::ObjectType::Datagram, kcap::kWrite);
    if (!resolved)
        return 1;
    if (g_self[0] == '\0') { // no node=: named after the address, unique on the fabric
        char ip[24];
        netcfg::format_ipv4(net.address, ip, sizeof ip);
        snprintf(g_self, sizeof g_self, "basalt-%s", ip);
        for (char* c = g_self; *c; ++c)
            if (*c == '.')
                *c = '-';
    }
    // The boot id must exceed every earlier boot's (replay.h), so it is taken from the wall
    // clock; a board without an RTC may get its time from SNTP shortly after the address.
    for (uint32_t waited = 0; !clock::wall_clock_known() && waited < 50; ++waited)
        sys::sleep_ns(200 * kMs);
    if (!clock::wall_clock_known())
        KLOG_WARN("cluster: no wall clock: peers that heard an earlier boot of this node may refuse this one");
    uint64_t random = 0, seed = 0;
    rng::fill(&random, sizeof random);
    rng::fill(&seed, sizeof seed);
    const uint64_t boot_id = cluster::make_boot_id(clock::unix_ms(), random);
    {
        arch::IrqGuard guard;
        g_endpoint = static_cast<net::Datagram*>(resolved->object);
        g_self_ip = net.address;
        g_node = new (g_node_storage)
            cluster::Node(config_from_args(), g_key, g_self, { net.address, port }, boot_id, seed);
        add_seeds(*g_node);
        if (bootargs::get().cluster_broadcast)
            g_node->set_broadcast({ net.address | ~net.netmask, port });
    }
    const auto& c = g_node->config();
    KLOG_INFO("cluster: %s joins '%.*s' on UDP %u (period %u ms, suspicion x%u, %u indirect probes)", g_self,
              static_cast<int>(bootargs::get().cluster.size()), bootargs::get().cluster.data(), port, c.period_ms,
              c.suspicion_mult, c.indirect);
    consensus::start(g_caps.netstack, g_caps.raft_log, g_caps.store, g_caps.factory, net.address, port, g_key, boot_id);
    g_federation.start(g_caps.store, g_endpoint_slot, net.address, g_self, { g_key.data(), g_key.size() }, boot_id);
    static Federation::Target members[cluster_abi::kFedMaxNodes];
    TaskTransport transport;
    uint8_t buf[net::Datagram::kMaxPayload];
    for (;;) {
        uint64_t now = sys::clock_ns();
        {
            arch::IrqGuard guard;
            g_node->tick(now, transport);
        }
        // A bounded batch per round: a flood cannot starve the timers.
        for (uint32_t i = 0; i < net::Datagram::kRxSlots; ++i) {
            net::DatagramFrom from {};
            int64_t n = sys::udp_recv(g_endpoint_slot, buf, sizeof buf, &from);
            if (n == -static_cast<int64_t>(ktl::Error::Truncated))
                continue;
            if (n < 0)
                break;
            const std::span<const uint8_t> datagram(buf, static_cast<size_t>(n));
            if (raftwire::peek_group(datagram) == Federation::kGroup) { // (a search: served outside the lock)
                g_federation.receive(from.ip, from.port, datagram, sys::clock_ns());
                continue;
            }
            arch::IrqGuard guard;
            (void)g_node->receive({ from.ip, from.port }, datagram, sys::clock_ns(), transport);
        }
        drain_events();
        consensus::round();
        size_t live = 0; // the members a federated search asks: every one not dead, but this node
        {
            arch::IrqGuard guard;
            for (size_t i = 1; i < g_node->member_count() && live < cluster_abi::kFedMaxNodes - 1; ++i) {
                const cluster::Member& m = g_node->member(i);
                if (m.state == cluster::State::Dead)
                    continue;
                members[live] = Federation::Target { m.addr.ip, m.addr.port, {} };
                copy_name(members[live].name, sizeof members[live].name, m.name);
                ++live;
            }
        }
        g_federation.pump(sys::clock_ns(), { members, live });
        {
            arch::IrqGuard guard;
            g_fed_counters = g_federation.counters();
        }
        uint64_t deadline;
        {
            arch::IrqGuard guard;
            deadline = g_node->next_deadline_ns();
        }
        now = sys::clock_ns();
        // The consensus group's member turns at least every round (ticks, and its disk writes
        // becoming durable, which wake nothing); its datagrams and queued changes wake this wait.
        if (consensus::running() && deadline > now + consensus::next_round_ns())
            deadline = now + consensus::next_round_ns();
        if (const uint64_t gather = g_federation.deadline_ns(); gather != 0 && gather < deadline)
            deadline = gather;
        if (deadline > now)
            sys::udp_wait(g_endpoint_slot, deadline - now);
    }
}

void copy_name(char* dst, size_t cap, std::string_view src) {
    size_t n = src.size() < cap - 1 ? src.size() : cap - 1;
    memcpy(dst, src.data(), n);
    dst[n] = '\0';
}

} // namespace

bool configured() { return !bootargs::get().cluster.empty(); }

uint64_t start(const composition::Objects& objects) {
    if (!configured())
        return 0;
    const auto& a = bootargs::get();
    std::string_view secret = bootargs::cluster_secret();
    const size_t secret_length = secret.size();
    if (secret_length >= 8 && cluster::valid_name(a.cluster))
        g_key = cluster::derive_key(secret, a.cluster);
    bootargs::forget_cluster_secret(); // kept only as the key derived from it, even when unusable
    if (secret_length < 8) {
        KLOG_ERROR("cluster: cluster=%.*s needs cluster_key=SECRET (8 characters or more): membership is off",
                   static_cast<int>(a.cluster.size()), a.cluster.data());
        return 0;
    }
    if (!cluster::valid_name(a.cluster) || (!a.node.empty() && !cluster::valid_name(a.node))) {
        KLOG_ERROR("cluster: node= and cluster= take 1 to 31 of A-Z a-z 0-9 . _ -: membership is off");
        return 0;
    }
    copy_name(g_self, sizeof g_self, a.node);
    static int cluster_object;
    auto object = kcap::register_object(kcap::ObjectType::Cluster, &cluster_object);
    auto t = sched::create("cluster", task_main, nullptr, sched::CreateOptions { 17, true });
    if (!object || !t) {
        KLOG_ERROR("cluster: cannot start the membership task");
        return 0;
    }
    const composition::Held held = composition::grant(composition::Task::Cluster, *t, objects);
    g_caps.netstack = held[composition::Object::NetStack];
    g_caps.audit_region = held[composition::Object::AuditTrail];
    g_caps.raft_log = held[composition::Object::RaftLog];
    g_caps.store = held[composition::Object::VectorStore];
    g_caps.factory = held[composition::Object::Factory];
    return *object;
}

int64_t info(cluster_abi::ClusterInfo* out, cluster_abi::MemberInfo* members, uint32_t max) {
    *out = {};
    copy_name(out->self, sizeof out->self, g_self);
    copy_name(out->cluster, sizeof out->cluster, bootargs::get().cluster);
    out->port = bootargs::get().cluster_port;
    out->self_ip = g_self_ip;
    consensus::fill(*out);
    if (!g_node)
        return 0;
    const cluster::Node& n = *g_node;
    const auto& c = n.config();
    const auto& s = n.stats();
    out->running = 1;
    out->incarnation = n.incarnation();
    out->members = static_cast<uint32_t>(n.member_count());
    out->period_ms = c.period_ms;
    out->ack_timeout_ms = c.ack_timeout_ms;
    out->indirect = c.indirect;
    out->generation = n.generation();
    out->sent = s.sent;
    out->received = s.received;
    out->accepted = s.accepted;
    out->bad_mac = s.bad_mac;
    out->malformed = s.malformed;
    out->replayed = s.replayed;
    out->refutations = s.refutations;
    out->probes = s.probes;
    out->suspicions = s.suspicions;
    out->deaths = s.deaths;
    out->refusals_unreported = s.refusals_unreported;
    out->refusals_unaudited = g_refusals_unaudited;
    out->fed_searches = g_fed_counters.searches;
    out->fed_partial = g_fed_counters.partial;
    out->fed_served = g_fed_counters.served;
    out->fed_refused = g_fed_counters.refused;
    out->wrong_version = s.wrong_version;
    out->table_full = s.table_full;
    out->restarts = s.restarts;
    out->incarnation_jumps = s.incarnation_jumps;
    if (g_endpoint) {
        auto u = g_endpoint->stats();
        out->udp_rx = u.rx;
        out->udp_tx = u.tx;
        out->udp_rx_dropped = u.rx_dropped;
        out->udp_tx_refused = u.tx_refused;
        out->udp_tx_errors = u.tx_errors;
    }
    const uint64_t now = clock::monotonic_ns();
    uint32_t written = 0;
    for (size_t i = 0; i < n.member_count(); ++i) {
        const cluster::Member& m = n.member(i);
        (m.state == cluster::State::Alive     ? out->alive
         : m.state == cluster::State::Suspect ? out->suspect
                                              : out->dead)++;
        if (written == max)
            continue;
        cluster_abi::MemberInfo& r = members[written++];
        r = {};
        copy_name(r.name, sizeof r.name, m.name);
        r.ip = m.addr.ip;
        r.port = m.addr.port;
        r.state = static_cast<uint8_t>(m.state);
        r.self = i == 0;
        r.incarnation = m.incarnation;
        r.last_heard_ago_ns = m.last_heard_ns && now > m.last_heard_ns ? now - m.last_heard_ns : 0;
        r.rtt_ns = m.rtt_ns;
        r.state_for_ns = now > m.state_since_ns ? now - m.state_since_ns : 0;
    }
    out->suspicion_ms = static_cast<uint32_t>(cluster::suspicion_timeout_ns(c, out->alive + out->suspect) / kMs);
    return written;
}

int64_t ping(std::string_view name) {
    if (!g_node || !g_endpoint)
        return -static_cast<int64_t>(ktl::Error::WouldBlock);
    KernelTransport transport;
    auto id = g_node->ping(name, clock::monotonic_ns(), transport);
    return id ? static_cast<int64_t>(*id) : -static_cast<int64_t>(id.error());
}

int64_t ping_result(uint32_t id, cluster_abi::PingInfo* out) {
    *out = {};
    if (!g_node) {
        out->status = 3;
        return 0;
    }
    auto r = g_node->ping_result(id);
    using S = cluster::Node::PingResult::Status;
    out->status = r.status == S::Pending ? 0 : r.status == S::Answered ? 1 : r.status == S::TimedOut ? 2 : 3;
    out->rtt_ns = r.rtt_ns;
    return 0;
}

uint64_t generation() {
    arch::IrqGuard guard;
    return g_node ? g_node->generation() : 0;
}

// A follower's change proposed here (or refused: this node no longer leads), under the cluster's
// authority: the record names the follower, what the change does and to which collection. Read
// barriers (a linearizable read each) are not recorded.
void audit_forwarded(uint32_t from_ip, std::span<const uint8_t> command, bool proposed) {
    using abi::repl::kHeader;
    if (command.size() < kHeader)
        return;
    const uint16_t type = static_cast<uint16_t>(ktl::get_le(command.data() + abi::repl::kTypeAt, 2));
    static const char* const kActions[] = { "", "create", "drop", "upsert", "delete" };
    const auto outcome = proposed ? mcp::AuditOutcome::Allow : mcp::AuditOutcome::Deny;
    if (type == raftdir::kPlace) { // (a replicated collection's placement, before its create)
        uint32_t voters[raftdir::kMaxVoters];
        const auto p = raftdir::decode_place(std::as_bytes(command.subspan(kHeader)), voters);
        record_peer(from_ip, outcome, proposed ? "" : "not_leader", "place", p ? p->name : std::string_view("?"),
                    "forwarded_change");
        return;
    }
    if (type == raftdir::kForget) { // (a dropped collection's placement)
        const auto f = raftdir::decode_forget(std::as_bytes(command.subspan(kHeader)));
        record_peer(from_ip, outcome, proposed ? "" : "not_leader", "forget", f ? f->name : std::string_view("?"),
                    "forwarded_change");
        return;
    }
    if (type < 1 || type > 4)
        return;
    auto d = storage::decode_record(type, std::as_bytes(command.subspan(kHeader)));
    record_peer(from_ip, outcome, proposed ? "" : "not_leader", kActions[type], d ? d->name : std::string_view("?"),
                "forwarded_change");
}

bool running() {
    arch::IrqGuard guard;
    return g_node != nullptr;
}

bool member_state(uint32_t ip, uint8_t& state, uint64_t& for_ns) {
    arch::IrqGuard guard;
    if (!g_node)
        return false;
    const uint64_t now = clock::monotonic_ns();
    for (size_t i = 0; i < g_node->member_count(); ++i) {
        const cluster::Member& m = g_node->member(i);
        if (m.addr.ip != ip)
            continue;
        state = static_cast<uint8_t>(m.state);
        for_ns = now > m.state_since_ns ? now - m.state_since_ns : 0;
        return true;
    }
    return false;
}

uint32_t lowest_live_member(bool (*skip)(uint32_t ip)) {
    uint32_t best = 0;
    arch::IrqGuard guard;
    if (!g_node)
        return 0;
    for (size_t i = 1; i < g_node->member_count(); ++i) {
        const cluster::Member& m = g_node->member(i);
        if (m.state == cluster::State::Alive && (best == 0 || m.addr.ip < best) && !skip(m.addr.ip))
            best = m.addr.ip;
    }
    return best;
}

size_t live_members(std::span<uint32_t> out) {
    size_t n = 0;
    arch::IrqGuard guard;
    for (size_t i = 1; g_node && i < g_node->member_count() && n < out.size(); ++i) {
        const cluster::Member& m = g_node->member(i);
        if (m.state == cluster::State::Alive)
            out[n++] = m.addr.ip;
    }
    return n;
}

int64_t replace(uint32_t dead, uint32_t with) {
    uint8_t state = 0;
    uint64_t for_ns = 0;
    if (!member_state(with, state, for_ns) || state != static_cast<uint8_t>(cluster::State::Alive))
        return -static_cast<int64_t>(ktl::Error::NotFound);
    return consensus::request_replace(dead, with);
}

void poke() {
    net::Datagram* endpoint = nullptr;
    {
        arch::IrqGuard guard;
        endpoint = g_endpoint;
    }
    if (endpoint)
        endpoint->event().signal();
}

} // namespace clusterd
