#!/usr/bin/env python3
"""Network link scenario, below any IP stack: with a virtio-net device on QEMU's user network,
the kernel finds it in the device tree, reads its MAC, and (boot argument netcheck) sends an
ARP request for the gateway 10.0.2.2 through the raw driver; the reply must come back
through the receive interrupt. Run on the legacy (v1) and the modern (v2) virtio-mmio transport;
the second boot also passes a malformed `ip=`, which must leave the interface down (the raw
driver still works) rather than fall back to DHCP."""
from harness import Qemu, check, main

# slirp's fixed MAC for its virtual hosts (10.0.2.2); run.sh gives passt, the default user-mode
# network, the same one for its gateway.
SLIRP_GATEWAY_MAC = "52:55:0a:00:02:02"
QEMU_DEFAULT_MAC = "52:54:00:12:34:56"


def boot(args, modern, append="netcheck"):
    run_args = ["--net"] + (["--virtio-modern"] if modern else [])
    q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2, append=append, run_args=run_args)
    try:
        kind = "modern" if modern else "legacy"
        m = q.expect(rf"virtio-net: vn0, (\w+) transport @ 0x([0-9a-f]+) intid (\d+), mac ([0-9a-f:]+), features 0x([0-9a-f]+)")
        check(m.group(1) == kind, f"expected the {kind} transport, the kernel says {m.group(1)}")
        # The first -device lands in the highest of virt's 32 slots, whose SPI is 47 (INTID 79).
        check(m.group(2) == "a003e00" and m.group(3) == "79", f"slot/irq from the DTB: {m.group(0)}")
        check(m.group(4) == QEMU_DEFAULT_MAC, f"MAC from config space: {m.group(4)}")
        features = int(m.group(5), 16)
        check(bool(features & (1 << 5)), "VIRTIO_NET_F_MAC not negotiated")
        check(bool(features & (1 << 32)) == modern, f"VIRTIO_F_VERSION_1 negotiated={bool(features & (1 << 32))}")
        m = q.expect(r"netcheck: 10\.0\.2\.2 is at ([0-9a-f:]+) \(tx (\d+), rx (\d+), irqs (\d+)\)", timeout=15)
        check(m.group(1) == SLIRP_GATEWAY_MAC, f"gateway MAC {m.group(1)}")
        check(int(m.group(2)) >= 1 and int(m.group(3)) >= 1, f"frame counts {m.group(0)}")
        check(int(m.group(4)) >= 1, "no virtio interrupt was taken")
        print(f"{kind}: gateway {m.group(1)} learned (tx {m.group(2)}, rx {m.group(3)}, irqs {m.group(4)})")
        if "ip=" in append:  # a malformed address keeps the interface down, loudly, without DHCP
            q.expect(r"net: ip=10\.0\.2\.15 is not dhcp or A\.B\.C\.D/N\[,gw=A\.B\.C\.D\]; the network stays down")
            q.send("log 50\n")
            q.expect(r"basalt> ")
            check("net: dhcp" not in q.output, "DHCP ran despite the malformed ip= argument")
        q.send("poweroff\n")
        status = q.wait_exit(timeout=10)
        check(status == 0, f"exit status {status}")
    finally:
        q.kill()


def test(args):
    boot(args, modern=False)
    boot(args, modern=True, append="netcheck ip=10.0.2.15")  # no prefix: refused


if __name__ == "__main__":
    main(test)
