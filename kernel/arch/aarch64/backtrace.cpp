#include "backtrace.h"

#include "mmu.h"

namespace arch {

size_t backtrace_from(uint64_t fp, uint64_t* pcs, size_t max) {
    size_t n = 0;
    while (n < max && fp != 0 && (fp & 15) == 0 && mmu::is_mapped_ram(fp) && mmu::is_mapped(fp) &&
           mmu::is_mapped(fp + 15)) {
        auto* record = reinterpret_cast<const uint64_t*>(fp);
        uint64_t next = record[0];
        uint64_t lr = record[1];
        if (lr == 0)
            break;
        pcs[n++] = lr;
        if (next <= fp) // stacks grow down: callers' frames are at higher addresses
            break;
        fp = next;
    }
    return n;
}

} // namespace arch
