#pragma once
// Power State Coordination Interface (ARM DEN 0022): system off and reset through firmware
// (QEMU's built-in PSCI on virt). The conduit (hvc or smc) comes from the device tree.
#include <cstdint>

class Psci {
public:
    enum class Conduit { None, Hvc, Smc };

    static void init(Conduit conduit) { s_conduit = conduit; }
    static bool available() { return s_conduit != Conduit::None; }
    static Conduit conduit() { return s_conduit; }
    static uint32_t version(); // major << 16 | minor, 0 when unavailable
    // CPU_ON: the core `target` (its MPIDR affinity) starts at physical `entry` with x0 = `context`.
    // PSCI's result: 0 started, -2 invalid parameters, -4 already on, -5 on pending, ...
    static int64_t cpu_on(uint64_t target, uint64_t entry, uint64_t context);
    [[noreturn]] static void system_off();
    [[noreturn]] static void system_reset();

private:
    static uint64_t call(uint64_t function, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0);
    static Conduit s_conduit;
};
