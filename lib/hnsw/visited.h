#pragma once
// Epoch-stamped visited set: one uint16_t per slot; a new search bumps the epoch instead of
// clearing the array, which is cleared only when the epoch wraps (every 65535 searches).
#include <cstdint>
#include <cstring>

namespace hnsw {

class VisitedList {
public:
    VisitedList() = default;
    VisitedList(uint16_t* marks, uint32_t size) : m_marks(marks), m_size(size) {
        std::memset(m_marks, 0, sizeof(uint16_t) * m_size);
    }

    void next_epoch() {
        if (++m_epoch == 0) {
            std::memset(m_marks, 0, sizeof(uint16_t) * m_size);
            m_epoch = 1;
        }
    }

    // True when the slot was already visited in this epoch; marks it otherwise.
    bool test_and_set(uint32_t slot) {
        if (m_marks[slot] == m_epoch)
            return true;
        m_marks[slot] = m_epoch;
        return false;
    }

    uint32_t size() const { return m_size; }

private:
    uint16_t* m_marks = nullptr;
    uint32_t m_size = 0;
    uint16_t m_epoch = 0;
};

} // namespace hnsw
