#include "log.h"

#include "arch/aarch64/cpu.h"
#include "clock.h"
#include "console.h"

#include <ktl/format.h>

#include <cstdarg>

namespace klog {
namespace {
Ring g_ring;
bool g_echo = true;
ktl::LogLevel g_min_console = ktl::LogLevel::Info;
} // namespace

void set_console_echo(bool echo) { g_echo = echo; }
void set_min_console_level(ktl::LogLevel level) { g_min_console = level; }

void log(ktl::LogLevel level, const char* fmt, ...) {
    char text[ktl::LogRecord::kMaxText + 1];
    ktl::Formatter f(text, sizeof text);
    va_list ap;
    va_start(ap, fmt);
    f.vappend(fmt, ap);
    va_end(ap);

    ktl::LogRecord record;
    {
        arch::IrqGuard guard;
        uint64_t seq = g_ring.append(level, clock::monotonic_ns(), clock::unix_seconds(), text, f.length());
        g_ring.read(seq, record);
    }
    if (g_echo && level >= g_min_console) {
        char line[ktl::LogRecord::kMaxText + 48];
        size_t n = ktl::format_log_line(record, line, sizeof line - 1);
        line[n++] = '\n';
        console::write_log_line(line, n);
    }
}

bool read(uint64_t seq, ktl::LogRecord& out) {
    arch::IrqGuard guard;
    return g_ring.read(seq, out);
}

uint64_t next_seq() {
    arch::IrqGuard guard;
    return g_ring.next_seq();
}

uint64_t oldest_seq() {
    arch::IrqGuard guard;
    return g_ring.oldest_seq();
}

} // namespace klog
