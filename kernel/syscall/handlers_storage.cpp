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
    case 9:
        return "the log is newer than the superblock (a damaged superblock copy named a checkpoint that cannot be found): nothing was replayed or overwritten";
    default: return "recovery failed";
    }
}

} // namespace

int64_t disk_info(const kcap::Resolved& o, Cap, dev::DiskInfo* out) {
    if (!buffers::writable(out, sizeof(dev::DiskInfo)))
        return err(ktl::Error::InvalidArgs);
    *out = disk_of(o).info();
    return 0;
}

int64_t disk_read(const kcap::Resolved& o, Cap, uint64_t sector, void* out, uint64_t len, uint64_t timeout_ns) {
    if (!transfer_ok(len) || !buffers::writable(out, len))
        return err(ktl::Error::InvalidArgs);
    return finish(disk_of(o).read(sector, out, static_cast<uint32_t>(len), deadline_after(timeout_ns)));
}

int64_t disk_write(const kcap::Resolved& o, Cap, uint64_t sector, const void* data, uint64_t len, uint64_t timeout_ns) {
    if (!transfer_ok(len) || !buffers::readable(data, len))
        return err(ktl::Error::InvalidArgs);
    return finish(disk_of(o).write(sector, data, static_cast<uint32_t>(len), deadline_after(timeout_ns)));
}

int64_t disk_flush(const kcap::Resolved& o, Cap, uint64_t timeout_ns) {
    return finish(disk_of(o).flush(deadline_after(timeout_ns)));
}

int64_t journal_take(const kcap::Resolved&, Cap, void* out, uint64_t capacity, uint64_t timeout_ns) {
    if (capacity < journal::kStagingBytes || !buffers::writable(out, journal::kStagingBytes, journal::kStagingBytes))
        return err(ktl::Error::InvalidArgs);
    return finish(journal::take(static_cast<std::byte*>(out), journal::kStagingBytes, deadline_after(timeout_ns)));
}

int64_t journal_done(const kcap::Resolved&, Cap, int64_t status, uint64_t log_free) {
    journal::done(status, log_free);
    return 0;
}

int64_t journal_open(const kcap::Resolved&, Cap, int64_t state, uint64_t log_free, uint64_t reason) {
    if (state < 0)
        journal::fail(reason_text(reason));
    else if (state == 1)
        journal::audit_ready(log_free);
    else
        journal::open(log_free);
    if (state != 1)
        vector::kick(); // recovery is over: the vectors it stored unlinked are linked in the background
    return 0;
}

int64_t storage_wait(const kcap::Resolved&) { return finish(journal::wait_ready()); }

int64_t journal_checkpoint(const kcap::Resolved&, Cap, uint64_t step_number, int64_t status, uint64_t log_free) {
    if (step_number > static_cast<uint64_t>(journal::CheckpointStep::Done))
        return err(ktl::Error::InvalidArgs);
    const auto step = static_cast<journal::CheckpointStep>(step_number);
    if (step == journal::CheckpointStep::Cut) {
        arch::IrqGuard guard; // the store's table is shared
        vector::checkpoint_cut();
        return journal::checkpoint_step(step, 0, 0);
    }
    if (step == journal::CheckpointStep::Done) {
        arch::IrqGuard guard;
        vector::checkpoint_end(status == 0);
        int64_t r = journal::checkpoint_step(step, status, log_free);
        vector::kick(); // writes parked for the checkpoint may run now
        return r;
    }
    return journal::checkpoint_step(step, status, log_free);
}

int64_t storage_sync(const kcap::Resolved&, uint64_t since_ns) { return finish(journal::sync(since_ns)); }

int64_t storage_barrier(const kcap::Resolved&, uint64_t since_ns) { return journal::barrier(since_ns); }

int64_t storage_durable(const kcap::Resolved&, uint64_t ticket) { return journal::durable(ticket); }

int64_t storage_info(const kcap::Resolved&, Cap, storage_info::StorageInfo* out) {
    if (!buffers::writable(out, sizeof(storage_info::StorageInfo)))
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
    *out = s;
    return 0;
}

} // namespace handlers
