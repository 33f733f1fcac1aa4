#include "fed_desk.h"

#include "../arch/aarch64/cpu.h"
#include "../clock.h"
#include "../ipc/sync.h"
#include "../mm/kheap.h"
#include "../sched/scheduler.h"
#include "cluster_service.h"

#include <cstring>

namespace clusterd::fed {
namespace {

// A result nobody fetched (its caller gone) is given back after this long: past the longest
// deadline and the tool's margin.
constexpr uint64_t kUnclaimedNs = 12'000'000'000ull;
constexpr uint32_t kMinDeadlineMs = 50, kMaxDeadlineMs = 8000;
constexpr uint64_t kWaitNs = 100'000'000; // one fed_result waits this long at most

enum class State : uint8_t { Free, Queued, Taken, Done };
struct Slot {
    State state = State::Free;
    uint32_t id = 0;
    uint32_t owner = 0; // the task that asked: only it fetches the result
    uint64_t since_ns = 0;
    cluster_abi::FedQuery query {};
    void* input = nullptr;                 // kheap: what the query carries (input_bytes)
    cluster_abi::FedResult* out = nullptr; // kheap: once done
    sched::WaitQueue waiter;               // its caller, while it waits for the result
};
Slot g_slots[kSlots];
uint32_t g_next_id = 0;

void release(Slot& s) {
    sched::wake_all(s.waiter, 0); // (asking again, it finds nothing: -NotFound)
    if (s.input)
        kheap::free(s.input);
    if (s.out)
        kheap::free(s.out);
    s = Slot {};
}

int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }

} // namespace

size_t input_bytes(const cluster_abi::FedQuery& q, bool& valid) {
    valid = false;
    const bool extras = q.filter_count != 0 || q.flags != 0;
    if (q.mode > cluster_abi::kFedVoterLocal || q.op > cluster_abi::kFedStats ||
        (q.mode == cluster_abi::kFedEveryNode && (q.op != cluster_abi::kFedSearch || extras)) ||
        (q.op != cluster_abi::kFedSearch && extras) || (q.flags & ~cluster_abi::kFedWithProvenance) != 0 ||
        q.filter_count > cluster_abi::kFedMaxFilter)
        return 0;
    switch (q.op) {
    case cluster_abi::kFedSearch: {
        const size_t bytes = size_t(q.dim) * sizeof(float) + size_t(q.filter_count) * sizeof(uint64_t);
        valid = q.dim != 0 && q.dim <= kMaxDim && q.k != 0 && q.k <= cluster_abi::kFedMaxK &&
                bytes <= cluster_abi::kFedMaxInput;
        return valid ? bytes : 0;
    }
    case cluster_abi::kFedGet:
        valid = q.dim == 0 && q.k != 0 && q.k <= cluster_abi::kFedMaxGetIds;
        return valid ? q.k * sizeof(uint64_t) : 0;
    default: valid = q.dim == 0 && q.k == 0; return 0;
    }
}

int64_t submit(const cluster_abi::FedQuery& query, const void* input, const void* filter) {
    bool valid = false;
    const size_t bytes = input_bytes(query, valid);
    if (!valid)
        return err(ktl::Error::InvalidArgs);
    // The kernel's, not the caller's: a caller that ends does not take the query with it.
    auto mem = kheap::alloc_for(kheap::Owner::Kernel, bytes ? bytes : sizeof(uint64_t));
    if (!mem)
        return err(ktl::Error::NoMemory);
    auto* copy = static_cast<uint8_t*>(*mem);
    const size_t filter_bytes = size_t(query.filter_count) * sizeof(uint64_t);
    if (bytes > filter_bytes)
        std::memcpy(copy, input, bytes - filter_bytes);
    if (filter_bytes)
        std::memcpy(copy + bytes - filter_bytes, filter, filter_bytes);
    Slot* slot = nullptr;
    {
        arch::IrqGuard guard;
        const uint64_t now = clock::monotonic_ns();
        for (auto& s : g_slots)
            if (s.state == State::Done && now - s.since_ns > kUnclaimedNs)
                release(s);
        for (auto& s : g_slots)
            if (s.state == State::Free) {
                slot = &s;
                break;
            }
        if (slot) {
            slot->state = State::Queued;
            slot->id = ++g_next_id ? g_next_id : ++g_next_id;
            slot->since_ns = now;
            slot->owner = sched::current()->id;
            slot->query = query;
            slot->query.name[sizeof slot->query.name - 1] = '\0';
            const uint32_t ms = query.deadline_ms ? query.deadline_ms : 2000;
            slot->query.deadline_ms = ms < kMinDeadlineMs ? kMinDeadlineMs : ms > kMaxDeadlineMs ? kMaxDeadlineMs : ms;
            slot->input = copy;
        }
    }
    if (!slot) {
        kheap::free(copy);
        return err(ktl::Error::WouldBlock);
    }
    poke(); // the cluster task may be waiting for datagrams
    return slot->id;
}

ipc::Outcome result(uint32_t id, cluster_abi::FedResult* out) {
    arch::IrqGuard guard;
    for (auto& s : g_slots)
        if (s.state != State::Free && s.id == id && s.owner == sched::current()->id) {
            if (s.state != State::Done) {
                // Woken (0) when it is done, or -TimedOut: the caller asks again either way.
                sched::block_current(s.waiter, clock::monotonic_ns() + kWaitNs);
                return { true, 0 };
            }
            std::memcpy(out, s.out, sizeof *out);
            release(s);
            return { false, 1 };
        }
    return { false, err(ktl::Error::NotFound) };
}

uint32_t take(cluster_abi::FedQuery& query, void* input) {
    arch::IrqGuard guard;
    Slot* oldest = nullptr;
    for (auto& s : g_slots)
        if (s.state == State::Queued && (!oldest || s.id < oldest->id))
            oldest = &s;
    if (!oldest)
        return 0;
    query = oldest->query;
    bool valid = false;
    std::memcpy(input, oldest->input, input_bytes(oldest->query, valid));
    oldest->state = State::Taken;
    return oldest->id;
}

void complete(uint32_t id, const cluster_abi::FedResult& result) {
    auto mem = kheap::alloc_for(kheap::Owner::Kernel, sizeof result);
    arch::IrqGuard guard;
    for (auto& s : g_slots)
        if (s.state == State::Taken && s.id == id) {
            if (!mem) { // (nothing to give: the caller learns it from an empty, partial answer)
                release(s);
                return;
            }
            s.out = static_cast<cluster_abi::FedResult*>(*mem);
            std::memcpy(s.out, &result, sizeof result);
            s.state = State::Done;
            s.since_ns = clock::monotonic_ns();
            sched::wake_all(s.waiter, 0);
            return;
        }
    if (mem)
        kheap::free(*mem);
}

} // namespace clusterd::fed
