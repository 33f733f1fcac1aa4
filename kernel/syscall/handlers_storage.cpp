// Storage system calls: the disk (the storage task's alone), the journal's hand-over between the
// store and the storage task, and the state everyone may read.
#include "../dev/disk.h"
#include "../storage/journal.h"
#include "../storage/storage_info.h"
#include "../vector/service.h"
#include "../vector/store.h"
#include "../arch/aarch64/cpu.h"
#include "buffers.h"
#include "handlers.h"

#include <ktl/utf8.h>

namespace handlers {
namespace {

int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }
dev::Disk& disk_of(const kcap::Resolved& o) { return *static_cast<dev::Disk*>(o.object); }

bool transfer_ok(uint64_t len) { return len > 0 && len % dev::kDiskSector == 0 && len <= 64 * 1024; }

// journal_open's reason codes: static text, so the kernel never keeps a caller's string.
const char* reason_text(uint64_t code) {
    switch (code) {
    case 1: return "the disk holds something else (no Basalt superblock): attach an empty image or start fresh";
    case 2: return "the log is damaged in the middle: later writes were not replayed";
    case 3: return "the disk could not be read";
    case 4: return "a logged change could not be replayed";
    case 5: return "the disk is read-only";
    case 6: return "the disk is too small (8 MiB at least)";
    case 7: return "the disk is smaller than its superblock says (a truncated image?)";
    case 8: return "the checkpoint is damaged: nothing was replayed";
    case 9: return "the log is newer than the superblock (a damaged superblock copy named a checkpoint that cannot be found): nothing was replayed or overwritten";
    default: return "recovery failed";
    }
}

} // namespace

int64_t disk_info(arch::TrapFrame& f, const kcap::Resolved& o) {
    if (!buffers::writable(f.x[1], sizeof(dev::DiskInfo)))
        return err(ktl::Error::InvalidArgs);
    *reinterpret_cast<dev::DiskInfo*>(f.x[1]) = disk_of(o).info();
    return 0;
}

int64_t disk_read(arch::TrapFrame& f, const kcap::Resolved& o) {
    if (!transfer_ok(f.x[3]) || !buffers::writable(f.x[2], f.x[3]))
        return err(ktl::Error::InvalidArgs);
    return finish(disk_of(o).read(f.x[1], reinterpret_cast<void*>(f.x[2]), static_cast<uint32_t>(f.x[3]),
                                  deadline_after(f.x[4])));
}

int64_t disk_write(arch::TrapFrame& f, const kcap::Resolved& o) {
    if (!transfer_ok(f.x[3]) || !buffers::readable(f.x[2], f.x[3]))
        return err(ktl::Error::InvalidArgs);
    return finish(disk_of(o).write(f.x[1], reinterpret_cast<const void*>(f.x[2]), static_cast<uint32_t>(f.x[3]),
                                   deadline_after(f.x[4])));
}

int64_t disk_flush(arch::TrapFrame& f, const kcap::Resolved& o) { return finish(disk_of(o).flush(deadline_after(f.x[1]))); }

int64_t journal_take(arch::TrapFrame& f, const kcap::Resolved&) {
    if (f.x[2] < journal::kStagingBytes || !buffers::writable(f.x[1], journal::kStagingBytes, journal::kStagingBytes))
        return err(ktl::Error::InvalidArgs);
    return finish(journal::take(reinterpret_cast<std::byte*>(f.x[1]), journal::kStagingBytes, deadline_after(f.x[3])));
}

int64_t journal_done(arch::TrapFrame& f, const kcap::Resolved&) {
    journal::done(static_cast<int64_t>(f.x[1]), f.x[2]);
    return 0;
}

int64_t journal_open(arch::TrapFrame& f, const kcap::Resolved&) {
    if (static_cast<int64_t>(f.x[1]) < 0)
        journal::fail(reason_text(f.x[3]));
    else if (f.x[1] == 1)
        journal::audit_ready(f.x[2]);
    else
        journal::open(f.x[2]);
    return 0;
}

int64_t storage_wait(arch::TrapFrame&, const kcap::Resolved&) { return finish(journal::wait_ready()); }

int64_t journal_checkpoint(arch::TrapFrame& f, const kcap::Resolved&) {
    if (f.x[1] > static_cast<uint64_t>(journal::CheckpointStep::Done))
        return err(ktl::Error::InvalidArgs);
    const auto step = static_cast<journal::CheckpointStep>(f.x[1]);
    if (step == journal::CheckpointStep::Cut) {
        arch::IrqGuard guard; // the store's table is shared
        vector::checkpoint_cut();
        return journal::checkpoint_step(step, 0, 0);
    }
    if (step == journal::CheckpointStep::Done) {
        arch::IrqGuard guard;
        vector::checkpoint_end(f.x[2] == 0);
        int64_t r = journal::checkpoint_step(step, static_cast<int64_t>(f.x[2]), f.x[3]);
        vector::kick(); // writes parked for the checkpoint may run now
        return r;
    }
    return journal::checkpoint_step(step, static_cast<int64_t>(f.x[2]), f.x[3]);
}

int64_t storage_sync(arch::TrapFrame&, const kcap::Resolved&) { return finish(journal::sync()); }

int64_t storage_info(arch::TrapFrame& f, const kcap::Resolved&) {
    if (!buffers::writable(f.x[1], sizeof(storage_info::StorageInfo)))
        return err(ktl::Error::InvalidArgs);
    storage_info::StorageInfo s {};
    journal::Stats j = journal::stats();
    const storage_info::Recovered& r = storage_info::recovered();
    s.state = static_cast<uint8_t>(j.state);
    s.commits = j.commits;
    s.records = j.records;
    s.bytes = j.bytes;
    s.waiters_max = j.waiters_max;
    s.refused_full = j.refused_full;
    s.last_commit_ns = j.last_commit_ns;
    s.commit_ns_total = j.commit_ns_total;
    s.log_free = j.log_free;
    s.staged_bytes = j.staged_bytes;
    s.pending_acks = j.pending_acks;
    s.audit_staged = j.audit_staged;
    s.checkpoints = j.checkpoints;
    s.checkpoint_ms = r.last_checkpoint_ms;
    s.checkpoint_bytes = r.last_checkpoint_bytes;
    s.audit_lost = j.audit_lost;
    s.recovered_audit = r.audit_records;
    s.recovered_checkpoint_bytes = r.checkpoint_bytes;
    s.recovery_progress = r.progress_records;
    s.log_bytes = r.log_bytes;
    s.recovered_records = r.records;
    s.recovered_commits = r.commits;
    s.recovery_ms = r.ms;
    s.damaged = r.damaged;
    s.torn_tail = r.torn_tail;
    s.formatted = r.formatted;
    s.superblock_copy_damaged = r.copy_damaged;
    s.newer_checkpoint = r.newer_checkpoint;
    if (dev::Disk* d = dev::disk()) {
        dev::DiskInfo di = d->info();
        s.has_disk = 1;
        s.can_flush = (di.flags & dev::kDiskCanFlush) != 0;
        s.block_size = di.block_size;
        s.disk_bytes = di.bytes;
        s.reads = di.reads;
        s.writes = di.writes;
        s.flushes = di.flushes;
        s.errors = di.errors;
        s.bytes_read = di.bytes_read;
        s.bytes_written = di.bytes_written;
    }
    ktl::utf8_copy(s.reason, journal::reason());
    *reinterpret_cast<storage_info::StorageInfo*>(f.x[1]) = s;
    return 0;
}

} // namespace handlers
