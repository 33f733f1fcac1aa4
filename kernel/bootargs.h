#pragma once
// Kernel boot arguments (/chosen/bootargs), parsed once. Documented in docs/boot-arguments.md.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace bootargs {

struct Config {
    bool semihosting = false; // `semihosting`: host enabled semihosting; exit status via SYS_EXIT
    bool panic_halt = false;  // `panic=halt`: stop in WFI instead of powering off
    std::string_view fault;   // `fault=KIND`: deliberate fault at the end of boot (tests; kernel/fault_injection.h)
    uint32_t tick_hz = 100;   // `hz=N` (10..1000): scheduler tick
    bool quiet = false;       // `quiet`: console shows warnings and worse only
    bool mcp_serial = false;  // `mcp=serial`: the console line carries MCP (newline-delimited JSON-RPC) only
    uint32_t checkpoint_kib =
        0; // `checkpoint_kib=N` (1..1048576): take a checkpoint once the log holds N KiB (default: adaptive)
    // `recovery_links=inline`: recovery links every vector of the log into the graph before the store
    // serves, as before 2026-11-29 (a longer recovery, no background work after it); default
    // `background`: the store serves once the vectors are back, searching those not yet linked
    // exhaustively while the vector workers link them.
    bool recovery_links_inline = false;
    bool disk_off = false;        // `disk=off`: leave the first virtio-blk device alone (collections live in memory)
    std::string_view tools;       // `tools=a,b,c`: MCP tool allowlist (default: every kernel tool)
    std::string_view serial_role; // `serial_role=admin|operator|reader|anonymous` (default admin)
    std::string_view resources;   // `resources=uri,uri`: MCP resource allowlist (default: every kernel resource)
    std::string_view prompts;     // `prompts=a,b`: MCP prompt allowlist (default: every prompt served)
    std::string_view profile;     // `profile=conformance`: the MCP conformance suite's fixtures; `profile=faults`:
                                  // test_fault (tests only)
    uint32_t tool_time_ms = 0;    // `tool_time_ms=N` (1..10000): tighter MCP tool wall-time limit (default 10 s)
    uint32_t rate_burst = 50;     // `rate=BURST/PER_SECOND`: every principal's MCP call bucket, whatever its role
    uint32_t rate_per_second = 20;
    bool rate_set = false;            // without `rate=`, each role's own bucket (mcp::kRoleRates)
    uint32_t audit_kib = 0;           // `audit_kib=N` (16..1024): the MCP audit trail's ring (default 1 MiB)
    std::string_view step_up;         // `step_up=delete,write,create`: more sinks that need a human's yes (never fewer)
    uint32_t step_up_delete_over = 0; // `step_up_delete_over=N` (0..100): a lower bulk-delete threshold (default 100)
    uint32_t list_page = 0; // `list_page=N` (1..64): tools and prompts per list page (default: all in one page)
    uint32_t tool_output_bytes =
        0;                       // `tool_output_bytes=N` (256..65536): tighter MCP tool output limit (default 64 KiB)
    bool netcheck = false;       // `netcheck`: ARP request for 10.0.2.2 through the raw driver at boot, answer logged
    std::string_view ip;         // `ip=dhcp|A.B.C.D/N[,gw=A.B.C.D]`: IPv4 configuration of the NIC (default dhcp)
    std::string_view ip1;        // `ip1=...`: the same for a second NIC, vn1 (default dhcp; never the default route)
    uint16_t tcp_echo_port = 0;  // `tcp_echo=PORT`: TCP echo service on PORT (default off)
    uint16_t http_port = 8080;   // `http=PORT|off`: MCP over Streamable HTTP on PORT when there is a NIC (default 8080)
    std::string_view http_role;  // `http_role=ROLE`: the role of HTTP callers without an API key (default anonymous)
    std::string_view http_hosts; // `http_hosts=h1,h2`: Host/Origin names accepted over HTTP (default
                                 // 127.0.0.1,localhost,[::1] and the NIC's address)
    std::string_view ktest;      // `ktest=NAME`: run in-kernel test NAME (or `all`), print results, power off
    std::string_view ntp;        // `ntp=A.B.C.D[:PORT]|off`: the SNTP server (default: the DHCP lease's, if any)
    int64_t clock_unix = 0; // `clock=UNIX_SECONDS`: wall time at launch, for boards without an RTC (run.sh --board rpi4
                            // passes the host's)
    // Cluster membership (kernel/cluster): on when `cluster=` names one (and `cluster_key=` is given).
    std::string_view
        node; // `node=NAME`: this node's name in the cluster ([A-Za-z0-9._-]{1,31}; default basalt-<address>)
    std::string_view cluster; // `cluster=NAME`: the cluster to join
    std::string_view peers;   // `peers=A.B.C.D[:PORT],...`: seeds to announce to (besides the subnet broadcast)
    // `raft_voters=A.B.C.D,...` (3 or 5, the same list on every node): the cluster's consensus
    // group, whose members are these addresses (raft ids 1.. in this order) on UDP cluster_port + 1.
    std::string_view raft_voters;
    // `raft_snapshot_every=N` (4..96, default 96): the group snapshots every N applied changes and
    // keeps 2N behind (a voter further behind catches up from a snapshot: tests make that quick).
    uint32_t raft_snapshot_every = 96;
    // `raft_replace_after_s=N` (0 = never, the default; else 10..86400): the group's leader replaces
    // a voter the membership protocol has held dead this long by the lowest-addressed live member
    // outside the group (cluster_replace does it by hand).
    uint32_t raft_replace_after_s = 0;
    // `raft_groups=0|1` (default 1): a replicated collection's changes and reads go through the Raft
    // group of its own placement (docs/replication.md); 0 keeps them all in group 0 (the placements'
    // groups then run empty), as kernels before them did. Every node of a swarm must say the same.
    bool raft_groups = true;
    // `model=0xADDR:BYTES`: the embedder's model (docs/documents.md) lies in RAM there (QEMU's
    // generic loader put it there: run.sh --model); kept out of the page allocator, mapped
    // read-only. 0: none given. Page-aligned address, at most 64 MiB.
    uint64_t model_base = 0;
    uint64_t model_bytes = 0;
    uint16_t cluster_port = 7946;   // `cluster_port=N`: the membership protocol's UDP port
    uint32_t cluster_period_ms = 0; // `cluster_period_ms=N` (100..10000): protocol period (default 1000)
    uint32_t cluster_suspicion_mult =
        0;                         // `cluster_suspicion=N` (1..20): suspicion timeout in periods x log10(n) (default 5)
    bool cluster_broadcast = true; // `cluster_discovery=off`: announce to the seeds only, not to the subnet broadcast
};

void parse(std::string_view args);
const Config& get();
std::string_view raw();
// The arguments with API key secrets (`key=ROLE:SECRET`, repeatable) and the cluster secret
// (`cluster_key=`) replaced by "***": the only
// form that may be printed or logged. Returns the length written (NUL-terminated).
size_t redacted(char* out, size_t cap);
// The `cluster_key=` secret, for the one caller that derives the cluster key from it (the
// secret itself is never copied, printed or served: redacted() hides it); empty once forgotten.
std::string_view cluster_secret();
// Overwrites the secret in the kernel's copy of the arguments (raw() then shows `***...` in its
// place): called once the key is derived, so that no later reader of the arguments, nor a
// memory dump, finds it.
void forget_cluster_secret();
// Calls fn with each `key=` value ("ROLE:SECRET" or "ROLE:PRINCIPAL:SECRET").
void for_each_key(void (*fn)(std::string_view spec, void* ctx), void* ctx);
// Calls fn with each `key_sha256=` value ("ROLE:[PRINCIPAL:]HEX": the secret's SHA-256, as
// `./basalt flash` writes keys to an SD card).
void for_each_key_sha256(void (*fn)(std::string_view spec, void* ctx), void* ctx);
// Calls fn with each `limit=` value ("PRINCIPAL:time_ms=N,output_bytes=N,rate=B/S,concurrency=N").
void for_each_limit(void (*fn)(std::string_view spec, void* ctx), void* ctx);

} // namespace bootargs
