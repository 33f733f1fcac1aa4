// The simulation (sim.h). One Sim object per run; nothing is shared between runs but the engine's
// heap hooks, which are set for the length of a run.
#include "sim.h"

#include "raft/engine.h"
#include "raft/wire.h"

// The compatibility layer queues the callbacks of completed client requests; the raft_io
// implementation fires them once per turn of its loop (upstream's libuv backend does so in its
// prepare and check handles). Internal to upstream (src/legacy.h), hence declared here.
extern "C" void LegacyFireCompletedRequests(struct raft* r);

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace raftsim {
namespace {

using ApplyRequest = struct raft_apply; // (raft_apply alone names the function)

// ---- random numbers: one seeded generator per run, one per node (derived from it) ----------

struct Rng {
    uint64_t state;
    uint64_t next() { // splitmix64
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    unsigned below(unsigned n) { return n == 0 ? 0 : static_cast<unsigned>(next() % n); }
    unsigned between(unsigned lo, unsigned hi) { return lo + below(hi - lo + 1); }
    bool chance(unsigned percent) { return below(100) < percent; }
};

// ---- the engine's heap: counted, so a run ends with every allocation returned -------------

// A run's heap, like the bounded heap a kernel group would have: what the engine still holds
// when every node has closed is counted (Result::leaked) and given back.
std::unordered_set<void*> g_live;
void* track(void* p) {
    if (p)
        g_live.insert(p);
    return p;
}
void* heap_malloc(void*, size_t n) { return track(std::malloc(n ? n : 1)); }
void heap_free(void*, void* p) {
    if (p) {
        g_live.erase(p);
        std::free(p);
    }
}
void* heap_calloc(void*, size_t n, size_t size) { return track(std::calloc(n ? n : 1, size ? size : 1)); }
void* heap_realloc(void*, void* p, size_t n) {
    void* q = std::realloc(p, n ? n : 1);
    if (q) {
        if (p)
            g_live.erase(p);
        g_live.insert(q);
    }
    return q;
}
void* heap_aligned_alloc(void*, size_t alignment, size_t n) {
    size_t rounded = (n + alignment - 1) / alignment * alignment;
    return track(std::aligned_alloc(alignment, rounded ? rounded : alignment));
}
void heap_aligned_free(void*, size_t, void* p) { heap_free(nullptr, p); }
raft_heap g_heap = {
    nullptr, heap_malloc, heap_free, heap_calloc, heap_realloc, heap_aligned_alloc, heap_aligned_free
};

// ---- what a node's disk and the network carry ----------------------------------------------

struct Entry {
    raft_term term = 0;
    int type = 0;
    std::vector<uint8_t> data;
};

uint64_t hash_entry(int type, const void* data, size_t len) {
    uint64_t h = 1469598103934665603ull ^ static_cast<uint64_t>(type);
    auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < len; ++i)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

struct Snap {
    raft_index index = 0;
    raft_term term = 0;
    std::vector<uint8_t> conf; // raft_configuration_encode()'s bytes
    raft_index conf_index = 0;
    std::vector<uint8_t> data;
};

struct Disk { // what survives a crash
    raft_term term = 0;
    raft_id vote = 0;
    bool has_snap = false;
    Snap snap;
    raft_index start = 1; // index of log[0]
    std::vector<Entry> log;
};

enum class OpKind { append, truncate, snapshot_put, snapshot_get };
struct Op { // a disk request in flight: completed in order, lost on a crash
    OpKind kind = OpKind::append;
    raft_index index = 0;
    std::vector<Entry> entries;
    raft_io_append* append = nullptr;
    raft_io_append_cb append_cb = nullptr;
    Snap snap;
    unsigned trailing = 0;
    raft_io_snapshot_put* put = nullptr;
    raft_io_snapshot_put_cb put_cb = nullptr;
    raft_io_snapshot_get* get = nullptr;
    raft_io_snapshot_get_cb get_cb = nullptr;
};

struct Message { // a message on the wire: a deep copy, owned by the network
    raft_message head;
    raft_id from = 0, to = 0;
    uint64_t epoch = 0, seq = 0; // the sender's life and its count of messages in that life
    std::vector<Entry> entries;
    std::vector<uint8_t> conf;
    std::vector<uint8_t> data;
};

std::vector<uint8_t> encode_conf(const raft_configuration* conf) {
    raft_buffer buf {};
    if (raft_configuration_encode(conf, &buf) != 0)
        std::abort();
    std::vector<uint8_t> out(static_cast<uint8_t*>(buf.base), static_cast<uint8_t*>(buf.base) + buf.len);
    raft_free(buf.base);
    return out;
}

void decode_conf(const std::vector<uint8_t>& bytes, raft_configuration* conf) {
    raft_configuration_init(conf);
    raft_buffer buf { const_cast<uint8_t*>(bytes.data()), bytes.size() };
    if (raft_configuration_decode(&buf, conf) != 0)
        std::abort();
}

void* copy_out(const std::vector<uint8_t>& bytes) { // into the engine's heap
    void* p = raft_malloc(bytes.size() ? bytes.size() : 1);
    if (!bytes.empty())
        std::memcpy(p, bytes.data(), bytes.size());
    return p;
}

raft_snapshot* snapshot_out(const Snap& s) { // the allocation convention of load/snapshot_get
    auto* out = static_cast<raft_snapshot*>(raft_malloc(sizeof(raft_snapshot)));
    std::memset(out, 0, sizeof *out);
    out->index = s.index;
    out->term = s.term;
    decode_conf(s.conf, &out->configuration);
    out->configuration_index = s.conf_index;
    out->bufs = static_cast<raft_buffer*>(raft_malloc(sizeof(raft_buffer)));
    out->bufs[0].base = copy_out(s.data);
    out->bufs[0].len = s.data.size();
    out->n_bufs = 1;
    return out;
}

// ---- the wire (lib/raft/wire.h) -------------------------------------------------------------

// Whether two messages say the same (a decoded one against the engine's original).
bool same_message(const raft_message& a, const raft_message& b) {
    if (a.type != b.type)
        return false;
    switch (a.type) {
    case RAFT_REQUEST_VOTE: {
        const auto &x = a.request_vote, &y = b.request_vote;
        return x.version == y.version && x.term == y.term && x.candidate_id == y.candidate_id &&
               x.last_log_index == y.last_log_index && x.last_log_term == y.last_log_term &&
               x.disrupt_leader == y.disrupt_leader && x.pre_vote == y.pre_vote;
    }
    case RAFT_REQUEST_VOTE_RESULT: {
        const auto &x = a.request_vote_result, &y = b.request_vote_result;
        return x.version == y.version && x.term == y.term && x.vote_granted == y.vote_granted &&
               x.pre_vote == y.pre_vote && x.features == y.features && x.capacity == y.capacity;
    }
    case RAFT_APPEND_ENTRIES: {
        const auto &x = a.append_entries, &y = b.append_entries;
        if (x.version != y.version || x.term != y.term || x.prev_log_index != y.prev_log_index ||
            x.prev_log_term != y.prev_log_term || x.leader_commit != y.leader_commit || x.n_entries != y.n_entries)
            return false;
        for (unsigned i = 0; i < x.n_entries; ++i) {
            const raft_entry &e = x.entries[i], &f = y.entries[i];
            if (e.term != f.term || e.type != f.type || e.buf.len != f.buf.len ||
                (e.buf.len && std::memcmp(e.buf.base, f.buf.base, e.buf.len) != 0))
                return false;
        }
        return true;
    }
    case RAFT_APPEND_ENTRIES_RESULT: {
        const auto &x = a.append_entries_result, &y = b.append_entries_result;
        return x.version == y.version && x.term == y.term && x.rejected == y.rejected &&
               x.last_log_index == y.last_log_index && x.features == y.features && x.capacity == y.capacity;
    }
    case RAFT_INSTALL_SNAPSHOT: {
        const auto &x = a.install_snapshot, &y = b.install_snapshot;
        if (x.version != y.version || x.term != y.term || x.last_index != y.last_index || x.last_term != y.last_term ||
            x.conf_index != y.conf_index || x.conf.n != y.conf.n || x.data.len != y.data.len ||
            (x.data.len && std::memcmp(x.data.base, y.data.base, x.data.len) != 0))
            return false;
        for (unsigned i = 0; i < x.conf.n; ++i)
            if (x.conf.servers[i].id != y.conf.servers[i].id || x.conf.servers[i].role != y.conf.servers[i].role ||
                std::strcmp(x.conf.servers[i].address, y.conf.servers[i].address) != 0)
                return false;
        return true;
    }
    case RAFT_TIMEOUT_NOW: {
        const auto &x = a.timeout_now, &y = b.timeout_now;
        return x.version == y.version && x.term == y.term && x.last_log_index == y.last_log_index &&
               x.last_log_term == y.last_log_term;
    }
    }
    return false;
}

// `m` encoded, cut into sealed datagrams, opened, put together (fragments in reverse order, the
// first one twice) and decoded, as a peer would receive it: true if it comes back the same.
bool survives_the_wire(const raft_message& m, uint64_t from, uint64_t to, uint64_t epoch, uint64_t seq) {
    static const std::vector<uint8_t> key(32, 0x42);
    const size_t size = raftwire::payload_size(m);
    if (size == 0)
        return false;
    std::vector<uint8_t> payload(size);
    if (raftwire::encode(m, payload) != size)
        return false;
    raftwire::FrameHeader h {
        1, from, to, epoch, seq, 0, static_cast<uint16_t>(raftwire::fragment_count(size)), static_cast<uint32_t>(size)
    };
    std::vector<std::vector<uint8_t>> datagrams;
    for (uint16_t f = 0; f < h.fragments; ++f) {
        h.fragment = f;
        std::vector<uint8_t> d(raftwire::kMaxDatagram);
        d.resize(raftwire::seal(h, payload, key, d));
        if (d.empty())
            return false;
        datagrams.insert(datagrams.begin(), std::move(d));
    }
    datagrams.push_back(datagrams.back());
    std::vector<uint8_t> storage(size);
    raftwire::Reassembler rx(storage);
    bool complete = false;
    for (const auto& d : datagrams) {
        raftwire::FrameHeader got;
        std::span<const uint8_t> slice;
        if (raftwire::open(d, key, got, slice) != raftwire::Verdict::Accepted || got.from != from || got.to != to)
            return false;
        auto r = rx.feed(got, slice);
        if (r == raftwire::Reassembler::Result::Refused || (r == raftwire::Reassembler::Result::Complete && complete))
            return false;
        complete = complete || r == raftwire::Reassembler::Result::Complete;
    }
    raft_message out;
    if (!complete || raftwire::decode(rx.message(), out) != raftwire::Verdict::Accepted)
        return false;
    const bool same = same_message(m, out);
    raftwire::release(out);
    return same;
}

// ---- a client command and what became of it ------------------------------------------------

struct Command {
    uint64_t id = 0;
    uint64_t invoked = 0; // event number
    uint64_t acked = 0;   // event number, 0 if never acknowledged
    bool refused = false; // raft_apply() said no: must never be applied
};

class Sim;

struct Node {
    Sim* sim = nullptr;
    raft_id id = 0;
    std::string address;
    bool up = false;
    bool bootstrap = false; // in the initial configuration
    uint64_t life = 0;      // bumped on every crash: stale events are ignored
    raft* r = nullptr;
    raft_io io {};
    raft_fsm fsm {};
    Disk disk;
    std::deque<Op> diskq;
    bool disk_busy = false;
    std::map<uint64_t, std::pair<raft_io_send*, raft_io_send_cb>> sends;
    uint64_t next_send = 0;
    uint64_t sent = 0;                                       // messages sent in this life
    std::map<raft_id, std::pair<uint64_t, uint64_t>> latest; // per sender: newest (epoch, seq) delivered
    raft_io_tick_cb tick = nullptr;
    raft_io_recv_cb recv = nullptr;
    unsigned tick_ms = 100;
    Rng rng { 0 };
    // The state machine: the sequence of command ids applied (volatile).
    std::vector<uint64_t> applied;
    // The log as the engine asked for it to be written (disk plus requests in flight).
    raft_index lstart = 1;
    raft_term lprev = 0; // term of lstart-1, 0 if unknown
    std::vector<raft_term> lterms;
    raft_index commit_seen = 0;
    int state = RAFT_FOLLOWER;
    // The configuration changes in that log, by index (their encoded configurations).
    std::map<raft_index, std::vector<uint8_t>> changes;
};

enum class Kind { deliver, disk_done, send_done, tick, client, fault, restart, heal_partition, member };

struct Event {
    uint64_t time;
    uint64_t seq;
    Kind kind;
    unsigned node;
    uint64_t life;
    uint64_t ref;
    std::shared_ptr<Message> msg;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

class Sim {
public:
    explicit Sim(const Options& o);
    Result run();

    // raft_io
    int io_load(Node& n, raft_term* term, raft_id* vote, raft_snapshot** snap, raft_index* start, raft_entry** entries,
                size_t* n_entries);
    int io_bootstrap(Node& n, const raft_configuration* conf);
    int io_send(Node& n, raft_io_send* req, const raft_message* m, raft_io_send_cb cb);
    int io_append(Node& n, raft_io_append* req, const raft_entry* entries, unsigned count, raft_io_append_cb cb);
    int io_truncate(Node& n, raft_index index);
    int io_snapshot_put(Node& n, unsigned trailing, raft_io_snapshot_put* req, const raft_snapshot* s,
                        raft_io_snapshot_put_cb cb);
    int io_snapshot_get(Node& n, raft_io_snapshot_get* req, raft_io_snapshot_get_cb cb);
    void io_close(Node& n, raft_io_close_cb cb);
    // raft_fsm
    int fsm_apply(Node& n, const raft_buffer* buf);
    int fsm_snapshot(Node& n, raft_buffer* bufs[], unsigned* n_bufs);
    int fsm_restore(Node& n, raft_buffer* buf);

    uint64_t now = 0;
    Result result;
    void fail(const char* fmt, ...);
    void apply_done(struct raft_apply* req, int status);
    void change_done(raft_change* req, int status);
    void trace(const char* fmt, ...);

private:
    void boot(Node& n);
    void crash(Node& n, bool fault = true);
    void schedule(uint64_t at, Kind kind, unsigned node, uint64_t ref = 0, std::shared_ptr<Message> m = {});
    void start_disk(Node& n);
    void disk_done(Node& n);
    void deliver(Node& n, const Message& m);
    void client();
    void fault();
    void member();
    bool linked(raft_id a, raft_id b) const { return side_[a - 1] == side_[b - 1]; }
    void check();
    void check_leader(Node& n);
    void check_history();
    bool converged();
    Node& node(raft_id id) { return *nodes_[id - 1]; }

    Options o_;
    Rng rng_;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
    uint64_t seq_ = 0;
    std::vector<std::unique_ptr<Node>> nodes_;
    std::vector<int> side_; // partition side per node
    bool faults_ = true;
    unsigned loss_ = 0, dup_ = 0, delay_ = 10; // percent, percent, ms
    unsigned snapshot_threshold_ = 32, snapshot_trailing_ = 8;
    // Checker state.
    std::map<raft_term, raft_id> leader_of_;
    std::vector<raft_term> committed_;                                                   // index -> term (0: unknown)
    std::map<std::pair<raft_index, raft_term>, std::pair<uint64_t, raft_term>> written_; // -> hash, prev term
    std::vector<uint64_t> agreed_;                                                       // the state machine sequence
    std::unordered_map<uint64_t, size_t> position_; // command id -> index in agreed_
    std::unordered_map<uint64_t, Command> commands_;
    std::unordered_map<struct raft_apply*, uint64_t> proposed_; // requests in the engine -> command id
    uint64_t next_command_ = 1;
    bool change_busy_ = false;
    bool change_wanted_ = false;
    raft_id joiner_ = 0, leaver_ = 0;
    uint64_t healed_at_ = 0;
    uint64_t marker_ = 0; // first command acknowledged after the heal
};

Node& node_of(raft_io* io) { return *static_cast<Node*>(io->impl); }
Node& node_of(raft_fsm* fsm) { return *static_cast<Node*>(fsm->data); }

// ---- the raft_io and raft_fsm callbacks: thin trampolines into Sim ------------------------

int cb_init(raft_io*, raft_id, const char*) { return 0; }
void cb_close(raft_io* io, raft_io_close_cb cb) { node_of(io).sim->io_close(node_of(io), cb); }
int cb_load(raft_io* io, raft_term* t, raft_id* v, raft_snapshot** s, raft_index* i, raft_entry** e, size_t* n) {
    return node_of(io).sim->io_load(node_of(io), t, v, s, i, e, n);
}
int cb_start(raft_io* io, unsigned ms, raft_io_tick_cb tick, raft_io_recv_cb recv) {
    Node& n = node_of(io);
    n.tick_ms = ms;
    n.tick = tick;
    n.recv = recv;
    return 0;
}
int cb_bootstrap(raft_io* io, const raft_configuration* conf) {
    return node_of(io).sim->io_bootstrap(node_of(io), conf);
}
int cb_recover(raft_io*, const raft_configuration*) { return RAFT_NOTFOUND; }
int cb_set_term(raft_io* io, raft_term term) {
    Node& n = node_of(io); // synchronous: durable when it returns
    n.disk.term = term;
    n.disk.vote = 0;
    return 0;
}
int cb_set_vote(raft_io* io, raft_id id) {
    node_of(io).disk.vote = id;
    return 0;
}
int cb_send(raft_io* io, raft_io_send* req, const raft_message* m, raft_io_send_cb cb) {
    return node_of(io).sim->io_send(node_of(io), req, m, cb);
}
int cb_append(raft_io* io, raft_io_append* req, const raft_entry e[], unsigned n, raft_io_append_cb cb) {
    return node_of(io).sim->io_append(node_of(io), req, e, n, cb);
}
int cb_truncate(raft_io* io, raft_index index) { return node_of(io).sim->io_truncate(node_of(io), index); }
int cb_snapshot_put(raft_io* io, unsigned trailing, raft_io_snapshot_put* req, const raft_snapshot* s,
                    raft_io_snapshot_put_cb cb) {
    return node_of(io).sim->io_snapshot_put(node_of(io), trailing, req, s, cb);
}
int cb_snapshot_get(raft_io* io, raft_io_snapshot_get* req, raft_io_snapshot_get_cb cb) {
    return node_of(io).sim->io_snapshot_get(node_of(io), req, cb);
}
raft_time cb_time(raft_io* io) { return node_of(io).sim->now; }
int cb_random(raft_io* io, int min, int max) {
    uint64_t span = static_cast<uint64_t>(static_cast<int64_t>(max) - min + 1);
    return static_cast<int>(min + static_cast<int64_t>(node_of(io).rng.next() % span));
}
int cb_apply(raft_fsm* fsm, const raft_buffer* buf, void** result) {
    *result = nullptr;
    return node_of(fsm).sim->fsm_apply(node_of(fsm), buf);
}
int cb_snapshot(raft_fsm* fsm, raft_buffer* bufs[], unsigned* n) {
    return node_of(fsm).sim->fsm_snapshot(node_of(fsm), bufs, n);
}
int cb_restore(raft_fsm* fsm, raft_buffer* buf) { return node_of(fsm).sim->fsm_restore(node_of(fsm), buf); }
void cb_applied(struct raft_apply* req, int status, void*) { static_cast<Sim*>(req->data)->apply_done(req, status); }
void cb_changed(raft_change* req, int status) { static_cast<Sim*>(req->data)->change_done(req, status); }
bool g_closed = false;
void cb_raft_closed(raft*) { g_closed = true; }

// ---- set-up -----------------------------------------------------------------------------------

Sim::Sim(const Options& o) : o_(o), rng_ { o.seed * 0x2545f4914f6cdd1dull + 7 } {
    // What this seed's network and engine look like.
    const unsigned losses[] = { 0, 2, 10, 30 };
    const unsigned dups[] = { 0, 2, 10 };
    const unsigned delays[] = { 5, 20, 60, 150 };
    loss_ = losses[rng_.below(4)];
    dup_ = dups[rng_.below(3)];
    delay_ = delays[rng_.below(4)];
    snapshot_threshold_ = rng_.between(8, 64);
    // Upstream keeps more trailing entries than its threshold (defaults 8192 and 1024); with fewer,
    // a follower's second snapshot can drop the index its first one ended at, and it rejects an
    // append at that index (docs/replication.md). --small-trailing draws such configurations.
    snapshot_trailing_ = o.small_trailing ? rng_.between(1, 16)
                                          : rng_.between(snapshot_threshold_, 2 * snapshot_threshold_);
    change_wanted_ = o.membership && rng_.chance(50);
    unsigned count = o.nodes + (change_wanted_ ? 1 : 0);
    for (unsigned i = 0; i < count; ++i) {
        auto n = std::make_unique<Node>();
        n->sim = this;
        n->id = i + 1;
        n->address = std::to_string(i + 1);
        n->bootstrap = i < o.nodes;
        n->rng.state = rng_.next();
        nodes_.push_back(std::move(n));
    }
    side_.assign(count, 0);
    if (change_wanted_) {
        joiner_ = count;
        leaver_ = 1 + rng_.below(o.nodes);
    }
}

void Sim::trace(const char* fmt, ...) {
    if (!o_.verbose)
        return;
    std::printf("%8llu ms  ", static_cast<unsigned long long>(now));
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
    std::printf("\n");
    std::fflush(stdout);
}

void Sim::fail(const char* fmt, ...) {
    if (!result.ok)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    result.ok = false;
    result.failure = "at " + std::to_string(now) + " ms: " + buf;
    trace("FAIL %s", buf);
}

void Sim::schedule(uint64_t at, Kind kind, unsigned node, uint64_t ref, std::shared_ptr<Message> m) {
    uint64_t life = node ? nodes_[node - 1]->life : 0;
    queue_.push(Event { at, seq_++, kind, node, life, ref, std::move(m) });
}

void Sim::boot(Node& n) {
    n.r = new raft {};
    n.io = raft_io {};
    n.io.version = 1;
    n.io.capacity = 0xffff; // KiB reserved for entries (the engine refuses writes below 4 MiB)
    n.io.impl = &n;
    n.io.init = cb_init;
    n.io.close = cb_close;
    n.io.load = cb_load;
    n.io.start = cb_start;
    n.io.bootstrap = cb_bootstrap;
    n.io.recover = cb_recover;
    n.io.set_term = cb_set_term;
    n.io.set_vote = cb_set_vote;
    n.io.send = cb_send;
    n.io.append = cb_append;
    n.io.truncate = cb_truncate;
    n.io.snapshot_put = cb_snapshot_put;
    n.io.snapshot_get = cb_snapshot_get;
    n.io.time = cb_time;
    n.io.random = cb_random;
    n.fsm = raft_fsm {};
    n.fsm.version = 1;
    n.fsm.data = &n;
    n.fsm.apply = cb_apply;
    n.fsm.snapshot = cb_snapshot;
    n.fsm.restore = cb_restore;
    n.applied.clear();
    n.latest.clear();
    n.sent = 0;
    if (raft_init(n.r, &n.io, &n.fsm, n.id, n.address.c_str()) != 0)
        return fail("raft_init failed on %llu", (unsigned long long)n.id);
    n.r->tracer = nullptr; // no formatting of trace messages nobody reads
    raft_set_pre_vote(n.r, true);
    raft_set_snapshot_threshold(n.r, snapshot_threshold_);
    raft_set_snapshot_trailing(n.r, snapshot_trailing_);
    if (n.bootstrap && n.disk.term == 0) {
        raft_configuration conf;
        raft_configuration_init(&conf);
        for (unsigned i = 1; i <= o_.nodes; ++i)
            raft_configuration_add(&conf, i, nodes_[i - 1]->address.c_str(), RAFT_VOTER);
        int rv = raft_bootstrap(n.r, &conf);
        raft_configuration_close(&conf);
        if (rv != 0)
            return fail("raft_bootstrap failed on %llu: %d", (unsigned long long)n.id, rv);
    }
    // The log as written so far: what the disk holds.
    n.lstart = n.disk.start;
    n.lprev = n.disk.has_snap && n.disk.snap.index + 1 == n.disk.start ? n.disk.snap.term : 0;
    n.lterms.clear();
    for (auto& e : n.disk.log)
        n.lterms.push_back(e.term);
    n.up = true;
    n.state = RAFT_FOLLOWER;
    int rv = raft_start(n.r);
    if (rv != 0)
        return fail("raft_start failed on %llu: %d", (unsigned long long)n.id, rv);
    n.commit_seen = raft_commit_index(n.r);
    trace("node %llu starts (term %llu, log %llu..%llu)", (unsigned long long)n.id, (unsigned long long)n.disk.term,
          (unsigned long long)n.disk.start, (unsigned long long)(n.disk.start + n.disk.log.size() - 1));
    schedule(now + n.tick_ms, Kind::tick, n.id);
}

void Sim::crash(Node& n, bool fault) {
    if (!n.up)
        return;
    if (fault)
        ++result.crashes;
    // A write in progress may have reached the disk in part.
    if (fault && !n.diskq.empty() && n.diskq.front().kind == OpKind::append && n.diskq.front().entries.size() > 1 &&
        rng_.chance(30)) {
        Op& op = n.diskq.front();
        size_t keep = 1 + rng_.below(static_cast<unsigned>(op.entries.size() - 1));
        raft_index end = n.disk.start + n.disk.log.size();
        if (op.index >= n.disk.start && op.index <= end) {
            n.disk.log.resize(op.index - n.disk.start);
            for (size_t i = 0; i < keep; ++i)
                n.disk.log.push_back(op.entries[i]);
            trace("node %llu: torn write keeps %zu of %zu entries at %llu", (unsigned long long)n.id, keep,
                  op.entries.size(), (unsigned long long)op.index);
        }
    }
    trace("node %llu crashes (legacy snapshot_index %llu installing %d taking %d pending %p)", (unsigned long long)n.id,
          (unsigned long long)n.r->legacy.snapshot_index, (int)n.r->snapshot.installing,
          (int)n.r->legacy.snapshot_taking, n.r->legacy.snapshot_pending);
    n.up = false;
    g_closed = false;
    raft_close(n.r, cb_raft_closed);
    if (!g_closed)
        fail("raft_close did not complete on %llu", (unsigned long long)n.id);
    delete n.r;
    n.r = nullptr;
    ++n.life;
    n.disk_busy = false;
    n.state = RAFT_FOLLOWER;
}

// ---- raft_io ----------------------------------------------------------------------------------

int Sim::io_load(Node& n, raft_term* term, raft_id* vote, raft_snapshot** snap, raft_index* start, raft_entry** entries,
                 size_t* n_entries) {
    *term = n.disk.term;
    *vote = n.disk.vote;
    *snap = n.disk.has_snap ? snapshot_out(n.disk.snap) : nullptr;
    *start = n.disk.start;
    *n_entries = n.disk.log.size();
    *entries = nullptr;
    n.changes.clear();
    for (size_t i = 0; i < n.disk.log.size(); ++i)
        if (n.disk.log[i].type == RAFT_CHANGE)
            n.changes[n.disk.start + i] = n.disk.log[i].data;
    if (!n.disk.log.empty()) {
        *entries = static_cast<raft_entry*>(raft_malloc(sizeof(raft_entry) * n.disk.log.size()));
        for (size_t i = 0; i < n.disk.log.size(); ++i) {
            raft_entry& e = (*entries)[i];
            e.term = n.disk.log[i].term;
            e.type = static_cast<raft_entry_type>(n.disk.log[i].type);
            e.buf.base = copy_out(n.disk.log[i].data);
            e.buf.len = n.disk.log[i].data.size();
            e.batch = e.buf.base; // each entry its own batch
        }
    }
    return 0;
}

int Sim::io_bootstrap(Node& n, const raft_configuration* conf) {
    if (n.disk.term != 0 || !n.disk.log.empty() || n.disk.has_snap)
        return RAFT_CANTBOOTSTRAP;
    n.disk.term = 1;
    n.disk.vote = 0;
    n.disk.start = 1;
    n.disk.log.push_back(Entry { 1, RAFT_CHANGE, encode_conf(conf) });
    n.changes[1] = n.disk.log.back().data;
    return 0;
}

int Sim::io_send(Node& n, raft_io_send* req, const raft_message* m, raft_io_send_cb cb) {
    auto msg = std::make_shared<Message>();
    msg->head = *m;
    msg->from = n.id;
    msg->to = m->server_id;
    msg->epoch = n.life;
    msg->seq = ++n.sent;
    if (!survives_the_wire(*m, n.id, m->server_id, msg->epoch, msg->seq))
        fail("wire: message type %d from %llu to %llu does not come back the same through lib/raft/wire", (int)m->type,
             (unsigned long long)n.id, (unsigned long long)m->server_id);
    ++result.wire_checked;
    if (m->type == RAFT_APPEND_ENTRIES) {
        msg->head.append_entries.entries = nullptr;
        for (unsigned i = 0; i < m->append_entries.n_entries; ++i) {
            const raft_entry& e = m->append_entries.entries[i];
            auto* p = static_cast<const uint8_t*>(e.buf.base);
            msg->entries.push_back(Entry { e.term, e.type, std::vector<uint8_t>(p, p + e.buf.len) });
        }
    } else if (m->type == RAFT_INSTALL_SNAPSHOT) {
        // Upstream's compatibility layer asks for the latest snapshot and, when it is newer than
        // the one the engine meant to send, moves last_index to it but leaves last_term as it was
        // (legacy.c, legacyLoadSnapshotCb): the message would name an entry with the wrong term.
        // The snapshot is this node's own, so its term is known here.
        if (!o_.as_is && n.disk.has_snap && m->install_snapshot.last_index == n.disk.snap.index &&
            m->install_snapshot.last_term != n.disk.snap.term) {
            trace("node %llu: InstallSnapshot %llu carries term %llu, the snapshot's is %llu: corrected",
                  (unsigned long long)n.id, (unsigned long long)m->install_snapshot.last_index,
                  (unsigned long long)m->install_snapshot.last_term, (unsigned long long)n.disk.snap.term);
            msg->head.install_snapshot.last_term = n.disk.snap.term;
            ++result.corrected;
        }
        msg->conf = encode_conf(&m->install_snapshot.conf);
        auto* p = static_cast<const uint8_t*>(m->install_snapshot.data.base);
        msg->data.assign(p, p + m->install_snapshot.data.len);
        msg->head.install_snapshot.conf = raft_configuration {};
        msg->head.install_snapshot.data = raft_buffer {};
    }
    uint64_t id = n.next_send++;
    n.sends[id] = { req, cb };
    schedule(now, Kind::send_done, n.id, id);
    if (msg->to < 1 || msg->to > nodes_.size())
        return 0;
    unsigned copies = 1 + (faults_ && rng_.chance(dup_) ? 1 : 0);
    for (unsigned c = 0; c < copies; ++c) {
        if (faults_ && rng_.chance(loss_))
            continue;
        if (!linked(msg->from, msg->to))
            continue;
        schedule(now + 1 + rng_.below(delay_), Kind::deliver, static_cast<unsigned>(msg->to), 0, msg);
    }
    return 0;
}

void Sim::deliver(Node& n, const Message& m) {
    if (!linked(m.from, m.to))
        return;
    if (!o_.raw_network) {
        // The transport delivers each sender's messages in order, once: a copy that arrives after
        // a newer one from the same sender is dropped (reordering and duplication become loss).
        auto& newest = n.latest[m.from];
        if (std::make_pair(m.epoch, m.seq) <= newest) {
            trace("node %llu drops a late message from %llu", (unsigned long long)n.id, (unsigned long long)m.from);
            return;
        }
        newest = { m.epoch, m.seq };
    }
    raft_message msg = m.head;
    size_t skip = 0; // leading entries of an AppendEntries already inside this node's snapshot
    if (m.head.type == RAFT_APPEND_ENTRIES && !o_.as_is && n.disk.has_snap) {
        // Upstream's follower rejects an AppendEntries whose previous entry lies inside its
        // snapshot but outside the entries it kept after it (its trail no longer knows that
        // entry's term), then fails an assertion (trail.c) or, without assertions, reads past the
        // message's entries (replication.c) when the leader goes back further. Entries up to the
        // snapshot are committed, hence the leader's own: the message is rebased on the snapshot.
        const Snap& s = n.disk.snap;
        raft_index prev = m.head.append_entries.prev_log_index;
        if (prev < s.index && prev < n.disk.start) {
            raft_index covered = s.index - prev;
            if (covered <= m.entries.size() && m.entries[covered - 1].term == s.term) {
                skip = covered;
                msg.append_entries.prev_log_index = s.index;
                msg.append_entries.prev_log_term = s.term;
                ++result.rebased;
                trace("node %llu: AppendEntries after %llu rebased on its snapshot %llu", (unsigned long long)n.id,
                      (unsigned long long)prev, (unsigned long long)s.index);
            }
        }
    }
    // Upstream's follower records a configuration change under the index of the message's first
    // entry (replication.c), so a change past the first never commits there: the message is cut
    // before it (as kernel/raft's member does) and the leader sends it again, first.
    size_t end = m.entries.size();
    if (m.head.type == RAFT_APPEND_ENTRIES && !o_.as_is)
        for (size_t i = skip + 1; i < end; ++i)
            if (m.entries[i].type == RAFT_CHANGE) {
                trace("node %llu: AppendEntries cut before its change at %zu", (unsigned long long)n.id, i - skip);
                end = i;
                ++result.cut;
            }
    msg.append_entries.n_entries = m.head.type == RAFT_APPEND_ENTRIES ? static_cast<unsigned>(end - skip)
                                                                      : msg.append_entries.n_entries;
    msg.server_id = m.from;
    msg.server_address = node(m.from).address.c_str();
    if (m.head.type == RAFT_APPEND_ENTRIES) {
        if (m.head.append_entries.n_entries != m.entries.size())
            std::abort();
        size_t count = end - skip;
        if (count) { // one batch for all entries' data, as a decoder would make
            size_t total = 0;
            for (size_t i = skip; i < end; ++i)
                total += m.entries[i].data.size();
            auto* batch = static_cast<uint8_t*>(raft_malloc(total ? total : 1));
            auto* entries = static_cast<raft_entry*>(raft_malloc(sizeof(raft_entry) * count));
            size_t at = 0;
            for (size_t i = 0; i < count; ++i) {
                const Entry& e = m.entries[skip + i];
                entries[i].term = e.term;
                entries[i].type = static_cast<raft_entry_type>(e.type);
                if (!e.data.empty())
                    std::memcpy(batch + at, e.data.data(), e.data.size());
                entries[i].buf.base = batch + at;
                entries[i].buf.len = e.data.size();
                entries[i].batch = batch;
                at += e.data.size();
            }
            msg.append_entries.entries = entries;
        } else {
            msg.append_entries.entries = nullptr;
        }
    } else if (m.head.type == RAFT_INSTALL_SNAPSHOT) {
        decode_conf(m.conf, &msg.install_snapshot.conf);
        msg.install_snapshot.data.base = copy_out(m.data);
        msg.install_snapshot.data.len = m.data.size();
        ++result.snapshots_sent;
        trace("node %llu <- %llu: snapshot %llu^%llu data %p", (unsigned long long)n.id, (unsigned long long)m.from,
              (unsigned long long)m.head.install_snapshot.last_index,
              (unsigned long long)m.head.install_snapshot.last_term, msg.install_snapshot.data.base);
    }
    if (m.head.type == RAFT_APPEND_ENTRIES)
        trace("node %llu <- %llu: append term %llu prev %llu^%llu n %u commit %llu", (unsigned long long)n.id,
              (unsigned long long)m.from, (unsigned long long)m.head.append_entries.term,
              (unsigned long long)m.head.append_entries.prev_log_index,
              (unsigned long long)m.head.append_entries.prev_log_term, m.head.append_entries.n_entries,
              (unsigned long long)m.head.append_entries.leader_commit);
    else if (m.head.type == RAFT_APPEND_ENTRIES_RESULT)
        trace("node %llu <- %llu: append result term %llu rejected %llu last %llu", (unsigned long long)n.id,
              (unsigned long long)m.from, (unsigned long long)m.head.append_entries_result.term,
              (unsigned long long)m.head.append_entries_result.rejected,
              (unsigned long long)m.head.append_entries_result.last_log_index);
    else
        trace("node %llu <- %llu: message %d", (unsigned long long)n.id, (unsigned long long)m.from, (int)m.head.type);
    n.recv(&n.io, &msg);
}

int Sim::io_append(Node& n, raft_io_append* req, const raft_entry* entries, unsigned count, raft_io_append_cb cb) {
    Op op;
    op.kind = OpKind::append;
    raft_index index = n.lstart + n.lterms.size();
    op.index = index;
    op.append = req;
    op.append_cb = cb;
    for (unsigned i = 0; i < count; ++i) {
        const raft_entry& e = entries[i];
        auto* p = static_cast<const uint8_t*>(e.buf.base);
        op.entries.push_back(Entry { e.term, e.type, std::vector<uint8_t>(p, p + e.buf.len) });
        if (e.type == RAFT_CHANGE)
            n.changes[index + i] = op.entries.back().data;
        // Log matching: an (index, term) pair names one entry and one predecessor term, everywhere.
        raft_index at = index + i;
        raft_term prev = n.lterms.empty() ? n.lprev : n.lterms.back();
        uint64_t h = hash_entry(e.type, e.buf.base, e.buf.len);
        auto [it, fresh] = written_.try_emplace({ at, e.term }, h, prev);
        if (!fresh) {
            if (it->second.first != h)
                fail("log matching: node %llu writes a different entry at index %llu term %llu",
                     (unsigned long long)n.id, (unsigned long long)at, (unsigned long long)e.term);
            else if (prev && it->second.second && it->second.second != prev)
                fail("log matching: node %llu has term %llu before index %llu term %llu, another node term %llu",
                     (unsigned long long)n.id, (unsigned long long)prev, (unsigned long long)at,
                     (unsigned long long)e.term, (unsigned long long)it->second.second);
            else if (!it->second.second)
                it->second.second = prev;
        }
        n.lterms.push_back(e.term);
    }
    n.diskq.push_back(std::move(op));
    start_disk(n);
    return 0;
}

int Sim::io_truncate(Node& n, raft_index index) {
    if (index < n.lstart) {
        fail("node %llu truncates at %llu before its log's start %llu", (unsigned long long)n.id,
             (unsigned long long)index, (unsigned long long)n.lstart);
        return 0;
    }
    if (index - n.lstart < n.lterms.size())
        n.lterms.resize(index - n.lstart);
    n.changes.erase(n.changes.lower_bound(index), n.changes.end());
    Op op;
    op.kind = OpKind::truncate;
    op.index = index;
    n.diskq.push_back(std::move(op));
    start_disk(n);
    return 0;
}

int Sim::io_snapshot_put(Node& n, unsigned trailing, raft_io_snapshot_put* req, const raft_snapshot* s,
                         raft_io_snapshot_put_cb cb) {
    Op op;
    op.kind = OpKind::snapshot_put;
    op.trailing = trailing;
    op.put = req;
    op.put_cb = cb;
    op.snap.index = s->index;
    op.snap.term = s->term;
    op.snap.conf = encode_conf(&s->configuration);
    op.snap.conf_index = s->configuration_index;
    if (trailing != 0 && !o_.as_is) {
        // Upstream takes a snapshot with the configuration committed so far, and a change applied in
        // the same batch of entries is committed only by an event handled after it: the snapshot
        // names an older configuration than the entries it covers. Every change up to the snapshot's
        // index is committed, so the newest of them is the snapshot's (a restart would otherwise
        // hold it uncommitted forever, and a follower installing the snapshot take the old one).
        auto newest = n.changes.upper_bound(s->index);
        if (newest != n.changes.begin() && (--newest)->first > s->configuration_index) {
            trace("node %llu: snapshot %llu names configuration %llu, corrected to %llu", (unsigned long long)n.id,
                  (unsigned long long)s->index, (unsigned long long)s->configuration_index,
                  (unsigned long long)newest->first);
            op.snap.conf = newest->second;
            op.snap.conf_index = newest->first;
            ++result.reconfigured;
        }
    }
    for (unsigned i = 0; i < s->n_bufs; ++i) {
        auto* p = static_cast<const uint8_t*>(s->bufs[i].base);
        op.snap.data.insert(op.snap.data.end(), p, p + s->bufs[i].len);
    }
    if (s->index < committed_.size() && committed_[s->index] && committed_[s->index] != s->term)
        fail("node %llu stores a snapshot at %llu with term %llu, committed with term %llu", (unsigned long long)n.id,
             (unsigned long long)s->index, (unsigned long long)s->term, (unsigned long long)committed_[s->index]);
    trace("node %llu: snapshot_put %llu^%llu trailing %u", (unsigned long long)n.id, (unsigned long long)s->index,
          (unsigned long long)s->term, trailing);
    if (trailing == 0) { // an installed snapshot replaces the log
        n.lstart = s->index + 1;
        n.lprev = s->term;
        n.lterms.clear();
        n.changes.clear();
    }
    n.diskq.push_back(std::move(op));
    start_disk(n);
    return 0;
}

int Sim::io_snapshot_get(Node& n, raft_io_snapshot_get* req, raft_io_snapshot_get_cb cb) {
    Op op;
    op.kind = OpKind::snapshot_get;
    op.get = req;
    op.get_cb = cb;
    n.diskq.push_back(std::move(op));
    start_disk(n);
    return 0;
}

void Sim::io_close(Node& n, raft_io_close_cb cb) {
    // Whatever the disk had not completed is lost; every request in flight is cancelled.
    while (!n.diskq.empty()) {
        Op op = std::move(n.diskq.front());
        n.diskq.pop_front();
        if (op.kind == OpKind::append)
            op.append_cb(op.append, RAFT_CANCELED);
        if (op.kind == OpKind::snapshot_put)
            op.put_cb(op.put, RAFT_CANCELED);
        // A snapshot read is completed, not cancelled: upstream's error path for it frees the
        // configuration of a message it never filled (legacy.c, legacyLoadSnapshotCb). The message
        // it then sends is cancelled below with the others.
        if (op.kind == OpKind::snapshot_get)
            op.get_cb(op.get, snapshot_out(n.disk.snap), 0);
    }
    while (!n.sends.empty()) {
        auto [req, scb] = n.sends.begin()->second;
        n.sends.erase(n.sends.begin());
        scb(req, RAFT_CANCELED);
    }
    n.tick = nullptr;
    n.recv = nullptr;
    cb(&n.io);
}

void Sim::start_disk(Node& n) {
    if (n.disk_busy || n.diskq.empty())
        return;
    n.disk_busy = true;
    schedule(now + rng_.between(0, 8), Kind::disk_done, n.id);
}

void Sim::disk_done(Node& n) {
    n.disk_busy = false;
    if (n.diskq.empty())
        return;
    Op op = std::move(n.diskq.front());
    n.diskq.pop_front();
    Disk& d = n.disk;
    raft_index end = d.start + d.log.size();
    switch (op.kind) {
    case OpKind::append:
        if (op.index < d.start || op.index > end) {
            fail("node %llu appends at %llu, its disk holds %llu..%llu", (unsigned long long)n.id,
                 (unsigned long long)op.index, (unsigned long long)d.start, (unsigned long long)end - 1);
            break;
        }
        d.log.resize(op.index - d.start);
        for (auto& e : op.entries)
            d.log.push_back(std::move(e));
        op.append_cb(op.append, 0);
        break;
    case OpKind::truncate:
        if (op.index <= d.start)
            d.log.clear();
        else if (op.index < end)
            d.log.resize(op.index - d.start);
        break;
    case OpKind::snapshot_put: {
        raft_index index = op.snap.index;
        d.snap = std::move(op.snap);
        d.has_snap = true;
        if (op.trailing == 0) {
            d.log.clear();
            d.start = index + 1;
        } else {
            raft_index keep_from = index > op.trailing ? index - op.trailing + 1 : 1;
            keep_from = std::min<raft_index>(keep_from, end);
            if (keep_from > d.start) {
                d.log.erase(d.log.begin(), d.log.begin() + static_cast<long>(keep_from - d.start));
                d.start = keep_from;
            }
        }
        trace("node %llu: snapshot %llu stored", (unsigned long long)n.id, (unsigned long long)index);
        op.put_cb(op.put, 0);
        break;
    }
    case OpKind::snapshot_get:
        if (!d.has_snap) {
            fail("node %llu asks for a snapshot it does not have", (unsigned long long)n.id);
            break;
        }
        op.get_cb(op.get, snapshot_out(d.snap), 0);
        break;
    }
    if (n.up)
        start_disk(n);
}

// ---- the state machine: an append-only log of command ids ---------------------------------

int Sim::fsm_apply(Node& n, const raft_buffer* buf) {
    uint64_t id = 0;
    if (buf->len != sizeof id) {
        fail("node %llu applies a command of %zu bytes", (unsigned long long)n.id, buf->len);
        return 0;
    }
    std::memcpy(&id, buf->base, sizeof id);
    size_t k = n.applied.size();
    n.applied.push_back(id);
    // State machine safety: every node applies the same sequence.
    if (k < agreed_.size()) {
        if (agreed_[k] != id)
            fail("state machine safety: node %llu applies command %llu as #%zu, others applied %llu",
                 (unsigned long long)n.id, (unsigned long long)id, k, (unsigned long long)agreed_[k]);
    } else {
        if (position_.count(id))
            fail("command %llu applied twice (#%zu and #%zu)", (unsigned long long)id, position_[id], k);
        position_[id] = k;
        agreed_.push_back(id);
    }
    return 0;
}

int Sim::fsm_snapshot(Node& n, raft_buffer* bufs[], unsigned* n_bufs) {
    *bufs = static_cast<raft_buffer*>(raft_malloc(sizeof(raft_buffer)));
    size_t len = n.applied.size() * sizeof(uint64_t);
    (*bufs)[0].base = raft_malloc(len ? len : 1);
    if (len)
        std::memcpy((*bufs)[0].base, n.applied.data(), len);
    (*bufs)[0].len = len;
    *n_bufs = 1;
    return 0;
}

int Sim::fsm_restore(Node& n, raft_buffer* buf) {
    n.applied.resize(buf->len / sizeof(uint64_t));
    if (buf->len)
        std::memcpy(n.applied.data(), buf->base, buf->len);
    raft_free(buf->base);
    for (size_t k = 0; k < n.applied.size(); ++k)
        if (k >= agreed_.size() || agreed_[k] != n.applied[k])
            return fail("state machine safety: node %llu restores a snapshot that differs at #%zu",
                        (unsigned long long)n.id, k),
                   0;
    return 0;
}

// ---- clients, faults, membership ------------------------------------------------------------

void Sim::client() {
    std::vector<Node*> up;
    for (auto& n : nodes_)
        if (n->up)
            up.push_back(n.get());
    if (up.empty())
        return;
    Node& n = *up[rng_.below(static_cast<unsigned>(up.size()))];
    if (raft_state(n.r) != RAFT_LEADER)
        return;
    Command c;
    c.id = next_command_++;
    c.invoked = result.events;
    auto* req = new ApplyRequest {};
    req->data = this;
    raft_buffer buf { raft_malloc(sizeof c.id), sizeof c.id };
    std::memcpy(buf.base, &c.id, sizeof c.id);
    int rv = raft_apply(n.r, req, &buf, 1, cb_applied);
    if (rv != 0) {
        raft_free(buf.base);
        delete req;
        c.refused = true;
    } else {
        proposed_[req] = c.id;
    }
    trace("client: command %llu to node %llu: %s (%d)", (unsigned long long)c.id, (unsigned long long)n.id,
          rv ? "refused" : "proposed", rv);
    commands_[c.id] = c;
}

void Sim::apply_done(struct raft_apply* req, int status) {
    auto pending = proposed_.find(req);
    if (pending == proposed_.end())
        return fail("an acknowledgement for a request never made");
    uint64_t id = pending->second;
    proposed_.erase(pending);
    delete req;
    auto it = commands_.find(id);
    if (it == commands_.end())
        return fail("an acknowledgement for unknown command %llu", (unsigned long long)id);
    trace("command %llu: acknowledged with status %d", (unsigned long long)id, status);
    if (status != 0)
        return; // indeterminate: it may or may not be applied
    it->second.acked = result.events;
    ++result.acknowledged;
    if (!position_.count(id))
        fail("command %llu acknowledged before it was applied", (unsigned long long)id);
    if (now >= healed_at_ && healed_at_ && !marker_)
        marker_ = id;
}

void Sim::change_done(raft_change* req, int status) {
    delete req;
    change_busy_ = false;
    if (status == 0)
        ++result.changes;
    trace("membership change done: %d", status);
}

void Sim::member() {
    if (change_busy_)
        return;
    Node* leader = nullptr;
    for (auto& n : nodes_)
        if (n->up && raft_state(n->r) == RAFT_LEADER)
            leader = n.get();
    if (!leader)
        return;
    const raft_configuration& conf = leader->r->configuration;
    const raft_server* joiner = nullptr;
    const raft_server* leaver = nullptr;
    for (unsigned i = 0; i < conf.n; ++i) {
        if (conf.servers[i].id == joiner_)
            joiner = &conf.servers[i];
        if (conf.servers[i].id == leaver_)
            leaver = &conf.servers[i];
    }
    auto* req = new raft_change {};
    req->data = this;
    int rv;
    if (!joiner)
        rv = raft_add(leader->r, req, joiner_, node(joiner_).address.c_str(), cb_changed);
    else if (joiner->role != RAFT_VOTER)
        rv = raft_assign(leader->r, req, joiner_, RAFT_VOTER, cb_changed);
    else if (leaver && leaver_ != leader->id)
        rv = raft_remove(leader->r, req, leaver_, cb_changed);
    else {
        delete req;
        return;
    }
    trace("membership: leader %llu changes (joiner %s, leaver %s): %d", (unsigned long long)leader->id,
          joiner ? "in" : "out", leaver ? "in" : "out", rv);
    if (rv != 0)
        delete req;
    else
        change_busy_ = true;
}

void Sim::fault() {
    unsigned what = rng_.below(10);
    if (what < 4) { // crash a node, restart it later
        Node& n = *nodes_[rng_.below(static_cast<unsigned>(nodes_.size()))];
        if (!n.up)
            return;
        crash(n);
        schedule(now + rng_.between(100, 3000), Kind::restart, n.id);
    } else if (what < 7) { // partition the nodes in two
        for (auto& s : side_)
            s = static_cast<int>(rng_.below(2));
        trace("partition");
        schedule(now + rng_.between(200, 4000), Kind::heal_partition, 0);
    } else if (what < 8) { // isolate the leader
        for (auto& n : nodes_)
            if (n->up && raft_state(n->r) == RAFT_LEADER) {
                side_.assign(side_.size(), 0);
                side_[n->id - 1] = 1;
                trace("leader %llu isolated", (unsigned long long)n->id);
                schedule(now + rng_.between(200, 4000), Kind::heal_partition, 0);
            }
    } else { // crash a majority at once
        for (auto& n : nodes_)
            if (rng_.chance(60) && n->up) {
                crash(*n);
                schedule(now + rng_.between(100, 2000), Kind::restart, n->id);
            }
    }
}

// ---- the checks -------------------------------------------------------------------------------

void Sim::check_leader(Node& n) {
    // Leader completeness: a new leader's log holds every entry committed so far.
    for (raft_index i = n.lstart; i < committed_.size(); ++i) {
        if (!committed_[i])
            continue;
        raft_index k = i - n.lstart;
        if (k >= n.lterms.size() || n.lterms[k] != committed_[i])
            return fail("leader completeness: leader %llu of term %llu lacks committed entry %llu (term %llu)",
                        (unsigned long long)n.id, (unsigned long long)raft_current_term(n.r), (unsigned long long)i,
                        (unsigned long long)committed_[i]);
    }
}

void Sim::check() {
    for (auto& p : nodes_) {
        Node& n = *p;
        if (!n.up)
            continue;
        int state = raft_state(n.r);
        raft_term term = raft_current_term(n.r);
        if (state == RAFT_LEADER) {
            // Election safety: one leader per term.
            auto [it, fresh] = leader_of_.try_emplace(term, n.id);
            if (!fresh && it->second != n.id)
                return fail("election safety: nodes %llu and %llu both lead term %llu", (unsigned long long)it->second,
                            (unsigned long long)n.id, (unsigned long long)term);
            if (fresh)
                ++result.leaders;
            if (n.state != RAFT_LEADER) {
                trace("node %llu leads term %llu", (unsigned long long)n.id, (unsigned long long)term);
                check_leader(n);
            }
        }
        n.state = state;
        // A configuration change applied here is no longer uncommitted (else this node, as leader,
        // refuses every later change, and a truncation rolls it back to a stale configuration).
        const raft_index uncommitted = n.r->configuration_uncommitted_index;
        if (uncommitted != 0 && uncommitted <= raft_last_applied(n.r))
            return fail("node %llu holds its configuration change at %llu uncommitted, applied up to %llu",
                        (unsigned long long)n.id, (unsigned long long)uncommitted,
                        (unsigned long long)raft_last_applied(n.r));
        // Committed entries never change: record each index's term as it commits.
        raft_index ci = raft_commit_index(n.r);
        for (raft_index i = n.commit_seen + 1; i <= ci; ++i) {
            if (i < n.lstart || i - n.lstart >= n.lterms.size())
                continue;
            raft_term t = n.lterms[i - n.lstart];
            if (committed_.size() <= i)
                committed_.resize(i + 1, 0);
            if (committed_[i] && committed_[i] != t)
                return fail("committed entry %llu changed term (%llu, now %llu on node %llu)", (unsigned long long)i,
                            (unsigned long long)committed_[i], (unsigned long long)t, (unsigned long long)n.id);
            committed_[i] = t;
        }
        n.commit_seen = ci;
    }
}

void Sim::check_history() {
    // Linearizability of the append-only log: the agreed sequence holds every acknowledged command,
    // no refused one, and orders a command after every command acknowledged before it was invoked.
    std::vector<const Command*> by_invoke, by_ack;
    for (auto& [id, c] : commands_) {
        if (c.refused && position_.count(id))
            return fail("refused command %llu was applied", (unsigned long long)id);
        if (c.acked && !position_.count(id))
            return fail("acknowledged command %llu is lost", (unsigned long long)id);
        by_invoke.push_back(&c);
        if (c.acked)
            by_ack.push_back(&c);
    }
    std::sort(by_invoke.begin(), by_invoke.end(), [](auto a, auto b) { return a->invoked < b->invoked; });
    std::sort(by_ack.begin(), by_ack.end(), [](auto a, auto b) { return a->acked < b->acked; });
    size_t a = 0;
    long highest = -1; // highest position among commands acknowledged so far
    for (const Command* c : by_invoke) {
        while (a < by_ack.size() && by_ack[a]->acked < c->invoked)
            highest = std::max<long>(highest, (long)position_[by_ack[a++]->id]);
        auto it = position_.find(c->id);
        if (it != position_.end() && (long)it->second <= highest)
            return fail("linearizability: command %llu is ordered before a command acknowledged before it was invoked",
                        (unsigned long long)c->id);
    }
}

bool Sim::converged() {
    // Every voter of the leader's configuration has applied the whole agreed sequence.
    Node* leader = nullptr;
    for (auto& n : nodes_)
        if (n->up && raft_state(n->r) == RAFT_LEADER)
            leader = n.get();
    if (!leader || !marker_)
        return false;
    const raft_configuration& conf = leader->r->configuration;
    for (unsigned i = 0; i < conf.n; ++i) {
        if (conf.servers[i].role != RAFT_VOTER)
            continue;
        Node& n = node(conf.servers[i].id);
        if (!n.up || n.applied.size() != agreed_.size())
            return false;
    }
    return leader->applied.size() == agreed_.size();
}

// ---- the run ----------------------------------------------------------------------------------

Result Sim::run() {
    for (auto& n : nodes_) {
        if (!result.ok)
            break;
        boot(*n);
    }
    schedule(rng_.between(1, 50), Kind::client, 0);
    schedule(rng_.between(100, 1500), Kind::fault, 0);
    if (change_wanted_)
        schedule(rng_.between(500, o_.fault_ms), Kind::member, 0);
    const uint64_t heal = o_.fault_ms, end = o_.fault_ms + o_.heal_ms;
    bool healed = false;
    while (result.ok && !queue_.empty()) {
        Event ev = queue_.top();
        if (!healed && ev.time >= heal) { // the faults end: every node up, every link whole
            now = heal;
            healed = true;
            faults_ = false;
            healed_at_ = heal;
            side_.assign(side_.size(), 0);
            delay_ = std::min(delay_, 10u);
            for (auto& n : nodes_)
                if (!n->up && result.ok)
                    boot(*n);
            trace("faults end");
            continue;
        }
        if (ev.time > end)
            break;
        queue_.pop();
        now = ev.time;
        ++result.events;
        Node* n = ev.node ? nodes_[ev.node - 1].get() : nullptr;
        bool current = n && n->up && ev.life == n->life;
        switch (ev.kind) {
        case Kind::deliver:
            if (current)
                deliver(*n, *ev.msg);
            break;
        case Kind::disk_done:
            if (current)
                disk_done(*n);
            break;
        case Kind::send_done:
            if (current) {
                auto it = n->sends.find(ev.ref);
                if (it != n->sends.end()) {
                    auto [req, cb] = it->second;
                    n->sends.erase(it);
                    cb(req, 0);
                }
            }
            break;
        case Kind::tick:
            if (current) {
                n->tick(&n->io);
                schedule(now + n->tick_ms, Kind::tick, n->id);
            }
            break;
        case Kind::client:
            client();
            if (!healed || !marker_)
                schedule(now + rng_.between(5, 40), Kind::client, 0);
            break;
        case Kind::fault:
            if (faults_) {
                fault();
                schedule(now + rng_.between(200, 2000), Kind::fault, 0);
            }
            break;
        case Kind::restart:
            if (faults_ && n && !n->up)
                boot(*n);
            break;
        case Kind::heal_partition:
            if (faults_)
                side_.assign(side_.size(), 0);
            break;
        case Kind::member:
            member();
            if (change_wanted_)
                schedule(now + 500, Kind::member, 0);
            break;
        }
        for (auto& p : nodes_)
            if (p->up)
                LegacyFireCompletedRequests(p->r);
        if (result.ok)
            check();
        if (healed && converged())
            break;
    }
    if (result.ok && !converged())
        fail("liveness: %u ms after the faults ended the group has not converged (marker %s, %zu commands agreed)",
             o_.heal_ms, marker_ ? "acknowledged" : "not acknowledged", agreed_.size());
    if (result.ok)
        check_history();
    result.applied = agreed_.size();
    // Shut every node down; the engine must give back every allocation.
    for (auto& n : nodes_)
        if (n->up)
            crash(*n, false);
    return result;
}

} // namespace

std::string replay_command(const Options& o) {
    return "build/host/tests/host/raft_sim --seed " + std::to_string(o.seed) + " --nodes " + std::to_string(o.nodes) +
           (o.membership ? "" : " --no-membership") + (o.raw_network ? " --raw-network" : "") +
           (o.small_trailing ? " --small-trailing" : "") + (o.as_is ? " --as-is" : "") + " --verbose";
}

Result run(const Options& options) {
    raft_heap_set(&g_heap);
    g_live.clear();
    Result r;
    {
        Sim sim(options);
        r = sim.run();
    }
    r.leaked = g_live.size();
    for (void* p : g_live)
        std::free(p);
    g_live.clear();
    raft_heap_set_default();
    return r;
}

} // namespace raftsim
