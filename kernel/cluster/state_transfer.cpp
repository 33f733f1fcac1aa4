#include "state_transfer.h"

#include "../log.h"
#include <abi/sys.h>
#include <abi/vector.h>

#include <cstring>

namespace clusterd {
namespace {

enum Type : uint8_t { kAskList = 1, kListed = 2, kAskPage = 3, kPaged = 4 };
enum Status : uint8_t { kOk = 0, kBehind = 1, kRefused = 2, kImageGone = 3 };

constexpr size_t kHeader = 16;
constexpr uint64_t kRetryNs = 500'000'000;           // a request unanswered this long is sent again
constexpr uint32_t kMaxSilences = 6;                 // then the next voter is asked
constexpr uint64_t kImageIdleNs = 60'000'000'000ull; // a source gives an export back after this
constexpr uint64_t kMaxImage = 16ull << 20;          // region_create's bound
constexpr size_t kMaxMessage = kHeader + 8 * 3 + 4 + 1 + 64 + StateTransfer::kPage;
static_assert(kMaxMessage <= PeerChannel::kMaxMessage);

alignas(8) uint8_t g_out[kMaxMessage]; // the message being sent (the cluster task is one task)
alignas(8) uint8_t g_page[StateTransfer::kPage];

void put(uint8_t* p, uint64_t v, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i)
        p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get(const uint8_t* p, size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i)
        v |= uint64_t(p[i]) << (8 * i);
    return v;
}
size_t header(uint8_t type, uint8_t status, uint32_t seq, uint64_t index) {
    g_out[0] = type;
    g_out[1] = status;
    put(g_out + 2, 0, 2);
    put(g_out + 4, seq, 4);
    put(g_out + 8, index, 8);
    return kHeader;
}
int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }

// A store call refused for a passing reason (recovering, a checkpoint, requests still running on
// a collection) is made again every millisecond, two minutes at most (as the applier's are).
template <typename Call>
int64_t patiently(Call&& call) {
    int64_t r = 0;
    for (uint32_t i = 0; i < 120'000; ++i) {
        r = call();
        if (r != err(ktl::Error::WouldBlock) && r != err(ktl::Error::NotReady))
            break;
        sys::sleep(1'000'000);
    }
    return r;
}

} // namespace

void StateTransfer::start(uint32_t store, uint32_t factory, PeerChannel& channel, uint32_t voters, uint64_t self) {
    m_store = store;
    m_factory = factory;
    m_channel = &channel;
    m_voters = voters;
    m_self = self;
}

void StateTransfer::begin(uint64_t index, uint64_t from) {
    m_index = index;
    m_source = from != 0 && from != m_self ? from : (m_self % m_voters) + 1;
    m_silences = 0;
    m_phase = Phase::List;
    m_sent_ns = 0;
    KLOG_INFO("cluster: catching up to the group's snapshot at %llu: fetching its replicated collections from "
              "member %llu",
              static_cast<unsigned long long>(index), static_cast<unsigned long long>(m_source));
}

void StateTransfer::restart(const char* why) {
    if (m_phase == Phase::Fetch && m_offset > 0) {
        const Wanted& w = m_wanted[m_current];
        abi::StageChunk chunk {};
        chunk.action = 2;
        sys::store_stage(m_store, w.name, w.name_len, &chunk);
    }
    ++m_counters.restarts;
    m_phase = Phase::List;
    m_wanted_count = m_current = 0;
    m_image = m_offset = m_total = 0;
    m_sent_ns = 0;
    m_silences = 0;
    KLOG_WARN("cluster: catching up starts over from member %llu (%s)", static_cast<unsigned long long>(m_source), why);
}

void StateTransfer::pump(uint64_t now_ns) {
    for (auto& im : m_images)
        if (im.id && now_ns - im.touched_ns > kImageIdleNs)
            release(im);
    if (m_phase != Phase::List && m_phase != Phase::Fetch)
        return;
    if (m_sent_ns != 0 && now_ns - m_sent_ns < kRetryNs)
        return;
    if (m_sent_ns != 0 && ++m_silences >= kMaxSilences) {
        m_source = m_source % m_voters + 1;
        if (m_source == m_self)
            m_source = m_source % m_voters + 1;
        restart("the source did not answer");
    }
    send_request(now_ns);
}

void StateTransfer::send_request(uint64_t now_ns) {
    size_t n = 0;
    if (m_phase == Phase::List) {
        n = header(kAskList, kOk, ++m_seq, m_index);
    } else {
        const Wanted& w = m_wanted[m_current];
        n = header(kAskPage, kOk, ++m_seq, m_index);
        put(g_out + n, m_image, 8);
        put(g_out + n + 8, m_offset, 8);
        g_out[n + 16] = w.name_len;
        std::memcpy(g_out + n + 17, w.name, w.name_len);
        n += 17 + w.name_len;
    }
    (void)m_channel->send(m_source, { g_out, n });
    m_sent_ns = now_ns ? now_ns : 1;
}

void StateTransfer::received(std::span<const uint8_t> message, uint64_t from, const kraft::MemberStatus& self,
                             uint64_t now_ns) {
    if (message.size() < kHeader || get(message.data() + 2, 2) != 0)
        return;
    const uint8_t type = message[0], status = message[1];
    const uint32_t seq = static_cast<uint32_t>(get(message.data() + 4, 4));
    const uint64_t index = get(message.data() + 8, 8);
    const std::span<const uint8_t> body = message.subspan(kHeader);
    if (type == kAskList || type == kAskPage) {
        // Served only by a voter that has applied at least as far as the snapshot.
        const bool behind = self.installing || self.applied_index < index;
        if (type == kAskList || behind)
            serve_list(from, seq, index, behind ? kBehind : kOk);
        else
            serve_page(from, seq, index, body, now_ns);
        return;
    }
    // An answer: to the request awaiting one, from its source.
    if ((m_phase != Phase::List && m_phase != Phase::Fetch) || from != m_source || seq != m_seq || index != m_index)
        return;
    m_sent_ns = 0;
    m_silences = 0;
    if (status == kBehind) {
        m_source = m_source % m_voters + 1;
        if (m_source == m_self)
            m_source = m_source % m_voters + 1;
        restart("the source has not applied as far as the snapshot");
    } else if (type == kListed && m_phase == Phase::List && status == kOk) {
        on_list(body);
    } else if (type == kPaged && m_phase == Phase::Fetch) {
        if (status == kImageGone) {
            m_image = m_offset = 0; // its export was given back: from the first page again
            ++m_counters.restarts;
        } else if (status != kOk) {
            KLOG_ERROR("cluster: catching up: member %llu cannot send collection %s (gone, or over 16 MiB): it is "
                       "left out here",
                       static_cast<unsigned long long>(m_source), m_wanted[m_current].name);
            ++m_current;
            m_image = m_offset = 0;
        } else {
            on_page(body, now_ns);
        }
    }
    if (m_current >= m_wanted_count && m_phase == Phase::Fetch) {
        m_phase = Phase::Ready;
        ++m_counters.transfers;
        KLOG_INFO("cluster: caught up to the group's snapshot at %llu: %u replicated collections here",
                  static_cast<unsigned long long>(m_index), m_wanted_count);
        return;
    }
    if (m_phase == Phase::List || m_phase == Phase::Fetch)
        send_request(now_ns);
}

// Every replicated collection here goes: the source's list replaces them whole.
void StateTransfer::drop_replicated() {
    static abi::StoreEntry rows[abi::kMaxNamed];
    const int64_t n = patiently([this] { return sys::store_list(m_store, rows, abi::kMaxNamed); });
    for (int64_t i = 0; i < n; ++i) {
        if (!rows[i].replicated)
            continue;
        const size_t len = std::strlen(rows[i].name);
        const int64_t r = patiently([&] { return sys::store_drop(m_store, rows[i].name, len); });
        if (r < 0 && r != err(ktl::Error::NotFound))
            KLOG_ERROR("cluster: catching up: replicated collection %s could not be dropped here: %s", rows[i].name,
                       ktl::error_name(static_cast<ktl::Error>(-r)));
    }
}

void StateTransfer::on_list(std::span<const uint8_t> body) {
    if (body.size() < 4)
        return;
    const uint32_t count = static_cast<uint32_t>(get(body.data(), 4));
    if (count > kMaxCollections)
        return;
    size_t at = 4;
    for (uint32_t i = 0; i < count; ++i) {
        if (at >= body.size())
            return;
        const uint8_t len = body[at];
        if (len == 0 || len > kNameMax || at + 1 + len + 4 > body.size())
            return;
        Wanted& w = m_wanted[i];
        std::memcpy(w.name, body.data() + at + 1, len);
        w.name[len] = '\0';
        w.name_len = len;
        w.capacity = static_cast<uint32_t>(get(body.data() + at + 1 + len, 4));
        if (!abi::valid_collection_name({ w.name, len }))
            return;
        at += 1 + len + 4;
    }
    if (at != body.size())
        return;
    drop_replicated();
    m_wanted_count = count;
    m_current = 0;
    m_image = m_offset = m_total = 0;
    m_phase = Phase::Fetch;
}

void StateTransfer::on_page(std::span<const uint8_t> body, uint64_t now_ns) {
    (void)now_ns;
    if (body.size() < 8 * 3 + 4 + 1)
        return;
    const uint64_t image = get(body.data(), 8), total = get(body.data() + 8, 8), offset = get(body.data() + 16, 8);
    const uint32_t len = static_cast<uint32_t>(get(body.data() + 24, 4));
    const uint8_t name_len = body[28];
    Wanted& w = m_wanted[m_current];
    if (size_t(29) + name_len + len != body.size() || name_len != w.name_len ||
        std::memcmp(body.data() + 29, w.name, name_len) != 0 || offset != m_offset)
        return;                             // (not the page asked for: asked again)
    if (m_offset > 0 && image != m_image) { // the source exported it again: from the start
        abi::StageChunk chunk {};
        chunk.action = 2;
        sys::store_stage(m_store, w.name, w.name_len, &chunk);
        m_image = m_offset = 0;
        ++m_counters.restarts;
        return;
    }
    if (total == 0 || total > kMaxImage || len > kPage || offset + len > total || (len == 0 && offset < total))
        return;
    m_image = image;
    m_total = total;
    abi::StageChunk chunk {};
    chunk.total = total;
    chunk.offset = offset;
    chunk.data = reinterpret_cast<uint64_t>(body.data() + 29 + name_len);
    chunk.len = len;
    chunk.action = 0;
    int64_t r = sys::store_stage(m_store, w.name, w.name_len, &chunk);
    if (r == err(ktl::Error::WouldBlock) || r == err(ktl::Error::NotReady))
        return; // (asked again)
    if (r >= 0) {
        m_offset += len;
        if (m_offset < total)
            return;
        // All of it here: loaded as an import is, kept as one of the group's, answered once the
        // checkpoint holding it is written.
        chunk = {};
        chunk.action = 1;
        chunk.capacity = w.capacity;
        chunk.flags = abi::kCreateReplicated;
        r = sys::store_stage(m_store, w.name, w.name_len, &chunk);
        if (r >= 0) {
            ++m_counters.collections;
            m_counters.bytes += total;
        }
    }
    if (r < 0)
        KLOG_ERROR("cluster: catching up: replicated collection %s was not kept here: %s", w.name,
                   ktl::error_name(static_cast<ktl::Error>(-r)));
    ++m_current;
    m_image = m_offset = m_total = 0;
}

void StateTransfer::serve_list(uint64_t to, uint32_t seq, uint64_t index, uint8_t status) {
    size_t n = header(kListed, status, seq, index);
    static abi::StoreEntry rows[abi::kMaxNamed];
    const int64_t listed = status == kOk ? sys::store_list(m_store, rows, abi::kMaxNamed) : 0;
    if (listed < 0) {
        g_out[1] = kBehind; // (the store is recovering: another voter may answer)
    } else {
        uint32_t count = 0;
        size_t at = n + 4;
        for (int64_t i = 0; i < listed; ++i) {
            if (!rows[i].replicated)
                continue;
            const size_t len = std::strlen(rows[i].name);
            g_out[at] = static_cast<uint8_t>(len);
            std::memcpy(g_out + at + 1, rows[i].name, len);
            put(g_out + at + 1 + len, rows[i].max_elements, 4);
            at += 1 + len + 4;
            ++count;
        }
        put(g_out + n, count, 4);
        n = status == kOk ? at : n;
    }
    (void)m_channel->send(to, { g_out, n });
}

void StateTransfer::release(Image& image) {
    if (image.id)
        sys::object_destroy(image.region);
    image = Image {};
}

// The requester's export of the named collection: the one it names, or (asked for its first
// page) a new one, made whole now (the cluster task applies nothing meanwhile).
StateTransfer::Image* StateTransfer::image_for(uint64_t requester, std::span<const uint8_t> name, uint64_t id,
                                               uint64_t now_ns, uint8_t& status) {
    for (auto& im : m_images)
        if (im.id && im.id == id && im.requester == requester && im.name_len == name.size() &&
            std::memcmp(im.name, name.data(), name.size()) == 0) {
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
    status = kRefused;
    const int64_t col = sys::store_open(m_store, reinterpret_cast<const char*>(name.data()), name.size(), abi::kRead);
    if (col < 0)
        return nullptr;
    abi::VectorStats st {};
    const int64_t size = sys::vec_stats(static_cast<uint64_t>(col), &st) < 0
                             ? -1
                             : sys::vec_export(static_cast<uint64_t>(col), nullptr, 0, 0);
    const int64_t region = size > 0 && uint64_t(size) <= kMaxImage
                               ? sys::region_create(m_factory, static_cast<uint64_t>(size), 0, 0)
                               : -1;
    bool whole = region >= 0;
    for (uint64_t off = 0; whole && off < uint64_t(size); off += kPage) {
        const uint64_t want = uint64_t(size) - off < kPage ? uint64_t(size) - off : kPage;
        whole = sys::vec_export(static_cast<uint64_t>(col), g_page, want, off) == static_cast<int64_t>(want) &&
                sys::region_write(static_cast<uint64_t>(region), off, g_page, want) >= 0;
    }
    sys::cap_delete(static_cast<uint64_t>(col));
    if (!whole) {
        if (region >= 0)
            sys::object_destroy(static_cast<uint64_t>(region));
        KLOG_WARN("cluster: replicated collection %.*s could not be exported for member %llu (%lld bytes)",
                  static_cast<int>(name.size()), reinterpret_cast<const char*>(name.data()),
                  static_cast<unsigned long long>(requester), static_cast<long long>(size));
        return nullptr;
    }
    *slot = Image { m_next_image++,
                    requester,
                    uint64_t(size),
                    now_ns,
                    static_cast<uint32_t>(region),
                    static_cast<uint8_t>(name.size()),
                    {} };
    std::memcpy(slot->name, name.data(), name.size());
    status = kOk;
    return slot;
}

void StateTransfer::serve_page(uint64_t to, uint32_t seq, uint64_t index, std::span<const uint8_t> body,
                               uint64_t now_ns) {
    if (body.size() < 17 || body[16] == 0 || body[16] > kNameMax || body.size() != size_t(17) + body[16])
        return;
    const uint64_t id = get(body.data(), 8), offset = get(body.data() + 8, 8);
    const std::span<const uint8_t> name = body.subspan(17);
    uint8_t status = kOk;
    Image* im = image_for(to, name, id, now_ns, status);
    if (im && offset > im->total)
        im = nullptr, status = kRefused;
    size_t n = header(kPaged, status, seq, index);
    const uint64_t len = !im ? 0 : im->total - offset < kPage ? im->total - offset : kPage;
    put(g_out + n, im ? im->id : 0, 8);
    put(g_out + n + 8, im ? im->total : 0, 8);
    put(g_out + n + 16, offset, 8);
    put(g_out + n + 24, len, 4);
    g_out[n + 28] = static_cast<uint8_t>(name.size());
    std::memcpy(g_out + n + 29, name.data(), name.size());
    n += 29 + name.size();
    if (len && sys::region_read(im->region, offset, g_out + n, len) != static_cast<int64_t>(len))
        return; // (the requester asks again)
    n += len;
    ++m_counters.served_pages;
    m_counters.served_bytes += len;
    (void)m_channel->send(to, { g_out, n });
}

} // namespace clusterd
