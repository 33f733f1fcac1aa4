#include "serial_device.h"

#include "../sched/scheduler.h"

#include <drivers/serial_port.h>

namespace dev {

ipc::Outcome SerialDevice::read(void* buf, uint32_t cap, uint64_t deadline_ns) {
    size_t n = m_port->read(static_cast<uint8_t*>(buf), cap);
    if (n > 0)
        return { false, static_cast<int64_t>(n) };
    sched::Task* self = sched::current();
    self->wait_buf = buf;
    self->wait_len = cap;
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
    size_t n = m_port->read(static_cast<uint8_t*>(reader->wait_buf), reader->wait_len);
    if (n > 0)
        sched::wake_one(m_readers, static_cast<int64_t>(n));
}

} // namespace dev
