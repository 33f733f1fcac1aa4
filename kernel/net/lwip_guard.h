#pragma once
// What follows a failed lwIP assertion outside its memory bookkeeping (kernel/net/lwip_port.cpp):
// the assertion is logged and counted, and the TCP connection lwIP was processing is aborted
// once the frame in hand is through, by the net task, where lwIP may be called again.
#include <cstdint>

namespace net {

void note_assertion(const char* message, const char* file, int line);
// Net task, after each received frame and timer round: aborts the connection an assertion named.
void drop_suspect();
uint64_t assertions();

} // namespace net
