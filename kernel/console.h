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
// Polled output that bypasses the transmit ring: for the panic and exception paths.
void write_polled(const char* data, size_t len);
__attribute__((format(printf, 1, 2))) void printf_polled(const char* fmt, ...);

} // namespace console
