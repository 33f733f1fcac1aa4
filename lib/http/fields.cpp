// List, media type and credential helpers (RFC 9110 sections 5.6, 8.3, 11.4, 12.5.1).
#include "fields.h"

#include "chars.h"

namespace http {

using namespace detail;

bool token_equals_ci(std::string_view a, std::string_view b) { return equals_ci(a, b); }

std::optional<std::string_view> ListReader::next() {
    while (!m_rest.empty()) {
        size_t i = 0;
        bool quoted = false;
        for (; i < m_rest.size(); ++i) {
            char c = m_rest[i];
            if (quoted) {
                if (c == '\\' && i + 1 < m_rest.size())
                    ++i; // quoted-pair: the next byte is literal
                else if (c == '"')
                    quoted = false;
            } else if (c == '"') {
                quoted = true;
            } else if (c == m_separator) {
                break;
            }
        }
        std::string_view element = trim_ows(m_rest.substr(0, i));
        m_rest.remove_prefix(i < m_rest.size() ? i + 1 : m_rest.size());
        if (!element.empty())
            return element;
    }
    return std::nullopt;
}

bool list_contains(std::string_view list, std::string_view token) {
    ListReader reader(list);
    while (auto element = reader.next())
        if (equals_ci(*element, token))
            return true;
    return false;
}

namespace {

struct MediaRange {
    std::string_view type, subtype;
    unsigned q = 1000; // weight in thousandths
};

// RFC 9110 section 12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ).
bool parse_qvalue(std::string_view s, unsigned& q) {
    if (s.empty() || (s[0] != '0' && s[0] != '1') || s.size() > 5 || (s.size() > 1 && s[1] != '.'))
        return false;
    unsigned value = unsigned(s[0] - '0') * 1000, scale = 100;
    for (size_t i = 2; i < s.size(); ++i, scale /= 10) {
        if (!is_digit(s[i]))
            return false;
        value += unsigned(s[i] - '0') * scale;
    }
    if (value > 1000)
        return false;
    q = value;
    return true;
}

// type "/" subtype with both tokens; "*/subtype" is not a range.
bool split_media_type(std::string_view text, std::string_view& type, std::string_view& subtype) {
    size_t slash = text.find('/');
    if (slash == std::string_view::npos)
        return false;
    type = text.substr(0, slash);
    subtype = text.substr(slash + 1);
    return is_token(type) && is_token(subtype) && !(type == "*" && subtype != "*");
}

bool parse_media_range(std::string_view element, MediaRange& out) {
    ListReader parts(element, ';');
    auto range = parts.next();
    if (!range || !split_media_type(*range, out.type, out.subtype))
        return false;
    while (auto param = parts.next()) {
        size_t eq = param->find('=');
        if (eq == std::string_view::npos || !equals_ci(param->substr(0, eq), "q"))
            continue;                                      // other parameters do not change what is acceptable here
        return parse_qvalue(param->substr(eq + 1), out.q); // the weight ends the media parameters
    }
    return true;
}

} // namespace

bool accepts(std::string_view accept_header, std::string_view media_type) {
    std::string_view type, subtype;
    if (!split_media_type(media_type, type, subtype))
        return false;
    int best = 0; // 1 for */*, 2 for type/*, 3 for type/subtype
    bool acceptable = false;
    ListReader list(accept_header);
    while (auto element = list.next()) {
        MediaRange range;
        if (!parse_media_range(*element, range))
            continue;
        int specificity = 0;
        if (range.type == "*")
            specificity = 1;
        else if (equals_ci(range.type, type))
            specificity = range.subtype == "*" ? 2 : equals_ci(range.subtype, subtype) ? 3 : 0;
        if (specificity > best) { // the first of the most specific ranges decides
            best = specificity;
            acceptable = range.q > 0;
        }
    }
    return acceptable;
}

bool media_type_is(std::string_view content_type, std::string_view media_type) {
    return equals_ci(trim_ows(content_type.substr(0, content_type.find(';'))), media_type);
}

// RFC 9110 section 11.2: token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
std::optional<std::string_view> bearer_token(std::string_view authorization) {
    if (!starts_with_ci(authorization, "bearer") || authorization.size() < 7 || authorization[6] != ' ')
        return std::nullopt;
    std::string_view token = authorization.substr(7);
    while (!token.empty() && token.front() == ' ')
        token.remove_prefix(1);
    size_t i = 0;
    for (; i < token.size(); ++i) {
        char c = token[i];
        if (!is_alpha(c) && !is_digit(c) && c != '-' && c != '.' && c != '_' && c != '~' && c != '+' && c != '/')
            break;
    }
    if (i == 0)
        return std::nullopt;
    for (size_t j = i; j < token.size(); ++j)
        if (token[j] != '=')
            return std::nullopt;
    return token;
}

} // namespace http
