#!/usr/bin/env python3
"""Task-side code reaches the kernel only through the system call ABI: its files include abi/, lib/
(the portable libraries), the C++ headers and headers of their own folder, nothing else of the
kernel. The kernel-internal headers a task-side file still needs are listed below, each with the
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
]

# Known exceptions: the whole folder (not converted to the typed system calls yet) ...
EXCEPTED_FOLDERS = {
    # The MCP bridges and tool tasks move (tools/, pipeline/ work); converted after that merge.
    # Remove this entry then.
    "kernel/mcpd": "not converted yet: still sys::call and kernel-internal headers",
}

# ... and, per file, the kernel-internal headers it still needs and why.
_KTEST = "the in-kernel tests are white-box: they also check kernel internals directly"
_BOOTARGS = "boot options (ktest=, cluster=, disk=...) are read from the kernel's copy; no system call yet"
_LOG = "the kernel log (klog) is written directly; no system call for it yet"
_SHELL = "the kernel console's shell runs beside the kernel and shows its state (drivers, scheduler, the table)"
_CLUSTER = ("the cluster service is kernel-side as much as a task: cluster_info and cluster_ping are answered "
            "from its state in the kernel, and it registers its own capability object and task")
_NET = "the net task owns the lwIP stack and the NIC driver: kernel-side by nature"
_WORKER = "the vector workers run index work on the kernel objects vec_serve hands them (Collection*, pages)"
_TRAIL = "the audit trail's geometry (record size, bytes held) is read from its kernel object; no system call yet"
EXCEPTIONS = {
    "kernel/cluster/cluster_service.cpp": {
        "kernel/arch/aarch64/cpu.h": _CLUSTER,
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
    "kernel/ktest/runner.cpp": {
        "kernel/power.h": _KTEST,
    },
    "kernel/ktest/vector_tests.cpp": {
        "kernel/mm/kheap.h": _KTEST,
        "kernel/vector/collection.h": _KTEST,
        "kernel/vector/service.h": _KTEST,
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
        "kernel/version.h": _SHELL,
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
    if header is None or header.startswith("abi/") or header.startswith("lib/"):
        return True
    # A file's own folder, but not kernel/ itself: everything there is kernel-internal.
    return os.path.dirname(source) != "kernel" and os.path.dirname(header) == os.path.dirname(source)


def files(root):
    for entry in TASK_SIDE:
        full = os.path.join(root, entry)
        if os.path.isdir(full):
            for name in sorted(os.listdir(full)):
                if name.endswith((".cpp", ".h")):
                    yield os.path.join(entry, name)
        else:
            yield entry


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    problems = []
    seen = {}
    for source in files(root):
        if any(source.startswith(folder + "/") for folder in EXCEPTED_FOLDERS):
            continue
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
          f"{sum(len(h) for h in EXCEPTIONS.values())} known exceptions, "
          f"{len(EXCEPTED_FOLDERS)} folder(s) excepted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
