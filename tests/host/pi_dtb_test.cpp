// Debian's real Raspberry Pi device trees (bookworm-backports' arm64 kernel package, fetched by
// toolchain/bootstrap.sh into .deps/pi-dtbs): the queries the kernel makes at boot find memory,
// the console UART, the GIC, the timer, the mailbox (and the bus address its buffer needs), the
// power controls and the Pi 4's Ethernet at the CPU addresses the boards really use.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <dtb/dtb.h>

namespace {

std::vector<uint8_t> load(const std::string& name) {
    std::ifstream f(std::string(BASALT_PI_DTBS) + "/" + name, std::ios::binary);
    EXPECT_TRUE(f.good()) << "missing " << name << " (toolchain/bootstrap.sh fetches it)";
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// The console as kernel/platform.cpp picks it: stdout-path if it names a PL011, else the first.
std::optional<dtb::Node> console_uart(const dtb::Blob& b) {
    auto node = b.stdout_node();
    if (!node || !b.is_compatible(*node, "arm,pl011"))
        node = b.find_compatible("arm,pl011");
    return node;
}

struct Expect {
    const char* file;
    const char* model_prefix;
    uint64_t uart;
    uint32_t uart_intid;
    uint64_t gicd, gicc;
    uint64_t mailbox;
    uint64_t mailbox_bus_of_64k; // the VideoCore's address for RAM at 0x10000
    uint64_t watchdog;           // 0: none (the Pi 5 powers off through PSCI)
    uint64_t genet;              // 0: none in the tree
};

const Expect kBoards[] = {
    { "bcm2711-rpi-4-b.dtb", "Raspberry Pi 4 Model B", 0xfe201000, 153, 0xff841000, 0xff842000, 0xfe00b880, 0xc0010000,
      0xfe100000, 0xfd580000 },
    { "bcm2711-rpi-400.dtb", "Raspberry Pi 400", 0xfe201000, 153, 0xff841000, 0xff842000, 0xfe00b880, 0xc0010000,
      0xfe100000, 0xfd580000 },
    { "bcm2711-rpi-cm4-io.dtb", "Raspberry Pi Compute Module 4", 0xfe201000, 153, 0xff841000, 0xff842000, 0xfe00b880,
      0xc0010000, 0xfe100000, 0xfd580000 },
    { "bcm2712-rpi-5-b.dtb", "Raspberry Pi 5", 0x107d001000, 153, 0x107fff9000, 0x107fffa000, 0x107c013880, 0, 0, 0 },
};

} // namespace

TEST(PiDtb, WhatTheKernelLooksForIsWhereTheBoardHasIt) {
    for (const Expect& e : kBoards) {
        SCOPED_TRACE(e.file);
        auto bytes = load(e.file);
        auto r = dtb::Blob::create(bytes.data(), bytes.size());
        ASSERT_TRUE(r.ok()) << ktl::error_name(r.error());
        const dtb::Blob& b = *r;
        EXPECT_EQ(b.string(b.root(), "model").value_or("").substr(0, std::string(e.model_prefix).size()),
                  e.model_prefix);

        // The BCM2711 files leave /memory's size 0 for the firmware (or QEMU) to fill in at boot,
        // so the kernel finds none in the file itself and says so; the Pi 5's carries a default.
        dtb::Range mem[8];
        const size_t ranges = b.memory_ranges(mem);
        if (e.watchdog) {
            EXPECT_EQ(ranges, 0u);
            ASSERT_TRUE(b.find("/memory@0"));
        } else {
            ASSERT_EQ(ranges, 1u);
            EXPECT_EQ(mem[0].base, 0u);
            EXPECT_GE(mem[0].size, 256u << 20);
        }

        auto uart = console_uart(b);
        ASSERT_TRUE(uart);
        EXPECT_EQ(b.reg(*uart, 0)->base, e.uart);
        EXPECT_EQ(b.interrupt(*uart, 0)->intid(), e.uart_intid);

        auto gic = b.find_compatible("arm,gic-400");
        ASSERT_TRUE(gic);
        EXPECT_EQ(b.reg(*gic, 0)->base, e.gicd);
        EXPECT_EQ(b.reg(*gic, 1)->base, e.gicc);

        auto timer = b.find_compatible("arm,armv8-timer");
        ASSERT_TRUE(timer);
        EXPECT_EQ(b.interrupt(*timer, 1)->intid(), 30u) << "non-secure physical timer";

        auto mbox = b.find_compatible("brcm,bcm2835-mbox");
        ASSERT_TRUE(mbox);
        EXPECT_EQ(b.reg(*mbox, 0)->base, e.mailbox);
        if (e.mailbox_bus_of_64k) {
            auto bus = b.dma_address(*mbox, 0x10000, 256);
            ASSERT_TRUE(bus.ok()) << ktl::error_name(bus.error());
            EXPECT_EQ(*bus, e.mailbox_bus_of_64k);
        }

        auto wdt = b.find_compatible("brcm,bcm2835-pm-wdt");
        if (!wdt)
            wdt = b.find_compatible("brcm,bcm2711-pm");
        if (e.watchdog) {
            ASSERT_TRUE(wdt);
            EXPECT_EQ(b.reg(*wdt, 0)->base, e.watchdog);
            EXPECT_FALSE(b.find_compatible("arm,psci-1.0")) << "the Pi 4 has no PSCI";
        } else {
            auto psci = b.find_compatible("arm,psci-1.0");
            ASSERT_TRUE(psci);
            EXPECT_EQ(b.string(*psci, "method").value_or(""), "smc");
        }

        auto genet = b.find_compatible("brcm,bcm2711-genet-v5");
        if (e.genet) {
            ASSERT_TRUE(genet);
            EXPECT_EQ(b.reg(*genet, 0)->base, e.genet);
            EXPECT_TRUE(b.interrupt(*genet, 0).ok());
        } else {
            EXPECT_FALSE(genet);
        }
    }
}
