#include "client_request.h"

namespace mcp {

namespace {
constexpr struct {
    ClientCapability bit;
    const char* name;
} kCapabilities[] = { { kClientSampling, "sampling" },
                      { kClientElicitation, "elicitation" },
                      { kClientRoots, "roots" } };
} // namespace

uint8_t client_capabilities(const json::Value& caps) {
    if (!caps.is_object())
        return 0;
    uint8_t bits = 0;
    // MCP "Capabilities": each is an object (elicitation's members name its modes; an empty
    // object means form mode, the one this server uses).
    for (const auto& c : kCapabilities)
        if (caps.find(c.name).is_object())
            bits |= c.bit;
    return bits;
}

const char* capability_name(ClientCapability bit) {
    for (const auto& c : kCapabilities)
        if (c.bit == bit)
            return c.name;
    return "?";
}

uint8_t declared_capabilities(const json::Value& params) {
    return client_capabilities(params.find("_meta").find(kClientCapabilitiesMeta));
}

bool may_ask(uint8_t declared, std::string_view method) {
    uint8_t need = capability_for(method);
    return need != 0 && (declared & need) == need;
}

uint8_t capability_for(std::string_view method) {
    if (method == "sampling/createMessage")
        return kClientSampling;
    if (method == "elicitation/create")
        return kClientElicitation;
    if (method == "roots/list")
        return kClientRoots;
    return 0;
}

bool ClientExchange::move(State from, State to) {
    auto expected = static_cast<uint8_t>(from);
    return __atomic_compare_exchange_n(&m_state, &expected, static_cast<uint8_t>(to), false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

bool ClientExchange::queue(std::string_view method, size_t params_len) {
    State s = state();
    if ((s != State::Idle && s != State::Answered && s != State::Withdrawn) || method.empty() ||
        method.size() >= kMaxMethod || params_len > kMaxParams)
        return false;
    for (size_t i = 0; i < method.size(); ++i)
        m_method[i] = method[i];
    m_method_len = static_cast<uint8_t>(method.size());
    m_params_len = static_cast<uint32_t>(params_len);
    m_id_len = 0;
    m_response_len = 0;
    m_outcome = Outcome::Result;
    set(State::Queued); // publishes everything above to the bridge
    return true;
}

bool ClientExchange::withdraw() { return move(State::Queued, State::Withdrawn) || move(State::Sent, State::Withdrawn); }

void ClientExchange::sent(std::string_view id, uint32_t origin) {
    if (state() != State::Queued || id.size() >= kMaxId)
        return;
    for (size_t i = 0; i < id.size(); ++i)
        m_id[i] = id[i];
    m_id_len = static_cast<uint8_t>(id.size());
    m_origin = origin;
    move(State::Queued, State::Sent); // the tool may have withdrawn meanwhile: then it stays so
}

void ClientExchange::unsent() {
    if (state() != State::Queued)
        return;
    m_outcome = Outcome::Unsent;
    move(State::Queued, State::Answered);
}

bool ClientExchange::accept(std::string_view raw_id, bool id_is_string, uint32_t origin, std::string_view body,
                            bool is_error) {
    // Our ids are plain strings, so the raw (escaped) text of a match equals the id itself.
    if (state() != State::Sent || !id_is_string || origin != m_origin || raw_id != id())
        return false;
    if (!move(State::Sent, State::Filling))
        return false; // withdrawn just now
    if (body.size() > kMaxResponse) {
        m_outcome = Outcome::TooLarge;
        m_response_len = 0;
    } else {
        for (size_t i = 0; i < body.size(); ++i)
            m_response[i] = body[i];
        m_response_len = static_cast<uint32_t>(body.size());
        m_outcome = is_error ? Outcome::Error : Outcome::Result;
    }
    set(State::Answered);
    return true;
}

} // namespace mcp
