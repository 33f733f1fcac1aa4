// Boot sequence after the early MMU: device tree, console, final page tables, interrupt
// controller, timer, RTC, then the banner and the console shell.
#include "smp.h"
#include "text/embedder.h"
#include "cluster/cluster_service.h"
#include "arch/aarch64/cpu.h"
#include "arch/aarch64/mmu.h"
#include "arch/aarch64/semihosting.h"
#include "board/board.h"
#include "bootargs.h"
#include "clock.h"
#include "console.h"
#include "current.h"
#include "fault_injection.h"
#include "log.h"
#include "panic.h"
#include "platform.h"
#include "rng.h"
#include "shell.h"
#include <abi/version.h>
#include "audit/trail.h"
#include "cap/kcap.h"
#include "composition.h"
#include "dev/disk.h"
#include "dev/serial_device.h"
#include "ktest/ktest.h"
#include "mcpd/provenance_log.h"
#include "mcpd/bridge_config.h"
#include "mcpd/http_task.h"
#include "mcpd/serial_task.h"
#include "ipc/sync.h"
#include "net/endpoint.h"
#include "net/net_task.h"
#include "sched/scheduler.h"
#include "storage/journal.h"
#include "storage/storage_task.h"
#include "syscall/handlers.h"
#include "vector/service.h"
#include "vector/worker.h"

#include <drivers/generic_timer.h>
#include <drivers/pl011.h>
#include <dtb/atags.h>
#include <dtb/dtb.h>

extern "C" uint64_t boot_entry_el;
extern "C" char __kernel_start[], __kernel_end[], __bss_start[];

namespace {

// When the timer's interrupts were switched on: the self-check counts from here.
struct TickStart {
    uint64_t ticks;
    uint64_t ns;
};

TickStart tick_start() { return { GenericTimer::tick_count(), clock::monotonic_ns() }; }

// Waits until the timer interrupt has counted `ticks` ticks since `from`. The counter only moves
// in the IRQ handler, so this proves interrupts are being delivered (not polling of the counter).
void timer_self_check(TickStart from, uint32_t ticks) {
    uint64_t start_ticks = from.ticks;
    uint64_t start_ns = from.ns;
    uint64_t deadline = start_ns + 2000000000ull;
    while (GenericTimer::tick_count() - start_ticks < ticks && clock::monotonic_ns() < deadline)
        arch::wfi();
    uint64_t counted = GenericTimer::tick_count() - start_ticks;
    uint64_t elapsed_us = (clock::monotonic_ns() - start_ns) / 1000;
    KLOG_INFO("timer: %llu interrupts in %llu us (tick %u Hz, counter %llu Hz, intid %u)",
              static_cast<unsigned long long>(counted), static_cast<unsigned long long>(elapsed_us),
              bootargs::get().tick_hz, static_cast<unsigned long long>(GenericTimer::frequency()),
              GenericTimer::intid());
    if (counted < ticks)
        KLOG_ERROR("timer: interrupts are not arriving");
}

void print_banner(const dtb::Blob& blob) {
    const auto& info = platform::info();
    uint64_t el_entry = boot_entry_el ? 2 : 1;
    auto image = reinterpret_cast<uint64_t>(__bss_start) - reinterpret_cast<uint64_t>(__kernel_start);
    auto rest = reinterpret_cast<uint64_t>(__kernel_end) - reinterpret_cast<uint64_t>(__bss_start);
    console::printf("\nBasalt %s (%s) on %s [%s]\n", kVersion, kSourceCommit, info.model, board::kName);
    console::printf("  cpu: %s, MPIDR 0x%llx, entered at EL%llu, running at EL%u; cores: %u online of %u\n",
                    arch::cpu_part_name(arch::midr()), static_cast<unsigned long long>(arch::mpidr()),
                    static_cast<unsigned long long>(el_entry), arch::current_el(), smp::online(), smp::listed());
    console::printf(
        "  memory: %llu MiB in %zu range(s), %zu reserved; image %llu KiB (+%llu KiB bss/stack/heap) at 0x%llx; "
        "%zu page-table pages\n",
        static_cast<unsigned long long>(info.ram_bytes >> 20), info.ram_ranges, info.reserved_ranges,
        static_cast<unsigned long long>(image >> 10), static_cast<unsigned long long>(rest >> 10),
        static_cast<unsigned long long>(reinterpret_cast<uint64_t>(__kernel_start)), mmu::table_pages_used());
    console::printf("  irq: %s; timer intid %u at %llu Hz; uart pl011 @ 0x%lx intid %u; psci %s v%u.%u",
                    info.irq_controller, info.timer_intid, static_cast<unsigned long long>(info.timer_hz),
                    static_cast<unsigned long>(info.uart_base), info.uart_intid, info.psci, info.psci_version >> 16,
                    info.psci_version & 0xffff);
    if (info.pm_watchdog)
        console::printf("; power via pm watchdog @ 0x%llx", static_cast<unsigned long long>(info.pm_watchdog));
    console::printf("\n");
    if (info.uart_pins >= 0)
        console::printf("  uart pins: GPIO 14/15 %s (function %d read back), Bluetooth's 32/33 released\n",
                        info.uart_pins == 4 ? "ALT0 (UART0 on the header)" : "NOT ALT0", info.uart_pins);
    char now[32];
    clock::rfc3339_now(now, sizeof now);
    if (const auto& fw = info.firmware; fw.present) {
        console::printf("  firmware: %s (revision 0x%06x), serial %016llx, firmware 0x%08x, ARM memory %u MiB\n",
                        fw.board, fw.board_revision, static_cast<unsigned long long>(fw.serial), fw.firmware_revision,
                        fw.arm_memory_size >> 20);
        console::printf("  clocks: arm %u MHz, core %u MHz, uart %u MHz, emmc %u MHz", fw.arm_hz / 1000000,
                        fw.core_hz / 1000000, fw.uart_hz / 1000000, fw.emmc_hz / 1000000);
        if (fw.has_mac)
            console::printf("; mac %02x:%02x:%02x:%02x:%02x:%02x", fw.mac[0], fw.mac[1], fw.mac[2], fw.mac[3],
                            fw.mac[4], fw.mac[5]);
        console::printf("\n");
    }
    if (info.rtc_base)
        console::printf("  clock: %s (pl031 rtc @ 0x%lx)\n", now, static_cast<unsigned long>(info.rtc_base));
    else
        console::printf("  clock: %s (no rtc; %s)\n", now, clock::source_name());
    static char shown[512];
    bootargs::redacted(shown, sizeof shown);
    console::printf("  bootargs: \"%s\"\n", shown);
    console::printf("  devices (%zu MMIO windows mapped):\n", info.devices);
    platform::print_devices(blob);
}

// The console shell is the appliance owner's seat: it holds every kernel capability.
void start_shell(const composition::Objects& objects) {
    using composition::Object;
    static shell::Caps shell_caps;
    auto sh = sched::create("shell", shell::task_main, &shell_caps, sched::CreateOptions { 16, true });
    if (!sh)
        panic("sched: cannot create the shell task: %s", ktl::error_name(sh.error()));
    const composition::Held held = composition::grant(composition::Task::Shell, *sh, objects);
    shell_caps.factory = held[Object::Factory];
    shell_caps.introspection = held[Object::Introspection];
    shell_caps.audit = held[Object::AuditLog];
    shell_caps.serial = held[Object::Serial];
}

// The storage task's priority once the bridges may serve everything: above theirs, so a commit
// is written as soon as it is staged. Until then it recovers below them, so that the serial
// bridge's first answers (discovery, the handshake: no store needed) do not wait for the replay.
constexpr uint8_t kStoragePriority = 17;
constexpr uint8_t kStorageRecoveryPriority = 15;

// The disk, when there is one: only the storage task holds it, and until it has replayed the log
// the store is its alone (the bridges wait for it with storage_wait).
void start_storage(composition::Objects& objects, const void* audit_region) {
    using composition::Object;
    dev::Disk* disk = dev::disk();
    if (!disk) {
        journal::init_off(bootargs::get().disk_off ? "disk=off: collections live in memory"
                                                   : "no disk attached: collections live in memory");
        return;
    }
    static storaged::Caps storage_caps;
    auto disk_object = kcap::register_object(kcap::ObjectType::Disk, disk);
    auto t = sched::create("storage", storaged::task_main, &storage_caps,
                           sched::CreateOptions { kStorageRecoveryPriority, true });
    if (!disk_object || !t)
        panic("storage: cannot start the storage task");
    objects.set(Object::Disk, *disk_object);
    const composition::Held held = composition::grant(composition::Task::Storage, *t, objects);
    storage_caps.disk = held[Object::Disk];
    storage_caps.store = held[Object::VectorStore];
    storage_caps.audit = held[Object::AuditTrail];
    storage_caps.raft = held[Object::RaftLog];
    if (objects[Object::AuditTrail])
        journal::set_audit_region(audit_region);
    journal::init_recovering(*t, kStoragePriority);
    journal::set_space_waker(vector::kick);
}

// What every MCP bridge holds (composition.cpp lists the same rows for each bridge task).
mcpd::BridgeCaps bridge_caps(const composition::Held& held) {
    using composition::Object;
    mcpd::BridgeCaps caps;
    caps.introspection = held[Object::Introspection];
    caps.factory = held[Object::Factory];
    caps.audit = held[Object::AuditLog];
    caps.audit_region = held[Object::AuditTrail];
    caps.provenance_region = held[Object::Provenance];
    caps.store = held[Object::VectorStore];
    caps.cluster = held[Object::Cluster];
    return caps;
}

// Kernel singletons reached through capabilities, and the first tasks; who holds what is
// composition.cpp's table. `ticks`: when the timer started, for the self-check still to do on a
// protocol line (see kernel_main).
[[noreturn]] void start_tasks(TickStart ticks) {
    using composition::Object;
    using composition::Task;
    kcap::init();
    sched::set_reclaimer([](sched::Task* t) { (void)handlers::reclaim_task(t); });
    static SerialPort* const line = platform::line_port();
    static dev::SerialDevice serial(line);
    static int factory_object, introspection_object, audit_object;
    auto factory = kcap::register_object(kcap::ObjectType::Factory, &factory_object);
    auto introspection = kcap::register_object(kcap::ObjectType::Introspection, &introspection_object);
    auto audit_log = kcap::register_object(kcap::ObjectType::AuditLog, &audit_object);
    auto serial_object = kcap::register_object(kcap::ObjectType::Device, &serial);
    static int vector_store_object; // the named collections live in vector/store.cpp
    auto vector_store = kcap::register_object(kcap::ObjectType::VectorStore, &vector_store_object);
    if (!factory || !introspection || !audit_log || !serial_object || !vector_store)
        panic("cap: cannot register the kernel singletons");
    composition::Objects objects;
    objects.set(Object::Factory, *factory);
    objects.set(Object::Introspection, *introspection);
    objects.set(Object::AuditLog, *audit_log);
    objects.set(Object::Serial, *serial_object);
    objects.set(Object::VectorStore, *vector_store);
    if (line)
        line->set_rx_notify([](void* d) { static_cast<dev::SerialDevice*>(d)->on_rx(); }, &serial);

    // The MCP bridges' shared configuration and audit trail (one append-only region, created
    // here so every bridge appends to the same one).
    mcpd::bridge_config_init();
    auto audit_region = handlers::make_region(audit::trail::bytes(), 3 /* ring */, audit::trail::record_bytes(), true);
    auto audit_trail = audit_region ? kcap::register_object(kcap::ObjectType::Region, *audit_region)
                                    : ktl::Result<uint64_t>(audit_region.error());
    if (!audit_trail)
        KLOG_ERROR("mcp: no audit region (%s); decisions will be counted as dropped",
                   ktl::error_name(audit_trail.error()));
    objects.set(Object::AuditTrail, audit_trail ? *audit_trail : 0);
    // The Raft groups' durable state (kernel/raft/raft_store.h): the storage task's and the
    // cluster task's alone.
    static int raft_log_object;
    auto raft_log = kcap::register_object(kcap::ObjectType::RaftLog, &raft_log_object);
    objects.set(Object::RaftLog, raft_log ? *raft_log : 0);
    start_storage(objects, audit_region ? *audit_region : nullptr);
    // Provenance nodes: the same kind of ring, shared by the bridges the same way.
    auto provenance_region = handlers::make_region(mcpd::provenance_log_bytes(), 3 /* ring */,
                                                   mcpd::provenance_log_record_bytes(), true);
    auto provenance = provenance_region ? kcap::register_object(kcap::ObjectType::Region, *provenance_region)
                                        : ktl::Result<uint64_t>(provenance_region.error());
    if (!provenance)
        KLOG_ERROR("mcp: no provenance region (%s); requests will have no provenance node",
                   ktl::error_name(provenance.error()));
    objects.set(Object::Provenance, provenance ? *provenance : 0);
    // Cluster membership (`cluster=`): its task opens its UDP endpoint at run time through the
    // NetStack capability; the bridges get the Cluster object for its tools and resource.
    static int netstack_object;
    auto netstack = kcap::register_object(kcap::ObjectType::NetStack, &netstack_object);
    objects.set(Object::NetStack, netstack ? *netstack : 0);
    if (clusterd::configured() && !platform::nic())
        KLOG_ERROR("cluster: no network device: membership is off");
    else if (netstack && platform::nic())
        objects.set(Object::Cluster, clusterd::start(objects));
    bootargs::forget_cluster_secret(); // whether or not membership runs, the secret is not kept
    if (bootargs::get().mcp_serial) {
        static mcpd::SerialCaps mcp_caps;
        auto t = sched::create("mcp-serial", mcpd::serial_task_main, &mcp_caps, sched::CreateOptions { 16, true });
        if (!t)
            panic("sched: cannot create the MCP task: %s", ktl::error_name(t.error()));
        const composition::Held held = composition::grant(Task::McpSerial, *t, objects);
        mcp_caps.serial = held[Object::Serial];
        mcp_caps.bridge = bridge_caps(held);
        mcp_caps.wake = [] { serial.interrupt_reader(); };
        journal::add_commit_listener(mcp_caps.wake); // answers held for a commit (storage_barrier)
    } else {
        start_shell(objects);
    }
    // MCP over HTTP when there is a network device: the HTTP endpoint's connections are served
    // by their own bridge task, which reaches them only through the NetEndpoint capability.
    if (platform::nic() && bootargs::get().http_port) {
        static ipc::Event http_wake(true);
        static mcpd::HttpCaps http_caps;
        auto& endpoint = net::http_endpoint();
        endpoint.configure(bootargs::get().http_port, &http_wake, net::Endpoint::kMaxStreams);
        auto endpoint_object = kcap::register_object(kcap::ObjectType::NetEndpoint, &endpoint);
        auto wake_object = kcap::register_object(kcap::ObjectType::Event, &http_wake);
        auto t = sched::create("mcp-http", mcpd::http_task_main, &http_caps, sched::CreateOptions { 16, true });
        if (!t || !endpoint_object || !wake_object)
            panic("mcp: cannot start the HTTP bridge");
        objects.set(Object::HttpEndpoint, *endpoint_object);
        objects.set(Object::HttpWake, *wake_object);
        const composition::Held held = composition::grant(Task::McpHttp, *t, objects);
        http_caps.endpoint = held[Object::HttpEndpoint];
        http_caps.wake = held[Object::HttpWake];
        http_caps.bridge = bridge_caps(held);
        http_caps.signal = [] { http_wake.signal(); };
        journal::add_commit_listener(http_caps.signal);
    }
    if (!bootargs::get().ktest.empty()) {
        static ktest::Caps test_caps;
        auto runner = sched::create("ktest", ktest::task_main, &test_caps, sched::CreateOptions { 20, true });
        if (!runner)
            panic("sched: cannot create the test runner: %s", ktl::error_name(runner.error()));
        test_caps.name = bootargs::get().ktest;
        const composition::Held held = composition::grant(Task::Ktest, *runner, objects);
        test_caps.factory = held[Object::Factory];
        test_caps.introspection = held[Object::Introspection];
        test_caps.audit = held[Object::AuditLog];
        test_caps.factory_object = *factory;
        test_caps.store = held[Object::VectorStore];
    }
    // The vector store: worker tasks serving vec_* requests, holding the service capability.
    static int vector_service_object;
    auto vector_service = kcap::register_object(kcap::ObjectType::VectorService, &vector_service_object);
    if (!vector_service)
        panic("cap: cannot register the vector service");
    objects.set(Object::VectorService, *vector_service);
    using composition::kVectorWorkers;
    static vector::WorkerArgs worker_args[kVectorWorkers];
    for (uint32_t i = 0; i < kVectorWorkers; ++i) {
        char name[] = "vecstore-0";
        name[9] = static_cast<char>('0' + i);
        auto w = sched::create(name, vector::worker_main, &worker_args[i], sched::CreateOptions { 18, true });
        if (!w)
            panic("sched: cannot create the vector store: %s", ktl::error_name(w.error()));
        worker_args[i].service_slot = composition::grant(Task::VectorWorker, *w, objects)[Object::VectorService];
    }
    net::start();
    if (bootargs::get().mcp_serial)
        timer_self_check(ticks, 1);
    KLOG_INFO("sched: starting tasks (tick %u Hz)", bootargs::get().tick_hz);
    sched::start();
}


// The boot arguments: the device tree's /chosen/bootargs, or, when the tree is the image's own
// and the firmware passed an ATAG list instead (QEMU's raspi4b without -dtb), its command line.
// Read before the final page table unmaps the low pages the list sits in.
std::string_view boot_arguments(const dtb::Blob& blob, uintptr_t dtb_addr, uintptr_t x0) {
    static char from_atags[1024];
    if (dtb_addr != board::fallback_dtb() || x0 == 0 || x0 == dtb_addr || (x0 & 3) != 0)
        return blob.bootargs();
    const auto image = reinterpret_cast<uintptr_t>(__kernel_start);
    size_t window = 16 * 1024;
    if (x0 < image && image - x0 < window)
        window = image - x0;
    long n = atags::cmdline(reinterpret_cast<const volatile uint32_t*>(x0), window, from_atags, sizeof from_atags);
    return n >= 0 ? std::string_view(from_atags, static_cast<size_t>(n)) : blob.bootargs();
}

} // namespace

// dtb_addr: the device tree boot_main found (x0 from the firmware, else the board's fallback)
// and mapped read-only, or 0; x0: what the firmware passed.
void kernel_main(uintptr_t dtb_addr, uintptr_t x0) {
    set_current_task_name("boot");
    GenericTimer::init_counter();
    if (!dtb_addr)
        panic_without_console("no device tree found (x0 and board fallback hold no FDT)");
    auto blob_result = dtb::Blob::create(reinterpret_cast<const void*>(dtb_addr), board::kMaxDtbSize);
    if (!blob_result)
        panic_without_console("device tree rejected");
    const dtb::Blob& blob = *blob_result;

    bootargs::parse(boot_arguments(blob, dtb_addr, x0));
    semihosting::set_enabled(bootargs::get().semihosting);
    kpanic::set_halt_on_panic(bootargs::get().panic_halt);
    if (bootargs::get().quiet)
        klog::set_min_console_level(ktl::LogLevel::Warning);
    if (bootargs::get().mcp_serial) { // the line carries MCP only: banner and logs go to the log ring
        console::set_protocol_mode(true);
        klog::set_console_echo(false);
    }

    if (auto r = platform::probe_console(blob); !r)
        panic_without_console("no console UART in the device tree");
    // Another board's image (a Pi 5 image on a Pi 4, or the reverse): say so while the UART works.
    if (!blob.is_compatible(blob.root(), board::kRootCompatible)) {
        static const struct {
            const char* compatible;
            const char* image;
        } kImages[] = { { "brcm,bcm2711", "kernel8.img" },
                        { "brcm,bcm2712", "kernel_2712.img" },
                        { "linux,dummy-virt", "basalt.elf" } };
        const char* image = "an image built for this board";
        for (const auto& i : kImages)
            if (blob.is_compatible(blob.root(), i.compatible))
                image = i.image;
        panic("this is the %s image (for %s) but the device tree describes %s: boot %s instead", board::kName,
              board::kRootCompatible, blob.string(blob.root(), "model").value_or("another board").data(), image);
    }
    KLOG_INFO("boot: device tree at 0x%lx, %zu bytes", static_cast<unsigned long>(dtb_addr), blob.total_size());

    if (auto r = platform::map_memory(blob, dtb_addr); !r)
        panic("mmu: cannot build the kernel page tables: %s", ktl::error_name(r.error()));
    KLOG_INFO("mmu: %zu regions mapped, W^X kernel sections, %zu table pages; WXN %s; the early map held %llu KiB "
              "of normal memory",
              platform::info().mapped_regions, mmu::table_pages_used(), mmu::wxn_enabled() ? "on" : "off",
              static_cast<unsigned long long>(mmu::early_normal_bytes() >> 10));
    embedder::init(); // (its model, when model= placed one, is mapped now)

    if (auto r = platform::probe_devices(blob); !r)
        panic("platform: device probe failed: %s", ktl::error_name(r.error()));
    smp::start_secondaries(blob); // (PSCI is known now)
    // No RTC (the Pi): the launcher's time, if it gave one, until SNTP can do better.
    if (!clock::wall_clock_known() && bootargs::get().clock_unix)
        clock::set_wall_clock(bootargs::get().clock_unix, clock::Source::BootArgument);
    rng::init(); // the devices are known: seed from every entropy source there is
    GenericTimer::start_periodic(1000000000ull / bootargs::get().tick_hz, sched::on_tick);
    arch::irq_enable();
    TickStart ticks = tick_start();

    print_banner(blob);
    // Ten ticks give the console a meaningful rate check. On a protocol line nobody reads it and
    // the client is waiting for its first answer: one tick (proof that interrupts arrive) does,
    // counted while the tasks are set up rather than waited for here (10-20 ms at 100 Hz).
    if (!bootargs::get().mcp_serial)
        timer_self_check(ticks, 10);
    char now[32];
    clock::rfc3339_now(now, sizeof now);
    KLOG_INFO("rtc: wall clock %s", now);
    KLOG_INFO("boot: ready in %llu us since reset", static_cast<unsigned long long>(clock::monotonic_ns() / 1000));

    set_current_task_name("kernel-main");
    if (!bootargs::get().fault.empty())
        fault_injection::trigger(bootargs::get().fault);
    start_tasks(ticks);
}
