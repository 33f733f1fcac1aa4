/* lwIP hooks (LWIP_HOOK_FILENAME): initial TCP sequence numbers per RFC 6528 from the kernel's
 * random source (kernel/net/tcp_isn.cpp) instead of lwIP's counter, which a peer can predict. */
#ifndef BASALT_LWIP_HOOKS_H
#define BASALT_LWIP_HOOKS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* The addresses are ip_addr_t (IPv4 only in this build), passed untyped to keep this header free
 * of lwIP's. */
uint32_t basalt_tcp_isn(const void* local_ip, uint16_t local_port, const void* remote_ip, uint16_t remote_port);
#ifdef __cplusplus
}
#endif

#define LWIP_HOOK_TCP_ISN(local_ip, local_port, remote_ip, remote_port) \
    basalt_tcp_isn((local_ip), (local_port), (remote_ip), (remote_port))

#endif
