/* lwIP configuration for Basalt (lwIP 2.1.3, src/include/lwip/opt.h lists every option).
 *
 * Threading model: NO_SYS=1, raw (callback) API only. One kernel task, the net task
 * (kernel/net/net_task.cpp), owns lwIP and the virtio-net driver: it feeds received frames
 * in, runs lwIP's timers and sleeps on an event until the device interrupts or the next timer
 * is due. Nothing else calls into lwIP, so it needs no locks, no OS semaphores or mailboxes
 * (sys_arch) and no tcpip thread; interrupt handlers never touch it (they only wake the task).
 * Other tasks will reach the network through network-endpoint capabilities served by the net
 * task, as the rest of the kernel reaches its objects. The socket and netconn APIs would need
 * a blocking OS layer and a second copy of the stack's state per caller; an appliance serving
 * one protocol on a few ports does not need them.
 *
 * Memory: all pools are static and bounded, sized for a small appliance (up to 256
 * concurrent HTTP connections, most of them idle; 1500-byte MTU). lwIP's heap (MEM_SIZE) is its own static array,
 * not the kernel heap.
 */
#ifndef BASALT_LWIPOPTS_H
#define BASALT_LWIPOPTS_H

#define NO_SYS                     1
/* RFC 6528 initial sequence numbers from the kernel's random source (lwip_hooks.h). */
#define LWIP_HOOK_FILENAME         "lwip_hooks.h"
#define SYS_LIGHTWEIGHT_PROT       0
#define LWIP_TIMERS                1
#define LWIP_SOCKET                0
#define LWIP_NETCONN               0

#define LWIP_IPV4                  1
#define LWIP_IPV6                  0
#define LWIP_ARP                   1
#define LWIP_ETHERNET              1
#define LWIP_ICMP                  1
#define LWIP_RAW                   0
#define LWIP_UDP                   1
#define LWIP_TCP                   1
#define LWIP_DHCP                  1
#define LWIP_AUTOIP                0
#define LWIP_IGMP                  0
#define LWIP_DNS                   0
#define IP_REASSEMBLY              1
#define IP_FRAG                    1

#define LWIP_NETIF_STATUS_CALLBACK 1
#define LWIP_NETIF_HOSTNAME        1
/* Two interfaces at most (kernel/net/net_stack.h): a swarm node has the fabric and QEMU's user
   network. */
#define LWIP_SINGLE_NETIF          0

/* Memory: static pools only. */
#define MEM_LIBC_MALLOC            0
#define MEMP_MEM_MALLOC            0
#define MEM_ALIGNMENT              8
/* Unsent TCP data of busy connections, and every frame the stack builds itself (ACKs, resets,
 * SYN-ACKs, ICMP and ARP replies). Data may fill at most net::kDataHeapBudget of it
 * (kernel/net/endpoint.cpp), so control traffic always finds memory. */
#define MEM_SIZE                   (1024 * 1024)
#define MEMP_NUM_PBUF              32
#define MEMP_NUM_UDP_PCB           6 /* DHCP, SNTP and the run-time endpoints (net::Datagram) */
#define MEMP_NUM_SYS_TIMEOUT       (LWIP_NUM_SYS_TIMEOUT_INTERNAL + 2) /* SNTP's */
#define MEMP_NUM_TCP_PCB \
    528 /* the HTTP endpoint's 256, its 255 half-open (net::Endpoint::kListenBacklog), echo and closing ones */
#define MEMP_NUM_TCP_PCB_LISTEN    4
#define MEMP_NUM_TCP_SEG           512
#define MEMP_NUM_REASSDATA         4
#define MEMP_NUM_FRAG_PBUF         8
#define MEMP_NUM_ARP_QUEUE         16
#define PBUF_POOL_SIZE             64
/* A node of a swarm talks to every member (up to 64, cluster::kMaxMembers) each few seconds:
 * a smaller table would evict entries in turn and flood the fabric with ARP requests. */
#define ARP_TABLE_SIZE             72
#define ARP_QUEUEING               1

/* TCP: 1500-byte MTU, windows of eight segments. */
#define TCP_MSS                    1460
#define TCP_WND                    (8 * TCP_MSS)
#define TCP_SND_BUF                (8 * TCP_MSS)
#define TCP_SND_QUEUELEN           (4 * TCP_SND_BUF / TCP_MSS)
#define TCP_QUEUE_OOSEQ            1
/* Window scaling understood (RFC 7323), our own window unscaled (it is 8 segments): the SYN-ACK
 * answers a peer's scale option. Without it a peer that scales its window regardless (passt as
 * Debian 12 ships it, the default user-mode network) is read as offering a few hundred bytes, and
 * answers crawl out one persist probe at a time. */
#define LWIP_WND_SCALE             1
#define TCP_RCV_SCALE              0
/* Out-of-order data is bounded per connection in buffers as well as bytes: tiny segments must
 * not empty the receive pool (PBUF_POOL_SIZE) that every frame needs. */
#define TCP_OOSEQ_MAX_PBUFS        8
#define TCP_OOSEQ_MAX_BYTES        TCP_WND
/* The listen backlog counts half-open (SYN-RECEIVED) connections per listener; a SYN beyond
 * it evicts the oldest of them (kernel/net/tcp_syn_guard.cpp), so spoofed SYNs can neither
 * fill the connection table nor keep a real client out. Each listener sets its own (the HTTP
 * endpoint's holds a client's burst of new connections: net::Endpoint::kListenBacklog). */
#define TCP_LISTEN_BACKLOG         1
#define TCP_DEFAULT_LISTEN_BACKLOG 16
#define LWIP_TCP_KEEPALIVE         1

/* Checksums in software (the driver negotiates no offload). */
#define CHECKSUM_GEN_IP            1
#define CHECKSUM_GEN_UDP           1
#define CHECKSUM_GEN_TCP           1
#define CHECKSUM_GEN_ICMP          1
#define CHECKSUM_CHECK_IP          1
#define CHECKSUM_CHECK_UDP         1
#define CHECKSUM_CHECK_TCP         1
#define CHECKSUM_CHECK_ICMP        1

#define LWIP_STATS                 1
#define LWIP_STATS_DISPLAY         0
#define LWIP_DEBUG                 0

/* SNTP (lwIP's apps/sntp): wall time for boards without an RTC (kernel/net/sntp.cpp). The server
 * comes from `ntp=` or from DHCP (option 42); an answer must come from the server asked, from its
 * port, and echo the request's transmit time (SNTP_CHECK_RESPONSE 2), so an off-path peer cannot
 * set the clock. */
#define LWIP_DHCP_GET_NTP_SRV      1
#define LWIP_DHCP_MAX_NTP_SERVERS  1
#define SNTP_CHECK_RESPONSE        2
#define SNTP_STARTUP_DELAY         0
#define SNTP_UPDATE_DELAY          3600000 /* then hourly */
#define SNTP_RECV_TIMEOUT          3000
#define SNTP_RETRY_TIMEOUT         3000
#define SNTP_RETRY_TIMEOUT_MAX     60000
#define SNTP_RETRY_TIMEOUT_EXP     1
#ifdef __cplusplus
extern "C" {
#endif
unsigned short basalt_sntp_port(void);
void basalt_sntp_set_time(unsigned long sec, unsigned long usec);
void basalt_sntp_get_time(unsigned long* sec, unsigned long* usec);
#ifdef __cplusplus
}
#endif
#define SNTP_PORT                        basalt_sntp_port()
#define SNTP_SET_SYSTEM_TIME_US(sec, us) basalt_sntp_set_time((sec), (us))
#define SNTP_GET_SYSTEM_TIME(sec, us) \
    do { \
        unsigned long s_, u_; \
        basalt_sntp_get_time(&s_, &u_); \
        (sec) = s_; \
        (us) = u_; \
    } while (0)

#endif /* BASALT_LWIPOPTS_H */
