#include "state_transfer.h"

#include "store_retry.h"

#include "../log.h"
#include <abi/sys.h>
#include <abi/vector.h>

#include <cstring>

#include <ktl/le_bytes.h>

namespace clusterd {
namespace {

enum Type : uint8_t { kAskList = 1, kListed = 2, kAskPage = 3, kPaged = 4 };
// kGone: no replicated collection of that name there (dropped since it was listed); kBusy: the
// source cannot export it just now (its store busy or recovering, no memory): asked again.
enum Status : uint8_t { kOk = 0, kBehind = 1, kGone = 2, kImageGone = 3, kBusy = 4 };

constexpr size_t kHeader = 16;
constexpr uint64_t kRetryNs = 500'000'000;           // a request unanswered this long is sent again
constexpr uint32_t kMaxSilences = 6;                 // then the next voter is asked
constexpr uint64_t kImageIdleNs = 60'000'000'000ull; // a source gives an export back after this
// A voter installing votes for no one: a transfer that cannot finish (every source behind or
// gone) would keep the group from electing. Past this, the snapshot goes in without what is missing.
constexpr uint64_t kHoldLimitNs = 120'000'000'000ull;
constexpr uint64_t kRegionBytes = 16ull << 20; // region_create's bound: an export spans several
constexpr uint64_t kMaxImage = kRegionBytes * StateTransfer::kMaxRegions;
static_assert(kMaxImage >= abi::kMaxCollectionBytes + (1u << 20)); // a snapshot never exceeds its index by more
static_assert(kRegionBytes % StateTransfer::kPage == 0);           // no page spans two regions
constexpr size_t kMaxMessage = kHeader + 8 * 3 + 4 + 1 + 64 + StateTransfer::kPage;
static_assert(kMaxMessage <= PeerChannel::kMaxMessage);

alignas(8) uint8_t g_out[kMaxMessage]; // the message being sent (the cluster task is one task)
alignas(8) uint8_t g_page[StateTransfer::kPage];

using ktl::get_le;
using ktl::put_le;
size_t header(uint8_t type, uint8_t status, uint32_t seq, uint64_t index) {
    g_out[0] = type;
    g_out[1] = status;
    put_le(g_out + 2, 0, 2);
    put_le(g_out + 4, seq, 4);
    put_le(g_out + 8, index, 8);
    return kHeader;
}
int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }

} // namespace

void StateTransfer::start(uint32_t store, uint32_t factory, PeerChannel& channel, uint64_t self) {
    m_store = store;
    m_factory = factory;
    m_channel = &channel;
    m_self = self;
}

void StateTransfer::set_sources(std::span<const uint64_t> voters) {
    m_source_count = 0;
    for (uint64_t id : voters)
        if (id != m_self && m_source_count < kraft::kMaxServers)
            m_sources[m_source_count++] = id;
}

uint64_t StateTransfer::next_after(uint64_t id) const {
    if (m_source_count == 0)
        return id;
    for (uint32_t i = 0; i < m_source_count; ++i)
        if (m_sources[i] == id)
            return m_sources[(i + 1) % m_source_count];
    return m_sources[0];
}

void StateTransfer::begin(uint64_t index, uint64_t from, uint64_t now_ns) {
    m_index = index;
    m_source = from != 0 && from != m_self ? from : next_after(m_self);
    m_silences = 0;
    m_phase = Phase::List;
    m_sent_ns = 0;
    m_waiting = false;
    m_began_ns = now_ns;
    m_incomplete = false;
    m_wanted_count = m_current = 0;
    m_image = m_offset = m_total = 0;
    KLOG_INFO("cluster: catching up to the group's snapshot at %llu: fetching its replicated collections from "
              "member %llu",
              static_cast<unsigned long long>(index), static_cast<unsigned long long>(m_source));
}

void StateTransfer::abandon_staging() {
    if (m_phase == Phase::Fetch && m_offset > 0) {
        const Wanted& w = m_wanted[m_current];
        abi::StageChunk chunk {};
        chunk.action = 2;
        sys::store_stage(m_store, w.name, w.name_len, &chunk);
    }
    m_image = m_offset = m_total = 0;
}

// The next voter is asked, from the list again.
void StateTransfer::next_source(const char* why) {
    const uint64_t failed = m_source;
    abandon_staging();
    m_source = next_after(m_source);
    ++m_counters.restarts;
    m_phase = Phase::List;
    m_wanted_count = m_current = 0;
    m_sent_ns = 0;
    m_silences = 0;
    m_waiting = false;
    KLOG_WARN("cluster: catching up: member %llu %s; asking member %llu", static_cast<unsigned long long>(failed), why,
              static_cast<unsigned long long>(m_source));
}

void StateTransfer::finish(bool gave_up) {
    if (gave_up) {
        abandon_staging();
        m_incomplete = true;
    }
    m_phase = Phase::Ready;
    if (m_incomplete) {
        ++m_counters.incomplete;
        KLOG_ERROR("cluster: catching up to the group's snapshot at %llu ended without every replicated collection "
                   "(see above): this voter's copy misses what it covers",
                   static_cast<unsigned long long>(m_index));
        return;
    }
    ++m_counters.transfers;
    KLOG_INFO("cluster: caught up to the group's snapshot at %llu: %u replicated collections here",
              static_cast<unsigned long long>(m_index), m_wanted_count);
}

void StateTransfer::pump(uint64_t now_ns) {
    for (auto& im : m_images)
        if (im.id && now_ns - im.touched_ns > kImageIdleNs)
            release(im);
    if (!active())
        return;
    if (now_ns - m_began_ns > kHoldLimitNs) {
        KLOG_ERROR("cluster: catching up: no voter sent the collections within %llu s",
                   static_cast<unsigned long long>(kHoldLimitNs / 1'000'000'000ull));
        finish(true);
        return;
    }
    if (m_sent_ns != 0 && now_ns - m_sent_ns < kRetryNs)
        return;
    bool fresh = m_sent_ns == 0 || m_waiting;
    if (m_sent_ns != 0 && !m_waiting && ++m_silences >= kMaxSilences) {
        next_source("did not answer");
        fresh = true;
    }
    m_waiting = false;
    send_request(now_ns, fresh);
}

// A request sent again keeps its sequence number, so that an answer which took longer than the
// retry (a large export at the source) is still taken.
void StateTransfer::send_request(uint64_t now_ns, bool fresh) {
    if (fresh)
        ++m_seq;
    size_t n = 0;
    if (m_phase == Phase::List) {
        n = header(kAskList, kOk, m_seq, m_index);
    } else {
        const Wanted& w = m_wanted[m_current];
        n = header(kAskPage, kOk, m_seq, m_index);
        put_le(g_out + n, m_image, 8);
        put_le(g_out + n + 8, m_offset, 8);
        g_out[n + 16] = w.name_len;
        std::memcpy(g_out + n + 17, w.name, w.name_len);
        n += 17 + w.name_len;
    }
    (void)m_channel->send(m_source, { g_out, n });
    m_sent_ns = now_ns ? now_ns : 1;
}

void StateTransfer::received(std::span<const uint8_t> message, uint64_t from, const kraft::MemberStatus& self,
                             uint64_t now_ns) {
    if (message.size() < kHeader || get_le(message.data() + 2, 2) != 0)
        return;
    const uint8_t type = message[0], status = message[1];
    const uint32_t seq = static_cast<uint32_t>(get_le(message.data() + 4, 4));
    const uint64_t index = get_le(message.data() + 8, 8);
    const std::span<const uint8_t> body = message.subspan(kHeader);
    if (type == kAskList || type == kAskPage) {
        // Served only by a voter that has applied at least as far as the snapshot.
        const bool behind = self.installing || self.applied_index < index;
        if (type == kAskList || behind)
            serve_list(from, seq, index, behind ? kBehind : kOk);
        else
            serve_page(from, seq, index, self.applied_index, body, now_ns);
        return;
    }
    // An answer: to the request awaiting one, from its source; nothing changes unless it is well
    // formed (a malformed one is asked again when the retry is due, and counts as silence).
    if (!active() || from != m_source || seq != m_seq || index != m_index)
        return;
    if (status == kBehind) {
        next_source("has not applied as far as the snapshot");
        m_sent_ns = now_ns; // (the next is asked when the retry is due, not at once)
        m_waiting = true;
        return;
    }
    if (status == kBusy) {
        m_waiting = true; // asked again when the retry is due, without counting a silence
        return;
    }
    Step step = Step::Bad;
    if (type == kListed && m_phase == Phase::List && status == kOk)
        step = on_list(body);
    else if (type == kPaged && m_phase == Phase::Fetch)
        step = on_page(status, body);
    if (step == Step::Bad)
        return;
    m_silences = 0;
    if (step == Step::Wait) {
        m_sent_ns = now_ns;
        m_waiting = true;
        return;
    }
    if (m_phase == Phase::Fetch && m_current >= m_wanted_count) {
        finish(false);
        return;
    }
    send_request(now_ns, true);
}

// Every replicated collection here the group covers goes: the source's list replaces them whole.
void StateTransfer::drop_replicated() {
    static abi::StoreEntry rows[abi::kMaxNamed];
    const int64_t n = patiently([this] { return sys::store_list(m_store, rows, abi::kMaxNamed); });
    for (int64_t i = 0; i < n; ++i) {
        const size_t len = std::strlen(rows[i].name);
        if (!rows[i].replicated || !covers({ rows[i].name, len }))
            continue;
        const int64_t r = patiently([&] { return sys::store_drop(m_store, rows[i].name, len); });
        if (r < 0 && r != err(ktl::Error::NotFound))
            KLOG_ERROR("cluster: catching up: replicated collection %s could not be dropped here: %s", rows[i].name,
                       ktl::error_name(static_cast<ktl::Error>(-r)));
    }
}

StateTransfer::Step StateTransfer::on_list(std::span<const uint8_t> body) {
    if (body.size() < 4)
        return Step::Bad;
    const uint32_t count = static_cast<uint32_t>(get_le(body.data(), 4));
    if (count > kMaxCollections)
        return Step::Bad;
    size_t at = 4;
    for (uint32_t i = 0; i < count; ++i) {
        if (at >= body.size())
            return Step::Bad;
        const uint8_t len = body[at];
        if (len == 0 || len > kNameMax || at + 1 + len + 4 > body.size())
            return Step::Bad;
        Wanted& w = m_wanted[i];
        std::memcpy(w.name, body.data() + at + 1, len);
        w.name[len] = '\0';
        w.name_len = len;
        w.capacity = static_cast<uint32_t>(get_le(body.data() + at + 1 + len, 4));
        if (!abi::valid_collection_name({ w.name, len }))
            return Step::Bad;
        at += 1 + len + 4;
    }
    if (at != body.size())
        return Step::Bad;
    drop_replicated();
    m_wanted_count = count;
    m_current = 0;
    m_image = m_offset = m_total = 0;
    m_phase = Phase::Fetch;
    return Step::Next;
}

// The collection being fetched is done with (kept, or left out and the transfer incomplete).
void StateTransfer::next_collection() {
    ++m_current;
    m_image = m_offset = m_total = 0;
}

StateTransfer::Step StateTransfer::on_page(uint8_t status, std::span<const uint8_t> body) {
    if (body.size() < 8 * 3 + 4 + 1)
        return Step::Bad;
    const uint64_t image = get_le(body.data(), 8), total = get_le(body.data() + 8, 8),
                   offset = get_le(body.data() + 16, 8);
    const uint32_t len = static_cast<uint32_t>(get_le(body.data() + 24, 4));
    const uint8_t name_len = body[28];
    Wanted& w = m_wanted[m_current];
    if (size_t(29) + name_len + len != body.size() || name_len != w.name_len ||
        std::memcmp(body.data() + 29, w.name, name_len) != 0 || offset != m_offset)
        return Step::Bad;       // (not the page asked for)
    if (status == kImageGone) { // its export was given back: from the first page again
        abandon_staging();
        ++m_counters.restarts;
        return Step::Next;
    }
    if (status == kGone) { // dropped at the source since it was listed: the log's drop follows
        KLOG_WARN("cluster: catching up: replicated collection %s is gone at member %llu", w.name,
                  static_cast<unsigned long long>(m_source));
        abandon_staging();
        next_collection();
        return Step::Next;
    }
    if (status != kOk)
        return Step::Bad;
    if (m_offset > 0 && (image != m_image || total != m_total)) { // exported again: from the start
        abandon_staging();
        ++m_counters.restarts;
        return Step::Next;
    }
    if (total == 0 || total > kMaxImage || len > kPage || offset + len > total || (len == 0 && offset < total))
        return Step::Bad;
    m_image = image;
    m_total = total;
    abi::StageChunk chunk {};
    chunk.total = total;
    chunk.offset = offset;
    chunk.data = reinterpret_cast<uint64_t>(body.data() + 29 + name_len);
    chunk.len = len;
    chunk.action = 0;
    int64_t r = sys::store_stage(m_store, w.name, w.name_len, &chunk);
    if (passing_refusal(r))
        return Step::Wait; // (the same page, asked again)
    if (r >= 0) {
        m_offset += len;
        if (m_offset < total)
            return Step::Next;
        // All of it here: loaded as an import is, kept as one of the group's, answered once the
        // checkpoint holding it is written.
        chunk = {};
        chunk.action = 1;
        chunk.capacity = w.capacity;
        chunk.flags = abi::kCreateReplicated;
        r = sys::store_stage(m_store, w.name, w.name_len, &chunk);
        if (passing_refusal(r)) { // (a refused commit gives the staged pages back: from the first page again)
            m_image = m_offset = m_total = 0;
            return Step::Wait;
        }
        if (r >= 0) {
            ++m_counters.collections;
            m_counters.bytes += total;
            next_collection();
            return Step::Next;
        }
    }
    // Not to be had here (a collection of this node's own has the name, no memory for it).
    KLOG_ERROR("cluster: catching up: replicated collection %s cannot be kept here: %s", w.name,
               ktl::error_name(static_cast<ktl::Error>(-r)));
    abandon_staging();
    m_incomplete = true;
    next_collection();
    return Step::Next;
}

void StateTransfer::serve_list(uint64_t to, uint32_t seq, uint64_t index, uint8_t status) {
    size_t n = header(kListed, status, seq, index);
    static abi::StoreEntry rows[abi::kMaxNamed];
    const int64_t listed = status == kOk ? sys::store_list(m_store, rows, abi::kMaxNamed) : 0;
    if (listed < 0) {
        g_out[1] = kBusy; // (the store is recovering)
    } else if (status == kOk) {
        uint32_t count = 0;
        size_t at = n + 4;
        for (int64_t i = 0; i < listed; ++i) {
            const size_t len = std::strlen(rows[i].name);
            if (!rows[i].replicated || !covers({ rows[i].name, len }))
                continue;
            g_out[at] = static_cast<uint8_t>(len);
            std::memcpy(g_out + at + 1, rows[i].name, len);
            put_le(g_out + at + 1 + len, rows[i].max_elements, 4);
            at += 1 + len + 4;
            ++count;
        }
        put_le(g_out + n, count, 4);
        n = at;
    }
    (void)m_channel->send(to, { g_out, n });
}

void StateTransfer::release(Image& image) {
    for (uint32_t i = 0; i < image.region_count; ++i) {
        sys::object_destroy(image.regions[i]);
        sys::cap_delete(image.regions[i]); // (a destroyed object's slot stays taken until deleted)
    }
    image = Image {};
}

// The requester's export of the named collection: the one it names; or, asked for its first page,
// its latest export of it if that is at least as new as the snapshot, else a new one, made whole
// now (the cluster task applies nothing meanwhile). Only replicated collections are served.
StateTransfer::Image* StateTransfer::image_for(uint64_t requester, std::span<const uint8_t> name, uint64_t id,
                                               uint64_t index, uint64_t applied, uint64_t now_ns, uint8_t& status) {
    auto same = [&](const Image& im) {
        return im.id && im.requester == requester && im.name_len == name.size() &&
               std::memcmp(im.name, name.data(), name.size()) == 0;
    };
    for (auto& im : m_images)
        if (same(im) && (id != 0 ? im.id == id : im.applied >= index)) {
            im.touched_ns = now_ns;
            return &im;
        }
    status = kImageGone;
    if (id != 0)
        return nullptr;
    Image* slot = nullptr; // the requester's old one, a free one, or the one idle longest
    for (auto& im : m_images)
        if (im.id && im.requester == requester)
            slot = &im;
    for (auto& im : m_images)
        if (!slot && !im.id)
            slot = &im;
    if (!slot) {
        slot = &m_images[0];
        for (auto& im : m_images)
            if (im.touched_ns < slot->touched_ns)
                slot = &im;
    }
    release(*slot);
    const int64_t col = sys::store_open(m_store, reinterpret_cast<const char*>(name.data()), name.size(), abi::kRead);
    if (col < 0) {
        status = col == err(ktl::Error::NotFound) ? kGone : kBusy;
        return nullptr;
    }
    Image im {};
    abi::VectorStats st {};
    const bool replicated = sys::vec_stats(static_cast<uint64_t>(col), &st) >= 0 && st.replicated != 0;
    const int64_t size = replicated ? sys::vec_export(static_cast<uint64_t>(col), nullptr, 0, 0) : 0;
    status = !replicated ? kGone : kBusy;
    bool whole = size > 0 && uint64_t(size) <= kMaxImage;
    for (uint64_t at = 0; whole && at < uint64_t(size); at += kRegionBytes) {
        const uint64_t bytes = uint64_t(size) - at < kRegionBytes ? uint64_t(size) - at : kRegionBytes;
        const int64_t region = sys::region_create(m_factory, bytes, 0, 0);
        whole = region >= 0;
        if (whole)
            im.regions[im.region_count++] = static_cast<uint32_t>(region);
    }
    for (uint64_t off = 0; whole && off < uint64_t(size); off += kPage) {
        const uint64_t want = uint64_t(size) - off < kPage ? uint64_t(size) - off : kPage;
        whole = sys::vec_export(static_cast<uint64_t>(col), g_page, want, off) == static_cast<int64_t>(want) &&
                sys::region_write(im.regions[off / kRegionBytes], off % kRegionBytes, g_page, want) >= 0;
    }
    // (Background linking after a boot changes the snapshot between pages: exported again later.)
    abi::VectorStats after {};
    whole = whole && sys::vec_stats(static_cast<uint64_t>(col), &after) >= 0 && after.writes == st.writes &&
            after.link_slices == st.link_slices;
    sys::cap_delete(static_cast<uint64_t>(col));
    if (!whole) {
        if (replicated)
            KLOG_WARN("cluster: replicated collection %.*s could not be exported for member %llu now (%lld bytes)",
                      static_cast<int>(name.size()), reinterpret_cast<const char*>(name.data()),
                      static_cast<unsigned long long>(requester), static_cast<long long>(size));
        release(im);
        return nullptr;
    }
    im.id = m_next_image++;
    im.requester = requester;
    im.total = uint64_t(size);
    im.touched_ns = now_ns;
    im.applied = applied;
    im.name_len = static_cast<uint8_t>(name.size());
    std::memcpy(im.name, name.data(), name.size());
    *slot = im;
    status = kOk;
    return slot;
}

void StateTransfer::serve_page(uint64_t to, uint32_t seq, uint64_t index, uint64_t applied,
                               std::span<const uint8_t> body, uint64_t now_ns) {
    if (body.size() < 17 || body[16] == 0 || body[16] > kNameMax || body.size() != size_t(17) + body[16])
        return;
    const uint64_t id = get_le(body.data(), 8), offset = get_le(body.data() + 8, 8);
    const std::span<const uint8_t> name = body.subspan(17);
    uint8_t status = kOk;
    Image* im = image_for(to, name, id, index, applied, now_ns, status);
    if (im && offset > im->total)
        im = nullptr, status = kGone;
    size_t n = header(kPaged, status, seq, index);
    const uint64_t len = !im ? 0 : im->total - offset < kPage ? im->total - offset : kPage;
    put_le(g_out + n, im ? im->id : 0, 8);
    put_le(g_out + n + 8, im ? im->total : 0, 8);
    put_le(g_out + n + 16, offset, 8);
    put_le(g_out + n + 24, len, 4);
    g_out[n + 28] = static_cast<uint8_t>(name.size());
    std::memcpy(g_out + n + 29, name.data(), name.size());
    n += 29 + name.size();
    if (len && sys::region_read(im->regions[offset / kRegionBytes], offset % kRegionBytes, g_out + n, len) !=
                   static_cast<int64_t>(len))
        return; // (the requester asks again)
    n += len;
    ++m_counters.served_pages;
    m_counters.served_bytes += len;
    (void)m_channel->send(to, { g_out, n });
}

} // namespace clusterd
