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
    ipc::Outcome read(void* buf, uint32_t cap, uint64_t deadline_ns);
    int64_t write(const void* buf, uint32_t len);
    void on_rx(); // from the UART interrupt

private:
    SerialPort* m_port;
    sched::WaitQueue m_readers;
};

} // namespace dev
