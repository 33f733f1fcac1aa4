#pragma once
// The disk as a kernel object (capability type Disk): the storage task, its only holder, reads,
// writes and flushes it through system calls. Each call starts one transfer in a slot of the
// driver's and blocks the caller until the interrupt reports it done (or its deadline passes: the
// slot then finishes into the driver's own buffer, never into memory the caller got back).
#include <cstdint>

#include <abi/storage.h>

#include "../ipc/sync.h"

namespace virtio {
class VirtioBlk;
}

namespace dev {

// Layout and constants shared with the storage task (abi/storage.h).
using abi::DiskInfo;
using abi::kDiskCanFlush;
using abi::kDiskReadOnly;
using abi::kDiskSector;

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
