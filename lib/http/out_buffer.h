#pragma once
// Appends text to a caller's buffer and remembers, rather than truncates, when it does not
// fit: a cut-off response or event must never be sent. Internal to lib/http.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include <ktl/decimal.h>

namespace http::detail {

class OutBuffer {
public:
    explicit OutBuffer(std::span<char> out) : m_out(out) {}

    void put(std::string_view s) {
        if (m_full || s.size() > m_out.size() - m_len) {
            m_full = true;
            return;
        }
        memcpy(m_out.data() + m_len, s.data(), s.size()); // a response's body goes through here
        m_len += s.size();
    }

    void put_decimal(uint64_t value) {
        char digits[20];
        put(ktl::format_decimal(value, digits));
    }

    bool full() const { return m_full; }
    size_t size() const { return m_len; }
    std::string_view view() const { return { m_out.data(), m_len }; }

private:
    std::span<char> m_out;
    size_t m_len = 0;
    bool m_full = false;
};

} // namespace http::detail
