// libFuzzer target for lib/json: the reader, typed access, and the writer.
//
// Each input is used four ways:
//  1. As a document, parsed first as a reference with every limit wide open and an arena that
//     always fits. On success every node is walked and checked: navigation, as_int64/as_uint64/
//     as_double/as_float against independent conversions, the number grammar, string_into/
//     key_into/string_equals/key_equals/find, raw() of each container re-parsed. An arena of
//     exactly node_count() nodes fits; one node fewer is ArenaFull.
//  2. Parsed again under the default limits, tight limits, and limits and an arena drawn from
//     the input: each success must be node for node the reference and honour its limits; each
//     failure is a limit, or exactly the reference's failure (same reason, same offset).
//  3. Within the default limits, re-serialised through json::Writer and re-parsed: the second
//     tree must match the first, and writing it again must give the same bytes.
//  4. As a string for the writer (accepted exactly when valid_utf8), cross-checked against the
//     reader's own UTF-8 check; as raw bits for number(double/int64/uint64) round trips; and as
//     a program of writer calls whose output parses whenever the writer says complete().
// Any inconsistency abort()s with a message, which libFuzzer reports as a crash.
#include <json/json.h>
#include <json/writer.h>

#include <cfloat>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"

namespace {

#define CHECK(cond) FUZZ_CHECK("json_fuzz", cond)

bool is_limit(json::Reason r) {
    return r == json::Reason::TooDeep || r == json::Reason::TooLong || r == json::Reason::TooManyMembers ||
           r == json::Reason::TooManyItems || r == json::Reason::ArenaFull;
}

json::Limits tight_limits() {
    json::Limits l;
    l.max_input = 256;
    l.max_depth = 3;
    l.max_string = 8;
    l.max_members = 3;
    l.max_items = 4;
    l.max_number = 6;
    return l;
}

// RFC 8259 section 6, written independently of the parser:
// number = [ minus ] int [ frac ] [ exp ]; int = zero / ( digit1-9 *DIGIT )
bool number_grammar(std::string_view s) {
    size_t i = 0;
    auto digit = [&](size_t at) { return at < s.size() && s[at] >= '0' && s[at] <= '9'; };
    if (i < s.size() && s[i] == '-')
        ++i;
    if (!digit(i))
        return false;
    if (s[i] == '0') {
        ++i;
    } else {
        while (digit(i))
            ++i;
    }
    if (i < s.size() && s[i] == '.') {
        if (!digit(++i))
            return false;
        while (digit(i))
            ++i;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-'))
            ++i;
        if (!digit(i))
            return false;
        while (digit(i))
            ++i;
    }
    return i == s.size();
}

std::string decoded(const json::Value& v) {
    std::string out(v.raw().size(), '\0'); // decoding never grows a string body
    auto n = v.string_into({ out.data(), out.size() });
    CHECK(n.ok());
    out.resize(*n);
    return out;
}

std::string decoded_key(const json::Value& member) {
    std::string out(64, '\0');
    auto k = member.key_into({ out.data(), out.size() });
    while (!k.ok() && k.error() == ktl::Error::Truncated && out.size() < (1u << 30)) {
        out.resize(out.size() * 4);
        k = member.key_into({ out.data(), out.size() });
    }
    CHECK(k.ok());
    out.resize(*k);
    return out;
}

struct Walk {
    const json::Document& doc;
    const json::Limits& limits;
    uint32_t next_index = 0;
};

void check_number(const json::Value& v) {
    std::string_view lit = v.raw();
    CHECK(number_grammar(lit));
    bool integral = lit.find_first_of(".eE") == std::string_view::npos;
    auto i = v.as_int64();
    auto u = v.as_uint64();
    int64_t want_i = 0;
    auto ri = std::from_chars(lit.data(), lit.data() + lit.size(), want_i);
    bool i_ok = integral && ri.ec == std::errc() && ri.ptr == lit.data() + lit.size();
    CHECK(i.has_value() == i_ok);
    if (i)
        CHECK(*i == want_i);
    uint64_t want_u = 0;
    auto ru = std::from_chars(lit.data(), lit.data() + lit.size(), want_u);
    bool u_ok = integral && lit[0] != '-' && ru.ec == std::errc() && ru.ptr == lit.data() + lit.size();
    CHECK(u.has_value() == u_ok);
    if (u)
        CHECK(*u == want_u);
    if (i && u)
        CHECK(uint64_t(*i) == *u);
    auto d = v.as_double();
    std::string copy(lit);
    double want_d = strtod(copy.c_str(), nullptr);
    CHECK(d.has_value() == std::isfinite(want_d)); // any valid literal, however long
    if (d)
        CHECK(memcmp(&*d, &want_d, sizeof want_d) == 0);
    // Both strtod and the integer conversion round to nearest: they must agree.
    if (i)
        CHECK(d && *d == static_cast<double>(*i));
    if (u)
        CHECK(d && *d == static_cast<double>(*u));
    auto f = v.as_float();
    if (d && std::abs(*d) <= FLT_MAX)
        CHECK(f && *f == static_cast<float>(*d));
    if (!d)
        CHECK(!f);
    CHECK(!v.as_bool() && !v.string_into({}).ok() && !v.plain_string());
}

void check_string(const json::Value& v) {
    std::string_view raw = v.raw();
    std::string s = decoded(v);
    CHECK(s.size() <= raw.size());
    CHECK(json::valid_utf8(s));
    CHECK(v.string_equals(s));
    CHECK(!v.string_equals(s + "x"));
    if (!s.empty()) {
        std::string shorter(s.size() - 1, '\0');
        CHECK(v.string_into({ shorter.data(), shorter.size() }).error() == ktl::Error::Truncated);
        CHECK(!v.string_equals(std::string_view(s).substr(0, s.size() - 1)));
    }
    auto plain = v.plain_string();
    bool has_escape = raw.find('\\') != std::string_view::npos;
    CHECK(plain.has_value() == !has_escape);
    if (plain)
        CHECK(*plain == raw && *plain == s);
    CHECK(!v.as_int64() && !v.as_double() && !v.as_bool());
}

void check_value(const json::Value& v, Walk& walk, uint32_t depth) {
    CHECK(v.valid());
    CHECK(v.index() == walk.next_index);
    ++walk.next_index;
    const json::Node& n = walk.doc.node(v.index());
    CHECK(n.end > v.index() && n.end <= walk.doc.node_count());
    switch (v.type()) {
    case json::Type::Null:
        CHECK(v.raw() == "null");
        CHECK(!v.as_bool() && !v.as_int64() && !v.as_double());
        break;
    case json::Type::Bool:
        CHECK(v.as_bool().has_value());
        CHECK(v.raw() == (*v.as_bool() ? "true" : "false"));
        CHECK(!v.as_int64() && !v.string_into({}).ok());
        break;
    case json::Type::Number:
        CHECK(n.length <= walk.limits.max_number && n.length <= json::kMaxNumberLiteral);
        check_number(v);
        break;
    case json::Type::String:
        CHECK(n.length <= walk.limits.max_string);
        check_string(v);
        break;
    case json::Type::Array:
    case json::Type::Object: {
        bool object = v.type() == json::Type::Object;
        CHECK(depth + 1 <= walk.limits.max_depth);
        CHECK(v.size() <= (object ? walk.limits.max_members : walk.limits.max_items));
        std::string_view raw = v.raw();
        CHECK(raw.size() >= 2 && raw.front() == (object ? '{' : '[') && raw.back() == (object ? '}' : ']'));
        uint32_t count = 0;
        for (json::Value c = v.first(); c.valid(); c = c.next_sibling(), ++count) {
            CHECK(count < v.size());
            CHECK(v.at(count).index() == c.index());
            if (object) {
                CHECK(c.raw().data() > raw.data()); // a member's key comes first
                std::string key = decoded_key(c);
                CHECK(json::valid_utf8(key));
                CHECK(c.key_equals(key));
                CHECK(!c.key_equals(key + "x"));
                CHECK(v.find(key).index() == c.index()); // duplicate keys were refused
            }
            check_value(c, walk, depth + 1);
            CHECK(walk.next_index == walk.doc.node(c.index()).end);
        }
        CHECK(count == v.size());
        CHECK(!v.at(count).valid());
        CHECK(walk.next_index == n.end);
        // The container's own text is a document with the same subtree.
        std::vector<json::Node> nodes(n.end - v.index());
        auto sub = json::Document::parse(raw, nodes, walk.limits);
        CHECK(sub.ok() && sub->node_count() == n.end - v.index());
        return;
    }
    }
    CHECK(v.size() == 0 && !v.first().valid());
    CHECK(n.end == v.index() + 1);
}

// Writes v (as read back through the typed accessors) into w.
void emit(const json::Value& v, json::Writer& w) {
    switch (v.type()) {
    case json::Type::Null: w.null(); break;
    case json::Type::Bool: w.boolean(*v.as_bool()); break;
    case json::Type::Number:
        // "-0" is an integer literal, but only a double keeps its sign (the writer's -0.0 is "-0").
        if (auto i = v.as_int64(); i && !(*i == 0 && v.raw()[0] == '-'))
            w.number(*i);
        else if (auto u = v.as_uint64())
            w.number(*u);
        else if (auto d = v.as_double())
            w.number(*d);
        else
            w.raw(v.raw()); // beyond double range: kept as written
        break;
    case json::Type::String: w.string(decoded(v)); break;
    case json::Type::Array:
        w.begin_array();
        for (json::Value c = v.first(); c.valid(); c = c.next_sibling())
            emit(c, w);
        w.end_array();
        break;
    case json::Type::Object:
        w.begin_object();
        for (json::Value c = v.first(); c.valid(); c = c.next_sibling()) {
            w.key(decoded_key(c));
            emit(c, w);
        }
        w.end_object();
        break;
    }
}

void check_same(const json::Value& a, const json::Value& b) {
    CHECK(a.valid() && b.valid() && a.type() == b.type() && a.size() == b.size());
    switch (a.type()) {
    case json::Type::Null: break;
    case json::Type::Bool: CHECK(a.as_bool() == b.as_bool()); break;
    case json::Type::Number:
        if (a.as_int64()) {
            CHECK(a.as_int64() == b.as_int64());
        } else if (a.as_uint64()) {
            CHECK(a.as_uint64() == b.as_uint64());
        } else if (auto d = a.as_double()) {
            auto e = b.as_double();
            CHECK(e && memcmp(&*d, &*e, sizeof(double)) == 0); // bit for bit, -0 included
        } else {
            CHECK(a.raw() == b.raw());
        }
        break;
    case json::Type::String: CHECK(decoded(a) == decoded(b)); break;
    case json::Type::Array:
    case json::Type::Object: {
        json::Value x = a.first(), y = b.first();
        for (; x.valid() && y.valid(); x = x.next_sibling(), y = y.next_sibling()) {
            if (a.type() == json::Type::Object)
                CHECK(decoded_key(x) == decoded_key(y));
            check_same(x, y);
        }
        CHECK(!x.valid() && !y.valid());
        break;
    }
    }
}

std::string serialise(const json::Document& doc, size_t input_size) {
    // Numbers can grow (1e5 -> 100000, 1e-400 -> 0 shrinks); 24 bytes per input byte is ample.
    std::string out(input_size * 24 + 64, '\0');
    json::Writer w({ out.data(), out.size() });
    emit(doc.root(), w);
    CHECK(w.complete());
    out.resize(w.size());
    return out;
}

// A parse under narrower limits (or a smaller arena) than the reference must either succeed
// with exactly the reference's nodes and honour its limits, or fail on a limit, or fail exactly
// where and why the reference failed.
void check_narrower(std::string_view text, const ktl::Result<json::Document>& ref, const json::ParseError& ref_err,
                    const json::Limits& limits, size_t arena) {
    std::vector<json::Node> nodes(arena);
    json::ParseError err;
    auto doc = json::Document::parse(text, nodes, limits, &err);
    if (!doc) {
        CHECK(err.reason != json::Reason::None && err.offset <= text.size());
        if (!is_limit(err.reason))
            CHECK(!ref && err.reason == ref_err.reason && err.offset == ref_err.offset);
        return;
    }
    CHECK(ref.ok() && doc->node_count() == ref->node_count());
    for (uint32_t i = 0; i < doc->node_count(); ++i) {
        const json::Node &a = ref->node(i), &b = doc->node(i);
        CHECK(a.type == b.type && a.flag == b.flag && a.key_escaped == b.key_escaped && a.start == b.start &&
              a.length == b.length && a.key_start == b.key_start && a.key_length == b.key_length &&
              a.count == b.count && a.end == b.end);
    }
    CHECK(text.size() <= limits.max_input);
    Walk walk { *doc, limits };
    check_value(doc->root(), walk, 0);
}

void check_document(std::string_view text) {
    // The reference: nothing but syntax can fail (a value takes at least one byte of text).
    json::Limits roomy { SIZE_MAX, 64, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX };
    std::vector<json::Node> nodes(text.size() + 1);
    json::ParseError err;
    auto ref = json::Document::parse(text, nodes, roomy, &err);
    if (!ref) {
        CHECK(err.reason != json::Reason::None && err.offset <= text.size());
        // Only the hard ceilings: 64 levels, kMaxNumberLiteral characters of a number.
        CHECK(!is_limit(err.reason) || err.reason == json::Reason::TooDeep || err.reason == json::Reason::TooLong);
    } else {
        CHECK(ref->node_count() >= 1 && ref->node_count() <= text.size());
        Walk walk { *ref, roomy };
        check_value(ref->root(), walk, 0);
        CHECK(walk.next_index == ref->node_count());
        // The arena boundary: node_count() nodes fit exactly, one fewer does not.
        std::vector<json::Node> exact(ref->node_count());
        CHECK(json::Document::parse(text, exact, roomy).ok());
        exact.pop_back();
        json::ParseError e;
        CHECK(!json::Document::parse(text, exact, roomy, &e).ok() && e.reason == json::Reason::ArenaFull);
    }

    check_narrower(text, ref, err, json::Limits {}, text.size() + 1);
    check_narrower(text, ref, err, tight_limits(), 24);
    // Limits and an arena drawn from the input, often right at the document's own sizes.
    uint64_t h = fuzz_hash(text);
    json::Limits drawn;
    drawn.max_depth = uint32_t(1 + h % 70); // past the parser's hard depth of 64 too
    drawn.max_string = uint32_t((h >> 8) % 40);
    drawn.max_members = uint32_t((h >> 16) % 10);
    drawn.max_items = uint32_t((h >> 24) % 12);
    drawn.max_number = uint32_t(1 + (h >> 32) % 100);
    drawn.max_input = (h >> 40) % 4 == 0 ? text.size() - std::min<size_t>(text.size(), (h >> 42) % 3) : SIZE_MAX;
    size_t used = ref ? ref->node_count() : text.size() + 1;
    check_narrower(text, ref, err, drawn, used + 1 - std::min<size_t>(used, (h >> 48) % 3));

    // Round trip through the writer, within the default limits (the writer nests 32 deep).
    std::vector<json::Node> dnodes(text.size() + 1);
    auto doc = json::Document::parse(text, dnodes);
    if (!doc)
        return;
    std::string once = serialise(*doc, text.size());
    std::vector<json::Node> nodes2(once.size() + 1);
    json::ParseError err2;
    auto doc2 = json::Document::parse(once, nodes2, {}, &err2);
    if (!doc2)
        fprintf(stderr, "json_fuzz: re-parse failed (%s at %zu): %s\n", json::reason_name(err2.reason), err2.offset,
                once.c_str());
    CHECK(doc2.ok());
    CHECK(doc2->node_count() == doc->node_count());
    check_same(doc->root(), doc2->root());
    CHECK(serialise(*doc2, once.size()) == once);
}

void check_writer_strings(std::string_view bytes) {
    std::string out(bytes.size() * 6 + 8, '\0');
    json::Writer w({ out.data(), out.size() });
    w.string(bytes);
    bool utf8 = json::valid_utf8(bytes);
    CHECK(w.complete() == utf8);
    if (utf8) {
        std::vector<json::Node> nodes(1);
        auto doc = json::Document::parse(w.view(), nodes);
        CHECK(doc.ok() && doc->root().is_string() && doc->root().string_equals(bytes));
        CHECK(decoded(doc->root()) == bytes);
    }
    // The reader's UTF-8 check agrees with valid_utf8 on text that needs no escaping.
    bool plain = true;
    for (char c : bytes)
        plain = plain && c != '"' && c != '\\' && static_cast<uint8_t>(c) >= 0x20;
    if (plain) {
        std::string quoted = "\"" + std::string(bytes) + "\"";
        std::vector<json::Node> nodes(1);
        json::Limits roomy;
        roomy.max_string = uint32_t(bytes.size() + 1);
        CHECK(json::Document::parse(quoted, nodes, roomy).ok() == utf8);
    }
    // unescape() on unvalidated bytes stays within its buffer and never grows the text.
    std::string buf(bytes.size(), '\0');
    auto n = json::unescape(bytes, { buf.data(), buf.size() });
    CHECK(!n.ok() || *n <= bytes.size());
}

void check_writer_numbers(const uint8_t* data, size_t size) {
    if (size < 8)
        return;
    double d;
    int64_t i;
    uint64_t u;
    memcpy(&d, data, 8);
    memcpy(&i, data, 8);
    memcpy(&u, data, 8);
    char buf[64];
    std::vector<json::Node> nodes(1);
    json::Writer wd(buf);
    wd.number(d);
    CHECK(wd.complete() == std::isfinite(d));
    if (wd.complete()) {
        auto doc = json::Document::parse(wd.view(), nodes);
        CHECK(doc.ok());
        auto back = doc->root().as_double();
        CHECK(back && memcmp(&*back, &d, sizeof d) == 0);
    }
    json::Writer wi(buf);
    wi.number(i);
    auto di = json::Document::parse(wi.view(), nodes);
    CHECK(wi.complete() && di.ok() && di->root().as_int64() == i);
    json::Writer wu(buf);
    wu.number(u);
    auto du = json::Document::parse(wu.view(), nodes);
    CHECK(wu.complete() && du.ok() && du->root().as_uint64() == u);
}

// Each byte is one writer call; complete() output must always be a readable document.
void check_writer_program(const uint8_t* data, size_t size) {
    std::string out(4096, '\0');
    json::Writer w({ out.data(), out.size() });
    for (size_t i = 0; i < size && w.ok(); ++i) {
        uint8_t op = data[i];
        switch (op % 10) {
        case 0: w.begin_object(); break;
        case 1: w.end_object(); break;
        case 2: w.begin_array(); break;
        case 3: w.end_array(); break;
        case 4: {
            char k[2] = { char('a' + op / 10 % 26), 0 };
            w.key(k); // repeated keys are the caller's business; the reader will refuse them
            break;
        }
        case 5: w.string(op & 0x80 ? "\xc3\xa9\n" : "x\"y"); break;
        case 6: w.number(int64_t(op) - 128); break;
        case 7: w.number(double(op) / 7.0); break;
        case 8: w.boolean(op & 1); break;
        case 9: w.null(); break;
        }
    }
    if (!w.complete())
        return;
    std::vector<json::Node> nodes(out.size());
    json::Limits roomy;
    roomy.max_members = 4096;
    json::ParseError e;
    auto doc = json::Document::parse(w.view(), nodes, roomy, &e);
    CHECK(doc.ok() || e.reason == json::Reason::DuplicateKey);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    check_document(text);
    check_writer_strings(text);
    check_writer_numbers(data, size);
    check_writer_program(data, size);
    return 0;
}
