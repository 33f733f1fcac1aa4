#pragma once
// A byte-stream console device. The kernel console and (later) the MCP serial transport talk
// to a SerialPort; board files decide which UART backs it.
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

protected:
    ~SerialPort() = default;
};
