#include "serial_device.h"

#include "../arch/aarch64/cpu.h"
#include "../sched/scheduler.h"

#include <drivers/serial_port.h>

namespace dev {

uint32_t SerialDevice::gather(uint8_t* buf, uint32_t filled, uint32_t cap, bool line_mode, bool& complete) {
    complete = false;
    if (!line_mode) {
        filled += static_cast<uint32_t>(m_port->read(buf + filled, cap - filled));
        complete = filled > 0;
        return filled;
    }
    while (filled < cap) {
        uint8_t c;
        if (m_port->read(&c, 1) == 0)
            return filled;
        buf[filled++] = c;
        if (c == '\n') {
            complete = true;
            return filled;
        }
    }
    complete = true; // full
    return filled;
}

ipc::Outcome SerialDevice::read(void* buf, uint32_t cap, uint64_t deadline_ns, bool line_mode) {
    if (line_mode && deadline_ns != 0)
        return { false, -static_cast<int64_t>(ktl::Error::InvalidArgs) };
    if (!m_readers.empty())
        return { false, -static_cast<int64_t>(ktl::Error::WouldBlock) }; // one reader at a time
    bool complete;
    uint32_t n = gather(static_cast<uint8_t*>(buf), 0, cap, line_mode, complete);
    if (complete || m_interrupt_pending) {
        m_interrupt_pending = false;
        return { false, static_cast<int64_t>(n) };
    }
    sched::Task* self = sched::current();
    self->wait_buf = buf;
    self->wait_len = cap;
    m_filled = n;
    m_line_mode = line_mode;
    sched::block_current(m_readers, deadline_ns);
    return { true, 0 };
}

int64_t SerialDevice::write(const void* buf, uint32_t len) {
    m_port->write_raw(static_cast<const char*>(buf), len);
    return len;
}

void SerialDevice::on_rx() {
    sched::Task* reader = m_readers.head;
    if (!reader)
        return;
    bool complete;
    m_filled = gather(static_cast<uint8_t*>(reader->wait_buf), m_filled, static_cast<uint32_t>(reader->wait_len),
                      m_line_mode, complete);
    if (complete) {
        sched::wake_one(m_readers, static_cast<int64_t>(m_filled));
        m_filled = 0;
    }
}

void SerialDevice::interrupt_reader() {
    arch::IrqGuard guard; // on_rx runs in the interrupt and touches the same state
    if (!m_readers.head) {
        m_interrupt_pending = true;
        return;
    }
    sched::wake_one(m_readers, static_cast<int64_t>(m_filled));
    m_filled = 0;
}

} // namespace dev
