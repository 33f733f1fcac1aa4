#include "mirrored_headers.h"

#include <json/writer.h>
#include <ktl/base64.h>
#include <ktl/format.h>
#include <mcp/schema/validator.h>

namespace mcp {
namespace {

constexpr std::string_view kBase64Open = "=?base64?", kBase64Close = "?=";
constexpr size_t kMaxValue = 1024; // bytes of one decoded header value (a longer one is refused)
constexpr int kMaxSchemaDepth = 8; // nesting of properties searched for x-mcp-header
constexpr size_t kMaxHeaderName = 96;

// RFC 9110 field values as the transport keeps them: visible ASCII, space and tab.
bool plain_value(std::string_view v) {
    for (char c : v)
        if (!(c == '\t' || (c >= 0x20 && c <= 0x7e)))
            return false;
    return true;
}

class Checker {
public:
    Checker(const http::Head& head, std::span<char> why) : m_head(head), m_why(why) {}

    // The header `name` must be there and, decoded, equal `expected` (a JSON string's content).
    bool same_string(const char* name, const json::Value& expected) {
        auto decoded = header_value(name);
        return decoded && same_string_value(name, expected, *decoded);
    }

    // Every x-mcp-header parameter of `schema` (an object schema, properties at any depth) whose
    // argument is present against its Mcp-Param header; a header for an absent argument is a
    // claim the body does not make.
    bool parameters(const json::Value& schema, const json::Value& args, int depth) {
        json::Value props = schema.find("properties");
        if (!props.is_object() || depth > kMaxSchemaDepth)
            return true;
        for (uint32_t i = 0; i < props.size(); ++i) {
            json::Value prop = props.at(i);
            json::Value mirrored = prop.find("x-mcp-header");
            char key[schema::kMaxPropertyName];
            auto k = prop.key_into(key);
            if (!k) {
                if (mirrored.valid())
                    return fail("%s: a mirrored argument's name is too long to compare", "x-mcp-header");
                continue; // nothing mirrored beneath a name no argument of ours can have
            }
            json::Value arg = args.is_object() ? args.find({ key, *k }) : json::Value();
            if (mirrored.is_string() && !parameter(mirrored, arg))
                return false;
            if (!parameters(prop, arg, depth + 1))
                return false;
        }
        return true;
    }

    // Says why in the caller's buffer; always false.
    bool fail(const char* fmt, const char* what) {
        if (!m_why.empty()) {
            ktl::Formatter f(m_why.data(), m_why.size());
            f.append(fmt, what);
        }
        return false;
    }

    std::optional<std::string_view> header_value(const char* name) {
        auto raw = m_head.header(name);
        if (!raw) {
            fail("%s header missing (2026-07-28 requests mirror their body in headers)", name);
            return std::nullopt;
        }
        auto decoded = decode_header_value(*raw, m_value);
        if (!decoded)
            fail("%s header holds characters a header may not carry, or invalid base64", name);
        return decoded;
    }

private:
    // Out of line: parameters() recurses, and this frame's buffers need not be on every level.
    [[gnu::noinline]] bool parameter(const json::Value& mirrored, const json::Value& arg) {
        char label[64];
        auto l = mirrored.string_into({ label, sizeof label - 1 });
        if (!l)
            return true; // not a name a client could have sent: nothing mirrored to compare
        char name[kMaxHeaderName];
        ktl::Formatter hn(name, sizeof name);
        hn.append("Mcp-Param-%.*s", int(*l), label);
        bool present = arg.valid() && !arg.is_null();
        if (!present) {
            if (m_head.header(name))
                return fail("%s header sent for an argument the body does not have", name);
            return true;
        }
        auto decoded = header_value(name);
        if (!decoded)
            return false;
        if (arg.is_string())
            return same_string_value(name, arg, *decoded);
        if (arg.is_bool())
            return *decoded == (*arg.as_bool() ? "true" : "false") || fail("%s header does not match the body", name);
        if (arg.is_number()) {
            // Compared as numbers (42 and 42.0 are one value), parsed as the JSON number it must be;
            // exactly where both are integers, as doubles otherwise.
            json::Node n[1];
            auto doc = json::Document::parse(*decoded, n);
            bool number = doc && doc->root().is_number();
            auto hi = number ? doc->root().as_int64() : std::nullopt;
            auto bi = arg.as_int64();
            if (hi && bi)
                return *hi == *bi || fail("%s header does not match the body", name);
            auto h = number ? doc->root().as_double() : std::nullopt;
            auto b = arg.as_double();
            return (h && b && *h == *b) || fail("%s header does not match the body", name);
        }
        return fail("%s mirrors an argument that is not a string, integer or boolean", name);
    }

    // The body's string, unescaped into m_body (the decoded header is in m_value), equals decoded.
    bool same_string_value(const char* name, const json::Value& arg, std::string_view decoded) {
        auto n = arg.string_into(m_body);
        return (n && std::string_view(m_body, *n) == decoded) || fail("%s header does not match the body", name);
    }

    const http::Head& m_head;
    std::span<char> m_why;
    char m_value[kMaxValue];
    char m_body[kMaxValue];
};

} // namespace

std::optional<std::string_view> decode_header_value(std::string_view value, std::span<char> buf) {
    if (!(value.size() >= kBase64Open.size() + kBase64Close.size() && value.starts_with(kBase64Open) &&
          value.ends_with(kBase64Close))) {
        if (!plain_value(value) || value.size() > buf.size())
            return std::nullopt;
        return value;
    }
    std::string_view text = value.substr(kBase64Open.size(), value.size() - kBase64Open.size() - kBase64Close.size());
    auto n = ktl::base64_decode(text, { reinterpret_cast<uint8_t*>(buf.data()), buf.size() });
    if (!n)
        return std::nullopt;
    std::string_view decoded(buf.data(), *n);
    if (!json::valid_utf8(decoded))
        return std::nullopt;
    return decoded;
}

bool mirrored_headers_agree(const http::Head& head, const json::Value& request, const Tool* tool,
                            std::span<json::Node> schema_nodes, std::span<char> why) {
    if (!why.empty())
        why[0] = '\0';
    Checker check(head, why);
    json::Value params = request.find("params");
    if (!check.same_string("MCP-Protocol-Version", params.find("_meta").find(Server::kProtocolVersionMeta)) ||
        !check.same_string("Mcp-Method", request.find("method")))
        return false;
    json::Value method = request.find("method");
    if (method.string_equals("tools/call") || method.string_equals("prompts/get")) {
        if (!check.same_string("Mcp-Name", params.find("name")))
            return false;
    } else if (method.string_equals("resources/read")) {
        if (!check.same_string("Mcp-Name", params.find("uri")))
            return false;
    }
    if (!tool || !method.string_equals("tools/call"))
        return true;
    auto schema = json::Document::parse(tool->input_schema, schema_nodes);
    return !schema || check.parameters(schema->root(), params.find("arguments"), 0);
}

} // namespace mcp
