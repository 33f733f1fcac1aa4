// The single-pass, non-recursive parser behind json::Document::parse.
#include "decode.h"
#include "json.h"

namespace json {
namespace {

constexpr uint32_t kHardDepth = 64;

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Decoded equality of two raw string bodies.
bool raw_strings_equal(std::string_view a, bool a_escaped, std::string_view b, bool b_escaped) {
    if (!a_escaped && !b_escaped)
        return a == b;
    StringDecoder da(a), db(b);
    char ca[4], cb[4];
    for (size_t guard = 0; guard <= a.size() + b.size(); ++guard) {
        int na = da.next(ca), nb = db.next(cb);
        if (na != nb || na < 0)
            return false;
        if (na == 0)
            return true;
        for (int i = 0; i < na; ++i)
            if (ca[i] != cb[i])
                return false;
    }
    return false;
}

class Parser {
public:
    Parser(std::string_view text, std::span<Node> nodes, const Limits& limits)
        : m_text(text), m_nodes(nodes), m_limits(limits) {}

    ktl::Result<uint32_t> run(ParseError& error);

private:
    struct Frame {
        uint32_t node;
        uint32_t count;
        bool object;
    };

    bool fail(Reason r) {
        if (m_reason == Reason::None) {
            m_reason = r;
            m_error_at = m_pos;
        }
        return false;
    }
    void skip_ws() {
        while (m_pos < m_text.size() && is_ws(m_text[m_pos]))
            ++m_pos;
    }
    bool at_end() const { return m_pos >= m_text.size(); }
    char peek() const { return m_text[m_pos]; }

    bool scan_string(uint32_t& start, uint32_t& length, bool& escaped);
    bool scan_utf8();
    bool scan_number();
    bool scan_literal(std::string_view word);
    bool value(); // one value at m_pos (containers are opened, not finished)
    bool key();   // one object key and its colon
    bool duplicate_key(const Frame& f, std::string_view key, bool escaped, uint32_t hash);
    bool add_child(Frame& f);

    std::string_view m_text;
    std::span<Node> m_nodes;
    const Limits& m_limits;
    size_t m_pos = 0;
    uint32_t m_used = 0;
    Frame m_stack[kHardDepth];
    uint32_t m_depth = 0;
    bool m_have_key = false;
    uint32_t m_key_start = 0, m_key_length = 0, m_key_hash = 0;
    uint32_t m_full_compares = 0; // key comparisons past an equal hash, per document
    bool m_key_escaped = false;
    bool m_too_complex = false;
    Reason m_reason = Reason::None;
    size_t m_error_at = 0;
};

bool Parser::scan_utf8() {
    auto b0 = static_cast<uint8_t>(m_text[m_pos]);
    uint32_t need, cp, min;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
        need = 1;
        cp = b0 & 0x1f;
        min = 0x80;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
        need = 2;
        cp = b0 & 0x0f;
        min = 0x800;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
        need = 3;
        cp = b0 & 0x07;
        min = 0x10000;
    } else {
        return fail(Reason::BadUtf8); // continuation byte, overlong lead (c0/c1) or > f4
    }
    if (m_pos + need >= m_text.size())
        return fail(Reason::BadUtf8); // truncated sequence
    for (uint32_t i = 1; i <= need; ++i) {
        auto b = static_cast<uint8_t>(m_text[m_pos + i]);
        if ((b & 0xc0) != 0x80)
            return fail(Reason::BadUtf8);
        cp = (cp << 6) | (b & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return fail(Reason::BadUtf8); // overlong, out of range, or an encoded surrogate
    m_pos += need + 1;
    return true;
}

bool Parser::scan_string(uint32_t& start, uint32_t& length, bool& escaped) {
    ++m_pos; // opening quote
    start = static_cast<uint32_t>(m_pos);
    escaped = false;
    while (true) {
        if (at_end())
            return fail(Reason::UnexpectedEnd);
        if (m_pos - start > m_limits.max_string)
            return fail(Reason::TooLong);
        char c = peek();
        auto u = static_cast<uint8_t>(c);
        if (c == '"') {
            length = static_cast<uint32_t>(m_pos - start);
            ++m_pos;
            break;
        }
        if (c == '\\') {
            escaped = true;
            if (m_pos + 1 >= m_text.size())
                return fail(Reason::UnexpectedEnd);
            char e = m_text[m_pos + 1];
            if (e == 'u') {
                for (size_t i = 2; i < 6; ++i) {
                    if (m_pos + i >= m_text.size())
                        return fail(Reason::UnexpectedEnd);
                    char h = m_text[m_pos + i];
                    bool hex = is_digit(h) || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F');
                    if (!hex)
                        return fail(Reason::BadEscape);
                }
                m_pos += 6;
            } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
                m_pos += 2;
            } else {
                return fail(Reason::BadEscape);
            }
            continue;
        }
        if (u < 0x20)
            return fail(Reason::ControlCharacter);
        if (u >= 0x80) {
            if (!scan_utf8())
                return false;
            continue;
        }
        ++m_pos;
    }
    if (escaped) {
        // Surrogate pairing is checked by decoding once: every later use then succeeds.
        StringDecoder d(m_text.substr(start, length));
        char tmp[4];
        for (size_t guard = 0; guard <= length; ++guard) {
            int n = d.next(tmp);
            if (n == 0)
                break;
            if (n < 0) {
                m_pos = start;
                return fail(Reason::BadEscape);
            }
        }
    }
    return true;
}

bool Parser::scan_number() {
    size_t start = m_pos;
    if (peek() == '-')
        ++m_pos;
    if (at_end())
        return fail(Reason::BadNumber);
    if (peek() == '0') {
        ++m_pos;
        if (!at_end() && is_digit(peek()))
            return fail(Reason::BadNumber); // leading zero
    } else if (is_digit(peek())) {
        while (!at_end() && is_digit(peek()))
            ++m_pos;
    } else {
        return fail(Reason::BadNumber);
    }
    if (!at_end() && peek() == '.') {
        ++m_pos;
        if (at_end() || !is_digit(peek()))
            return fail(Reason::BadNumber);
        while (!at_end() && is_digit(peek()))
            ++m_pos;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
        ++m_pos;
        if (!at_end() && (peek() == '+' || peek() == '-'))
            ++m_pos;
        if (at_end() || !is_digit(peek()))
            return fail(Reason::BadNumber);
        while (!at_end() && is_digit(peek()))
            ++m_pos;
    }
    if (m_pos - start > m_limits.max_number || m_pos - start > kMaxNumberLiteral) {
        m_pos = start;
        return fail(Reason::TooLong);
    }
    return true;
}

bool Parser::scan_literal(std::string_view word) {
    if (m_text.substr(m_pos, word.size()) != word)
        return fail(Reason::BadToken);
    m_pos += word.size();
    if (!at_end()) {
        char c = peek();
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c))
            return fail(Reason::BadToken); // "truex"
    }
    return true;
}

bool Parser::add_child(Frame& f) {
    ++f.count;
    if (f.object ? f.count > m_limits.max_members : f.count > m_limits.max_items)
        return fail(f.object ? Reason::TooManyMembers : Reason::TooManyItems);
    return true;
}

// FNV-1a over the key's unescaped bytes, so "\u0061" and "a" hash alike.
uint32_t key_hash(std::string_view raw, bool escaped) {
    uint32_t h = 2166136261u;
    auto mix = [&h](char c) {
        h ^= static_cast<uint8_t>(c);
        h *= 16777619u;
    };
    if (!escaped) {
        for (char c : raw)
            mix(c);
        return h;
    }
    StringDecoder d(raw);
    char bytes[4];
    for (size_t guard = 0; guard <= raw.size(); ++guard) {
        int n = d.next(bytes);
        if (n <= 0)
            break;
        for (int i = 0; i < n; ++i)
            mix(bytes[i]);
    }
    return h;
}

// Linear in the members, but a member is compared in full only when its hash matches, so an
// object of long, escaped keys costs what reading it costs. A flood of equal hashes (crafted
// collisions) is cut off by a per-document budget instead of going quadratic.
bool Parser::duplicate_key(const Frame& f, std::string_view key, bool escaped, uint32_t hash) {
    constexpr uint32_t kFullCompareBudget = 1024;
    // Members follow the object node; each member's subtree ends at its `end`.
    uint32_t i = f.node + 1;
    for (uint32_t n = 0; n < f.count && i < m_used; ++n) {
        const Node& m = m_nodes[i];
        if (m.key_hash == hash) {
            if (++m_full_compares > kFullCompareBudget) {
                m_too_complex = true;
                return true;
            }
            if (raw_strings_equal(m_text.substr(m.key_start, m.key_length), m.key_escaped, key, escaped))
                return true;
        }
        i = m.end;
    }
    return false;
}

bool Parser::key() {
    skip_ws();
    if (at_end())
        return fail(Reason::UnexpectedEnd);
    if (peek() != '"')
        return fail(Reason::BadToken);
    size_t at = m_pos;
    uint32_t start, length;
    bool escaped;
    if (!scan_string(start, length, escaped))
        return false;
    Frame& f = m_stack[m_depth - 1];
    uint32_t hash = key_hash(m_text.substr(start, length), escaped);
    if (duplicate_key(f, m_text.substr(start, length), escaped, hash)) {
        m_pos = at;
        return fail(m_too_complex ? Reason::TooComplex : Reason::DuplicateKey);
    }
    skip_ws();
    if (at_end())
        return fail(Reason::UnexpectedEnd);
    if (peek() != ':')
        return fail(Reason::BadToken);
    ++m_pos;
    m_have_key = true;
    m_key_start = start;
    m_key_length = length;
    m_key_escaped = escaped;
    m_key_hash = hash;
    return true;
}

bool Parser::value() {
    skip_ws();
    if (at_end())
        return fail(Reason::UnexpectedEnd);
    if (m_used >= m_nodes.size())
        return fail(Reason::ArenaFull);
    if (m_depth > 0 && !add_child(m_stack[m_depth - 1]))
        return false;
    uint32_t index = m_used++;
    Node& n = m_nodes[index];
    n = Node {};
    if (m_have_key) {
        n.key_start = m_key_start;
        n.key_length = m_key_length;
        n.key_escaped = m_key_escaped;
        n.key_hash = m_key_hash;
        m_have_key = false;
    }
    char c = peek();
    n.start = static_cast<uint32_t>(m_pos);
    switch (c) {
    case '{':
    case '[':
        if (m_depth >= m_limits.max_depth || m_depth >= kHardDepth)
            return fail(Reason::TooDeep);
        n.type = c == '{' ? Type::Object : Type::Array;
        m_stack[m_depth++] = Frame { index, 0, c == '{' };
        ++m_pos;
        return true;
    case '"': {
        n.type = Type::String;
        uint32_t start, length;
        bool escaped;
        if (!scan_string(start, length, escaped))
            return false;
        n.start = start;
        n.length = length;
        n.flag = escaped;
        break;
    }
    case 't':
    case 'f':
        n.type = Type::Bool;
        n.flag = c == 't';
        if (!scan_literal(c == 't' ? "true" : "false"))
            return false;
        n.length = static_cast<uint32_t>(m_pos - n.start);
        break;
    case 'n':
        n.type = Type::Null;
        if (!scan_literal("null"))
            return false;
        n.length = 4;
        break;
    default:
        if (c != '-' && !is_digit(c))
            return fail(Reason::BadToken);
        n.type = Type::Number;
        if (!scan_number())
            return false;
        n.length = static_cast<uint32_t>(m_pos - n.start);
        break;
    }
    n.end = index + 1;
    return true;
}

ktl::Result<uint32_t> Parser::run(ParseError& error) {
    auto failed = [&]() -> ktl::Result<uint32_t> {
        error.reason = m_reason;
        error.offset = m_error_at;
        return ktl::Error::Corrupt;
    };
    if (m_text.size() > m_limits.max_input) {
        fail(Reason::TooLong);
        return failed();
    }
    skip_ws();
    if (at_end()) {
        fail(Reason::Empty);
        return failed();
    }
    // States: expecting a value, or just after one (inside a container or at the top).
    bool expect_value = true;
    // Every iteration consumes input, so the loop ends within text.size() + 1 steps.
    for (size_t guard = 0; guard <= m_text.size() + 1; ++guard) {
        if (expect_value) {
            uint32_t before = m_depth;
            if (!value())
                return failed();
            if (m_depth > before) { // opened a container: is it empty?
                skip_ws();
                if (at_end()) {
                    fail(Reason::UnexpectedEnd);
                    return failed();
                }
                Frame& f = m_stack[m_depth - 1];
                if (peek() == (f.object ? '}' : ']')) {
                    ++m_pos;
                    m_nodes[f.node].count = 0;
                    m_nodes[f.node].end = m_used;
                    m_nodes[f.node].length = static_cast<uint32_t>(m_pos - m_nodes[f.node].start);
                    --m_depth;
                    expect_value = false;
                    continue;
                }
                if (f.object && !key())
                    return failed();
                continue;
            }
            expect_value = false;
            continue;
        }
        skip_ws();
        if (m_depth == 0) {
            if (!at_end()) {
                fail(Reason::TrailingData);
                return failed();
            }
            return m_used;
        }
        if (at_end()) {
            fail(Reason::UnexpectedEnd);
            return failed();
        }
        Frame& f = m_stack[m_depth - 1];
        char c = peek();
        if (c == ',') {
            ++m_pos;
            if (f.object && !key())
                return failed();
            expect_value = true;
            continue;
        }
        if (c == (f.object ? '}' : ']')) {
            ++m_pos;
            m_nodes[f.node].count = f.count;
            m_nodes[f.node].end = m_used;
            m_nodes[f.node].length = static_cast<uint32_t>(m_pos - m_nodes[f.node].start);
            --m_depth;
            continue;
        }
        fail(Reason::BadToken);
        return failed();
    }
    fail(Reason::BadToken);
    return failed();
}

} // namespace

const char* reason_name(Reason r) {
    switch (r) {
    case Reason::None: return "none";
    case Reason::Empty: return "empty";
    case Reason::UnexpectedEnd: return "unexpected_end";
    case Reason::BadToken: return "bad_token";
    case Reason::BadNumber: return "bad_number";
    case Reason::BadString: return "bad_string";
    case Reason::BadEscape: return "bad_escape";
    case Reason::BadUtf8: return "bad_utf8";
    case Reason::ControlCharacter: return "control_character";
    case Reason::TooDeep: return "too_deep";
    case Reason::TooLong: return "too_long";
    case Reason::TooManyMembers: return "too_many_members";
    case Reason::TooManyItems: return "too_many_items";
    case Reason::DuplicateKey: return "duplicate_key";
    case Reason::TrailingData: return "trailing_data";
    case Reason::ArenaFull: return "arena_full";
    case Reason::TooComplex: return "too_complex";
    }
    return "unknown";
}

ktl::Result<Document> Document::parse(std::string_view text, std::span<Node> nodes, const Limits& limits,
                                      ParseError* error) {
    ParseError local;
    Parser p(text, nodes, limits);
    auto used = p.run(error ? *error : local);
    if (!used)
        return used.error();
    Document d;
    d.m_text = text;
    d.m_nodes = nodes.data();
    d.m_count = *used;
    return d;
}

} // namespace json
