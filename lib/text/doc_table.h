#pragma once
// The documents of a document collection (issue 37; docs/documents.md): string ids mapped to
// slots (the numbers the lexical index and the vector index know a document by), each slot's
// text and metadata. The collection composes it with the lexical index and the HNSW index.
//
// Memory: one caller-provided span, carved once by create(): the slots' table, an id hash table
// (open addressing, FNV-1a) and one byte arena holding ids, texts and metadata back to back. A
// replaced or removed document's bytes become garbage; when a new one does not fit at the
// arena's end but would after the garbage is gone, the arena is compacted (live documents moved
// to its start, in slot order: bounded by the arena's size, and only then). Nothing allocates
// after creation. Calls must be serialised by the caller.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <ktl/result.h>

namespace text {

struct DocParams {
    uint32_t max_docs = 0;    // slots: 1 .. 2^22
    uint64_t arena_bytes = 0; // ids, texts and metadata together: 1 .. 2^32
    bool validate() const;
};

constexpr size_t kMaxDocId = 128;
constexpr size_t kMaxDocText = 65536;
constexpr size_t kMaxDocMetadata = 4096;

struct Doc {
    std::string_view id, text, metadata; // (views into the table: valid until its next change)
};

class DocTable {
public:
    static constexpr uint32_t kNone = 0xffffffffu;

    DocTable() = default;
    DocTable(DocTable&&) = default;
    DocTable& operator=(DocTable&&) = default;
    DocTable(const DocTable&) = delete;
    DocTable& operator=(const DocTable&) = delete;

    static size_t memory_needed(const DocParams& p); // 0 when p does not validate
    static ktl::Result<DocTable> create(const DocParams& p, std::span<std::byte> memory);

    // Whether the document `id` with this text and metadata can be stored now: InvalidArgs (an
    // id of 0 or more than kMaxDocId bytes, a text or metadata over its bound), Full (no free slot,
    // or no room even after compaction), or fine. Nothing changes.
    ktl::Result<void> check(std::string_view id, std::string_view text, std::string_view metadata) const;
    // Stores it (after a check() that said fine; anything else answers its error and changes
    // nothing): its slot, the one it had if it was there (`replaced`). A caller keeping a lexical
    // index removes the old text (get(slot) before this call) first: the arena may be compacted
    // here, which moves every view.
    ktl::Result<uint32_t> upsert(std::string_view id, std::string_view text, std::string_view metadata, bool& replaced);
    // What the caller remembers of the document in `slot` with it (the request that stored it:
    // a provenance node); 0 until set, and again once the slot is freed or reused.
    uint64_t tag(uint32_t slot) const { return slot < m_params.max_docs ? m_slots[slot].tag : 0; }
    void set_tag(uint32_t slot, uint64_t tag) {
        if (slot < m_params.max_docs && m_slots[slot].id_len)
            m_slots[slot].tag = tag;
    }
    // Stores `id` in `slot`, which must be free, as a snapshot had it (the indexes beside the
    // table know documents by slot). InvalidArgs: the slot is taken or out of range, or the id
    // is stored already; otherwise as check() says.
    ktl::Result<void> restore(uint32_t slot, std::string_view id, std::string_view text, std::string_view metadata);
    // The slot of `id`, or kNone.
    uint32_t find(std::string_view id) const;
    // The document in `slot` (empty views when the slot is free).
    Doc get(uint32_t slot) const;
    // Frees the slot of `id` and answers it (NotFound: no such document). A caller keeping a lexical
    // index reads the text (get) before.
    ktl::Result<uint32_t> remove(std::string_view id);

    uint32_t count() const { return m_count; }
    uint64_t bytes_live() const { return m_live; }
    uint64_t bytes_garbage() const { return m_garbage; }
    uint64_t compactions() const { return m_compactions; }
    const DocParams& params() const { return m_params; }

private:
    struct Slot {
        uint64_t at;     // offset in the arena (id, then text, then metadata)
        uint32_t id_len; // 0: free
        uint32_t text_len;
        uint32_t meta_len;
        uint32_t hash;
        uint64_t tag;
    };
    uint32_t table_find(std::string_view id, uint32_t hash, uint32_t* place) const;
    // Writes the document into `slot` at the arena's end (compacted first if need be).
    void store(uint32_t slot, uint32_t hash, std::string_view id, std::string_view text, std::string_view metadata);
    void table_erase(uint32_t place);
    void compact();
    uint64_t bytes_of(const Slot& s) const { return uint64_t(s.id_len) + s.text_len + s.meta_len; }

    DocParams m_params {};
    Slot* m_slots = nullptr;
    uint32_t* m_table = nullptr; // slot numbers by hash (kNone: empty)
    uint32_t m_table_mask = 0;
    uint32_t* m_order = nullptr; // compact()'s: live slots by offset
    char* m_arena = nullptr;
    uint64_t m_end = 0, m_live = 0, m_garbage = 0, m_compactions = 0;
    uint32_t m_count = 0, m_free_hint = 0;
};

} // namespace text
