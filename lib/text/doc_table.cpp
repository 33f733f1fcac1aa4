#include "doc_table.h"

#include "hash.h"

#include <cstring>

namespace text {
namespace {

using detail::fnv1a;

using detail::table_size;

size_t align8(size_t v) { return (v + 7) & ~size_t(7); }

} // namespace

bool DocParams::validate() const {
    return max_docs >= 1 && max_docs <= (1u << 22) && arena_bytes >= 1 && arena_bytes <= (1ull << 32);
}

size_t DocTable::memory_needed(const DocParams& p) {
    if (!p.validate())
        return 0;
    return 8 + align8(size_t(p.max_docs) * sizeof(Slot)) + align8(size_t(table_size(p.max_docs)) * 4) +
           align8(size_t(p.max_docs) * 4) + align8(p.arena_bytes);
}

ktl::Result<DocTable> DocTable::create(const DocParams& p, std::span<std::byte> memory) {
    if (!p.validate())
        return ktl::Error::InvalidArgs;
    if (memory.size() < memory_needed(p))
        return ktl::Error::NoMemory;
    auto* base = memory.data() +
                 (align8(reinterpret_cast<uintptr_t>(memory.data())) - reinterpret_cast<uintptr_t>(memory.data()));
    DocTable t;
    t.m_params = p;
    t.m_slots = reinterpret_cast<Slot*>(base);
    base += align8(size_t(p.max_docs) * sizeof(Slot));
    t.m_table = reinterpret_cast<uint32_t*>(base);
    t.m_table_mask = table_size(p.max_docs) - 1;
    base += align8(size_t(table_size(p.max_docs)) * 4);
    t.m_order = reinterpret_cast<uint32_t*>(base);
    base += align8(size_t(p.max_docs) * 4);
    t.m_arena = reinterpret_cast<char*>(base);
    for (uint32_t i = 0; i < p.max_docs; ++i)
        t.m_slots[i] = Slot {};
    for (uint32_t i = 0; i <= t.m_table_mask; ++i)
        t.m_table[i] = kNone;
    return t;
}

uint32_t DocTable::table_find(std::string_view id, uint32_t hash, uint32_t* place) const {
    for (uint32_t i = hash & m_table_mask, probes = 0; probes <= m_table_mask; i = (i + 1) & m_table_mask, ++probes) {
        const uint32_t s = m_table[i];
        if (s == kNone) {
            if (place)
                *place = i;
            return kNone;
        }
        const Slot& slot = m_slots[s];
        if (slot.hash == hash && std::string_view(m_arena + slot.at, slot.id_len) == id) {
            if (place)
                *place = i;
            return s;
        }
    }
    return kNone; // (the table is twice the slots: never full)
}

// Linear probing's deletion: the entries after the hole that would no longer be found move back.
void DocTable::table_erase(uint32_t place) {
    uint32_t hole = place;
    for (uint32_t i = (hole + 1) & m_table_mask; m_table[i] != kNone; i = (i + 1) & m_table_mask) {
        const uint32_t home = m_slots[m_table[i]].hash & m_table_mask;
        // Whether `home` lies cyclically in (hole, i]: then the entry stays where it is.
        const bool stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
        if (!stays) {
            m_table[hole] = m_table[i];
            hole = i;
        }
    }
    m_table[hole] = kNone;
}

uint32_t DocTable::find(std::string_view id) const {
    if (id.empty() || id.size() > kMaxDocId)
        return kNone;
    return table_find(id, fnv1a(id), nullptr);
}

Doc DocTable::get(uint32_t slot) const {
    if (slot >= m_params.max_docs || m_slots[slot].id_len == 0)
        return {};
    const Slot& s = m_slots[slot];
    const char* p = m_arena + s.at;
    return { { p, s.id_len }, { p + s.id_len, s.text_len }, { p + s.id_len + s.text_len, s.meta_len } };
}

ktl::Result<void> DocTable::check(std::string_view id, std::string_view text, std::string_view metadata) const {
    if (id.empty() || id.size() > kMaxDocId || text.size() > kMaxDocText || metadata.size() > kMaxDocMetadata)
        return ktl::Error::InvalidArgs;
    const uint32_t existing = find(id);
    if (existing == kNone && m_count == m_params.max_docs)
        return ktl::Error::Full;
    const uint64_t need = uint64_t(id.size()) + text.size() + metadata.size();
    const uint64_t freed = existing == kNone ? 0 : bytes_of(m_slots[existing]);
    if (m_end + need <= m_params.arena_bytes || m_live - freed + need <= m_params.arena_bytes)
        return {};
    return ktl::Error::Full;
}

ktl::Result<uint32_t> DocTable::upsert(std::string_view id, std::string_view text, std::string_view metadata,
                                       bool& replaced) {
    if (auto ok = check(id, text, metadata); !ok)
        return ok.error();
    const uint32_t hash = fnv1a(id);
    uint32_t place = 0;
    uint32_t slot = table_find(id, hash, &place);
    replaced = slot != kNone;
    if (replaced) { // its bytes are garbage now; the slot and the table's entry stay
        m_live -= bytes_of(m_slots[slot]);
        m_garbage += bytes_of(m_slots[slot]);
        m_slots[slot].id_len = 0; // (free for compact(): it moves nothing of it)
        --m_count;
    } else {
        for (uint32_t k = 0; k < m_params.max_docs; ++k) { // the next free slot (check() saw one)
            const uint32_t i = (m_free_hint + k) % m_params.max_docs;
            if (m_slots[i].id_len == 0) {
                slot = i;
                break;
            }
        }
        m_free_hint = (slot + 1) % m_params.max_docs;
    }
    store(slot, hash, id, text, metadata);
    if (!replaced)
        m_table[place] = slot;
    return slot;
}

void DocTable::store(uint32_t slot, uint32_t hash, std::string_view id, std::string_view text,
                     std::string_view metadata) {
    const uint64_t need = uint64_t(id.size()) + text.size() + metadata.size();
    if (m_end + need > m_params.arena_bytes)
        compact();
    Slot& s = m_slots[slot];
    s = Slot { m_end,
               static_cast<uint32_t>(id.size()),
               static_cast<uint32_t>(text.size()),
               static_cast<uint32_t>(metadata.size()),
               hash,
               0 };
    char* p = m_arena + m_end;
    std::memcpy(p, id.data(), id.size());
    std::memcpy(p + id.size(), text.data(), text.size());
    std::memcpy(p + id.size() + text.size(), metadata.data(), metadata.size());
    m_end += need;
    m_live += need;
    ++m_count;
}

ktl::Result<void> DocTable::restore(uint32_t slot, std::string_view id, std::string_view text,
                                    std::string_view metadata) {
    if (slot >= m_params.max_docs || m_slots[slot].id_len != 0)
        return ktl::Error::InvalidArgs;
    TRY_VOID(check(id, text, metadata));
    const uint32_t hash = fnv1a(id);
    uint32_t place = 0;
    if (table_find(id, hash, &place) != kNone)
        return ktl::Error::InvalidArgs;
    store(slot, hash, id, text, metadata);
    m_table[place] = slot;
    return {};
}

ktl::Result<uint32_t> DocTable::remove(std::string_view id) {
    if (id.empty() || id.size() > kMaxDocId)
        return ktl::Error::NotFound;
    uint32_t place = 0;
    const uint32_t slot = table_find(id, fnv1a(id), &place);
    if (slot == kNone)
        return ktl::Error::NotFound;
    table_erase(place);
    m_live -= bytes_of(m_slots[slot]);
    m_garbage += bytes_of(m_slots[slot]);
    m_slots[slot].id_len = 0;
    m_slots[slot].text_len = m_slots[slot].meta_len = 0;
    --m_count;
    return slot;
}

// The live documents moved to the arena's start in the order they lie in it (each moves down or
// stays: nothing is overwritten before it moved). Their order by offset: a heap sort of the slots.
void DocTable::compact() {
    uint32_t n = 0;
    for (uint32_t i = 0; i < m_params.max_docs; ++i)
        if (m_slots[i].id_len != 0)
            m_order[n++] = i;
    auto before = [&](uint32_t a, uint32_t b) { return m_slots[a].at < m_slots[b].at; };
    auto sift = [&](uint32_t i, uint32_t size) {
        for (;;) {
            uint32_t top = i;
            const uint32_t l = 2 * i + 1, r = l + 1;
            if (l < size && before(m_order[top], m_order[l]))
                top = l;
            if (r < size && before(m_order[top], m_order[r]))
                top = r;
            if (top == i)
                return;
            const uint32_t t = m_order[i];
            m_order[i] = m_order[top];
            m_order[top] = t;
            i = top;
        }
    };
    for (uint32_t i = n / 2; i-- > 0;)
        sift(i, n);
    for (uint32_t size = n; size > 1; --size) {
        const uint32_t t = m_order[0];
        m_order[0] = m_order[size - 1];
        m_order[size - 1] = t;
        sift(0, size - 1);
    }
    uint64_t at = 0;
    for (uint32_t k = 0; k < n; ++k) {
        Slot& s = m_slots[m_order[k]];
        const uint64_t bytes = bytes_of(s);
        if (s.at != at)
            std::memmove(m_arena + at, m_arena + s.at, bytes);
        s.at = at;
        at += bytes;
    }
    m_end = at;
    m_garbage = 0;
    ++m_compactions;
}

} // namespace text
