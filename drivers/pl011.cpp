#include "pl011.h"
#include "generic_timer.h"

#include "mmio.h"

#include <kernel/arch/aarch64/cpu.h>

#include <new>

namespace {

// Register offsets and bits (ARM DDI 0183G, 3.2 "Summary of registers").
constexpr uintptr_t DR = 0x00;
constexpr uintptr_t FR = 0x18;
constexpr uintptr_t IBRD = 0x24;
constexpr uintptr_t FBRD = 0x28;
constexpr uintptr_t LCRH = 0x2c;
constexpr uintptr_t CR = 0x30;
constexpr uintptr_t IFLS = 0x34;
constexpr uintptr_t IMSC = 0x38;
constexpr uintptr_t MIS = 0x40;
constexpr uintptr_t ICR = 0x44;

constexpr uint32_t FR_BUSY = 1u << 3;
constexpr uint32_t FR_RXFE = 1u << 4;
constexpr uint32_t FR_TXFF = 1u << 5;
constexpr uint32_t LCRH_FEN = 1u << 4;
constexpr uint32_t LCRH_WLEN8 = 3u << 5;
constexpr uint32_t CR_UARTEN = 1u << 0;
constexpr uint32_t CR_TXE = 1u << 8;
constexpr uint32_t CR_RXE = 1u << 9;
constexpr uint32_t INT_RX = 1u << 4;
constexpr uint32_t INT_TX = 1u << 5;
constexpr uint32_t INT_RT = 1u << 6;
constexpr uint32_t INT_ERRORS = 0xf << 7; // framing, parity, break, overrun
constexpr uint32_t INT_OVERRUN = 1u << 10;

constexpr size_t kMaxInstances = 2;
alignas(Pl011) unsigned char g_storage[kMaxInstances][sizeof(Pl011)];
size_t g_used = 0;

} // namespace

ktl::Result<Pl011*> Pl011::create(uintptr_t base, uint32_t clock_hz, uint32_t baud) {
    if (base == 0)
        return ktl::Error::InvalidArgs;
    if (g_used == kMaxInstances)
        return ktl::Error::Full;
    auto* uart = new (g_storage[g_used++]) Pl011();
    uart->m_base = base;
    uart->init_hardware(clock_hz, baud);
    return uart;
}

void Pl011::init_hardware(uint32_t clock_hz, uint32_t baud) {
    // Wait for any firmware output to drain before reconfiguring (DDI 0183G 3.3.8 note).
    for (int i = 0; i < 100000 && (mmio::read32(m_base + FR) & FR_BUSY); ++i) {}
    mmio::write32(m_base + CR, 0);
    mmio::write32(m_base + IMSC, 0);
    mmio::write32(m_base + ICR, 0x7ff);
    if (clock_hz != 0 && baud != 0) {
        // Divisor = clock / (16 * baud) as 16.6 fixed point (latched by the LCRH write below).
        uint32_t div64 = static_cast<uint32_t>((static_cast<uint64_t>(clock_hz) * 4 + baud / 2) / baud);
        mmio::write32(m_base + IBRD, div64 >> 6);
        mmio::write32(m_base + FBRD, div64 & 0x3f);
    }
    // FIFO on: without it every received byte costs an interrupt (and QEMU hands over its input
    // one byte at a time). Switching it flushes the receive FIFO, and bytes may already be
    // arriving (an MCP stdio client writes at once).
    uint32_t lcrh = LCRH_WLEN8 | (mmio::read32(m_base + LCRH) & LCRH_FEN);
    if (!(lcrh & LCRH_FEN) && receiver_settled())
        lcrh |= LCRH_FEN; // the switch happened in receiver_settled()
    mmio::write32(m_base + LCRH, lcrh);
    mmio::write32(m_base + IFLS, 0); // RX and TX interrupts at 1/8 full: low latency for a console
    mmio::write32(m_base + CR, CR_UARTEN | CR_TXE | CR_RXE);
}

// Drains the receiver and switches the FIFO on at an instant when nothing can be lost: the
// receiver is empty and the emulator has nothing more to hand over. QEMU delivers input from
// its main thread, which needs the lock that every register access takes: polling the status
// register back to back starves it (so "empty while polling" proves nothing, and the starved
// thread gets in right after the last poll). So look only every kGapNs, leaving the registers
// alone in between; once the receiver has stayed empty for kSettleNs, switch in the very next
// access. False (FIFO left off: slower, never lossy) when input keeps coming for the whole
// budget or the ring fills.
bool Pl011::receiver_settled() {
    constexpr uint64_t kGapNs = 20'000, kSettleNs = 1'000'000, kBudgetNs = 100'000'000;
    if (GenericTimer::frequency() == 0)
        return false;
    uint64_t start = GenericTimer::now_ns(), idle_since = start;
    for (uint64_t now = start; now - start < kBudgetNs; now = GenericTimer::now_ns()) {
        if (!(mmio::read32(m_base + FR) & FR_RXFE)) {
            if (m_rx.full())
                return false;
            drain_rx(1); // one byte, then leave the registers alone again
            idle_since = GenericTimer::now_ns();
        } else if (now - idle_since >= kSettleNs) {
            mmio::write32(m_base + LCRH, LCRH_WLEN8 | LCRH_FEN);
            return true;
        }
        for (uint64_t until = GenericTimer::now_ns() + kGapNs; GenericTimer::now_ns() < until;) {}
    }
    return false;
}

// Moves what the receiver holds into the ring, at most `limit` bytes, and never more than the
// ring takes: what stays in the FIFO holds the sender back (an emulated UART stops reading its
// input; a real one's flow control or overrun counter takes over) instead of being dropped.
// True when the receiver still holds bytes.
bool Pl011::drain_rx(size_t limit) {
    for (size_t i = 0; i < limit; ++i) {
        if (mmio::read32(m_base + FR) & FR_RXFE)
            return false;
        if (m_rx.full())
            return true;
        m_rx.push(static_cast<uint8_t>(mmio::read32(m_base + DR) & 0xff));
        ++m_rx_bytes;
    }
    return !(mmio::read32(m_base + FR) & FR_RXFE);
}

// Receive interrupts stay masked while the ring is full; read() turns them back on once the
// ring has room and the receiver is empty. The interrupt is acknowledged before the final drain,
// so a byte landing after it raises it again and is seen as soon as it is unmasked.
void Pl011::update_rx_throttle() {
    if (!m_irq_mode)
        return;
    mmio::write32(m_base + ICR, INT_RX | INT_RT);
    bool pending = drain_rx(m_rx.capacity());
    uint32_t imsc = mmio::read32(m_base + IMSC);
    m_rx_throttled = pending;
    if (pending) {
        ++m_rx_throttles;
        mmio::write32(m_base + IMSC, imsc & ~(INT_RX | INT_RT));
    } else {
        mmio::write32(m_base + IMSC, imsc | INT_RX | INT_RT);
    }
}

void Pl011::put_polled(uint8_t c) {
    for (uint32_t spins = 0; mmio::read32(m_base + FR) & FR_TXFF; ++spins) {
        if (spins > 10000000)
            return; // a wedged UART must not hang a panic forever
    }
    mmio::write32(m_base + DR, c);
}

void Pl011::write_polled(const char* data, size_t len) {
    for (size_t i = 0; i < len; ++i) {
        if (data[i] == '\n')
            put_polled('\r');
        put_polled(static_cast<uint8_t>(data[i]));
    }
}

void Pl011::fill_tx_fifo() {
    uint8_t c;
    while (!(mmio::read32(m_base + FR) & FR_TXFF) && m_tx.pop(c))
        mmio::write32(m_base + DR, c);
    uint32_t imsc = mmio::read32(m_base + IMSC);
    if (m_tx.empty())
        mmio::write32(m_base + IMSC, imsc & ~INT_TX);
    else
        mmio::write32(m_base + IMSC, imsc | INT_TX);
}

void Pl011::write_impl(const char* data, size_t len, bool crlf) {
    if (!m_irq_mode) {
        if (crlf) {
            write_polled(data, len);
        } else {
            for (size_t i = 0; i < len; ++i)
                put_polled(static_cast<uint8_t>(data[i]));
        }
        return;
    }
    arch::IrqGuard guard;
    m_tx_bytes += len;
    for (size_t i = 0; i < len; ++i) {
        bool expand = crlf && data[i] == '\n';
        uint8_t bytes[2] = { '\r', static_cast<uint8_t>(data[i]) };
        const uint8_t* p = expand ? bytes : bytes + 1;
        size_t n = expand ? 2 : 1;
        for (size_t k = 0; k < n; ++k) {
            while (!m_tx.push(p[k])) {
                // Ring full: move bytes to the FIFO by polling rather than drop them.
                ++m_tx_waits;
                uint8_t c;
                if (m_tx.pop(c))
                    put_polled(c);
            }
        }
    }
    fill_tx_fifo();
}

void Pl011::flush() {
    arch::IrqGuard guard;
    uint8_t c;
    while (m_tx.pop(c))
        put_polled(c);
    uint32_t imsc = mmio::read32(m_base + IMSC);
    mmio::write32(m_base + IMSC, imsc & ~INT_TX);
    for (int i = 0; i < 1000000 && (mmio::read32(m_base + FR) & FR_BUSY); ++i) {}
}

size_t Pl011::read(uint8_t* out, size_t len) {
    arch::IrqGuard guard;
    size_t n = m_rx.read(out, len);
    if (m_rx_throttled && n != 0)
        update_rx_throttle();
    return n;
}

void Pl011::enable_interrupts() {
    arch::IrqGuard guard;
    m_irq_mode = true;
    // Bytes already waiting raised their interrupt while it was masked; take them now, since
    // acknowledging that interrupt without reading them would leave them (and, with the FIFO
    // off, everything behind them) stuck.
    mmio::write32(m_base + ICR, INT_ERRORS);
    update_rx_throttle();
    fill_tx_fifo();
}

void Pl011::handle_irq() {
    uint32_t mis = mmio::read32(m_base + MIS);
    if (mis & (INT_RX | INT_RT)) {
        ++m_rx_irqs;
        update_rx_throttle();
        if (!m_rx.empty())
            notify_rx();
    }
    if (mis & INT_TX) {
        ++m_tx_irqs;
        mmio::write32(m_base + ICR, INT_TX);
        fill_tx_fifo();
    }
    if (mis & INT_ERRORS) {
        if (mis & INT_OVERRUN)
            ++m_rx_dropped; // the hardware FIFO overflowed: at least one byte is gone
        mmio::write32(m_base + ICR, INT_ERRORS);
    }
}
