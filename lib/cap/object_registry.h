#pragma once
// Object registry: a fixed pool of (type, pointer) entries named by ObjectId = {index,
// generation}. Destroying an object bumps its entry's generation, so every capability still
// holding the old id is dead (lookups fail with BadHandle) even after the entry is reused.
// The registry does not own the objects: the kernel frees the object itself after destroy.
#include <cstddef>
#include <cstdint>
#include <span>

#include <cap/rights.h>
#include <ktl/result.h>

namespace cap {

struct ObjectId {
    uint32_t index = 0;
    uint32_t generation = 0; // 0 is never issued: a default ObjectId names nothing

    constexpr bool is_null() const { return generation == 0; }
    constexpr uint64_t raw() const { return (uint64_t(generation) << 32) | index; }
    static constexpr ObjectId from_raw(uint64_t raw) { return { uint32_t(raw), uint32_t(raw >> 32) }; }
    friend constexpr bool operator==(ObjectId, ObjectId) = default;
};

// One registry slot. Public so the owner can size storage; only ObjectRegistry touches it.
struct ObjectEntry {
    void* ptr = nullptr;
    uint32_t generation = 1; // generation the next object created in this slot gets
    uint32_t next_free = 0;
    ObjectType type = ObjectType::None; // None while the slot is free
    bool retired = false;               // generation exhausted: never reused
    uint16_t owner = 0;                 // task whose end destroys the object (0: none)
};

class ObjectRegistry {
public:
    static constexpr uint32_t kNil = 0xffffffffu;

    ObjectRegistry() = default;
    // `storage` must outlive the registry; its size is the capacity. O(capacity).
    explicit ObjectRegistry(std::span<ObjectEntry> storage) { reset(storage); }
    void reset(std::span<ObjectEntry> storage);

    // O(1). InvalidArgs for type None (or out of range) or a null pointer; Full when no slot is free.
    // `owner` (a task id, 0 for none) is whose end destroys the object (see next_live).
    ktl::Result<ObjectId> create(ObjectType type, void* ptr, uint16_t owner = 0);
    // O(1). BadHandle if `id` does not name a live object.
    ktl::Result<void> destroy(ObjectId id);

    bool is_live(ObjectId id) const { return find(id) != nullptr; }
    // nullptr / None when `id` is dead.
    void* ptr(ObjectId id) const;
    ObjectType type(ObjectId id) const;

    struct Live {
        ObjectId id;
        ObjectType type;
        void* ptr;
        uint16_t owner;
    };
    // The first live object at index >= *cursor, cursor moved past it; false when none is left.
    // Walks the registry up to the highest slot ever handed out (destroying the object found is
    // allowed between calls): freed slots are reused first, so that is the live set's extent, not
    // the capacity (every ending task is swept this way, twice).
    bool next_live(uint32_t* cursor, Live* out) const;

    size_t capacity() const { return m_entries.size(); }
    size_t live_count() const { return m_live; }

private:
    const ObjectEntry* find(ObjectId id) const;

    std::span<ObjectEntry> m_entries;
    uint32_t m_free_head = kNil;
    uint32_t m_end = 0; // one past the highest slot ever handed out
    size_t m_live = 0;
};

} // namespace cap
