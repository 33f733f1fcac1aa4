#include "revision.h"

#include <ktl/format.h>

namespace rpi {

Revision decode(uint32_t code) {
    Revision r;
    r.new_style = (code >> 23) & 1;
    if (!r.new_style)
        return r;
    r.type = (code >> 4) & 0xff;
    r.processor = (code >> 12) & 0xf;
    const uint32_t mem = (code >> 20) & 0x7;
    r.memory_mib = 256u << mem;
    r.board_minor = code & 0xf;
    return r;
}

const char* model_name(uint32_t type) {
    switch (type) {
    case 0x08: return "3 Model B";
    case 0x0d: return "3 Model B+";
    case 0x0e: return "3 Model A+";
    case 0x10: return "Compute Module 3+";
    case 0x11: return "4 Model B";
    case 0x12: return "Zero 2 W";
    case 0x13: return "400";
    case 0x14: return "Compute Module 4";
    case 0x15: return "Compute Module 4S";
    case 0x17: return "5 Model B";
    case 0x18: return "Compute Module 5";
    case 0x19: return "500";
    case 0x1a: return "Compute Module 5 Lite";
    default: return "unknown";
    }
}

size_t describe(uint32_t code, char* out, size_t cap) {
    ktl::Formatter f(out, cap);
    const Revision r = decode(code);
    if (!r.new_style) {
        f.append("Raspberry Pi (old-style revision 0x%x)", code);
    } else {
        f.append("Raspberry Pi %s rev 1.%u, ", model_name(r.type), r.board_minor);
        if (r.memory_mib >= 1024)
            f.append("%u GiB", r.memory_mib / 1024);
        else
            f.append("%u MiB", r.memory_mib);
    }
    return f.length();
}

} // namespace rpi
