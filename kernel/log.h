#pragma once
// Kernel log: leveled records with monotonic and UTC timestamps in a ring (later served as
// the kernel://log resource), echoed to the console unless the console carries a protocol.
#include <ktl/log_ring.h>

namespace klog {

constexpr size_t kSlots = 512;
using Ring = ktl::LogRing<kSlots>;

void set_console_echo(bool echo);
void set_min_console_level(ktl::LogLevel level);
__attribute__((format(printf, 2, 3))) void log(ktl::LogLevel level, const char* fmt, ...);
// Reads one record by sequence number (IRQ-safe copy); false if not held.
bool read(uint64_t seq, ktl::LogRecord& out);
uint64_t next_seq();
uint64_t oldest_seq();

} // namespace klog

#define KLOG_DEBUG(...)  ::klog::log(::ktl::LogLevel::Debug, __VA_ARGS__)
#define KLOG_INFO(...)   ::klog::log(::ktl::LogLevel::Info, __VA_ARGS__)
#define KLOG_NOTICE(...) ::klog::log(::ktl::LogLevel::Notice, __VA_ARGS__)
#define KLOG_WARN(...)   ::klog::log(::ktl::LogLevel::Warning, __VA_ARGS__)
#define KLOG_ERROR(...)  ::klog::log(::ktl::LogLevel::Error, __VA_ARGS__)
