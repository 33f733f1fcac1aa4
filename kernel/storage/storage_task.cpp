#include "storage_task.h"

#include "../cap/kcap.h"
#include "../dev/disk.h"
#include "../log.h"
#include "../syscall/sys.h"
#include "../vector/collection.h"
#include "journal.h"
#include "storage_info.h"

#include <storage/block_device.h>
#include <storage/records.h>
#include <storage/superblock.h>
#include <storage/wal.h>

#include <cstring>

namespace storaged {
namespace {

using N = sys::Number;

// The disk through the storage task's capability, as the log sees a block device. Reads go
// through a read-ahead window: recovery walks the log a sector at a time, and one system call
// per sector would make a boot with a long log slow for nothing.
class DiskClient final : public storage::BlockDevice {
public:
    static constexpr uint32_t kWindow = 64 * 1024;

    DiskClient(uint32_t cap, uint64_t bytes) : m_cap(cap), m_sectors(bytes / dev::kDiskSector) {}
    uint32_t sector_size() const override { return dev::kDiskSector; }
    uint64_t sectors() const override { return m_sectors; }

    ktl::Result<void> read(uint64_t lba, std::span<std::byte> out) override {
        if (out.size() % dev::kDiskSector != 0 || lba > m_sectors || out.size() / dev::kDiskSector > m_sectors - lba)
            return ktl::Error::OutOfRange;
        for (size_t done = 0; done < out.size(); done += dev::kDiskSector) {
            const uint64_t sector = lba + done / dev::kDiskSector;
            if (!m_window_valid || sector < m_window_first || sector >= m_window_first + m_window_sectors) {
                uint64_t want = kWindow / dev::kDiskSector;
                if (want > m_sectors - sector)
                    want = m_sectors - sector;
                int64_t r = sys::call(N::disk_read, m_cap, sector, reinterpret_cast<uint64_t>(m_window),
                                      want * dev::kDiskSector, kIoTimeoutNs);
                if (r < 0)
                    return ktl::Error::IoError;
                m_window_first = sector;
                m_window_sectors = want;
                m_window_valid = true;
            }
            std::memcpy(out.data() + done, m_window + (sector - m_window_first) * dev::kDiskSector, dev::kDiskSector);
        }
        return {};
    }

    ktl::Result<void> write(uint64_t lba, std::span<const std::byte> data) override {
        if (data.size() % dev::kDiskSector != 0 || lba > m_sectors || data.size() / dev::kDiskSector > m_sectors - lba)
            return ktl::Error::OutOfRange;
        m_window_valid = false; // what it held may be stale now
        for (size_t done = 0; done < data.size();) {
            size_t n = data.size() - done;
            if (n > kWindow)
                n = kWindow;
            int64_t r = sys::call(N::disk_write, m_cap, lba + done / dev::kDiskSector,
                                  reinterpret_cast<uint64_t>(data.data() + done), n, kIoTimeoutNs);
            if (r < 0)
                return r == -static_cast<int64_t>(ktl::Error::OutOfRange) ? ktl::Error::OutOfRange : ktl::Error::IoError;
            done += n;
        }
        return {};
    }

    ktl::Result<void> flush() override {
        int64_t r = sys::call(N::disk_flush, m_cap, kIoTimeoutNs);
        if (r == -static_cast<int64_t>(ktl::Error::Unsupported))
            return ktl::Error::Unsupported;
        return r < 0 ? ktl::Result<void>(ktl::Error::IoError) : ktl::Result<void>();
    }

private:
    uint32_t m_cap;
    uint64_t m_sectors;
    alignas(64) std::byte m_window[kWindow];
    uint64_t m_window_first = 0, m_window_sectors = 0;
    bool m_window_valid = false;
};

// Replays records into the store through its system calls, keeping the collections it has opened.
class Replayer {
public:
    Replayer(uint32_t store, uint32_t audit) : m_store(store), m_audit(audit) {}

    void apply(const storage::LogRecord& rec) {
        auto d = storage::decode_record(rec.type, rec.payload);
        if (!d) {
            failed(rec.seq, "undecodable record", d.error());
            return;
        }
        int64_t r = 0;
        switch (d->type) {
        case storage::RecordType::Audit:
            r = m_audit == ~0u ? 0 : sys::call(N::region_append, m_audit, ptr(d->audit.data()), d->audit.size());
            if (r >= 0 && m_audit != ~0u)
                ++m_audit_records;
            if (r < 0) { // the trail's region refused it (a record size of another build): not fatal
                ++m_audit_refused;
                r = 0;
            }
            break;
        case storage::RecordType::Create: {
            vector::CreateParams p { d->create.dim, d->create.metric, d->create.m, d->create.ef_construction,
                                     d->create.max_elements, d->create.max_ef, d->create.flags };
            r = sys::call(N::store_create, m_store, ptr(d->name.data()), d->name.size(), reinterpret_cast<uint64_t>(&p));
            break;
        }
        case storage::RecordType::Drop:
            forget(d->name);
            r = sys::call(N::store_drop, m_store, ptr(d->name.data()), d->name.size());
            break;
        case storage::RecordType::Upsert: {
            int64_t slot = open(d->name);
            r = slot < 0 ? slot
                         : sys::call(N::vec_insert, static_cast<uint64_t>(slot), ptr(d->upsert.ids),
                                     ptr(d->upsert.vectors), d->upsert.count, d->upsert.provenance);
            if (r >= 0 && static_cast<uint64_t>(r) != d->upsert.count)
                r = -static_cast<int64_t>(ktl::Error::Full);
            break;
        }
        case storage::RecordType::Delete: {
            int64_t slot = open(d->name);
            r = slot < 0 ? slot
                         : sys::call(N::vec_delete, static_cast<uint64_t>(slot), ptr(d->delete_ids), d->delete_count,
                                     ptr(m_missing));
            // Only ids the call really deleted were logged: every one must be there to delete again.
            if (r >= 0 && static_cast<uint64_t>(r) != d->delete_count)
                r = -static_cast<int64_t>(ktl::Error::NotFound);
            break;
        }
        }
        if (r < 0)
            failed(rec.seq, "record not applied", static_cast<ktl::Error>(-r));
        else
            ++m_applied;
    }

    void close_all() {
        for (auto& o : m_open)
            if (o.used)
                sys::call(N::cap_delete, o.slot);
    }
    uint64_t applied() const { return m_applied; }
    uint64_t audit_records() const { return m_audit_records; }
    uint64_t audit_refused() const { return m_audit_refused; }
    uint64_t errors() const { return m_errors; }

private:
    struct Open {
        bool used;
        uint8_t len;
        char name[65];
        uint32_t slot;
    };
    static uint64_t ptr(const void* p) { return reinterpret_cast<uint64_t>(p); }

    int64_t open(std::string_view name) {
        for (auto& o : m_open)
            if (o.used && std::string_view(o.name, o.len) == name)
                return o.slot;
        int64_t slot = sys::call(N::store_open, m_store, ptr(name.data()), name.size(), kcap::kWrite);
        if (slot < 0)
            return slot;
        Open& o = m_open[m_next++ % kOpen];
        if (o.used)
            sys::call(N::cap_delete, o.slot);
        o = Open { true, static_cast<uint8_t>(name.size()), {}, static_cast<uint32_t>(slot) };
        std::memcpy(o.name, name.data(), name.size());
        return slot;
    }

    void forget(std::string_view name) {
        for (auto& o : m_open)
            if (o.used && std::string_view(o.name, o.len) == name) {
                sys::call(N::cap_delete, o.slot);
                o.used = false;
            }
    }

    void failed(uint64_t seq, const char* what, ktl::Error e) {
        if (m_errors++ < 8)
            KLOG_ERROR("storage: log record %llu: %s (%s)", static_cast<unsigned long long>(seq), what, ktl::error_name(e));
    }

    static constexpr size_t kOpen = 8;
    bool m_missing[storage::kMaxDeleteIds] = {};
    uint32_t m_store;
    uint32_t m_audit;
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

enum Reason : uint64_t { kForeign = 1, kDamaged = 2, kUnreadable = 3, kReplay = 4, kReadOnly = 5, kTooSmall = 6, kTruncated = 7 };

int64_t give_up(uint32_t disk, Reason why) {
    sys::call(N::journal_open, disk, static_cast<uint64_t>(-1), 0, why);
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

} // namespace

int64_t task_main(void* arg) {
    const auto& caps = *static_cast<const Caps*>(arg);
    dev::DiskInfo info {};
    if (sys::call(N::disk_info, caps.disk, reinterpret_cast<uint64_t>(&info)) < 0)
        return give_up(caps.disk, kUnreadable);
    if (info.flags & dev::kDiskReadOnly) {
        KLOG_ERROR("storage: the disk is read-only: collections live in memory only");
        return give_up(caps.disk, kReadOnly);
    }
    if (info.bytes < kMinDiskBytes) {
        KLOG_ERROR("storage: the disk has %llu bytes, less than the %llu it needs", static_cast<unsigned long long>(info.bytes),
                   static_cast<unsigned long long>(kMinDiskBytes));
        return give_up(caps.disk, kTooSmall);
    }
    static DiskClient client(caps.disk, info.bytes);
    g_client = &client;
    const uint64_t started = sys::clock_ns();
    storage_info::Recovered rec {};

    std::span<std::byte> sector(g_group, dev::kDiskSector);
    auto sb_read = storage::read_superblock(client, sector);
    storage::Superblock sb;
    if (!sb_read && sb_read.error() == ktl::Error::NotFound) {
        // An empty disk: formatted with one log over everything past the superblock.
        storage::Superblock fresh;
        fresh.epoch = 1;
        fresh.log_first = kLogFirst;
        fresh.log_count = client.sectors() - kLogFirst;
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
        KLOG_ERROR("storage: the disk holds no Basalt superblock (%s): collections live in memory only; start fresh with an empty image",
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
            KLOG_ERROR("storage: the superblock describes a log past the end of this %llu MiB disk (a truncated image?): "
                       "collections live in memory only", static_cast<unsigned long long>(info.bytes >> 20));
            return give_up(caps.disk, kTruncated);
        }
    }
    rec.log_bytes = sb.log_count * dev::kDiskSector;

    static storage::Wal wal(client, sb.log_first, sb.log_count, sb.epoch, { g_commit, sizeof g_commit });
    Replayer replay(caps.store, caps.audit);
    auto recovered = wal.recover([&](const storage::LogRecord& r) { replay.apply(r); });
    replay.close_all();
    rec.ms = (sys::clock_ns() - started) / 1000000;
    if (!recovered) {
        KLOG_ERROR("storage: the log could not be read (%s)", ktl::error_name(recovered.error()));
        storage_info::set_recovered(rec);
        return give_up(caps.disk, kUnreadable);
    }
    rec.records = recovered->records;
    rec.audit_records = replay.audit_records();
    if (replay.audit_refused())
        KLOG_WARN("storage: %llu audit records from the log did not fit the trail's region", static_cast<unsigned long long>(replay.audit_refused()));
    rec.commits = recovered->commits;
    rec.damaged = recovered->damaged;
    rec.torn_tail = recovered->torn_tail;
    storage_info::set_recovered(rec);
    KLOG_INFO("storage: recovered %llu records in %llu commits in %llu ms (log %llu MiB, %llu MiB free)%s",
              static_cast<unsigned long long>(rec.records), static_cast<unsigned long long>(rec.commits),
              static_cast<unsigned long long>(rec.ms), static_cast<unsigned long long>(rec.log_bytes >> 20),
              static_cast<unsigned long long>((wal.free_sectors() * dev::kDiskSector) >> 20),
              recovered->torn_tail ? "; a half-written, unacknowledged group at the end was dropped" : "");
    if (recovered->damaged) {
        KLOG_ERROR("storage: the log is damaged at record %llu while later ones are intact: nothing after it was replayed; "
                   "durable collections are read-only",
                   static_cast<unsigned long long>(recovered->damaged_seq));
        return give_up(caps.disk, kDamaged);
    }
    if (replay.errors() > 0) {
        KLOG_ERROR("storage: %llu logged changes could not be replayed: durable collections are read-only",
                   static_cast<unsigned long long>(replay.errors()));
        return give_up(caps.disk, kReplay);
    }
    if (!(info.flags & dev::kDiskCanFlush))
        KLOG_WARN("storage: the disk cannot flush: acknowledged writes may sit in a volatile cache");
    sys::call(N::journal_open, caps.disk, 0, wal.free_sectors() * dev::kDiskSector);

    for (;;) {
        int64_t n = sys::call(N::journal_take, caps.disk, reinterpret_cast<uint64_t>(g_group), sizeof g_group, 0);
        if (n <= 0)
            continue; // woken without a group (nothing staged)
        const uint64_t t0 = sys::clock_ns();
        bool flush_unsupported = false;
        auto r = write_group(wal, static_cast<size_t>(n), flush_unsupported);
        if (!r)
            KLOG_ERROR("storage: writing the log failed (%s): durable collections are read-only until a restart",
                       ktl::error_name(r.error()));
        journal::note_commit_time(sys::clock_ns() - t0);
        sys::call(N::journal_done, caps.disk, r ? 0 : static_cast<uint64_t>(-static_cast<int64_t>(r.error())),
                  wal.free_sectors() * dev::kDiskSector);
        if (!r)
            return 0; // the journal has failed: nothing more to write
    }
}

} // namespace storaged

namespace storage_info {
namespace {
Recovered g_recovered {};
}
void set_recovered(const Recovered& r) { g_recovered = r; }
const Recovered& recovered() { return g_recovered; }
} // namespace storage_info
