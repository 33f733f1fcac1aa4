#!/usr/bin/env bash
# Fails when a C/C++ source in git differs from what clang-format makes of it under the
# tree's .clang-format (docs/development.md). Needs clang-format 14 (Debian's clang-format;
# toolchain/bootstrap.sh installs it); exits 77 (skipped) without it or outside a git tree.
# To format the tree: git ls-files '*.c' '*.h' '*.cpp' | xargs clang-format -i
#   tests/style/format_check.sh [SOURCE_DIR]
set -euo pipefail
root=${1:-$(dirname "$0")/../..}
cd "$root"
tool=
for t in clang-format-14 clang-format; do
  if command -v "$t" >/dev/null 2>&1; then tool=$t; break; fi
done
if [ -z "$tool" ]; then
  echo "format_check: skipped, no clang-format (toolchain/bootstrap.sh installs it)"
  exit 77
fi
version=$("$tool" --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
if [ "$version" != 14 ]; then
  echo "format_check: skipped, $tool is version ${version:-unknown}, the style is written for 14"
  exit 77
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "format_check: skipped, not a git work tree"
  exit 77
fi
# Every C/C++ source git tracks: .def files (X-macro tables) are not C++ on their own, and the
# tree holds no third-party code (lwIP is unpacked into .deps, outside git).
mapfile -t files < <(git ls-files -- '*.c' '*.h' '*.cpp' '*.cc' '*.hpp')
echo "format_check: $tool on ${#files[@]} files"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if printf '%s\0' "${files[@]}" | xargs -0 -n 64 "$tool" --style=file --dry-run --Werror 2> "$log"; then
  echo "format_check: every file formatted"
  exit 0
fi
count=$(grep -c 'error: code should be clang-formatted' "$log" || true)
grep 'error: code should be clang-formatted' "$log" | cut -d: -f1 | sort -u | head -20
echo "format_check: $count places differ from .clang-format; format with:"
echo "  git ls-files '*.c' '*.h' '*.cpp' | xargs clang-format -i"
exit 1
