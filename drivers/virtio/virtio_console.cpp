#include "virtio_console.h"

#include <kernel/arch/aarch64/cpu.h>

#include <cstring>
#include <new>

namespace virtio {
namespace {

constexpr uint64_t kFeatureMultiport = 1ull << 1; // 5.3.3 VIRTIO_CONSOLE_F_MULTIPORT
constexpr size_t kConfigMaxPorts = 4;             // 5.3.4: le32 max_nr_ports after cols, rows

alignas(VirtioConsole) uint8_t g_storage[sizeof(VirtioConsole)];
bool g_used = false;

size_t page_round(size_t bytes) { return (bytes + 4095) & ~size_t(4095); }

} // namespace

ktl::Result<VirtioConsole*> VirtioConsole::create(const VirtioMmio& transport, DmaAllocator dma, uint64_t (*now_ns)()) {
    if (transport.device_type() != DeviceType::Console || !dma || !now_ns)
        return ktl::Error::InvalidArgs;
    if (g_used)
        return ktl::Error::Full;
    VirtioMmio dev = transport;
    uint64_t required = dev.legacy() ? 0 : feature::kVersion1;
    auto features = dev.negotiate(kFeatureMultiport, required);
    if (!features)
        return features.error();
    bool multiport = (*features & kFeatureMultiport) != 0;
    if (multiport) {
        uint8_t raw[4];
        if (auto r = dev.read_config(kConfigMaxPorts, raw, sizeof raw); !r) {
            dev.fail();
            return r.error();
        }
        uint32_t max_ports = raw[0] | raw[1] << 8 | raw[2] << 16 | static_cast<uint32_t>(raw[3]) << 24;
        if (max_ports <= kLinePort) { // no room for our port: nothing to serve
            dev.fail();
            return ktl::Error::NotFound;
        }
    }
    auto* con = new (g_storage) VirtioConsole(multiport ? kLinePort : 0);
    con->m_dev = dev;
    con->m_multiport = multiport;
    con->m_rx_index = console::rx_queue(con->m_control.port());
    con->m_tx_index = console::tx_queue(con->m_control.port());

    auto setup = [&]() -> ktl::Result<void> {
        TRY_VOID(con->m_dev.queue_setup(con->m_rx, con->m_rx_index, kBuffers, dma));
        con->m_rx_buffers = TRY(dma(page_round(size_t(con->m_rx.size()) * kBufferBytes)));
        TRY_VOID(con->m_dev.queue_setup(con->m_tx, con->m_tx_index, kBuffers, dma));
        con->m_tx_buffers = TRY(dma(page_round(size_t(con->m_tx.size()) * kBufferBytes)));
        if (multiport) {
            TRY_VOID(con->m_dev.queue_setup(con->m_crx, console::kControlRxQueue, kControlBuffers, dma));
            con->m_crx_buffers = TRY(dma(page_round(size_t(con->m_crx.size()) * kControlBytes)));
            TRY_VOID(con->m_dev.queue_setup(con->m_ctx, console::kControlTxQueue, kControlBuffers, dma));
            con->m_ctx_buffers = TRY(dma(page_round(size_t(con->m_ctx.size()) * kControlBytes)));
        }
        return {};
    };
    if (auto r = setup(); !r) {
        dev.fail();
        return r.error();
    }
    // Buffers for the device before it may use the queues (3.1.1 step 7).
    for (uint16_t id = 0; id < con->m_rx.size(); ++id)
        (void)con->m_rx.post(id, con->m_rx_buffers + id * kBufferBytes, kBufferBytes, true);
    con->m_rx.publish();
    con->m_tx.suppress_interrupts();
    if (multiport) {
        for (uint16_t id = 0; id < con->m_crx.size(); ++id)
            (void)con->m_crx.post(id, con->m_crx_buffers + id * kControlBytes, kControlBytes, true);
        con->m_crx.publish();
        con->m_ctx.suppress_interrupts();
    }
    con->m_dev.driver_ok();
    con->m_dev.notify(con->m_rx_index);
    g_used = true;
    if (multiport) {
        con->m_dev.notify(console::kControlRxQueue);
        con->send_control({ 0, console::kDeviceReady, 1 });
        // Until the port is announced (our replies then go out at once); the host side need not
        // be open (nobody may be connected yet): the interrupt handles that later.
        const uint64_t deadline = now_ns() + kHandshakeNs;
        while (!con->m_control.added() && now_ns() < deadline)
            con->service_control();
    }
    return con;
}

void VirtioConsole::send_control(const console::Control& msg) {
    Virtqueue::Completion c;
    for (uint16_t n = 0; n < m_ctx.size() && m_ctx.pop(c); ++n) {}
    for (uint16_t id = 0; id < m_ctx.size(); ++id) {
        if (m_ctx.held_by_device(id))
            continue;
        uintptr_t buf = m_ctx_buffers + id * kControlBytes;
        console::encode(msg, reinterpret_cast<uint8_t*>(buf));
        if (!m_ctx.post(id, buf, console::kControlBytes, false))
            return;
        m_ctx.publish();
        m_dev.notify(console::kControlTxQueue);
        return;
    }
    // All control buffers with the device: it is not consuming them; the message is lost and the
    // port stays closed (at boot: the line then stays on the UART, with a warning).
}

void VirtioConsole::service_control() {
    if (!m_multiport)
        return;
    Virtqueue::Completion c;
    bool reposted = false;
    for (uint16_t n = 0; n < m_crx.size() && m_crx.pop(c); ++n) {
        uintptr_t buf = m_crx_buffers + c.id * kControlBytes;
        console::Control replies[console::PortControl::kMaxReplies];
        size_t count = m_control.on_message(reinterpret_cast<const uint8_t*>(buf), c.len, replies);
        for (size_t i = 0; i < count; ++i)
            send_control(replies[i]);
        (void)m_crx.post(c.id, buf, kControlBytes, true);
        reposted = true;
    }
    if (reposted) {
        m_crx.publish();
        m_dev.notify(console::kControlRxQueue);
    }
}

void VirtioConsole::handle_irq() {
    m_dev.take_interrupt();
    service_control();
    if (m_rx_id >= 0 || m_rx.has_completions())
        notify_rx();
}

size_t VirtioConsole::read(uint8_t* out, size_t len) {
    arch::IrqGuard guard;
    size_t n = 0;
    bool reposted = false;
    // Each round copies at least one byte or retires one buffer: bounded by len plus the ring.
    for (size_t rounds = 0; n < len && rounds < len + 2u * m_rx.size(); ++rounds) {
        if (m_rx_id < 0) {
            Virtqueue::Completion c;
            if (!m_rx.pop(c))
                break;
            m_rx_id = c.id;
            m_rx_len = c.len;
            m_rx_off = 0;
        }
        size_t take = m_rx_len - m_rx_off;
        if (take > len - n)
            take = len - n;
        memcpy(out + n, reinterpret_cast<const uint8_t*>(m_rx_buffers + m_rx_id * kBufferBytes + m_rx_off), take);
        n += take;
        m_rx_off += static_cast<uint32_t>(take);
        if (m_rx_off == m_rx_len) {
            auto id = static_cast<uint16_t>(m_rx_id);
            (void)m_rx.post(id, m_rx_buffers + id * kBufferBytes, kBufferBytes, true);
            m_rx_id = -1;
            reposted = true;
        }
    }
    if (reposted) {
        m_rx.publish();
        m_dev.notify(m_rx_index);
    }
    m_rx_bytes += n;
    return n;
}

bool VirtioConsole::post_tx(const char* data, size_t len, size_t& pos, bool crlf) {
    Virtqueue::Completion c;
    for (uint16_t n = 0; n < m_tx.size() && m_tx.pop(c); ++n) {}
    for (uint16_t id = 0; id < m_tx.size(); ++id) {
        if (m_tx.held_by_device(id))
            continue;
        auto* buf = reinterpret_cast<char*>(m_tx_buffers + id * kBufferBytes);
        size_t used = 0;
        if (!crlf) {
            used = len - pos < kBufferBytes ? len - pos : kBufferBytes;
            memcpy(buf, data + pos, used);
            pos += used;
        } else {
            while (pos < len && used < kBufferBytes) {
                if (data[pos] == '\n') {
                    if (used + 2 > kBufferBytes)
                        break;
                    buf[used++] = '\r';
                }
                buf[used++] = data[pos++];
            }
        }
        (void)m_tx.post(id, reinterpret_cast<uintptr_t>(buf), static_cast<uint32_t>(used), false);
        m_tx.publish();
        m_dev.notify(m_tx_index);
        m_tx_bytes += used;
        return true;
    }
    return false;
}

void VirtioConsole::write_impl(const char* data, size_t len, bool crlf) {
    size_t pos = 0;
    while (pos < len) {
        {
            arch::IrqGuard guard;
            if (m_tx.broken())
                return; // a device that corrupts its ring gets nothing more
            if (post_tx(data, len, pos, crlf))
                continue;
            ++m_tx_waits;
        }
        // Every buffer is with the device: the host is not reading. Wait for an interrupt (at the
        // latest the next timer tick) and look again; the scheduler may run others meanwhile.
        asm volatile("wfi");
    }
}

void VirtioConsole::flush() {
    for (int spins = 0; spins < 1000000; ++spins) {
        arch::IrqGuard guard;
        Virtqueue::Completion c;
        for (uint16_t n = 0; n < m_tx.size() && m_tx.pop(c); ++n) {}
        bool busy = false;
        for (uint16_t id = 0; id < m_tx.size() && !busy; ++id)
            busy = m_tx.held_by_device(id);
        if (!busy || m_tx.broken())
            return;
    }
}

} // namespace virtio
