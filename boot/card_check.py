"""Whether a whole disk may be erased by `./basalt flash --device`: the reason to refuse it, or
None. Everything is judged by device number (major:minor) through sysfs and /proc, never by a
name that could point elsewhere by the time the disk is written. Refused:
  - a partition (the card is given whole);
  - a disk that backs the running system, a mount, swap or an /etc/fstab entry (an automounted
    ESP is in fstab, not in the mount table, until something touches it), followed down through
    device-mapper and md (root on LVM or dm-crypt), partitions and loop devices' backing files;
  - a disk, or a partition of it, held by another driver (LVM, dm-crypt, md, bcache);
  - an eMMC (an mmc device of type MMC: soldered-in storage, often the system disk);
  - a disk the kernel does not call removable (a USB card reader does; an SD slot's mmc device of
    type SD counts as removable too).
Host carries the places it reads, so that tests can judge a made-up machine (tests/qemu/test_flash_device.py)."""
import os
import stat

# Loop devices stand in for cards in the tests (tests/qemu/test_flash_device.py): this lets a loop
# device count as removable. It waives nothing else: a loop device that is mounted, swap or held
# is refused all the same.
LOOP_AS_CARD_ENV = "BASALT_FLASH_TEST_LOOP_AS_CARD"
LOOP_MAJOR = 7


def majmin(rdev):
    return f"{os.major(rdev)}:{os.minor(rdev)}"


def _read(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def _unescape(field):
    """Mount tables write spaces, tabs, newlines and backslashes as octal escapes."""
    out, i = "", 0
    while i < len(field):
        code = field[i + 1:i + 4]
        if field[i] == "\\" and len(code) == 3 and code.isdigit():
            out += chr(int(code, 8))
            i += 4
        else:
            out += field[i]
            i += 1
    return out


class Host:
    def __init__(self, sys="/sys", mountinfo="/proc/self/mountinfo", swaps="/proc/swaps", fstab="/etc/fstab",
                 dev="/dev", loop_as_card=None):
        self.sys, self.mountinfo, self.swaps, self.fstab, self.dev = sys, mountinfo, swaps, fstab, dev
        self.loop_as_card = os.environ.get(LOOP_AS_CARD_ENV) == "1" if loop_as_card is None else loop_as_card

    # --- sysfs: a device's directory, found by number or by kernel name ---------------------------
    def node(self, mm):
        path = os.path.join(self.sys, "dev", "block", mm)
        return os.path.realpath(path) if os.path.exists(path) else None

    def node_named(self, name):
        path = os.path.join(self.sys, "class", "block", name)
        return os.path.realpath(path) if os.path.exists(path) else None

    @staticmethod
    def is_partition(node):
        return os.path.exists(os.path.join(node, "partition"))

    def disk_of(self, node):
        return os.path.dirname(node) if self.is_partition(node) else node

    @staticmethod
    def partitions(disk):
        try:
            entries = sorted(os.listdir(disk))
        except OSError:
            return []
        return [os.path.join(disk, e) for e in entries if os.path.exists(os.path.join(disk, e, "partition"))]

    @staticmethod
    def _links(node, what):
        try:
            return sorted(os.listdir(os.path.join(node, what)))
        except OSError:
            return []

    def path_majmin(self, path):
        """The device an absolute path names or lives on: a block node's own number, a file's
        filesystem; a device name that cannot be stat'ed here is looked up in sysfs by name."""
        if not path.startswith("/"):
            return None  # "proc", "tmpfs", "systemd-1": no device
        try:
            st = os.stat(path)
        except OSError:
            st = None
        if st is not None:
            return majmin(st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev)
        if path.startswith(("/dev/", self.dev + "/")):
            node = self.node_named(os.path.basename(os.path.realpath(path)))
            if node:
                return _read(os.path.join(node, "dev")) or None
        return None

    def backing_disks(self, mm, seen=None):
        """The whole disks under device mm: through partitions, stacked devices' slaves (dm, md)
        and loop devices' backing files."""
        seen = set() if seen is None else seen
        node = self.node(mm)
        if node is None or node in seen:
            return set()
        seen.add(node)
        disks = set()
        slaves = self._links(node, "slaves")
        for s in slaves:
            sub = self.node_named(s)
            if sub:
                disks |= self.backing_disks(_read(os.path.join(sub, "dev")), seen)
        backing = _read(os.path.join(node, "loop", "backing_file"))
        if backing:
            under = self.path_majmin(backing)
            if under:
                disks |= self.backing_disks(under, seen)
        if not slaves:
            disks.add(self.disk_of(node))
        return disks

    # --- what the machine uses ---------------------------------------------------------------------
    def uses(self):
        """(device number, why) for everything in use: the root filesystem first, then the other
        mounts, swap, fstab entries."""
        root, mounts = [], []
        for line in _read(self.mountinfo).splitlines():
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) < 5:
                continue
            where = _unescape(fields[4])
            numbers = [fields[2]]  # 0:N for filesystems without a device, or btrfs: then the source
            if len(tail) >= 2:
                numbers.append(self.path_majmin(_unescape(tail[1])))
            if where == "/":
                root += [(mm, "holds the running system (/ is on it)") for mm in numbers if mm]
            else:
                mounts += [(mm, f"is mounted (at {where})") for mm in numbers if mm]
        swaps = []
        for line in _read(self.swaps).splitlines()[1:]:
            fields = line.split()
            mm = self.path_majmin(_unescape(fields[0])) if fields else None
            if mm:
                swaps.append((mm, "is used as swap"))
        listed = []
        for line in _read(self.fstab).splitlines():
            fields = line.split()
            if len(fields) < 2 or fields[0].startswith("#"):
                continue
            mm = self.path_majmin(self.fstab_source(_unescape(fields[0])))
            if mm:
                listed.append((mm, f"is in /etc/fstab (for {_unescape(fields[1])}; it may be mounted on demand)"))
        return root + mounts + swaps + listed

    def fstab_source(self, spec):
        for tag, folder in (("UUID=", "by-uuid"), ("PARTUUID=", "by-partuuid"), ("LABEL=", "by-label"),
                            ("PARTLABEL=", "by-partlabel")):
            if spec.startswith(tag):
                return os.path.join(self.dev, "disk", folder, spec[len(tag):].strip('"'))
        return spec

    # --- the verdict -------------------------------------------------------------------------------
    def refusal(self, mm):
        """Why the disk numbered mm must not be erased, or None."""
        node = self.node(mm)
        if node is None:
            return "is not a disk this machine knows (no /sys/dev/block entry)"
        if self.is_partition(node):
            return "is a partition, not a whole disk (give the disk, e.g. /dev/sdb)"
        for used, why in self.uses():
            if node in self.backing_disks(used):
                return why
        for part in [node] + self.partitions(node):
            held = self._links(part, "holders")
            if held:
                names = ", ".join(self._holder_name(h) for h in held)
                return f"is held by {names} (LVM, dm-crypt, md or the like)"
        if os.path.basename(node).startswith("mmcblk") and _read(os.path.join(node, "device", "type")) == "MMC":
            return "is an eMMC (soldered-in storage, often the system disk), not an SD card"
        if not self.removable(node):
            return "is not a removable disk or SD card"
        return None

    def _holder_name(self, holder):
        node = self.node_named(holder)
        dm_name = _read(os.path.join(node, "dm", "name")) if node else ""
        return f"{holder} ({dm_name})" if dm_name else holder

    def removable(self, node):
        if _read(os.path.join(node, "removable")) == "1":
            return True
        # An SD slot on the SoC's or the laptop's own mmc host reports removable 0.
        if os.path.basename(node).startswith("mmcblk") and _read(os.path.join(node, "device", "type")) == "SD":
            return True
        return self.loop_as_card and _read(os.path.join(node, "dev")).split(":")[0] == str(LOOP_MAJOR)

    def size_bytes(self, node):
        return int(_read(os.path.join(node, "size"), "0")) * 512

    def model(self, node):
        device = os.path.join(node, "device")
        return (_read(os.path.join(device, "model")) or _read(os.path.join(device, "name"))
                or _read(os.path.join(node, "loop", "backing_file")) or "unknown model")

    def diskseq(self, node):
        return _read(os.path.join(node, "diskseq"))
