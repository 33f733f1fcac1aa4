#include "input_round.h"

#include <json/writer.h>

#include "client_request.h"

namespace mcp {

bool InputRound::load(std::string_view fresh, std::string_view carried) {
    m_has_fresh = m_has_carried = false;
    m_requests_len = m_used_len = m_used_count = 0;
    m_used_full = false;
    if (fresh.size() > kMaxAnswers || carried.size() > kMaxUsed)
        return false;
    if (!fresh.empty()) {
        for (size_t i = 0; i < fresh.size(); ++i)
            m_answers[i] = fresh[i];
        auto doc = json::Document::parse({ m_answers, fresh.size() }, m_nodes);
        if (!doc || !doc->root().is_object())
            return false;
        m_fresh = *doc;
        m_has_fresh = true;
    }
    if (!carried.empty()) {
        size_t n = 0;
        m_carried_text[n++] = '{';
        for (char c : carried)
            m_carried_text[n++] = c;
        m_carried_text[n++] = '}';
        auto doc = json::Document::parse({ m_carried_text, n }, m_carried_nodes);
        if (!doc || !doc->root().is_object()) {
            m_has_fresh = false;
            return false;
        }
        m_carried = *doc;
        m_has_carried = true;
    }
    return true;
}

json::Value InputRound::answer(std::string_view key) {
    // A client may send again what an earlier round's state carries: its newer answer counts.
    json::Value v = m_has_fresh ? m_fresh.root().find(key) : json::Value();
    if (!v.is_object())
        v = m_has_carried ? m_carried.root().find(key) : json::Value();
    if (!v.is_object())
        return {};
    // The same answer twice (a body that asks again) is carried once: answers are told apart by
    // where their text lies (in m_answers or m_carried_text).
    const char* at = v.json_text().data();
    for (size_t i = 0; i < m_used_count; ++i)
        if (m_used_at[i] == at)
            return v;
    if (m_used_count == kMaxUsedAnswers) {
        m_used_full = true;
        return v;
    }
    m_used_at[m_used_count++] = at;
    if (!append_member(m_used, kMaxUsed, m_used_len, key, { v.json_text() }))
        m_used_full = true;
    return v;
}

bool InputRound::can_ask(std::string_view method) const { return may_ask(m_caps, method); }

bool InputRound::ask(std::string_view key, std::string_view method, size_t params_len) {
    return params_len <= kMaxParams && ask(key, method, std::string_view(m_params, params_len));
}

bool InputRound::ask(std::string_view key, std::string_view method, std::string_view params) {
    // The method is one of the three can_ask() knows: plain ASCII, nothing to escape.
    return can_ask(method) && append_member(m_requests, kMaxRequests, m_requests_len, key,
                                            { "{\"method\":\"", method, "\",\"params\":", params, "}" });
}

bool InputRound::append_member(char* buf, size_t cap, size_t& len, std::string_view key,
                               std::initializer_list<std::string_view> json) {
    char member[256];
    json::Writer k(member);
    k.begin_object().key(key).raw("0").end_object(); // the key escaped: {"key":0}
    if (!k.complete())
        return false;
    std::string_view quoted = k.view().substr(1, k.view().size() - 3); // "key":
    size_t need = (len ? 1 : 0) + quoted.size();
    for (std::string_view piece : json)
        need += piece.size();
    if (len + need > cap)
        return false;
    if (len)
        buf[len++] = ',';
    for (char c : quoted)
        buf[len++] = c;
    for (std::string_view piece : json)
        for (char c : piece)
            buf[len++] = c;
    return true;
}

} // namespace mcp
