#pragma once
// The kernel console: formatted output to the SerialPort the device tree's stdout-path names.
// Before a port is attached output is discarded (the log ring still keeps it).
#include <cstddef>

class SerialPort;

namespace console {

void attach(SerialPort* port);
// When the serial line carries a protocol (MCP), ordinary console output is dropped: only the
// protocol task writes to the line (the log ring keeps everything; panics still print).
void set_protocol_mode(bool on);
bool protocol_mode();
SerialPort* port();
void write(const char* data, size_t len);
void puts(const char* text);
__attribute__((format(printf, 1, 2))) void printf(const char* fmt, ...);
// The shell's prompt and the input typed after it so far (the shell's own buffer, read only
// while visible). A log line printed while the prompt is up replaces that line and the prompt
// is drawn again below it, so a message never lands in the middle of what is being typed.
void show_prompt(const char* prompt, const char* input); // prints the prompt and remembers it
void prompt_input(size_t len);
void prompt_hidden();
void write_log_line(const char* line, size_t len);
// Polled output that bypasses the transmit ring: for the panic and exception paths.
void write_polled(const char* data, size_t len);
__attribute__((format(printf, 1, 2))) void printf_polled(const char* fmt, ...);

} // namespace console
