#include "trail.h"

#include "../arch/aarch64/cpu.h"
#include "../bootargs.h"
#include "../clock.h"
#include "../ipc/task_slots.h"
#include "../syscall/sys.h"

#include <ktl/utf8.h>
#include <mcp/policy/provenance.h>
#include <mcp/policy/roles.h>

namespace audit::trail {
namespace {

constexpr uint64_t kDefaultRegionBytes = 1u << 20;
// Identical refusals closer together than this are counted into one record.
constexpr uint64_t kRepeatWindowNs = 1'000'000'000;

struct Record {
    uint64_t seq;
    uint64_t mono_ns;
    uint64_t token_id;
    uint64_t args_hash;
    uint64_t duration_us;
    uint64_t dropped_before; // records that had given way when this one was written
    char timestamp[24];
    char request_id[48];
    char principal[32];
    char name[48];
    char code[28];
    char transport[8];
    uint8_t role;
    uint8_t kind;
    uint8_t outcome;
    uint8_t reserved;
    uint32_t repeats;       // identical refusals this record stands for (1: just itself)
    uint64_t provenance_id; // the request's provenance node (0: none)
    char action[16];
    char target[64]; // what it acted on: a collection and how many ids
    char reason[32]; // details.reason of a refusal or failure (declined, proposal_pending, ...)
    uint16_t principal_id;
    uint8_t pad[6];
};
static_assert(sizeof(Record) == 376);

ipc::TaskSlots g_slots;   // the bridges share one region, each through a slot of its own
uint64_t g_count = 0;     // records in the region (written this boot, or put back from the disk)
uint64_t g_seq_base = 0;  // the sequence number of the region's first record
uint64_t g_failed = 0;    // records that could not be written at all
uint64_t g_decisions = 0; // decisions, repeats included
// The last refusal written, and identical ones since that are not written yet.
Record g_last_deny {};
bool g_have_last_deny = false;
uint32_t g_pending_repeats = 0;
Record g_pending {};

uint64_t capacity_records() { return bytes() / sizeof(Record); }
uint64_t given_way() { return g_count > capacity_records() ? g_count - capacity_records() : 0; }


uint32_t region_slot() { return g_slots.slot(); }

} // namespace

uint64_t bytes() {
    uint64_t kib = bootargs::get().audit_kib;
    return kib ? kib * 1024 : kDefaultRegionBytes;
}
uint32_t record_bytes() { return sizeof(Record); }

bool attach(uint32_t region) { return g_slots.attach(region); }

void resume(uint64_t records) {
    if (records == 0)
        return;
    // Sequence numbers go on from the last record put back (a checkpoint keeps only the ring's
    // newest records, so the region may hold fewer than were ever written).
    Record last {};
    const bool read = sys::region_read(region_slot(), (records - 1) * sizeof(Record), &last, sizeof last) ==
                      static_cast<int64_t>(sizeof last);
    arch::IrqGuard guard; // both bridges call it at start; the first one counts
    if (g_count != 0)
        return;
    g_count = records;
    g_seq_base = read && last.seq + 1 >= records ? last.seq + 1 - records : 0;
}

namespace {

// Same decision as the last refusal written, but for its request id and times.
bool same_refusal(const Record& a, const Record& b) {
    auto eq = [](const auto& x, const auto& y) { return ktl::field_text(x) == ktl::field_text(y); };
    return a.kind == b.kind && a.outcome == b.outcome && a.role == b.role && eq(a.principal, b.principal) &&
           eq(a.action, b.action) && eq(a.target, b.target) && eq(a.reason, b.reason) && eq(a.name, b.name) &&
           eq(a.code, b.code) && eq(a.transport, b.transport);
}

// Appends one record through the caller's slot for the region (IRQs masked by the caller:
// sequence numbers and the ring stay in step).
void append(Record& r, uint32_t region) {
    r.seq = g_seq_base + g_count;
    r.dropped_before = given_way() + g_failed;
    if (region == ~0u || sys::region_append(region, &r, sizeof r) < 0) {
        ++g_failed;
        return;
    }
    ++g_count;
}

// The refusals counted since the last one written become one record of their own.
void flush_pending(uint32_t region) {
    if (g_pending_repeats == 0)
        return;
    g_pending.repeats = g_pending_repeats;
    g_pending_repeats = 0;
    append(g_pending, region);
    g_last_deny = g_pending;
}

} // namespace

bool record(const mcp::AuditEvent& e) { return record(e, region_slot()); }

bool record(const mcp::AuditEvent& e, uint32_t region) {
    Record r {};
    r.mono_ns = clock::monotonic_ns();
    r.token_id = e.token_id;
    r.args_hash = e.args_hash;
    r.duration_us = e.duration_us;
    r.repeats = 1;
    ktl::utf8_copy(r.timestamp, e.timestamp);
    ktl::utf8_copy(r.request_id, e.request_id);
    ktl::utf8_copy(r.principal, e.principal ? std::string_view(e.principal->name) : "anonymous");
    ktl::utf8_copy(r.name, e.name);
    ktl::utf8_copy(r.code, e.code ? e.code : "");
    ktl::utf8_copy(r.transport, e.transport ? e.transport : "");
    ktl::utf8_copy(r.action, e.action ? e.action : "");
    ktl::utf8_copy(r.target, e.target);
    r.provenance_id = e.provenance_id;
    ktl::utf8_copy(r.reason, e.reason ? e.reason : "");
    r.principal_id = e.principal ? e.principal->id : 0;
    r.role = static_cast<uint8_t>(e.principal ? e.principal->role : mcp::Role::Anonymous);
    r.kind = static_cast<uint8_t>(e.kind);
    r.outcome = static_cast<uint8_t>(e.outcome);
    arch::IrqGuard guard; // two bridges record concurrently
    ++g_decisions;
    bool refusal = e.outcome == mcp::AuditOutcome::Deny;
    if (refusal && g_have_last_deny && same_refusal(r, g_last_deny) &&
        r.mono_ns - g_last_deny.mono_ns < kRepeatWindowNs) {
        // A burst of the same refusal: counted, written once the burst ends or the window passes.
        g_pending = r;
        g_pending.mono_ns = g_last_deny.mono_ns; // the window runs from the record written
        ++g_pending_repeats;
        return false;
    }
    flush_pending(region);
    append(r, region);
    if (refusal) {
        g_last_deny = r;
        g_have_last_deny = true;
    }
    return true;
}

namespace {

void write_record(json::Writer& w, const Record& r) {
    char hash[17];
    for (int k = 0; k < 16; ++k)
        hash[k] = "0123456789abcdef"[(r.args_hash >> (60 - 4 * k)) & 0xf];
    hash[16] = '\0';
    w.begin_object();
    w.key("seq").number(r.seq).key("timestamp").string(ktl::field_text(r.timestamp));
    w.key("request_id").string(ktl::field_text(r.request_id));
    w.key("principal").string(ktl::field_text(r.principal)).key("principal_id").number(uint64_t(r.principal_id));
    w.key("role").string(mcp::role_name(static_cast<mcp::Role>(r.role)));
    w.key("transport").string(ktl::field_text(r.transport));
    w.key("kind").string(mcp::audit_kind_name(static_cast<mcp::AuditKind>(r.kind)));
    w.key("name").string(ktl::field_text(r.name));
    w.key("action").string(ktl::field_text(r.action)).key("target").string(ktl::field_text(r.target));
    char node[mcp::kProvenanceIdText];
    mcp::format_provenance_id(r.provenance_id, node);
    w.key("provenance_node_id").string(node);
    w.key("outcome").string(mcp::audit_outcome_name(static_cast<mcp::AuditOutcome>(r.outcome)));
    w.key("code").string(ktl::field_text(r.code)).key("reason").string(ktl::field_text(r.reason));
    w.key("token_id").number(r.token_id);
    w.key("args_hash").string(r.args_hash ? std::string_view(hash, 16) : std::string_view());
    w.key("duration_us").number(r.duration_us);
    w.key("repeats").number(uint64_t(r.repeats)).key("dropped_before").number(r.dropped_before);
    w.end_object();
}

// Writes, oldest first, those of the newest `max` records still held that `keep` accepts.
template <typename Keep>
void write_records(json::Writer& w, uint32_t max, Keep keep) {
    const uint32_t region = region_slot();
    {
        arch::IrqGuard guard;
        flush_pending(region); // a reader sees every decision so far
    }
    w.begin_array();
    uint64_t first = g_count > max ? g_count - max : 0;
    if (first < given_way())
        first = given_way();
    for (uint64_t i = first; i < g_count; ++i) {
        Record r;
        if (sys::region_read(region, i * sizeof(Record), &r, sizeof r) != static_cast<int64_t>(sizeof r))
            break;
        if (keep(r))
            write_record(w, r);
    }
    w.end_array();
}

} // namespace

void write(json::Writer& w, uint32_t max) {
    write_records(w, max, [](const Record&) { return true; });
}

void write_node(json::Writer& w, uint64_t provenance_id, uint32_t scan) {
    write_records(w, scan, [provenance_id](const Record& r) { return r.provenance_id == provenance_id; });
}

uint64_t count() { return g_seq_base + g_count; }
uint64_t dropped() { return given_way() + g_failed; }
uint64_t decisions() { return g_decisions; }

} // namespace audit::trail
