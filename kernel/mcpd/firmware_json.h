#pragma once
// What the Pi's VideoCore firmware reported at boot (platform::Info::firmware), as the JSON
// object kernel_info and kernel://status both carry under "firmware" (absent without one).
#include <json/writer.h>

namespace mcpd {

void write_firmware(json::Writer& w);

} // namespace mcpd
