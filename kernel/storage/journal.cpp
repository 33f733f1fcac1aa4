#include "journal.h"

#include "../arch/aarch64/cpu.h"
#include "../clock.h"
#include "../mm/kheap.h"
#include "../sched/scheduler.h"

#include <cstring>

namespace journal {
namespace {

// What a record costs in the log beyond its payload: the log's 32-byte header and padding to 8.
constexpr size_t kLogOverhead = 40;
// Kept free in the log at all times: each group's last sector padding, with room to spare.
constexpr uint64_t kLogMargin = 64 * 1024;

struct Ack {
    sched::WaitQueue* wq;
    sched::WaitQueue own; // for wait(): the blocked caller sits here
    int64_t result;
    void* heap;
    uint64_t ticket;
    bool used;
};

State g_state = State::Off;
const char* g_reason = "no disk";
sched::Task* g_owner = nullptr;
uint8_t g_serving_priority = 0; // the storage task's once the store is recovered (or failed)
alignas(8) std::byte g_staging[kStagingBytes];
size_t g_staged = 0;
size_t g_reserved = 0;
uint64_t g_staged_log_bytes = 0;   // what the staged records will take in the log
uint64_t g_inflight_log_bytes = 0; // ... and those being written now
uint64_t g_staging_ticket = 1;     // the commit that will carry what is staged now
uint64_t g_inflight_ticket = 0;    // the commit being written (0: none)
uint64_t g_durable_upto = 0;       // every record of this commit ticket and older ones is durable
uint64_t g_barrier_max = 0;        // the newest ticket barrier() handed out
uint32_t g_barriers_staged = 0;    // answers held for the staging ticket (Stats::waiters_max counts them)
uint32_t g_barriers_inflight = 0;  // ... and for the commit being written
void (*g_commit_listeners[2])() = {};
uint64_t g_inflight_records = 0;
uint64_t g_inflight_bytes = 0;
uint64_t g_staged_records = 0;
uint64_t g_staged_audit = 0;      // of which audit records
sched::WaitQueue g_taker;         // the storage task, waiting for something to write
sched::WaitQueue g_ready_waiters; // tasks waiting for recovery to end
Ack g_acks[kMaxAcks];
void (*g_space_waker)() = nullptr;
const void* g_audit_region = nullptr;
bool g_audit_ready = false; // the trail's records are back: the bridges may serve
uint64_t g_audit_total = 0; // records appended to the audit trail's region this boot
// Checkpoints: the barrier holds writes back while one is taken; the hold keeps the trail's new
// records for the new log; tickets of acks waiting for a checkpoint carry kCheckpointTicket.
constexpr uint64_t kCheckpointTicket = 1ull << 63;
bool g_barrier = false;
bool g_hold = false;
bool g_checkpoint_requested = false;
bool g_checkpoint_hopeless = false; // the last one could not make room: a full log is storage_full
uint64_t g_checkpoints_cut = 0;     // checkpoints past their cut (the import tickets' clock)
uint64_t g_import_ticket = 0;       // set by note_import(), taken by take_import_ticket()
uint64_t g_failed_ns = 0;           // when the journal failed (monotonic)
// Everything staged may wait a little (stage(..., linger)): a tool task's change whose bridge is
// about to stage the call's audit record and sync, or audit records nobody waits for (the calls
// that changed nothing). The storage task is not woken for them, so that one commit carries a
// change and its record, and the records of many read-only calls share one commit instead of
// costing one each; it takes the group at a sync, when a record that may not wait is staged, or
// kLingerNs after the first record at the latest (the most a record nobody waits for may stay in
// memory; a bridge that never syncs costs that much, nothing is kept).
constexpr uint64_t kLingerNs = 20'000'000;
bool g_lingering = false;
uint64_t g_linger_until = 0;
Stats g_stats {};
// The audit records staged when a checkpoint held the trail (Hold): the front of the staging
// buffer, and the ticket their callers wait on.
struct Held {
    size_t bytes;
    uint64_t records, audit, log_bytes, ticket;
};
Held g_held {};

void unreserve_locked(size_t bytes);
void request_checkpoint_locked();

// The bridges that may hold answers are told to ask storage_durable again (a spurious wake costs
// one check).
void wake_listeners() {
    for (auto listener : g_commit_listeners)
        if (listener)
            listener();
}

// Commits up to `ticket` are durable: wakes whoever holds a barrier ticket that may be among them.
void durable_through(uint64_t ticket) {
    const uint64_t before = g_durable_upto;
    if (ticket > g_durable_upto)
        g_durable_upto = ticket;
    if (g_barrier_max > before)
        wake_listeners();
}

// The storage task is to take what is staged now.
void wake_taker() {
    g_lingering = false;
    sched::wake_one(g_taker, 0);
}

// margin: whether the record may use the reserve kept for drops (which free room: after one, a
// checkpoint can empty the log again).
bool log_room(uint64_t extra, bool margin = false) {
    const uint64_t committed = g_staged_log_bytes + g_inflight_log_bytes + extra +
                               (margin ? kLogMargin / 2 : kLogMargin);
    return g_stats.log_free >= committed;
}

// Wakes every ack of `ticket` with its result, or with `failure` (< 0) instead.
uint32_t settle(uint64_t ticket, int64_t failure) {
    uint32_t woken = 0;
    for (Ack& a : g_acks) {
        if (!a.used || a.ticket != ticket)
            continue;
        sched::wake_one(*a.wq, failure < 0 ? failure : a.result);
        if (a.heap)
            kheap::free(a.heap);
        a = Ack {};
        ++woken;
    }
    return woken;
}

Ack* free_ack() {
    for (Ack& a : g_acks)
        if (!a.used)
            return &a;
    return nullptr;
}

// A checkpoint that held the trail has ended. Written: the records held are in it, so they leave
// the staging buffer and their callers are answered. Not written: they stay staged, now carried
// by the next group like the ones staged after them.
void release_held(bool written) {
    const Held h = g_held;
    g_held = Held {};
    if (!written) {
        for (Ack& a : g_acks)
            if (a.used && a.ticket == h.ticket)
                a.ticket = g_staging_ticket;
        return;
    }
    if (h.bytes > g_staged) // cannot happen (nothing takes the buffer while the trail is held)
        return;
    std::memmove(g_staging, g_staging + h.bytes, g_staged - h.bytes);
    g_staged -= h.bytes;
    g_staged_records -= h.records;
    g_staged_audit -= h.audit;
    g_staged_log_bytes -= h.log_bytes;
    settle(h.ticket, 0);
    durable_through(h.ticket);
    // A sync() made during the hold waits on the staging ticket; with nothing staged after the
    // held records, no group will carry that ticket: what it waited for is durable now.
    if (g_staged == 0)
        settle(g_staging_ticket, 0);
}

} // namespace

void init_off(const char* why) {
    arch::IrqGuard guard;
    g_state = State::Off;
    g_reason = why;
}

void init_recovering(sched::Task* owner, uint8_t serving_priority) {
    arch::IrqGuard guard;
    g_state = State::Recovering;
    g_reason = "";
    g_owner = owner;
    g_serving_priority = serving_priority;
}

State state() { return g_state; }

const char* state_name(State s) { return abi::storage_state_name(s); }

const char* reason() { return g_reason; }

bool replaying() { return replaying_for(sched::current()); }
bool replaying_for(const sched::Task* caller) { return g_state == State::Recovering && caller && caller == g_owner; }

bool durable_by_default() { return g_state == State::Ready || replaying(); }

namespace {

// audit: an audit record, which passes a checkpoint's barrier (the trail goes on meanwhile), and
// is staged while the store is still recovered (the bridges serve by then): the storage task
// writes it once the log is open.
// early: a record that may be staged once the audit trail is back, as audit records are (a Raft
// member's: its group runs while the store is recovered), but that waits for a checkpoint's end.
ktl::Error reserve_impl(size_t bytes, bool audit, bool margin = false, bool early_too = false) {
    if (bytes > kMaxRecord)
        return ktl::Error::InvalidArgs;
    if (g_state == State::Failed)
        return ktl::Error::IoError;
    const bool early = (audit || early_too) && g_state == State::Recovering && g_audit_ready;
    if (g_state != State::Ready && !early)
        return ktl::Error::Unsupported;
    if (g_barrier && !audit)
        return ktl::Error::WouldBlock; // a checkpoint is being taken: writes wait for its end
    const size_t need = kStagedHeader + ((bytes + 7) & ~size_t(7));
    if (!log_room(bytes + kLogOverhead, margin)) {
        if (early)
            return ktl::Error::NoSpace; // no checkpoint while recovering: this record is not logged
        // A checkpoint empties the log: the write waits for it, unless checkpoints cannot help.
        if (!g_checkpoint_hopeless) {
            request_checkpoint_locked();
            return ktl::Error::WouldBlock;
        }
        ++g_stats.refused_full;
        return ktl::Error::NoSpace;
    }
    if (g_staged + g_reserved + need > kStagingBytes) {
        wake_taker(); // room comes back once it takes the buffer
        return ktl::Error::WouldBlock;
    }
    g_reserved += need;
    g_staged_log_bytes += bytes + kLogOverhead;
    return ktl::Error::None;
}

} // namespace

ktl::Error reserve(size_t bytes) {
    arch::IrqGuard guard;
    return reserve_impl(bytes, false);
}

ktl::Error reserve_raft(size_t bytes) {
    arch::IrqGuard guard;
    return reserve_impl(bytes, false, false, true);
}

ktl::Error reserve_drop(size_t bytes) {
    arch::IrqGuard guard;
    ktl::Error e = reserve_impl(bytes, false, true);
    if (e == ktl::Error::None && g_checkpoint_hopeless) {
        // The data shrinks: the checkpoint that found no room may find it now.
        g_checkpoint_hopeless = false;
        request_checkpoint_locked();
    }
    return e;
}

void unreserve(size_t bytes) {
    arch::IrqGuard guard;
    unreserve_locked(bytes);
}

namespace {
void unreserve_locked(size_t bytes) {
    if (bytes == 0)
        return;
    const size_t need = kStagedHeader + ((bytes + 7) & ~size_t(7));
    g_reserved = g_reserved >= need ? g_reserved - need : 0;
    g_staged_log_bytes = g_staged_log_bytes >= bytes + kLogOverhead ? g_staged_log_bytes - (bytes + kLogOverhead) : 0;
}
} // namespace

std::span<std::byte> stage(storage::RecordType type, size_t bytes, size_t reserved, uint64_t& ticket, bool linger) {
    arch::IrqGuard guard;
    unreserve_locked(reserved); // the reservation ends here; the record takes what it really needs
    const size_t padded = (bytes + 7) & ~size_t(7);
    const size_t need = kStagedHeader + padded;
    // The journal failed meanwhile (nothing staged now will be written), or no reservation made
    // this room (a bug): the caller answers with an error instead of waiting for ever.
    const bool may_be_early = type == storage::RecordType::Audit || storage::is_raft_record(type);
    const bool early = may_be_early && g_state == State::Recovering && g_audit_ready;
    if (bytes > reserved || (g_state != State::Ready && !early) || g_staged + need > kStagingBytes)
        return {};
    g_staged_log_bytes += bytes + kLogOverhead;
    std::byte* h = g_staging + g_staged;
    const uint16_t t = static_cast<uint16_t>(type);
    const uint32_t len = static_cast<uint32_t>(bytes);
    std::memcpy(h, &t, 2);
    std::memset(h + 2, 0, 2);
    std::memcpy(h + 4, &len, 4);
    std::memset(h + kStagedHeader + bytes, 0, padded - bytes);
    g_staged += need;
    ++g_staged_records;
    ticket = g_staging_ticket;
    if (!linger) {
        wake_taker();
    } else if (g_staged == need) { // the first record of the group
        g_lingering = true;
        g_linger_until = clock::monotonic_ns() + kLingerNs;
    }
    return { h + kStagedHeader, bytes };
}

void defer(sched::WaitQueue& wq, int64_t result, void* heap, uint64_t ticket) {
    arch::IrqGuard guard;
    Ack* a = free_ack();
    // A caller whose creator makes its writes durable (abi::kTaskAckStaged: a tool task, whose
    // bridge syncs before it answers) goes on now: the same commit then carries the record of the
    // change, staged after this one (a commit's ticket only grows, so sync covers this record).
    // Not an import's: a checkpoint makes it durable, which sync does not wait for.
    const bool staged_is_enough = wq.head && wq.head->ack_staged && (ticket & kCheckpointTicket) == 0;
    // (!a cannot happen: the table outsizes every source of waiters; never lose the caller.)
    if (!a || staged_is_enough) {
        sched::wake_one(wq, result);
        if (heap)
            kheap::free(heap);
        return;
    }
    *a = Ack { &wq, {}, result, heap, ticket, true };
}

ipc::Outcome wait(uint64_t ticket, int64_t result) {
    arch::IrqGuard guard;
    Ack* a = free_ack();
    if (!a)
        return { false, -static_cast<int64_t>(ktl::Error::WouldBlock) };
    *a = Ack { nullptr, {}, result, nullptr, ticket, true };
    a->wq = &a->own;
    sched::block_current(a->own, 0);
    return { true, 0 };
}

ipc::Outcome wait_ready() {
    arch::IrqGuard guard;
    if (g_state != State::Recovering || g_audit_ready || sched::current() == g_owner)
        return { false, 0 };
    sched::block_current(g_ready_waiters, 0);
    return { true, 0 };
}

ipc::Outcome take(std::byte* out, size_t cap, uint64_t deadline_ns) {
    arch::IrqGuard guard;
    if (g_inflight_ticket != 0 || cap < kStagingBytes)
        return { false, -static_cast<int64_t>(ktl::Error::InvalidArgs) }; // one group at a time
    if (g_staged == 0 || (g_lingering && clock::monotonic_ns() < g_linger_until)) {
        const bool sooner = g_staged != 0 && (deadline_ns == 0 || g_linger_until < deadline_ns);
        sched::block_current(g_taker, sooner ? g_linger_until : deadline_ns);
        return { true, 0 };
    }
    g_lingering = false;
    std::memcpy(out, g_staging, g_staged);
    const size_t n = g_staged;
    g_inflight_ticket = g_staging_ticket++;
    g_barriers_inflight = g_barriers_staged;
    g_barriers_staged = 0;
    g_inflight_log_bytes = g_staged_log_bytes;
    g_inflight_records = g_staged_records;
    g_inflight_bytes = n;
    g_staged_log_bytes = 0;
    g_staged_records = 0;
    g_staged_audit = 0;
    // Reservations not yet staged keep their place at the start of the emptied buffer.
    g_staged = 0;
    if (g_space_waker)
        g_space_waker();
    return { false, static_cast<int64_t>(n) };
}

void done(int64_t status, uint64_t log_free) {
    arch::IrqGuard guard;
    if (g_inflight_ticket == 0)
        return;
    const uint64_t ticket = g_inflight_ticket;
    g_inflight_ticket = 0;
    g_inflight_log_bytes = 0;
    if (status < 0) {
        settle(ticket, status);
        fail("a write to the disk failed: durable collections are read-only until a restart");
        return;
    }
    g_stats.log_free = log_free;
    ++g_stats.commits;
    g_stats.records += g_inflight_records;
    g_stats.bytes += g_inflight_bytes;
    uint32_t woken = settle(ticket, 0) + g_barriers_inflight;
    g_barriers_inflight = 0;
    if (woken > g_stats.waiters_max)
        g_stats.waiters_max = woken;
    durable_through(ticket);
}

void audit_ready(uint64_t log_free) {
    arch::IrqGuard guard;
    g_stats.log_free = log_free;
    g_audit_ready = true;
    // The store's replay comes next: below the tool tasks too, which serve everything from now on
    // (called by the owner itself, which therefore still runs).
    if (g_owner && g_state == State::Recovering)
        sched::set_priority(g_owner, kRecoveryPriority);
    sched::wake_all(g_ready_waiters, 0);
}

namespace {
// Recovery is over, one way or the other: from now on the storage task writes the log, which
// callers wait for.
void restore_owner_priority() {
    if (g_owner && g_serving_priority)
        sched::set_priority(g_owner, g_serving_priority);
}
} // namespace

void open(uint64_t log_free) {
    arch::IrqGuard guard;
    g_stats.log_free = log_free;
    if (g_state == State::Recovering)
        g_state = State::Ready;
    restore_owner_priority();
    sched::wake_all(g_ready_waiters, 0);
}

void fail(const char* why) {
    arch::IrqGuard guard;
    g_state = State::Failed;
    g_failed_ns = clock::monotonic_ns();
    g_reason = why;
    restore_owner_priority();
    // Whatever waits is answered: staged groups will never be written.
    for (Ack& a : g_acks) {
        if (!a.used)
            continue;
        sched::wake_one(*a.wq, -static_cast<int64_t>(ktl::Error::IoError));
        if (a.heap)
            kheap::free(a.heap);
        a = Ack {};
    }
    g_staged = 0;
    g_reserved = 0;
    sched::wake_all(g_ready_waiters, 0);
    wake_listeners(); // the tickets they hold will never be durable now
}

void set_space_waker(void (*wake)()) { g_space_waker = wake; }

namespace {
void request_checkpoint_locked() {
    if (g_checkpoint_requested)
        return;
    g_checkpoint_requested = true;
    sched::wake_one(g_taker, 0); // the storage task may be waiting for records: it looks again
}
} // namespace

void request_checkpoint() {
    arch::IrqGuard guard;
    request_checkpoint_locked();
}

void note_import() {
    arch::IrqGuard guard;
    g_import_ticket = kCheckpointTicket | (g_checkpoints_cut + 1);
    request_checkpoint_locked();
}

uint64_t take_import_ticket() {
    const uint64_t t = g_import_ticket;
    g_import_ticket = 0;
    return t;
}

int64_t checkpoint_step(CheckpointStep step, int64_t status, uint64_t log_free) {
    arch::IrqGuard guard;
    switch (step) {
    case CheckpointStep::Query: return g_checkpoint_requested ? 1 : 0;
    case CheckpointStep::Begin:
        if (g_state != State::Ready)
            return -static_cast<int64_t>(ktl::Error::IoError);
        g_barrier = true;
        g_checkpoint_requested = false;
        return 0;
    case CheckpointStep::Quiesced:
        // Every logged write that got room has staged and been written: memory equals the log.
        return g_reserved == 0 && g_staged_records == g_staged_audit && g_inflight_ticket == 0 ? 1 : 0;
    case CheckpointStep::Cut: ++g_checkpoints_cut; return static_cast<int64_t>(g_checkpoints_cut);
    case CheckpointStep::Hold: {
        // From here the trail's new records wait for the new log. Those staged now are in the
        // region the checkpoint copies, but they stay staged (their waiters with them) until Done
        // says the checkpoint was written: one that found no room, or failed, holds none of them.
        g_hold = true;
        g_held = Held { g_staged, g_staged_records, g_staged_audit, g_staged_log_bytes, g_staging_ticket };
        ++g_staging_ticket;
        return static_cast<int64_t>(g_audit_total);
    }
    case CheckpointStep::Done:
        g_barrier = false;
        if (g_hold)
            release_held(status == 0);
        g_hold = false;
        if (status < 0) {
            fail("a checkpoint could not be written: durable collections are read-only until a restart");
            return 0;
        }
        if (status == 1) // nothing was wrong, but the checkpoint area was too small: the log stays
            g_checkpoint_hopeless = true;
        else {
            g_checkpoint_hopeless = false;
            g_stats.log_free = log_free;
            ++g_stats.checkpoints;
        }
        settle(kCheckpointTicket | g_checkpoints_cut, status == 1 ? -static_cast<int64_t>(ktl::Error::NoSpace) : 0);
        if (g_space_waker)
            g_space_waker();
        if (g_staged > 0)
            sched::wake_one(g_taker, 0);
        return 0;
    }
    return -static_cast<int64_t>(ktl::Error::InvalidArgs);
}

bool checkpoint_in_progress() { return g_barrier; }

uint64_t audit_total() { return g_audit_total; }

void set_audit_region(const void* region) { g_audit_region = region; }
bool is_audit_region(const void* region) { return region && region == g_audit_region; }

void stage_audit(const void* record, size_t len) {
    arch::IrqGuard guard;
    if (g_state != State::Ready && !(g_state == State::Recovering && g_audit_ready)) {
        ++g_audit_total;
        return; // no disk, or the storage task putting back these very records
    }
    ++g_audit_total; // (before any refusal: it counts the region's records, disk or not)
    if (len == 0 || len > storage::kMaxAuditRecord || reserve_impl(len, true) != ktl::Error::None) {
        ++g_stats.audit_lost;
        return;
    }
    uint64_t ticket = 0;
    std::span<std::byte> out = stage(storage::RecordType::Audit, len, len, ticket, true);
    if (out.empty()) {
        ++g_stats.audit_lost;
        return;
    }
    std::memcpy(out.data(), record, len);
    ++g_stats.audit_staged;
    ++g_staged_audit;
}

ipc::Outcome sync(uint64_t since_ns) {
    arch::IrqGuard guard;
    // Failed since the call began: what it staged (answered at staging, abi::kTaskAckStaged) may
    // never reach the disk, and the change it is about to acknowledge is not safe.
    if (g_state == State::Failed)
        return { false, g_failed_ns >= since_ns ? -static_cast<int64_t>(ktl::Error::IoError) : 0 };
    if (g_state != State::Ready)
        return { false, 0 };
    const uint64_t ticket = g_staged > 0 ? g_staging_ticket : g_inflight_ticket;
    if (ticket == 0)
        return { false, 0 }; // nothing staged or in flight: all of it is durable
    if (g_staged > 0)
        wake_taker();
    return wait(ticket, 0);
}

int64_t barrier(uint64_t since_ns) {
    arch::IrqGuard guard;
    if (g_state == State::Failed)
        return g_failed_ns >= since_ns ? -static_cast<int64_t>(ktl::Error::IoError) : 0;
    if (g_state != State::Ready)
        return 0;
    // Only the records a checkpoint holds are staged: they become durable with it (Done), under
    // their own ticket; no group will carry the staging ticket if nothing else is staged by then.
    const bool only_held = g_hold && g_staged == g_held.bytes;
    const uint64_t ticket = g_staged == 0 ? g_inflight_ticket : only_held ? g_held.ticket : g_staging_ticket;
    if (ticket == 0 || ticket <= g_durable_upto)
        return 0;
    if (g_staged > 0 && !only_held)
        wake_taker();
    if (ticket > g_barrier_max)
        g_barrier_max = ticket;
    if (ticket == g_staging_ticket)
        ++g_barriers_staged;
    else if (ticket == g_inflight_ticket)
        ++g_barriers_inflight;
    return static_cast<int64_t>(ticket);
}

int64_t durable(uint64_t ticket) {
    arch::IrqGuard guard;
    if (ticket <= g_durable_upto)
        return 1;
    if (g_state == State::Failed)
        return -static_cast<int64_t>(ktl::Error::IoError);
    // (A ticket no barrier could have handed out yet is a caller's mistake.)
    return ticket <= g_staging_ticket ? 0 : -static_cast<int64_t>(ktl::Error::InvalidArgs);
}

void add_commit_listener(void (*wake)()) {
    arch::IrqGuard guard;
    for (auto& l : g_commit_listeners)
        if (!l || l == wake) {
            l = wake;
            return;
        }
}

void note_commit_time(uint64_t ns) {
    arch::IrqGuard guard;
    g_stats.last_commit_ns = ns;
    g_stats.commit_ns_total += ns;
}

Stats stats() {
    arch::IrqGuard guard;
    Stats s = g_stats;
    s.state = g_state;
    s.staged_bytes = static_cast<uint32_t>(g_staged);
    uint32_t acks = 0;
    for (const Ack& a : g_acks)
        acks += a.used ? 1 : 0;
    s.pending_acks = acks;
    return s;
}

} // namespace journal
