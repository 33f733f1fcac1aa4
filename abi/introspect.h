#pragma once
// Records of the introspection calls (task_list, mem_stats, sched_stats, cap_list, log_read,
// audit_read, system_info).
#include <cstdint>

#include <ktl/log_ring.h>

namespace abi {

struct TaskInfo {
    uint32_t id;
    uint8_t state;
    uint8_t priority;
    uint16_t reserved;
    uint64_t cpu_ns;
    uint64_t switches;
    uint64_t heap_bytes;
    uint64_t stack_bytes;
    char name[24];
};

struct MemInfo {
    uint64_t total_pages;
    uint64_t free_pages;
    uint64_t used_pages;
    uint64_t largest_free_block;
    uint64_t heap_live_allocations;
    uint64_t heap_bytes_requested;
    uint64_t heap_slab_pages;
    uint64_t heap_large_pages;
    uint64_t stacks_used;
    uint64_t stacks_total;
    // Taken back from tasks that ended holding them (since boot).
    uint64_t reclaimed_heap_allocations;
    uint64_t reclaimed_heap_bytes;
    uint64_t reclaimed_objects;
    uint64_t reclaimed_mutexes;
};

struct SchedInfo {
    uint64_t ticks;
    uint64_t switches;
    uint64_t tasks;
    uint64_t consistency_checks; // ready-list checks passed, one per tick (a failed one panics)
};

struct CapInfo {
    uint32_t slot;
    uint32_t type;
    uint32_t rights;
    uint64_t object_id;
    uint64_t badge;
};

// One kernel log record (the ring's own layout, lib/ktl/log_ring.h).
using LogRecord = ktl::LogRecord;

enum class AuditOutcome : uint8_t { Allow = 0, Deny = 1, Error = 2 };

struct AuditRecord {
    uint64_t seq;
    uint64_t mono_ns;
    uint32_t task_id;
    uint32_t syscall;     // number from abi/syscalls.def
    uint32_t slot;        // capability slot presented
    uint32_t object_type; // cap::ObjectType expected
    uint32_t rights;      // rights wanted
    int32_t error;        // ktl::Error, 0 when allowed
    AuditOutcome outcome;
    char task_name[24];
};

// What the Pi's VideoCore firmware reported at boot (zero, present 0, where there is none).
struct FirmwareInfo {
    uint8_t present;
    uint8_t has_mac;
    uint8_t mac[6];
    uint32_t board_revision;
    uint32_t firmware_revision;
    uint32_t arm_memory_size;
    uint32_t arm_hz, core_hz, uart_hz, emmc_hz;
    uint64_t serial;
    char board[64]; // decoded revision, e.g. "Raspberry Pi 4 Model B rev 1.5, 2 GiB"
};

// Layout returned by system_info: the machine and the kernel's own services, as kernel://status
// and kernel_info report them. Strings end with a NUL (cut to fit).
struct SystemInfo {
    char board[16];          // the build's board: "qemu-virt", "rpi4", "rpi5"
    char model[128];         // the device tree's model
    char cpu[16];            // the CPU part, from MIDR_EL1 ("cortex-a72")
    char clock_source[16];   // where wall time comes from: "rtc", "boot argument", "sntp", "not set"
    char random_sources[32]; // what seeded the ChaCha20 generator ("none": predictable)
    char serial_device[24];  // what carries the serial line ("virtio-console", "pl011"); "" for none
    uint8_t wall_clock_known;
    uint8_t random_secure;
    uint8_t cpus_online; // cores running (the boot core's tasks on the first; the others wait: kernel/smp.h)
    uint8_t cpus_listed; // cores the device tree lists
    uint8_t reserved[4];
    uint64_t mono_ns;     // the monotonic clock as this was filled
    int64_t unix_seconds; // wall time then (0 while unknown)
    uint64_t random_reseeds;
    uint64_t serial_rx_bytes, serial_tx_bytes, serial_rx_dropped, serial_tx_waits;
    FirmwareInfo firmware;
    // The embedder's model (docs/documents.md): state "absent", "loaded", "misplaced", "corrupt" or
    // "unsupported"; when loaded, its source, words, dimensions and size.
    struct Embedder {
        char state[16];
        char source[40];
        uint32_t words, dim;
        uint64_t bytes;
    } embedder;
};

} // namespace abi
