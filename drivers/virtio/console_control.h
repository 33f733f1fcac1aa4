#pragma once
// The control channel of a multiport virtio console (VIRTIO 1.1, 5.3.6.2): 8-byte messages
// (le32 port id, le16 event, le16 value, then a name for PORT_NAME) on control queues 2 and 3.
// PortControl is the driver's side of the handshake for the one port it serves; it touches no
// hardware, so the host tests drive it with the messages a device would send.
#include <cstddef>
#include <cstdint>

namespace virtio::console {

// 5.3.6.2: control events.
enum Event : uint16_t {
    kDeviceReady = 0,  // driver -> device: ready for PORT_ADD (value 1) or failed (0)
    kDeviceAdd = 1,    // device -> driver: a port exists (PORT_ADD)
    kDeviceRemove = 2, // device -> driver: the port is gone
    kPortReady = 3,    // driver -> device: the port is set up (1) or not (0)
    kConsolePort = 4,  // device -> driver: the port is a console
    kResize = 5,       // device -> driver: console size
    kPortOpen = 6,     // both ways: this side opened (1) or closed (0) the port
    kPortName = 7,     // device -> driver: the port's name follows the header
};

struct Control {
    uint32_t id = 0;
    uint16_t event = 0;
    uint16_t value = 0;
};
constexpr size_t kControlBytes = 8;

void encode(const Control& msg, uint8_t out[kControlBytes]);
// False for a message shorter than its header.
bool decode(const uint8_t* buf, size_t len, Control& out);

// 5.3.2: queue indices. Port 0 uses queues 0 and 1, the control channel 2 and 3, and port n >= 1
// uses 2n+2 (receive) and 2n+3 (transmit).
constexpr uint16_t rx_queue(uint32_t port) { return static_cast<uint16_t>(port == 0 ? 0 : 2 * port + 2); }
constexpr uint16_t tx_queue(uint32_t port) { return static_cast<uint16_t>(rx_queue(port) + 1); }
constexpr uint16_t kControlRxQueue = 2;
constexpr uint16_t kControlTxQueue = 3;

class PortControl {
public:
    static constexpr size_t kMaxName = 64; // longer names are cut (only used for diagnostics)
    static constexpr size_t kMaxReplies = 2;

    explicit PortControl(uint32_t port) : m_port(port) {}

    // One message from the device. Writes what the driver must answer into `replies` and returns
    // how many; messages about other ports, unknown events and short messages are counted and
    // otherwise ignored (the device is not trusted to stick to the protocol).
    size_t on_message(const uint8_t* buf, size_t len, Control replies[kMaxReplies]);

    uint32_t port() const { return m_port; }
    bool added() const { return m_added; }         // the device announced our port
    bool host_open() const { return m_host_open; } // the host side is connected
    bool console() const { return m_console; }
    const char* name() const { return m_name; }
    uint64_t ignored() const { return m_ignored; }

private:
    uint32_t m_port;
    bool m_added = false;
    bool m_host_open = false;
    bool m_console = false;
    char m_name[kMaxName + 1] = {};
    uint64_t m_ignored = 0;
};

} // namespace virtio::console
