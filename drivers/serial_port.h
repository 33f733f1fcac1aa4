#pragma once
// A byte-stream line. The kernel console and the MCP serial transport talk to a SerialPort: the
// PL011 (every board) or, under QEMU, a virtio console port (far cheaper per byte: one exit per
// buffer instead of one per character).
#include <cstddef>
#include <cstdint>

class SerialPort {
public:
    // Queues bytes for interrupt-driven transmission; blocks (polling the FIFO) only when the
    // transmit ring is full, so nothing is dropped.
    virtual void write(const char* data, size_t len) = 0;
    // Like write() but byte-exact: no LF -> CRLF translation (protocol traffic).
    virtual void write_raw(const char* data, size_t len) = 0;
    // Writes straight to the FIFO, bypassing the ring: for the panic path and early boot.
    virtual void write_polled(const char* data, size_t len) = 0;
    // Drains the transmit ring synchronously (before power-off or a panic dump).
    virtual void flush() = 0;
    // Copies received bytes out of the receive ring; never blocks.
    virtual size_t read(uint8_t* out, size_t len) = 0;
    virtual const char* name() const = 0;

    // What the line has moved, for status output: bytes each way, bytes lost on receive (a
    // hardware overrun), and how often a writer had to wait for the other end.
    struct Counters {
        uint64_t rx_bytes = 0, tx_bytes = 0, rx_dropped = 0, tx_waits = 0;
    };
    virtual Counters counters() const = 0;

    // Called from the receive interrupt once bytes are ready to read() (wakes the reader).
    void set_rx_notify(void (*fn)(void*), void* context) {
        m_rx_notify = fn;
        m_rx_context = context;
    }

protected:
    ~SerialPort() = default;
    void notify_rx() {
        if (m_rx_notify)
            m_rx_notify(m_rx_context);
    }

private:
    void (*m_rx_notify)(void*) = nullptr;
    void* m_rx_context = nullptr;
};
