#pragma once
// A network interface as the kernel's net task drives it, whatever the device (virtio-net on
// QEMU, the Pi 4's GENET): frames in through receive(), out through one transmit buffer at a
// time, and an interrupt path that only wakes the owner. One owner (the net task): no locks.
#include <cstddef>
#include <cstdint>

class Nic {
public:
    // Each received frame (Ethernet header on, no FCS) is handed to fn, then its buffer goes back
    // to the device; at most `budget` completions are taken, malformed ones included.
    using RxFn = void (*)(void* ctx, const uint8_t* frame, size_t len);
    virtual size_t receive(RxFn fn, void* ctx, size_t budget) = 0;
    // A transmit buffer for one frame of up to `capacity` bytes, or nullptr when every buffer is
    // with the device; tx_submit(len) sends it (0: release unsent). Nothing else in between.
    virtual uint8_t* tx_acquire(size_t& capacity) = 0;
    virtual void tx_submit(size_t len) = 0;
    virtual size_t reclaim_tx() = 0;
    // Who the interrupt path wakes (the owner's event).
    void set_notify(void (*fn)(void*), void* ctx) {
        m_notify = fn;
        m_notify_ctx = ctx;
    }
    virtual const uint8_t* mac() const = 0;
    virtual bool link_up() const { return true; }
    // Called by the owner on every round (now: its monotonic clock): link polling and the like.
    // Returns the milliseconds until it wants to be called again (kNever: only on events).
    static constexpr uint32_t kNever = 0xffffffffu;
    virtual uint32_t maintain(uint64_t now_ms) {
        (void)now_ms;
        return kNever;
    }
    struct Counters {
        uint64_t irqs, rx_frames, rx_dropped, tx_frames;
    };
    virtual Counters counters() const = 0;

protected:
    ~Nic() = default;
    void notify() {
        if (m_notify)
            m_notify(m_notify_ctx);
    }

private:
    void (*m_notify)(void*) = nullptr;
    void* m_notify_ctx = nullptr;
};
