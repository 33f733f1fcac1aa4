/* lwIP hooks (LWIP_HOOK_FILENAME): initial TCP sequence numbers per RFC 6528 from the kernel's
 * random source (kernel/net/tcp_isn.cpp) instead of lwIP's counter, which a peer can predict;
 * a SYN to a listener whose backlog of half-open connections is full evicts the oldest of them
 * (kernel/net/tcp_syn_guard.cpp). */
#ifndef BASALT_LWIP_HOOKS_H
#define BASALT_LWIP_HOOKS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/* The addresses are ip_addr_t (IPv4 only in this build), passed untyped to keep this header free
 * of lwIP's. */
uint32_t basalt_tcp_isn(const void* local_ip, uint16_t local_port, const void* remote_ip, uint16_t remote_port);
/* pcb and tcphdr are struct tcp_pcb* and struct tcp_hdr*; returns an err_t (0: process the segment). */
int basalt_tcp_inpacket(void* pcb, const void* tcphdr);
#ifdef __cplusplus
}
#endif

#define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p) basalt_tcp_inpacket((pcb), (hdr))

#define LWIP_HOOK_TCP_ISN(local_ip, local_port, remote_ip, remote_port) \
    basalt_tcp_isn((local_ip), (local_port), (remote_ip), (remote_port))

#endif
