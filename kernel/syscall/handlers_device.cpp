// Device system calls: the serial line.
#include "../dev/serial_device.h"
#include "buffers.h"
#include "handlers.h"

namespace handlers {

int64_t serial_read(const kcap::Resolved& o, Cap, void* buffer, uint64_t cap, uint64_t timeout_ns, uint64_t flags) {
    if (cap == 0 || cap > 65536 || !buffers::writable(buffer, cap))
        return -static_cast<int64_t>(ktl::Error::InvalidArgs);
    return finish(static_cast<dev::SerialDevice*>(o.object)->read(buffer, static_cast<uint32_t>(cap),
                                                                  deadline_after(timeout_ns), (flags & 1) != 0));
}

int64_t serial_write(const kcap::Resolved& o, Cap, const void* data, uint64_t len) {
    if (len > 1u << 20 || (len && !buffers::readable(data, len)))
        return -static_cast<int64_t>(ktl::Error::InvalidArgs);
    return static_cast<dev::SerialDevice*>(o.object)->write(data, static_cast<uint32_t>(len));
}

} // namespace handlers
