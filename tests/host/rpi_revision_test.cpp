// Board revision codes: the models Basalt's Pi images run on, memory sizes, old-style codes.
#include <gtest/gtest.h>

#include <rpi/revision.h>

TEST(RpiRevision, DecodesTheBoardsItRunsOn) {
    char text[80];
    rpi::describe(0xb03115, text, sizeof text); // Pi 4 Model B 2 GB rev 1.5 (QEMU's raspi4b)
    EXPECT_STREQ(text, "Raspberry Pi 4 Model B rev 1.5, 2 GiB");
    rpi::describe(0xd03114, text, sizeof text);
    EXPECT_STREQ(text, "Raspberry Pi 4 Model B rev 1.4, 8 GiB");
    rpi::describe(0xc03130, text, sizeof text);
    EXPECT_STREQ(text, "Raspberry Pi 400 rev 1.0, 4 GiB");
    rpi::describe(0xa03140, text, sizeof text);
    EXPECT_STREQ(text, "Raspberry Pi Compute Module 4 rev 1.0, 1 GiB");
    rpi::describe(0xd04170, text, sizeof text);
    EXPECT_STREQ(text, "Raspberry Pi 5 Model B rev 1.0, 8 GiB");
    auto r = rpi::decode(0xd04170);
    EXPECT_EQ(r.processor, 4u) << "BCM2712";
    EXPECT_EQ(rpi::decode(0xb03115).processor, 3u) << "BCM2711";
}

TEST(RpiRevision, OldStyleAndUnknown) {
    char text[80];
    rpi::describe(0x000e, text, sizeof text);
    EXPECT_STREQ(text, "Raspberry Pi (old-style revision 0xe)");
    rpi::describe(0x9ff0, text, sizeof text); // new-style bit clear: old-style
    EXPECT_STREQ(text, "Raspberry Pi (old-style revision 0x9ff0)");
    rpi::describe(0x800ff0, text, sizeof text);
    EXPECT_STREQ(text, "Raspberry Pi unknown rev 1.0, 256 MiB");
    char tiny[8];
    EXPECT_EQ(rpi::describe(0xb03115, tiny, sizeof tiny), 7u) << "truncated, NUL-terminated";
}
