#!/usr/bin/env python3
"""Task-side code reaches the kernel only through the system call ABI: its files include abi/, lib/
(the portable libraries), mcp/ (the portable MCP layer), the C++ headers and headers of their own
folder (a task-side folder with its subfolders is one program), nothing else of the kernel. The kernel-internal headers a task-side file still needs are listed below, each with the
reason, so that a new one fails here rather than slipping in; a listed one no longer included
fails too (the list shrinks with the code).

usage: check_task_includes.py SOURCE_ROOT"""
import os
import re
import sys

# Task-side code: what runs as a task and talks to the kernel through system calls.
TASK_SIDE = [
    "kernel/ktest",
    "kernel/storage/storage_task.cpp", "kernel/storage/storage_task.h",
    "kernel/storage/checkpointer.cpp", "kernel/storage/checkpointer.h", "kernel/storage/disk_client.h",
    "kernel/cluster",
    "kernel/shell.cpp",
    "kernel/net/net_task.cpp", "kernel/net/net_task.h",
    "kernel/vector/worker.cpp", "kernel/vector/worker.h",
    "kernel/mcpd",
]

# Known exceptions, per file: the kernel-internal headers it still needs and why.
_KTEST = "the in-kernel tests are white-box: they also check kernel internals directly"
_BOOTARGS = "boot options (ktest=, cluster=, disk=...) are read from the kernel's copy; no system call yet"
_LOG = "the kernel log (klog) is written, and where it ends read, directly; no system call for either yet"
_SHELL = "the kernel console's shell runs beside the kernel and shows its state (drivers, scheduler, the table)"
_CLUSTER = ("the cluster service is kernel-side as much as a task: cluster_info and cluster_ping are answered "
            "from its state in the kernel, and it registers its own capability object and task")
_FED = ("the federated searches' desk is the kernel side of fed_search/fed_result (system call side, IRQs masked: "
        "it binds a search to the calling task), which the cluster task takes queries from as it answers "
        "cluster_info from its own state")
_NET = "the net task owns the lwIP stack and the NIC driver: kernel-side by nature"
_WORKER = "the vector workers run index work on the kernel objects vec_serve hands them (Collection*, pages)"
_TRAIL = "the audit trail's geometry (record size, bytes held) is read from its kernel object; no system call yet"
# The MCP bridges and tool tasks (kernel/mcpd).
_CLOCK = ("the monotonic clock is read directly on every request's path (a counter read: sys::clock would add "
          "a trap per read), and wall time (RFC 3339 stamps) too; no wall-clock system call yet")
_HEAP = ("a request's or a call's own memory comes from the kernel heap directly (charged to the calling task, "
         "capped by task_limit); no allocation system call")
_IRQ = ("state the bridges and tool tasks share (call limiter and numbering, proposals, provenance ring, console "
        "desk, resource contexts) is guarded by masking interrupts on the one core: a mutex would add two traps "
        "per access")
_TRAIL_WRITER = ("the MCP audit trail's writer (kernel/audit/trail, with ipc/task_slots: which slot each bridge "
                 "holds) is task-side code shared with the cluster task and the checkpointer; it reaches its "
                 "region through system calls")
_COMPOSITION = ("kernel://composition prints the image's boot-time grant table (composition.h) itself; no system "
                "call returns it")
_NET_STATUS = ("the interface's address (Host/Origin checks: every turn of the HTTP loop) and the HTTP port are "
               "read from the net task's published snapshot; no system call returns them yet")
_PANIC = "a failure that cannot happen (the kernel refusing a buffer of the bridge's own) stops the appliance"
_FAULTS = "test_fault (profile=faults only) sets off the kernel's fault injection: a test hook, not an interface"
_TIMING = ("kernel_perf and kernel_diagnose time system calls: their clock reads must not be system calls "
           "themselves (kernel_perf reads the counter, at its frequency)")
_RAFT = ("the cluster's consensus group drives a Raft member (kernel/raft), kernel code whose engine allocates from "
         "the kernel heap (its bounded raft_heap) and whose log is to be the kernel's journal")
_GROUP_HEAP = ("a collection's Raft group (tens of KiB) and a peer's reassembly buffer (20 KiB) are taken from the "
               "kernel heap when needed and given back when left; no allocation system call")
EXCEPTIONS = {
    "kernel/cluster/consensus.cpp": {
        "kernel/mm/kheap.h": _GROUP_HEAP,
        "kernel/arch/aarch64/cpu.h": _CLUSTER,
        "kernel/bootargs.h": _BOOTARGS,
        "kernel/log.h": _LOG,
        "kernel/net/datagram.h": _CLUSTER,
        "kernel/raft/raft_heap.h": _RAFT,
        "kernel/raft/raft_member.h": _RAFT,
    },
    "kernel/cluster/peer_channel.cpp": {
        "kernel/mm/kheap.h": _GROUP_HEAP,
    },
    "kernel/cluster/consensus_group.h": {
        "kernel/raft/raft_member.h": _RAFT,
    },
    "kernel/cluster/consensus_group.cpp": {
        "kernel/arch/aarch64/cpu.h": _CLUSTER,
        "kernel/bootargs.h": _BOOTARGS,
        "kernel/log.h": _LOG,
    },
    "kernel/cluster/replica_applier.h": {
        "kernel/raft/raft_member.h": _RAFT,
    },
    "kernel/cluster/replica_applier.cpp": {
        "kernel/log.h": _LOG,
    },
    "kernel/cluster/state_transfer.h": {
        "kernel/raft/raft_member.h": _RAFT,
    },
    "kernel/cluster/voter_replacement.h": {
        "kernel/raft/raft_member.h": _RAFT,
    },
    "kernel/cluster/voter_replacement.cpp": {
        "kernel/log.h": _LOG,
    },
    "kernel/cluster/state_transfer.cpp": {
        "kernel/log.h": _LOG,
    },
    "kernel/cluster/fed_desk.cpp": {
        "kernel/arch/aarch64/cpu.h": _FED,
        "kernel/clock.h": _FED,
        "kernel/ipc/sync.h": _FED,
        "kernel/mm/kheap.h": _FED,
        "kernel/sched/scheduler.h": _FED,
    },
    "kernel/cluster/cluster_service.cpp": {
        "kernel/arch/aarch64/cpu.h": _CLUSTER,
        "kernel/ipc/sync.h": _CLUSTER,
        "kernel/bootargs.h": _BOOTARGS,
        "kernel/cap/kcap.h": _CLUSTER,
        "kernel/clock.h": _CLUSTER,
        "kernel/log.h": _LOG,
        "kernel/audit/trail.h": _CLUSTER,
        "kernel/composition.h": _CLUSTER,
        "kernel/net/datagram.h": _CLUSTER,
        "kernel/net/net_status.h": _CLUSTER,
        "kernel/panic.h": _CLUSTER,
        "kernel/rng.h": _CLUSTER,
        "kernel/sched/scheduler.h": _CLUSTER,
    },
    "kernel/ktest/cap_tests.cpp": {
        "kernel/audit/syscall_log.h": _KTEST,
        "kernel/cap/kcap.h": _KTEST,
        "kernel/sched/scheduler.h": _KTEST,
    },
    "kernel/ktest/cases.h": {
        "kernel/console.h": _KTEST,
    },
    "kernel/ktest/hnsw_tests.cpp": {
        "kernel/mm/kheap.h": _KTEST,
        "kernel/sched/scheduler.h": _KTEST,
    },
    "kernel/ktest/reclaim_tests.cpp": {
        "kernel/cap/kcap.h": _KTEST,
        "kernel/fault_injection.h": _KTEST,
        "kernel/ipc/sync.h": _KTEST,
        "kernel/mm/kheap.h": _KTEST,
        "kernel/sched/scheduler.h": _KTEST,
    },
    "kernel/ktest/raft_tests.cpp": {
        "kernel/cluster/voter_replacement.h": _KTEST,
        "kernel/clock.h": _KTEST,
        "kernel/mm/kheap.h": _KTEST,
        "kernel/raft/raft_heap.h": _KTEST,
        "kernel/raft/raft_store.h": _KTEST,
        "kernel/raft/raft_member.h": _KTEST,
    },
    "kernel/ktest/runner.cpp": {
        "kernel/power.h": _KTEST,
    },
    "kernel/ktest/vector_tests.cpp": {
        "kernel/mm/kheap.h": _KTEST,
        "kernel/vector/collection.h": _KTEST,
        "kernel/vector/service.h": _KTEST,
    },
    "kernel/mcpd/bridge.cpp": {
        "kernel/bootargs.h": _BOOTARGS,
        "kernel/audit/trail.h": _TRAIL_WRITER,
        "kernel/clock.h": _CLOCK,
        "kernel/log.h": _LOG,
        "kernel/mm/kheap.h": _HEAP,
    },
    "kernel/mcpd/bridge_config.cpp": {
        "kernel/arch/aarch64/cpu.h": _IRQ,
        "kernel/bootargs.h": _BOOTARGS,
        "kernel/log.h": _LOG,
        "kernel/mm/kheap.h": _HEAP,
        "kernel/audit/trail.h": _TRAIL_WRITER,
    },
    "kernel/mcpd/composition_json.cpp": {
        "kernel/composition.h": _COMPOSITION,
    },
    "kernel/mcpd/console_desk.cpp": {
        "kernel/arch/aarch64/cpu.h": _IRQ,
        "kernel/log.h": _LOG,
    },
    "kernel/mcpd/http_task.cpp": {
        "kernel/arch/aarch64/cpu.h": _IRQ,
        "kernel/bootargs.h": _BOOTARGS,
        "kernel/clock.h": _CLOCK,
        "kernel/log.h": _LOG,
        "kernel/mm/kheap.h": _HEAP,
        "kernel/net/endpoint.h": _NET_STATUS,
        "kernel/net/net_status.h": _NET_STATUS,
        "kernel/panic.h": _PANIC,
        "kernel/audit/trail.h": _TRAIL_WRITER,
    },
    "kernel/mcpd/kernel_resources.cpp": {
        "kernel/arch/aarch64/cpu.h": _IRQ,
        "kernel/audit/trail.h": _TRAIL_WRITER,
        "kernel/log.h": _LOG,
        "kernel/mm/kheap.h": _HEAP,
    },
    "kernel/mcpd/provenance_log.cpp": {
        "kernel/ipc/task_slots.h": _TRAIL_WRITER,
        "kernel/arch/aarch64/cpu.h": _IRQ,
        "kernel/clock.h": _CLOCK,
    },
    "kernel/mcpd/serial_task.cpp": {
        "kernel/bootargs.h": _BOOTARGS,
        "kernel/log.h": _LOG,
        "kernel/audit/trail.h": _TRAIL_WRITER,
    },
    "kernel/mcpd/sink_gate.cpp": {
        "kernel/arch/aarch64/cpu.h": _IRQ,
        "kernel/bootargs.h": _BOOTARGS,
        "kernel/clock.h": _CLOCK,
    },
    "kernel/mcpd/tool_context.cpp": {
        "kernel/clock.h": _CLOCK,
    },
    "kernel/mcpd/tool_exec.cpp": {
        "kernel/arch/aarch64/cpu.h": _IRQ,
        "kernel/clock.h": _CLOCK,
        "kernel/log.h": _LOG,
        "kernel/mm/kheap.h": _HEAP,
    },
    "kernel/mcpd/tool_exec_poll.cpp": {
        "kernel/clock.h": _CLOCK,
        "kernel/log.h": _LOG,
        "kernel/mm/kheap.h": _HEAP,
    },
    "kernel/mcpd/tool_job.cpp": {
        "kernel/mm/kheap.h": _HEAP,
    },
    "kernel/mcpd/tool_task.cpp": {
        "kernel/clock.h": _CLOCK,
    },
    "kernel/mcpd/tools/fault/test_fault.cpp": {
        "kernel/fault_injection.h": _FAULTS,
        "kernel/mm/kheap.h": _HEAP,
    },
    "kernel/mcpd/tools/kernel/kernel_diagnose.cpp": {
        "kernel/clock.h": _TIMING,
        "kernel/log.h": _LOG,
    },
    "kernel/mcpd/tools/kernel/kernel_perf.cpp": {
        "drivers/generic_timer.h": _TIMING,
    },
    "kernel/mcpd/tools/profile.cpp": {
        "kernel/bootargs.h": _BOOTARGS,
    },
    "kernel/mcpd/tools/tool_table.cpp": {
        "kernel/log.h": _LOG,
    },
    "kernel/mcpd/tools/vector/vector_family.cpp": {
        "kernel/mm/kheap.h": _HEAP,
    },
    "kernel/mcpd/tools/vector/vector_upsert.cpp": {
        "kernel/log.h": _LOG,
    },
    "kernel/net/net_task.cpp": {
        "drivers/nic.h": _NET,
        "kernel/bootargs.h": _BOOTARGS,
        "kernel/cap/kcap.h": _NET,
        "kernel/ipc/sync.h": _NET,
        "kernel/log.h": _LOG,
        "kernel/mm/kheap.h": _NET,
        "kernel/panic.h": _NET,
        "kernel/platform.h": _NET,
    },
    "kernel/shell.cpp": {
        "drivers/generic_timer.h": _SHELL,
        "drivers/genet/genet.h": _SHELL,
        "drivers/pl011.h": _SHELL,
        "drivers/virtio/virtio_net.h": _SHELL,
        "kernel/arch/aarch64/cpu.h": _SHELL,
        "kernel/audit/syscall_log.h": _SHELL,
        "kernel/bootargs.h": _BOOTARGS,
        "kernel/cap/kcap.h": _SHELL,
        "kernel/clock.h": _SHELL,
        "kernel/console.h": _SHELL,
        "kernel/fault_injection.h": _SHELL,
        "kernel/irq.h": _SHELL,
        "kernel/log.h": _LOG,
        "kernel/mcpd/console_desk.h": _SHELL,
        "kernel/mcpd/sink_gate.h": _SHELL,
        "kernel/net/endpoint.h": _SHELL,
        "kernel/net/net_status.h": _SHELL,
        "kernel/panic.h": _SHELL,
        "kernel/platform.h": _SHELL,
        "kernel/power.h": _SHELL,
        "kernel/sched/scheduler.h": _SHELL,
        "kernel/shell.h": _SHELL,
        "kernel/syscall/dispatch.h": _SHELL,
        "kernel/syscall/handlers.h": _SHELL,
    },
    "kernel/storage/checkpointer.cpp": {
        "kernel/log.h": _LOG,
        "kernel/audit/trail.h": _TRAIL,
    },
    "kernel/storage/storage_task.cpp": {
        "kernel/bootargs.h": _BOOTARGS,
        "kernel/log.h": _LOG,
    },
    "kernel/vector/worker.cpp": {
        "drivers/generic_timer.h": _WORKER,
        "kernel/clock.h": _WORKER,
        "kernel/log.h": _LOG,
        "kernel/mm/kheap.h": _WORKER,
        "kernel/sched/scheduler.h": _WORKER,
        "kernel/syscall/vector_alloc.h": _WORKER,
    },
}


# What any task may include: the system call ABI, the portable libraries and the portable MCP layer
# (mcp/: built into the kernel and tested on the host, it includes no kernel header itself).
PORTABLE = ("abi/", "lib/", "mcp/")


def included(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
            if m:
                yield m.group(1), m.group(2)


def resolve(root, path, kind, name):
    """The repository path of a project header, or None for a library/system header."""
    if kind == '"':
        here = os.path.normpath(os.path.join(os.path.dirname(path), name))
        if os.path.exists(os.path.join(root, here)):
            return here
    for base in ("", "lib"):
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.exists(os.path.join(root, candidate)):
            return candidate
    return None


def allowed(source, header):
    if header is None or header.startswith(PORTABLE):
        return True
    # A task-side folder is one program: its files include each other's headers, subfolders too
    # (kernel/mcpd/tools/vector/ includes kernel/mcpd/tool_exec.h).
    for entry in TASK_SIDE:
        if source.startswith(entry + "/") and header.startswith(entry + "/"):
            return True
    # A file's own folder, but not kernel/ itself: everything there is kernel-internal.
    return os.path.dirname(source) != "kernel" and os.path.dirname(header) == os.path.dirname(source)


def files(root):
    for entry in TASK_SIDE:
        full = os.path.join(root, entry)
        if os.path.isdir(full):
            for folder, subfolders, names in os.walk(full):
                subfolders.sort()
                for name in sorted(names):
                    if name.endswith((".cpp", ".h")):
                        yield os.path.relpath(os.path.join(folder, name), root)
        else:
            yield entry


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    problems = []
    seen = {}
    for source in files(root):
        for kind, name in included(os.path.join(root, source)):
            header = resolve(root, source, kind, name)
            if allowed(source, header):
                continue
            seen.setdefault(source, set()).add(header)
            if header not in EXCEPTIONS.get(source, {}):
                problems.append(f"{source}: includes the kernel-internal {header} (use abi/ or lib/)")
    for source, headers in sorted(EXCEPTIONS.items()):
        for header in headers:
            if header not in seen.get(source, set()):
                problems.append(f"{source}: no longer includes {header}: remove it from EXCEPTIONS")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"task-side includes: {sum(1 for _ in files(root))} files checked, "
          f"{sum(len(h) for h in EXCEPTIONS.values())} known exceptions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
