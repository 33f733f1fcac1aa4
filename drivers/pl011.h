#pragma once
// ARM PrimeCell UART PL011 (ARM DDI 0183G). Interrupt-driven receive and transmit over two
// rings; polled output remains available for early boot and panics.
#include "serial_port.h"

#include <ktl/result.h>
#include <ktl/ring_buffer.h>

class Pl011 final : public SerialPort {
public:
    // clock_hz = 0 keeps the firmware's baud-rate divisors (QEMU ignores them anyway).
    static ktl::Result<Pl011*> create(uintptr_t base, uint32_t clock_hz, uint32_t baud);

    void write(const char* data, size_t len) override { write_impl(data, len, true); }
    void write_raw(const char* data, size_t len) override { write_impl(data, len, false); }
    void write_polled(const char* data, size_t len) override;
    void flush() override;
    size_t read(uint8_t* out, size_t len) override;
    const char* name() const override { return "pl011"; }
    Counters counters() const override { return { m_rx_bytes, m_tx_bytes, m_rx_dropped, m_tx_waits }; }

    // Switches from polled to interrupt-driven operation; the caller has routed the IRQ here.
    void enable_interrupts();
    void handle_irq();
    static void irq_entry(void* self) { static_cast<Pl011*>(self)->handle_irq(); }

    uintptr_t base() const { return m_base; }
    uint64_t rx_irqs() const { return m_rx_irqs; }
    uint64_t tx_irqs() const { return m_tx_irqs; }
    uint64_t rx_dropped() const { return m_rx_dropped; }
    uint64_t rx_throttles() const { return m_rx_throttles; }
    uint64_t rx_bytes() const { return m_rx_bytes; }

private:
    Pl011() = default;
    void init_hardware(uint32_t clock_hz, uint32_t baud);
    void write_impl(const char* data, size_t len, bool crlf);
    void fill_tx_fifo();
    bool drain_rx(size_t limit);
    void update_rx_throttle();
    bool receiver_settled();
    void put_polled(uint8_t c);

    uintptr_t m_base = 0;
    bool m_irq_mode = false;
    ktl::RingBuffer<8192> m_tx;
    ktl::RingBuffer<4096> m_rx;
    uint64_t m_rx_irqs = 0;
    uint64_t m_tx_irqs = 0;
    uint64_t m_rx_dropped = 0;
    uint64_t m_rx_throttles = 0;
    bool m_rx_throttled = false;
    uint64_t m_rx_bytes = 0;
    uint64_t m_tx_bytes = 0;
    uint64_t m_tx_waits = 0;
};
