// Navigation and typed access over a parsed Document.
#include "decode.h"
#include "json.h"

#include <cmath>
#include <cstdlib>

namespace json {

const Node& Value::node() const { return m_doc->node(m_index); }
Type Value::type() const { return node().type; }

std::optional<bool> Value::as_bool() const {
    if (!is_bool())
        return std::nullopt;
    return node().flag;
}

std::string_view Value::raw() const {
    if (!valid())
        return {};
    return m_doc->text().substr(node().start, node().length);
}

size_t value_bound(std::string_view text) {
    size_t n = 1;
    for (char c : text)
        n += c == '[' || c == ',' || c == ':';
    return n;
}

std::string_view Value::json_text() const {
    if (!is_string())
        return raw();
    // A string node starts after its opening quote and its closing quote follows the body.
    return m_doc->text().substr(node().start - 1, node().length + 2);
}

std::optional<int64_t> Value::as_int64() const {
    if (!is_number())
        return std::nullopt;
    std::string_view s = raw();
    bool negative = !s.empty() && s[0] == '-';
    size_t i = negative ? 1 : 0;
    uint64_t magnitude = 0;
    for (; i < s.size(); ++i) {
        char c = s[i];
        if (c < '0' || c > '9')
            return std::nullopt; // fraction or exponent: not an integer literal
        uint64_t d = uint64_t(c - '0');
        if (magnitude > (UINT64_MAX - d) / 10)
            return std::nullopt;
        magnitude = magnitude * 10 + d;
    }
    if (negative) {
        if (magnitude > uint64_t(INT64_MAX) + 1)
            return std::nullopt;
        return magnitude == uint64_t(INT64_MAX) + 1 ? INT64_MIN : -int64_t(magnitude);
    }
    if (magnitude > uint64_t(INT64_MAX))
        return std::nullopt;
    return int64_t(magnitude);
}

std::optional<uint64_t> Value::as_uint64() const {
    if (!is_number() || raw().empty() || raw()[0] == '-')
        return std::nullopt;
    uint64_t v = 0;
    for (char c : raw()) {
        if (c < '0' || c > '9')
            return std::nullopt;
        uint64_t d = uint64_t(c - '0');
        if (v > (UINT64_MAX - d) / 10)
            return std::nullopt;
        v = v * 10 + d;
    }
    return v;
}

std::optional<double> Value::as_double() const {
    if (!is_number())
        return std::nullopt;
    char buf[kMaxNumberLiteral + 1];
    std::string_view s = raw();
    if (s.size() >= sizeof buf)
        return std::nullopt;
    for (size_t i = 0; i < s.size(); ++i)
        buf[i] = s[i];
    buf[s.size()] = '\0';
    // strtod rounds correctly (glibc on the host, picolibc in the kernel); the literal was
    // validated as JSON, so it is plain decimal.
    double d = strtod(buf, nullptr);
    if (!std::isfinite(d))
        return std::nullopt;
    return d;
}

std::optional<float> Value::as_float() const {
    auto d = as_double();
    if (!d || std::fabs(*d) > 3.4028234663852886e38)
        return std::nullopt;
    return static_cast<float>(*d);
}

ktl::Result<size_t> unescape(std::string_view raw, std::span<char> out) {
    StringDecoder d(raw);
    size_t n = 0;
    char tmp[4];
    for (size_t guard = 0; guard <= raw.size(); ++guard) {
        int k = d.next(tmp);
        if (k == 0)
            return n;
        if (k < 0)
            return ktl::Error::Corrupt;
        if (n + size_t(k) > out.size())
            return ktl::Error::Truncated;
        for (int i = 0; i < k; ++i)
            out[n++] = tmp[i];
    }
    return ktl::Error::Corrupt;
}

static bool decoded_equals(std::string_view raw, bool escaped, std::string_view text) {
    if (!escaped)
        return raw == text;
    StringDecoder d(raw);
    size_t pos = 0;
    char tmp[4];
    for (size_t guard = 0; guard <= raw.size(); ++guard) {
        int k = d.next(tmp);
        if (k < 0)
            return false;
        if (k == 0)
            return pos == text.size();
        if (pos + size_t(k) > text.size())
            return false;
        for (int i = 0; i < k; ++i)
            if (text[pos++] != tmp[i])
                return false;
    }
    return false;
}

ktl::Result<size_t> Value::string_into(std::span<char> out) const {
    if (!is_string())
        return ktl::Error::WrongType;
    return unescape(raw(), out);
}

std::optional<std::string_view> Value::plain_string() const {
    if (!is_string() || node().flag)
        return std::nullopt;
    return raw();
}

bool Value::string_equals(std::string_view text) const {
    return is_string() && decoded_equals(raw(), node().flag, text);
}

bool Value::key_equals(std::string_view text) const {
    if (!valid())
        return false;
    const Node& n = node();
    return decoded_equals(m_doc->text().substr(n.key_start, n.key_length), n.key_escaped, text);
}

ktl::Result<size_t> Value::key_into(std::span<char> out) const {
    if (!valid())
        return ktl::Error::BadHandle;
    const Node& n = node();
    return unescape(m_doc->text().substr(n.key_start, n.key_length), out);
}

uint32_t Value::size() const {
    if (!valid() || (type() != Type::Array && type() != Type::Object))
        return 0;
    return node().count;
}

Value Value::first() const {
    if (size() == 0)
        return {};
    Value v(m_doc, m_index + 1);
    v.m_parent_end = node().end;
    return v;
}

Value Value::next_sibling() const {
    if (!valid())
        return {};
    uint32_t next = node().end;
    if (next >= m_parent_end)
        return {};
    Value v(m_doc, next);
    v.m_parent_end = m_parent_end;
    return v;
}

Value Value::at(uint32_t i) const {
    Value v = first();
    for (uint32_t n = 0; n < i && v.valid(); ++n)
        v = v.next_sibling();
    return v;
}

Value Value::find(std::string_view key) const {
    if (!is_object())
        return {};
    for (Value v = first(); v.valid(); v = v.next_sibling())
        if (v.key_equals(key))
            return v;
    return {};
}

} // namespace json
