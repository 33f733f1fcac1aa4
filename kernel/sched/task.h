#pragma once
// A kernel task: its own stack (with an unmapped guard page below), saved context, state,
// priority and accounting. Tasks run at EL1 on SP_EL0 ("EL1t"), so exceptions switch to the
// per-CPU SP_EL1 stack and a blown task stack is caught and reported rather than fatal.
#include <cstdint>

#include "../arch/aarch64/trap_frame.h"

namespace sched {

constexpr uint32_t kMaxTasks = 64;
constexpr uint8_t kPriorities = 32; // 0 = idle ... 31 = most urgent
constexpr uint8_t kDefaultPriority = 16;
constexpr uint32_t kNameMax = 23;

enum class TaskState : uint8_t { Free, Ready, Running, Blocked, Sleeping, Dead };
const char* state_name(TaskState state);

struct WaitQueue;

struct Task {
    uint32_t id = 0;         // 1..kMaxTasks, stable for the task's life (also its heap owner tag)
    uint32_t generation = 0; // bumped when the slot is reused
    char name[kNameMax + 1] = {};
    TaskState state = TaskState::Free;
    uint8_t priority = kDefaultPriority;
    bool detached = false;
    bool reap_on_end = false; // detach(): released when it ends, nobody joins it
    arch::TrapFrame frame;    // saved context while not running
    uint64_t stack_top = 0;
    uint64_t stack_bottom = 0;
    uint64_t cpu_ns = 0;
    uint64_t switched_in_ns = 0;
    uint64_t wake_at_ns = 0; // sleep or timed-wait deadline, 0 = none
    uint64_t switches = 0;
    int64_t exit_code = 0;
    const char* exit_reason = "";
    Task* next_ready = nullptr;
    Task* next_wait = nullptr;
    WaitQueue* waiting_on = nullptr;
    WaitQueue* joiners = nullptr;
    void* cap_table = nullptr; // the task's capability table (kernel core)
    uint64_t cap_object = 0;   // the Task object task_create registered for it (destroyed with the task)
    // What a blocked IPC call is waiting to transfer (message queues copy directly between
    // the sender's and the receiver's buffers; all tasks share the kernel address space).
    void* wait_buf = nullptr;
    uint64_t wait_len = 0;
    // Killed while blocked: it dies when its wait ends (whatever it waits for may still be
    // using its buffers until then).
    bool kill_pending = false;
    const char* kill_reason = "";
    // System-call budget (task_limit): 0 = none. Past it, calls with effects fail with
    // -Exhausted and `budget_spent` stays set for the task's own code to see.
    uint64_t syscall_budget = 0;
    uint64_t syscalls = 0;
    bool budget_spent = false;
    // task_limit's abi::kTaskAckStaged: its logged store writes are answered once staged (the
    // journal's defer and the create/drop log wait); its creator syncs before acknowledging.
    bool ack_staged = false;
};

// FIFO of blocked tasks (intrusive through Task::next_wait).
struct WaitQueue {
    Task* head = nullptr;
    Task* tail = nullptr;
    void push(Task* t);
    Task* pop();
    bool remove(Task* t);
    bool empty() const { return head == nullptr; }
};

} // namespace sched
