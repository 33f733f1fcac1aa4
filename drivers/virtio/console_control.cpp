#include "console_control.h"

namespace virtio::console {

void encode(const Control& msg, uint8_t out[kControlBytes]) {
    // Little-endian on the wire in both virtio eras (5.3.6.2 uses le32/le16; legacy devices are
    // guest-endian, and this guest is little-endian).
    for (int i = 0; i < 4; ++i)
        out[i] = static_cast<uint8_t>(msg.id >> (8 * i));
    out[4] = static_cast<uint8_t>(msg.event);
    out[5] = static_cast<uint8_t>(msg.event >> 8);
    out[6] = static_cast<uint8_t>(msg.value);
    out[7] = static_cast<uint8_t>(msg.value >> 8);
}

bool decode(const uint8_t* buf, size_t len, Control& out) {
    if (!buf || len < kControlBytes)
        return false;
    out.id = static_cast<uint32_t>(buf[0]) | static_cast<uint32_t>(buf[1]) << 8 | static_cast<uint32_t>(buf[2]) << 16 |
             static_cast<uint32_t>(buf[3]) << 24;
    out.event = static_cast<uint16_t>(buf[4] | buf[5] << 8);
    out.value = static_cast<uint16_t>(buf[6] | buf[7] << 8);
    return true;
}

size_t PortControl::on_message(const uint8_t* buf, size_t len, Control replies[kMaxReplies]) {
    Control msg;
    if (!decode(buf, len, msg) || msg.id != m_port) {
        ++m_ignored;
        return 0;
    }
    switch (msg.event) {
    case kDeviceAdd:
        // Ready, and open from our side at once: the device then lets host input through
        // (it holds it back while the guest side is closed, so nothing is lost before this).
        m_added = true;
        replies[0] = { m_port, kPortReady, 1 };
        replies[1] = { m_port, kPortOpen, 1 };
        return 2;
    case kDeviceRemove:
        m_added = false;
        m_host_open = false;
        m_console = false;
        m_name[0] = '\0';
        return 0;
    case kPortOpen: m_host_open = msg.value != 0; return 0;
    case kConsolePort: m_console = true; return 0;
    case kPortName: {
        // Printable ASCII only: the name ends up in logs and status output.
        size_t n = 0;
        for (size_t i = kControlBytes; i < len && n < kMaxName; ++i) {
            uint8_t c = buf[i];
            if (c == 0)
                break;
            m_name[n++] = (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
        }
        m_name[n] = '\0';
        return 0;
    }
    case kResize: return 0;
    default: ++m_ignored; return 0;
    }
}

} // namespace virtio::console
