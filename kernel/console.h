#pragma once
// The kernel console: formatted output to the SerialPort the device tree's stdout-path names.
// Before a port is attached output is discarded (the log ring still keeps it).
#include <cstddef>

class SerialPort;

namespace console {

void attach(SerialPort* port);
SerialPort* port();
void write(const char* data, size_t len);
void puts(const char* text);
__attribute__((format(printf, 1, 2))) void printf(const char* fmt, ...);
// Polled output that bypasses the transmit ring: for the panic and exception paths.
void write_polled(const char* data, size_t len);
__attribute__((format(printf, 1, 2))) void printf_polled(const char* fmt, ...);

} // namespace console
