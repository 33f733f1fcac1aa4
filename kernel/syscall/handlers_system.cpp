// system_info: what the kernel knows of the machine it runs on and of its own services (board,
// model, CPU, firmware, wall clock, random generator, serial line), for kernel://status and
// kernel_info, which read it through an Introspection capability like the other figures.
#include "../arch/aarch64/cpu.h"
#include "../board/board.h"
#include "../clock.h"
#include "../platform.h"
#include "../rng.h"
#include "../smp.h"
#include "../text/embedder.h"
#include "buffers.h"
#include "handlers.h"

#include <drivers/serial_port.h>

namespace handlers {
namespace {

template <size_t N>
void copy_text(char (&out)[N], const char* text) {
    size_t i = 0;
    for (; text && text[i] && i + 1 < N; ++i)
        out[i] = text[i];
    out[i] = '\0';
}

} // namespace

int64_t system_info(const kcap::Resolved&, Cap, abi::SystemInfo* out) {
    if (!buffers::writable(out, sizeof(abi::SystemInfo)))
        return -static_cast<int64_t>(ktl::Error::InvalidArgs);
    abi::SystemInfo s {};
    const platform::Info& p = platform::info();
    copy_text(s.board, board::kName);
    copy_text(s.model, p.model);
    copy_text(s.cpu, arch::cpu_part_name(arch::midr()));
    copy_text(s.clock_source, clock::source_name());
    copy_text(s.random_sources, rng::sources());
    s.wall_clock_known = clock::wall_clock_known();
    s.random_secure = rng::secure();
    s.cpus_online = static_cast<uint8_t>(smp::online());
    s.cpus_listed = static_cast<uint8_t>(smp::listed() > 255 ? 255 : smp::listed());
    copy_text(s.embedder.state, embedder::state_name(embedder::state()));
    if (const text::EmbedModel* m = embedder::model()) {
        const std::string_view source = m->source();
        for (size_t i = 0; i < source.size() && i + 1 < sizeof s.embedder.source; ++i)
            s.embedder.source[i] = source[i];
        s.embedder.words = m->words();
        s.embedder.dim = m->dim();
    }
    s.embedder.bytes = embedder::bytes();
    s.random_reseeds = rng::reseeds();
    s.mono_ns = clock::monotonic_ns();
    s.unix_seconds = clock::unix_seconds();
    if (SerialPort* line = platform::line_port()) {
        copy_text(s.serial_device, line->name());
        const SerialPort::Counters c = line->counters();
        s.serial_rx_bytes = c.rx_bytes;
        s.serial_tx_bytes = c.tx_bytes;
        s.serial_rx_dropped = c.rx_dropped;
        s.serial_tx_waits = c.tx_waits;
    }
    const auto& fw = p.firmware;
    s.firmware.present = fw.present;
    s.firmware.has_mac = fw.has_mac;
    for (size_t i = 0; i < sizeof s.firmware.mac; ++i)
        s.firmware.mac[i] = fw.mac[i];
    s.firmware.board_revision = fw.board_revision;
    s.firmware.firmware_revision = fw.firmware_revision;
    s.firmware.arm_memory_size = fw.arm_memory_size;
    s.firmware.arm_hz = fw.arm_hz;
    s.firmware.core_hz = fw.core_hz;
    s.firmware.uart_hz = fw.uart_hz;
    s.firmware.emmc_hz = fw.emmc_hz;
    s.firmware.serial = fw.serial;
    copy_text(s.firmware.board, fw.board);
    *out = s;
    return 0;
}

} // namespace handlers
