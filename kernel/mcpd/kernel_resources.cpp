#include "kernel_resources.h"

#include "../arch/aarch64/cpu.h"
#include "../audit/trail.h"
#include "firmware_json.h"
#include "../log.h"
#include <abi/sys.h>
#include <abi/version.h>
#include "provenance_log.h"
#include "sink_gate.h"
#include "../mm/kheap.h"
#include "tools/cluster/cluster_members.h"
#include "bridge_config.h"
#include "composition_json.h"
#include "tools/profile.h"
#include "perf_json.h"

#include <ktl/log_ring.h>
#include <ktl/utf8.h>
#include <mcp/policy/roles.h>

namespace mcpd {
namespace {

// One context per bridge task: capability slots are per task.
struct Bound {
    uint32_t task = ~0u;
    ResourceContext ctx;
};
Bound g_bound[4];

const ResourceContext& ctx() {
    static const ResourceContext none;
    uint32_t self = static_cast<uint32_t>(sys::self());
    for (const auto& b : g_bound)
        if (b.task == self)
            return b.ctx;
    return none;
}

// Where the collections live and how the disk is doing: state "off" (no disk: memory only),
// "recovering", "ready" or "failed" (durable collections read-only; `reason` says why).
void write_storage(json::Writer& w) {
    abi::StorageInfo s {};
    if (sys::storage_info(ctx().introspection, &s) < 0)
        return;
    w.key("storage").begin_object();
    w.key("state").string(abi::storage_state_name(static_cast<abi::StorageState>(s.state)));
    if (s.reason[0])
        w.key("reason").string(ktl::field_text(s.reason));
    if (s.has_disk) {
        w.key("disk_bytes")
            .number(s.disk_bytes)
            .key("block_size")
            .number(s.block_size)
            .key("flush")
            .boolean(s.can_flush);
        w.key("log_bytes").number(s.log_bytes).key("log_free_bytes").number(s.log_free);
        w.key("recovery")
            .begin_object()
            .key("records")
            .number(s.recovered_records)
            .key("commits")
            .number(s.recovered_commits);
        w.key("ms")
            .number(s.recovery_ms)
            .key("formatted")
            .boolean(s.formatted)
            .key("torn_tail_dropped")
            .boolean(s.torn_tail);
        w.key("damaged").boolean(s.damaged).key("superblock_copy_damaged").boolean(s.superblock_copy_damaged);
        w.key("newer_checkpoint_found").boolean(s.newer_checkpoint);
        w.key("checkpoint_bytes").number(s.recovered_checkpoint_bytes);
        if (s.state == static_cast<uint8_t>(abi::StorageState::Recovering))
            w.key("replayed_so_far").number(s.recovery_progress);
        w.end_object();
        w.key("checkpoints").number(s.checkpoints).key("last_checkpoint_ms").number(s.checkpoint_ms);
        w.key("last_checkpoint_bytes").number(s.checkpoint_bytes);
        w.key("commits").number(s.commits).key("records").number(s.records).key("bytes").number(s.bytes);
        w.key("most_callers_per_commit").number(s.waiters_max).key("last_commit_us").number(s.last_commit_ns / 1000);
        w.key("mean_commit_us").number(s.commits ? s.commit_ns_total / s.commits / 1000 : 0);
        w.key("refused_full").number(s.refused_full);
        w.key("audit_records_logged").number(s.audit_staged).key("audit_records_not_logged").number(s.audit_lost);
        w.key("audit_records_recovered").number(s.recovered_audit);
        w.key("disk_io").begin_object().key("reads").number(s.reads).key("writes").number(s.writes);
        w.key("flushes").number(s.flushes).key("errors").number(s.errors);
        w.key("bytes_read").number(s.bytes_read).key("bytes_written").number(s.bytes_written).end_object();
    }
    w.end_object();
}

bool read_status(json::Writer& w, mcp::ToolError& err) {
    abi::MemInfo mem {};
    abi::TaskInfo tasks[64]; // this read's own: both bridges read at once
    abi::SystemInfo system {};
    int64_t n = sys::task_list(ctx().introspection, tasks, 64);
    if (n < 0 || sys::mem_stats(ctx().introspection, &mem) < 0 || sys::system_info(ctx().introspection, &system) < 0) {
        err = { mcp::ErrorCode::InternalError, "kernel statistics unavailable" };
        return false;
    }
    w.key("kernel").begin_object().key("name").string("Basalt").key("version").string(kVersion);
    w.key("board").string(system.board).key("model").string(system.model);
    write_firmware(w, system.firmware);
    w.end_object();
    w.key("cpus").begin_object().key("online").number(static_cast<uint64_t>(system.cpus_online));
    w.key("listed").number(static_cast<uint64_t>(system.cpus_listed)).end_object();
    w.key("uptime_ms").number(system.mono_ns / 1000000);
    w.key("memory")
        .begin_object()
        .key("total_pages")
        .number(mem.total_pages)
        .key("free_pages")
        .number(mem.free_pages)
        .end_object();
    abi::SchedInfo sched {};
    if (sys::sched_stats(ctx().introspection, &sched) == 0) {
        w.key("scheduler").begin_object().key("ticks").number(sched.ticks).key("switches").number(sched.switches);
        w.key("consistency_checks").number(sched.consistency_checks).end_object();
    }
    // Wall time: whether it is set, and from where (a board without an RTC has none until told).
    w.key("clock")
        .begin_object()
        .key("set")
        .boolean(system.wall_clock_known)
        .key("source")
        .string(system.clock_source)
        .end_object();
    // Where secrets (session ids) come from; secure false means predictable (no hardware entropy).
    w.key("random").begin_object().key("generator").string("chacha20").key("sources").string(system.random_sources);
    w.key("secure").boolean(system.random_secure).key("reseeds").number(system.random_reseeds).end_object();
    write_storage(w);
    // The embedder's model (docs/documents.md): where the board put none, "absent".
    w.key("embedder").begin_object().key("state").string(system.embedder.state);
    if (system.embedder.words)
        w.key("source")
            .string(system.embedder.source)
            .key("words")
            .number(system.embedder.words)
            .key("dimensions")
            .number(system.embedder.dim);
    if (system.embedder.bytes)
        w.key("bytes").number(system.embedder.bytes);
    w.end_object();
    w.key("tasks").begin_array();
    for (int64_t i = 0; i < n; ++i)
        w.string(tasks[i].name);
    w.end_array();
    w.key("mcp").begin_object();
    const mcp::Principal* p = ctx().line_principal;
    // The line this snapshot was read on, and who its callers are without a key.
    w.key("transport").string(ctx().transport);
    // What carries the serial line: "virtio-console" (QEMU, run.sh --stdio) or "pl011".
    const bool line = system.serial_device[0] != '\0';
    w.key("serial_device").string(line ? system.serial_device : "none");
    if (line) {
        w.key("serial_counters").begin_object().key("rx_bytes").number(system.serial_rx_bytes);
        w.key("tx_bytes").number(system.serial_tx_bytes).key("rx_dropped").number(system.serial_rx_dropped);
        w.key("tx_waits").number(system.serial_tx_waits).end_object();
    }
    w.key("line_principal").string(p ? std::string_view(p->name) : "anonymous");
    w.key("line_role").string(mcp::role_name(p ? p->role : mcp::Role::Anonymous));
    w.key("tools_allowed").number(uint64_t(ctx().tools_allowed));
    w.key("audit_records").number(audit::trail::count()).key("audit_dropped").number(audit::trail::dropped());
    w.key("provenance_nodes").number(provenance_log_count()).key("provenance_failed").number(provenance_log_failed());
    w.key("step_up");
    write_policy(w);
    w.key("config_warnings").begin_array();
    for (const auto& text : config_warnings())
        w.string(text);
    w.end_array();
    w.end_object();
    // A swarm node in the consensus group: where its replicated collections stand.
    if (cluster_node())
        (void)write_consensus_status(ctx().cluster, w);
    return true;
}

bool read_log(json::Writer& w, mcp::ToolError&) {
    constexpr uint64_t kNewest = 100;
    ktl::LogRecord rec;
    // The ring knows where it ends; log_read resumes at the oldest record still held.
    uint64_t end = klog::next_seq();
    uint64_t seq = end > kNewest ? end - kNewest : 0;
    w.key("records").begin_array();
    for (uint64_t i = 0; i < kNewest && seq < end; ++i) {
        int64_t n = sys::log_read(ctx().introspection, seq, &rec);
        if (n < 0)
            break;
        seq = static_cast<uint64_t>(n);
        w.begin_object().key("seq").number(rec.seq).key("uptime_ns").number(rec.mono_ns);
        w.key("level").string(ktl::log_level_name(rec.level)).key("text").string({ rec.text, rec.length }).end_object();
    }
    w.end_array();
    w.key("next").number(end);
    return true;
}

bool read_audit(json::Writer& w, mcp::ToolError&) {
    w.key("decisions");
    audit::trail::write(w, 100);
    // records_total records written, decisions_total decisions they stand for (repeated refusals
    // are counted into one record), decisions_dropped records that gave way to newer ones.
    w.key("records_total").number(audit::trail::count()).key("decisions_total").number(audit::trail::decisions());
    w.key("decisions_dropped").number(audit::trail::dropped());
    // Capability refusals and token redemptions recorded by the kernel's system-call layer: the
    // newest kNewestEvents (every call redeems a token, so the ring fills; all of it would not fit
    // the read's output limit beside the decisions once it had: the read failed from then on).
    constexpr uint32_t kNewestEvents = 64;
    uint64_t newest[kNewestEvents];
    uint32_t held = 0;
    abi::AuditRecord rec;
    uint64_t seq = 0;
    for (int guard = 0; guard < 256; ++guard) { // the ring's size (kernel/audit/syscall_log.cpp)
        int64_t next = sys::audit_read(ctx().audit, seq, &rec);
        if (next < 0)
            break;
        newest[held++ % kNewestEvents] = rec.seq;
        seq = static_cast<uint64_t>(next);
    }
    const uint32_t shown = held < kNewestEvents ? held : kNewestEvents;
    w.key("capability_events_omitted").number(held - shown);
    w.key("capability_events").begin_array();
    for (uint32_t i = 0; i < shown; ++i) {
        if (sys::audit_read(ctx().audit, newest[(held - shown + i) % kNewestEvents], &rec) < 0)
            continue;
        w.begin_object().key("seq").number(rec.seq).key("uptime_ns").number(rec.mono_ns);
        w.key("task").string(std::string_view(rec.task_name, __builtin_strnlen(rec.task_name, sizeof rec.task_name)));
        w.key("syscall").number(rec.syscall).key("slot").number(rec.slot);
        w.key("outcome").string(rec.outcome == abi::AuditOutcome::Allow  ? "allow"
                                : rec.outcome == abi::AuditOutcome::Deny ? "deny"
                                                                         : "error");
        w.key("error").string(ktl::error_name(static_cast<ktl::Error>(rec.error))).end_object();
    }
    w.end_array();
    return true;
}

// provenance://node/{id}: the node, its chain of parents, and the audit trail's decisions that
// name it (among the newest 1024 records). Written as JSON text into a heap block of its own: two
// bridges may read at once.
constexpr uint32_t kChainDepth = 8;
constexpr uint32_t kDecisionScan = 1024;
constexpr size_t kNodeText = 16384;

bool read_provenance_node(const mcp::ResourceRead& in, json::Writer& w, mcp::ToolError& err) {
    auto id = in.vars.empty() ? std::nullopt : mcp::parse_provenance_id(in.vars[0].value);
    if (!id) {
        err = { mcp::ErrorCode::ValidationFailed, "not a provenance node id (8 hex digits, '-', a number: 9c1e02aa-17)",
                "invalid_id" };
        return false;
    }
    auto mem = kheap::alloc(kNodeText);
    if (!mem) {
        err = { mcp::ErrorCode::InternalError, "no memory to read the node" };
        return false;
    }
    json::Writer tw({ static_cast<char*>(*mem), kNodeText });
    const char* why = "";
    tw.begin_object();
    bool held = provenance_log_write(tw, *id, kChainDepth, why);
    if (held) {
        tw.key("decisions");
        audit::trail::write_node(tw, *id, kDecisionScan);
    }
    tw.end_object();
    bool ok = held && tw.complete();
    if (ok)
        w.key("text").string(tw.view());
    else
        err = held ? mcp::ToolError { mcp::ErrorCode::LimitOutputExceeded, "the node's decisions do not fit one read" }
                   : mcp::ToolError { mcp::ErrorCode::NotFound, why, "missing_node" };
    kheap::free(*mem);
    return ok;
}

// kernel://perf: every bridge's stage timing (each bridge writes its own; read here as it stands).
bool read_perf(json::Writer& w, mcp::ToolError&) {
    StageSource sources[sizeof g_bound / sizeof g_bound[0]];
    size_t n = 0;
    for (const auto& b : g_bound)
        if (b.task != ~0u && b.ctx.stages)
            sources[n++] = { b.ctx.transport, b.ctx.stages };
    write_perf(w, sources, n);
    return true;
}

constexpr mcp::Argument kNodeVars[] = { { "id", "The node's id, as vector_get and the audit trail give it", true } };

const mcp::ResourceTemplate kTemplates[] = {
    { "provenance://node/{id}", "provenance-node", "Provenance node",
      "Where a request came from (principal, line, session, client as declared, integrity), the chain of requests it "
      "derives from, and the decisions recorded for it.",
      "application/json", mcp::kAuditRead, "1", kNodeVars, read_provenance_node },
};

const mcp::Resource kResources[] = {
    { "kernel://status", "status", "Kernel status", "Uptime, memory, tasks, the MCP line's principal and, on a swarm node in the consensus group, its role, term, leader, commit and replicas' lag.", mcp::kKernelRead,
      "1", read_status },
    { "kernel://log", "log", "Kernel log", "The newest 100 records of the kernel log ring.", mcp::kKernelRead, "1", read_log },
    { "audit://log", "audit", "Audit log", "MCP decisions (append-only trail) and kernel capability events.",
      mcp::kAuditRead, "1", read_audit },
    { "kernel://composition", "composition", "System composition",
      "Which task holds a capability to which kernel object, with which rights: the table the kernel grants "
      "from at boot.",
      mcp::kKernelRead, "1", [](json::Writer& w, mcp::ToolError&) { write_composition(w); return true; } },
    { "kernel://perf", "perf", "Call timing",
      "Where the time of a tools/call goes: per pipeline stage (parse, authenticate, provenance, route, authorise, "
      "validate, admit, start, body, encode, audit, send) and the whole call, calls, total, mean, max, p50 and p99 in "
      "nanoseconds, for every transport together and for each one.",
      mcp::kKernelRead, "1", read_perf },
    // Last: served only by a node that runs membership (kernel_resources() leaves it out otherwise).
    { "cluster://members", "members", "Cluster members",
      "Every member this node knows: state, incarnation, last contact, round trip. Subscribers are told of every change.",
      mcp::kKernelRead, "1", [](json::Writer& w, mcp::ToolError& err) { return read_cluster_members(ctx().cluster, w, err); },
      nullptr, nullptr, [](uint64_t) { return cluster_generation(ctx().cluster); } },
};

} // namespace

void set_resource_context(const ResourceContext& context) {
    arch::IrqGuard guard;
    uint32_t self = static_cast<uint32_t>(sys::self());
    for (auto& b : g_bound)
        if (b.task == self || b.task == ~0u) {
            b = { self, context };
            return;
        }
}
std::span<const mcp::ResourceTemplate> kernel_resource_templates() { return kTemplates; }

std::span<const mcp::Resource> kernel_resources() {
    std::span<const mcp::Resource> all(kResources);
    return cluster_node() ? all : all.first(all.size() - 1);
}

} // namespace mcpd
