#pragma once
// The replicated collections a voter installs with the leader's snapshot (issue 35;
// docs/replication.md "Catching up"). The group's snapshot is its applied count and hash; the
// collections it covers are fetched from a voter that has applied at least that far, before the
// snapshot is written to this voter's disk (kraft::StateMachine::install_ready), so a snapshot on a
// disk never names state the store lacks:
//   1. every replicated collection here the group covers is dropped (this copy is replaced whole);
//   2. the source lists the replicated collections the group covers; each is fetched as its snapshot (the store's
//      export format), page by page, staged and loaded here as an import is, and answered once the
//      checkpoint holding it is written;
//   3. then the member writes the snapshot and takes the entries after it.
// A source exports a collection whole into a region of its own when asked for its first page, so
// the pages a voter joins belong to one state of it (the cluster task applies nothing while it
// exports). That state may be newer than the snapshot: the entries after the snapshot are applied
// again on top of it, and every change is one that sets a state (a create that is there, a drop
// that is gone, an upsert or delete by id), so the copy ends where the group's log says.
// A source that is behind or silent is replaced by the next voter (the transfer starts over); one
// that is busy is asked again. A request sent again keeps its number, so a slow answer still counts.
// While it runs the voter votes for no one (upstream's rule while installing): past two minutes
// the snapshot goes in without what is missing (logged, `catch_up.incomplete`), so that a group
// whose other voters are all behind the snapshot can still elect.
// Messages: PeerChannel group kGroup, little-endian:
//   type u8 | status u8 | u16 0 | seq u32 | snapshot index u64 | then by type
//   1 list request: nothing           2 list: count u32, each: name length u8, name, capacity u32
//   3 page request: image u64, offset u64, name length u8, name
//   4 page: image u64, total u64, offset u64, length u32, name length u8, name, bytes
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "../raft/raft_member.h"
#include "peer_channel.h"

namespace clusterd {

class StateTransfer {
public:
    static constexpr uint64_t kGroup = 0x5846520000000000ull; // "XFR"
    static constexpr size_t kPage = 16 * 1024;
    static constexpr uint32_t kMaxRegions = 5; // an export in regions of 16 MiB (a collection: 64 MiB at most)

    // store: the VectorStore capability; factory: for the regions a source exports into.
    void start(uint32_t store, uint32_t factory, PeerChannel& channel, uint64_t self);
    // The group's voters now (raft ids, from the configuration): the sources asked in turn.
    void set_sources(std::span<const uint64_t> voters);
    // Which replicated collections the group's snapshots cover (a collection's own group: that
    // one; group 0: those placed in no group of their own); without it, every one.
    using Covers = bool (*)(const void* context, std::string_view name);
    void set_scope(Covers covers, const void* context) {
        m_covers = covers;
        m_covers_context = context;
    }

    // This voter is to install a snapshot up to log index `index` sent by `from`.
    void begin(uint64_t index, uint64_t from, uint64_t now_ns);
    bool ready() const { return m_phase == Phase::Ready; }
    // Ready without every collection (one could not be kept here, or no voter sent them in time).
    bool incomplete() const { return m_incomplete; }
    void finished() { m_phase = Phase::Idle; }
    // One round: a request (again) where one is due; a source's idle exports given back.
    void pump(uint64_t now_ns);
    // A message of the channel from voter `from`; `self` is this member's status now.
    void received(std::span<const uint8_t> message, uint64_t from, const kraft::MemberStatus& self, uint64_t now_ns);

    struct Counters {
        uint64_t transfers, collections, bytes; // completed here (a voter caught up)
        uint64_t restarts;                      // a source replaced, or its export changed
        uint64_t incomplete;                    // installed without every collection
        uint64_t served_pages, served_bytes;    // to other voters
    };
    Counters counters() const { return m_counters; }
    bool active() const { return m_phase == Phase::List || m_phase == Phase::Fetch; }

private:
    enum class Phase : uint8_t { Idle, List, Fetch, Ready };
    enum class Step : uint8_t { Bad, Wait, Next }; // an answer: malformed; to ask again later; taken
    static constexpr size_t kMaxCollections = 32;  // abi::kMaxNamed
    static constexpr size_t kNameMax = 64;
    static constexpr size_t kImages = 2;
    struct Wanted {
        char name[kNameMax + 1];
        uint8_t name_len;
        uint32_t capacity;
    };
    struct Image { // a collection exported whole for one voter
        uint64_t id, requester, total, touched_ns;
        uint64_t applied; // the log index this voter had applied when it exported it
        uint32_t regions[kMaxRegions];
        uint32_t region_count;
        uint8_t name_len;
        char name[kNameMax + 1];
    };

    void send_request(uint64_t now_ns, bool fresh);
    void next_source(const char* why);
    void abandon_staging();
    void next_collection();
    void finish(bool gave_up);
    void drop_replicated();
    Step on_list(std::span<const uint8_t> body);
    Step on_page(uint8_t status, std::span<const uint8_t> body);
    void serve_list(uint64_t to, uint32_t seq, uint64_t index, uint8_t status);
    void serve_page(uint64_t to, uint32_t seq, uint64_t index, uint64_t applied, std::span<const uint8_t> body,
                    uint64_t now_ns);
    Image* image_for(uint64_t requester, std::span<const uint8_t> name, uint64_t id, uint64_t index, uint64_t applied,
                     uint64_t now_ns, uint8_t& status);
    void release(Image& image);

    bool covers(std::string_view name) const { return !m_covers || m_covers(m_covers_context, name); }

    uint32_t m_store = ~0u, m_factory = ~0u;
    PeerChannel* m_channel = nullptr;
    Covers m_covers = nullptr;
    const void* m_covers_context = nullptr;
    uint64_t m_sources[kraft::kMaxServers] = {};
    uint32_t m_source_count = 0;
    uint64_t next_after(uint64_t id) const; // the source after `id` in m_sources (not this member)
    uint64_t m_self = 0;

    // The voter catching up.
    Phase m_phase = Phase::Idle;
    uint64_t m_index = 0, m_source = 0, m_began_ns = 0;
    uint32_t m_seq = 0;      // of the request awaiting its answer
    uint64_t m_sent_ns = 0;  // when it was sent (0: none awaits)
    uint32_t m_silences = 0; // requests unanswered from this source
    bool m_waiting = false;  // asked to wait: the request goes again when the retry is due
    bool m_incomplete = false;
    Wanted m_wanted[kMaxCollections] {};
    uint32_t m_wanted_count = 0, m_current = 0;
    uint64_t m_image = 0, m_offset = 0, m_total = 0;

    // The voter serving.
    Image m_images[kImages] {};
    uint64_t m_next_image = 1;

    Counters m_counters {};
};

} // namespace clusterd
