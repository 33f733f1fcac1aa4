#include "format.h"
#include "log_ring.h"

namespace ktl {

const char* log_level_name(LogLevel level) {
    switch (level) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Notice: return "notice";
    case LogLevel::Warning: return "warning";
    case LogLevel::Error: return "error";
    case LogLevel::Critical: return "critical";
    }
    return "unknown";
}

size_t format_log_line(const LogRecord& record, char* out, size_t cap) {
    Formatter f(out, cap);
    uint64_t sec = record.mono_ns / 1000000000ull;
    uint64_t usec = (record.mono_ns % 1000000000ull) / 1000;
    f.append("[%6llu.%06llu] %-8s %s", static_cast<unsigned long long>(sec), static_cast<unsigned long long>(usec),
             log_level_name(record.level), record.text);
    return f.length();
}

} // namespace ktl
