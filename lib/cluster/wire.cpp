#include "wire.h"

#include <crypto/hmac_sha256.h>
#include <ktl/be_stream.h>

namespace cluster {

bool Name::set(std::string_view name) {
    len = 0;
    text[0] = 0;
    if (!valid_name(name))
        return false;
    for (size_t i = 0; i < name.size(); ++i)
        text[i] = name[i];
    text[name.size()] = 0;
    len = uint8_t(name.size());
    return true;
}

namespace {

// The big-endian streams (ktl/be_stream.h) with the format's one compound field, a name.
class Writer : public ktl::BeWriter {
public:
    using BeWriter::BeWriter;
    void name(const Name& n) {
        if (!valid_name(n.view())) {
            fail();
            return;
        }
        u8(n.len);
        bytes(n.text, n.len);
    }
};

// Reads the authenticated part; a read past the end fails for good.
class Reader : public ktl::BeReader {
public:
    using BeReader::BeReader;
    void name(Name& out) {
        uint8_t n = u8();
        if (!ok() || n == 0 || n > kMaxNameLen || n > left()) {
            fail();
            return;
        }
        auto text = bytes(n);
        if (!out.set({ reinterpret_cast<const char*>(text.data()), text.size() }))
            fail();
    }
};

bool valid_type(uint8_t t) { return t >= uint8_t(MessageType::Ping) && t <= uint8_t(MessageType::Announce); }

bool usable(Address a) { return a.ip != 0 && a.port != 0; }

crypto::Digest tag_of(std::span<const uint8_t> bytes, const Key& key) {
    crypto::HmacSha256 mac(key);
    mac.update(bytes);
    return mac.finish();
}

} // namespace

size_t encode(const Message& m, const Key& key, std::span<uint8_t> out) {
    if (!valid_type(uint8_t(m.type)) || m.update_count > kMaxUpdates)
        return 0;
    if (out.size() > kMaxDatagram)
        out = out.first(kMaxDatagram);
    Writer w(out);
    w.u32(kMagic);
    w.u8(kVersion);
    w.u8(uint8_t(m.type));
    w.name(m.sender);
    w.u32(m.incarnation);
    w.u64(m.boot_id);
    w.u64(m.counter);
    w.u32(m.seq);
    switch (m.type) {
    case MessageType::Ping:
    case MessageType::Ack: w.name(m.target); break;
    case MessageType::PingReq:
        if (!usable(m.target_addr))
            return 0;
        w.name(m.target);
        w.u32(m.target_addr.ip);
        w.u16(m.target_addr.port);
        break;
    case MessageType::Announce: break;
    }
    w.u8(m.update_count);
    for (size_t i = 0; i < m.update_count; ++i) {
        const Update& u = m.updates[i];
        if (uint8_t(u.state) >= kStateCount || !usable(u.addr))
            return 0;
        w.name(u.name);
        w.u32(u.addr.ip);
        w.u16(u.addr.port);
        w.u8(uint8_t(u.state));
        w.u32(u.incarnation);
    }
    if (!w.ok())
        return 0;
    const crypto::Digest tag = tag_of(w.written(), key);
    w.bytes(tag.data(), tag.size());
    return w.ok() ? w.size() : 0;
}

Verdict decode(std::span<const uint8_t> in, const Key& key, Message& out) {
    constexpr size_t kMinimum = 4 + 1 + 1 + 2 + 4 + 8 + 8 + 4 + 1 + kTagLen;
    if (in.size() < kMinimum || in.size() > kMaxDatagram)
        return Verdict::Malformed;
    // The magic only sorts out stray traffic cheaply; nothing else is looked at before the tag.
    if (in[0] != 0x42 || in[1] != 0x43 || in[2] != 0x53 || in[3] != 0x57)
        return Verdict::Malformed;
    const auto body = in.first(in.size() - kTagLen);
    crypto::Digest expected = tag_of(body, key);
    crypto::Digest got;
    for (size_t i = 0; i < kTagLen; ++i)
        got[i] = in[body.size() + i];
    if (!crypto::equal_constant_time(expected, got))
        return Verdict::BadMac;

    Reader r(body);
    r.u32();
    if (r.u8() != kVersion)
        return Verdict::WrongVersion;
    uint8_t type = r.u8();
    if (!valid_type(type))
        return Verdict::Malformed;
    out.type = MessageType(type);
    r.name(out.sender);
    out.incarnation = r.u32();
    out.boot_id = r.u64();
    out.counter = r.u64();
    out.seq = r.u32();
    out.target = Name {};
    out.target_addr = Address {};
    switch (out.type) {
    case MessageType::Ping:
    case MessageType::Ack: r.name(out.target); break;
    case MessageType::PingReq:
        r.name(out.target);
        out.target_addr.ip = r.u32();
        out.target_addr.port = r.u16();
        if (!usable(out.target_addr))
            return Verdict::Malformed;
        break;
    case MessageType::Announce: break;
    }
    uint8_t count = r.u8();
    if (!r.ok() || count > kMaxUpdates)
        return Verdict::Malformed;
    out.update_count = count;
    for (size_t i = 0; i < count; ++i) {
        Update& u = out.updates[i];
        r.name(u.name);
        u.addr.ip = r.u32();
        u.addr.port = r.u16();
        uint8_t state = r.u8();
        u.incarnation = r.u32();
        if (!r.ok() || state >= kStateCount || !usable(u.addr))
            return Verdict::Malformed;
        u.state = State(state);
    }
    if (!r.ok() || !r.at_end())
        return Verdict::Malformed;
    return Verdict::Accepted;
}

} // namespace cluster
