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
// Written by the shell task, read by whichever task logs: one word each, and a torn view costs
// at worst a redrawn prompt showing one character too few or too many.
const char* volatile g_prompt = nullptr;
const char* volatile g_input = nullptr;
volatile size_t g_input_len = 0;
} // namespace

void show_prompt(const char* prompt, const char* input) {
    puts(prompt);
    g_input = input;
    g_input_len = 0;
    g_prompt = prompt;
}

void prompt_input(size_t len) { g_input_len = len; }

void prompt_hidden() { g_prompt = nullptr; }

void write_log_line(const char* line, size_t len) {
    const char* prompt = g_prompt;
    if (!prompt) {
        write(line, len);
        return;
    }
    static constexpr char kClearLine[] = "\r\x1b[K"; // back to column 0, erase to the end (VT100)
    write(kClearLine, sizeof kClearLine - 1);
    write(line, len);
    puts(prompt);
    if (const char* input = g_input)
        write(input, g_input_len);
}

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
