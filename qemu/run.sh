#!/usr/bin/env bash
# Boots a Basalt kernel on QEMU virt (or the Raspberry Pi 4 image on QEMU raspi4b) with the
# serial console on this terminal.
# Options:
#   --board virt|rpi4    the machine (default virt). rpi4: QEMU 10's raspi4b with kernel8.img,
#                        2 GiB, the PL011 UART0 as console and MCP line; it has no network device
#                        for Basalt and no entropy source (GENET and RNG200 are absent from QEMU)
#   --dtb PATH           (rpi4) the firmware's device tree, e.g. Debian's bcm2711-rpi-4-b.dtb;
#                        without it the image's built-in tree describes the board
#   --kernel PATH        kernel image (default build/kernel/basalt.elf, rpi4: build/kernel/kernel8.img)
#   --cpu NAME           cortex-a53 | cortex-a72 | cortex-a76 (default cortex-a72)
#   --gic 2|3            GIC version (default 3)
#   --el2                start the kernel at EL2 (virtualization=on); it drops to EL1
#   --memory SIZE        guest RAM (default 512M)
#   --smp N              virt's cores (1..8, default 1): the kernel starts them all through PSCI;
#                        the others wait in WFI until the scheduler runs on them (docs/kernel.md)
#   --append "ARGS"      extra kernel boot arguments
#   --semihosting        let the kernel report its exit status to QEMU (used by tests)
#   --stdio              MCP on the serial line: stdin/stdout carry newline-delimited JSON-RPC
#                        and nothing else (register this command as a stdio MCP server); ends
#                        one second after stdin closes, or at once on SIGTERM/SIGINT
#   --line virtio|uart   with --stdio, what carries the line: a virtio console port (default;
#                        one VM exit per buffer, the fast path) or the PL011 UART (as on a Pi;
#                        ~5 us per byte under QEMU)
#   --key ROLE:SECRET    an MCP API key (repeatable; also ROLE:PRINCIPAL:SECRET; secret 16..256
#                        bytes, no spaces). Stored hashed by the kernel; note that it is visible
#                        in this machine's process list while QEMU runs
#   --limit PRINCIPAL:time_ms=N,output_bytes=N,memory_bytes=N,syscalls=N,rate=BURST/PER_SECOND,concurrency=N,scopes=a+b
#                        tighter limits and fewer scopes for one principal (a key's, or the lines'
#                        own `console` and `http`); any subset; values looser than the
#                        appliance's, and scopes beyond the role's, are ignored
#   --role ROLE          the serial line's own role: admin (default), operator, reader, anonymous
#   --tools a,b          MCP tool allowlist (default: every tool)
#   --profile conformance
#                        serve the MCP conformance suite's fixture tools, resources, template and
#                        prompts to every caller (tests only; the kernel's own tools and resources
#                        are then off unless named with --tools)
#   --profile faults     also serve test_fault, a tool that takes heap and then faults or hangs
#                        (tests of the kernel's clean-up; never for real use)
#   --net                a virtio-net NIC on a user-mode network (guest 10.0.2.15, gateway and
#                        DHCP 10.0.2.2), with host 127.0.0.1:8080 forwarded to guest port 8080.
#                        The network is passt (Debian's passt package; QEMU's stream netdev on
#                        its Unix socket) when it is installed, else QEMU's own user network
#                        (libslirp), which listens on a forwarded port with a backlog of one: a
#                        burst of new connections then loses SYNs in the host's kernel and some
#                        wait out TCP's retransmission timeouts (20 s and more for 50 at once)
#   --user-net           QEMU's own user network (libslirp) even where passt is installed
#   --port N             MCP over HTTP on host 127.0.0.1:N (the appliance serves on port N too,
#                        so its console names the port a client uses; implies --net); prints the
#                        URL and a client configuration as soon as the endpoint answers
#   --static-ip          with --net: the user network's address (10.0.2.15/24, gateway 10.0.2.2)
#                        set at boot instead of leased by DHCP, so HTTP answers from the moment
#                        the appliance is up (./basalt run passes it)
#   --hostfwd [ADDR:]HOSTPORT:GUESTPORT
#                        forward this TCP port instead of 8080 (repeatable; ADDR default
#                        127.0.0.1; implies --net)
#   --udpfwd [ADDR:]HOSTPORT:GUESTPORT
#                        forward this UDP port too (repeatable; ADDR default 127.0.0.1; implies
#                        --net): how a test reaches the cluster protocol's port from the host
#   --net-dgram QEMU_SOCK:PEER_SOCK
#                        instead of the user network, a virtio-net NIC on a Unix datagram link:
#                        QEMU binds QEMU_SOCK and sends each Ethernet frame as one datagram to
#                        PEER_SOCK (tests play the other host)
#   --virtio-modern      virtio-mmio version 2 (default: QEMU's legacy version 1 transport)
#   --no-rng             no virtio entropy device (the kernel then warns that its random numbers
#                        are predictable, unless the CPU has RNDR: --cpu max)
#   --disk PATH          keep the appliance's data in PATH: a raw image on a virtio-blk device
#                        (virt only). A missing PATH is created (and its directory) as a sparse
#                        file of --disk-size; an existing one must be a regular file this user
#                        can read and write. Written back by QEMU's cache, on the host once the
#                        kernel flushes; blocks the kernel discards are punched out of the file.
#                        One image serves one running appliance: QEMU locks it, so a second QEMU
#                        on the same image fails to start (./basalt run checks first, and names
#                        the appliance that holds it: qemu/disk_holder.py). No commas in PATH
#                        (QEMU's option syntax). ./basalt run passes build/disk.img unless
#                        given --no-disk
#   --model PATH         the embedder's model (docs/documents.md: tools/embed_model makes it),
#                        loaded by QEMU into the top of the guest's RAM and named to the kernel
#                        with model=ADDR:BYTES (at most 64 MiB); on --board rpi4 (with --dtb)
#                        loaded as the firmware loads an initramfs, named in the device tree's
#                        /chosen. ./basalt run passes build/model/basalt-embed.bin unless given
#                        --no-model (virt only)
#   --disk-size SIZE     the size of an image --disk creates (default 1G; truncate's syntax:
#                        digits with an optional K, M or G suffix, at least 1M); no effect on an
#                        existing image, which keeps its size
#   --detached           QEMU is not tied to the life of the process that started it (./basalt
#                        run --detach starts it so, in a session of its own, and ./basalt stop
#                        ends it); without it QEMU ends when its launcher does
#   --print-command      print the QEMU command line instead of running it (creates no image)
# Quit QEMU with Ctrl-A X, or type 'poweroff' at the basalt> prompt.
set -euo pipefail
# The script's directory without dirname(1): a stdio client's first answer waits for every
# process started before QEMU.
here=${BASH_SOURCE[0]%/*}
[ "$here" != "${BASH_SOURCE[0]}" ] || here=.
pushd "$here/.." >/dev/null # (not $(cd ... && pwd): a fork)
root=$PWD
popd >/dev/null
. "$root/qemu/http_probe.sh" # http_answers, client_configuration
kernel=""
cpu=cortex-a72 gic=3 el2=0 memory=512M smp=1 model="" append="" semihosting=0 print=0 stdio=0
# A forwarded port, PROTO OPTION [ADDR:]HOSTPORT:GUESTPORT (ADDR defaults to 127.0.0.1).
add_forward() {
  local spec=$3 fwd_addr fwd_host fwd_guest p
  case "$spec" in *:*:*) ;; *) spec="127.0.0.1:$spec" ;; esac
  IFS=: read -r fwd_addr fwd_host fwd_guest <<<"$spec"
  for p in "$fwd_host" "$fwd_guest"; do
    case "$p" in ''|*[!0-9]*) echo "run.sh: $2 takes [ADDR:]HOSTPORT:GUESTPORT" >&2; exit 2 ;; esac
  done
  forwards+=("$1 $fwd_addr $fwd_host $fwd_guest")
}
net=0 static_ip=0 modern=0 dgram="" mcp_port="" client_key="" line=virtio rng=1 board=virt dtb=""
line_set=0 virt_only="" disk="" disk_size=1G user_net=0 detached=0
# Forwarded ports, "PROTO ADDR HOSTPORT GUESTPORT" each, for whichever user-mode network runs.
forwards=()
while [ $# -gt 0 ]; do
  case "$1" in
    --board) board=$2; shift 2 ;;
    --dtb) dtb=$2; shift 2 ;;
    --kernel) kernel=$2; shift 2 ;;
    --cpu) cpu=$2; virt_only="$virt_only --cpu"; shift 2 ;;
    --gic) gic=$2; virt_only="$virt_only --gic"; shift 2 ;;
    --el2) el2=1; virt_only="$virt_only --el2"; shift ;;
    --memory) memory=$2; shift 2 ;;
    --smp) smp=$2; virt_only="$virt_only --smp"; shift 2 ;;
    --append) append="$append $2"; shift 2 ;;
    --semihosting) semihosting=1; shift ;;
    --stdio) stdio=1; shift ;;
    --line)
      case "$2" in virtio|uart) line=$2; line_set=1 ;; *) echo "run.sh: --line must be virtio or uart" >&2; exit 2 ;; esac
      shift 2 ;;
    --key)
      case "$2" in
        *[[:space:]]*|"") echo "run.sh: --key takes ROLE:SECRET without spaces" >&2; exit 2 ;;
        admin:*|operator:*|reader:*|anonymous:*)
          append="$append key=$2"
          [ -n "$client_key" ] || client_key=${2##*:} ;; # the first key goes into the printed client config
        *) echo "run.sh: --key must start with a role (admin, operator, reader, anonymous) and a colon" >&2; exit 2 ;;
      esac
      shift 2 ;;
    --role)
      case "$2" in admin|operator|reader|anonymous) append="$append serial_role=$2" ;;
        *) echo "run.sh: --role must be admin, operator, reader or anonymous" >&2; exit 2 ;; esac
      shift 2 ;;
    --tools) append="$append tools=$2"; shift 2 ;;
    --limit)
      case "$2" in *:*=*) ;; *) echo "run.sh: --limit takes PRINCIPAL:KEY=VALUE[,KEY=VALUE...]" >&2; exit 2 ;; esac
      case "$2" in *[[:space:]]*) echo "run.sh: --limit takes no spaces" >&2; exit 2 ;; esac
      append="$append limit=$2"; shift 2 ;;
    --profile)
      case "$2" in conformance|faults) append="$append profile=$2" ;;
        *) echo "run.sh: --profile must be conformance or faults" >&2; exit 2 ;; esac
      shift 2 ;;
    --net) net=1; shift ;;
    --user-net) user_net=1; shift ;;
    --port)
      case "$2" in ''|*[!0-9]*) echo "run.sh: --port takes a TCP port number" >&2; exit 2 ;; esac
      mcp_port=$2; forwards+=("tcp 127.0.0.1 $2 $2"); append="$append http=$2"; net=1; shift 2 ;;
    --static-ip) static_ip=1; shift ;;
    --hostfwd) add_forward tcp --hostfwd "$2"; net=1; shift 2 ;;
    --udpfwd) add_forward udp --udpfwd "$2"; net=1; shift 2 ;;
    --net-dgram)
      case "$2" in *:*) dgram=$2 ;; *) echo "run.sh: --net-dgram takes QEMU_SOCK:PEER_SOCK" >&2; exit 2 ;; esac
      shift 2 ;;
    --virtio-modern) modern=1; virt_only="$virt_only --virtio-modern"; shift ;;
    --no-rng) rng=0; shift ;;
    --disk) disk=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --disk-size) disk_size=$2; shift 2 ;;
    --detached) detached=1; shift ;;
    --print-command) print=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$cpu" in cortex-a53|cortex-a72|cortex-a76|max) ;; *) echo "run.sh: unsupported --cpu '$cpu'" >&2; exit 2 ;; esac
case "$gic" in 2|3) ;; *) echo "run.sh: --gic must be 2 or 3" >&2; exit 2 ;; esac
# --disk-size: truncate's syntax restricted to [0-9]+[KMG]?, at least 1 MiB (10#: no octal).
if [[ $disk_size =~ ^([0-9]+)([KMG]?)$ ]]; then
  size_digits=${BASH_REMATCH[1]}
  while [[ $size_digits == 0?* ]]; do size_digits=${size_digits#0}; done
  case "${BASH_REMATCH[2]}" in K) size_shift=10 ;; M) size_shift=20 ;; G) size_shift=30 ;; *) size_shift=0 ;; esac
  # More than 15 digits is far above 1M in any unit (and would overflow the arithmetic).
  if [ ${#size_digits} -le 15 ] && (( (10#$size_digits << size_shift) < (1 << 20) )); then
    echo "run.sh: --disk-size $disk_size is below the minimum of 1M" >&2; exit 2
  fi
else
  echo "run.sh: --disk-size takes a size such as 256M or 1G (digits, then K, M or G)" >&2; exit 2
fi
case "$board" in
  virt)
    [ -n "$kernel" ] || kernel="$root/build/kernel/basalt.elf"
    [ -z "$dtb" ] || { echo "run.sh: --dtb is for --board rpi4 (virt's tree comes from QEMU)" >&2; exit 2; }
    uart_lcrh=0x0900002c ;;
  rpi4)
    [ -n "$kernel" ] || kernel="$root/build/kernel/kernel8.img"
    [ -z "$virt_only" ] || { echo "run.sh:$virt_only: not for --board rpi4 (a Cortex-A72 with a GIC-400, entered at EL2)" >&2; exit 2; }
    if [ $net = 1 ] || [ -n "$dgram" ]; then
      echo "run.sh: QEMU's raspi4b has no network device Basalt drives (no GENET): use --stdio" >&2; exit 2
    fi
    [ $line_set = 0 ] || [ $line = uart ] || { echo "run.sh: --board rpi4 carries MCP on its PL011 (--line uart)" >&2; exit 2; }
    [ -z "$disk" ] || { echo "run.sh: --disk is for --board virt (QEMU's raspi4b has no virtio-blk device)" >&2; exit 2; }
    line=uart rng=0 memory=2G # raspi4b's RAM is fixed; the PL011 is the only line
    append="$append clock=$(date +%s)" # the Pi has no RTC: the host's time at launch
    [ -z "$dtb" ] || [ -f "$dtb" ] || { echo "run.sh: no device tree at $dtb" >&2; exit 2; }
    uart_lcrh=0xfe20102c ;;
  *) echo "run.sh: --board must be virt or rpi4" >&2; exit 2 ;;
esac
[ -f "$kernel" ] || { echo "run.sh: no kernel at $kernel (run ./basalt build)" >&2; exit 2; }
disk_create=0
if [ -n "$disk" ]; then
  # QEMU splits -drive at commas (a literal one would have to be doubled): refuse rather than guess.
  case "$disk" in *,*) echo "run.sh: --disk $disk: a path with a comma cannot be passed to QEMU's -drive; choose another" >&2; exit 2 ;; esac
  # Absolute, so that QEMU never reads a 'name:' prefix as a protocol (nbd:, json:, ...).
  [[ $disk == /* ]] || disk="$PWD/$disk"
  if [ -e "$disk" ]; then
    [ -f "$disk" ] || { echo "run.sh: --disk $disk is not a regular file (a raw image file is expected)" >&2; exit 2; }
    { [ -r "$disk" ] && [ -w "$disk" ]; } || { echo "run.sh: --disk $disk must be readable and writable by $(id -un)" >&2; exit 2; }
  elif [ -L "$disk" ]; then
    echo "run.sh: --disk $disk is a dangling symbolic link" >&2; exit 2
  else
    disk_create=1 # created only when QEMU is about to run (not for --print-command)
  fi
fi

if [ $board = rpi4 ]; then
  # A raw image, as the Pi's firmware loads it: entered at EL2 on core 0 (an ELF would start at
  # EL3 on all four cores).
  args=(qemu-system-aarch64 -M raspi4b -m "$memory" -kernel "$kernel" -display none -monitor none)
  [ -z "$dtb" ] || args+=(-dtb "$dtb")
else
  machine="virt,gic-version=$gic"
  [ $el2 = 1 ] && machine="$machine,virtualization=on"
  case "$smp" in [1-8]) ;; *) echo "run.sh: --smp takes 1..8" >&2; exit 2 ;; esac
  args=(qemu-system-aarch64 -M "$machine" -cpu "$cpu" -m "$memory" -smp "$smp"
        -kernel "$kernel" -nic none -display none -monitor none)
fi
# -nic none drops virt's default PCI NIC (its ROM is not shipped by Debian); the network, when
# asked for, is a virtio-mmio device on QEMU's user-mode stack.
passt_dir=""
if [ $net = 1 ]; then
  tcp_given=0
  for f in "${forwards[@]}"; do [[ $f == tcp\ * ]] && tcp_given=1; done
  if [ $tcp_given = 0 ]; then forwards+=("tcp 127.0.0.1 8080 8080"); mcp_port=8080; fi
  if [ $user_net = 0 ] && ! command -v passt >/dev/null 2>&1; then
    user_net=1
    echo "run.sh: passt is not installed (toolchain/bootstrap.sh installs it): QEMU's user network instead, whose forwarded ports lose SYNs to bursts of connections" >&2
  fi
  hostfwd=""
  for f in "${forwards[@]}"; do
    read -r proto fwd_addr fwd_host fwd_guest <<<"$f"
    hostfwd="$hostfwd,hostfwd=$proto:$fwd_addr:$fwd_host-:$fwd_guest"
  done
  if [ $user_net = 1 ]; then
    args+=(-netdev "user,id=n0$hostfwd" -device virtio-net-device,netdev=n0)
  else
    passt_netdev_at=$((${#args[@]} + 1)) # where the netdev goes, should passt not start here
    # passt plays the user network in a process of its own, on a Unix socket QEMU connects to.
    # The same addresses as QEMU's user network (10.0.2.15/24, the host as gateway 10.0.2.2,
    # with slirp's MAC for it rather than the host's own), and Ethernet's MTU: the appliance's
    # frames are 1,514 bytes at most.
    # The directory is named after this process: one whose process is gone was left by a launch
    # killed with its watcher (a whole process group killed), and goes now.
    for stale in "${TMPDIR:-/tmp}"/basalt-passt.*.*; do
      [ -d "$stale" ] || continue
      owner=${stale##*/basalt-passt.}
      owner=${owner%%.*}
      [ -e "/proc/$owner" ] || rm -rf "$stale"
    done
    passt_dir=$(mktemp -d "${TMPDIR:-/tmp}/basalt-passt.$$.XXXXXX")
    passt_args=(passt -f -4 -q -s "$passt_dir/sock" -a 10.0.2.15 -n 24 -g 10.0.2.2 -M 52:55:0a:00:02:02 -m 1500)
    # Run as root, passt becomes nobody before it binds its socket: the directory is then nobody's.
    if [ "$(id -u)" = 0 ]; then
      passt_uid=$(id -u nobody)
      chown "$passt_uid" "$passt_dir"
      passt_args+=(--runas "$passt_uid")
    fi
    # BASALT_PASST_PCAP=FILE: passt records every frame of the link (FILE must be writable by the
    # user passt runs as: nobody, under root).
    [ -z "${BASALT_PASST_PCAP:-}" ] || passt_args+=(-p "$BASALT_PASST_PCAP")
    for f in "${forwards[@]}"; do
      read -r proto fwd_addr fwd_host fwd_guest <<<"$f"
      passt_args+=("$([ "$proto" = tcp ] && echo -t || echo -u)" "$fwd_addr/$fwd_host:$fwd_guest")
    done
    args+=(-netdev "stream,id=n0,server=off,addr.type=unix,addr.path=$passt_dir/sock" -device virtio-net-device,netdev=n0)
  fi
  # QEMU's user network always gives the guest 10.0.2.15: no need to wait for a lease (a client's
  # first SYN sent before it would wait for TCP's retransmission, ~6 s).
  [ $static_ip = 1 ] && append="ip=10.0.2.15/24,gw=10.0.2.2 $append"
fi
if [ -n "$dgram" ]; then
  [ $net = 0 ] || { echo "run.sh: --net-dgram excludes --net/--hostfwd" >&2; exit 2; }
  args+=(-netdev "dgram,id=n0,local.type=unix,local.path=${dgram%%:*},remote.type=unix,remote.path=${dgram#*:}"
         -device virtio-net-device,netdev=n0)
fi
# BASALT_NET_DUMP=FILE: QEMU records every frame between the NIC and its network (pcap), with
# QEMU's timestamps: how long the guest took, apart from the host's side.
[ -z "${BASALT_NET_DUMP:-}" ] || { [ $net = 0 ] && [ -z "$dgram" ]; } ||
  args+=(-object "filter-dump,id=fd0,netdev=n0,file=$BASALT_NET_DUMP")
# Hardware entropy for the kernel's random generator (session ids): the host's /dev/urandom.
[ $rng = 1 ] && args+=(-device virtio-rng-device)
# The appliance's disk: raw, writeback (the kernel's flushes reach the file), guest discards
# punched out of the host file to keep it sparse. Before force-legacy, which applies to it too.
# BASALT_DISK_FAULTS=FILE: the disk behind QEMU's blkdebug driver with FILE's rules (tests inject
# I/O errors at a sector, e.g. [inject-error] event = "write_aio" errno = "5" sector = "N").
disk_file="file=$disk"
[ -z "${BASALT_DISK_FAULTS:-}" ] || disk_file="file.driver=blkdebug,file.config=$BASALT_DISK_FAULTS,file.image.filename=$disk"
[ -n "$disk" ] && args+=(-drive "if=none,id=disk0,format=raw,$disk_file,cache=writeback,discard=unmap"
                         -device virtio-blk-device,drive=disk0)
# The embedder's model in the top of RAM, below a 2 MiB margin, page-aligned (virt's RAM starts at
# 1 GiB; QEMU puts the device tree at its start and the kernel just above).
if [ -n "$model" ]; then
  [ -f "$model" ] || { echo "run.sh: --model $model: no such file (./basalt build makes build/model/basalt-embed.bin)" >&2; exit 2; }
  model_bytes=$(stat -c %s "$model")
  [ "$model_bytes" -gt 0 ] && [ "$model_bytes" -le $((64 << 20)) ] || { echo "run.sh: --model $model: 1 byte .. 64 MiB" >&2; exit 2; }
  case "$memory" in
    *[Gg]) mem_bytes=$(( ${memory%[Gg]} << 30 )) ;;
    *[Mm]) mem_bytes=$(( ${memory%[Mm]} << 20 )) ;;
    *) mem_bytes=$(( memory << 20 )) ;;
  esac
  if [ $board = rpi4 ]; then
    # As the Pi's firmware loads config.txt's initramfs: QEMU writes where into the device tree
    # it passes (/chosen linux,initrd-start), which needs --dtb (the image's own tree is not passed).
    [ -n "$dtb" ] || { echo "run.sh: --model on --board rpi4 needs --dtb (the model's place goes into that tree)" >&2; exit 2; }
    args+=(-initrd "$model")
  else
    model_at=$(( 0x40000000 + mem_bytes - ((model_bytes + (2 << 20) - 1) / (2 << 20) + 1) * (2 << 20) ))
    args+=(-device "loader,file=$model,addr=$(printf '0x%x' $model_at),force-raw=on")
    append="model=$(printf '0x%x' $model_at):$model_bytes $append"
  fi
fi
[ $modern = 1 ] && args+=(-global virtio-mmio.force-legacy=false)
# On a terminal, mon:stdio gives Ctrl-A X (quit) and passes Ctrl-C to the guest. In --stdio
# mode the line must carry the protocol only: no monitor multiplexing.
if [ $stdio = 1 ] && [ $line = virtio ]; then
  # The line is port 1 of a virtio-serial device, a `virtserialport` (QEMU throttles it when the
  # client reads slowly; a `virtconsole` would drop output instead). The kernel finds it by its
  # device ID; the PL011 carries nothing (the kernel keeps it silent in MCP mode anyway).
  args+=(-chardev stdio,id=line,signal=off -device virtio-serial-device,max_ports=2
         -device virtserialport,chardev=line,nr=1,name=org.basalt.line -serial null)
elif [ -t 0 ] && [ $stdio = 0 ]; then args+=(-serial mon:stdio); else args+=(-serial stdio); fi
[ $stdio = 1 ] && append="$append mcp=serial"
# BASALT_QEMU_MONITOR=SOCKET: QEMU's human monitor on a Unix socket, for a hung guest's registers and
# memory (`dump-guest-memory FILE`, read by qemu/task_dump.py); the stdio line stays protocol-only.
[ -z "${BASALT_QEMU_MONITOR:-}" ] || args+=(-monitor "unix:$BASALT_QEMU_MONITOR,server,nowait")
# BASALT_QEMU_PERFMAP=1: QEMU writes /tmp/perf-PID.map naming each block of translated code by the
# guest address it came from, so `perf` on QEMU sees the kernel's own code
# (tests/bench/guest_profile.mjs; the map is left for its reader to remove).
[ -z "${BASALT_QEMU_PERFMAP:-}" ] || args+=(-perfmap -name basalt,debug-threads=on) # threads named: CPU 0/TCG, ...
if [ $semihosting = 1 ]; then
  args+=(-semihosting-config enable=on,target=native)
  append="$append semihosting"
fi
append="${append# }"
[ -n "$append" ] && args+=(-append "$append")
if [ $print = 1 ]; then
  if [ -n "$passt_dir" ]; then printf '%q ' "${passt_args[@]}"; echo; rmdir "$passt_dir"; fi
  printf '%q ' "${args[@]}"; echo; exit 0
fi
if [ $disk_create = 1 ]; then
  { mkdir -p "$(dirname "$disk")" && truncate -s "$disk_size" "$disk"; } ||
    { echo "run.sh: cannot create disk image $disk" >&2; exit 2; }
  echo "run.sh: created disk image $disk ($disk_size, sparse)" >&2
fi

# Where to point a client, on stderr (stdout is the console), printed once the endpoint answers
# (a configuration printed earlier sends the client to a port that does not answer yet).
announce() {
  local url="http://127.0.0.1:$mcp_port/mcp" tries answered=0
  for ((tries = 0; tries < 600; ++tries)); do
    kill -0 "$launcher" 2>/dev/null || return 0 # QEMU is gone: nothing to announce
    http_answers "$mcp_port" && { answered=1; break; }
    sleep 0.05
  done
  if [ $answered = 0 ]; then
    echo "run.sh: $url did not answer within 30 s (see the console)" >&2
    return 0
  fi
  {
    client_configuration "$url" "$client_key"
    echo "Inspector: npx @modelcontextprotocol/inspector --cli $url --transport http --method tools/list"
  } >&2
}
if [ -n "$mcp_port" ] && [ $stdio = 0 ]; then
  # launcher: this process, QEMU once exec'd below; the announcer ends with it.
  launcher=$$ mcp_port=$mcp_port client_key=$client_key setpriv --pdeathsig KILL bash -c "$(declare -f http_answers client_configuration announce); announce" &
fi
# passt lives as long as this script's process (QEMU once exec'd below): a watcher stops it and
# removes its socket when that process is gone (passt's own --one-off mode is not used: the
# version Debian 12 ships quits at once when its syslog socket is missing).
if [ -n "$passt_dir" ]; then
  launcher=$$
  # Alive and not a zombie (a container's init may never reap QEMU, and kill -0 succeeds on one).
  alive() { local stat; read -r stat 2>/dev/null <"/proc/$1/stat" || return 1; stat=${stat##*) }; [ "${stat%% *}" != Z ]; }
  # The previous appliance's passt lets its forwarded port go up to half a second after its QEMU
  # ended (its watcher's poll): a run started right after it (tests do) tries again meanwhile
  # instead of failing on a port that is about to be free.
  for ((attempt = 0; attempt < 20; ++attempt)); do
    rm -f "$passt_dir/pid"
    ( "${passt_args[@]}" >"$passt_dir/log" 2>&1 &
      passt_pid=$!
      echo "$passt_pid" >"$passt_dir/pid"
      while alive "$launcher" && alive "$passt_pid"; do sleep 0.5; done
      kill "$passt_pid" 2>/dev/null
      wait "$passt_pid" 2>/dev/null
      [ -S "$passt_dir/sock" ] || ! alive "$launcher" || exit 0 # a failed start: the directory stays for the next
      rm -rf "$passt_dir" ) &
    watcher=$!
    for ((tries = 0; tries < 100; ++tries)); do
      [ -S "$passt_dir/sock" ] && break
      pid=$(cat "$passt_dir/pid" 2>/dev/null) && [ -n "$pid" ] && ! alive "$pid" && break
      sleep 0.05
    done
    [ -S "$passt_dir/sock" ] && break
    grep -q "Failed to bind" "$passt_dir/log" 2>/dev/null || break
    # This attempt's watcher only: a bare `wait` also waited for the announcer above, which polls
    # the endpoint for 30 s (a run started within half a second of the previous one's end, as
    # tests and quick restarts do, began 30 s late).
    wait "$watcher" 2>/dev/null || true
    sleep 0.1
  done
  if [ ! -S "$passt_dir/sock" ] && grep -q "Failed to bind" "$passt_dir/log" 2>/dev/null; then
    echo "run.sh: passt could not forward the port (see below):" >&2
    cat "$passt_dir/log" >&2 2>/dev/null
    exit 2
  elif [ ! -S "$passt_dir/sock" ]; then
    # Where passt cannot run at all (it sandboxes itself in user namespaces, which a chroot or a
    # container may refuse) the appliance still gets a network: QEMU's own, said in one line.
    why=$(grep -v "syslog" "$passt_dir/log" 2>/dev/null | head -1)
    echo "run.sh: passt cannot run here (${why:-no reason given}): QEMU's user network instead, whose forwarded ports lose SYNs to bursts of connections" >&2
    args[$passt_netdev_at]="user,id=n0$hostfwd"
    rm -rf "$passt_dir"
    passt_dir=""
  fi
fi
# QEMU's life is tied to the process that launched this script, whatever ends that process
# (a signal, SIGKILL included, or a client that closes the line): the kernel sends QEMU SIGKILL
# when its parent dies (prctl PR_SET_PDEATHSIG, through util-linux's setpriv). Without it a killed
# launcher leaves a guest running for good.
tie=(setpriv --pdeathsig KILL)
# QEMU's start is mostly page faults (its heap, glib's tables): with malloc's memory on
# transparent huge pages (glibc 2.35+; ignored by an older one) it takes ~20% less CPU (0.19 ->
# 0.15 s to a stdio line's first answer, 5,800 -> 3,500 faults) for ~2.5 MiB more resident.
case "${GLIBC_TUNABLES:-}" in
  *glibc.malloc.hugetlb=*) ;;
  "") export GLIBC_TUNABLES=glibc.malloc.hugetlb=1 ;;
  *) export GLIBC_TUNABLES="$GLIBC_TUNABLES:glibc.malloc.hugetlb=1" ;;
esac
[ $detached = 0 ] || [ $stdio = 0 ] || { echo "run.sh: --detached is for an HTTP appliance, not a stdio server (its client owns its life)" >&2; exit 2; }
[ $detached = 0 ] || tie=()
if [ $stdio = 0 ]; then exec "${tie[@]}" "${args[@]}"; fi

# A stdio MCP server must end when its client closes stdin, and QEMU does not (it keeps the
# guest running): feed QEMU through a pipe, and stop it at end of input or when we are stopped.
# Clients end a stdio server in any order: close stdin, then SIGTERM as soon as 0.3 s later, or
# SIGKILL. From here on nothing may end this script before QEMU is stopped, so no `set -e`: a
# failed `kill` of a helper that already exited must not skip the stop.
set +e
# The FIFOs, made by one mkfifo(1) under a name of our own choosing rather than in a mktemp(1)
# directory: one process less before QEMU starts. mkfifo neither follows nor reuses an existing
# name, so a name taken is simply tried again. (ctl: a private QMP channel, used once: see
# uart_ready below; the virtio line needs no such wait: the device holds input back until the
# kernel opens the port.)
fifo=""
fifos=(in)
[ $line = uart ] && fifos+=(ctl.in ctl.out)
for _ in 1 2 3 4 5 6 7 8; do
  try="${TMPDIR:-/tmp}/basalt-line.$$.$RANDOM$RANDOM"
  if mkfifo -m 600 "${fifos[@]/#/$try.}" 2>/dev/null; then fifo=$try; break; fi
done
[ -n "$fifo" ] || { echo "run.sh: cannot make the line's FIFOs in ${TMPDIR:-/tmp}" >&2; exit 2; }
[ $line = uart ] && args+=(-chardev "pipe,id=ctl,path=$fifo.ctl" -mon chardev=ctl,mode=control)
exec 9<>"$fifo.in" # held open read-write: QEMU can open its end before any input is let through
exec 6<"$fifo.in"  # QEMU's end, opened here (at once: fd 9 is a writer), so the name can go below
# QEMU's note that it was stopped by a signal is how every session ends here, not news for the
# client's user: dropped from its stderr (everything else passes).
"${tie[@]}" "${args[@]}" <&6 6<&- 9>&- 2> >(grep -v --line-buffered '^qemu-system-aarch64: terminating on signal' >&2) &
qemu_pid=$!
exec 6<&-
feeder=""
stop() {
  [ -n "$feeder" ] && kill "$feeder" 2>/dev/null
  kill "$qemu_pid" 2>/dev/null
  wait "$qemu_pid" 2>/dev/null
  rm -f "${fifos[@]/#/$fifo.}"
}
trap 'stop; exit 143' TERM INT HUP
[ $line = uart ] && exec 7<>"$fifo.ctl.out" 8<>"$fifo.ctl.in"

# The client may write at once, but the kernel switches the UART's receive FIFO on during boot,
# and (in QEMU as on the hardware) the switch flushes whatever the receiver holds. Hold the
# client's input back until the switch is done: poll the PL011's LCRH register (virt: UART0 at
# 0x09000000, rpi4: 0xfe201000; LCRH at +0x2c; FEN is bit 4) through the monitor, which reads it without side
# effects. Gives up after ~5 s (a kernel that keeps the FIFO off loses nothing anyway).
uart_ready() {
  printf '{"execute":"qmp_capabilities"}\n' >&8
  local line tries
  for ((tries = 0; tries < 2500; ++tries)); do
    printf '{"execute":"human-monitor-command","arguments":{"command-line":"xp /1wx %s"}}\n' "$uart_lcrh" >&8
    while IFS= read -r -t 1 line <&7; do
      if [[ $line =~ ${uart_lcrh#0x}:\ 0x([0-9a-fA-F]+) ]]; then
        (( 16#${BASH_REMATCH[1]} & 16 )) && return 0
        break
      fi
    done
    kill -0 "$qemu_pid" 2>/dev/null || return 1
    sleep 0.002
  done
  return 1
}
[ $line = uart ] && uart_ready
# Every end of the FIFOs is open by now (QEMU opens its QMP channel before it answers on it): their
# names go, so that nothing is left in TMPDIR however this script ends, SIGKILL included.
rm -f "${fifos[@]/#/$fifo.}"
# In the background: bash runs a trap only once the foreground command ends, and cat ends only
# at end of input; `wait` returns at once on a signal. Tied like QEMU: a killed launcher leaves
# no reader of its input behind either.
"${tie[@]}" cat <&0 >&9 & # explicit <&0: a background command would otherwise read /dev/null
feeder=$!
wait "$feeder"
feeder=""
# End of input: answer what was already sent (boot takes ~0.1 s), then stop.
for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$qemu_pid" 2>/dev/null || break; sleep 0.1; done
stop
