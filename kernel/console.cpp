#include "console.h"

#include <drivers/serial_port.h>
#include <ktl/format.h>

#include <cstdarg>
#include <cstring>

namespace console {
namespace {
SerialPort* g_port = nullptr;
bool g_protocol_mode = false;
constexpr size_t kLineMax = 512;
} // namespace

void attach(SerialPort* port) { g_port = port; }
void set_protocol_mode(bool on) { g_protocol_mode = on; }
bool protocol_mode() { return g_protocol_mode; }
SerialPort* port() { return g_port; }

void write(const char* data, size_t len) {
    if (g_port && !g_protocol_mode)
        g_port->write(data, len);
}

void puts(const char* text) { write(text, strlen(text)); }

void printf(const char* fmt, ...) {
    char buf[kLineMax];
    ktl::Formatter f(buf, sizeof buf);
    va_list ap;
    va_start(ap, fmt);
    f.vappend(fmt, ap);
    va_end(ap);
    write(buf, f.length());
}

// NOTE: printf and printf_polled stay separate functions (not one with a flag): the panic
// path must not depend on the transmit ring at all.

void write_polled(const char* data, size_t len) {
    if (g_port)
        g_port->write_polled(data, len);
}

void printf_polled(const char* fmt, ...) {
    char buf[kLineMax];
    ktl::Formatter f(buf, sizeof buf);
    va_list ap;
    va_start(ap, fmt);
    f.vappend(fmt, ap);
    va_end(ap);
    write_polled(buf, f.length());
}

} // namespace console
