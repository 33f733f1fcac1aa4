#include "esr.h"

#include <ktl/format.h>

namespace aarch64 {

static const char* class_name(uint32_t ec) {
    switch (ec) {
    case 0x00: return "unknown reason";
    case 0x01: return "trapped WFI/WFE";
    case 0x07: return "FP/SIMD access trap";
    case 0x0e: return "illegal execution state";
    case 0x15: return "SVC from AArch64";
    case 0x16: return "HVC from AArch64";
    case 0x17: return "SMC from AArch64";
    case 0x18: return "trapped MSR/MRS/system instruction";
    case 0x20: return "instruction abort (lower EL)";
    case 0x21: return "instruction abort (same EL)";
    case 0x22: return "PC alignment fault";
    case 0x24: return "data abort (lower EL)";
    case 0x25: return "data abort (same EL)";
    case 0x26: return "SP alignment fault";
    case 0x2c: return "floating-point exception";
    case 0x2f: return "SError interrupt";
    case 0x30: return "breakpoint (lower EL)";
    case 0x31: return "breakpoint (same EL)";
    case 0x32: return "software step (lower EL)";
    case 0x33: return "software step (same EL)";
    case 0x34: return "watchpoint (lower EL)";
    case 0x35: return "watchpoint (same EL)";
    case 0x3c: return "BRK instruction";
    default: return "reserved/unhandled class";
    }
}

// DFSC/IFSC, ISS[5:0] (ARM DDI 0487 D17.2.37, "Data Abort" ISS encoding).
static void decode_fault_status(uint32_t fsc, EsrInfo& info) {
    uint32_t level = fsc & 3;
    switch (fsc >> 2) {
    case 0x0:
        info.fault = "address size fault";
        info.fault_level = static_cast<int>(level);
        return;
    case 0x1:
        info.fault = "translation fault";
        info.fault_level = static_cast<int>(level);
        return;
    case 0x2:
        info.fault = "access flag fault";
        info.fault_level = static_cast<int>(level);
        return;
    case 0x3:
        info.fault = "permission fault";
        info.fault_level = static_cast<int>(level);
        return;
    default: break;
    }
    switch (fsc) {
    case 0x10: info.fault = "synchronous external abort"; return;
    case 0x11: info.fault = "synchronous tag check fault"; return;
    case 0x18: info.fault = "synchronous parity/ECC error"; return;
    case 0x21: info.fault = "alignment fault"; return;
    case 0x30: info.fault = "TLB conflict abort"; return;
    case 0x31: info.fault = "unsupported atomic hardware update"; return;
    default: info.fault = "other fault status"; return;
    }
}

EsrInfo decode_esr(uint64_t esr) {
    EsrInfo info;
    info.ec = static_cast<uint32_t>((esr >> 26) & 0x3f);
    info.il = ((esr >> 25) & 1) != 0;
    info.iss = static_cast<uint32_t>(esr & 0x1ffffff);
    info.class_name = class_name(info.ec);
    bool data = info.ec == 0x24 || info.ec == 0x25;
    bool instr = info.ec == 0x20 || info.ec == 0x21;
    if (data || instr) {
        info.is_abort = true;
        decode_fault_status(info.iss & 0x3f, info);
        info.far_valid = ((info.iss >> 10) & 1) == 0;
        info.write = data && ((info.iss >> 6) & 1) != 0;
    }
    return info;
}

size_t format_esr(uint64_t esr, char* out, size_t cap) {
    EsrInfo info = decode_esr(esr);
    ktl::Formatter f(out, cap);
    f.append("EC 0x%02x %s", info.ec, info.class_name);
    if (info.is_abort) {
        f.append(": %s", info.fault);
        if (info.fault_level >= 0)
            f.append(", level %d", info.fault_level);
        if (info.ec == 0x24 || info.ec == 0x25)
            f.append(info.write ? ", write" : ", read");
        if (!info.far_valid)
            f.append(", FAR not valid");
    }
    f.append(" (ISS 0x%06x)", info.iss);
    return f.length();
}

} // namespace aarch64
