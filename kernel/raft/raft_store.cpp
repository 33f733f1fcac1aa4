#include "raft_store.h"

#include "../mm/kheap.h"
#include "../storage/journal.h"

#include <cstring>

#include <raft/log_image.h>

namespace raftstore {
namespace {

struct KernelMemory final : raftlog::Memory {
    void* alloc(size_t bytes) override {
        auto mem = kheap::alloc(bytes);
        return mem ? *mem : nullptr;
    }
    void free(void* p) override { kheap::free(p); }
};

KernelMemory g_memory;
} // namespace

raftlog::Memory& kernel_memory() { return g_memory; }

namespace {
raftlog::Images g_images(g_memory);
uint64_t g_records = 0;
// A record recovery gave back was refused: what the groups hold is not what their members wrote,
// so no member may start on it (read fails) and nothing more is written (fail closed).
bool g_refused = false;
// A checkpoint's stream being put back (restore()).
std::byte* g_restore = nullptr;
uint64_t g_restore_total = 0, g_restore_have = 0;

void drop_restore() {
    if (g_restore)
        kheap::free(g_restore);
    g_restore = nullptr;
    g_restore_total = g_restore_have = 0;
}

} // namespace

Written write(const sched::Task* caller, raftlog::Kind kind, std::span<const std::byte> payload) {
    if (payload.empty() || payload.size() > storage::kMaxRaftRecord)
        return { ktl::Error::InvalidArgs, 0 };
    if (g_refused)
        return { ktl::Error::IoError, 0 };
    // Records recovery gives back, and every record on a node without a disk: memory only.
    const bool replaying = journal::replaying_for(caller);
    if (replaying || journal::state() == journal::State::Off) {
        const ktl::Error e = g_images.apply(kind, payload);
        if (e == ktl::Error::None)
            ++g_records;
        else if (replaying)
            g_refused = true;
        return { e, 0 };
    }
    // Applied only once there is room to log it, and logged only once applied: what the disk
    // will say and what this node holds never differ.
    const ktl::Error room = journal::reserve_raft(payload.size());
    if (room != ktl::Error::None)
        return { room, 0 };
    const ktl::Error e = g_images.apply(kind, payload);
    if (e != ktl::Error::None) {
        journal::unreserve(payload.size());
        return { e, 0 };
    }
    ++g_records;
    uint64_t ticket = 0;
    std::span<std::byte> out = journal::stage(storage::raft_record_type(static_cast<uint8_t>(kind)), payload.size(),
                                              payload.size(), ticket);
    if (out.empty()) // the journal failed meanwhile: this node is ahead of its disk, and says so
        return { ktl::Error::IoError, 0 };
    std::memcpy(out.data(), payload.data(), payload.size());
    return { ktl::Error::None, ticket };
}

int64_t read(uint64_t group, std::span<std::byte> out, uint64_t offset) {
    if (g_refused)
        return -static_cast<int64_t>(ktl::Error::Corrupt);
    if (out.empty())
        return g_images.stream_bytes(group);
    return g_images.stream_copy(group, out, offset);
}

ktl::Error restore(std::span<const std::byte> piece, uint64_t offset, uint64_t total) {
    if (offset == 0) {
        drop_restore();
        if (total == 0 || total > kMaxRestore)
            return ktl::Error::InvalidArgs;
        auto mem = kheap::alloc(total);
        if (!mem)
            return ktl::Error::NoMemory;
        g_restore = static_cast<std::byte*>(*mem);
        g_restore_total = total;
    }
    if (!g_restore || total != g_restore_total || offset != g_restore_have || piece.size() > total - offset) {
        drop_restore();
        return ktl::Error::InvalidArgs;
    }
    std::memcpy(g_restore + offset, piece.data(), piece.size());
    g_restore_have += piece.size();
    if (g_restore_have < g_restore_total)
        return ktl::Error::None;
    // A damaged stream leaves nothing behind: the groups are as the checkpoint found them or empty.
    ktl::Error e = g_images.apply_stream({ g_restore, g_restore_total });
    if (e != ktl::Error::None) {
        g_images.clear();
        g_refused = true;
    }
    drop_restore();
    return e;
}

Stats stats() {
    Stats s {};
    s.records = g_records;
    s.groups = static_cast<uint32_t>(g_images.groups());
    s.entries = g_images.entries();
    return s;
}

} // namespace raftstore
