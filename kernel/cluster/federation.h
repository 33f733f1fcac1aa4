#pragma once
// Federated search (issue 35; docs/swarm.md "Federated search"): `vector_search {scope:
// "cluster"}` on any node asks every live member for its top k in its own collection of that
// name, gathers the answers until a deadline, and merges them (ascending distance; an id found in
// two replicas of a replicated collection once; nodes' own collections are separate id spaces, so
// their hits all stay, each naming its node; a collection of another metric than the first
// answer's does not fit). A replicated collection is asked of one replica: a voter that holds it searches its
// own copy and asks no other voter. Members that hold no such collection (or one of another
// dimension) say so; members silent at the deadline are named missing and the result is partial.
//
// A read of a replicated collection at a node that holds no copy of it (a node outside its group:
// docs/replication.md "Reads from outside a group") travels the same way, asked of the
// collection's live voters only: each serves it from its copy, after a read index through the
// collection's group unless the caller asked for consistency "local", and the first answer ends
// it. The voters are asked one at a time (a get's answer is up to 13 datagrams, three at once would
// overflow the asker's receive ring): the next when one refuses or is silent for a second. A search, a get of up to 16
// ids (as many vectors as one answer holds; the asker asks again for the rest) or the collection's stats.
//
// The cluster task runs both sides on the membership protocol's own UDP endpoint (the kernel gives
// a task two endpoints, and the consensus group has the other): lib/raft/wire datagrams of group
// kGroup, sealed under the cluster key, from and to naming IPv4 addresses, so a node without the
// key can neither ask nor answer. Messages (little-endian):
//   request: type 1 | mode u8 | op u8 | flags u8 (kFedWithProvenance) | id u32 | k u32 | ef u32 |
//            dim u32 | name length u8 | name | search: dim floats, then the filter's ids (u64, from
//            outside only); get: k ids (u64); stats: nothing
//   answer:  type 2 | status u8 (0 hits, 1 no such collection, 2 it does not fit the query,
//            3 not confirmed) | replicated u8 | metric u8 (0xff: none) | id u32 | count u32 |
//            count x (id u64, distance f32[, provenance u64 when asked]) | name length u8 | the
//            answering node's name
//   a get's or stats' answer: type 3 | status u8 | complete u8 | u8 0 | id u32 | count u32 | dim u32 |
//            not found u32 | that many ids (u64) | payload bytes u32 | payload (get: count x
//            (id u64, provenance u64, dim floats); stats: a VectorStats) | name length u8 | name
#include <cstddef>
#include <cstdint>
#include <span>

#include <abi/cluster.h>
#include <raft/wire.h>

namespace clusterd {

class Federation {
public:
    static constexpr uint64_t kGroup = 0x4645440000000000ull; // "FED"
    static constexpr size_t kMaxMessage = 20 * 1024;
    static constexpr size_t kSenders = 6; // members whose messages are put together at once

    struct Target {
        uint32_t ip;
        uint16_t port;
        char name[32];
    };

    // store: the VectorStore capability; endpoint: the membership protocol's Datagram slot.
    void start(uint32_t store, uint32_t endpoint, uint32_t self_ip, const char* self_name, raftwire::Key key,
               uint64_t epoch);
    // Takes the next search when none gathers (asking `members`, the live ones but this node) and
    // completes the one gathering once every member asked answered or its deadline passed.
    void pump(uint64_t now_ns, std::span<const Target> members);
    // A datagram of kGroup (raftwire::peek_group) from ip:port.
    void receive(uint32_t ip, uint16_t port, std::span<const uint8_t> datagram, uint64_t now_ns);
    // The gathering search's deadline (0: none gathers): the task waits no longer than that (a read
    // from outside: nor past the time the next voter is to be asked).
    uint64_t deadline_ns() const;

    struct Counters {
        uint64_t searches, partial, served, refused;
    };
    // Reads from outside waiting here for their read index (served once this copy has applied it).
    static constexpr size_t kPending = 4;
    Counters counters() const { return m_counters; }

private:
    struct Sender {
        uint32_t ip;
        uint64_t used; // for the least recently used to go
        raftwire::Reassembler* in;
    };
    void serve(uint32_t ip, uint16_t port, std::span<const uint8_t> message);
    // Answers a request that adds up (serve checked it) from this node's copy as it is now.
    void execute(uint32_t ip, uint16_t port, std::span<const uint8_t> message);
    void refuse(uint32_t ip, uint16_t port, std::span<const uint8_t> message, uint8_t status);
    void send_answer(uint32_t ip, uint16_t port, size_t at);
    // The reads from outside whose read index this copy has applied (or that failed) answered.
    void serve_pending(uint64_t now_ns);
    void answered(uint32_t ip, std::span<const uint8_t> message);
    void answered_read(uint32_t ip, std::span<const uint8_t> message);
    // A read from outside: the collection's live voters among `members` asked.
    void ask_voters(const cluster_abi::FedQuery& q, std::span<const Target> members);
    size_t put_request(const cluster_abi::FedQuery& q, uint32_t id);
    size_t get_here(std::span<const uint8_t> request, uint32_t id);
    size_t stats_here(std::span<const uint8_t> request, uint32_t id);
    // This node's own top k of the collection (status as an answer's); `replicated` set.
    // `filter`: only these ids (strictly ascending); `provenance`: each hit's write's provenance node
    // into g_provenance.
    uint8_t search_here(const char* name, size_t name_len, uint32_t k, uint32_t ef, uint32_t dim, const float* query,
                        uint32_t& count, bool& replicated, uint8_t& metric, std::span<const uint64_t> filter = {},
                        bool provenance = false);
    void merge(uint64_t id, float distance, uint32_t node, uint64_t provenance = 0);
    void finish();
    bool send(uint32_t ip, uint16_t port, std::span<const uint8_t> message);
    // A read from outside: the next voter asked, when the one asked last refused or stayed silent.
    void ask_next(uint64_t now_ns);
    Sender* sender(uint32_t ip);

    uint32_t m_store = ~0u, m_endpoint = ~0u, m_self_ip = 0;
    char m_self[32] = "";
    raftwire::Key m_key {};
    uint64_t m_epoch = 0, m_seq = 0, m_uses = 0;
    Sender m_senders[kSenders] {};
    size_t m_sender_count = 0;

    struct Pending {
        uint32_t ip;
        uint16_t port;
        uint16_t length; // 0: free
        uint64_t read;   // consensus::peer_read_begin's handle
        uint64_t since_ns;
    };
    Pending m_pending[kPending] {};

    // The search gathering (m_id 0: none).
    uint32_t m_id = 0;
    uint8_t m_mode = 0;       // its FedMode
    uint8_t m_op = 0;         // its FedOp
    uint8_t m_flags = 0;      // its FedQuery::flags (a read from outside's)
    uint32_t m_asked = 0;     // a read from outside: the targets asked so far (in order)
    uint64_t m_asked_ns = 0;  // when the last was asked
    size_t m_request_len = 0; // the request, kept for the next voter
    uint64_t m_deadline_ns = 0;
    uint32_t m_k = 0;
    Target m_targets[cluster_abi::kFedMaxNodes] {};
    uint8_t m_heard[cluster_abi::kFedMaxNodes] {};
    uint32_t m_target_count = 0;
    cluster_abi::FedResult m_result {};
    bool m_replicated[cluster_abi::kFedMaxNodes] {}; // per answering node: its copy is a replica
    uint8_t m_metric = 0xff;                         // the first answer's (0xff: none yet)
    bool m_truncated = false;                        // more members than one search asks
    Counters m_counters {};
};

} // namespace clusterd
