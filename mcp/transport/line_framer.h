#pragma once
// Newline-delimited framing for the serial transport (MCP stdio transport: one JSON-RPC message
// per line). Bytes are fed as they arrive; complete lines are handed out without the newline
// (a trailing CR is dropped too). A line longer than the buffer is discarded up to its newline
// and reported once, with its length, so the sender gets an error and the line keeps working.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace mcp {

struct FrameEvent {
    enum Kind : uint8_t { Line, Overflow } kind;
    std::string_view line;  // Line: valid until the next feed()
    uint64_t discarded = 0; // Overflow: bytes dropped (the whole overlong line)
};

class LineFramer {
public:
    explicit LineFramer(std::span<char> buffer) : m_buf(buffer) {}

    // Calls on_event(const FrameEvent&) for every complete line or overflow in `data`. Empty
    // lines (keep-alive newlines) produce nothing.
    template <typename Fn>
    void feed(std::span<const uint8_t> data, Fn&& on_event) {
        for (uint8_t byte : data) {
            if (byte == '\n') {
                if (m_overflow) {
                    on_event(FrameEvent { FrameEvent::Overflow, {}, m_discarded });
                    m_overflow = false;
                    m_discarded = 0;
                } else {
                    size_t len = m_len;
                    if (len > 0 && m_buf[len - 1] == '\r')
                        --len;
                    if (len > 0)
                        on_event(FrameEvent { FrameEvent::Line, std::string_view(m_buf.data(), len), 0 });
                }
                m_len = 0;
                continue;
            }
            if (m_overflow) {
                ++m_discarded;
                continue;
            }
            if (m_len == m_buf.size()) {
                m_overflow = true;
                m_discarded = m_len + 1;
                m_len = 0;
                continue;
            }
            m_buf[m_len++] = static_cast<char>(byte);
        }
    }

    size_t pending() const { return m_len; }
    bool discarding() const { return m_overflow; }

private:
    std::span<char> m_buf;
    size_t m_len = 0;
    bool m_overflow = false;
    uint64_t m_discarded = 0;
};

} // namespace mcp
