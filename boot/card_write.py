#!/usr/bin/env python3
"""Writes an SD-card image to a card for `./basalt flash --device` (boot/sdcard.sh execs it):
    card_write.py --image FILE --device PATH [--yes]
The path is resolved once; the checks (boot/card_check.py) judge the device number it resolves
to; after the prompt that device is opened once, exclusively, and written only if the opened
device is still the one checked: same major:minor, same disk sequence number (a card swapped in
the reader, or a loop device re-attached, gets a new one), and the checks still pass. The image
goes through that descriptor and nowhere else, with O_DIRECT, then fsync; the read-back uses
O_DIRECT too, so it reads the card rather than the page cache.

Exit status: 0 written and read back identical; 2 refused (nothing written); 1 the write or the
read-back failed. BASALT_FLASH_TEST_PAUSE=readback stops the process (SIGSTOP) between the write
and the read-back, for the test that changes the card behind the page cache's back."""
import argparse
import errno
import fcntl
import mmap
import os
import signal
import stat
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from card_check import Host, majmin  # noqa: E402

CHUNK = 4 << 20
BLKGETSIZE64 = 0x80081272
BLKSSZGET = 0x1268
BLKGETDISKSEQ = 0x80081280


class Refused(Exception):
    pass


def say(text, end="\n"):
    sys.stderr.write(f"flash: {text}{end}")
    sys.stderr.flush()


def ioctl_u64(fd, request):
    return struct.unpack("Q", fcntl.ioctl(fd, request, bytes(8)))[0]


def opened_diskseq(fd, host, node):
    try:
        return str(ioctl_u64(fd, BLKGETDISKSEQ))
    except OSError:  # kernels before 5.15: sysfs still names the disk's current sequence number
        return host.diskseq(node)


def confirm(device, size, host, node):
    sys.stderr.write(f"flash: write {size} bytes to {device} ({host.model(node)}), erasing it? "
                     f"Type the device name ({device}) to go on: ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip()
    if answer != device:
        raise Refused("not confirmed")


def open_checked(resolved, rdev, seq, host, device):
    """The descriptor to write through, once it is known to be the device that was checked."""
    try:
        fd = os.open(resolved, os.O_RDWR | os.O_EXCL | os.O_DIRECT | os.O_CLOEXEC)
    except OSError as e:
        if e.errno == errno.EBUSY:
            raise Refused(f"{device} is busy (mounted, swap or held by another driver): refusing")
        raise Refused(f"{device}: cannot open {resolved}: {e.strerror}")
    try:
        st = os.fstat(fd)
        if not stat.S_ISBLK(st.st_mode) or st.st_rdev != rdev:
            raise Refused(f"{device}: {resolved} is no longer the device checked ({majmin(rdev)}): nothing written")
        node = host.node(majmin(rdev))
        if opened_diskseq(fd, host, node) != seq:
            raise Refused(f"{device}: the card changed while waiting (another disk sequence number): nothing written")
        why = host.refusal(majmin(rdev))
        if why:
            raise Refused(f"{device} {why}: refusing")
        return fd
    except BaseException:
        os.close(fd)
        raise


def transfer(fd, image, size, device, read_back):
    """Writes the image through fd, or reads the card back through it and compares; aligned
    buffers (mmap) as O_DIRECT needs. Returns the offset of the first difference, or None."""
    buf = mmap.mmap(-1, CHUNK)
    tty = sys.stderr.isatty()
    with open(image, "rb") as src:
        done = 0
        while done < size:
            want = src.read(min(CHUNK, size - done))
            n = len(want)
            if read_back:
                got = os.preadv(fd, [memoryview(buf)[:n]], done)
                if got != n or buf[:n] != want:
                    first = next((i for i in range(got) if buf[i] != want[i]), got)
                    return done + first
            else:
                buf[:n] = want
                if os.pwritev(fd, [memoryview(buf)[:n]], done) != n:
                    raise OSError(errno.EIO, "short write")
            done += n
            if tty:
                say(f"{'read back' if read_back else 'written'} {done >> 20} of {size >> 20} MiB", end="\r")
    if tty:
        sys.stderr.write("\n")
    return None


def write_card(image, device, yes, host):
    size = os.stat(image).st_size
    resolved = os.path.realpath(device)  # the only resolution: every later step uses this path and its number
    try:
        st = os.stat(resolved)
    except OSError as e:
        raise Refused(f"{device}: {e.strerror}")
    if not stat.S_ISBLK(st.st_mode):
        raise Refused(f"{device} is not a block device")
    rdev = st.st_rdev
    node = host.node(majmin(rdev))
    why = host.refusal(majmin(rdev))
    if why:
        raise Refused(f"{device} {why}: refusing")
    if host.size_bytes(node) < size:
        raise Refused(f"{device} holds {host.size_bytes(node)} bytes, less than the image's {size}: refusing")
    seq = host.diskseq(node)
    if not yes:
        confirm(device, size, host, node)
    fd = open_checked(resolved, rdev, seq, host, device)
    try:
        sector = struct.unpack("i", fcntl.ioctl(fd, BLKSSZGET, bytes(4)))[0]
        if size % sector:
            raise Refused(f"{image}: {size} bytes is not a whole number of the card's {sector}-byte sectors")
        if ioctl_u64(fd, BLKGETSIZE64) < size:
            raise Refused(f"{device} is smaller than the image: refusing")
        try:
            transfer(fd, image, size, device, read_back=False)
            os.fsync(fd)
        except OSError as e:
            say(f"{device}: the write failed: {e.strerror}")
            return 1
        say(f"{device}: {size} bytes written and flushed; reading them back")
        if os.environ.get("BASALT_FLASH_TEST_PAUSE") == "readback":
            os.kill(os.getpid(), signal.SIGSTOP)
        try:
            differs = transfer(fd, image, size, device, read_back=True)
        except OSError as e:
            say(f"{device}: the read-back failed: {e.strerror}")
            return 1
    finally:
        os.close(fd)
    if differs is not None:
        say(f"{device} differs from the image after writing (first at byte {differs}): the card is faulty or not what it claims")
        return 1
    say(f"{device} written and read back from the card: identical")
    return 0


def main():
    p = argparse.ArgumentParser(description="write an SD-card image to a card, checked (./basalt flash --device)")
    p.add_argument("--image", required=True)
    p.add_argument("--device", required=True)
    p.add_argument("--yes", action="store_true", help="do not ask for the device name")
    args = p.parse_args()
    try:
        sys.exit(write_card(args.image, args.device, args.yes, Host()))
    except Refused as e:
        say(str(e))
        sys.exit(2)


if __name__ == "__main__":
    main()
