#pragma once
// The durable state of a node's Raft groups as the disk holds it (issue 35; docs/replication.md):
// what replaying the write-ahead log's raft records (log_records.h) rebuilds, and what a
// checkpoint carries instead of the records it lets go of. The kernel keeps one Images, fed with
// every record as it is staged for the log and, at boot, with what recovery reads back; a member
// that starts loads its group's state from it, and a checkpoint writes it out as a stream.
//
// The stream: records one after another, each `u8 kind | 3 zero bytes | u32 length | payload,
// zero-padded to 8`; per group, a Term record then Append records from the log's first entry
// (each at most kStreamAppendBytes, so no record of the stream is large), after its Snapshot
// record when it has one (whose trailing count gives the log's start back). Reading a stream
// replays its records in order into an Images: the same checks as the log's records.
#include <cstddef>
#include <cstdint>
#include <span>

#include <ktl/result.h>

#include "log_records.h"

namespace raftlog {

constexpr size_t kStreamHeader = 8;
constexpr size_t kStreamAppendBytes = 48 * 1024; // an Append of the stream, at most (but for one large entry)
constexpr size_t kMaxImageEntries = 4096;        // per group: a log longer than this refuses appends
constexpr size_t kMaxGroups = 8;
constexpr size_t kMaxStream = 16u << 20; // the most a node's stream may be to be read back whole

// Where an image's memory comes from (the kernel heap, the host's malloc).
class Memory {
public:
    virtual void* alloc(size_t bytes) = 0;
    virtual void free(void* p) = 0;

protected:
    ~Memory() = default;
};

// One group's term, vote and log [start, next_index), each entry's bytes a copy of its own.
class Image final : public Target {
public:
    Image() = default;
    Image(const Image&) = delete;
    Image& operator=(const Image&) = delete;
    ~Image() { reset(); }

    void bind(Memory& memory, uint64_t group) {
        m_memory = &memory;
        m_group = group;
    }
    uint64_t group() const { return m_group; }
    uint64_t vote() const { return m_vote; }
    size_t entries() const { return m_count; }
    bool empty() const { return m_term == 0 && m_count == 0 && m_snap.index == 0; }
    // The snapshot held (index 0: none); its bytes are the image's own.
    const SnapshotView& snapshot() const { return m_snap; }
    // Entry `index` (start() <= index < next_index()).
    EntryView entry(uint64_t index) const;
    // Frees every entry; the image is empty (term 0) again.
    void reset();

    uint64_t term() const override { return m_term; }
    uint64_t start() const override { return m_start; }
    uint64_t next_index() const override { return m_start + m_count; }
    uint64_t snapshot_index() const override { return m_snap.index; }
    bool set_snapshot(const SnapshotView& s, uint64_t start) override;
    bool set_term(uint64_t term, uint64_t vote) override;
    bool append(const EntryView& e) override;
    bool truncate(uint64_t index) override;

    // The stream of this group (nothing for an empty image).
    size_t stream_bytes() const;
    // Copies the stream's bytes [offset, offset + out.size()) into out; returns how many there were.
    size_t stream_copy(std::span<std::byte> out, uint64_t offset) const;

private:
    void drop_snapshot();
    void walk(class Window& w) const;
    struct Entry {
        uint64_t term;
        uint8_t type;
        std::byte* data;
        uint32_t len;
    };
    Memory* m_memory = nullptr;
    uint64_t m_group = 0;
    uint64_t m_term = 0, m_vote = 0;
    Entry* m_log = nullptr; // kMaxImageEntries once the first entry comes; m_log[0] is entry m_start
    size_t m_count = 0;
    uint64_t m_start = 1;
    SnapshotView m_snap {}; // conf and data on m_memory
};

// The records of `stream` that belong to `group`, replayed in order into `t` (a member loading
// its state). Corrupt when the stream does not add up; NoMemory when `t` could not keep an entry.
ktl::Error replay_stream(std::span<const std::byte> stream, uint64_t group, Target& t);

// Every group of a node.
class Images {
public:
    explicit Images(Memory& memory) : m_memory(memory) {}

    // One record of the log: decoded, and replayed into its group's image (made for it if new).
    // Corrupt for a record that does not decode or replay; NoMemory; Full for a ninth group.
    ktl::Error apply(Kind kind, std::span<const std::byte> payload);
    // A stream (from stream_copy, whole): its records applied in order. Corrupt when it does not add up.
    ktl::Error apply_stream(std::span<const std::byte> stream);
    // The group's image (nullptr if it has none).
    const Image* find(uint64_t group) const;
    // The stream of one group, or of all of them (kAll), and a window of it.
    static constexpr uint64_t kAll = ~0ull;
    size_t groups() const;
    size_t entries() const; // in every group's log
    size_t stream_bytes(uint64_t group) const;
    size_t stream_copy(uint64_t group, std::span<std::byte> out, uint64_t offset) const;
    void clear();

private:
    Memory& m_memory;
    Image m_images[kMaxGroups];
    bool m_used[kMaxGroups] = {};
};

} // namespace raftlog
