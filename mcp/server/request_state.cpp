#include "request_state.h"

#include <crypto/hmac_sha256.h>
#include <ktl/base64.h>
#include <ktl/format.h>

namespace mcp {
namespace {

constexpr size_t kMacText = 44;     // base64 of 32 bytes
constexpr size_t kMaxBinding = 224; // the binding's lines: sealing and opening agree on what fits

// The binding's lines before the expiry, as sealed; 0 when they do not fit.
size_t binding_lines(const StateBinding& b, char* out, size_t cap) {
    ktl::Formatter f(out, cap);
    f.append("%.*s\n%.*s\n%016llx\n%u\n", int(b.method.size()), b.method.data(), int(b.name.size()), b.name.data(),
             static_cast<unsigned long long>(b.args_hash), unsigned(b.principal));
    return f.truncated() ? 0 : f.length();
}

crypto::Digest mac(std::span<const uint8_t> key, std::string_view payload) {
    return crypto::hmac_sha256(key, { reinterpret_cast<const uint8_t*>(payload.data()), payload.size() });
}

bool decode(std::string_view text, std::span<char> out, size_t& n) {
    auto got = ktl::base64_decode(text, { reinterpret_cast<uint8_t*>(out.data()), out.size() });
    n = got.value_or(0);
    return got.has_value();
}

// The next line of text from pos (without its newline); false at the end.
bool line(std::string_view text, size_t& pos, std::string_view& out) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos)
        return false;
    out = text.substr(pos, end - pos);
    pos = end + 1;
    return true;
}

} // namespace

size_t seal_state(std::span<const uint8_t> key, const StateBinding& b, uint64_t now_ns, std::string_view answers,
                  std::span<char> out) {
    if (key.empty())
        return 0;
    char head[kMaxBinding];
    size_t h = binding_lines(b, head, sizeof head);
    if (h == 0)
        return 0;
    ktl::Formatter expiry(head + h, sizeof head - h);
    expiry.append("%llu\n", static_cast<unsigned long long>((now_ns + kStateLifetimeNs) / 1000000000));
    if (expiry.truncated())
        return 0;
    h += expiry.length();
    const size_t n = h + answers.size();
    if (n > kMaxStatePayload || ktl::base64_size(n) + 1 + kMacText > out.size())
        return 0;
    // The payload goes at the end of out and is encoded in place towards the front: base64
    // writes 4 bytes for every 3 it has read, and starting this far back it never overtakes
    // its input. No second buffer of the payload's size on the stack.
    char* payload = out.data() + (out.size() - n);
    for (size_t i = 0; i < h; ++i)
        payload[i] = head[i];
    for (size_t i = 0; i < answers.size(); ++i)
        payload[h + i] = answers[i];
    auto digest = mac(key, { payload, n });
    size_t k = ktl::base64_encode(reinterpret_cast<const uint8_t*>(payload), n, out.data());
    out[k++] = '.';
    k += ktl::base64_encode(digest.data(), digest.size(), out.data() + k);
    return k;
}

const char* state_check_name(StateCheck c) {
    switch (c) {
    case StateCheck::Ok: return "ok";
    case StateCheck::Malformed: return "malformed";
    case StateCheck::Forged: return "forged";
    case StateCheck::Foreign: return "foreign";
    case StateCheck::Expired: return "expired";
    }
    return "?";
}

StateCheck open_state(std::span<const uint8_t> key, const StateBinding& b, uint64_t now_ns, std::string_view state,
                      std::span<char> payload_buf, std::string_view& answers) {
    size_t dot = state.rfind('.');
    if (key.empty() || dot == std::string_view::npos || state.size() - dot - 1 != kMacText)
        return StateCheck::Malformed;
    size_t n = 0, m = 0;
    char given[33];
    if (!decode(state.substr(0, dot), payload_buf, n) || !decode(state.substr(dot + 1), given, m) || m != 32)
        return StateCheck::Malformed;
    std::string_view payload(payload_buf.data(), n);
    auto expected = mac(key, payload);
    uint8_t diff = 0;
    for (size_t i = 0; i < 32; ++i)
        diff |= static_cast<uint8_t>(expected[i] ^ static_cast<uint8_t>(given[i]));
    if (diff != 0)
        return StateCheck::Forged;
    // Sealed by us, so laid out as seal_state() writes it: the binding's lines must be this
    // request's, then the expiry, then the answers.
    char mine[kMaxBinding];
    size_t k = binding_lines(b, mine, sizeof mine);
    if (k == 0 || !payload.starts_with(std::string_view(mine, k)))
        return StateCheck::Foreign;
    size_t pos = k;
    std::string_view expiry;
    if (!line(payload, pos, expiry) || expiry.empty())
        return StateCheck::Malformed;
    uint64_t until = 0;
    for (char c : expiry) {
        if (c < '0' || c > '9')
            return StateCheck::Malformed;
        until = until * 10 + uint64_t(c - '0');
    }
    if (now_ns / 1000000000 >= until)
        return StateCheck::Expired;
    answers = payload.substr(pos);
    return StateCheck::Ok;
}

} // namespace mcp
