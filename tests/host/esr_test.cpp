// ESR decoding against syndromes observed on QEMU and worked out from ARM DDI 0487.
#include <aarch64/esr.h>

#include <gtest/gtest.h>

#include <string>

static std::string text(uint64_t esr) {
    char buf[160];
    aarch64::format_esr(esr, buf, sizeof buf);
    return buf;
}

TEST(Esr, DataAbortTranslationFaultRead) {
    auto info = aarch64::decode_esr(0x96000006); // EC 0x25, IL, DFSC 0b000110: translation L2
    EXPECT_EQ(info.ec, 0x25u);
    EXPECT_TRUE(info.il);
    EXPECT_TRUE(info.is_abort);
    EXPECT_STREQ(info.fault, "translation fault");
    EXPECT_EQ(info.fault_level, 2);
    EXPECT_FALSE(info.write);
    EXPECT_EQ(text(0x96000006), "EC 0x25 data abort (same EL): translation fault, level 2, read (ISS 0x000006)");
}

TEST(Esr, DataAbortPermissionFaultWrite) {
    auto info = aarch64::decode_esr(0x9600004f); // WnR set, DFSC 0b001111: permission L3
    EXPECT_TRUE(info.write);
    EXPECT_STREQ(info.fault, "permission fault");
    EXPECT_EQ(info.fault_level, 3);
    EXPECT_EQ(text(0x9600004f), "EC 0x25 data abort (same EL): permission fault, level 3, write (ISS 0x00004f)");
}

TEST(Esr, InstructionAbortHasNoDirection) {
    EXPECT_EQ(text(0x8600000f), "EC 0x21 instruction abort (same EL): permission fault, level 3 (ISS 0x00000f)");
}

TEST(Esr, FarNotValidFlag) {
    auto info = aarch64::decode_esr(0x96000410); // FnV + synchronous external abort
    EXPECT_FALSE(info.far_valid);
    EXPECT_STREQ(info.fault, "synchronous external abort");
    EXPECT_EQ(info.fault_level, -1);
    EXPECT_NE(text(0x96000410).find("FAR not valid"), std::string::npos);
}

TEST(Esr, NonAbortClasses) {
    EXPECT_EQ(text(0x02000000), "EC 0x00 unknown reason (ISS 0x000000)");
    EXPECT_EQ(text(0xf2000042), "EC 0x3c BRK instruction (ISS 0x000042)");
    EXPECT_EQ(text(0x56000000), "EC 0x15 SVC from AArch64 (ISS 0x000000)");
    EXPECT_FALSE(aarch64::decode_esr(0x56000000).is_abort);
    EXPECT_EQ(text(0xbe000000).substr(0, 26), "EC 0x2f SError interrupt (");
}

TEST(Esr, AlignmentFault) {
    EXPECT_EQ(text(0x96000021), "EC 0x25 data abort (same EL): alignment fault, read (ISS 0x000021)");
}

TEST(Esr, TinyBufferIsSafe) {
    char buf[4];
    size_t n = aarch64::format_esr(0x96000006, buf, sizeof buf);
    EXPECT_EQ(n, 3u);
    EXPECT_EQ(buf[3], '\0');
}
