#!/usr/bin/env python3
"""Kernel core scenario: the in-kernel tests (boot argument ktest=all) run as tasks through the
real system calls: preemptive fairness, mutex/semaphore/event semantics, 100,000 queued
messages in order, a stack overflow killed while the rest keep running, capability refusals
audited, single-use execution tokens, FP/SIMD state across switches, memory-region policies, timers and object destruction,
the vector index built bit-identically to the host (NEON and scalar), the vector store
service (collections behind capabilities, parallel searches), the named store and the
one-collection grants vector tools run under, task_kill on running, sleeping and blocked tasks,
the system-call budget of a task (sleep still works past it), everything a faulting task held
reclaimed (heap, objects, a held mutex) and no zombie left by a killed blocked task,
canonical's Raft engine electing, committing and failing over
between three in-kernel members over the wire format, and the cost figures."""
import re

from harness import Qemu, check, main

CASES = ["sched", "sync", "queue", "stack", "caps", "token", "fp", "regions", "timer", "hnsw", "vectors", "vecgrant", "kill", "budget", "reclaim", "raft", "raftreplace", "bench"]


def test(args):
    q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2, append="ktest=all")
    try:
        for name in CASES:
            m = q.expect(rf"ktest: {name} (PASS|FAIL)\n", timeout=60)
            check(m.group(1) == "PASS", f"in-kernel test '{name}' failed:\n" + q.output[-2500:])
        m = q.find(r"iterations (\d+) (\d+) (\d+) (\d+); min/max ([\d.]+)")
        counts = [int(m.group(i)) for i in range(1, 5)]
        check(min(counts) > 0 and min(counts) / max(counts) >= 0.8, f"unfair: {counts}")
        q.find(r"task 'overflow' killed: stack overflow \(guard page hit\)")
        q.find(r"100000 messages in order, none lost")
        m = q.find(r"syscall round trip (\d+) ns .*ping-pong (\d+) ns per switch")
        print(f"syscall round trip {m.group(1)} ns, context switch {m.group(2)} ns (QEMU TCG)")
        for isa in ("neon", "scalar"):
            q.find(rf"golden \({isa}\): snapshot 85312 bytes crc 87e56459, nearest id 831")
        m = q.find(r"(\d+) queries/s with NEON, (\d+) scalar")
        print(f"in-kernel HNSW search: {m.group(1)} q/s NEON, {m.group(2)} q/s scalar (QEMU TCG)")
        m = q.find(r"vectors: (\d+) inserted in (\d+) ms, recall@10 ([\d.]+)")
        check(float(m.group(3)) >= 0.9, f"vector store recall {m.group(3)}")
        print(f"vector store in the kernel: {m.group(1)} vectors inserted in {m.group(2)} ms, recall@10 {m.group(3)}")
        m = q.find(r"raft: leader \d+ elected in (\d+) ms, 50 commands applied on 3 members in (\d+) ms; .* (\d+) elected in (\d+) ms")
        print(f"Raft in the kernel: elected in {m.group(1)} ms, 50 commands in {m.group(2)} ms, failover {m.group(4)} ms")
        q.expect(rf"ktest summary: {len(CASES)} passed, 0 failed")
        status = q.wait_exit(timeout=20)
        check(status == 0, f"exit status {status}")
    finally:
        q.kill()


if __name__ == "__main__":
    main(test)
