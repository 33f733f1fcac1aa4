#include "types.h"

namespace cluster {

bool operator==(Address a, Address b) { return a.ip == b.ip && a.port == b.port; }

const char* state_name(State s) {
    switch (s) {
    case State::Alive: return "alive";
    case State::Suspect: return "suspect";
    case State::Dead: return "dead";
    }
    return "unknown";
}

const char* verdict_name(Verdict v) {
    switch (v) {
    case Verdict::Accepted: return "accepted";
    case Verdict::Malformed: return "malformed";
    case Verdict::BadMac: return "bad_mac";
    case Verdict::Replayed: return "replayed";
    case Verdict::FromSelf: return "from_self";
    case Verdict::TableFull: return "table_full";
    case Verdict::WrongVersion: return "wrong_version";
    }
    return "unknown";
}

const char* event_kind_name(Event::Kind k) {
    switch (k) {
    case Event::Kind::Joined: return "joined";
    case Event::Kind::Alive: return "alive";
    case Event::Kind::Suspect: return "suspect";
    case Event::Kind::Dead: return "dead";
    case Event::Kind::Refuted: return "refuted";
    case Event::Kind::Refused: return "refused";
    }
    return "unknown";
}

bool valid_name(std::string_view name) {
    if (name.empty() || name.size() > kMaxNameLen)
        return false;
    for (char c : name) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                  c == '-';
        if (!ok)
            return false;
    }
    return true;
}

namespace {

// ceil(log_base(x)) for x >= 1, in integers so kernel and host agree without floating point.
uint32_t ceil_log(uint64_t x, uint64_t base) {
    uint32_t k = 0;
    uint64_t power = 1;
    while (power < x && k < 64) {
        if (power > UINT64_MAX / base)
            return k + 1;
        power *= base;
        ++k;
    }
    return k;
}

} // namespace

uint64_t suspicion_timeout_ns(const Config& c, size_t live_members) {
    uint64_t scale = ceil_log(uint64_t(live_members) + 1, 10);
    if (scale < 1)
        scale = 1;
    return uint64_t(c.suspicion_mult) * scale * uint64_t(c.period_ms) * 1000000ull;
}

uint32_t retransmit_limit(const Config& c, size_t live_members) {
    uint32_t scale = ceil_log(uint64_t(live_members) + 1, 2);
    if (scale < 1)
        scale = 1;
    uint64_t limit = uint64_t(c.retransmit_mult) * scale;
    return limit > 255 ? 255 : uint32_t(limit);
}

Config sanitize(const Config& c) {
    Config s = c;
    if (s.period_ms < 10)
        s.period_ms = 10;
    if (s.period_ms > 600000)
        s.period_ms = 600000;
    if (s.ack_timeout_ms < 1 || s.ack_timeout_ms >= s.period_ms)
        s.ack_timeout_ms = s.period_ms / 2;
    if (s.indirect > kMaxIndirect)
        s.indirect = kMaxIndirect;
    if (s.suspicion_mult < 1)
        s.suspicion_mult = 1;
    if (s.suspicion_mult > 100)
        s.suspicion_mult = 100;
    if (s.announce_ms < 10)
        s.announce_ms = 10;
    if (s.announce_ms > 3600000)
        s.announce_ms = 3600000;
    if (s.retransmit_mult < 1)
        s.retransmit_mult = 1;
    if (s.retransmit_mult > 32)
        s.retransmit_mult = 32;
    return s;
}

} // namespace cluster
