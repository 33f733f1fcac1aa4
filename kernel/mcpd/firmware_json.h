#pragma once
// What the Pi's VideoCore firmware reported at boot (system_info's FirmwareInfo), as the JSON
// object kernel_info and kernel://status both carry under "firmware" (absent without one).
#include <abi/introspect.h>
#include <json/writer.h>

namespace mcpd {

void write_firmware(json::Writer& w, const abi::FirmwareInfo& fw);

} // namespace mcpd
