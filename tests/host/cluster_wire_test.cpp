// The cluster datagram codec: every message type survives a round trip, and anything that is
// not exactly what a holder of the key sent (truncated, flipped, too long, random, mutated) is
// refused without a crash. Also the key derivation, names and the anti-replay window.
#include <cluster/key.h>
#include <cluster/replay.h>
#include <ktl/splitmix64.h>
#include <cluster/wire.h>
#include <crypto/hmac_sha256.h>

#include <gtest/gtest.h>

#include <vector>

using namespace cluster;

namespace {

const Key kKey = derive_key("secret", "swarm");

Update update(const char* name, uint32_t ip, State s, uint32_t inc) {
    Update u;
    u.name.set(name);
    u.addr = Address { ip, kDefaultPort };
    u.state = s;
    u.incarnation = inc;
    return u;
}

Message sample(MessageType type, size_t updates = 3) {
    Message m;
    m.type = type;
    m.sender.set("node-a");
    m.incarnation = 7;
    m.boot_id = 0x0123456789abcdefull;
    m.counter = 42;
    m.seq = 0xdeadbeef;
    if (type != MessageType::Announce)
        m.target.set("node_b.x-1");
    if (type == MessageType::PingReq)
        m.target_addr = Address { 0x0a0a0003, 7000 };
    const State states[] = { State::Alive, State::Suspect, State::Dead };
    for (size_t i = 0; i < updates; ++i)
        m.updates[i] = update(i % 2 ? "n1" : "a-much-longer-name.of.31.chars_", 0x0a0a0010 + uint32_t(i), states[i % 3],
                              uint32_t(i * 1000));
    m.update_count = uint8_t(updates);
    return m;
}

std::vector<uint8_t> encoded(const Message& m, const Key& key = kKey) {
    std::vector<uint8_t> out(kMaxDatagram);
    out.resize(encode(m, key, out));
    return out;
}

bool refused(Verdict v) { return v == Verdict::BadMac || v == Verdict::Malformed; }

} // namespace

TEST(ClusterWire, RoundTripEveryType) {
    for (MessageType type : { MessageType::Ping, MessageType::Ack, MessageType::PingReq, MessageType::Announce }) {
        const Message m = sample(type);
        auto bytes = encoded(m);
        ASSERT_FALSE(bytes.empty());
        Message d;
        ASSERT_EQ(decode(bytes, kKey, d), Verdict::Accepted) << int(type);
        EXPECT_EQ(d.type, type);
        EXPECT_EQ(d.sender.view(), "node-a");
        EXPECT_EQ(d.incarnation, 7u);
        EXPECT_EQ(d.boot_id, m.boot_id);
        EXPECT_EQ(d.counter, 42u);
        EXPECT_EQ(d.seq, 0xdeadbeefu);
        EXPECT_EQ(d.target.view(), m.target.view());
        EXPECT_EQ(d.target_addr, m.target_addr);
        ASSERT_EQ(d.update_count, 3);
        for (size_t i = 0; i < 3; ++i) {
            EXPECT_EQ(d.updates[i].name.view(), m.updates[i].name.view());
            EXPECT_EQ(d.updates[i].addr, m.updates[i].addr);
            EXPECT_EQ(d.updates[i].state, m.updates[i].state);
            EXPECT_EQ(d.updates[i].incarnation, m.updates[i].incarnation);
        }
    }
}

TEST(ClusterWire, FullestMessageFitsInOneDatagram) {
    Message m = sample(MessageType::PingReq, kMaxUpdates);
    m.sender.set("s234567890123456789012345678901");
    m.target.set("t234567890123456789012345678901");
    for (size_t i = 0; i < kMaxUpdates; ++i)
        m.updates[i].name.set("u234567890123456789012345678901");
    auto bytes = encoded(m);
    ASSERT_FALSE(bytes.empty());
    EXPECT_LE(bytes.size(), kMaxDatagram);
    Message d;
    EXPECT_EQ(decode(bytes, kKey, d), Verdict::Accepted);
    EXPECT_EQ(d.update_count, kMaxUpdates);
}

TEST(ClusterWire, EncodeRefusesWhatDecodeWouldRefuse) {
    std::vector<uint8_t> out(kMaxDatagram);
    Message m = sample(MessageType::Ping);
    m.updates[0].state = State(3);
    EXPECT_EQ(encode(m, kKey, out), 0u);
    m = sample(MessageType::PingReq);
    m.target_addr = Address {};
    EXPECT_EQ(encode(m, kKey, out), 0u);
    m = sample(MessageType::Ping);
    m.update_count = kMaxUpdates + 1;
    EXPECT_EQ(encode(m, kKey, out), 0u);
    m = sample(MessageType::Ping);
    EXPECT_EQ(encode(m, kKey, std::span<uint8_t>(out.data(), 40)), 0u) << "too small a buffer";
}

TEST(ClusterWire, EveryTruncationIsRefused) {
    for (MessageType type : { MessageType::Ping, MessageType::Ack, MessageType::PingReq, MessageType::Announce }) {
        auto bytes = encoded(sample(type));
        Message d;
        for (size_t len = 0; len < bytes.size(); ++len)
            EXPECT_TRUE(refused(decode(std::span<const uint8_t>(bytes.data(), len), kKey, d))) << len;
    }
}

TEST(ClusterWire, EverySingleBitFlipIsRefused) {
    for (MessageType type : { MessageType::Ping, MessageType::Ack, MessageType::PingReq, MessageType::Announce }) {
        auto bytes = encoded(sample(type));
        Message d;
        for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
            auto copy = bytes;
            copy[bit / 8] ^= uint8_t(1u << (bit % 8));
            EXPECT_TRUE(refused(decode(copy, kKey, d))) << "bit " << bit;
        }
    }
}

TEST(ClusterWire, WrongKeyIsBadMac) {
    auto bytes = encoded(sample(MessageType::Ping));
    Message d;
    EXPECT_EQ(decode(bytes, derive_key("secret", "other-swarm"), d), Verdict::BadMac);
    EXPECT_EQ(decode(bytes, derive_key("Secret", "swarm"), d), Verdict::BadMac);
}

TEST(ClusterWire, OversizeIsMalformed) {
    auto bytes = encoded(sample(MessageType::Ping));
    bytes.resize(kMaxDatagram + 1, 0);
    Message d;
    EXPECT_EQ(decode(bytes, kKey, d), Verdict::Malformed);
    bytes.resize(65536, 0xff);
    EXPECT_EQ(decode(bytes, kKey, d), Verdict::Malformed);
}

TEST(ClusterWire, AuthenticBytesAreStillChecked) {
    // A key holder that writes nonsense (or another implementation's bug) must not get its
    // fields believed just because the tag matches: re-tag after breaking one field.
    auto retag = [](std::vector<uint8_t> b) {
        b.resize(b.size() - kTagLen);
        auto tag = crypto::hmac_sha256(kKey, b);
        b.insert(b.end(), tag.begin(), tag.end());
        return b;
    };
    auto bytes = encoded(sample(MessageType::Ping, 1));
    Message d;
    auto version = bytes;
    version[4] = 2;
    EXPECT_EQ(decode(retag(version), kKey, d), Verdict::WrongVersion);
    auto type = bytes;
    type[5] = 9;
    EXPECT_EQ(decode(retag(type), kKey, d), Verdict::Malformed);
    auto name = bytes;
    name[7] = '/'; // inside "node-a"
    EXPECT_EQ(decode(retag(name), kKey, d), Verdict::Malformed);
    auto state = bytes;
    state[bytes.size() - kTagLen - 5] = 3; // the single update's state byte
    EXPECT_EQ(decode(retag(state), kKey, d), Verdict::Malformed);
    auto count = bytes;
    count[bytes.size() - kTagLen - 1 - (1 + 31 + 4 + 2 + 1 + 4)] = 2; // claims a second update
    EXPECT_EQ(decode(retag(count), kKey, d), Verdict::Malformed);
    auto trailing = bytes;
    trailing.insert(trailing.end() - kTagLen, 0);
    EXPECT_EQ(decode(retag(trailing), kKey, d), Verdict::Malformed);
}

TEST(ClusterWire, SeededFuzzNeverAccepts) {
    ktl::SplitMix64 rng(2024);
    Message d;
    const auto valid = encoded(sample(MessageType::PingReq, 5));
    for (int round = 0; round < 4000; ++round) {
        std::vector<uint8_t> bytes;
        if (round % 2 == 0) {
            bytes.resize(rng.below(kMaxDatagram + 64));
            for (auto& b : bytes)
                b = uint8_t(rng.next());
            if (round % 4 == 0 && bytes.size() >= 4) { // get past the magic now and then
                bytes[0] = 0x42, bytes[1] = 0x43, bytes[2] = 0x53, bytes[3] = 0x57;
            }
        } else {
            bytes = valid;
            const size_t edits = 1 + rng.below(8);
            for (size_t e = 0; e < edits; ++e) {
                switch (rng.below(3)) {
                case 0: bytes[rng.below(bytes.size())] = uint8_t(rng.next()); break;
                case 1: bytes.erase(bytes.begin() + long(rng.below(bytes.size()))); break;
                default: bytes.insert(bytes.begin() + long(rng.below(bytes.size() + 1)), uint8_t(rng.next()));
                }
                if (bytes.empty())
                    break;
            }
            if (bytes == valid)
                continue;
        }
        EXPECT_TRUE(refused(decode(bytes, kKey, d))) << "round " << round;
    }
}

TEST(ClusterWire, Names) {
    EXPECT_TRUE(valid_name("a"));
    EXPECT_TRUE(valid_name("node-1.rack_2"));
    EXPECT_TRUE(valid_name(std::string(31, 'x')));
    EXPECT_FALSE(valid_name(""));
    EXPECT_FALSE(valid_name(std::string(32, 'x')));
    for (const char* bad : { "a b", "a/b", "ä", "a\n", "a:b" })
        EXPECT_FALSE(valid_name(bad)) << bad;
    EXPECT_FALSE(valid_name(std::string_view("a\0b", 3)));
}

TEST(ClusterWire, KeyDependsOnSecretAndClusterName) {
    EXPECT_EQ(derive_key("s", "c"), derive_key("s", "c"));
    EXPECT_NE(derive_key("s", "c"), derive_key("s", "d"));
    EXPECT_NE(derive_key("s", "c"), derive_key("t", "c"));
    // The label's separator: the secret/name boundary cannot be shifted.
    EXPECT_NE(derive_key("s", "ab"), derive_key("s", "a"));
    // HMAC-SHA256("s", "basalt-cluster-v1\0c") computed independently (Python's hmac module).
    const Key k = derive_key("s", "c");
    char hex[65];
    crypto::to_hex(k, hex);
    EXPECT_STREQ(hex, "0ddb5df663b169c16489be03774beeb56b3c2d43789e55b702ff9c1fddf954d1");
}

TEST(ClusterReplay, Window) {
    using F = ReplayWindow::Fresh;
    ReplayWindow w;
    EXPECT_EQ(w.accept(5, 10), F::NewBoot) << "the first datagram heard";
    EXPECT_EQ(w.accept(5, 10), F::No) << "exact replay";
    EXPECT_EQ(w.accept(5, 12), F::Current);
    EXPECT_EQ(w.accept(5, 11), F::Current) << "late but unseen";
    EXPECT_EQ(w.accept(5, 11), F::No);
    EXPECT_EQ(w.accept(5, 100), F::Current);
    EXPECT_EQ(w.accept(5, 37), F::Current) << "63 behind: inside the window";
    EXPECT_EQ(w.accept(5, 36), F::No) << "64 behind: outside";
    EXPECT_EQ(w.accept(5, 12), F::No);
    EXPECT_EQ(w.accept(7, 1), F::NewBoot) << "a restart";
    EXPECT_EQ(w.accept(7, 1), F::No);
    EXPECT_EQ(w.accept(5, 101), F::No) << "the previous boot's messages cannot pose as another restart";
    EXPECT_EQ(w.accept(7, 2), F::Current);
    EXPECT_EQ(w.accept(9, 1), F::NewBoot);
    // Rotating captures of every earlier boot gets nowhere, new counters or not.
    for (uint64_t c = 1; c < 200; ++c) {
        EXPECT_EQ(w.accept(5, 1000 + c), F::No);
        EXPECT_EQ(w.accept(7, 1000 + c), F::No);
    }
    EXPECT_EQ(w.accept(9, 2), F::Current) << "the current boot is untouched";
    EXPECT_EQ(w.boot_id(), 9u);
}

TEST(ClusterReplay, BootIdsGrowWithTheClock) {
    EXPECT_LT(make_boot_id(1000, 0xffff), make_boot_id(1001, 0)) << "a later millisecond wins whatever the random part";
    EXPECT_NE(make_boot_id(1000, 1), make_boot_id(1000, 2));
    EXPECT_EQ(boot_time_ms(make_boot_id(1767225600000ull, 0x12345)), 1767225600000ull);
}
