#pragma once
// Bounded text building over a caller's buffer. Output past the capacity is dropped (and
// counted as truncation), never written out of bounds; the buffer is always NUL-terminated.
#include <cstdarg>
#include <cstddef>
#include <cstdio>

namespace ktl {

class Formatter {
public:
    Formatter(char* buf, size_t cap) : m_buf(buf), m_cap(cap) {
        if (m_cap > 0)
            m_buf[0] = '\0';
    }

    __attribute__((format(printf, 2, 3))) void append(const char* fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vappend(fmt, ap);
        va_end(ap);
    }

    void vappend(const char* fmt, va_list ap) {
        if (m_cap == 0) {
            m_truncated = true;
            return;
        }
        size_t room = m_cap - m_len;
        int n = vsnprintf(m_buf + m_len, room, fmt, ap);
        if (n < 0)
            return;
        if (static_cast<size_t>(n) >= room) {
            m_len = m_cap - 1;
            m_truncated = true;
        } else {
            m_len += static_cast<size_t>(n);
        }
    }

    void append_char(char c) {
        if (m_cap == 0 || m_len + 1 >= m_cap) {
            m_truncated = true;
            return;
        }
        m_buf[m_len++] = c;
        m_buf[m_len] = '\0';
    }

    size_t length() const { return m_len; }
    bool truncated() const { return m_truncated; }
    const char* c_str() const { return m_buf; }

private:
    char* m_buf;
    size_t m_cap;
    size_t m_len = 0;
    bool m_truncated = false;
};

} // namespace ktl
