#!/usr/bin/env python3
"""`./basalt flash --device` (boot/sdcard.sh, boot/card_write.py) against loop devices standing in
for cards (needs root and loop devices; skipped, exit 77, without them). Loop devices are not removable: the test
sets BASALT_FLASH_TEST_LOOP_AS_CARD, which lets a loop device count as removable and waives
nothing else, and checks first that without it a loop device is refused.
  - The card written is the one checked: a symbolic link retargeted to another loop device while
    the prompt waits leaves that other device untouched; a loop device re-attached to another
    file while the prompt waits (a card swapped in the reader) is refused, nothing written.
  - A loop device used as swap, and one whose partition is mounted, are refused; with the kernel's
    device-mapper, one held by a dm-linear device too.
  - The read-back reads the card, not the page cache: with the writer stopped between write and
    read-back, the test fills the page cache with the written data, then changes the backing
    file underneath; the difference is reported.
  - Disks that loop devices cannot imitate, judged by boot/card_check.py on a made-up sysfs:
    holders (LVM on the disk, md on a partition), an eMMC, root on dm-crypt on LVM on a
    partition, an ESP known only to /etc/fstab; an SD card in a laptop's slot is accepted.
Everything made here (loop devices, swap, mounts, dm devices, files) is undone even on failure."""
import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from harness import ROOT, check, main

sys.path.insert(0, os.path.join(ROOT, "boot"))
from card_check import Host  # noqa: E402

SDCARD = os.path.join(ROOT, "boot", "sdcard.sh")
MIB = 1 << 20
IMAGE_BYTES = 65 * MIB  # --size 64 plus 1 MiB for the partition table


def sh(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


class Scratch:
    """Files, loop devices, swap and mounts of one test, each undone by the ExitStack."""

    def __init__(self, stack, folder):
        self.stack, self.folder = stack, folder

    def file(self, name, mib=80):
        path = os.path.join(self.folder, name)
        with open(path, "wb") as f:
            f.truncate(mib * MIB)
        return path

    def loop(self, backing, partscan=False):
        dev = sh("losetup", "--find", "--show", *(["--partscan"] if partscan else []), backing)
        self.stack.callback(subprocess.run, ["losetup", "--detach", dev], capture_output=True)
        return dev

    def swap(self, dev):
        sh("mkswap", dev)
        sh("swapon", dev)
        self.stack.callback(subprocess.run, ["swapoff", dev], capture_output=True)

    def mount(self, dev, where):
        os.makedirs(where)
        sh("mount", dev, where)
        self.stack.callback(subprocess.run, ["umount", where], capture_output=True)


class Flash:
    """One `boot/sdcard.sh --device` run (it execs card_write.py: this PID is the writer's)."""

    def __init__(self, image, device, *extra, loop_as_card=True, env=()):
        environment = dict(os.environ, **dict(env))
        environment.pop("BASALT_FLASH_TEST_LOOP_AS_CARD", None)
        if loop_as_card:
            environment["BASALT_FLASH_TEST_LOOP_AS_CARD"] = "1"
        self.proc = subprocess.Popen([SDCARD, "--board", "rpi4", "--out", image, "--device", device, *extra],
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     env=environment)
        self.err = ""

    def until(self, text, timeout=60):
        deadline = time.monotonic() + timeout
        while text not in self.err:
            left = deadline - time.monotonic()
            check(left > 0, f"never said {text!r}: {self.err!r}")
            if select.select([self.proc.stderr], [], [], min(left, 0.5))[0]:
                chunk = os.read(self.proc.stderr.fileno(), 65536)
                check(chunk, f"ended before saying {text!r}: {self.err!r}")
                self.err += chunk.decode(errors="replace")

    def answer(self, line):
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def finish(self, timeout=120):
        self.proc.stdin.close()
        self.err += self.proc.stderr.read().decode(errors="replace")
        return self.proc.wait(timeout)

    def kill(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.proc.kill()
            self.proc.wait()


def head(path, n=IMAGE_BYTES):
    with open(path, "rb") as f:
        return f.read(n)


def is_zero(path):
    with open(path, "rb") as f:
        return not f.read().strip(b"\0")


def refused(scratch, image, device, why, **kw):
    f = Flash(image, device, "--yes", **kw)
    scratch.stack.callback(f.kill)
    status = f.finish()
    check(status == 2 and why in f.err, f"{device}: expected a refusal naming {why!r}, got exit {status}: {f.err!r}")
    return f


def retargeted_link(scratch, image):
    """The link names card A at the checks and card B when the name is typed: A is written."""
    a_file, b_file = scratch.file("a.img"), scratch.file("b.img")
    a, b = scratch.loop(a_file), scratch.loop(b_file)
    link = os.path.join(scratch.folder, "card")
    os.symlink(a, link)
    f = Flash(image, link)
    scratch.stack.callback(f.kill)
    f.until("Type the device name")
    os.symlink(b, link + ".new")
    os.replace(link + ".new", link)
    f.answer(link)
    status = f.finish()
    check(status == 0 and "read back from the card: identical" in f.err, f"flash through a link: exit {status}: {f.err!r}")
    check(head(a_file) == head(image), "the device checked (A) does not hold the image")
    check(is_zero(b_file), "the link's new target (B) was written")


def swapped_card(scratch, image):
    """The loop device re-attached to another file during the prompt: a new disk sequence number."""
    first, second = scratch.file("first.img"), scratch.file("second.img")
    dev = scratch.loop(first)
    if not os.path.exists(f"/sys/class/block/{os.path.basename(dev)}/diskseq"):
        print("(no disk sequence numbers before Linux 5.15: a swapped card is not told apart here)")
        return
    f = Flash(image, dev)
    scratch.stack.callback(f.kill)
    f.until("Type the device name")
    sh("losetup", "--detach", dev)
    sh("losetup", dev, second)
    f.answer(dev)
    status = f.finish()
    check(status == 2 and "the card changed while waiting" in f.err, f"swapped card: exit {status}: {f.err!r}")
    check(is_zero(first) and is_zero(second), "a swapped card was written")


def read_back_reads_the_card(scratch, image):
    backing = scratch.file("cached.img")
    dev = scratch.loop(backing)
    f = Flash(image, dev, "--yes", env={"BASALT_FLASH_TEST_PAUSE": "readback"})
    scratch.stack.callback(f.kill)
    _, how = os.waitpid(f.proc.pid, os.WUNTRACED)
    if not os.WIFSTOPPED(how):
        check(False, f"the writer did not stop before its read-back: {f.proc.stderr.read()!r}")
    # The written data into the device's page cache, then the card's content changed under it.
    with open(dev, "rb") as cache:
        check(cache.read(IMAGE_BYTES) == head(image), "the device does not hold the image after the write")
    spot = 3 * MIB + 4096
    with open(backing, "r+b") as card:
        card.seek(spot)
        card.write(b"\xa5" * 512)
        card.flush()
        os.fsync(card.fileno())
    os.kill(f.proc.pid, signal.SIGCONT)
    status = f.finish()
    check(status == 1 and f"differs from the image after writing (first at byte {spot})" in f.err,
          f"a card changed behind the page cache: exit {status}: {f.err!r}")


def held_by_dm(scratch, image):
    if not shutil.which("dmsetup") or subprocess.run(["dmsetup", "version"], capture_output=True).returncode != 0:
        print("(no device-mapper in this kernel: dm holders judged on the made-up sysfs only)")
        return
    dev = scratch.loop(scratch.file("held.img"))
    name = f"basalt-flash-test-{os.getpid()}"
    subprocess.run(["dmsetup", "create", name], input=f"0 {80 * 2048} linear {dev} 0\n", text=True, check=True,
                   capture_output=True)
    scratch.stack.callback(subprocess.run, ["dmsetup", "remove", name], capture_output=True)
    refused(scratch, image, dev, f"({name}) (LVM, dm-crypt, md or the like)")


def made_up_machine(folder):
    """A sysfs, mount table, swap list and fstab of a machine the test cannot be: judged only."""
    sysfs, dev = os.path.join(folder, "sys"), os.path.join(folder, "dev")
    numbers = {}

    def block(path, number, removable="0", mmc_type=None, dm_name=None, holders=(), slaves=()):
        node = os.path.join(sysfs, "devices", path)
        name = os.path.basename(path)
        os.makedirs(os.path.join(node, "holders"))
        os.makedirs(os.path.join(node, "slaves"))
        for fname, text in (("dev", number), ("removable", removable), ("size", str(1 << 22))):
            with open(os.path.join(node, fname), "w") as f:
                f.write(text + "\n")
        if path.count("/") > 0:
            open(os.path.join(node, "partition"), "w").close()
        if mmc_type:
            os.makedirs(os.path.join(node, "device"))
            with open(os.path.join(node, "device", "type"), "w") as f:
                f.write(mmc_type + "\n")
        if dm_name:
            os.makedirs(os.path.join(node, "dm"))
            with open(os.path.join(node, "dm", "name"), "w") as f:
                f.write(dm_name + "\n")
        for h in holders:
            open(os.path.join(node, "holders", h), "w").close()
        for s in slaves:
            open(os.path.join(node, "slaves", s), "w").close()
        for link in (os.path.join(sysfs, "class", "block", name), os.path.join(sysfs, "dev", "block", number)):
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink(node, link)
        numbers[name] = number

    block("sda", "8:0", holders=["dm-0"])                       # an LVM physical volume, not mounted
    block("dm-0", "254:0", dm_name="vg-data", slaves=["sda"])
    block("sdb", "8:16", removable="1")
    block("sdb/sdb1", "8:17", holders=["md0"])                  # a removable disk in a RAID
    block("md0", "9:0", slaves=["sdb1"])
    block("mmcblk0", "179:0", mmc_type="MMC")                   # a board's or a laptop's eMMC
    block("mmcblk1", "179:8", mmc_type="SD")                    # a laptop's SD slot: removable 0
    block("sdc", "8:32", removable="1")
    block("sdc/sdc2", "8:34")
    block("dm-1", "254:1", dm_name="vg-root", slaves=["sdc2"])  # LVM on sdc2 ...
    block("dm-2", "254:2", dm_name="luks-root", slaves=["dm-1"])  # ... dm-crypt on it, root on that
    block("sdd", "8:48", removable="1")
    block("sdd/sdd1", "8:49")                                   # the ESP, automounted: only in fstab
    block("sde", "8:64", removable="1")                         # a card reader with a card
    os.makedirs(os.path.join(dev, "disk", "by-uuid"))
    os.symlink("../../sdd1", os.path.join(dev, "disk", "by-uuid", "ABCD-1234"))
    mountinfo = os.path.join(folder, "mountinfo")
    with open(mountinfo, "w") as f:
        f.write("25 1 254:2 / / rw,relatime - ext4 /dev/mapper/luks-root rw\n"
                "26 25 0:22 / /proc rw - proc proc rw\n"
                "27 25 0:40 / /boot/efi rw - autofs systemd-1 rw,fd=50\n")
    swaps = os.path.join(folder, "swaps")
    with open(swaps, "w") as f:
        f.write("Filename\tType\tSize\tUsed\tPriority\n")
    fstab = os.path.join(folder, "fstab")
    with open(fstab, "w") as f:
        f.write("# the ESP\nUUID=ABCD-1234 /boot/efi vfat umask=0077,x-systemd.automount 0 1\n")
    host = Host(sys=sysfs, mountinfo=mountinfo, swaps=swaps, fstab=fstab, dev=dev, loop_as_card=False)
    for name, why in (("sda", "is held by dm-0 (vg-data)"), ("sdb", "is held by md0"),
                      ("mmcblk0", "is an eMMC"), ("sdc", "holds the running system"),
                      ("sdd", "is in /etc/fstab (for /boot/efi"), ("sdb1", "is a partition")):
        verdict = host.refusal(numbers[name])
        check(verdict is not None and why in verdict, f"made-up {name}: {verdict!r}, expected {why!r}")
    for name in ("mmcblk1", "sde"):
        check(host.refusal(numbers[name]) is None, f"made-up {name}: refused: {host.refusal(numbers[name])!r}")


def test(args):
    with tempfile.TemporaryDirectory(prefix="basalt-flash-device-") as folder:
        made_up_machine(folder)
        if os.geteuid() != 0 or shutil.which("losetup") is None:
            print("SKIP: writing loop devices needs root and losetup")
            sys.exit(77)
        with contextlib.ExitStack() as stack:
            scratch = Scratch(stack, folder)
            image = os.path.join(folder, "sd.img")
            try:
                loop = scratch.loop(scratch.file("plain.img"))
            except subprocess.CalledProcessError as e:  # a container without loop devices
                print(f"SKIP: no loop device here: {e.stderr.strip()}")
                sys.exit(77)
            refused(scratch, image, loop, "is not a removable disk or SD card", loop_as_card=False)
            retargeted_link(scratch, image)
            swapped_card(scratch, image)
            swap = scratch.loop(scratch.file("swap.img"))
            scratch.swap(swap)
            refused(scratch, image, swap, "is used as swap")
            parted_file = scratch.file("parted.img")
            subprocess.run(["sfdisk", "-q", parted_file], input="start=2048, type=83\n", text=True, check=True)
            parted = scratch.loop(parted_file, partscan=True)
            if not os.path.exists(parted + "p1"):  # a kernel that does not read MBRs itself: told by partx
                sh("partx", "--add", parted)
            sh("mkfs.ext4", "-q", parted + "p1")
            where = os.path.join(folder, "mounted")
            scratch.mount(parted + "p1", where)
            refused(scratch, image, parted, f"is mounted (at {where})")
            held_by_dm(scratch, image)
            read_back_reads_the_card(scratch, image)
    print("flash --device: the checked device written (link retargeted and card swapped during the prompt), "
          "swap, mounted partition and non-removable refused, read-back from the card; made-up holders, eMMC, "
          "root on dm-crypt/LVM and an fstab ESP refused")


if __name__ == "__main__":
    main(test)
