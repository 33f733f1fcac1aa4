#include "console_desk.h"

#include "../arch/aarch64/cpu.h"
#include "../log.h"

#include <ktl/utf8.h>

namespace mcpd::console_desk {
namespace {

enum class Stage : uint8_t { Idle, Posted, Taken, Answered };

// Shared by the shell and the bridge task: interrupts masked around every access.
struct Desk {
    void (*wake)() = nullptr;
    Stage stage = Stage::Idle;
    bool abandoned = false;
    Verb verb = Verb::Approve;
    uint32_t id = 0;
    char line[240] = "";
} g_desk;

} // namespace

Posted post(Verb verb, uint32_t id) {
    void (*wake)() = nullptr;
    {
        arch::IrqGuard guard;
        if (!g_desk.wake)
            return Posted::NoBridge;
        if (g_desk.stage != Stage::Idle)
            return Posted::Busy;
        g_desk.stage = Stage::Posted;
        g_desk.abandoned = false;
        g_desk.verb = verb;
        g_desk.id = id;
        wake = g_desk.wake;
    }
    wake();
    return Posted::Ok;
}

bool outcome(char* out, size_t cap) {
    arch::IrqGuard guard;
    if (g_desk.stage != Stage::Answered)
        return false;
    ktl::utf8_copy(out, cap, g_desk.line);
    g_desk.stage = Stage::Idle;
    return true;
}

void abandon() {
    arch::IrqGuard guard;
    if (g_desk.stage == Stage::Answered)
        g_desk.stage = Stage::Idle; // answered as the shell gave up: the shell printed nothing
    else if (g_desk.stage != Stage::Idle)
        g_desk.abandoned = true;
}

void open(void (*wake)()) {
    arch::IrqGuard guard;
    g_desk.wake = wake;
}

bool take(Verb& verb, uint32_t& id) {
    arch::IrqGuard guard;
    if (g_desk.stage != Stage::Posted)
        return false;
    g_desk.stage = Stage::Taken;
    verb = g_desk.verb;
    id = g_desk.id;
    return true;
}

void answer(std::string_view line) {
    bool to_log = false;
    {
        arch::IrqGuard guard;
        if (g_desk.stage != Stage::Taken)
            return;
        ktl::utf8_copy(g_desk.line, line);
        to_log = g_desk.abandoned;
        g_desk.stage = to_log ? Stage::Idle : Stage::Answered;
    }
    // Nobody waits at the prompt any more: the operator reads it in the log instead.
    if (to_log)
        KLOG_INFO("console: %.*s", static_cast<int>(line.size()), line.data());
}

} // namespace mcpd::console_desk
