#include "storage_task.h"

#include "../bootargs.h"
#include "../log.h"
#include "checkpointer.h"
#include "disk_client.h"
#include "journal.h"
#include "storage_info.h"
#include "upsert_batch.h"

#include <abi/sys.h>
#include <ktl/le_bytes.h>
#include <storage/block_device.h>
#include <storage/records.h>
#include <storage/superblock.h>
#include <storage/wal.h>

#include <cstring>

namespace storaged {
namespace {


UpsertBatch g_batch; // the store pass's upserts, gathered (large: not on the task's stack)

// Replays records into the store through its system calls, keeping the collections it has opened.
class Replayer {
public:
    // Recovery reads the log twice: the audit trail's records first (the bridges serve as soon as
    // the trail is back), then the store's changes (the index is rebuilt: the long part).
    enum class Pass : uint8_t { Audit, Store };
    // The audit pass also gives the Raft groups' records back (raft: the RaftLog capability): a
    // consensus member may start as soon as the trail is back.
    Replayer(uint32_t store, uint32_t audit, uint32_t raft, Pass pass)
        : m_store(store), m_audit(audit), m_raft(raft), m_pass(pass) {}

    void apply(const storage::LogRecord& rec) {
        auto d = storage::decode_record(rec.type, rec.payload);
        if (!d) {
            failed(rec.seq, "undecodable record", d.error());
            return;
        }
        const bool early = d->type == storage::RecordType::Audit || storage::is_raft_record(d->type);
        if (early != (m_pass == Pass::Audit))
            return; // the other pass's
        if (d->type == storage::RecordType::Upsert && UpsertBatch::fits(d->upsert)) {
            gather(rec.seq, *d);
            return;
        }
        flush(); // every other change comes after the upserts before it
        int64_t r = 0;
        switch (d->type) {
        case storage::RecordType::Audit:
            r = m_audit == ~0u ? 0 : sys::region_append(m_audit, d->audit.data(), d->audit.size());
            if (r >= 0 && m_audit != ~0u)
                ++m_audit_records;
            if (r < 0) { // the trail's region refused it (a record size of another build): not fatal
                ++m_audit_refused;
                r = 0;
            }
            break;
        case storage::RecordType::RaftTerm:
        case storage::RecordType::RaftAppend:
        case storage::RecordType::RaftTruncate:
        case storage::RecordType::RaftSnapshot:
        case storage::RecordType::RaftForget: {
            r = m_raft == ~0u
                    ? -static_cast<int64_t>(ktl::Error::BadHandle)
                    : sys::raft_write(m_raft, storage::raft_record_kind(d->type), d->raft.data(), d->raft.size());
            if (r >= 0)
                ++m_raft_records;
            break;
        }
        case storage::RecordType::Create: {
            abi::CreateParams p { d->create.dim,          d->create.metric, d->create.m,    d->create.ef_construction,
                                  d->create.max_elements, d->create.max_ef, d->create.flags };
            r = sys::store_create(m_store, d->name.data(), d->name.size(), &p);
            break;
        }
        case storage::RecordType::Drop:
            forget(d->name);
            r = sys::store_drop(m_store, d->name.data(), d->name.size());
            break;
        case storage::RecordType::Upsert: {
            uint32_t dim = 0;
            int64_t slot = open(d->name, &dim);
            // vec_insert reads count x (the collection's dim) floats: a record of another dim
            // (damage that kept its CRC, or a bug) must not make it read past the record.
            if (slot >= 0 && d->upsert.dim != dim)
                slot = -static_cast<int64_t>(ktl::Error::InvalidArgs);
            r = slot < 0 ? slot
                         : sys::vec_insert(static_cast<uint64_t>(slot),
                                           reinterpret_cast<const uint64_t*>(d->upsert.ids), // the record's bytes
                                           reinterpret_cast<const float*>(d->upsert.vectors), d->upsert.count,
                                           d->upsert.provenance);
            if (r >= 0 && static_cast<uint64_t>(r) != d->upsert.count)
                r = -static_cast<int64_t>(ktl::Error::Full);
            break;
        }
        case storage::RecordType::DocUpsert: {
            // The batch as the call gave it (its documents all stored then: all stored again).
            int64_t slot = open(d->name);
            const int64_t want = d->body.size() >= 4 ? static_cast<int64_t>(ktl::get_le<uint32_t>(d->body.data())) : -1;
            r = slot < 0 ? slot : sys::doc_upsert(static_cast<uint64_t>(slot), d->body.data(), d->body.size());
            if (r >= 0 && r != want)
                r = -static_cast<int64_t>(ktl::Error::Full);
            break;
        }
        case storage::RecordType::DocDelete: {
            // Only ids the call really deleted were logged: every one must be there to delete again.
            int64_t slot = open(d->name);
            const int64_t want = d->body.size() >= 4 ? static_cast<int64_t>(ktl::get_le<uint32_t>(d->body.data())) : -1;
            r = slot < 0 ? slot
                         : sys::doc_delete(static_cast<uint64_t>(slot), d->body.data(), d->body.size(), m_missing);
            if (r >= 0 && r != want)
                r = -static_cast<int64_t>(ktl::Error::NotFound);
            break;
        }
        case storage::RecordType::Delete: {
            int64_t slot = open(d->name);
            r = slot < 0 ? slot
                         : sys::vec_delete(static_cast<uint64_t>(slot), ptr(d->delete_ids), d->delete_count, m_missing);
            // Only ids the call really deleted were logged: every one must be there to delete again.
            if (r >= 0 && static_cast<uint64_t>(r) != d->delete_count)
                r = -static_cast<int64_t>(ktl::Error::NotFound);
            break;
        }
        }
        if (r < 0) {
            failed(rec.seq, "record not applied", static_cast<ktl::Error>(-r));
            return;
        }
        ++m_applied;
        // Every record (one store): kernel://status and the calls waiting for the store show how
        // far recovery is, and a record can take a while (up to 64 inserts).
        if (m_pass == Pass::Store)
            storage_info::note_progress(m_applied);
    }

    // Stores the upserts still gathered, then lets go of the collections.
    void close_all() {
        flush();
        for (auto& o : m_open)
            if (o.used)
                sys::cap_delete(o.slot);
    }
    uint64_t applied() const { return m_applied; }
    uint64_t audit_records() const { return m_audit_records; }
    uint64_t audit_refused() const { return m_audit_refused; }
    uint64_t raft_records() const { return m_raft_records; }
    uint64_t errors() const { return m_errors; }

private:
    struct Open {
        bool used;
        uint8_t len;
        char name[65];
        uint32_t slot;
        uint32_t dim;
    };
    static uint64_t ptr(const void* p) { return reinterpret_cast<uint64_t>(p); }

    // An upsert joins the batch (flushed first when it cannot join); checked as applying it would be.
    void gather(uint64_t seq, const storage::DecodedRecord& d) {
        if (!g_batch.accepts(d.name, d.upsert))
            flush(); // before open(): a new collection's slot may take the place of the batch's
        uint32_t dim = 0;
        int64_t slot = open(d.name, &dim);
        // vec_insert reads count x (the collection's dim) floats: a record of another dim
        // (damage that kept its CRC, or a bug) must not make it read past the record.
        if (slot >= 0 && d.upsert.dim != dim)
            slot = -static_cast<int64_t>(ktl::Error::InvalidArgs);
        if (slot < 0) {
            failed(seq, "record not applied", static_cast<ktl::Error>(-slot));
            return;
        }
        g_batch.add(static_cast<uint32_t>(slot), d.name, seq, d.upsert);
    }

    void flush() {
        if (g_batch.empty())
            return;
        g_batch.flush(
            [](void* ctx, uint64_t seq, bool stored, int64_t error) {
            auto& self = *static_cast<Replayer*>(ctx);
            if (!stored) {
                self.failed(seq, "record not applied", static_cast<ktl::Error>(-error));
                return;
            }
            ++self.m_applied;
            storage_info::note_progress(self.m_applied);
            },
            this);
    }

    // The collection's slot (opened once and kept), and its dimension in *dim if asked.
    int64_t open(std::string_view name, uint32_t* dim = nullptr) {
        for (auto& o : m_open)
            if (o.used && std::string_view(o.name, o.len) == name) {
                if (dim)
                    *dim = o.dim;
                return o.slot;
            }
        int64_t slot = sys::store_open(m_store, name.data(), name.size(), abi::kWrite | abi::kRead);
        if (slot < 0)
            return slot;
        abi::VectorStats st {};
        if (sys::vec_stats(static_cast<uint64_t>(slot), &st) < 0) {
            sys::cap_delete(static_cast<uint64_t>(slot));
            return -static_cast<int64_t>(ktl::Error::IoError);
        }
        Open& o = m_open[m_next++ % kOpen];
        if (o.used)
            sys::cap_delete(o.slot);
        o = Open { true, static_cast<uint8_t>(name.size()), {}, static_cast<uint32_t>(slot), st.dim };
        if (dim)
            *dim = st.dim;
        std::memcpy(o.name, name.data(), name.size());
        return slot;
    }

    void forget(std::string_view name) {
        for (auto& o : m_open)
            if (o.used && std::string_view(o.name, o.len) == name) {
                sys::cap_delete(o.slot);
                o.used = false;
            }
    }

    void failed(uint64_t seq, const char* what, ktl::Error e) {
        if (m_errors++ < 8)
            KLOG_ERROR("storage: log record %llu: %s (%s)", static_cast<unsigned long long>(seq), what,
                       ktl::error_name(e));
    }

    static constexpr size_t kOpen = 8;
    bool m_missing[storage::kMaxDeleteIds] = {};
    uint32_t m_store;
    uint32_t m_audit;
    uint32_t m_raft;
    Pass m_pass;
    uint64_t m_raft_records = 0;
    uint64_t m_audit_records = 0;
    uint64_t m_audit_refused = 0;
    Open m_open[kOpen] = {};
    size_t m_next = 0;
    uint64_t m_applied = 0;
    uint64_t m_errors = 0;
};

// The log's buffer holds one commit: a whole staged group and its headers fit, and recovery reads
// each commit into it.
alignas(64) std::byte g_commit[journal::kStagingBytes + 256 * 1024];
alignas(64) std::byte g_group[journal::kStagingBytes];
DiskClient* g_client = nullptr;

enum Reason : uint64_t {
    kForeign = 1,
    kDamaged = 2,
    kUnreadable = 3,
    kReplay = 4,
    kReadOnly = 5,
    kTooSmall = 6,
    kTruncated = 7,
    kCheckpoint = 8,
    kNewerLog = 9,
};

int64_t give_up(uint32_t disk, Reason why) {
    sys::journal_open(disk, static_cast<uint64_t>(-1), 0, why);
    return 0;
}

// Writes a group (the journal's staged records) as one or more commits of the log.
ktl::Result<void> write_group(storage::Wal& wal, size_t bytes, bool& flush_unsupported) {
    for (size_t at = 0; at + journal::kStagedHeader <= bytes;) {
        uint16_t type;
        uint32_t len;
        std::memcpy(&type, g_group + at, 2);
        std::memcpy(&len, g_group + at + 4, 4);
        if (len > journal::kMaxRecord || len > bytes - at - journal::kStagedHeader)
            return ktl::Error::Corrupt; // the kernel staged it; never walk past it anyway
        std::span<const std::byte> payload(g_group + at + journal::kStagedHeader, len);
        auto r = wal.append(type, payload);
        if (!r && r.error() == ktl::Error::Full) { // this commit is full: write it, go on in the next
            if (auto c = wal.commit(); !c && c.error() != ktl::Error::Unsupported)
                return c.error();
            r = wal.append(type, payload);
        }
        if (!r)
            return r.error();
        at += journal::kStagedHeader + ((len + 7) & ~size_t(7));
    }
    auto c = wal.commit();
    if (!c && c.error() == ktl::Error::Unsupported) {
        flush_unsupported = true; // written; the device cannot say more (reported by storage_info)
        return {};
    }
    return c;
}

uint32_t g_disk_cap = ~0u;

// Waits up to `timeout_ns` (0: for ever) for a staged group and writes it; false once the journal
// has failed.
bool serve_once(storage::Wal& wal, uint64_t timeout_ns) {
    int64_t n = sys::journal_take(g_disk_cap, g_group, sizeof g_group, timeout_ns);
    if (n <= 0)
        return true; // nothing staged (woken to look at a checkpoint, or the wait ran out)
    const uint64_t t0 = sys::clock_ns();
    bool flush_unsupported = false;
    auto r = write_group(wal, static_cast<size_t>(n), flush_unsupported);
    if (!r)
        KLOG_ERROR("storage: writing the log failed (%s): durable collections are read-only until a restart",
                   ktl::error_name(r.error()));
    journal::note_commit_time(sys::clock_ns() - t0);
    sys::journal_done(g_disk_cap, r ? 0 : static_cast<uint64_t>(-static_cast<int64_t>(r.error())),
                      wal.free_sectors() * abi::kDiskSector);
    return r.ok();
}

} // namespace

int64_t task_main(void* arg) {
    const auto& caps = *static_cast<const Caps*>(arg);
    abi::DiskInfo info {};
    if (sys::disk_info(caps.disk, &info) < 0)
        return give_up(caps.disk, kUnreadable);
    if (info.flags & abi::kDiskReadOnly) {
        KLOG_ERROR("storage: the disk is read-only: collections live in memory only");
        return give_up(caps.disk, kReadOnly);
    }
    if (info.bytes < kMinDiskBytes) {
        KLOG_ERROR("storage: the disk has %llu bytes, less than the %llu it needs",
                   static_cast<unsigned long long>(info.bytes), static_cast<unsigned long long>(kMinDiskBytes));
        return give_up(caps.disk, kTooSmall);
    }
    static DiskClient client(caps.disk, info.bytes);
    g_client = &client;
    const uint64_t started = sys::clock_ns();
    storage_info::Recovered rec {};

    static Checkpointer checkpointer(client, caps.disk, caps.store, caps.audit, caps.raft);
    std::span<std::byte> sector(g_group, abi::kDiskSector);
    auto sb_read = storage::read_superblock(client, sector);
    storage::Superblock sb;
    if (!sb_read && sb_read.error() == ktl::Error::NotFound) {
        // An empty disk: formatted with an empty log and no checkpoint yet.
        storage::Superblock fresh;
        fresh.epoch = 1;
        fresh.log_first = kLogFirst;
        fresh.log_count = log_sectors_for(client.sectors());
        // Both copies, so that damage to either one later leaves the other.
        auto written = storage::write_superblock(client, storage::Superblock {}, fresh, sector);
        if (written || written.error() == ktl::Error::Unsupported) {
            fresh.generation = written ? *written : 1;
            written = storage::write_superblock(client, fresh, fresh, sector);
        }
        if (!written && written.error() != ktl::Error::Unsupported) {
            KLOG_ERROR("storage: cannot format the disk: %s", ktl::error_name(written.error()));
            return give_up(caps.disk, kUnreadable);
        }
        fresh.generation = written ? *written : 2;
        sb = fresh;
        rec.formatted = true;
        KLOG_INFO("storage: formatted an empty disk of %llu MiB", static_cast<unsigned long long>(info.bytes >> 20));
    } else if (!sb_read) {
        KLOG_ERROR(
            "storage: the disk holds no Basalt superblock (%s): collections live in memory only; start fresh with an empty image",
            ktl::error_name(sb_read.error()));
        return give_up(caps.disk, sb_read.error() == ktl::Error::IoError ? kUnreadable : kForeign);
    } else {
        sb = sb_read->sb;
        rec.copy_damaged = sb_read->copy_damaged;
        if (sb_read->copy_damaged)
            KLOG_WARN("storage: one superblock copy is damaged; the other (generation %llu) is used",
                      static_cast<unsigned long long>(sb.generation));
        if (sb.log_first < 2 || sb.log_first > client.sectors() || sb.log_count == 0 ||
            sb.log_count > client.sectors() - sb.log_first) {
            KLOG_ERROR(
                "storage: the superblock describes a log past the end of this %llu MiB disk (a truncated image?): "
                "collections live in memory only",
                static_cast<unsigned long long>(info.bytes >> 20));
            return give_up(caps.disk, kTruncated);
        }
        // The copy that was lost may have been the newer one, naming a checkpoint written since.
        if (sb_read->copy_damaged && checkpointer.adopt_newer(sb)) {
            rec.newer_checkpoint = true;
            KLOG_WARN("storage: the damaged copy named a newer checkpoint (epoch %u, sector %llu): recovering from it",
                      sb.epoch, static_cast<unsigned long long>(sb.checkpoint_first));
        }
    }
    rec.log_bytes = sb.log_count * abi::kDiskSector;

    // The audit trail first (the last checkpoint's, then the log's), so that the bridges can serve
    // while the store is rebuilt; then the collections the same way.
    auto damaged_checkpoint = [&](ktl::Error e) {
        KLOG_ERROR("storage: the checkpoint at sector %llu is damaged (%s): collections live in memory only",
                   static_cast<unsigned long long>(sb.checkpoint_first), ktl::error_name(e));
        rec.ms = (sys::clock_ns() - started) / 1000000;
        storage_info::set_recovered(rec);
        return give_up(caps.disk, e == ktl::Error::IoError ? kUnreadable : kCheckpoint);
    };
    auto trail = checkpointer.load(sb, storage::PieceKind::Audit);
    if (!trail)
        return damaged_checkpoint(trail.error());
    static storage::Wal wal(client, sb.log_first, sb.log_count, sb.epoch, { g_commit, sizeof g_commit });
    auto groups = checkpointer.load(sb, storage::PieceKind::Raft);
    if (!groups)
        return damaged_checkpoint(groups.error());
    Replayer audit_pass(caps.store, caps.audit, caps.raft, Replayer::Pass::Audit);
    auto first = wal.recover([&](const storage::LogRecord& r) { audit_pass.apply(r); });
    if (!first) {
        KLOG_ERROR("storage: the log could not be read (%s)", ktl::error_name(first.error()));
        return give_up(caps.disk, kUnreadable);
    }
    rec.audit_records = trail->audit_records + audit_pass.audit_records();
    storage_info::set_recovered(rec);
    if (first->newer_epoch) {
        // The log goes on in an epoch the superblock never named and its checkpoint is not to be
        // found: starting this log over would overwrite acknowledged commits (and the checkpoint
        // area), so nothing is written; what the disk says stays there for whoever repairs it.
        KLOG_ERROR("storage: the log is in epoch %u but the superblock names epoch %u (a damaged superblock copy): "
                   "nothing was replayed or overwritten; durable collections are read-only",
                   first->found_epoch, sb.epoch);
        rec.ms = (sys::clock_ns() - started) / 1000000;
        storage_info::set_recovered(rec);
        return give_up(caps.disk, kNewerLog);
    }
    // The bridges serve from here (the store says `recovering`); the audit records they stage
    // meanwhile are counted against the room the log has left.
    sys::journal_open(caps.disk, 1, wal.free_sectors() * abi::kDiskSector, 0);
    auto loaded = checkpointer.load(sb, storage::PieceKind::Collection);
    if (!loaded)
        return damaged_checkpoint(loaded.error());
    rec.checkpoint_bytes = loaded->bytes;
    Replayer replay(caps.store, caps.audit, caps.raft, Replayer::Pass::Store);
    // The same log again: the damage scan past its end is not repeated (nothing was written since).
    auto recovered = wal.recover_again(*first, [&](const storage::LogRecord& r) { replay.apply(r); });
    replay.close_all();
    rec.ms = (sys::clock_ns() - started) / 1000000;
    if (!recovered) {
        KLOG_ERROR("storage: the log could not be read (%s)", ktl::error_name(recovered.error()));
        storage_info::set_recovered(rec);
        return give_up(caps.disk, kUnreadable);
    }
    rec.records = recovered->records;
    if (audit_pass.audit_refused())
        KLOG_WARN("storage: %llu audit records from the log did not fit the trail's region",
                  static_cast<unsigned long long>(audit_pass.audit_refused()));
    rec.commits = recovered->commits;
    rec.damaged = recovered->damaged;
    rec.torn_tail = recovered->torn_tail;
    storage_info::set_recovered(rec);
    KLOG_INFO(
        "storage: recovered a checkpoint of %llu KiB (%u collections) and %llu records in %llu commits in %llu ms "
        "(log %llu MiB, %llu MiB free)%s",
        static_cast<unsigned long long>(loaded->bytes >> 10), loaded->collections,
        static_cast<unsigned long long>(rec.records), static_cast<unsigned long long>(rec.commits),
        static_cast<unsigned long long>(rec.ms), static_cast<unsigned long long>(rec.log_bytes >> 20),
        static_cast<unsigned long long>((wal.free_sectors() * abi::kDiskSector) >> 20),
        recovered->torn_tail ? "; a half-written, unacknowledged group at the end was dropped" : "");
    if (recovered->damaged) {
        KLOG_ERROR(
            "storage: the log is damaged at record %llu while later ones are intact: nothing after it was replayed; "
            "durable collections are read-only",
            static_cast<unsigned long long>(recovered->damaged_seq));
        return give_up(caps.disk, kDamaged);
    }
    if (audit_pass.raft_records() > 0 || groups->raft_bytes > 0)
        KLOG_INFO("storage: the Raft groups' state is back (%llu bytes from the checkpoint, %llu records from the log)",
                  static_cast<unsigned long long>(groups->raft_bytes),
                  static_cast<unsigned long long>(audit_pass.raft_records()));
    // (A Raft record refused is a member's vote or log that would be forgotten: no less fatal.)
    if (replay.errors() > 0 || audit_pass.errors() > 0) {
        KLOG_ERROR("storage: %llu logged changes could not be replayed: durable collections are read-only",
                   static_cast<unsigned long long>(replay.errors() + audit_pass.errors()));
        return give_up(caps.disk, kReplay);
    }
    if (!(info.flags & abi::kDiskCanFlush))
        KLOG_WARN("storage: the disk cannot flush: acknowledged writes may sit in a volatile cache");
    sys::journal_open(caps.disk, 0, wal.free_sectors() * abi::kDiskSector, 0);

    g_disk_cap = caps.disk;
    // The log's use that starts a checkpoint (sectors). Recovery loads a checkpoint as it is but
    // replays the log vector by vector, rebuilding the index as it goes (about 3.6 ms a vector of
    // 100 floats under TCG, against about 0.1 us a checkpoint byte), so what a checkpoint leaves
    // in the log is what bounds recovery: a 32nd of what the last checkpoint held, between 128 KiB
    // and kTailBytes (half the log at most). A checkpoint then writes at most about 32 bytes per
    // byte logged, fewer for a small store. checkpoint_kib= sets it outright. After one found no
    // room, the next try waits until the log has grown by another eighth.
    const uint64_t fixed = bootargs::get().checkpoint_kib * 2ull;
    auto threshold_after = [&](uint64_t checkpoint_bytes) {
        if (fixed)
            return fixed;
        uint64_t t = checkpoint_bytes / 32 / abi::kDiskSector;
        const uint64_t floor = (128u << 10) / abi::kDiskSector, cap = kTailBytes / abi::kDiskSector;
        t = t < floor ? floor : t > cap ? cap : t;
        return t > sb.log_count / 2 ? sb.log_count / 2 : t;
    };
    uint64_t threshold = threshold_after(sb.checkpoint_bytes);
    uint64_t next_try = threshold;
    for (;;) {
        if (!serve_once(wal, 0))
            return 0; // the journal has failed: nothing more to write
        const bool asked = sys::journal_checkpoint(caps.disk, static_cast<uint64_t>(abi::CheckpointStep::Query), 0,
                                                   0) == 1;
        if (!asked && wal.used_sectors() < next_try)
            continue;
        CheckpointResult r = checkpointer.take(sb, wal, [](storage::Wal& w) -> ktl::Result<void> {
            return serve_once(w, 5'000'000) ? ktl::Result<void>() : ktl::Result<void>(ktl::Error::IoError);
        });
        if (r.status < 0)
            return 0; // the journal has failed
        if (r.status == 0)
            threshold = threshold_after(r.bytes);
        next_try = r.status == 0 ? threshold : wal.used_sectors() + sb.log_count / 8;
        if (r.status == 0)
            storage_info::note_checkpoint(r.ms, r.bytes);
    }
}

} // namespace storaged

namespace storage_info {
namespace {
Recovered g_recovered {};
}
void set_recovered(const Recovered& r) { g_recovered = r; }
void note_progress(uint64_t records) { g_recovered.progress_records = records; }
void note_checkpoint(uint64_t ms, uint64_t bytes) {
    g_recovered.last_checkpoint_ms = ms;
    g_recovered.last_checkpoint_bytes = bytes;
}
const Recovered& recovered() { return g_recovered; }
} // namespace storage_info
