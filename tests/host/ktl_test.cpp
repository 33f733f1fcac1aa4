// Host tests for the kernel library: ring buffers, log ring and its line format, bounded
// formatting, calendar arithmetic and RFC 3339 output.
#include <ktl/byte_ring.h>
#include <ktl/civil_time.h>
#include <ktl/format.h>
#include <ktl/log_ring.h>
#include <ktl/ring_buffer.h>
#include <ktl/utf8.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <deque>
#include <random>
#include <string>
#include <vector>

TEST(RingBuffer, FifoOrderAndCapacity) {
    ktl::RingBuffer<8> ring;
    EXPECT_TRUE(ring.empty());
    for (uint8_t i = 0; i < 8; ++i)
        EXPECT_TRUE(ring.push(i));
    EXPECT_TRUE(ring.full());
    EXPECT_FALSE(ring.push(99)) << "a full ring must refuse, not overwrite";
    uint8_t v;
    for (uint8_t i = 0; i < 8; ++i) {
        ASSERT_TRUE(ring.pop(v));
        EXPECT_EQ(v, i);
    }
    EXPECT_FALSE(ring.pop(v));
}

TEST(RingBuffer, MatchesReferenceQueueOverRandomOperations) {
    ktl::RingBuffer<16> ring;
    std::deque<uint8_t> model;
    std::mt19937 rng(42);
    for (int step = 0; step < 200000; ++step) {
        if (rng() % 2) {
            uint8_t b = static_cast<uint8_t>(rng());
            bool pushed = ring.push(b);
            EXPECT_EQ(pushed, model.size() < 16);
            if (pushed)
                model.push_back(b);
        } else {
            uint8_t b = 0;
            bool popped = ring.pop(b);
            ASSERT_EQ(popped, !model.empty());
            if (popped) {
                ASSERT_EQ(b, model.front());
                model.pop_front();
            }
        }
        ASSERT_EQ(ring.size(), model.size());
    }
}

// The endpoint's rings: any capacity, bulk copies split at the wrap, and the byte counts going
// past 2^32 (no multiple of 7 or 12 Ki: 32-bit counts would have moved the ring's positions).
TEST(ByteRing, MatchesReferenceQueueAcrossWrapsAndIndexOverflow) {
    for (uint32_t cap : { 1u, 7u, 12u * 1024 }) {
        std::vector<uint8_t> storage(cap);
        ktl::ByteRing ring { storage.data(), cap };
        ring.head = ring.tail = 0xffffffffull - cap / 2; // past 4 GiB partway through
        std::deque<uint8_t> model;
        std::mt19937 rng(cap);
        uint8_t next = 0;
        for (int step = 0; step < 20000; ++step) {
            std::vector<uint8_t> buf(rng() % (2 * cap + 2));
            if (rng() % 2) {
                for (auto& b : buf)
                    b = next++;
                uint32_t n = ring.put(buf.data(), static_cast<uint32_t>(buf.size()));
                ASSERT_EQ(n, std::min<size_t>(buf.size(), cap - model.size()));
                model.insert(model.end(), buf.begin(), buf.begin() + n);
                next = static_cast<uint8_t>(next - (buf.size() - n)); // what did not fit comes again
            } else if (rng() % 2) {
                uint32_t n = ring.get(buf.data(), static_cast<uint32_t>(buf.size()));
                ASSERT_EQ(n, std::min<size_t>(buf.size(), model.size()));
                for (uint32_t i = 0; i < n; ++i) {
                    ASSERT_EQ(buf[i], model.front());
                    model.pop_front();
                }
            } else { // the transmit side's way out: the contiguous run in place, then consume
                uint32_t run = ring.contiguous();
                ASSERT_LE(run, model.size());
                ASSERT_EQ(run == 0, model.empty());
                uint32_t take = run ? static_cast<uint32_t>(rng() % run) + 1 : 0;
                for (uint32_t i = 0; i < take; ++i)
                    ASSERT_EQ(ring.front()[i], model[i]);
                ring.consume(take);
                model.erase(model.begin(), model.begin() + take);
            }
            ASSERT_EQ(ring.used(), model.size());
            ASSERT_EQ(ring.room(), cap - model.size());
        }
    }
}

TEST(RingBuffer, BulkWriteReportsWhatFit) {
    ktl::RingBuffer<4> ring;
    const uint8_t data[6] = { 1, 2, 3, 4, 5, 6 };
    EXPECT_EQ(ring.write(data, 6), 4u);
    uint8_t out[6] = {};
    EXPECT_EQ(ring.read(out, 6), 4u);
    EXPECT_EQ(out[3], 4);
}

TEST(LogRing, KeepsNewestAndReportsOldest) {
    auto ring = std::make_unique<ktl::LogRing<4>>();
    for (int i = 0; i < 10; ++i) {
        std::string text = "message " + std::to_string(i);
        EXPECT_EQ(ring->append(ktl::LogLevel::Info, i * 1000, 0, text.data(), text.size()), static_cast<uint64_t>(i));
    }
    EXPECT_EQ(ring->next_seq(), 10u);
    EXPECT_EQ(ring->oldest_seq(), 6u);
    ktl::LogRecord rec;
    EXPECT_FALSE(ring->read(5, rec)) << "overwritten records are gone";
    ASSERT_TRUE(ring->read(6, rec));
    EXPECT_STREQ(rec.text, "message 6");
    ASSERT_TRUE(ring->read(9, rec));
    EXPECT_EQ(rec.mono_ns, 9000u);
    EXPECT_FALSE(ring->read(10, rec));
}

TEST(LogRing, TruncatesLongText) {
    auto ring = std::make_unique<ktl::LogRing<2>>();
    std::string big(1000, 'x');
    ring->append(ktl::LogLevel::Error, 0, 0, big.data(), big.size());
    ktl::LogRecord rec;
    ASSERT_TRUE(ring->read(0, rec));
    EXPECT_EQ(rec.length, ktl::LogRecord::kMaxText);
    EXPECT_EQ(std::string(rec.text).size(), ktl::LogRecord::kMaxText);
}

TEST(LogFormat, LineHasTimestampLevelAndText) {
    ktl::LogRecord rec;
    rec.mono_ns = 12345678901ull; // 12.345678901 s
    rec.level = ktl::LogLevel::Warning;
    snprintf(rec.text, sizeof rec.text, "disk on fire");
    char line[128];
    size_t n = ktl::format_log_line(rec, line, sizeof line);
    EXPECT_STREQ(line, "[    12.345678] warning  disk on fire");
    EXPECT_EQ(n, strlen(line));
}

TEST(LogFormat, SmallBufferTruncatesSafely) {
    ktl::LogRecord rec;
    snprintf(rec.text, sizeof rec.text, "a fairly long message that will not fit");
    char line[16];
    memset(line, 'Z', sizeof line);
    size_t n = ktl::format_log_line(rec, line, sizeof line);
    EXPECT_EQ(n, 15u);
    EXPECT_EQ(line[15], '\0');
}

TEST(Formatter, AppendsAndFlagsTruncation) {
    char buf[10];
    ktl::Formatter f(buf, sizeof buf);
    f.append("%d-%s", 42, "abc");
    EXPECT_STREQ(buf, "42-abc");
    EXPECT_FALSE(f.truncated());
    f.append("%s", "0123456789");
    EXPECT_TRUE(f.truncated());
    EXPECT_EQ(f.length(), 9u);
    EXPECT_EQ(strlen(buf), 9u);
    ktl::Formatter empty(nullptr, 0);
    empty.append("x");
    EXPECT_TRUE(empty.truncated());
}

TEST(CivilTime, KnownDates) {
    char buf[32];
    ASSERT_TRUE(ktl::format_rfc3339(0, buf, sizeof buf));
    EXPECT_STREQ(buf, "1970-01-01T00:00:00Z");
    ASSERT_TRUE(ktl::format_rfc3339(951782400, buf, sizeof buf)); // leap day in a 400-year leap year
    EXPECT_STREQ(buf, "2000-02-29T00:00:00Z");
    ASSERT_TRUE(ktl::format_rfc3339(1795334400, buf, sizeof buf));
    EXPECT_STREQ(buf, "2026-11-22T08:00:00Z");
    ASSERT_TRUE(ktl::format_rfc3339(4107542399, buf, sizeof buf)); // 2100 is not a leap year
    EXPECT_STREQ(buf, "2100-02-28T23:59:59Z");
    ASSERT_TRUE(ktl::format_rfc3339(-1, buf, sizeof buf));
    EXPECT_STREQ(buf, "1969-12-31T23:59:59Z");
}

TEST(CivilTime, AgreesWithLibcOverRandomInstants) {
    std::mt19937_64 rng(7);
    char ours[32], theirs[32];
    for (int i = 0; i < 100000; ++i) {
        int64_t t = static_cast<int64_t>(rng() % 253402300799ull); // up to 9999-12-31
        time_t tt = static_cast<time_t>(t);
        struct tm tmv;
        gmtime_r(&tt, &tmv);
        strftime(theirs, sizeof theirs, "%Y-%m-%dT%H:%M:%SZ", &tmv);
        ASSERT_TRUE(ktl::format_rfc3339(t, ours, sizeof ours));
        ASSERT_STREQ(ours, theirs) << "t=" << t;
        auto c = ktl::civil_from_unix(t);
        ASSERT_EQ(ktl::days_from_civil(c.year, c.month, c.day), t / 86400);
    }
}

TEST(CivilTime, RejectsOutOfRangeAndSmallBuffers) {
    char buf[32];
    EXPECT_FALSE(ktl::format_rfc3339(253402300800ll, buf, sizeof buf)); // year 10000
    EXPECT_STREQ(buf, "invalid");
    char small[8];
    EXPECT_FALSE(ktl::format_rfc3339(0, small, sizeof small));
    EXPECT_EQ(small[0], '\0');
}

// Text cut to fit a fixed field is cut between characters: "é" is two bytes, never split.
TEST(Utf8, CopiesTheLongestWholePrefixThatFits) {
    char out[6];
    EXPECT_EQ(ktl::utf8_copy(out, sizeof out, "abcdé"), 4u) << "the é would need bytes 5 and 6";
    EXPECT_STREQ(out, "abcd");
    EXPECT_EQ(ktl::utf8_copy(out, sizeof out, "abé"), 4u);
    EXPECT_STREQ(out, "abé");
    EXPECT_EQ(ktl::utf8_copy(out, sizeof out, "€€"), 3u) << "one three-byte character of two";
    EXPECT_STREQ(out, "€");
    EXPECT_EQ(ktl::utf8_copy(out, 1, "abc"), 0u);
    EXPECT_STREQ(out, "");
    EXPECT_EQ(ktl::utf8_prefix("a😀", 4), 1u) << "a four-byte character is whole or absent";
}
