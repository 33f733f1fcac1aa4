#include "checkpointer.h"

#include "../audit/trail.h"
#include "../log.h"

#include <raft/log_image.h>
#include <storage/checkpoint.h>
#include <storage/layout.h>
#include <storage/records.h>
#include <ktl/le_bytes.h>
#include <ktl/utf8.h>
#include <storage/crc32c.h>

namespace storaged {
namespace {

using Step = abi::CheckpointStep;

constexpr uint32_t kChunk = 64 * 1024;
constexpr uint64_t kSector = abi::kDiskSector;
constexpr uint32_t kMaxDrainRounds = 100000; // 5 ms each at most: a writer that never stages is a bug

alignas(64) std::byte g_chunk[kChunk];
alignas(64) std::byte g_header[storage::kCheckpointHeaderBytes];

uint64_t ptr(const void* p) { return reinterpret_cast<uint64_t>(p); }
uint64_t round_up(uint64_t v) { return (v + kSector - 1) / kSector * kSector; }
ktl::Error error_of(int64_t r) { return static_cast<ktl::Error>(-r); }

// Records of `rec` bytes per chunk such that a chunk is whole sectors (0: none fit).
uint64_t records_per_chunk(uint32_t rec) {
    uint64_t a = rec, b = kSector;
    while (b) {
        const uint64_t t = a % b;
        a = b;
        b = t;
    }
    const uint64_t step = kSector / a; // records per sector-aligned run
    return (kChunk / rec) / step * step;
}

// Where the checkpoint after the one `sb` names goes (never over that one: see storage/layout.h).
storage::Extent next_area(const storage::Superblock& sb, uint64_t disk_sectors) {
    const storage::Extent live = sb.checkpoint_first == 0
                                     ? storage::Extent {}
                                     : storage::Extent { sb.checkpoint_first, round_up(sb.checkpoint_bytes) / kSector };
    return storage::next_checkpoint_area(sb.log_first + sb.log_count, disk_sectors, live);
}

} // namespace

uint64_t log_sectors_for(uint64_t sectors) {
    uint64_t log = sectors / 4;
    if (log < (2u << 20) / kSector)
        log = (2u << 20) / kSector;
    if (log > (1ull << 30) / kSector)
        log = (1ull << 30) / kSector;
    return log;
}

ktl::Result<void> Checkpointer::write_piece_bytes(uint64_t area, uint64_t offset, const std::byte* data, size_t len) {
    return m_disk.write(area + offset / kSector, { data, len });
}

// The first `bytes` of the chunk buffer at `offset` of the area, zero-padded to whole sectors.
ktl::Result<void> Checkpointer::write_chunk(uint64_t area, uint64_t offset, uint64_t bytes) {
    const uint64_t padded = round_up(bytes);
    for (uint64_t b = bytes; b < padded; ++b)
        g_chunk[b] = std::byte(0);
    return write_piece_bytes(area, offset, g_chunk, padded);
}

// A piece chunk by chunk: fill(want, offset) puts its bytes into g_chunk (false: it could not);
// each chunk is written at its place and counted into the piece's CRC.
template <typename Fill>
bool Checkpointer::write_piece(uint64_t area, storage::CheckpointEntry& e, Fill&& fill) {
    uint32_t crc = 0;
    for (uint64_t off = 0; off < e.length; off += kChunk) {
        const uint64_t want = e.length - off < kChunk ? e.length - off : kChunk;
        if (!fill(want, off))
            return false;
        crc = storage::crc32c(crc, g_chunk, want);
        if (!write_chunk(area, e.offset + off, want))
            return false;
    }
    e.crc = crc;
    return true;
}

CheckpointResult Checkpointer::take(storage::Superblock& sb, storage::Wal& wal, Drain drain) {
    const uint64_t t0 = sys::clock_ns();
    auto step = [&](Step s, int64_t status = 0, uint64_t room = 0) {
        return sys::journal_checkpoint(m_disk_cap, static_cast<uint64_t>(s), status, room);
    };
    if (step(Step::Begin) < 0)
        return { -static_cast<int>(ktl::Error::IoError), 0, 0, 0 };
    // Every write that got room before the barrier is staged and written: memory equals the log.
    bool quiet = false;
    for (uint32_t i = 0; i < kMaxDrainRounds && !(quiet = step(Step::Quiesced) == 1); ++i) {
        if (auto r = drain(wal); !r) {
            step(Step::Done, -static_cast<int64_t>(r.error()));
            return { -static_cast<int>(r.error()), 0, 0, 0 };
        }
    }
    if (!quiet) {
        step(Step::Done, -static_cast<int64_t>(ktl::Error::TimedOut));
        return { -static_cast<int>(ktl::Error::TimedOut), 0, 0, 0 };
    }
    step(Step::Cut);

    const storage::Extent target = next_area(sb, m_disk.sectors());
    const uint64_t area = target.first;
    const uint64_t room = target.sectors * kSector;
    storage::CheckpointHeader h;
    h.epoch = wal.epoch() + 1;
    int status = 0;
    auto fail = [&](int s) {
        if (status == 0)
            status = s;
    };

    // The collections, each as the store exports it (writes are held back: the pages agree).
    static abi::StoreEntry rows[abi::kMaxNamed];
    int64_t listed = sys::store_list(m_store, rows, abi::kMaxNamed);
    for (int64_t i = 0; status == 0 && i < listed; ++i) {
        if (!rows[i].durable)
            continue;
        std::string_view name = ktl::field_text(rows[i].name);
        int64_t slot = sys::store_open(m_store, name.data(), name.size(), abi::kRead);
        if (slot < 0) {
            fail(-static_cast<int>(error_of(slot)));
            break;
        }
        const int64_t size = sys::vec_export(static_cast<uint64_t>(slot), nullptr, 0, 0);
        if (size <= 0 ||
            !storage::add_piece(h, storage::PieceKind::Collection, name, static_cast<uint64_t>(size), 0,
                                rows[i].max_elements, rows[i].replicated ? abi::kCreateReplicated : 0u, kSector) ||
            h.bytes > room) {
            fail(size <= 0 ? -static_cast<int>(ktl::Error::IoError) : 1);
            sys::cap_delete(static_cast<uint64_t>(slot));
            break;
        }
        if (!write_piece(area, h.entries[h.count - 1], [&](uint64_t want, uint64_t off) {
                return sys::vec_export(static_cast<uint64_t>(slot), g_chunk, want, off) == static_cast<int64_t>(want);
            }))
            fail(-static_cast<int>(ktl::Error::IoError));
        sys::cap_delete(static_cast<uint64_t>(slot));
    }

    // The Raft groups: their records wait for the checkpoint's end like every change, so their
    // state is what the log up to here rebuilds.
    // (A state recovery refused, or one too large to be read back, is not written: the log that
    // holds it stays.)
    const int64_t raft_bytes = m_raft == ~0u ? 0 : sys::raft_read(m_raft, ~0ull, nullptr, 0, 0);
    if (status == 0 && (raft_bytes < 0 || static_cast<uint64_t>(raft_bytes) > raftlog::kMaxStream))
        fail(raft_bytes < 0 ? static_cast<int>(raft_bytes) : -static_cast<int>(ktl::Error::OutOfRange));
    if (status == 0 && raft_bytes > 0) {
        if (!storage::add_piece(h, storage::PieceKind::Raft, "raft", static_cast<uint64_t>(raft_bytes), 0, 0, 0,
                                kSector) ||
            h.bytes > room) {
            fail(1);
        } else if (!write_piece(area, h.entries[h.count - 1], [&](uint64_t want, uint64_t off) {
                       return sys::raft_read(m_raft, ~0ull, g_chunk, want, off) == static_cast<int64_t>(want);
                   })) {
            fail(-static_cast<int>(ktl::Error::IoError));
        }
    }

    // The audit trail: from here its new records wait for the new log; the ones before are copied.
    const int64_t total = step(Step::Hold);
    if (status == 0 && m_audit != ~0u && total > 0) {
        const uint32_t rec = audit::trail::record_bytes();
        const uint64_t capacity = audit::trail::bytes() / rec;
        const uint64_t n = static_cast<uint64_t>(total) < capacity ? static_cast<uint64_t>(total) : capacity;
        const uint64_t first = static_cast<uint64_t>(total) - n;
        const uint64_t per_chunk = records_per_chunk(rec);
        if (per_chunk == 0 || !storage::add_piece(h, storage::PieceKind::Audit, "", n * rec, 0, rec, 0, kSector) ||
            h.bytes > room) {
            fail(1);
        } else {
            storage::CheckpointEntry& e = h.entries[h.count - 1];
            uint64_t written = 0, in_chunk = 0;
            uint32_t crc = 0;
            // Chunks of whole records that are whole sectors too, so each lands at its own offset.
            auto flush_chunk = [&] {
                const uint64_t bytes = in_chunk * rec;
                crc = storage::crc32c(crc, g_chunk, bytes);
                if (!write_chunk(area, e.offset + written, bytes))
                    fail(-static_cast<int>(ktl::Error::IoError));
                written += bytes;
                in_chunk = 0;
            };
            for (uint64_t i = 0; status == 0 && i < n; ++i) {
                // A record the ring has let go of meanwhile (a burst of new ones) is skipped.
                if (sys::region_read(m_audit, (first + i) * rec, g_chunk + in_chunk * rec, rec) !=
                    static_cast<int64_t>(rec))
                    continue;
                if (++in_chunk == per_chunk)
                    flush_chunk();
            }
            if (status == 0 && in_chunk > 0)
                flush_chunk();
            e.length = written;
            e.crc = crc;
            h.bytes = round_up(e.offset + e.length);
        }
    }

    // The header, then the superblock that makes it the checkpoint; the log starts over.
    if (status == 0) {
        const uint32_t crc = storage::encode_checkpoint_header({ g_header, sizeof g_header }, h);
        // The pieces are on the disk before the header that vouches for them: a whole header is
        // then a whole checkpoint (recovery may take one the superblock never named: adopt_newer).
        if (auto f = m_disk.flush(); !f && f.error() != ktl::Error::Unsupported)
            fail(-static_cast<int>(f.error()));
        else if (!write_piece_bytes(area, 0, g_header, sizeof g_header))
            fail(-static_cast<int>(ktl::Error::IoError));
        else if (auto f = m_disk.flush(); !f && f.error() != ktl::Error::Unsupported)
            fail(-static_cast<int>(f.error()));
        if (status == 0) {
            storage::Superblock next = sb;
            next.epoch = h.epoch;
            next.checkpoint_first = area;
            next.checkpoint_bytes = h.bytes;
            next.checkpoint_crc = crc;
            auto g = storage::write_superblock(m_disk, sb, next, { g_chunk, kSector });
            if (!g && g.error() != ktl::Error::Unsupported) {
                fail(-static_cast<int>(g.error()));
            } else {
                next.generation = g ? *g : sb.generation + 1;
                sb = next;
                wal.reset(h.epoch);
            }
        }
    }
    step(Step::Done, status, wal.free_sectors() * kSector);
    const uint64_t ms = (sys::clock_ns() - t0) / 1000000;
    if (status == 0)
        KLOG_INFO("storage: checkpoint of %u pieces, %llu KiB, in %llu ms; the log starts over (epoch %u)", h.count,
                  static_cast<unsigned long long>(h.bytes >> 10), static_cast<unsigned long long>(ms), h.epoch);
    else if (status == 1)
        KLOG_WARN("storage: no room for a checkpoint (%llu KiB area): the log keeps growing until storage_full",
                  static_cast<unsigned long long>(room >> 10));
    else
        KLOG_ERROR("storage: checkpoint failed (%s)", ktl::error_name(static_cast<ktl::Error>(-status)));
    return { status, h.bytes, h.count, ms };
}

bool Checkpointer::adopt_newer(storage::Superblock& sb) {
    const storage::Extent target = next_area(sb, m_disk.sectors());
    if (target.sectors * kSector < sizeof g_header || !m_disk.read(target.first, { g_header, sizeof g_header }))
        return false;
    // The header's own CRC (its last four bytes) is all there is to check it against: the
    // superblock that kept a copy of it is the damaged one.
    const uint32_t crc = ktl::get_le<uint32_t>(g_header + sizeof g_header - 4);
    auto h = storage::decode_checkpoint_header({ g_header, sizeof g_header }, crc, kSector);
    if (!h || h->epoch != sb.epoch + 1 || h->bytes > target.sectors * kSector)
        return false;
    sb.epoch = h->epoch;
    sb.checkpoint_first = target.first;
    sb.checkpoint_bytes = h->bytes;
    sb.checkpoint_crc = crc;
    return true;
}

ktl::Result<Checkpointer::Loaded> Checkpointer::load(const storage::Superblock& sb, storage::PieceKind kind) {
    Loaded out {};
    if (sb.checkpoint_first == 0)
        return out;
    const uint64_t first = sb.checkpoint_first;
    if (first >= m_disk.sectors() || sb.checkpoint_bytes / kSector > m_disk.sectors() - first)
        return ktl::Error::Truncated;
    TRY_VOID(m_disk.read(first, { g_header, sizeof g_header }));
    storage::CheckpointHeader h = TRY(
        storage::decode_checkpoint_header({ g_header, sizeof g_header }, sb.checkpoint_crc, kSector));
    if (h.epoch != sb.epoch || h.bytes != sb.checkpoint_bytes)
        return ktl::Error::Corrupt;
    out.bytes = h.bytes;
    for (uint32_t i = 0; i < h.count; ++i) {
        const storage::CheckpointEntry& e = h.entries[i];
        if (e.kind != kind)
            continue;
        auto read_chunk = [&](uint64_t off, uint64_t want) {
            return m_disk.read(first + (e.offset + off) / kSector, { g_chunk, round_up(want) });
        };
        // The piece in chunks of `step` bytes, each read into g_chunk and handed to fn(off, want).
        auto each_chunk = [&](uint64_t step, auto&& fn) -> ktl::Result<void> {
            for (uint64_t off = 0; off < e.length; off += step) {
                const uint64_t want = e.length - off < step ? e.length - off : step;
                TRY_VOID(read_chunk(off, want));
                TRY_VOID(fn(off, want));
            }
            return {};
        };
        // Checked whole before anything of it goes back: a damaged piece is refused, not half kept.
        auto verified = [&](uint64_t step) -> ktl::Result<void> {
            uint32_t crc = 0;
            TRY_VOID(each_chunk(step, [&](uint64_t, uint64_t want) -> ktl::Result<void> {
                crc = storage::crc32c(crc, g_chunk, want);
                return {};
            }));
            return crc == e.crc ? ktl::Result<void>() : ktl::Result<void>(ktl::Error::Corrupt);
        };
        if (e.kind == storage::PieceKind::Raft) {
            // Given back in order once checked (and applied once whole: all or nothing).
            if (m_raft == ~0u)
                return ktl::Error::Corrupt;
            TRY_VOID(verified(kChunk));
            TRY_VOID(each_chunk(kChunk, [&](uint64_t off, uint64_t want) -> ktl::Result<void> {
                const int64_t r = sys::raft_restore(m_raft, g_chunk, want, off, e.length);
                return r < 0 ? ktl::Result<void>(error_of(r)) : ktl::Result<void>();
            }));
            out.raft_bytes += e.length;
        } else if (e.kind == storage::PieceKind::Collection) {
            std::string_view name = e.name_view();
            abi::StageChunk chunk {};
            chunk.total = e.length;
            uint32_t crc = 0;
            for (uint64_t off = 0; off < e.length; off += kChunk) {
                const uint64_t want = e.length - off < kChunk ? e.length - off : kChunk;
                TRY_VOID(read_chunk(off, want));
                crc = storage::crc32c(crc, g_chunk, want);
                chunk.offset = off;
                chunk.data = ptr(g_chunk);
                chunk.len = want;
                chunk.action = 0;
                int64_t r = sys::store_stage(m_store, name.data(), name.size(), &chunk);
                if (r < 0)
                    return error_of(r);
            }
            if (crc != e.crc) {
                chunk.action = 2; // abandoned: nothing of it is kept
                sys::store_stage(m_store, name.data(), name.size(), &chunk);
                return ktl::Error::Corrupt;
            }
            chunk.action = 1;
            chunk.capacity = e.extra;
            chunk.provenance = 0;
            chunk.flags = e.flags & abi::kCreateReplicated;
            int64_t r = sys::store_stage(m_store, name.data(), name.size(), &chunk);
            if (r < 0)
                return error_of(r);
            ++out.collections;
        } else {
            const uint32_t rec = e.extra;
            const uint64_t per_chunk = rec ? records_per_chunk(rec) * rec : 0;
            if (rec == 0 || rec > storage::kMaxAuditRecord || e.length % rec != 0 || per_chunk == 0)
                return ktl::Error::Corrupt;
            TRY_VOID(verified(per_chunk));
            if (m_audit != ~0u)
                TRY_VOID(each_chunk(per_chunk, [&](uint64_t, uint64_t want) -> ktl::Result<void> {
                    for (uint64_t at = 0; at < want; at += rec)
                        if (sys::region_append(m_audit, g_chunk + at, rec) >= 0)
                            ++out.audit_records;
                    return {};
                }));
        }
    }
    return out;
}

} // namespace storaged
