// Device tree parser: real QEMU virt blobs (GICv2, GICv3, GICv3 + virtualization), a synthetic
// Raspberry-Pi-like bus with `ranges`, and malformed input (truncation at every length,
// header corruption, structural corruption, random mutations) that must be rejected cleanly.
#include <dtb/bootargs.h>
#include <dtb/dtb.h>

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

std::vector<uint8_t> load(const char* name) {
    std::ifstream f(std::string(BASALT_TEST_DATA) + "/" + name, std::ios::binary);
    EXPECT_TRUE(f.good()) << "missing test blob " << name;
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

dtb::Blob parse(const std::vector<uint8_t>& bytes) {
    auto r = dtb::Blob::create(bytes.data(), bytes.size());
    EXPECT_TRUE(r.ok()) << ktl::error_name(r.error());
    return r.ok() ? *r : dtb::Blob();
}

// Walks every node, property, reg entry and interrupt: on a corrupt blob this must neither
// crash nor read out of bounds (ASan watches), whatever create() let through.
size_t walk_everything(const dtb::Blob& b) {
    size_t nodes = 0;
    std::vector<dtb::Node> stack { b.root() };
    while (!stack.empty() && nodes < 100000) {
        dtb::Node n = stack.back();
        stack.pop_back();
        ++nodes;
        (void)b.name(n);
        (void)b.string(n, "compatible");
        (void)b.is_compatible(n, "arm,pl011");
        for (size_t i = 0; i < b.reg_count(n) && i < 64; ++i)
            (void)b.reg(n, i);
        (void)b.interrupt(n, 0);
        (void)b.parent(n);
        for (auto c = b.first_child(n); c; c = b.next_sibling(*c))
            stack.push_back(*c);
    }
    dtb::Range r[8];
    (void)b.memory_ranges(r);
    (void)b.reserved_ranges(r);
    (void)b.bootargs();
    (void)b.stdout_node();
    (void)b.find("/chosen");
    (void)b.find("serial0");
    (void)b.by_phandle(1);
    return nodes;
}

uint32_t be32(const uint8_t* p) { return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3]; }
void put_be32(uint8_t* p, uint32_t v) {
    p[0] = uint8_t(v >> 24);
    p[1] = uint8_t(v >> 16);
    p[2] = uint8_t(v >> 8);
    p[3] = uint8_t(v);
}

// A minimal FDT writer for synthetic trees.
class FdtBuilder {
public:
    void begin(const std::string& name) {
        word(1);
        bytes(name.c_str(), name.size() + 1);
    }
    void end() { word(2); }
    void prop(const std::string& name, const std::vector<uint32_t>& cells) {
        std::vector<uint8_t> v(cells.size() * 4);
        for (size_t i = 0; i < cells.size(); ++i)
            put_be32(&v[i * 4], cells[i]);
        prop_raw(name, v);
    }
    std::vector<uint8_t> finish() {
        word(9);
        std::vector<uint8_t> out(40);
        uint32_t off_rsv = 40, off_struct = 56, off_strings = off_struct + uint32_t(m_struct.size());
        uint32_t total = off_strings + uint32_t(m_strings.size());
        put_be32(&out[0], 0xd00dfeed);
        put_be32(&out[4], total);
        put_be32(&out[8], off_struct);
        put_be32(&out[12], off_strings);
        put_be32(&out[16], off_rsv);
        put_be32(&out[20], 17);
        put_be32(&out[24], 16);
        put_be32(&out[32], uint32_t(m_strings.size()));
        put_be32(&out[36], uint32_t(m_struct.size()));
        out.resize(56, 0); // one terminating (empty) reservation entry
        out.insert(out.end(), m_struct.begin(), m_struct.end());
        out.insert(out.end(), m_strings.begin(), m_strings.end());
        return out;
    }

private:
    void word(uint32_t v) {
        uint8_t b[4];
        put_be32(b, v);
        bytes(b, 4);
    }
    void bytes(const void* p, size_t n) {
        auto* c = static_cast<const uint8_t*>(p);
        m_struct.insert(m_struct.end(), c, c + n);
        while (m_struct.size() % 4)
            m_struct.push_back(0);
    }
    void prop_raw(const std::string& name, const std::vector<uint8_t>& v) {
        word(3);
        word(uint32_t(v.size()));
        word(string_offset(name));
        bytes(v.data(), v.size());
    }
    uint32_t string_offset(const std::string& name) {
        uint32_t off = uint32_t(m_strings.size());
        m_strings.insert(m_strings.end(), name.begin(), name.end());
        m_strings.push_back(0);
        return off;
    }

public:
    void prop_str(const std::string& name, const std::string& s) {
        std::vector<uint8_t> v(s.begin(), s.end());
        v.push_back(0);
        prop_raw(name, v);
    }

private:
    std::vector<uint8_t> m_struct;
    std::vector<uint8_t> m_strings;
};

// Like a Raspberry Pi 4: devices on a bus at 0x7e000000 that the CPU sees at 0xfe000000.
std::vector<uint8_t> pi_like_tree() {
    FdtBuilder b;
    b.begin("");
    b.prop("#address-cells", { 2 });
    b.prop("#size-cells", { 1 });
    b.prop_str("model", "Synthetic Pi");
    b.prop("interrupt-parent", { 1 });
    b.begin("memory@0");
    b.prop_str("device_type", "memory");
    b.prop("reg", { 0, 0, 0x3c000000, 0, 0x40000000, 0x40000000 });
    b.end();
    b.begin("soc");
    b.prop("#address-cells", { 1 });
    b.prop("#size-cells", { 1 });
    b.prop("ranges", { 0x7e000000, 0, 0xfe000000, 0x01800000 });
    b.prop_str("compatible", "simple-bus");
    b.begin("serial@7e201000");
    b.prop("reg", { 0x7e201000, 0x200 });
    b.prop_str("compatible", "arm,pl011");
    b.prop("interrupts", { 0, 121, 4 });
    b.end();
    b.begin("gpio@7f900000"); // outside the ranges window
    b.prop("reg", { 0x7f900000, 0x100 });
    b.end();
    b.end();
    b.begin("intc@40041000");
    b.prop_str("compatible", "arm,gic-400");
    b.prop("#interrupt-cells", { 3 });
    b.prop("phandle", { 1 });
    b.prop("reg", { 0, 0xff841000, 0x1000, 0, 0xff842000, 0x2000 });
    b.end();
    b.begin("isolated");
    b.prop("#address-cells", { 1 });
    b.prop("#size-cells", { 1 });
    b.begin("dev@10"); // parent has no `ranges`: not CPU-addressable
    b.prop("reg", { 0x10, 0x10 });
    b.end();
    b.end();
    b.end();
    return b.finish();
}

} // namespace

TEST(Dtb, QemuVirtGicV2) {
    auto bytes = load("qemu-virt-gicv2.dtb");
    auto b = parse(bytes);
    EXPECT_EQ(b.total_size(), bytes.size());
    dtb::Range mem[4];
    ASSERT_EQ(b.memory_ranges(mem), 1u);
    EXPECT_EQ(mem[0].base, 0x40000000u);
    EXPECT_EQ(mem[0].size, 256u << 20);
    EXPECT_EQ(b.bootargs(), "console=serial0 mode=test hz=250");

    auto uart = b.find_compatible("arm,pl011");
    ASSERT_TRUE(uart);
    auto reg = b.reg(*uart, 0);
    ASSERT_TRUE(reg.ok());
    EXPECT_EQ(reg->base, 0x09000000u);
    EXPECT_EQ(reg->size, 0x1000u);
    auto irq = b.interrupt(*uart, 0);
    ASSERT_TRUE(irq.ok());
    EXPECT_EQ(irq->intid(), 33u);
    auto out = b.stdout_node();
    ASSERT_TRUE(out);
    EXPECT_EQ(out->offset, uart->offset);
    EXPECT_EQ(b.name(*uart), "pl011@9000000");
    auto alias = b.find("serial0");
    ASSERT_TRUE(alias);
    EXPECT_EQ(alias->offset, uart->offset);

    auto gic = b.find_compatible("arm,cortex-a15-gic");
    ASSERT_TRUE(gic);
    EXPECT_EQ(b.reg(*gic, 0)->base, 0x08000000u);
    EXPECT_EQ(b.reg(*gic, 1)->base, 0x08010000u);
    EXPECT_FALSE(b.find_compatible("arm,gic-v3"));

    auto rtc = b.find_compatible("arm,pl031");
    ASSERT_TRUE(rtc);
    EXPECT_EQ(b.reg(*rtc, 0)->base, 0x09010000u);
    EXPECT_EQ(b.interrupt(*rtc, 0)->intid(), 34u);

    auto timer = b.find_compatible("arm,armv8-timer");
    ASSERT_TRUE(timer);
    EXPECT_EQ(b.interrupt(*timer, 0)->intid(), 29u); // secure physical
    EXPECT_EQ(b.interrupt(*timer, 1)->intid(), 30u); // non-secure physical
    EXPECT_EQ(b.interrupt(*timer, 2)->intid(), 27u); // virtual
    EXPECT_EQ(b.interrupt(*timer, 4).error(), ktl::Error::NotFound);

    auto psci = b.find_compatible("arm,psci-0.2");
    ASSERT_TRUE(psci);
    EXPECT_EQ(b.string(*psci, "method").value_or(""), "hvc");

    size_t virtio = 0;
    uint64_t lowest = ~0ull, highest = 0;
    for (auto n = b.find_compatible("virtio,mmio"); n; n = b.find_compatible("virtio,mmio", n)) {
        auto r = b.reg(*n, 0);
        ASSERT_TRUE(r.ok());
        lowest = std::min(lowest, r->base);
        highest = std::max(highest, r->base);
        ++virtio;
    }
    EXPECT_EQ(virtio, 32u);
    EXPECT_EQ(lowest, 0x0a000000u);
    EXPECT_EQ(highest, 0x0a003e00u);
}

TEST(Dtb, QemuVirtGicV3) {
    auto bytes = load("qemu-virt-gicv3.dtb");
    auto b = parse(bytes);
    auto gic = b.find_compatible("arm,gic-v3");
    ASSERT_TRUE(gic);
    EXPECT_EQ(b.reg(*gic, 0)->base, 0x08000000u);
    auto redist = b.reg(*gic, 1);
    ASSERT_TRUE(redist.ok());
    EXPECT_EQ(redist->base, 0x080a0000u);
    EXPECT_GE(redist->size, 0x20000u);
    dtb::Range mem[4];
    ASSERT_EQ(b.memory_ranges(mem), 1u);
    EXPECT_EQ(mem[0].size, 512u << 20);
    EXPECT_EQ(b.bootargs(), "");
    EXPECT_EQ(b.interrupt(*b.find_compatible("arm,pl011"), 0)->intid(), 33u);
    EXPECT_EQ(b.string(b.root(), "model").value_or(""), "linux,dummy-virt");
    EXPECT_TRUE(b.find("/cpus/cpu@0"));
    EXPECT_TRUE(b.find("/cpus/cpu"));
    EXPECT_FALSE(b.find("/cpus/cpu@7"));
    EXPECT_FALSE(b.find("/no/such/node"));
    EXPECT_FALSE(b.find("nosuchalias"));
}

TEST(Dtb, QemuVirtWithVirtualizationUsesSmc) {
    auto bytes = load("qemu-virt-gicv3-el2.dtb");
    auto b = parse(bytes);
    auto psci = b.find_compatible("arm,psci-0.2");
    ASSERT_TRUE(psci);
    EXPECT_EQ(b.string(*psci, "method").value_or(""), "smc");
    dtb::Range mem[4];
    ASSERT_EQ(b.memory_ranges(mem), 1u);
    EXPECT_EQ(mem[0].size, 1u << 30);
    auto gic = b.find_compatible("arm,gic-v3");
    ASSERT_TRUE(gic);
    EXPECT_EQ(b.interrupt(*gic, 0)->intid(), 25u) << "maintenance interrupt, PPI 9";
}

TEST(Dtb, RangesTranslateBusAddresses) {
    auto bytes = pi_like_tree();
    auto b = parse(bytes);
    auto uart = b.find_compatible("arm,pl011");
    ASSERT_TRUE(uart);
    auto r = b.reg(*uart, 0);
    ASSERT_TRUE(r.ok()) << ktl::error_name(r.error());
    EXPECT_EQ(r->base, 0xfe201000u);
    EXPECT_EQ(r->size, 0x200u);
    EXPECT_EQ(b.interrupt(*uart, 0)->intid(), 153u) << "SPI 121, parent inherited from the root";
    auto gpio = b.find("/soc/gpio@7f900000");
    ASSERT_TRUE(gpio);
    EXPECT_EQ(b.reg(*gpio, 0).error(), ktl::Error::NotFound) << "outside every ranges window";
    auto isolated = b.find("/isolated/dev@10");
    ASSERT_TRUE(isolated);
    EXPECT_EQ(b.reg(*isolated, 0).error(), ktl::Error::NotFound) << "no ranges on the parent bus";
    dtb::Range mem[4];
    ASSERT_EQ(b.memory_ranges(mem), 2u);
    EXPECT_EQ(mem[1].base, 0x40000000u);
    EXPECT_EQ(b.parent(*uart)->offset, b.find("/soc")->offset);
    EXPECT_FALSE(b.parent(b.root()));
    EXPECT_EQ(b.by_phandle(1)->offset, b.find_compatible("arm,gic-400")->offset);
    EXPECT_FALSE(b.by_phandle(2));
}

TEST(Dtb, EveryTruncationIsRejected) {
    auto bytes = load("qemu-virt-gicv3.dtb");
    // Blob::create must refuse any prefix shorter than totalsize.
    for (size_t len = 0; len < bytes.size(); len += (len < 8192 ? 1 : 997)) {
        auto r = dtb::Blob::create(bytes.data(), len);
        ASSERT_FALSE(r.ok()) << "accepted a blob truncated to " << len;
    }
}

TEST(Dtb, StructureTruncatedInsideTheBlobIsRejected) {
    auto bytes = pi_like_tree();
    uint32_t struct_size = be32(&bytes[36]);
    for (uint32_t cut = 0; cut < struct_size; cut += 4) {
        auto copy = bytes;
        put_be32(&copy[36], cut); // header claims a shorter structure block
        auto r = dtb::Blob::create(copy.data(), copy.size());
        ASSERT_FALSE(r.ok()) << "accepted a structure block cut at " << cut;
    }
}

TEST(Dtb, HeaderCorruptionIsRejected) {
    auto good = load("qemu-virt-gicv2.dtb");
    auto mutate = [&](size_t off, uint32_t v) {
        auto copy = good;
        put_be32(&copy[off], v);
        return dtb::Blob::create(copy.data(), copy.size()).error();
    };
    EXPECT_EQ(mutate(0, 0xdeadbeef), ktl::Error::Corrupt);                       // magic
    EXPECT_EQ(mutate(4, uint32_t(good.size() + 4)), ktl::Error::Truncated);       // totalsize > available
    EXPECT_EQ(mutate(8, 0xfffffff0), ktl::Error::Corrupt);                        // struct offset
    EXPECT_EQ(mutate(8, be32(&good[8]) + 2), ktl::Error::Corrupt);                // misaligned struct
    EXPECT_EQ(mutate(12, 0xfffffff0), ktl::Error::Corrupt);                       // strings offset
    EXPECT_EQ(mutate(16, 0xfffffff8), ktl::Error::Corrupt);                       // memreserve offset
    EXPECT_EQ(mutate(20, 15), ktl::Error::Corrupt);                               // version
    EXPECT_EQ(mutate(24, 18), ktl::Error::Corrupt);                               // last compatible
    EXPECT_EQ(mutate(32, 0xffffff00), ktl::Error::Corrupt);                       // strings size
    EXPECT_EQ(mutate(36, 0xffffff00), ktl::Error::Corrupt);                       // struct size
    EXPECT_FALSE(dtb::Blob::create(nullptr, 100).ok());
    EXPECT_FALSE(dtb::Blob::has_magic(good.data() + 4));
    EXPECT_TRUE(dtb::Blob::has_magic(good.data()));
}

TEST(Dtb, StructuralCorruptionIsRejected) {
    auto good = pi_like_tree();
    uint32_t off_struct = be32(&good[8]);
    uint32_t size_struct = be32(&good[36]);
    // Unknown token.
    auto bad_token = good;
    put_be32(&bad_token[off_struct + 8], 0x77); // first property token of the root
    EXPECT_FALSE(dtb::Blob::create(bad_token.data(), bad_token.size()).ok());
    // Property name offset past the strings block.
    auto bad_name = good;
    put_be32(&bad_name[off_struct + 8 + 8], 0x7fffffff);
    EXPECT_FALSE(dtb::Blob::create(bad_name.data(), bad_name.size()).ok());
    // Property length past the end of the structure block.
    auto bad_len = good;
    put_be32(&bad_len[off_struct + 8 + 4], size_struct);
    EXPECT_FALSE(dtb::Blob::create(bad_len.data(), bad_len.size()).ok());
    // Missing FDT_END (replace it with NOP).
    auto no_end = good;
    put_be32(&no_end[off_struct + size_struct - 4], 4);
    EXPECT_FALSE(dtb::Blob::create(no_end.data(), no_end.size()).ok());
    // Unbalanced: an extra END_NODE before FDT_END.
    auto unbalanced = good;
    put_be32(&unbalanced[off_struct + size_struct - 4], 2);
    EXPECT_FALSE(dtb::Blob::create(unbalanced.data(), unbalanced.size()).ok());
}

TEST(Dtb, UnterminatedNodeNameIsRejected) {
    FdtBuilder b;
    b.begin("");
    b.end();
    auto bytes = b.finish();
    uint32_t off_struct = be32(&bytes[8]);
    // Make the (empty) root name run to the end of the structure block: fill with non-NULs.
    for (size_t i = off_struct + 4; i < bytes.size(); ++i)
        bytes[i] = 'A';
    EXPECT_FALSE(dtb::Blob::create(bytes.data(), bytes.size()).ok());
}

TEST(Dtb, ExcessiveNestingIsRejected) {
    FdtBuilder b;
    b.begin("");
    for (int i = 0; i < 40; ++i)
        b.begin("n" + std::to_string(i));
    for (int i = 0; i < 40; ++i)
        b.end();
    b.end();
    auto bytes = b.finish();
    EXPECT_EQ(dtb::Blob::create(bytes.data(), bytes.size()).error(), ktl::Error::Corrupt);
    FdtBuilder ok;
    ok.begin("");
    for (int i = 0; i < 20; ++i)
        ok.begin("n" + std::to_string(i));
    for (int i = 0; i < 20; ++i)
        ok.end();
    ok.end();
    auto fine = ok.finish();
    EXPECT_TRUE(dtb::Blob::create(fine.data(), fine.size()).ok());
}

TEST(Dtb, RandomMutationsNeverCrash) {
    // The QEMU blob's interesting part is its first few KiB; work on a trimmed copy so each
    // iteration is cheap, and fix totalsize accordingly.
    auto full = load("qemu-virt-gicv2.dtb");
    uint32_t end = std::max(be32(&full[12]) + be32(&full[32]), be32(&full[8]) + be32(&full[36]));
    std::vector<uint8_t> base(full.begin(), full.begin() + end);
    put_be32(&base[4], end);
    ASSERT_TRUE(dtb::Blob::create(base.data(), base.size()).ok());
    std::mt19937 rng(1234);
    size_t accepted = 0;
    for (int iter = 0; iter < 4000; ++iter) {
        auto copy = base;
        int flips = 1 + int(rng() % 4);
        for (int f = 0; f < flips; ++f) {
            size_t pos = rng() % copy.size();
            if (rng() % 2)
                copy[pos] ^= uint8_t(1u << (rng() % 8));
            else
                copy[pos] = uint8_t(rng());
        }
        auto r = dtb::Blob::create(copy.data(), copy.size());
        if (r.ok()) {
            ++accepted;
            walk_everything(*r);
        }
    }
    // Most mutations land in names and values, which are legal to change.
    EXPECT_GT(accepted, 200u);
}

TEST(Dtb, WalkVisitsEveryNode) {
    auto bytes = load("qemu-virt-gicv3.dtb");
    auto b = parse(bytes);
    EXPECT_GT(walk_everything(b), 40u);
}

TEST(Bootargs, ValuesAndFlags) {
    std::string_view args = "  console=serial0 semihosting hz=250 panic=halt  debug=0 hz=300 x";
    EXPECT_EQ(dtb::bootarg_value(args, "console").value_or(""), "serial0");
    EXPECT_EQ(dtb::bootarg_value(args, "hz").value_or(""), "300") << "the last one wins";
    EXPECT_FALSE(dtb::bootarg_value(args, "missing"));
    EXPECT_FALSE(dtb::bootarg_value(args, "h")) << "no prefix matches";
    EXPECT_TRUE(dtb::bootarg_flag(args, "semihosting"));
    EXPECT_TRUE(dtb::bootarg_flag(args, "x"));
    EXPECT_FALSE(dtb::bootarg_flag(args, "debug"));
    EXPECT_FALSE(dtb::bootarg_flag(args, "semi"));
    EXPECT_FALSE(dtb::bootarg_flag("", "x"));
}
