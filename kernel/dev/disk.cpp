#include "disk.h"

#include "../arch/aarch64/cpu.h"
#include "../sched/scheduler.h"

#include <drivers/virtio/virtio_blk.h>

#include <cstring>

namespace dev {
namespace {

Disk* g_disk = nullptr;
using Blk = virtio::VirtioBlk;
static_assert(Blk::kSlots == 16, "Disk::m_waiters has one waiter per driver slot");

int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }

} // namespace

Disk* disk() { return g_disk; }
void set_disk(Disk* d) { g_disk = d; }

Disk::Disk(virtio::VirtioBlk* blk) : m_blk(blk) {
    blk->set_completion(
        [](void* self, uint16_t slot, ktl::Error e) {
        static_cast<Disk*>(self)->on_complete(slot, e == ktl::Error::None ? 0 : err(e));
        },
        this);
}

DiskInfo Disk::info() const {
    Blk::Stats s = m_blk->stats();
    DiskInfo d {};
    d.bytes = m_blk->capacity_bytes();
    d.block_size = m_blk->block_size();
    d.flags = (m_blk->can_flush() ? kDiskCanFlush : 0) | (m_blk->read_only() ? kDiskReadOnly : 0);
    d.reads = s.reads;
    d.writes = s.writes;
    d.flushes = s.flushes;
    d.errors = s.errors;
    d.irqs = s.irqs;
    d.rejected = s.rejected;
    d.bytes_read = s.bytes_read;
    d.bytes_written = s.bytes_written;
    d.max_transfer = Blk::kMaxTransfer;
    d.in_flight = s.in_flight;
    return d;
}

ipc::Outcome Disk::start(int op, uint64_t sector, void* out, const void* data, uint32_t len, uint64_t deadline_ns) {
    arch::IrqGuard guard; // the interrupt handler shares the slots
    int32_t slot = m_blk->acquire();
    if (slot < 0)
        return { false, err(ktl::Error::WouldBlock) }; // every slot in flight (abandoned ones included)
    const auto s = static_cast<uint16_t>(slot);
    if (data)
        std::memcpy(m_blk->buffer(s), data, len);
    if (auto r = m_blk->submit(s, static_cast<Blk::Op>(op), sector, len); !r) {
        m_blk->release(s);
        return { false, err(r.error()) };
    }
    m_waiters[s].out = out;
    m_waiters[s].len = len;
    sched::block_current(m_waiters[s].queue, deadline_ns);
    return { true, 0 };
}

ipc::Outcome Disk::read(uint64_t sector, void* out, uint32_t len, uint64_t deadline_ns) {
    return start(static_cast<int>(Blk::Op::Read), sector, out, nullptr, len, deadline_ns);
}

ipc::Outcome Disk::write(uint64_t sector, const void* data, uint32_t len, uint64_t deadline_ns) {
    return start(static_cast<int>(Blk::Op::Write), sector, nullptr, data, len, deadline_ns);
}

ipc::Outcome Disk::flush(uint64_t deadline_ns) {
    return start(static_cast<int>(Blk::Op::Flush), 0, nullptr, nullptr, 0, deadline_ns);
}

void Disk::on_complete(uint16_t slot, int64_t result) {
    if (slot >= Blk::kSlots)
        return;
    Waiter& w = m_waiters[slot];
    // Nobody waits any more (the deadline passed): the transfer ends in the driver's buffer.
    if (!w.queue.head)
        return;
    if (result == 0 && w.out)
        std::memcpy(w.out, m_blk->buffer(slot), w.len); // the reader is blocked: its buffer is still its own
    w.out = nullptr;
    sched::wake_one(w.queue, result == 0 ? static_cast<int64_t>(w.len) : result);
}

} // namespace dev
