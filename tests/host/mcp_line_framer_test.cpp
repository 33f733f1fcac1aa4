// Serial framing: lines split anywhere across reads, CRLF, empty keep-alive lines, and overlong
// lines discarded up to their newline without losing the next message.
#include <mcp/transport/line_framer.h>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {
struct Collected {
    std::vector<std::string> lines;
    std::vector<uint64_t> overflows;
};

void feed(mcp::LineFramer& f, const std::string& s, Collected& out) {
    f.feed({ reinterpret_cast<const uint8_t*>(s.data()), s.size() }, [&](const mcp::FrameEvent& e) {
        if (e.kind == mcp::FrameEvent::Line)
            out.lines.emplace_back(e.line);
        else
            out.overflows.push_back(e.discarded);
    });
}
} // namespace

TEST(McpLineFramer, SplitsLinesAcrossArbitraryChunks) {
    std::string stream;
    std::vector<std::string> expected;
    std::mt19937 rng(5);
    for (int i = 0; i < 200; ++i) {
        std::string msg = "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(i) + ",\"pad\":\"" +
                          std::string(rng() % 300, 'x') + "\"}";
        expected.push_back(msg);
        stream += msg + (i % 3 == 0 ? "\r\n" : "\n");
        if (i % 7 == 0)
            stream += "\n"; // keep-alive blank line
    }
    std::vector<char> buf(1024);
    mcp::LineFramer framer(buf);
    Collected got;
    for (size_t pos = 0; pos < stream.size();) {
        size_t n = 1 + rng() % 97;
        feed(framer, stream.substr(pos, n), got);
        pos += n;
    }
    EXPECT_EQ(got.lines, expected);
    EXPECT_TRUE(got.overflows.empty());
    EXPECT_EQ(framer.pending(), 0u);
}

TEST(McpLineFramer, OverlongLineIsDiscardedAndReportedOnce) {
    std::vector<char> buf(16);
    mcp::LineFramer framer(buf);
    Collected got;
    feed(framer, "short\n", got);
    feed(framer, std::string(40, 'a'), got);
    EXPECT_TRUE(framer.discarding());
    EXPECT_TRUE(got.overflows.empty()) << "reported when the newline arrives, not before";
    feed(framer, std::string(10, 'b') + "\nnext\n", got);
    ASSERT_EQ(got.overflows.size(), 1u);
    EXPECT_EQ(got.overflows[0], 50u);
    ASSERT_EQ(got.lines.size(), 2u);
    EXPECT_EQ(got.lines[0], "short");
    EXPECT_EQ(got.lines[1], "next") << "the line keeps working after an overflow";
}

TEST(McpLineFramer, ExactlyFullLineFits) {
    std::vector<char> buf(8);
    mcp::LineFramer framer(buf);
    Collected got;
    feed(framer, "12345678\n123456789\nok\n", got);
    ASSERT_EQ(got.lines.size(), 2u);
    EXPECT_EQ(got.lines[0], "12345678");
    EXPECT_EQ(got.lines[1], "ok");
    ASSERT_EQ(got.overflows.size(), 1u);
    EXPECT_EQ(got.overflows[0], 9u);
}
