#include "platform.h"

#include "arch/aarch64/mmu.h"
#include "bootargs.h"
#include "clock.h"
#include "console.h"
#include "irq.h"
#include "log.h"
#include "mm/kheap.h"
#include "mm/pmm.h"
#include "mm/stack_arena.h"
#include "panic.h"
#include "sched/task.h"

#include <drivers/generic_timer.h>
#include <drivers/gic_v2.h>
#include <drivers/gic_v3.h>
#include <drivers/pl011.h>
#include <drivers/pl031.h>
#include <drivers/bcm2835_gpio.h>
#include <drivers/bcm2835_mbox.h>
#include <rpi/revision.h>
#include <drivers/bcm2835_pm.h>
#include <drivers/psci.h>
#include <dtb/dtb.h>

#include <optional>
#include <string_view>

extern "C" char __kernel_start[], __text_end[], __rodata_end[], __kernel_end[];
extern "C" char __stack_guard_0[], __stack_guard_1[], __stack_guard_2[];

namespace platform {
namespace {

Info g_info;
Pl011* g_uart = nullptr;
std::optional<dtb::Node> g_uart_node;

// Nothing is mapped below 2 MiB, or below the image where it loads lower (the Pi: 0x80000, with
// the firmware's spin table for the other cores in the first page).
uint64_t null_guard() {
    const uint64_t image = reinterpret_cast<uint64_t>(__kernel_start) & ~0xfffull;
    return image < (2ull << 20) ? image : (2ull << 20);
}
constexpr size_t kMaxRegions = 192;
// Added after the device windows: the stack arena, the DTB, three kernel sections, three guards,
// the embedder's model.
constexpr size_t kTailRegions = 9;
constexpr size_t kMaxDepth = 32;
constexpr uint64_t kArenaAlign = 2ull << 20;
// One stack per task slot: a task holds at most one, and a dead one gives its back at once.
constexpr uint64_t kArenaSize = sched::kMaxTasks * stack_arena::kSlotSize;
static_assert(kArenaSize % kArenaAlign == 0, "the stack arena is mapped in whole 2 MiB blocks");

// Pre-order walk over every node, bounded in depth and count.
template <typename Fn>
void for_each_node(const dtb::Blob& blob, Fn&& fn) {
    dtb::Node parents[kMaxDepth];
    size_t depth = 1;
    parents[0] = blob.root();
    std::optional<dtb::Node> node = blob.first_child(blob.root());
    for (size_t visited = 0; node && visited < 100000; ++visited) {
        fn(*node, depth);
        if (auto child = blob.first_child(*node); child && depth + 1 < kMaxDepth) {
            parents[depth++] = *node;
            node = child;
            continue;
        }
        for (;;) {
            if (auto sibling = blob.next_sibling(*node)) {
                node = sibling;
                break;
            }
            if (depth <= 1) {
                node.reset();
                break;
            }
            node = parents[--depth];
        }
    }
}

bool is_enabled(const dtb::Blob& blob, dtb::Node node) {
    auto status = blob.string(node, "status");
    return !status || *status == "okay" || *status == "ok";
}

bool is_memory_node(const dtb::Blob& blob, dtb::Node node) {
    auto type = blob.string(node, "device_type");
    return type && *type == "memory";
}

// Nodes whose `reg` is not an MMIO window: memory, reserved memory, CPUs.
bool is_mmio_candidate(const dtb::Blob& blob, dtb::Node node) {
    if (is_memory_node(blob, node) || !is_enabled(blob, node))
        return false;
    auto parent = blob.parent(node);
    if (!parent)
        return false;
    std::string_view pname = blob.name(*parent);
    return pname != "cpus" && pname != "reserved-memory";
}

uint32_t clock_frequency_of(const dtb::Blob& blob, dtb::Node node) {
    auto clocks = blob.u32(node, "clocks");
    if (!clocks)
        return 0;
    auto clk = blob.by_phandle(*clocks);
    if (!clk)
        return 0;
    return blob.u32(*clk, "clock-frequency").value_or(0);
}

bool overlaps(const mmu::Region* regions, size_t count, uint64_t base, uint64_t size) {
    for (size_t i = 0; i < count; ++i) {
        if (regions[i].kind == mmu::Kind::Ram && base < regions[i].base + regions[i].size &&
            regions[i].base < base + size)
            return true;
    }
    return false;
}

} // namespace

const Info& info() { return g_info; }
Pl011* console_uart() { return g_uart; }

// The Pi 4's firmware puts the mini UART on header pins 14/15 and UART0 (the PL011 Basalt uses)
// on Bluetooth's pins 32/33; the overlay that swaps them (disable-bt) is not in Debian. So the
// kernel routes UART0 to 14/15 itself (ALT0, a pull-up on RX) and releases 32/33. Returns the
// function pins 14/15 read back afterwards.
int route_uart0_to_header(const dtb::Blob& blob, dtb::Node uart) {
    auto gpio_node = blob.find_compatible("brcm,bcm2711-gpio");
    if (!gpio_node || blob.name(uart) != "serial@7e201000")
        return -1;
    // The tree declares 0xb4 bytes; the BCM2711's pull registers (0xe4..0xf0) follow in the same
    // page, which is what gets mapped.
    auto reg = blob.reg(*gpio_node, 0);
    if (!reg || reg->size < 0xb4 || (reg->base & 0xfff) + 0xf0 > 0x1000)
        return -1;
    Bcm2711Gpio gpio(reg->base);
    gpio.set_function(32, Bcm2711Gpio::Function::Input);
    gpio.set_function(33, Bcm2711Gpio::Function::Input);
    gpio.set_pull(15, Bcm2711Gpio::Pull::Up);
    gpio.set_pull(14, Bcm2711Gpio::Pull::None);
    gpio.set_function(14, Bcm2711Gpio::Function::Alt0);
    gpio.set_function(15, Bcm2711Gpio::Function::Alt0);
    const auto f14 = gpio.function(14), f15 = gpio.function(15);
    return f14 == f15 ? static_cast<int>(f14) : -2;
}

ktl::Result<void> probe_console(const dtb::Blob& blob) {
    g_uart_node = blob.stdout_node();
    if (!g_uart_node || !blob.is_compatible(*g_uart_node, "arm,pl011"))
        g_uart_node = blob.find_compatible("arm,pl011");
    if (!g_uart_node)
        return ktl::Error::NotFound;
    g_info.uart_pins = route_uart0_to_header(blob, *g_uart_node);
    auto reg = TRY(blob.reg(*g_uart_node, 0));
    g_uart = TRY(Pl011::create(reg.base, clock_frequency_of(blob, *g_uart_node), 115200));
    g_info.uart_base = reg.base;
    console::attach(g_uart);
    return {};
}

constexpr size_t kMaxReserved = 32; // reserved memory ranges kept out of the page allocator

ktl::Result<void> map_memory(const dtb::Blob& blob, uintptr_t dtb_addr) {
    static mmu::Region regions[kMaxRegions];
    size_t count = 0;

    dtb::Range ram[16];
    size_t ram_count = blob.memory_ranges(ram);
    if (ram_count == 0) // a tree straight from a file: the firmware fills /memory in at boot
        panic("dtb: no RAM: no /memory node (device_type \"memory\") with a non-empty reg");
    for (size_t i = 0; i < ram_count; ++i) {
        regions[count++] = { ram[i].base, ram[i].size, mmu::Kind::Ram };
        g_info.ram_bytes += ram[i].size;
    }
    g_info.ram_ranges = ram_count;
    // Where RAM starts below the null guard (the Pi: at 0), those pages stay unmapped all the same.
    for (size_t i = 0; i < ram_count; ++i)
        if (ram[i].base < null_guard()) {
            regions[count++] = { 0, null_guard(), mmu::Kind::Guard };
            break;
        }
    dtb::Range reserved[kMaxReserved];
    g_info.reserved_ranges = blob.reserved_ranges(reserved);
    if (g_info.reserved_ranges > kMaxReserved)
        panic("dtb: %zu reserved memory ranges, more than the %zu this kernel keeps out of its allocator",
              g_info.reserved_ranges, kMaxReserved);

    size_t skipped = 0;
    for_each_node(blob, [&](dtb::Node node, size_t) {
        if (!is_mmio_candidate(blob, node))
            return;
        size_t n = blob.reg_count(node);
        for (size_t i = 0; i < n && i < 8; ++i) {
            auto reg = blob.reg(node, i);
            if (!reg || reg->size == 0)
                continue;
            uint64_t base = reg->base, end = reg->base + reg->size;
            if (end <= null_guard())
                continue;
            if (base < null_guard())
                base = null_guard();
            if (overlaps(regions, ram_count, base, end - base))
                continue;
            if (count == kMaxRegions - kTailRegions) {
                ++skipped;
                continue;
            }
            regions[count++] = { base, end - base, mmu::Kind::Device };
            ++g_info.devices;
        }
    });
    if (skipped)
        KLOG_WARN("mmu: %zu device windows not mapped (region table full)", skipped);

    auto start = reinterpret_cast<uint64_t>(__kernel_start);
    auto text_end = reinterpret_cast<uint64_t>(__text_end);
    auto rodata_end = reinterpret_cast<uint64_t>(__rodata_end);
    auto end = reinterpret_cast<uint64_t>(__kernel_end);

    // Layout after the image, inside the kernel's RAM range: the task-stack arena (4 KiB pages,
    // guard pages), then the page allocator's metadata.
    uint64_t ram_base[16], ram_size[16];
    const dtb::Range* home = nullptr;
    for (size_t i = 0; i < ram_count; ++i) {
        ram_base[i] = ram[i].base;
        ram_size[i] = ram[i].size;
        if (start >= ram[i].base && end <= ram[i].base + ram[i].size)
            home = &ram[i];
    }
    if (!home)
        return ktl::Error::NotFound;
    uint64_t arena = (end + kArenaAlign - 1) & ~(kArenaAlign - 1);
    uint64_t meta = arena + kArenaSize;
    uint64_t meta_size = (pmm::metadata_bytes_needed(ram_size, ram_count) + 4095) & ~4095ull;
    if (meta + meta_size > home->base + home->size)
        return ktl::Error::NoMemory;
    regions[count++] = { arena, kArenaSize, mmu::Kind::RamPages };

    // The DTB stays readable for the life of the kernel, never writable.
    regions[count++] = { dtb_addr, blob.total_size(), mmu::Kind::KernelRodata };
    regions[count++] = { start, text_end - start, mmu::Kind::KernelText };
    regions[count++] = { text_end, rodata_end - text_end, mmu::Kind::KernelRodata };
    regions[count++] = { rodata_end, end - rodata_end, mmu::Kind::KernelData };
    // The kernel's own stacks keep their guard pages (boot/kernel.ld.in).
    for (const char* guard : { __stack_guard_0, __stack_guard_1, __stack_guard_2 })
        regions[count++] = { reinterpret_cast<uint64_t>(guard), 4096, mmu::Kind::Guard };
    // The embedder's model (model=: QEMU's loader put it in RAM; else what the Pi's firmware loaded
    // as config.txt's initramfs, named in /chosen): read-only, kept from the allocator, when it lies
    // in RAM clear of everything above; otherwise the kernel runs without it.
    const auto initrd = blob.initrd();
    const bool by_arg = bootargs::get().model_base != 0;
    const uint64_t model = by_arg ? bootargs::get().model_base : initrd ? initrd->base : 0;
    const uint64_t model_given = by_arg ? bootargs::get().model_bytes : initrd ? initrd->size : 0;
    // (The pages that hold it: a firmware need not load it on a page boundary.)
    const uint64_t model_page = model & ~4095ull;
    const uint64_t model_bytes = (model + model_given + 4095 - model_page) & ~4095ull;
    if (model) {
        bool in_ram = false;
        for (size_t i = 0; i < ram_count; ++i)
            in_ram = in_ram || (model_page >= ram[i].base && model_page + model_bytes <= ram[i].base + ram[i].size);
        auto clear = [&](uint64_t base, uint64_t size) {
            return model_page + model_bytes <= base || base + size <= model_page;
        };
        bool clear_of_reserved = true;
        for (size_t i = 0; i < g_info.reserved_ranges; ++i)
            clear_of_reserved = clear_of_reserved && clear(reserved[i].base, reserved[i].size);
        if (in_ram && clear_of_reserved && clear(start, end - start) && clear(dtb_addr, blob.total_size()) &&
            clear(arena, kArenaSize) && clear(meta, meta_size) && model_page >= null_guard() &&
            model_given <= (64ull << 20)) {
            regions[count++] = { model_page, model_bytes, mmu::Kind::KernelRodata };
            g_info.model_base = model;
            g_info.model_bytes = model_given;
        } else {
            g_info.model_refused = true;
        }
    }
    g_info.mapped_regions = count;
    TRY_VOID(mmu::install(regions, count));
    TRY_VOID(stack_arena::init(arena, kArenaSize));

    pmm::Exclusion excl[kMaxReserved + 6];
    size_t nexcl = 0;
    excl[nexcl++] = { start, end - start };
    excl[nexcl++] = { dtb_addr, blob.total_size() };
    excl[nexcl++] = { arena, kArenaSize };
    excl[nexcl++] = { meta, meta_size };
    excl[nexcl++] = { 0, null_guard() };
    for (size_t i = 0; i < g_info.reserved_ranges && nexcl < kMaxReserved + 5; ++i)
        excl[nexcl++] = { reserved[i].base, reserved[i].size };
    if (g_info.model_base)
        excl[nexcl++] = { model_page, model_bytes };
    TRY_VOID(pmm::init(ram_base, ram_size, ram_count, excl, nexcl, meta, meta_size));
    kheap::init();
    return {};
}

static ktl::Result<void> probe_gic(const dtb::Blob& blob) {
    if (auto node = blob.find_compatible("arm,gic-v3")) {
        auto dist = TRY(blob.reg(*node, 0));
        auto redist = TRY(blob.reg(*node, 1));
        irq::set_controller(TRY(GicV3::create(dist.base, redist.base, redist.size)));
        g_info.irq_controller = "gicv3";
        return {};
    }
    static const char* const v2[] = { "arm,cortex-a15-gic", "arm,gic-400", "arm,cortex-a9-gic", "arm,cortex-a7-gic" };
    for (const char* compat : v2) {
        if (auto node = blob.find_compatible(compat)) {
            auto dist = TRY(blob.reg(*node, 0));
            auto cpu = TRY(blob.reg(*node, 1));
            irq::set_controller(TRY(GicV2::create(dist.base, cpu.base)));
            g_info.irq_controller = "gicv2";
            return {};
        }
    }
    return ktl::Error::NotFound;
}

static ktl::Result<void> probe_timer(const dtb::Blob& blob) {
    auto node = blob.find_compatible("arm,armv8-timer");
    if (!node)
        node = blob.find_compatible("arm,armv7-timer");
    if (!node)
        return ktl::Error::NotFound;
    // interrupts: secure phys, non-secure phys, virtual, hypervisor (timer binding order).
    auto irq_spec = TRY(blob.interrupt(*node, 1));
    GenericTimer::init(irq_spec.intid(), blob.u32(*node, "clock-frequency").value_or(0));
    TRY_VOID(irq::attach(irq_spec.intid(), GenericTimer::handle_irq, nullptr, false));
    g_info.timer_intid = irq_spec.intid();
    g_info.timer_hz = GenericTimer::frequency();
    return {};
}

static void probe_psci(const dtb::Blob& blob) {
    static const char* const compats[] = { "arm,psci-1.0", "arm,psci-0.2", "arm,psci" };
    for (const char* compat : compats) {
        auto node = blob.find_compatible(compat);
        if (!node)
            continue;
        auto method = blob.string(*node, "method");
        if (method && *method == "hvc")
            Psci::init(Psci::Conduit::Hvc);
        else if (method && *method == "smc")
            Psci::init(Psci::Conduit::Smc);
        else
            continue;
        g_info.psci = *method == "hvc" ? "hvc" : "smc";
        g_info.psci_version = Psci::version();
        return;
    }
}

// The VideoCore's mailbox (the Pi): what only the firmware knows, read once at boot.
static void probe_mailbox(const dtb::Blob& blob) {
    auto node = blob.find_compatible("brcm,bcm2835-mbox");
    if (!node)
        return;
    auto reg = blob.reg(*node, 0);
    if (!reg || reg->size < 0x40)
        return;
    auto mbox = Bcm2835Mailbox::create(reg->base);
    if (!mbox)
        return;
    auto bus = blob.dma_address(*node, reinterpret_cast<uint64_t>((*mbox)->buffer()), Bcm2835Mailbox::kBufferWords * 4);
    if (!bus) {
        KLOG_WARN("mailbox: its buffer is outside what the VideoCore can reach (%s)", ktl::error_name(bus.error()));
        return;
    }
    auto& fw = g_info.firmware;
    uint32_t v[2] = {};
    auto ask = [&](uint32_t tag, uint32_t a0 = 0) {
        v[0] = a0;
        v[1] = 0;
        auto r = (*mbox)->call(*bus, tag, v, 2);
        if (!r)
            KLOG_WARN("mailbox: tag 0x%08x: %s", tag, ktl::error_name(r.error()));
        return r.ok();
    };
    if (!ask(mbox_tag::kBoardRevision))
        return; // no firmware answering: nothing more to ask
    fw.present = true;
    fw.board_revision = v[0];
    rpi::describe(fw.board_revision, fw.board, sizeof fw.board);
    if (ask(mbox_tag::kFirmwareRevision))
        fw.firmware_revision = v[0];
    if (ask(mbox_tag::kBoardSerial))
        fw.serial = v[0] | static_cast<uint64_t>(v[1]) << 32;
    if (ask(mbox_tag::kArmMemory)) {
        fw.arm_memory_base = v[0];
        fw.arm_memory_size = v[1];
    }
    if (ask(mbox_tag::kMacAddress)) {
        for (int i = 0; i < 6; ++i)
            fw.mac[i] = static_cast<uint8_t>(v[i / 4] >> (8 * (i % 4)));
        fw.has_mac = true;
    }
    if (ask(mbox_tag::kClockRate, mbox_clock::kArm))
        fw.arm_hz = v[1];
    if (ask(mbox_tag::kClockRate, mbox_clock::kCore))
        fw.core_hz = v[1];
    if (ask(mbox_tag::kClockRate, mbox_clock::kUart))
        fw.uart_hz = v[1];
    if (ask(mbox_tag::kClockRate, mbox_clock::kEmmc))
        fw.emmc_hz = v[1];
}

// The Pi 4 has no PSCI: power-off and reboot go through its PM watchdog.
static void probe_pm_watchdog(const dtb::Blob& blob) {
    auto node = blob.find_compatible("brcm,bcm2835-pm-wdt");
    if (!node)
        node = blob.find_compatible("brcm,bcm2711-pm");
    if (!node)
        return;
    if (auto reg = blob.reg(*node, 0); reg && reg->size >= 0x28) {
        Bcm2835Pm::init(reg->base);
        g_info.pm_watchdog = reg->base;
    }
}

ktl::Result<void> probe_devices(const dtb::Blob& blob) {
    if (auto model = blob.string(blob.root(), "model"))
        g_info.model = model->data(); // NUL-terminated inside the blob (checked by the parser)
    if (auto r = probe_gic(blob); !r)
        panic("dtb: no usable interrupt controller (compatible arm,gic-v3, arm,gic-400 or arm,cortex-a15-gic): %s",
              ktl::error_name(r.error()));
    if (auto r = probe_timer(blob); !r)
        panic("dtb: no usable timer node (compatible arm,armv8-timer): %s", ktl::error_name(r.error()));
    if (g_uart && g_uart_node) {
        auto uart_irq = blob.interrupt(*g_uart_node, 0);
        if (uart_irq && irq::attach(uart_irq->intid(), Pl011::irq_entry, g_uart, false)) {
            g_info.uart_intid = uart_irq->intid();
            g_uart->enable_interrupts();
        } else {
            KLOG_WARN("pl011: no usable interrupt; console stays polled");
        }
    }
    if (auto node = blob.find_compatible("arm,pl031")) {
        if (auto reg = blob.reg(*node, 0)) {
            if (auto rtc = Pl031::create(reg->base)) {
                g_info.rtc_base = reg->base;
                clock::set_wall_clock((*rtc)->read_seconds());
            }
        }
    }
    probe_psci(blob);
    probe_pm_watchdog(blob);
    probe_mailbox(blob);
    if (auto r = probe_genet(blob); !r && r.error() != ktl::Error::NotFound)
        KLOG_WARN("genet: not used (%s)", ktl::error_name(r.error()));
    (void)probe_rng200(blob); // (says itself why a node it found is not used)
    auto virtio = probe_virtio(blob);
    g_info.virtio_devices = virtio.devices;
    g_info.net_intid = virtio.net_intid;
    return {};
}

void print_devices(const dtb::Blob& blob) {
    struct Group {
        std::string_view compat;
        size_t count;
        uint64_t first;
        uint64_t last;
        uint32_t intid;
    };
    static Group groups[48];
    size_t ngroups = 0;
    for_each_node(blob, [&](dtb::Node node, size_t) {
        if (!is_mmio_candidate(blob, node))
            return;
        auto compat = blob.string(node, "compatible");
        auto reg = blob.reg(node, 0);
        if (!compat || !reg || reg->size == 0)
            return;
        uint32_t intid = 0;
        if (auto irq_spec = blob.interrupt(node, 0))
            intid = irq_spec->intid();
        for (size_t i = 0; i < ngroups; ++i) {
            if (groups[i].compat == *compat) {
                ++groups[i].count;
                groups[i].last = reg->base;
                return;
            }
        }
        if (ngroups < 48)
            groups[ngroups++] = { *compat, 1, reg->base, reg->base, intid };
    });
    for (size_t i = 0; i < ngroups; ++i) {
        const Group& g = groups[i];
        if (g.count == 1)
            console::printf("  dtb: %-22.*s @ 0x%09llx%s", static_cast<int>(g.compat.size()), g.compat.data(),
                            static_cast<unsigned long long>(g.first), g.intid ? "" : "\n");
        else
            console::printf("  dtb: %-22.*s x%zu @ 0x%09llx..0x%09llx%s", static_cast<int>(g.compat.size()),
                            g.compat.data(), g.count, static_cast<unsigned long long>(g.first),
                            static_cast<unsigned long long>(g.last), g.intid ? "" : "\n");
        if (g.intid)
            console::printf(" irq %u\n", g.intid);
    }
}

} // namespace platform
