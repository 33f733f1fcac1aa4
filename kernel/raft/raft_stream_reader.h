#pragma once
// A group's durable state read back from its disk stream (lib/raft/log_image.h) in the form the
// engine takes it (docs/replication.md): its snapshot as a raft_snapshot and, when asked, its
// entries as a raft_entry array (each entry's bytes a batch of its own, as the engine frees them),
// everything on the engine's heap. A stream holds a Term record, the Snapshot record when there
// is one, then Appends in order: no truncation.
#include <cstddef>
#include <cstdint>

#include <raft/engine.h>
#include <raft/log_records.h>

namespace kraft {

class StreamReader final : public raftlog::Target {
public:
    // Entries go into out (capacity of them; nullptr and 0: counted, not kept).
    StreamReader(raft_entry* out, size_t capacity) : m_out(out), m_capacity(capacity) {}
    StreamReader(const StreamReader&) = delete;
    StreamReader& operator=(const StreamReader&) = delete;
    ~StreamReader() { release(); }

    uint64_t term() const override { return m_term; }
    uint64_t start() const override { return m_start; }
    uint64_t next_index() const override { return m_start + m_count; }
    bool set_term(uint64_t term, uint64_t) override;
    bool append(const raftlog::EntryView& e) override;
    bool truncate(uint64_t) override { return m_count == 0; } // (only a snapshot's, before any entry)
    uint64_t snapshot_index() const override { return m_snapshot ? m_snapshot->index : 0; }
    bool set_snapshot(const raftlog::SnapshotView& s, uint64_t start) override;

    size_t count() const { return m_count; }
    // Hands the snapshot over (the engine's to free from then on); nullptr when there was none.
    raft_snapshot* take_snapshot() {
        raft_snapshot* s = m_snapshot;
        m_snapshot = nullptr;
        return s;
    }
    // The entries are the caller's from then on (release() no longer frees them).
    void keep_entries() { m_kept = true; }
    // Frees what was read and not handed over.
    void release();

private:
    raft_entry* m_out;
    size_t m_capacity;
    size_t m_count = 0;
    uint64_t m_term = 0, m_start = 1;
    raft_snapshot* m_snapshot = nullptr;
    bool m_kept = false;
};

// A snapshot in the engine's form (raft_malloc'd struct, one buffer, decoded configuration) and
// its release; nullptr when there is no memory or the configuration does not decode.
raft_snapshot* engine_snapshot(const raftlog::SnapshotView& s);
void free_engine_snapshot(raft_snapshot* s);

} // namespace kraft
