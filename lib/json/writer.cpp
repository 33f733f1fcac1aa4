#include "writer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <ktl/decimal.h>

namespace json {

bool valid_utf8(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
        auto b0 = static_cast<uint8_t>(s[i]);
        if (b0 < 0x80) {
            ++i;
            continue;
        }
        uint32_t need, cp, min;
        if (b0 >= 0xc2 && b0 <= 0xdf) {
            need = 1, cp = b0 & 0x1f, min = 0x80;
        } else if (b0 >= 0xe0 && b0 <= 0xef) {
            need = 2, cp = b0 & 0x0f, min = 0x800;
        } else if (b0 >= 0xf0 && b0 <= 0xf4) {
            need = 3, cp = b0 & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (i + need >= s.size())
            return false; // truncated sequence
        for (uint32_t k = 1; k <= need; ++k) {
            auto b = static_cast<uint8_t>(s[i + k]);
            if ((b & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (b & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += need + 1;
    }
    return true;
}

void Writer::put(char c) {
    if (m_len >= m_out.size()) {
        fail(ktl::Error::Full);
        return;
    }
    m_out[m_len++] = c;
}

void Writer::put_quoted(std::string_view s) {
    put('"');
    // Runs of characters that need no escape (nearly all of them) are copied at once.
    size_t run = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const auto u = static_cast<uint8_t>(c);
        if (u >= 0x20 && c != '"' && c != '\\')
            continue;
        put(s.substr(run, i - run));
        run = i + 1;
        switch (c) {
        case '"': put("\\\""); break;
        case '\\': put("\\\\"); break;
        case '\n': put("\\n"); break;
        case '\r': put("\\r"); break;
        case '\t': put("\\t"); break;
        case '\b': put("\\b"); break;
        case '\f': put("\\f"); break;
        default: {
            char esc[7];
            snprintf(esc, sizeof esc, "\\u%04x", u);
            put(esc);
        }
        }
    }
    put(s.substr(run));
    put('"');
}

void Writer::put(std::string_view s) {
    if (s.size() > m_out.size() - m_len) {
        fail(ktl::Error::Full);
        return;
    }
    memcpy(m_out.data() + m_len, s.data(), s.size());
    m_len += s.size();
}

bool Writer::before_value() {
    if (!ok())
        return false;
    if (m_depth == 0) {
        if (m_top_done) {
            fail(ktl::Error::InvalidArgs); // a second top-level value
            return false;
        }
        m_top_done = true;
        return true;
    }
    uint32_t d = m_depth - 1;
    if (m_object[d]) {
        if (!m_have_key) {
            fail(ktl::Error::InvalidArgs); // value without a key inside an object
            return false;
        }
        m_have_key = false;
        return true;
    }
    if (m_count[d]++ > 0)
        put(',');
    return ok();
}

Writer& Writer::begin_object() {
    if (!before_value())
        return *this;
    if (m_depth == kMaxDepth) {
        fail(ktl::Error::OutOfRange);
        return *this;
    }
    m_object[m_depth] = true;
    m_count[m_depth] = 0;
    ++m_depth;
    put('{');
    return *this;
}

Writer& Writer::begin_array() {
    if (!before_value())
        return *this;
    if (m_depth == kMaxDepth) {
        fail(ktl::Error::OutOfRange);
        return *this;
    }
    m_object[m_depth] = false;
    m_count[m_depth] = 0;
    ++m_depth;
    put('[');
    return *this;
}

Writer& Writer::end_object() {
    if (m_depth == 0 || !m_object[m_depth - 1] || m_have_key)
        fail(ktl::Error::InvalidArgs);
    if (!ok())
        return *this;
    --m_depth;
    put('}');
    return *this;
}

Writer& Writer::end_array() {
    if (m_depth == 0 || m_object[m_depth - 1])
        fail(ktl::Error::InvalidArgs);
    if (!ok())
        return *this;
    --m_depth;
    put(']');
    return *this;
}

Writer& Writer::key(std::string_view k) {
    if (!ok())
        return *this;
    if (m_depth == 0 || !m_object[m_depth - 1] || m_have_key || !valid_utf8(k)) {
        fail(ktl::Error::InvalidArgs);
        return *this;
    }
    if (m_count[m_depth - 1]++ > 0)
        put(',');
    put_quoted(k);
    put(':');
    m_have_key = true;
    return *this;
}

Writer& Writer::string(std::string_view s) {
    if (!valid_utf8(s)) {
        fail(ktl::Error::InvalidArgs);
        return *this;
    }
    if (!before_value())
        return *this;
    put_quoted(s);
    return *this;
}

Writer& Writer::number(int64_t v) {
    if (!before_value())
        return *this;
    // The magnitude in unsigned arithmetic: -INT64_MIN does not fit an int64_t.
    const uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    char buf[20];
    if (v < 0)
        put('-');
    put(ktl::format_decimal(magnitude, buf));
    return *this;
}

Writer& Writer::number(uint64_t v) {
    if (!before_value())
        return *this;
    char buf[20];
    put(ktl::format_decimal(v, buf));
    return *this;
}

namespace {

// The shortest %.Ng (N in 1..max) whose text reads back to `v`. A precision that reads back makes
// every longer one read back too (the longer one rounds at least as close), so it is found by
// bisection: a few conversions, not up to `max`. `max` 17 for a double, 9 for a float.
template <int max, typename T, typename Read>
std::string_view shortest(char (&buf)[32], T v, Read read_back) {
    int lo = 1, hi = max;
    while (lo < hi) {
        const int mid = ((lo + hi) / 2) % (max + 1); // (the modulus tells the compiler the output's bound)
        snprintf(buf, sizeof buf, "%.*g", mid, static_cast<double>(v));
        if (read_back(buf) == v)
            hi = mid;
        else
            lo = mid + 1;
    }
    const int n = snprintf(buf, sizeof buf, "%.*g", lo % (max + 1), static_cast<double>(v));
    return { buf, size_t(n) };
}

} // namespace

Writer& Writer::number(double v) {
    if (!std::isfinite(v)) {
        fail(ktl::Error::InvalidArgs); // JSON has no NaN or infinity
        return *this;
    }
    if (before_value()) {
        char buf[32];
        put(shortest<17>(buf, v, [](const char* text) { return strtod(text, nullptr); }));
    }
    return *this;
}

Writer& Writer::number_f32(float v) {
    if (!std::isfinite(v)) {
        fail(ktl::Error::InvalidArgs);
        return *this;
    }
    if (before_value()) {
        char buf[32];
        put(shortest<9>(buf, v, [](const char* text) { return strtof(text, nullptr); }));
    }
    return *this;
}

Writer& Writer::boolean(bool v) {
    if (before_value())
        put(v ? "true" : "false");
    return *this;
}

Writer& Writer::null() {
    if (before_value())
        put("null");
    return *this;
}

Writer& Writer::raw_members(std::string_view members) {
    if (!ok() || members.empty())
        return *this;
    if (m_depth == 0 || !m_object[m_depth - 1] || m_have_key) {
        fail(ktl::Error::InvalidArgs);
        return *this;
    }
    if (m_count[m_depth - 1]++ > 0)
        put(',');
    put(members);
    return *this;
}

Writer& Writer::raw(std::string_view json) {
    if (before_value())
        put(json);
    return *this;
}

} // namespace json

namespace json {

Writer& Writer::raw_string(std::string_view escaped_body) {
    if (before_value()) {
        put('"');
        put(escaped_body);
        put('"');
    }
    return *this;
}

} // namespace json
