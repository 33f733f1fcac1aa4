#include "journal.h"

#include "../arch/aarch64/cpu.h"
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
alignas(8) std::byte g_staging[kStagingBytes];
size_t g_staged = 0;
size_t g_reserved = 0;
uint64_t g_staged_log_bytes = 0;   // what the staged records will take in the log
uint64_t g_inflight_log_bytes = 0; // ... and those being written now
uint64_t g_staging_ticket = 1;     // the commit that will carry what is staged now
uint64_t g_inflight_ticket = 0;    // the commit being written (0: none)
uint64_t g_inflight_records = 0;
uint64_t g_inflight_bytes = 0;
uint64_t g_staged_records = 0;
sched::WaitQueue g_taker;        // the storage task, waiting for something to write
sched::WaitQueue g_ready_waiters; // tasks waiting for recovery to end
Ack g_acks[kMaxAcks];
void (*g_space_waker)() = nullptr;
const void* g_audit_region = nullptr;
Stats g_stats {};

void unreserve_locked(size_t bytes);

bool log_room(uint64_t extra) {
    const uint64_t committed = g_staged_log_bytes + g_inflight_log_bytes + extra + kLogMargin;
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

} // namespace

void init_off(const char* why) {
    arch::IrqGuard guard;
    g_state = State::Off;
    g_reason = why;
}

void init_recovering(sched::Task* owner) {
    arch::IrqGuard guard;
    g_state = State::Recovering;
    g_reason = "";
    g_owner = owner;
}

State state() { return g_state; }

const char* state_name(State s) {
    switch (s) {
    case State::Off: return "off";
    case State::Recovering: return "recovering";
    case State::Ready: return "ready";
    case State::Failed: return "failed";
    }
    return "unknown";
}

const char* reason() { return g_reason; }

bool replaying() { return g_state == State::Recovering && sched::current() == g_owner; }

bool durable_by_default() { return g_state == State::Ready || replaying(); }

ktl::Error reserve(size_t bytes) {
    arch::IrqGuard guard;
    if (bytes > kMaxRecord)
        return ktl::Error::InvalidArgs;
    if (g_state == State::Failed)
        return ktl::Error::IoError;
    if (g_state != State::Ready)
        return ktl::Error::Unsupported;
    const size_t need = kStagedHeader + ((bytes + 7) & ~size_t(7));
    if (!log_room(bytes + kLogOverhead)) {
        ++g_stats.refused_full;
        return ktl::Error::NoSpace;
    }
    if (g_staged + g_reserved + need > kStagingBytes)
        return ktl::Error::WouldBlock;
    g_reserved += need;
    g_staged_log_bytes += bytes + kLogOverhead;
    return ktl::Error::None;
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

std::span<std::byte> stage(storage::RecordType type, size_t bytes, size_t reserved, uint64_t& ticket) {
    arch::IrqGuard guard;
    unreserve_locked(reserved); // the reservation ends here; the record takes what it really needs
    const size_t padded = (bytes + 7) & ~size_t(7);
    const size_t need = kStagedHeader + padded;
    // The journal failed meanwhile (nothing staged now will be written), or no reservation made
    // this room (a bug): the caller answers with an error instead of waiting for ever.
    if (bytes > reserved || g_state != State::Ready || g_staged + need > kStagingBytes)
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
    sched::wake_one(g_taker, 0);
    return { h + kStagedHeader, bytes };
}

void defer(sched::WaitQueue& wq, int64_t result, void* heap, uint64_t ticket) {
    arch::IrqGuard guard;
    Ack* a = free_ack();
    if (!a) { // cannot happen (the table outsizes every source of waiters); never lose the caller
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
    if (g_state != State::Recovering || sched::current() == g_owner)
        return { false, 0 };
    sched::block_current(g_ready_waiters, 0);
    return { true, 0 };
}

ipc::Outcome take(std::byte* out, size_t cap, uint64_t deadline_ns) {
    arch::IrqGuard guard;
    if (g_inflight_ticket != 0 || cap < kStagingBytes)
        return { false, -static_cast<int64_t>(ktl::Error::InvalidArgs) }; // one group at a time
    if (g_staged == 0) {
        sched::block_current(g_taker, deadline_ns);
        return { true, 0 };
    }
    std::memcpy(out, g_staging, g_staged);
    const size_t n = g_staged;
    g_inflight_ticket = g_staging_ticket++;
    g_inflight_log_bytes = g_staged_log_bytes;
    g_inflight_records = g_staged_records;
    g_inflight_bytes = n;
    g_staged_log_bytes = 0;
    g_staged_records = 0;
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
    uint32_t woken = settle(ticket, 0);
    if (woken > g_stats.waiters_max)
        g_stats.waiters_max = woken;
}

void open(uint64_t log_free) {
    arch::IrqGuard guard;
    g_stats.log_free = log_free;
    if (g_state == State::Recovering)
        g_state = State::Ready;
    sched::wake_all(g_ready_waiters, 0);
}

void fail(const char* why) {
    arch::IrqGuard guard;
    g_state = State::Failed;
    g_reason = why;
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
}

void set_space_waker(void (*wake)()) { g_space_waker = wake; }

void set_audit_region(const void* region) { g_audit_region = region; }
bool is_audit_region(const void* region) { return region && region == g_audit_region; }

void stage_audit(const void* record, size_t len) {
    arch::IrqGuard guard;
    if (g_state != State::Ready)
        return; // no disk (nothing to count), or recovering: the storage task replays these very records
    if (len == 0 || len > storage::kMaxAuditRecord || reserve(len) != ktl::Error::None) {
        ++g_stats.audit_lost;
        return;
    }
    uint64_t ticket = 0;
    std::span<std::byte> out = stage(storage::RecordType::Audit, len, len, ticket);
    if (out.empty()) {
        ++g_stats.audit_lost;
        return;
    }
    std::memcpy(out.data(), record, len);
    ++g_stats.audit_staged;
}

ipc::Outcome sync() {
    arch::IrqGuard guard;
    if (g_state != State::Ready)
        return { false, 0 };
    const uint64_t ticket = g_staged > 0 ? g_staging_ticket : g_inflight_ticket;
    if (ticket == 0)
        return { false, 0 }; // nothing staged or in flight: all of it is durable
    return wait(ticket, 0);
}

void note_commit_time(uint64_t ns) {
    arch::IrqGuard guard;
    g_stats.last_commit_ns = ns;
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
