#include "firmware_json.h"

#include <cstdio>

namespace mcpd {

void write_firmware(json::Writer& w, const abi::FirmwareInfo& fw) {
    if (!fw.present)
        return;
    char revision[12], serial[20], mac[18];
    std::snprintf(revision, sizeof revision, "0x%06x", fw.board_revision);
    std::snprintf(serial, sizeof serial, "%016llx", static_cast<unsigned long long>(fw.serial));
    w.key("firmware").begin_object();
    w.key("board").string(fw.board).key("revision").string(revision).key("serial").string(serial);
    w.key("firmware_revision").number(fw.firmware_revision);
    w.key("arm_memory_bytes").number(fw.arm_memory_size);
    if (fw.has_mac) {
        std::snprintf(mac, sizeof mac, "%02x:%02x:%02x:%02x:%02x:%02x", fw.mac[0], fw.mac[1], fw.mac[2], fw.mac[3],
                      fw.mac[4], fw.mac[5]);
        w.key("mac").string(mac);
    }
    w.key("clocks_hz").begin_object().key("arm").number(fw.arm_hz).key("core").number(fw.core_hz);
    w.key("uart").number(fw.uart_hz).key("emmc").number(fw.emmc_hz).end_object();
    w.end_object();
}

} // namespace mcpd
