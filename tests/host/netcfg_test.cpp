// The `ip=` boot argument: static addresses, gateways and everything that must be refused.
#include <gtest/gtest.h>

#include <netcfg/ipv4_config.h>

using netcfg::parse_ip_arg;
using netcfg::parse_ipv4;

TEST(Netcfg, DottedQuad) {
    EXPECT_EQ(*parse_ipv4("10.0.2.15"), 0x0a00020fu);
    EXPECT_EQ(*parse_ipv4("255.255.255.255"), 0xffffffffu);
    EXPECT_EQ(*parse_ipv4("0.0.0.0"), 0u);
    for (const char* bad : { "", "10.0.2", "10.0.2.15.1", "256.0.0.1", "10..2.15", "10.0.2.15 ", "a.b.c.d",
                             "1000.0.0.1", "10.0.2.", ".10.0.2", "10.0.2.0015", "-1.0.0.0" })
        EXPECT_FALSE(parse_ipv4(bad)) << bad;
}

TEST(Netcfg, DhcpIsTheDefault) {
    EXPECT_TRUE(parse_ip_arg("")->dhcp);
    EXPECT_TRUE(parse_ip_arg("dhcp")->dhcp);
}

TEST(Netcfg, StaticWithGateway) {
    auto cfg = parse_ip_arg("10.0.2.15/24,gw=10.0.2.2");
    ASSERT_TRUE(cfg);
    EXPECT_FALSE(cfg->dhcp);
    EXPECT_EQ(cfg->address, 0x0a00020fu);
    EXPECT_EQ(cfg->netmask, 0xffffff00u);
    EXPECT_EQ(cfg->gateway, 0x0a000202u);
    EXPECT_EQ(cfg->prefix, 24);
}

TEST(Netcfg, StaticWithoutGateway) {
    auto cfg = parse_ip_arg("192.168.7.9/16");
    ASSERT_TRUE(cfg);
    EXPECT_EQ(cfg->netmask, 0xffff0000u);
    EXPECT_EQ(cfg->gateway, 0u);
}

TEST(Netcfg, Refused) {
    for (const char* bad : { "10.0.2.15",  // no prefix
                             "10.0.2.15/", // empty prefix
                             "10.0.2.15/0", "10.0.2.15/31", "10.0.2.15/33", "10.0.2.15/240",
                             "10.0.2.0/24",                // network address
                             "10.0.2.255/24",              // broadcast address
                             "10.0.2.15/24,gw=10.0.3.1",   // gateway outside the subnet
                             "10.0.2.15/24,gw=10.0.2.15",  // gateway is the address itself
                             "10.0.2.15/24,gw=10.0.2.255", // gateway is the broadcast address
                             "10.0.2.15/24,gateway=10.0.2.2", "10.0.2.15/24,", "10.0.2.15/2x", "static" })
        EXPECT_FALSE(parse_ip_arg(bad)) << bad;
}

TEST(Netcfg, Format) {
    char buf[16];
    EXPECT_EQ(netcfg::format_ipv4(0x0a00020f, buf, sizeof buf), 9u);
    EXPECT_STREQ(buf, "10.0.2.15");
    EXPECT_EQ(netcfg::format_ipv4(0xffffffff, buf, sizeof buf), 15u);
    EXPECT_STREQ(buf, "255.255.255.255");
    char small[4];
    EXPECT_EQ(netcfg::format_ipv4(0x0a00020f, small, sizeof small), 3u);
    EXPECT_STREQ(small, "10.");
}
