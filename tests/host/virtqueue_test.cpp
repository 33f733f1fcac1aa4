// The split virtqueue against a simulated device that writes the rings directly: what the
// driver publishes, and how it treats used-ring entries it must not believe.
#include <gtest/gtest.h>

#include <drivers/virtio/virtqueue.h>

#include <cstdlib>
#include <cstring>

using virtio::Virtqueue;

namespace {

// The device's side of one queue: reads the available ring, writes the used ring.
class FakeDevice {
public:
    explicit FakeDevice(uint16_t size) : m_size(size) {
        m_bytes = Virtqueue::ring_bytes(size);
        m_mem = static_cast<uint8_t*>(std::aligned_alloc(4096, m_bytes));
        memset(m_mem, 0, m_bytes);
    }
    ~FakeDevice() { std::free(m_mem); }
    uintptr_t ring() const { return reinterpret_cast<uintptr_t>(m_mem); }

    uint16_t avail_idx(const Virtqueue& q) const { return read16(q.layout().avail + 2); }
    uint16_t avail_entry(const Virtqueue& q, uint16_t i) const {
        return read16(q.layout().avail + 4 + 2 * (i % m_size));
    }
    uint64_t desc_addr(const Virtqueue& q, uint16_t id) const {
        uint64_t v;
        memcpy(&v, reinterpret_cast<void*>(q.layout().desc + 16 * id), 8);
        return v;
    }
    uint16_t desc_flags(const Virtqueue& q, uint16_t id) const { return read16(q.layout().desc + 16 * id + 12); }

    // Appends a used element and publishes it (or not).
    void complete(const Virtqueue& q, uint32_t id, uint32_t len, bool publish = true) {
        uintptr_t elem = q.layout().used + 4 + 8 * (m_used % m_size);
        memcpy(reinterpret_cast<void*>(elem), &id, 4);
        memcpy(reinterpret_cast<void*>(elem + 4), &len, 4);
        ++m_used;
        if (publish)
            set_used_idx(q, m_used);
    }
    void set_used_flags(const Virtqueue& q, uint16_t flags) {
        memcpy(reinterpret_cast<void*>(q.layout().used), &flags, 2);
    }
    void set_used_idx(const Virtqueue& q, uint16_t idx) {
        memcpy(reinterpret_cast<void*>(q.layout().used + 2), &idx, 2);
    }

private:
    static uint16_t read16(uintptr_t addr) {
        uint16_t v;
        memcpy(&v, reinterpret_cast<void*>(addr), 2);
        return v;
    }
    uint16_t m_size;
    size_t m_bytes;
    uint8_t* m_mem;
    uint16_t m_used = 0;
};

struct VirtqueueRing : ::testing::Test {
    static constexpr uint16_t kSize = 8;
    FakeDevice dev { kSize };
    Virtqueue q;
    void SetUp() override { ASSERT_TRUE(q.init(kSize, dev.ring())); }
};

} // namespace

TEST(VirtqueueInit, RefusesBadGeometry) {
    FakeDevice dev(256);
    Virtqueue q;
    EXPECT_FALSE(q.init(0, dev.ring()));
    EXPECT_FALSE(q.init(12, dev.ring()));     // not a power of two
    EXPECT_FALSE(q.init(512, dev.ring()));    // over kMaxSize
    EXPECT_FALSE(q.init(8, dev.ring() + 16)); // rings not page-aligned
    EXPECT_TRUE(q.init(256, dev.ring()));
}

TEST(VirtqueueInit, LegacyLayout) {
    // 2.6.2: descriptors, then the available ring, then the used ring on the next page.
    EXPECT_EQ(Virtqueue::ring_bytes(8), 8192u);
    EXPECT_EQ(Virtqueue::ring_bytes(256), 12288u);
    FakeDevice dev(256);
    Virtqueue q;
    ASSERT_TRUE(q.init(256, dev.ring()));
    EXPECT_EQ(q.layout().avail - q.layout().desc, 4096u);
    EXPECT_EQ(q.layout().used - q.layout().desc, 8192u);
}

TEST_F(VirtqueueRing, PostIsInvisibleUntilPublished) {
    ASSERT_TRUE(q.post(3, 0x1000, 100, true));
    EXPECT_EQ(dev.avail_idx(q), 0);
    q.publish();
    EXPECT_EQ(dev.avail_idx(q), 1);
    EXPECT_EQ(dev.avail_entry(q, 0), 3);
    EXPECT_EQ(dev.desc_addr(q, 3), 0x1000u);
    EXPECT_EQ(dev.desc_flags(q, 3), 2); // VIRTQ_DESC_F_WRITE
    EXPECT_TRUE(q.held_by_device(3));
    EXPECT_FALSE(q.post(3, 0x1000, 100, true)) << "a buffer the device holds cannot be posted twice";
    EXPECT_FALSE(q.post(kSize, 0x1000, 100, true));
    EXPECT_FALSE(q.post(4, 0x1000, 0, true));
}

TEST_F(VirtqueueRing, NotifiesOnlyWhenTheDeviceAsks) {
    ASSERT_TRUE(q.post(2, 0x1000, 100, false));
    q.publish();
    EXPECT_TRUE(q.wants_notification());
    dev.set_used_flags(q, 1); // VIRTQ_USED_F_NO_NOTIFY: the device reads the ring on its own
    EXPECT_FALSE(q.wants_notification());
    dev.set_used_flags(q, 0);
    EXPECT_TRUE(q.wants_notification());
}

TEST_F(VirtqueueRing, CompletionReturnsTheBuffer) {
    Virtqueue::Completion c;
    EXPECT_FALSE(q.pop(c));
    ASSERT_TRUE(q.post(5, 0x2000, 200, false));
    q.publish();
    dev.complete(q, 5, 0);
    ASSERT_TRUE(q.pop(c));
    EXPECT_EQ(c.id, 5);
    EXPECT_EQ(c.len, 0u);
    EXPECT_FALSE(q.held_by_device(5));
    EXPECT_FALSE(q.pop(c));
}

TEST_F(VirtqueueRing, LengthClampedToTheBuffer) {
    ASSERT_TRUE(q.post(1, 0x2000, 200, true));
    q.publish();
    dev.complete(q, 1, 0xffffffff);
    Virtqueue::Completion c;
    ASSERT_TRUE(q.pop(c));
    EXPECT_EQ(c.len, 200u);
}

TEST_F(VirtqueueRing, ForeignIdsAreRejected) {
    ASSERT_TRUE(q.post(2, 0x2000, 64, true));
    q.publish();
    dev.complete(q, 200, 10); // out of range
    dev.complete(q, 4, 10);   // in range, never posted
    dev.complete(q, 2, 10);   // genuine
    dev.complete(q, 2, 10);   // the same buffer again
    Virtqueue::Completion c;
    ASSERT_TRUE(q.pop(c));
    EXPECT_EQ(c.id, 2);
    EXPECT_FALSE(q.pop(c));
    EXPECT_EQ(q.rejected(), 3u);
    EXPECT_FALSE(q.broken());
}

TEST_F(VirtqueueRing, UsedIndexRunningAheadBreaksTheQueue) {
    ASSERT_TRUE(q.post(0, 0x2000, 64, true));
    q.publish();
    dev.set_used_idx(q, kSize + 1); // more completions than buffers exist
    Virtqueue::Completion c;
    EXPECT_FALSE(q.pop(c));
    EXPECT_TRUE(q.broken());
    dev.set_used_idx(q, 1);
    EXPECT_FALSE(q.pop(c)) << "a broken queue stays stopped";
}

TEST_F(VirtqueueRing, IndicesWrapAt16Bits) {
    Virtqueue::Completion c;
    for (uint32_t round = 0; round < 70000; ++round) {
        uint16_t id = static_cast<uint16_t>(round % kSize);
        ASSERT_TRUE(q.post(id, 0x1000 + id, 32, true)) << round;
        q.publish();
        ASSERT_EQ(dev.avail_entry(q, static_cast<uint16_t>(round)), id);
        dev.complete(q, id, 16);
        ASSERT_TRUE(q.pop(c)) << round;
        ASSERT_EQ(c.id, id);
        ASSERT_EQ(c.len, 16u);
    }
    EXPECT_EQ(dev.avail_idx(q), static_cast<uint16_t>(70000));
    EXPECT_EQ(q.rejected(), 0u);
}

// A chain (virtio-blk's header, data and status) occupies consecutive descriptors linked by NEXT;
// the device answers with the head, and only the device-writable part bounds the length.
TEST_F(VirtqueueRing, ChainIsLinkedAndAnsweredByItsHead) {
    Virtqueue::Segment chain[3] = { { 0x1000, 16, false }, { 0x2000, 512, true }, { 0x3000, 1, true } };
    ASSERT_TRUE(q.post_chain(3, chain, 3));
    q.publish();
    EXPECT_EQ(dev.avail_idx(q), 1);
    EXPECT_EQ(dev.avail_entry(q, 0), 3);
    EXPECT_EQ(dev.desc_addr(q, 3), 0x1000u);
    EXPECT_EQ(dev.desc_flags(q, 3), 1);     // NEXT, device-readable
    EXPECT_EQ(dev.desc_flags(q, 4), 1 | 2); // NEXT | WRITE
    EXPECT_EQ(dev.desc_flags(q, 5), 2);     // WRITE, the end
    EXPECT_TRUE(q.held_by_device(3));

    dev.complete(q, 4, 513);    // a descriptor inside the chain is not a buffer the device holds
    dev.complete(q, 3, 100000); // the head, with a length past the writable 513 bytes
    Virtqueue::Completion c {};
    ASSERT_TRUE(q.pop(c));
    EXPECT_EQ(c.id, 3);
    EXPECT_EQ(c.len, 513u);
    EXPECT_EQ(q.rejected(), 1u);
    EXPECT_FALSE(q.held_by_device(3));
}

TEST_F(VirtqueueRing, ChainRefusesWhatDoesNotFit) {
    Virtqueue::Segment chain[3] = { { 0x1000, 16, false }, { 0x2000, 512, true }, { 0x3000, 1, true } };
    EXPECT_FALSE(q.post_chain(6, chain, 3)); // descriptors 6, 7, 8: past the ring of 8
    EXPECT_FALSE(q.post_chain(0, chain, 0));
    Virtqueue::Segment empty[1] = { { 0x1000, 0, false } };
    EXPECT_FALSE(q.post_chain(0, empty, 1));
    ASSERT_TRUE(q.post_chain(0, chain, 3));
    EXPECT_FALSE(q.post_chain(0, chain, 3)); // the head is still with the device
}
