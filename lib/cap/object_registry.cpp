#include <cap/object_registry.h>

#include <limits>

namespace cap {

void ObjectRegistry::reset(std::span<ObjectEntry> storage) {
    m_entries = storage.size() > kNil ? storage.first(kNil) : storage;
    m_live = 0;
    m_end = 0;
    m_free_head = kNil;
    // Build the free list so that index 0 is handed out first.
    for (size_t i = m_entries.size(); i > 0; --i) {
        ObjectEntry& e = m_entries[i - 1];
        e = ObjectEntry {};
        e.next_free = m_free_head;
        m_free_head = uint32_t(i - 1);
    }
}

ktl::Result<ObjectId> ObjectRegistry::create(ObjectType type, void* ptr, uint16_t owner) {
    if (!is_valid_type(type) || ptr == nullptr)
        return ktl::Error::InvalidArgs;
    if (m_free_head == kNil)
        return ktl::Error::Full;
    uint32_t index = m_free_head;
    ObjectEntry& e = m_entries[index];
    m_free_head = e.next_free;
    e.next_free = kNil;
    e.type = type;
    e.ptr = ptr;
    e.owner = owner;
    if (index >= m_end)
        m_end = index + 1;
    ++m_live;
    return ObjectId { index, e.generation };
}

ktl::Result<void> ObjectRegistry::destroy(ObjectId id) {
    if (find(id) == nullptr)
        return ktl::Error::BadHandle;
    ObjectEntry& e = m_entries[id.index];
    e.type = ObjectType::None;
    e.ptr = nullptr;
    e.owner = 0;
    --m_live;
    if (e.generation == std::numeric_limits<uint32_t>::max()) {
        // Reusing the slot would wrap the generation back to an id some stale capability may
        // still hold, so the slot is retired for good (after 4 billion reuses).
        e.retired = true;
        return {};
    }
    ++e.generation;
    e.next_free = m_free_head;
    m_free_head = id.index;
    return {};
}

bool ObjectRegistry::next_live(uint32_t* cursor, Live* out) const {
    for (uint32_t i = *cursor; i < m_end; ++i) {
        const ObjectEntry& e = m_entries[i];
        if (e.type == ObjectType::None)
            continue;
        *out = { ObjectId { i, e.generation }, e.type, e.ptr, e.owner };
        *cursor = i + 1;
        return true;
    }
    *cursor = m_end > *cursor ? m_end : *cursor;
    return false;
}

const ObjectEntry* ObjectRegistry::find(ObjectId id) const {
    if (id.is_null() || id.index >= m_entries.size())
        return nullptr;
    const ObjectEntry& e = m_entries[id.index];
    if (e.type == ObjectType::None || e.generation != id.generation)
        return nullptr;
    return &e;
}

void* ObjectRegistry::ptr(ObjectId id) const {
    const ObjectEntry* e = find(id);
    return e ? e->ptr : nullptr;
}

ObjectType ObjectRegistry::type(ObjectId id) const {
    const ObjectEntry* e = find(id);
    return e ? e->type : ObjectType::None;
}

} // namespace cap
