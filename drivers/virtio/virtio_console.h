#pragma once
// virtio console (VIRTIO 1.1, 5.3) over the MMIO transport, as a SerialPort: one port carries
// the line. With MULTIPORT (QEMU's virtio-serial-device offers it) the line is port kLinePort,
// a `virtserialport` whose host side is throttled rather than dropped when the host stops
// reading (QEMU drops output to a `virtconsole` port on a short write); without it, port 0.
//
// Why it exists: under QEMU every PL011 byte is a trapped register access and the emulated FIFO
// is drained through QEMU's main loop, ~5 us per byte; a virtio buffer of any size costs one
// exit. Input is held by the device until the driver opens the port, so early input waits in the
// host pipe instead of being lost.
//
// Receive: kBuffers device-writable buffers, consumed in the order the device filled them and
// returned as soon as read() empties them (the device holds back input while all are full).
// Transmit: kBuffers buffers, filled by write(), reclaimed lazily (no transmit interrupts);
// a writer that finds them all with the device waits (WFI) for the host to catch up: backpressure,
// never loss. One writer at a time (the line's owner).
#include <cstddef>
#include <cstdint>

#include <ktl/result.h>

#include "../serial_port.h"
#include "console_control.h"
#include "virtio_mmio.h"
#include "virtqueue.h"

namespace virtio {

class VirtioConsole final : public SerialPort {
public:
    static constexpr uint32_t kLinePort = 1;
    static constexpr uint16_t kBuffers = 16;
    static constexpr size_t kBufferBytes = 4096;
    static constexpr uint16_t kControlBuffers = 16;
    static constexpr size_t kControlBytes = 128; // header + a name; longer names are cut

    // Waits (on now_ns, a monotonic clock) up to kHandshakeNs for the device to announce the line
    // port: QEMU may answer the control messages from its main loop, later than the notification
    // (under load, much later), so a bound in polls would depend on the machine's speed.
    static constexpr uint64_t kHandshakeNs = 3'000'000'000ull;
    static ktl::Result<VirtioConsole*> create(const VirtioMmio& transport, DmaAllocator dma, uint64_t (*now_ns)());

    void write(const char* data, size_t len) override { write_impl(data, len, true); }
    void write_raw(const char* data, size_t len) override { write_impl(data, len, false); }
    void write_polled(const char* data, size_t len) override { write_impl(data, len, false); }
    void flush() override;
    size_t read(uint8_t* out, size_t len) override;
    const char* name() const override { return "virtio-console"; }
    Counters counters() const override { return { m_rx_bytes, m_tx_bytes, 0, m_tx_waits }; }

    static void irq_entry(void* self) { static_cast<VirtioConsole*>(self)->handle_irq(); }

    uintptr_t base() const { return m_dev.base(); }
    bool legacy() const { return m_dev.legacy(); }
    bool multiport() const { return m_multiport; }
    uint32_t port() const { return m_control.port(); }
    // Multiport: whether the device announced our port and its host side is connected.
    bool port_ready() const { return !m_multiport || m_control.added(); }
    bool host_open() const { return !m_multiport || m_control.host_open(); }
    const char* port_name() const { return m_control.name(); }


private:
    explicit VirtioConsole(uint32_t port) : m_control(port) {}
    void handle_irq();
    void service_control();
    void send_control(const console::Control& msg);
    void write_impl(const char* data, size_t len, bool crlf);
    // Fills and posts one free transmit buffer from data[pos..len); false when none is free.
    bool post_tx(const char* data, size_t len, size_t& pos, bool crlf);

    VirtioMmio m_dev;
    bool m_multiport = false;
    console::PortControl m_control;
    Virtqueue m_rx, m_tx, m_crx, m_ctx;
    uint16_t m_rx_index = 0, m_tx_index = 1;
    uintptr_t m_rx_buffers = 0, m_tx_buffers = 0, m_crx_buffers = 0, m_ctx_buffers = 0;
    // The receive buffer being read: id, bytes in it, bytes already taken (m_rx_id < 0: none).
    int32_t m_rx_id = -1;
    uint32_t m_rx_len = 0, m_rx_off = 0;
    uint64_t m_rx_bytes = 0, m_tx_bytes = 0, m_tx_waits = 0;
};

} // namespace virtio
