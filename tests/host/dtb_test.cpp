// Device tree parser: real QEMU virt blobs (GICv2, GICv3, GICv3 + virtualization), a synthetic
// Raspberry-Pi-like bus with `ranges`, and malformed input (truncation at every length,
// header corruption, structural corruption, random mutations) that must be rejected cleanly.
#include <dtb/bootargs.h>
#include <dtb/dtb.h>

#include <gtest/gtest.h>

#include <algorithm>
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
        size_t regs = b.reg_count(n);
        for (size_t i = 0; i < regs && i < 64; ++i)
            (void)b.reg(n, i);
        (void)b.reg(n, regs);
        (void)b.interrupt(n, 0);
        (void)b.interrupt(n, 1);
        (void)b.u32(n, "phandle");
        (void)b.address_cells(n);
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
    (void)b.find("/cpus/cpu@0");
    (void)b.by_phandle(1);
    for (auto n = b.find_compatible("virtio,mmio"); n; n = b.find_compatible("virtio,mmio", n))
        ++nodes;
    return nodes;
}

uint32_t be32(const uint8_t* p) {
    return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}
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
    void reserve(uint64_t addr, uint64_t size) { m_rsv.push_back({ addr, size }); }
    std::vector<uint8_t> finish() {
        word(9);
        std::vector<uint8_t> out(40);
        uint32_t off_rsv = 40, off_struct = off_rsv + 16 * uint32_t(m_rsv.size() + 1);
        uint32_t off_strings = off_struct + uint32_t(m_struct.size());
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
        for (auto [addr, size] : m_rsv) {
            for (int i = 0; i < 2; ++i) {
                uint64_t v = i == 0 ? addr : size;
                out.resize(out.size() + 8);
                put_be32(&out[out.size() - 8], uint32_t(v >> 32));
                put_be32(&out[out.size() - 4], uint32_t(v));
            }
        }
        out.resize(off_struct, 0); // the terminating (empty) reservation entry
        out.insert(out.end(), m_struct.begin(), m_struct.end());
        out.insert(out.end(), m_strings.begin(), m_strings.end());
        return out;
    }

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

    // One or more strings, each NUL-terminated (a stringlist when given several).
    void prop_str(const std::string& name, std::initializer_list<std::string> list) {
        std::vector<uint8_t> v;
        for (const auto& s : list) {
            v.insert(v.end(), s.begin(), s.end());
            v.push_back(0);
        }
        prop_raw(name, v);
    }
    void prop_str(const std::string& name, const std::string& s) { prop_str(name, { s }); }

private:
    std::vector<std::pair<uint64_t, uint64_t>> m_rsv;
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
    b.prop("dma-ranges", { 0xc0000000, 0, 0x00000000, 0x40000000 }); // the VideoCore sees RAM at 0xc0000000
    b.prop_str("compatible", "simple-bus");
    b.begin("serial@7e201000");
    b.prop("reg", { 0x7e201000, 0x200 });
    b.prop_str("compatible", "arm,pl011");
    b.prop("interrupts", { 0, 121, 4 });
    b.end();
    b.begin("gpio@7f900000"); // outside the ranges window
    b.prop("reg", { 0x7f900000, 0x100 });
    b.end();
    b.begin("straddle@7f7ff000"); // starts inside the window, runs 4 KiB past its end
    b.prop("reg", { 0x7f7ff000, 0x2000 });
    b.end();
    b.begin("last@7f7ff000"); // the window's last page exactly
    b.prop("reg", { 0x7f7ff000, 0x1000 });
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

    // 32 virtio-mmio slots at 0x0a000000 + n * 0x200, SPI 16 + n (INTID 48 + n).
    std::vector<std::pair<uint64_t, uint32_t>> virtio;
    for (auto n = b.find_compatible("virtio,mmio"); n; n = b.find_compatible("virtio,mmio", n)) {
        auto r = b.reg(*n, 0);
        auto irq = b.interrupt(*n, 0);
        ASSERT_TRUE(r.ok() && irq.ok());
        EXPECT_EQ(r->size, 0x200u);
        virtio.emplace_back(r->base, irq->intid());
        ASSERT_LT(virtio.size(), 100u);
    }
    ASSERT_EQ(virtio.size(), 32u);
    std::sort(virtio.begin(), virtio.end());
    for (uint32_t i = 0; i < 32; ++i) {
        EXPECT_EQ(virtio[i].first, 0x0a000000u + i * 0x200u) << i;
        EXPECT_EQ(virtio[i].second, 48u + i) << i;
    }
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
    // DMA: the soc's devices see the first GiB of RAM at 0xc0000000; nothing above it.
    EXPECT_EQ(b.dma_address(*uart, 0x8000, 64).value(), 0xc0008000u);
    EXPECT_EQ(b.dma_address(*uart, 0x3ffff000, 0x1000).value(), 0xfffff000u);
    EXPECT_EQ(b.dma_address(*uart, 0x3ffff000, 0x2000).error(), ktl::Error::NotFound) << "runs past the window";
    EXPECT_EQ(b.dma_address(*uart, 0x40000000, 16).error(), ktl::Error::NotFound);
    auto gic = b.find_compatible("arm,gic-400");
    ASSERT_TRUE(gic);
    EXPECT_EQ(b.dma_address(*gic, 0x1234, 4).value(), 0x1234u) << "no dma-ranges on the root: the same address";
    auto straddle = b.find("/soc/straddle@7f7ff000");
    ASSERT_TRUE(straddle);
    EXPECT_EQ(b.reg(*straddle, 0).error(), ktl::Error::NotFound) << "a region must lie wholly inside its window";
    auto last = b.find("/soc/last@7f7ff000");
    ASSERT_TRUE(last);
    ASSERT_TRUE(b.reg(*last, 0).ok());
    EXPECT_EQ(b.reg(*last, 0)->base, 0xff7ff000u);
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

// The QEMU blobs are padded to 1 MiB; their content ends with the strings block.
std::vector<uint8_t> trimmed(const std::vector<uint8_t>& full) {
    uint32_t end = std::max(be32(&full[12]) + be32(&full[32]), be32(&full[8]) + be32(&full[36]));
    std::vector<uint8_t> out(full.begin(), full.begin() + end);
    put_be32(&out[4], end);
    return out;
}

TEST(Dtb, EveryTruncationIsRejected) {
    auto bytes = load("qemu-virt-gicv3.dtb");
    ASSERT_TRUE(dtb::Blob::create(bytes.data(), bytes.size()).ok());
    // Any prefix shorter than totalsize, in a buffer of exactly that size (ASan sees overreads).
    for (size_t len = 0; len < bytes.size(); ++len) {
        if (len < 4096 || len % 4093 == 0 || len + 64 > bytes.size()) {
            std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + len);
            ASSERT_FALSE(dtb::Blob::create(prefix.data(), prefix.size()).ok()) << "accepted length " << len;
        } else {
            ASSERT_FALSE(dtb::Blob::create(bytes.data(), len).ok()) << "accepted length " << len;
        }
    }
    // The same cut with totalsize rewritten to match: the blocks no longer fit.
    auto small = trimmed(bytes);
    ASSERT_TRUE(dtb::Blob::create(small.data(), small.size()).ok());
    for (size_t len = 0; len < small.size(); ++len) {
        std::vector<uint8_t> prefix(small.begin(), small.begin() + len);
        if (len >= 8)
            put_be32(&prefix[4], uint32_t(len));
        ASSERT_FALSE(dtb::Blob::create(prefix.data(), prefix.size()).ok()) << "accepted length " << len;
    }
}

TEST(Dtb, RealStructureBlockCutAnywhereIsRejected) {
    auto bytes = trimmed(load("qemu-virt-gicv2.dtb"));
    uint32_t struct_size = be32(&bytes[36]);
    for (uint32_t cut = 0; cut < struct_size; ++cut) {
        auto copy = bytes;
        put_be32(&copy[36], cut);
        ASSERT_FALSE(dtb::Blob::create(copy.data(), copy.size()).ok()) << "accepted struct size " << cut;
    }
    uint32_t strings_size = be32(&bytes[32]);
    size_t rejected = 0;
    for (uint32_t cut = 0; cut < strings_size; ++cut) {
        auto copy = bytes;
        put_be32(&copy[32], cut);
        rejected += !dtb::Blob::create(copy.data(), copy.size()).ok();
    }
    // Cutting the strings block strands the property names stored past the cut.
    EXPECT_EQ(rejected, strings_size) << "a cut strings block left every name in bounds";
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
    EXPECT_EQ(mutate(0, 0xdeadbeef), ktl::Error::Corrupt);                  // magic
    EXPECT_EQ(mutate(4, uint32_t(good.size() + 4)), ktl::Error::Truncated); // totalsize > available
    EXPECT_EQ(mutate(8, 0xfffffff0), ktl::Error::Corrupt);                  // struct offset
    EXPECT_EQ(mutate(8, be32(&good[8]) + 2), ktl::Error::Corrupt);          // misaligned struct
    EXPECT_EQ(mutate(12, 0xfffffff0), ktl::Error::Corrupt);                 // strings offset
    EXPECT_EQ(mutate(16, 0xfffffff8), ktl::Error::Corrupt);                 // memreserve offset
    EXPECT_EQ(mutate(20, 15), ktl::Error::Corrupt);                         // version
    EXPECT_EQ(mutate(24, 18), ktl::Error::Corrupt);                         // last compatible
    EXPECT_EQ(mutate(32, 0xffffff00), ktl::Error::Corrupt);                 // strings size
    EXPECT_EQ(mutate(36, 0xffffff00), ktl::Error::Corrupt);                 // struct size
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

// 20,000 seeded mutations of a real blob in four shards (ctest -j runs them side by side):
// create() either refuses the blob or everything reachable through the API stays in bounds.
// Mutations are byte flips, random bytes, and 32-bit words set to token values or lengths.
void fuzz_shard(uint32_t seed, int iterations) {
    auto base = trimmed(load("qemu-virt-gicv2.dtb"));
    ASSERT_TRUE(dtb::Blob::create(base.data(), base.size()).ok());
    const uint32_t off_struct = be32(&base[8]), size_struct = be32(&base[36]);
    const uint32_t interesting[] = { 1, 2, 3, 4, 9, 0, 0xffffffff, 0x7ffffffc, size_struct, 40 };
    std::mt19937 rng(seed);
    int accepted = 0;
    for (int iter = 0; iter < iterations; ++iter) {
        // The blob ends where its heap block ends (ASan sees any overread) and starts at an
        // odd address (a typed 32-bit load would be misaligned).
        std::vector<uint8_t> storage(base.size() + 1);
        uint8_t* copy = storage.data() + 1;
        std::memcpy(copy, base.data(), base.size());
        int edits = 1 + int(rng() % 4);
        for (int e = 0; e < edits; ++e) {
            switch (rng() % 4) {
            case 0: copy[rng() % base.size()] ^= uint8_t(1u << (rng() % 8)); break;
            case 1: copy[rng() % base.size()] = uint8_t(rng()); break;
            case 2: { // a struct-block word (token, length or name offset) set to something telling
                size_t pos = off_struct + 4 * (rng() % (size_struct / 4));
                put_be32(copy + pos, interesting[rng() % std::size(interesting)]);
                break;
            }
            default: put_be32(copy + 4 * (rng() % 10), interesting[rng() % std::size(interesting)]); break;
            }
        }
        auto r = dtb::Blob::create(copy, base.size());
        if (r.ok()) {
            ++accepted;
            walk_everything(*r);
        }
    }
    // Most edits land in names and values, which are legal to change: the walk must run often.
    EXPECT_GT(accepted, iterations / 10);
}

TEST(Dtb, RandomMutationsNeverCrashShard0) { fuzz_shard(1234, 5000); }
TEST(Dtb, RandomMutationsNeverCrashShard1) { fuzz_shard(5678, 5000); }
TEST(Dtb, RandomMutationsNeverCrashShard2) { fuzz_shard(9012, 5000); }
TEST(Dtb, RandomMutationsNeverCrashShard3) { fuzz_shard(3456, 5000); }

TEST(Dtb, WalkVisitsEveryNode) {
    auto bytes = load("qemu-virt-gicv3.dtb");
    auto b = parse(bytes);
    EXPECT_GT(walk_everything(b), 40u);
}

TEST(DtbBootargs, ValuesAndFlags) {
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

namespace {

// /chosen, /aliases, /reserved-memory, memreserve entries and a two-entry compatible list.
std::vector<uint8_t> boot_tree(const std::string& stdout_path) {
    FdtBuilder b;
    b.reserve(0x48000000, 0x10000);
    b.reserve(0x4a000000, 0x2000);
    b.begin("");
    b.prop("#address-cells", { 2 });
    b.prop("#size-cells", { 2 });
    b.prop("interrupt-parent", { 7 });
    b.begin("chosen");
    b.prop_str("bootargs", "console=serial1 quiet");
    b.prop_str("stdout-path", stdout_path);
    b.end();
    b.begin("aliases");
    b.prop_str("serial0", "/soc/uart@1000");
    b.prop_str("serial1", "/soc/uart@2000");
    b.prop_str("broken", "uart@2000"); // not an absolute path
    b.end();
    b.begin("memory@80000000");
    b.prop_str("device_type", "memory");
    b.prop("reg", { 0, 0x80000000, 0, 0x20000000, 0x1, 0x00000000, 0x1, 0x00000000 });
    b.end();
    b.begin("memory@200000000");
    b.prop_str("device_type", "memory");
    b.prop_str("status", "disabled");
    b.prop("reg", { 0x2, 0, 0, 0x1000 });
    b.end();
    b.begin("reserved-memory");
    b.prop("#address-cells", { 2 });
    b.prop("#size-cells", { 2 });
    b.prop_raw("ranges", {});
    b.begin("fw@9fe00000");
    b.prop("reg", { 0, 0x9fe00000, 0, 0x200000 });
    b.end();
    b.begin("off@90000000");
    b.prop_str("status", "disabled");
    b.prop("reg", { 0, 0x90000000, 0, 0x1000 });
    b.end();
    b.end();
    b.begin("intc@c000000");
    b.prop("#interrupt-cells", { 1 }); // a one-cell controller: intid() is the raw number
    b.prop("phandle", { 7 });
    b.end();
    b.begin("soc");
    b.prop("#address-cells", { 1 });
    b.prop("#size-cells", { 1 });
    b.prop_raw("ranges", {}); // identity
    b.begin("uart@1000");
    b.prop_str("compatible", { "vendor,uart-v2", "arm,pl011", "arm,primecell" });
    b.prop("reg", { 0x1000, 0x100 });
    b.prop("interrupts", { 5, 6 });
    b.end();
    b.begin("uart@2000");
    b.prop_str("compatible", { "arm,pl011", "arm,primecell" });
    b.prop("reg", { 0x2000, 0x100, 0x3000, 0x10 });
    b.prop_raw("short", { 1, 2 });
    b.prop_raw("unterminated", { 'a', 'b' });
    b.end();
    b.end();
    b.end();
    return b.finish();
}

} // namespace

TEST(Dtb, ChosenAliasesAndStdoutPath) {
    auto bytes = boot_tree("serial1:115200n8");
    auto b = parse(bytes);
    EXPECT_EQ(b.bootargs(), "console=serial1 quiet");
    auto second = b.find("/soc/uart@2000");
    ASSERT_TRUE(second);
    auto out = b.stdout_node();
    ASSERT_TRUE(out) << "alias with options";
    EXPECT_EQ(out->offset, second->offset);
    EXPECT_EQ(b.find("serial1")->offset, second->offset);
    EXPECT_EQ(b.find("serial0")->offset, b.find("/soc/uart@1000")->offset);
    EXPECT_FALSE(b.find("broken")) << "alias values must be absolute paths";
    EXPECT_FALSE(b.find("serial2"));
    EXPECT_EQ(b.find("/")->offset, b.root().offset);
    EXPECT_FALSE(b.find(""));

    // A Blob reads the caller's bytes in place: keep them alive as long as the Blob.
    auto path_bytes = boot_tree("/soc/uart@1000:9600");
    auto by_path = parse(path_bytes);
    ASSERT_TRUE(by_path.stdout_node());
    EXPECT_EQ(by_path.stdout_node()->offset, by_path.find("serial0")->offset) << "path with options";
    auto bare_bytes = boot_tree("serial0");
    auto bare = parse(bare_bytes);
    ASSERT_TRUE(bare.stdout_node());
    EXPECT_EQ(bare.name(*bare.stdout_node()), "uart@1000");
    auto missing_bytes = boot_tree("serial9");
    EXPECT_FALSE(parse(missing_bytes).stdout_node());
}

TEST(Dtb, MemoryAndReservedRanges) {
    auto bytes = boot_tree("serial0");
    auto b = parse(bytes);
    dtb::Range mem[8];
    ASSERT_EQ(b.memory_ranges(mem), 2u) << "the disabled memory node is skipped";
    EXPECT_EQ(mem[0].base, 0x80000000u);
    EXPECT_EQ(mem[0].size, 0x20000000u);
    EXPECT_EQ(mem[1].base, 0x100000000u);
    EXPECT_EQ(mem[1].size, 0x100000000u);
    dtb::Range one[1];
    EXPECT_EQ(b.memory_ranges(one), 1u) << "bounded by the output span";
    EXPECT_EQ(b.memory_ranges(std::span<dtb::Range>()), 0u);

    dtb::Range rsv[8];
    ASSERT_EQ(b.reserved_ranges(rsv), 3u);
    EXPECT_EQ(rsv[0].base, 0x48000000u);
    EXPECT_EQ(rsv[0].size, 0x10000u);
    EXPECT_EQ(rsv[1].base, 0x4a000000u);
    EXPECT_EQ(rsv[1].size, 0x2000u);
    EXPECT_EQ(rsv[2].base, 0x9fe00000u) << "/reserved-memory child; the disabled one is skipped";
    EXPECT_EQ(rsv[2].size, 0x200000u);
    dtb::Range two[2] = {};
    EXPECT_EQ(b.reserved_ranges(two), 3u) << "every range counted, so a caller knows when it keeps fewer";
    EXPECT_EQ(two[1].base, 0x4a000000u) << "the first that fit are written";
    dtb::Irq huge { 0, 0xfffffff0u, 4, 3 };
    EXPECT_EQ(huge.intid(), dtb::Irq::kInvalid) << "an SPI number that would wrap";
    dtb::Irq ppi { 1, 15, 4, 3 };
    EXPECT_EQ(ppi.intid(), 31u);

    auto qemu = load("qemu-virt-gicv2.dtb");
    dtb::Range qemu_rsv[4];
    EXPECT_EQ(parse(qemu).reserved_ranges(qemu_rsv), 0u);
}

TEST(Dtb, CompatibleListsPropertiesAndInterrupts) {
    auto bytes = boot_tree("serial0");
    auto b = parse(bytes);
    auto first = b.find("/soc/uart@1000"), second = b.find("/soc/uart@2000");
    ASSERT_TRUE(first && second);
    EXPECT_TRUE(b.is_compatible(*first, "arm,pl011")) << "a later entry of the list";
    EXPECT_TRUE(b.is_compatible(*first, "arm,primecell"));
    EXPECT_FALSE(b.is_compatible(*first, "arm,pl01"));
    EXPECT_FALSE(b.is_compatible(*first, "arm"));
    auto m1 = b.find_compatible("arm,pl011");
    ASSERT_TRUE(m1);
    EXPECT_EQ(m1->offset, first->offset);
    auto m2 = b.find_compatible("arm,pl011", m1);
    ASSERT_TRUE(m2);
    EXPECT_EQ(m2->offset, second->offset);
    EXPECT_FALSE(b.find_compatible("arm,pl011", m2));
    EXPECT_EQ(b.string(*first, "compatible").value_or(""), "vendor,uart-v2");

    EXPECT_EQ(b.reg_count(*second), 2u);
    EXPECT_EQ(b.reg(*second, 1)->base, 0x3000u);
    EXPECT_EQ(b.reg(*second, 1)->size, 0x10u);
    EXPECT_EQ(b.reg(*second, 2).error(), ktl::Error::NotFound);
    EXPECT_EQ(b.reg(*second, ~size_t(0)).error(), ktl::Error::NotFound) << "index overflow";
    EXPECT_FALSE(b.u32(*second, "short")) << "2-byte value";
    EXPECT_FALSE(b.string(*second, "unterminated"));
    EXPECT_FALSE(b.property(*second, "absent"));
    EXPECT_EQ(b.property(*second, "short")->value.size(), 2u);

    auto irq = b.interrupt(*first, 1);
    ASSERT_TRUE(irq.ok()) << ktl::error_name(irq.error());
    EXPECT_EQ(irq->intid(), 6u) << "one-cell controller, parent inherited from the root";
    EXPECT_EQ(b.interrupt(*first, 2).error(), ktl::Error::NotFound);
    EXPECT_EQ(b.interrupt(*first, ~size_t(0)).error(), ktl::Error::NotFound);
    EXPECT_EQ(b.interrupt(*second, 0).error(), ktl::Error::NotFound) << "no interrupts property";
    EXPECT_EQ(b.address_cells(*b.find("/soc")), 1u);
    EXPECT_EQ(b.size_cells(b.root()), 2u);
    EXPECT_EQ(b.address_cells(*first), 2u) << "default";
    EXPECT_EQ(b.size_cells(*first), 1u) << "default";
}

TEST(Dtb, NavigationAndBogusNodeHandles) {
    auto bytes = load("qemu-virt-gicv2.dtb");
    auto b = parse(bytes);
    auto cpus = b.find("/cpus");
    ASSERT_TRUE(cpus);
    size_t cpu_nodes = 0;
    for (auto c = b.first_child(*cpus); c; c = b.next_sibling(*c)) {
        if (b.name(*c).substr(0, 4) == "cpu@")
            ++cpu_nodes;
        EXPECT_EQ(b.parent(*c)->offset, cpus->offset);
    }
    EXPECT_EQ(cpu_nodes, 1u) << "QEMU started with one core";
    EXPECT_FALSE(b.next_sibling(b.root()));
    EXPECT_EQ(b.name(b.root()), "");
    // Handles that do not point at a node (any offset, misaligned, past the end) yield nothing
    // or something harmless, never a crash.
    uint32_t struct_size = be32(&bytes[36]);
    for (uint32_t off = 0; off < struct_size + 16; ++off) {
        dtb::Node n { off };
        (void)b.name(n);
        (void)b.property(n, "reg");
        (void)b.first_child(n);
        (void)b.next_sibling(n);
        (void)b.reg(n, 0);
        (void)b.interrupt(n, 0);
    }
    dtb::Node far { 0xfffffffc };
    EXPECT_EQ(b.name(far), "");
    EXPECT_FALSE(b.parent(far));
    EXPECT_FALSE(b.find_compatible("arm,pl011", far));
}

TEST(Dtb, DepthLimitIsExact) {
    auto nested = [](int levels) {
        FdtBuilder b;
        b.begin("");
        for (int i = 1; i < levels; ++i)
            b.begin("n" + std::to_string(i));
        for (int i = 0; i < levels; ++i)
            b.end();
        return b.finish();
    };
    auto at_limit = nested(int(dtb::Blob::kMaxDepth));
    auto r = dtb::Blob::create(at_limit.data(), at_limit.size());
    ASSERT_TRUE(r.ok()) << ktl::error_name(r.error());
    std::string path;
    for (size_t i = 1; i < dtb::Blob::kMaxDepth; ++i)
        path += "/n" + std::to_string(i);
    auto deepest = r->find(path);
    ASSERT_TRUE(deepest);
    EXPECT_EQ(r->name(*deepest), "n31");
    EXPECT_EQ(r->name(*r->parent(*deepest)), "n30");
    auto over = nested(int(dtb::Blob::kMaxDepth) + 1);
    EXPECT_EQ(dtb::Blob::create(over.data(), over.size()).error(), ktl::Error::Corrupt);
}

TEST(Dtb, MoreStructuralDefectsAreRejected) {
    // FDT_END while the root is still open.
    FdtBuilder open;
    open.begin("");
    open.begin("child");
    open.end();
    auto bytes = open.finish();
    EXPECT_FALSE(dtb::Blob::create(bytes.data(), bytes.size()).ok());
    // A property before any node, and a second root after the first.
    FdtBuilder stray;
    stray.prop("x", { 1 });
    stray.begin("");
    stray.end();
    bytes = stray.finish();
    EXPECT_FALSE(dtb::Blob::create(bytes.data(), bytes.size()).ok());
    FdtBuilder two_roots;
    two_roots.begin("");
    two_roots.end();
    two_roots.begin("");
    two_roots.end();
    bytes = two_roots.finish();
    EXPECT_FALSE(dtb::Blob::create(bytes.data(), bytes.size()).ok());
    // A property name whose string runs off the end of the strings block.
    FdtBuilder names;
    names.begin("");
    names.prop("abc", { 1 });
    names.end();
    bytes = names.finish();
    ASSERT_TRUE(dtb::Blob::create(bytes.data(), bytes.size()).ok());
    put_be32(&bytes[32], be32(&bytes[32]) - 1); // drop the final NUL of "abc"
    EXPECT_FALSE(dtb::Blob::create(bytes.data(), bytes.size()).ok());
    // A property length that reaches past the structure block by one byte, and a huge one.
    FdtBuilder len;
    len.begin("");
    len.prop("v", { 1 });
    len.end();
    bytes = len.finish();
    uint32_t off_struct = be32(&bytes[8]), size_struct = be32(&bytes[36]);
    uint32_t value_off = off_struct + 8 + 12; // BEGIN_NODE "" (8 bytes), PROP header (12)
    for (uint32_t bad : { size_struct - (value_off - off_struct) + 1, 0xfffffff0u, 0xffffffffu }) {
        auto copy = bytes;
        put_be32(&copy[off_struct + 8 + 4], bad);
        EXPECT_FALSE(dtb::Blob::create(copy.data(), copy.size()).ok()) << bad;
    }
    // No terminating memory reservation entry inside the blob.
    FdtBuilder rsv;
    rsv.reserve(1, 1);
    rsv.begin("");
    rsv.end();
    bytes = rsv.finish();
    ASSERT_TRUE(dtb::Blob::create(bytes.data(), bytes.size()).ok());
    std::fill(bytes.begin() + 56, bytes.begin() + 72, 0xff); // overwrite the terminator
    EXPECT_FALSE(dtb::Blob::create(bytes.data(), bytes.size()).ok());
}

TEST(Dtb, VersionSixteenWithoutStructSize) {
    FdtBuilder b;
    b.begin("");
    b.prop_str("model", "v16");
    b.end();
    auto bytes = b.finish();
    put_be32(&bytes[20], 16); // version 16 has no size_dt_struct: it runs to totalsize
    put_be32(&bytes[36], 0);
    auto r = dtb::Blob::create(bytes.data(), bytes.size());
    ASSERT_TRUE(r.ok()) << ktl::error_name(r.error());
    EXPECT_EQ(r->string(r->root(), "model").value_or(""), "v16");
    put_be32(&bytes[20], 18);
    put_be32(&bytes[24], 18); // a future version that breaks compatibility
    EXPECT_FALSE(dtb::Blob::create(bytes.data(), bytes.size()).ok());
}

TEST(Dtb, PropertyAfterChildIsRejected) {
    // 5.4.2: a node's properties come before its children; property() relies on that order.
    FdtBuilder b;
    b.begin("");
    b.begin("child");
    b.end();
    b.prop("late", { 1 });
    b.end();
    auto bytes = b.finish();
    EXPECT_EQ(dtb::Blob::create(bytes.data(), bytes.size()).error(), ktl::Error::Corrupt);
}

TEST(Dtb, NopTokensAreSkippedEverywhere) {
    constexpr uint32_t kNop = 4;
    FdtBuilder b;
    b.word(kNop);
    b.begin("");
    b.word(kNop);
    b.prop("#address-cells", { 1 });
    b.word(kNop);
    b.prop("#size-cells", { 1 });
    b.begin("a@10");
    b.word(kNop);
    b.prop("reg", { 0x10, 0x4 });
    b.prop("phandle", { 3 });
    b.word(kNop);
    b.end();
    b.word(kNop);
    b.begin("b@20");
    b.prop("reg", { 0x20, 0x4 });
    b.end();
    b.word(kNop);
    b.end();
    b.word(kNop);
    auto bytes = b.finish();
    auto blob = parse(bytes);
    auto a = blob.find("/a@10");
    ASSERT_TRUE(a);
    EXPECT_EQ(blob.root().offset, 4u) << "the root starts after the leading NOP";
    EXPECT_EQ(blob.u32(*a, "phandle").value_or(0), 3u);
    EXPECT_EQ(blob.by_phandle(3)->offset, a->offset);
    auto next = blob.next_sibling(*a);
    ASSERT_TRUE(next);
    EXPECT_EQ(blob.name(*next), "b@20");
    EXPECT_EQ(blob.reg(*next, 0)->base, 0x20u);
    EXPECT_EQ(blob.u32(blob.root(), "#size-cells").value_or(0), 1u);
    EXPECT_EQ(blob.parent(*next)->offset, blob.root().offset);
}

TEST(DtbBootargs, RepeatedValuesInOrder) {
    std::vector<std::string> seen;
    dtb::bootarg_values(
        "key=admin:a  hz=100 key=reader:x:y keyx=no key= key", "key",
        [](std::string_view v, void* ctx) { static_cast<std::vector<std::string>*>(ctx)->emplace_back(v); }, &seen);
    EXPECT_EQ(seen, (std::vector<std::string> { "admin:a", "reader:x:y", "" }));
}

// The Pi's firmware names what it loaded beside the kernel (config.txt's initramfs) in /chosen.
TEST(Dtb, InitrdFromChosen) {
    auto tree = [](std::vector<uint32_t> start, std::vector<uint32_t> end) {
        FdtBuilder b;
        b.begin("");
        b.begin("chosen");
        if (!start.empty())
            b.prop("linux,initrd-start", start);
        if (!end.empty())
            b.prop("linux,initrd-end", end);
        b.end();
        b.end();
        return b.finish();
    };
    auto one = tree({ 0x2eff0000 }, { 0x2f5a2000 }); // one cell each, as the Pi 4's firmware writes them
    auto r = parse(one).initrd();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->base, 0x2eff0000u);
    EXPECT_EQ(r->size, 0x2f5a2000u - 0x2eff0000u);
    auto two = tree({ 0x1, 0x00000000 }, { 0x1, 0x00100000 }); // two cells: above 4 GiB
    ASSERT_TRUE(parse(two).initrd());
    EXPECT_EQ(parse(two).initrd()->base, 0x100000000ull);
    EXPECT_EQ(parse(two).initrd()->size, 0x100000u);
    auto none = tree({}, {});
    EXPECT_FALSE(parse(none).initrd());
    auto half = tree({ 0x1000 }, {});
    EXPECT_FALSE(parse(half).initrd());
    auto backwards = tree({ 0x2000 }, { 0x1000 });
    EXPECT_FALSE(parse(backwards).initrd());
    auto odd = tree({ 0x1, 0x2, 0x3 }, { 0x4 });
    EXPECT_FALSE(parse(odd).initrd()) << "three cells";
}
