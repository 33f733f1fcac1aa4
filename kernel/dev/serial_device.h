#pragma once
// The console UART as a kernel object (capability type Device): tasks read and write the serial
// line through system calls. A reader blocks until bytes arrive; the receive interrupt copies
// them straight into the blocked reader's buffer.
#include <cstdint>

#include "../ipc/sync.h"

class SerialPort;

namespace dev {

class SerialDevice {
public:
    explicit SerialDevice(SerialPort* port) : m_port(port) {}
    // line_mode: return only at a newline (included) or a full buffer, so a protocol task wakes
    // once per message instead of once per byte. Not combinable with a deadline (a timeout
    // would lose the bytes gathered so far).
    ipc::Outcome read(void* buf, uint32_t cap, uint64_t deadline_ns, bool line_mode);
    int64_t write(const void* buf, uint32_t len);
    void on_rx(); // from the UART interrupt
    // Returns the blocked reader early with what it has so far (possibly nothing): how kernel
    // services wake a protocol task that also has other work (e.g. a tool call finished). With no
    // reader blocked, the next read returns at once instead.
    void interrupt_reader();

private:
    // Copies from the port into buf[filled..cap), stopping after a newline in line mode.
    uint32_t gather(uint8_t* buf, uint32_t filled, uint32_t cap, bool line_mode, bool& complete);

    SerialPort* m_port;
    sched::WaitQueue m_readers;
    uint32_t m_filled = 0; // bytes already copied to the first blocked reader
    bool m_line_mode = false;
    // interrupt_reader() found no reader blocked: the next read returns at once instead, so a
    // wake-up that comes while the reader is busy elsewhere is not lost.
    bool m_interrupt_pending = false;
};

} // namespace dev
