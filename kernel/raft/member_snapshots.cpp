// A member's snapshots (raft_member.h; docs/replication.md): the engine's snapshot requests as
// Snapshot records of the member's disk, the state machine's snapshot and restore, and the
// workaround of upstream's defect 3 on the receiving side.
#include "../mm/kheap.h"
#include "raft_member.h"
#include "raft_stream_reader.h"

#include <cstring>

#include <raft/log_image.h>

namespace kraft {
namespace {

constexpr size_t kFsmBytes = 16; // the state machine: applied count, applied hash

void put_u64(uint8_t* p, uint64_t v) {
    for (int i = 0; i < 8; ++i)
        p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get_u64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return v;
}

} // namespace

bool Member::set_snapshot_policy(unsigned threshold, unsigned trailing) {
    if (m_raft || threshold == 0 || threshold >= trailing || size_t(threshold) + trailing >= kMaxLogEntries)
        return false;
    m_threshold = threshold;
    m_trailing = trailing;
    return true;
}

// trailing 0: a snapshot installed from the leader (it replaces the log); otherwise one taken
// here, behind which the log keeps `trailing` entries. Written as one record, completed once the
// commit carrying it is durable, as an append is. A leader's snapshot is held until the state
// machine has the state it covers (install_begin/install_ready): the engine waits meanwhile
// (upstream's install never fails but at close, so it is never refused, only held).
int Member::io_snapshot_put(unsigned trailing, raft_io_snapshot_put* req, const raft_snapshot* snapshot,
                            raft_io_snapshot_put_cb cb) {
    if (trailing != 0 || !m_running || !m_sm || m_held.req)
        return put_snapshot(trailing, req, snapshot, cb);
    m_held = HeldInstall { req, snapshot, cb };
    raft_id from = 0;
    const char* address = nullptr;
    raft_leader(m_raft, &from, &address);
    m_sm->install_begin(snapshot->index, from);
    (void)write_held_install();
    return 0;
}

bool Member::write_held_install() {
    if (!m_held.req || !m_sm->install_ready())
        return false;
    if (put_snapshot(0, m_held.req, m_held.snapshot, m_held.cb) != 0)
        return false; // (no room or memory now: again at the next turn)
    m_held = HeldInstall {};
    return true;
}

int Member::put_snapshot(unsigned trailing, raft_io_snapshot_put* req, const raft_snapshot* snapshot,
                         raft_io_snapshot_put_cb cb) {
    if (m_pending_count == kMaxPending)
        return RAFT_NOMEM;
    size_t data_len = 0;
    for (unsigned i = 0; i < snapshot->n_bufs; ++i)
        data_len += snapshot->bufs[i].len;
    raft_buffer conf {};
    if (raft_configuration_encode(&snapshot->configuration, &conf) != 0)
        return RAFT_NOMEM;
    std::span<const std::byte> conf_bytes(static_cast<const std::byte*>(conf.base), conf.len);
    uint64_t conf_index = snapshot->configuration_index;
    // A snapshot taken here names the newest configuration change it covers (every change up to its
    // index is committed; upstream may name an older one: raft_member.h, m_changes).
    for (size_t i = m_change_count; trailing != 0 && i-- > 0;)
        if (m_changes[i].index <= snapshot->index) {
            if (m_changes[i].index > conf_index) {
                conf_index = m_changes[i].index;
                conf_bytes = { m_changes[i].bytes, m_changes[i].len };
                ++m_reconfigured;
            }
            break;
        }
    const size_t bytes = raftlog::snapshot_bytes(conf_bytes.size(), data_len);
    int rv = bytes ? 0 : RAFT_TOOBIG;
    // The state's bytes in one piece (the engine's own buffer when it gave one).
    std::byte* data = snapshot->n_bufs == 1 ? static_cast<std::byte*>(snapshot->bufs[0].base) : nullptr;
    void* joined = nullptr;
    if (rv == 0 && snapshot->n_bufs > 1) {
        auto mem = kheap::alloc(data_len ? data_len : 1);
        joined = mem ? *mem : nullptr;
        data = static_cast<std::byte*>(joined);
        rv = data ? 0 : RAFT_NOMEM;
        for (size_t i = 0, at = 0; rv == 0 && i < snapshot->n_bufs; at += snapshot->bufs[i++].len)
            if (snapshot->bufs[i].len)
                std::memcpy(data + at, snapshot->bufs[i].base, snapshot->bufs[i].len);
    }
    void* record = nullptr;
    if (rv == 0) {
        auto mem = kheap::alloc(bytes);
        record = mem ? *mem : nullptr;
        rv = record ? 0 : RAFT_NOMEM;
    }
    uint64_t ticket = 0;
    if (rv == 0) {
        const raftlog::SnapshotView view {
            snapshot->index, snapshot->term, conf_index, conf_bytes, { data, data_len }
        };
        std::span<std::byte> out(static_cast<std::byte*>(record), bytes);
        auto encoded = raftlog::encode_snapshot(out, m_group, view, trailing);
        rv = encoded ? apply_record(raftlog::Kind::Snapshot, out.first(*encoded), &ticket) : RAFT_INVALID;
    }
    if (record)
        kheap::free(record);
    if (joined)
        kheap::free(joined);
    raft_free(conf.base);
    if (rv != 0)
        return rv;
    if (trailing != 0)
        ++m_taken;
    Callback done {};
    done.put = cb;
    (void)queue(request(Op::Put, req, done, ticket)); // (room was checked first: the record cannot be taken back)
    return 0;
}

// The snapshot to send a peer: read back from the disk now, handed over at the next turn.
int Member::io_snapshot_get(raft_io_snapshot_get* req, raft_io_snapshot_get_cb cb) {
    if (m_pending_count == kMaxPending)
        return RAFT_NOMEM;
    raft_snapshot* snapshot = read_snapshot();
    if (!snapshot)
        return m_snap_index ? RAFT_NOMEM : RAFT_NOTFOUND;
    Callback done {};
    done.get = cb;
    (void)queue(request(Op::Get, req, done, 0, snapshot));
    return 0;
}

raft_snapshot* Member::read_snapshot() {
    std::span<std::byte> stream;
    if (!read_stream(stream))
        return nullptr;
    StreamReader reader(nullptr, 0);
    const bool ok = raftlog::replay_stream(stream, m_group, reader) == ktl::Error::None;
    if (!stream.empty())
        kheap::free(stream.data());
    return ok ? reader.take_snapshot() : nullptr;
}

int Member::fsm_snapshot(raft_buffer* bufs[], unsigned* n) {
    auto* out = static_cast<raft_buffer*>(raft_malloc(sizeof(raft_buffer)));
    auto* data = static_cast<uint8_t*>(raft_malloc(kFsmBytes + StateMachine::kMaxMachineState));
    if (!out || !data) {
        raft_free(out);
        raft_free(data);
        return RAFT_NOMEM;
    }
    put_u64(data, m_applied);
    put_u64(data + 8, m_applied_hash);
    const size_t state = m_sm ? m_sm->save({ data + kFsmBytes, StateMachine::kMaxMachineState }) : 0;
    out[0].base = data;
    out[0].len = kFsmBytes + (state <= StateMachine::kMaxMachineState ? state : 0);
    *bufs = out;
    *n = 1;
    return 0;
}

// From this member's own snapshot when it starts, or from the leader's when it fell behind. (A
// snapshot of an earlier kernel carries no state machine's state: an empty one is loaded.)
int Member::fsm_restore(raft_buffer* buf) {
    if (buf->len < kFsmBytes || buf->len > kFsmBytes + StateMachine::kMaxMachineState)
        return RAFT_CORRUPT; // (the engine frees the buffer on this path)
    const auto* p = static_cast<const uint8_t*>(buf->base);
    const std::span<const uint8_t> state(p + kFsmBytes, buf->len - kFsmBytes);
    if (m_sm ? !m_sm->load(state) : !state.empty())
        return RAFT_CORRUPT;
    m_applied = get_u64(p);
    m_applied_hash = get_u64(p + 8);
    raft_free(buf->base);
    if (m_running) {
        ++m_installed;
        if (m_sm)
            m_sm->installed(m_applied);
    }
    return 0;
}

// Upstream's follower rejects an AppendEntries whose previous entry lies inside its snapshot but
// before the entries it kept (its trail no longer knows that entry's term), and goes wrong when
// the leader then goes back further. Entries up to the snapshot are committed, hence the leader's
// own: once the snapshot's last term confirms them, they are dropped from the message and it
// names the snapshot's last entry as its previous one.
void Member::rebase_on_snapshot(raft_message& m) {
    raft_append_entries& a = m.append_entries;
    if (m_snap_index == 0 || a.prev_log_index >= m_snap_index || a.prev_log_index >= m_start)
        return;
    const uint64_t covered = m_snap_index - a.prev_log_index;
    if (covered > a.n_entries || a.entries[covered - 1].term != m_snap_term)
        return;
    if (covered == a.n_entries) { // nothing left: the engine frees no entries of an empty message
        raft_free(a.entries[0].batch);
        raft_free(a.entries);
        a.entries = nullptr;
        a.n_entries = 0;
    } else { // (one batch holds every entry's bytes: it stays with those left)
        std::memmove(a.entries, a.entries + covered, (a.n_entries - covered) * sizeof(raft_entry));
        a.n_entries -= static_cast<unsigned>(covered);
    }
    a.prev_log_index = m_snap_index;
    a.prev_log_term = m_snap_term;
}

} // namespace kraft
