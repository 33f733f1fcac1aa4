#pragma once
// The kernel log: fixed slots in a ring, newest overwriting oldest, each record with a
// sequence number so readers (console, kernel://log resource, notifications/message) can
// resume where they stopped and tell how many records they missed.
#include <cstddef>
#include <cstdint>

namespace ktl {

enum class LogLevel : uint8_t { Debug = 0, Info, Notice, Warning, Error, Critical };

const char* log_level_name(LogLevel level); // "debug", "info", ... (MCP/syslog names)

struct LogRecord {
    static constexpr size_t kMaxText = 200;
    uint64_t seq = 0;
    uint64_t mono_ns = 0;             // monotonic time since boot
    int64_t unix_seconds = 0;         // wall clock when known, else 0
    LogLevel level = LogLevel::Debug; // zero, so an empty ring lives in .bss, not in the image
    uint16_t length = 0;
    char text[kMaxText + 1] = {};
};

template <size_t Slots>
class LogRing {
    static_assert(Slots >= 2 && (Slots & (Slots - 1)) == 0, "slots must be a power of two");

public:
    // Appends a record (text truncated to kMaxText); returns its sequence number.
    // Callers serialise appends (the kernel wraps this in an IRQ-safe lock).
    uint64_t append(LogLevel level, uint64_t mono_ns, int64_t unix_seconds, const char* text, size_t len) {
        uint64_t seq = m_next_seq++;
        LogRecord& r = m_slots[seq & (Slots - 1)];
        r.seq = seq;
        r.mono_ns = mono_ns;
        r.unix_seconds = unix_seconds;
        r.level = level;
        if (len > LogRecord::kMaxText)
            len = LogRecord::kMaxText;
        for (size_t i = 0; i < len; ++i)
            r.text[i] = text[i];
        r.text[len] = '\0';
        r.length = static_cast<uint16_t>(len);
        return seq;
    }

    uint64_t next_seq() const { return m_next_seq; }
    uint64_t oldest_seq() const { return m_next_seq > Slots ? m_next_seq - Slots : 0; }

    // Copies the record with this sequence number, if it is still held.
    bool read(uint64_t seq, LogRecord& out) const {
        if (seq >= m_next_seq || seq < oldest_seq())
            return false;
        out = m_slots[seq & (Slots - 1)];
        return true;
    }

private:
    uint64_t m_next_seq = 0;
    LogRecord m_slots[Slots];
};

// "[    12.345678] info    text" into out; returns characters written (NUL-terminated).
size_t format_log_line(const LogRecord& record, char* out, size_t cap);

} // namespace ktl
