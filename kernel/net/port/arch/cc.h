/* lwIP's compiler and platform hooks for Basalt (lwIP 2.1.3, src/include/lwip/arch.h).
 * Freestanding AArch64, little-endian; picolibc supplies stdint, inttypes, limits, string.
 * Diagnostics go to the kernel log. A failed lwIP assertion in its memory bookkeeping panics; one
 * in the protocol code is logged and the TCP connection in hand dropped (kernel/net/lwip_port.cpp).
 * The hooks are implemented in kernel/net/lwip_port.cpp. */
#ifndef BASALT_LWIP_ARCH_CC_H
#define BASALT_LWIP_ARCH_CC_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* picolibc's sys/types.h has ssize_t (long); without SSIZE_MAX lwIP would define its own (int),
 * which clashes once a file includes time.h (apps/sntp). No unistd.h is needed for it. */
#ifndef SSIZE_MAX
#    define SSIZE_MAX LONG_MAX
#endif
#define LWIP_NO_UNISTD_H 1

#ifdef __cplusplus
extern "C" {
#endif
void basalt_lwip_diag(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void basalt_lwip_assert(const char* message, const char* file, int line);
uint32_t basalt_lwip_rand(void);
#ifdef __cplusplus
}
#endif

#define LWIP_PLATFORM_DIAG(x) \
    do { \
        basalt_lwip_diag x; \
    } while (0)
#define LWIP_PLATFORM_ASSERT(x) basalt_lwip_assert((x), __FILE__, __LINE__)
#define LWIP_RAND()             basalt_lwip_rand()

#endif /* BASALT_LWIP_ARCH_CC_H */
