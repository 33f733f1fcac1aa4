// The multiport virtio console handshake from the driver's side, fed the messages a device
// sends (VIRTIO 1.1, 5.3.6.2): what it answers, what it believes, what it refuses to believe.
#include <gtest/gtest.h>

#include <drivers/virtio/console_control.h>

#include <cstring>
#include <string>
#include <vector>

using namespace virtio::console;

namespace {

std::vector<uint8_t> message(uint32_t id, uint16_t event, uint16_t value, const std::string& tail = "") {
    std::vector<uint8_t> out(kControlBytes);
    encode({ id, event, value }, out.data());
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
}

size_t feed(PortControl& pc, const std::vector<uint8_t>& msg, Control replies[PortControl::kMaxReplies]) {
    return pc.on_message(msg.data(), msg.size(), replies);
}

} // namespace

TEST(ConsoleControl, WireFormatIsLittleEndian) {
    uint8_t buf[kControlBytes];
    encode({ 0x01020304, kPortOpen, 1 }, buf);
    const uint8_t expect[kControlBytes] = { 4, 3, 2, 1, 6, 0, 1, 0 };
    EXPECT_EQ(0, memcmp(buf, expect, sizeof buf));
    Control back;
    ASSERT_TRUE(decode(buf, sizeof buf, back));
    EXPECT_EQ(back.id, 0x01020304u);
    EXPECT_EQ(back.event, kPortOpen);
    EXPECT_EQ(back.value, 1);
    EXPECT_FALSE(decode(buf, kControlBytes - 1, back));
}

TEST(ConsoleControl, QueueNumbering) {
    EXPECT_EQ(rx_queue(0), 0);
    EXPECT_EQ(tx_queue(0), 1);
    EXPECT_EQ(rx_queue(1), 4);
    EXPECT_EQ(tx_queue(1), 5);
    EXPECT_EQ(rx_queue(3), 8);
    EXPECT_EQ(tx_queue(3), 9);
}

TEST(ConsoleControl, AddingOurPortAnswersReadyAndOpen) {
    PortControl pc(1);
    Control r[PortControl::kMaxReplies];
    ASSERT_EQ(feed(pc, message(1, kDeviceAdd, 1), r), 2u);
    EXPECT_EQ(r[0].id, 1u);
    EXPECT_EQ(r[0].event, kPortReady);
    EXPECT_EQ(r[0].value, 1);
    EXPECT_EQ(r[1].id, 1u);
    EXPECT_EQ(r[1].event, kPortOpen);
    EXPECT_EQ(r[1].value, 1);
    EXPECT_TRUE(pc.added());
    EXPECT_FALSE(pc.host_open());

    EXPECT_EQ(feed(pc, message(1, kPortName, 0, std::string("org.basalt.line\0junk", 20)), r), 0u);
    EXPECT_STREQ(pc.name(), "org.basalt.line");
    EXPECT_EQ(feed(pc, message(1, kPortOpen, 1), r), 0u);
    EXPECT_TRUE(pc.host_open());
    EXPECT_EQ(feed(pc, message(1, kPortOpen, 0), r), 0u); // host closed its end
    EXPECT_FALSE(pc.host_open());
    EXPECT_EQ(pc.ignored(), 0u);
}

TEST(ConsoleControl, OtherPortsAndNoiseAreIgnored) {
    PortControl pc(1);
    Control r[PortControl::kMaxReplies];
    EXPECT_EQ(feed(pc, message(0, kDeviceAdd, 1), r), 0u); // a virtconsole on port 0: not ours
    EXPECT_EQ(feed(pc, message(2, kPortOpen, 1), r), 0u);
    EXPECT_EQ(feed(pc, message(1, 99, 1), r), 0u);                        // unknown event
    EXPECT_EQ(pc.on_message(message(1, kDeviceAdd, 1).data(), 7, r), 0u); // short
    EXPECT_EQ(pc.on_message(nullptr, 8, r), 0u);
    EXPECT_FALSE(pc.added());
    EXPECT_FALSE(pc.host_open());
    EXPECT_EQ(pc.ignored(), 5u);
}

TEST(ConsoleControl, NamesAreBoundedAndPrintable) {
    PortControl pc(1);
    Control r[PortControl::kMaxReplies];
    std::string longname(500, 'x');
    longname[3] = '\n';
    feed(pc, message(1, kPortName, 0, longname), r);
    EXPECT_EQ(strlen(pc.name()), PortControl::kMaxName);
    EXPECT_EQ(pc.name()[3], '?');
}

TEST(ConsoleControl, RemovalForgetsThePort) {
    PortControl pc(1);
    Control r[PortControl::kMaxReplies];
    feed(pc, message(1, kDeviceAdd, 1), r);
    feed(pc, message(1, kConsolePort, 1), r);
    feed(pc, message(1, kPortName, 0, "a"), r);
    feed(pc, message(1, kPortOpen, 1), r);
    EXPECT_TRUE(pc.console());
    feed(pc, message(1, kDeviceRemove, 1), r);
    EXPECT_FALSE(pc.added());
    EXPECT_FALSE(pc.host_open());
    EXPECT_FALSE(pc.console());
    EXPECT_STREQ(pc.name(), "");
}
