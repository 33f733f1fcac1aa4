#include "wal.h"
#include "crc32c.h"

#include <cstring>

#include <ktl/le_bytes.h>

namespace storage {
namespace {

using ktl::get16, ktl::get32, ktl::get64, ktl::put16, ktl::put32, ktl::put64;
constexpr size_t round8(size_t n) { return (n + 7) & ~size_t(7); }

// The chain's start for an epoch, and one link.
uint32_t seed(uint32_t epoch) {
    std::byte e[4];
    put32(e, epoch);
    return crc32c(0, e, 4);
}
uint32_t link(uint32_t chain, uint32_t crc) {
    std::byte c[4];
    put32(c, crc);
    return crc32c(chain, c, 4);
}
// CRC of a record: header bytes [0, 24) and its payload.
uint32_t record_crc(const std::byte* h) { return crc32c(crc32c(0, h, 24), h + Wal::kHeader, get32(h + 16)); }

} // namespace

Wal::Wal(BlockDevice& device, uint64_t first, uint64_t count, uint32_t epoch, std::span<std::byte> buffer)
    : m_dev(device), m_first(first), m_count(count), m_epoch(epoch), m_buf(buffer), m_sector(device.sector_size()),
      m_tail(first), m_chain(seed(epoch)) {}

void Wal::reset(uint32_t epoch) {
    m_epoch = epoch;
    m_tail = m_first;
    m_next_seq = 1;
    m_chain = seed(epoch);
    m_used = 0;
    m_pending = 0;
    m_last_header = 0;
}

ktl::Result<uint64_t> Wal::append(uint16_t type, std::span<const std::byte> payload) {
    const size_t need = kHeader + round8(payload.size());
    const size_t room = m_buf.size() - m_sector; // one sector stays free for the end marker
    if (payload.size() > 0xffffffffu || need > room)
        return ktl::Error::OutOfRange;
    if (m_used + need > room)
        return ktl::Error::Full;
    std::byte* h = m_buf.data() + m_used;
    const uint64_t seq = m_next_seq + m_pending;
    put32(h, kMagic);
    put32(h + 4, m_epoch);
    put64(h + 8, seq);
    put32(h + 16, static_cast<uint32_t>(payload.size()));
    put16(h + 20, type);
    put16(h + 22, 0); // flags, CRC and chain are set by commit()
    put32(h + 24, 0);
    put32(h + 28, 0);
    if (!payload.empty())
        std::memcpy(h + kHeader, payload.data(), payload.size());
    std::memset(h + kHeader + payload.size(), 0, need - kHeader - payload.size());
    m_last_header = m_used;
    m_used += need;
    ++m_pending;
    return seq;
}

ktl::Result<void> Wal::commit() {
    if (m_used == 0)
        return {};
    const size_t bytes = (m_used + m_sector - 1) / m_sector * m_sector;
    const uint64_t sectors = bytes / m_sector;
    if (bytes > m_buf.size() || m_tail + sectors > m_first + m_count)
        return ktl::Error::Full;
    // Flags, CRCs and the chain, now that the commit's last record is known.
    uint32_t chain = m_chain;
    for (size_t at = 0; at < m_used;) {
        std::byte* h = m_buf.data() + at;
        put16(h + 22, uint16_t((at == 0 ? kFirst : 0) | (at == m_last_header ? kLast : 0)));
        const uint32_t crc = record_crc(h);
        put32(h + 24, crc);
        chain = link(chain, crc);
        put32(h + 28, chain);
        at += kHeader + round8(get32(h + 16));
    }
    // A zero sector after the commit, in the same write where the region has room: the log's end
    // is then always a clean one, even over what an older epoch left (the next commit overwrites it).
    const size_t marker = m_tail + sectors < m_first + m_count ? m_sector : 0;
    std::memset(m_buf.data() + m_used, 0, bytes + marker - m_used);
    if (auto w = m_dev.write(m_tail, { m_buf.data(), bytes + marker }); !w)
        return w.error(); // nothing acknowledged; the records stay pending
    auto flushed = m_dev.flush();
    m_tail += sectors;
    m_chain = chain;
    m_next_seq += m_pending;
    m_pending = 0;
    m_used = 0;
    return flushed;
}

ktl::Result<bool> Wal::load(uint64_t lba, size_t bytes, size_t& loaded) {
    while (loaded < bytes) {
        const uint64_t sector = lba + loaded / m_sector;
        if (loaded + m_sector > m_buf.size() || sector >= m_first + m_count)
            return false;
        if (auto r = m_dev.read(sector, { m_buf.data() + loaded, m_sector }); !r)
            return r.error();
        loaded += m_sector;
    }
    return true;
}

// A header that can be the record `seq` of this epoch (first of its commit or not), before its CRC.
static bool header_fits(const std::byte* h, uint32_t magic, uint32_t epoch, uint64_t seq, bool first) {
    return get32(h) == magic && get32(h + 4) == epoch && get64(h + 8) == seq &&
           ((get16(h + 22) & Wal::kFirst) != 0) == first && (get16(h + 22) & ~(Wal::kFirst | Wal::kLast)) == 0;
}

ktl::Result<Recovery> Wal::recover_impl(VisitFn visit, void* ctx, const Recovery* known) {
    Recovery rep;
    m_tail = m_first;
    m_next_seq = 1;
    m_chain = seed(m_epoch);
    m_used = 0;
    m_pending = 0;
    // Why the walk stopped, when it stopped at something that may be an end.
    enum class Stop { None, Region, Zero, OtherEpoch, NewerMidway, Failed } stop = Stop::None;
    // At most one commit per sector: the walk is bounded by the region.
    for (uint64_t guard = 0; guard < m_count && m_tail < m_first + m_count; ++guard) {
        if (known && rep.commits == known->commits)
            break; // as far as the first walk went
        size_t loaded = 0;
        auto got = load(m_tail, kHeader, loaded);
        if (!got)
            return got.error();
        if (!*got) {
            stop = Stop::Region; // the region's end: nothing can follow
            break;
        }
        if (get32(m_buf.data()) == 0) {
            stop = Stop::Zero; // a sector never written, or an end marker: an end if nothing follows
            break;
        }
        if (get32(m_buf.data()) == kMagic && get32(m_buf.data() + 4) != m_epoch) {
            // An older epoch: the log before a checkpoint (an end), or damage. A newer one where
            // the log begins: the superblock is behind the disk. A newer one after commits of this
            // epoch: never written so (a log does not change epochs midway), so damage.
            // (The record's CRC covers its epoch: a flipped bit there is damage, not a newer log.)
            stop = Stop::OtherEpoch;
            const uint32_t e = get32(m_buf.data() + 4);
            if (e > m_epoch && m_tail == m_first) {
                auto whole = first_record_intact(m_tail);
                if (!whole)
                    return whole.error();
                if (*whole) {
                    rep.newer_epoch = true;
                    rep.found_epoch = e;
                } else {
                    stop = Stop::Failed;
                }
            } else if (e > m_epoch) {
                stop = Stop::NewerMidway;
            }
            break;
        }
        // One commit: every record checked, chain and sequence included, before any is replayed.
        uint64_t seq = m_next_seq;
        uint32_t chain = m_chain;
        size_t at = 0;
        bool whole = false;
        while (true) {
            auto h_ok = load(m_tail, at + kHeader, loaded);
            if (!h_ok)
                return h_ok.error();
            if (!*h_ok)
                break;
            const std::byte* h = m_buf.data() + at;
            if (!header_fits(h, kMagic, m_epoch, seq, at == 0))
                break;
            const size_t need = kHeader + round8(get32(h + 16));
            if (need > m_buf.size() - at)
                break;
            auto body = load(m_tail, at + need, loaded);
            if (!body)
                return body.error();
            if (!*body || record_crc(h) != get32(h + 24) || link(chain, get32(h + 24)) != get32(h + 28))
                break;
            chain = get32(h + 28);
            ++seq;
            at += need;
            if (get16(h + 22) & kLast) {
                whole = true;
                break;
            }
        }
        if (!whole) {
            stop = Stop::Failed;
            break;
        }
        for (size_t r = 0; r < at;) {
            const std::byte* h = m_buf.data() + r;
            const uint32_t len = get32(h + 16);
            visit(ctx, LogRecord { get64(h + 8), get16(h + 20), { h + kHeader, len } });
            r += kHeader + round8(len);
        }
        ++rep.commits;
        rep.records += seq - m_next_seq;
        m_next_seq = seq;
        m_chain = chain;
        m_tail += (at + m_sector - 1) / m_sector;
    }
    if (known && rep.commits == known->commits && m_next_seq == known->next_seq && m_tail == known->tail_lba)
        return *known;
    // Whatever stopped the walk, an intact later commit of this epoch means it stopped at damage.
    // (Not where a newer log begins: what follows it are this older epoch's own leftovers.)
    if (stop == Stop::NewerMidway || (stop != Stop::None && stop != Stop::Region && !rep.newer_epoch &&
                                      intact_commit_after(m_tail + 1, m_next_seq))) {
        rep.damaged = true;
        rep.damaged_seq = m_next_seq;
    } else if (stop == Stop::Failed) {
        rep.torn_tail = true;
    } else if (stop == Stop::OtherEpoch && !rep.newer_epoch) {
        rep.stale_end = true; // a header of an older epoch: the log before a checkpoint, not damage
    }
    rep.next_seq = m_next_seq;
    rep.tail_lba = m_tail;
    return rep;
}

ktl::Result<bool> Wal::first_record_intact(uint64_t lba) {
    size_t loaded = 0;
    auto h = load(lba, kHeader, loaded);
    if (!h || !*h)
        return h;
    const size_t need = kHeader + round8(get32(m_buf.data() + 16));
    if (need > m_buf.size())
        return false;
    auto body = load(lba, need, loaded);
    if (!body || !*body)
        return body;
    return record_crc(m_buf.data()) == get32(m_buf.data() + 24);
}

bool Wal::intact_commit_after(uint64_t lba, uint64_t seq) {
    // A commit is at most one buffer long, so the commit after a damaged one starts within a
    // buffer's reach; the window allows a few damaged ones in a row. Scanning the whole (mostly
    // never written) region instead would read every sector of the disk at every boot.
    const uint64_t window = kDamageScanCommits * (m_buf.size() / m_sector + 1);
    const uint64_t end = m_first + m_count - lba > window ? lba + window : m_first + m_count;
    for (uint64_t l = lba; l < end; ++l) {
        size_t loaded = 0;
        auto got = load(l, kHeader, loaded);
        if (!got || !*got)
            return false;
        const std::byte* h = m_buf.data();
        if (get32(h) != kMagic || get32(h + 4) != m_epoch || !(get16(h + 22) & kFirst) || get64(h + 8) <= seq)
            continue;
        // A commit's own records check out (their chain cannot: it runs through what failed).
        uint64_t s = get64(h + 8);
        size_t at = 0;
        while (true) {
            auto more = load(l, at + kHeader, loaded);
            if (!more || !*more)
                break;
            h = m_buf.data() + at;
            if (!header_fits(h, kMagic, m_epoch, s, at == 0))
                break;
            const size_t need = kHeader + round8(get32(h + 16));
            if (need > m_buf.size() - at)
                break;
            auto body = load(l, at + need, loaded);
            if (!body || !*body || record_crc(h) != get32(h + 24))
                break;
            if (get16(h + 22) & kLast)
                return true;
            ++s;
            at += need;
        }
    }
    return false;
}

} // namespace storage
