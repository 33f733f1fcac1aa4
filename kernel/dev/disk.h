#pragma once
// The disk as a kernel object (capability type Disk): the storage task, its only holder, reads,
// writes and flushes it through system calls. Each call starts one transfer in a slot of the
// driver's and blocks the caller until the interrupt reports it done (or its deadline passes: the
// slot then finishes into the driver's own buffer, never into memory the caller got back).
#include <cstdint>

#include "../ipc/sync.h"

namespace virtio {
class VirtioBlk;
}

namespace dev {

// Layout returned by disk_info.
struct DiskInfo {
    uint64_t bytes;
    uint32_t block_size; // the device's preferred unit
    uint32_t flags;      // kDiskCanFlush, kDiskReadOnly
    uint64_t reads, writes, flushes, errors, irqs, rejected;
    uint64_t bytes_read, bytes_written;
    uint32_t max_transfer; // bytes per disk_read / disk_write
    uint32_t in_flight;
};
constexpr uint32_t kDiskCanFlush = 1;
constexpr uint32_t kDiskReadOnly = 2;
constexpr uint32_t kDiskSector = 512; // the unit of disk_read and disk_write addresses and lengths

class Disk {
public:
    explicit Disk(virtio::VirtioBlk* blk);
    DiskInfo info() const;
    ipc::Outcome read(uint64_t sector, void* out, uint32_t len, uint64_t deadline_ns);
    ipc::Outcome write(uint64_t sector, const void* data, uint32_t len, uint64_t deadline_ns);
    ipc::Outcome flush(uint64_t deadline_ns);
    void on_complete(uint16_t slot, int64_t result); // from the interrupt

private:
    ipc::Outcome start(int op, uint64_t sector, void* out, const void* data, uint32_t len, uint64_t deadline_ns);

    struct Waiter {
        sched::WaitQueue queue;
        void* out = nullptr; // a read's destination while its caller waits
        uint32_t len = 0;
    };
    virtio::VirtioBlk* m_blk;
    Waiter m_waiters[16];
};

// The first virtio-blk device, bound at boot (null: none, or `disk=off`).
Disk* disk();
void set_disk(Disk* d);

} // namespace dev
