#pragma once
// The VideoCore mailbox's property channel (BCM2835/BCM2711/BCM2712 `brcm,bcm2835-mbox`): the
// firmware answers what only it knows (board revision, serial number, the ARM's share of memory,
// the MAC address, clock rates). A request is a buffer of tags in RAM that the VideoCore reads
// and rewrites, handed over by its bus address through the mailbox registers; answers are
// distrusted (sizes and codes checked). Polled, with a bounded wait: used at boot.
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

class Bcm2835Mailbox {
public:
    // base: the registers (CPU address).
    static ktl::Result<Bcm2835Mailbox*> create(uintptr_t base);
    // The request buffer, whose bus address (as the VideoCore sees it: the bus's dma-ranges) the
    // caller works out from the device tree and passes to call().
    uint32_t* buffer() { return m_buffer; }
    static constexpr size_t kBufferWords = 64;

    // One request of a single tag: `words` of request values in, up to `words` of response out.
    // Returns the response's value length in bytes.
    ktl::Result<uint32_t> call(uint64_t buffer_bus_address, uint32_t tag, uint32_t* values, uint32_t words);

private:
    explicit Bcm2835Mailbox(uintptr_t base) : m_base(base) {}
    uintptr_t m_base;
    alignas(64) static uint32_t m_buffer[kBufferWords]; // a cache line apart from anything else
};

namespace mbox_tag {
constexpr uint32_t kFirmwareRevision = 0x00000001;
constexpr uint32_t kBoardRevision = 0x00010002;
constexpr uint32_t kMacAddress = 0x00010003;
constexpr uint32_t kBoardSerial = 0x00010004;
constexpr uint32_t kArmMemory = 0x00010005;
constexpr uint32_t kClockRate = 0x00030002; // value 0: clock id in, rate in Hz out
} // namespace mbox_tag

namespace mbox_clock {
constexpr uint32_t kEmmc = 1, kUart = 2, kArm = 3, kCore = 4;
} // namespace mbox_clock
