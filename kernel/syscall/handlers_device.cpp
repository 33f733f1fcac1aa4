// Device system calls: the serial line.
#include "../dev/serial_device.h"
#include "buffers.h"
#include "handlers.h"

namespace handlers {

int64_t serial_read(arch::TrapFrame& f, const kcap::Resolved& o) {
    uint64_t cap = f.x[2];
    if (cap == 0 || cap > 65536 || !buffers::writable(f.x[1], cap))
        return -static_cast<int64_t>(ktl::Error::InvalidArgs);
    return finish(static_cast<dev::SerialDevice*>(o.object)
                      ->read(reinterpret_cast<void*>(f.x[1]), static_cast<uint32_t>(cap), deadline_after(f.x[3]),
                             (f.x[4] & 1) != 0));
}

int64_t serial_write(arch::TrapFrame& f, const kcap::Resolved& o) {
    uint64_t len = f.x[2];
    if (len > 1u << 20 || (len && !buffers::readable(f.x[1], len)))
        return -static_cast<int64_t>(ktl::Error::InvalidArgs);
    return static_cast<dev::SerialDevice*>(o.object)->write(reinterpret_cast<const void*>(f.x[1]), static_cast<uint32_t>(len));
}

} // namespace handlers
