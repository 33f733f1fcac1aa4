#pragma once
// 2026-07-28 "Multi Round-Trip Requests" (SEP-2322): a tool or prompt that needs the client's
// input (elicitation, sampling, roots) no longer sends the client a request of its own. Its
// request ends with an InputRequiredResult naming what it needs (`inputRequests`, keyed) and a
// signed `requestState`; the client asks its user or model and sends the original request again
// with `inputResponses` under the same keys and the state. The body then runs again from the
// start and finds its answers: one body serves both eras (ToolContext::request in the kernel
// asks the client directly in the 2025 revisions).
//
// One InputRound per running call: the answers it was given (the request's inputResponses
// merged with those requestState carried from earlier rounds), the requests it makes now, and
// the answers it used (carried forward in the next requestState, so a client sends each answer
// once). Portable, bounded, no allocation.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include <json/json.h>

namespace mcp {

class InputRound {
public:
    static constexpr size_t kMaxAnswers = 16384;  // bytes of the answers a request brings
    static constexpr size_t kMaxNodes = 1024;     // values in them (and as many in the carried ones)
    static constexpr size_t kMaxRequests = 16384; // bytes of the requests of one round
    static constexpr size_t kMaxUsed = 6144;      // bytes of the answers a round carries forward
    static constexpr size_t kMaxParams = 8192;    // bytes of one request's params

    // The answers: those the request brings (its inputResponses: one JSON object of answer
    // objects; empty: none) and those its requestState carried (the members of such an object;
    // empty: none). False: they do not fit or do not parse (the round then has no answers).
    bool load(std::string_view fresh, std::string_view carried);
    // The answer under `key` (an object; a fresh one before a carried one), noted as used;
    // invalid when the client gave none.
    json::Value answer(std::string_view key);
    // The capabilities the client declared (ClientCapability bits): what may be asked.
    void set_caps(uint8_t caps) { m_caps = caps; }
    bool can_ask(std::string_view method) const;
    // Where a request's params (one JSON object) are written before ask().
    std::span<char> params_buffer() { return { m_params, kMaxParams }; }
    // Asks the client for `method` with params_buffer()[0..params_len) under `key`. False: the
    // client did not declare the capability the method needs, or the round's requests are full.
    bool ask(std::string_view key, std::string_view method, size_t params_len);
    // The same with params (one JSON object's text) that are already written.
    bool ask(std::string_view key, std::string_view method, std::string_view params);

    bool pending() const { return m_requests_len > 0; }
    // The object members (no braces) of inputRequests, and of the answers used.
    std::string_view requests() const { return { m_requests, m_requests_len }; }
    std::string_view used() const { return { m_used, m_used_len }; }
    // Whether every answer used still fits in a requestState.
    bool used_fits() const { return !m_used_full; }

private:
    // Appends `"key":<json>` (key escaped; json given in pieces) to buf; false when it does not fit.
    static bool append_member(char* buf, size_t cap, size_t& len, std::string_view key,
                              std::initializer_list<std::string_view> json);

    json::Document m_fresh, m_carried;
    bool m_has_fresh = false, m_has_carried = false;
    bool m_used_full = false;
    uint8_t m_caps = 0;
    size_t m_requests_len = 0;
    size_t m_used_len = 0;
    static constexpr size_t kMaxUsedAnswers = 16;
    const char* m_used_at[kMaxUsedAnswers] = {};
    size_t m_used_count = 0;
    char m_answers[kMaxAnswers];
    char m_carried_text[kMaxUsed + 2];
    json::Node m_nodes[kMaxNodes];
    json::Node m_carried_nodes[kMaxNodes];
    char m_requests[kMaxRequests];
    char m_used[kMaxUsed];
    char m_params[kMaxParams];
};

} // namespace mcp
