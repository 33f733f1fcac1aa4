#!/usr/bin/env bash
# Builds a bootable Raspberry Pi SD-card image in a file, without root or loop mounts: an MBR
# with one FAT32 partition (sfdisk on the file; mkfs.fat and mtools on the partition), holding
#   Pi 4: start4.elf and fixup4.dat (Debian's raspi-firmware), the BCM2711 device trees (Debian's
#         arm64 kernel: Pi 4 B, 400, CM4), kernel8.img, config.txt, cmdline.txt. Basalt routes
#         the PL011 UART0 to GPIO 14/15 itself (Debian ships no disable-bt overlay)
#   Pi 5: kernel_2712.img, bcm2712-rpi-5-b.dtb, config.txt, cmdline.txt (its EEPROM bootloader
#         needs no start*.elf)
# and, when build/model/basalt-embed.bin exists (./basalt build makes it), the embedder's model,
# which the firmware loads beside the kernel as config.txt's initramfs (docs/documents.md);
# then, with --device, writes it to a card. Called by `./basalt flash` (which builds the images
# first); the inputs come from build/kernel and .deps (toolchain/bootstrap.sh).
# Options:
#   --board rpi4|rpi5      which Pi (required)
#   --out FILE             the image file to write (default build/sd-BOARD.img)
#   --append "ARGS"        boot arguments for cmdline.txt (e.g. "mcp=serial" to make the UART an
#                          MCP line instead of the console shell); key= and cluster_key= are
#                          refused (secrets in clear: use --key)
#   --key ROLE:PRINCIPAL:SECRET
#                          an MCP API key (repeatable): only its SHA-256 goes on the card
#                          (key_sha256=); the client configuration with the secret is printed once
#   --size MIB             the FAT32 partition's size (64..4096, default 64)
#   --model FILE           the embedder's model to put on the card (default build/model/basalt-embed.bin
#                          when it exists); --no-model: none
#   --device /dev/sdX      also write the image to this card (boot/card_write.py): refused if it is
#                          a partition, backs the running system, a mount, swap or an fstab entry,
#                          is held by LVM, dm-crypt or md, is an eMMC or is not removable; asks for
#                          the name typed back, writes the device it checked and reads it back
#                          from the card
#   --yes                  with --device: do not ask
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kdir="$root/build/kernel"
deps="$root/.deps"

board="" out="" append="" size_mib=64 device="" yes=0 model="$root/build/model/basalt-embed.bin" model_given=0
keys=()
die() { echo "flash: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --board) board=${2:-}; shift 2 ;;
    --out) out=${2:-}; shift 2 ;;
    --append) append="$append ${2:-}"; shift 2 ;;
    --key) keys+=("${2:-}"); shift 2 ;;
    --size) size_mib=${2:-}; shift 2 ;;
    --model) model=${2:-}; model_given=1; shift 2 ;;
    --no-model) model=""; shift ;;
    --device) device=${2:-}; shift 2 ;;
    --yes) yes=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
case "$board" in rpi4|rpi5) ;; *) die "--board must be rpi4 or rpi5" ;; esac
case "$size_mib" in ''|*[!0-9]*) die "--size takes MiB" ;; esac
[ "$size_mib" -ge 64 ] && [ "$size_mib" -le 4096 ] || die "--size must be 64..4096 MiB (FAT32 needs at least 64)"
[ -n "$out" ] || out="$root/build/sd-$board.img"
for tool in sfdisk mkfs.fat mcopy mdir sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is missing (toolchain/bootstrap.sh installs it)"
done

# What goes on the card.
if [ "$board" = rpi4 ]; then
  kernel=kernel8.img
  files=("$kdir/kernel8.img" "$deps/raspi-firmware/start4.elf" "$deps/raspi-firmware/fixup4.dat"
         "$deps/pi-dtbs/bcm2711-rpi-4-b.dtb" "$deps/pi-dtbs/bcm2711-rpi-400.dtb" "$deps/pi-dtbs/bcm2711-rpi-cm4-io.dtb")
else
  kernel=kernel_2712.img
  files=("$kdir/kernel_2712.img" "$deps/pi-dtbs/bcm2712-rpi-5-b.dtb")
fi
for f in "${files[@]}"; do [ -s "$f" ] || die "missing $f (./basalt build; toolchain/bootstrap.sh)"; done
if [ -n "$model" ] && [ ! -s "$model" ]; then
  [ $model_given = 1 ] && die "--model $model: no such file"
  model="" # (not built: the card runs without one, and says so in kernel://status)
fi

# Keys: "ROLE:PRINCIPAL:SECRET" -> key_sha256=ROLE:PRINCIPAL:HEX on the card, the secret printed once.
printed=()
for k in "${keys[@]}"; do
  IFS=: read -r role principal secret <<<"$k"
  case "$role" in admin|operator|reader) ;; *) die "--key must be ROLE:PRINCIPAL:SECRET with ROLE admin, operator or reader" ;; esac
  [[ $principal =~ ^[A-Za-z0-9._-]{1,31}$ ]] || die "--key: the principal must be 1..31 letters, digits, . _ -"
  [ ${#secret} -ge 16 ] && [ ${#secret} -le 256 ] || die "--key: the secret must be 16..256 bytes"
  [[ $secret =~ ^[!-~]+$ ]] || die "--key: the secret must be printable ASCII without spaces"
  digest=$(printf '%s' "$secret" | sha256sum | cut -d' ' -f1)
  append="$append key_sha256=$role:$principal:$digest"
  printed+=("$principal ($role): $secret")
done
append="${append# }"
case "$append" in *$'\n'*) die "--append takes one line" ;; esac
# A card can be read by anyone who holds it: no secret goes on it in clear.
read -ra tokens <<<"$append" # split as the kernel does (spaces, tabs), without globbing
for token in "${tokens[@]}"; do
  case "$token" in
    key=*) die "--append: key= would put the API key's secret on the card in clear; use --key ROLE:PRINCIPAL:SECRET (only its SHA-256 goes on the card)" ;;
    cluster_key=*) die "--append: cluster_key= would put the cluster secret on the card in clear; a card takes none (the Pi has no network driver to join a cluster with)" ;;
  esac
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/fat"
cp "${files[@]}" "$work/fat/"
# The CM4's firmware looks for bcm2711-rpi-cm4.dtb; Debian's tree for it is named after its IO board.
[ "$board" = rpi4 ] && cp "$deps/pi-dtbs/bcm2711-rpi-cm4-io.dtb" "$work/fat/bcm2711-rpi-cm4.dtb"
{
  echo "# Basalt ($board), written by ./basalt flash"
  echo "arm_64bit=1"
  echo "kernel=$kernel"
  echo "kernel_address=0x80000"
  echo "enable_uart=1"
  # The embedder's model, loaded by the firmware beside the kernel (its place in /chosen).
  [ -z "$model" ] || echo "initramfs basalt-embed.bin followkernel"
} >"$work/fat/config.txt"
[ -z "$model" ] || cp "$model" "$work/fat/basalt-embed.bin"
printf '%s\n' "$append" >"$work/fat/cmdline.txt"

# The FAT32 partition as a file, then the disk: 1 MiB for the MBR and alignment, then it.
part="$work/part.img"
mkfs.fat -F 32 -n BASALT -C "$part" $((size_mib * 1024)) >/dev/null
mcopy -i "$part" "$work/fat/"* ::/
mkdir -p "$(dirname "$out")"
rm -f "$out"
truncate -s $(((size_mib + 1) * 1024 * 1024)) "$out"
printf 'label: dos\nstart=2048, size=%d, type=c, bootable\n' $((size_mib * 2048)) | sfdisk -q "$out" >/dev/null
dd if="$part" of="$out" bs=1M seek=1 conv=notrunc status=none
echo "flash: $out: $((size_mib + 1)) MiB, one FAT32 partition with: $(ls "$work/fat" | tr '\n' ' ')" >&2
echo "flash: cmdline.txt: \"$append\"" >&2
for p in "${printed[@]}"; do
  echo "flash: API key for $p   (shown once: only its SHA-256 is on the card)" >&2
done

[ -n "$device" ] || exit 0

# Writing a card: boot/card_write.py resolves the path once, refuses anything that could be the
# wrong disk, asks, then writes through the one descriptor it opened and reads back from the card.
rm -rf "$work"
trap - EXIT
write=(python3 "$root/boot/card_write.py" --image "$out" --device "$device")
[ $yes = 0 ] || write+=(--yes)
exec "${write[@]}"
