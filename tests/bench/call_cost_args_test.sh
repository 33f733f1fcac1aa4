#!/usr/bin/env bash
# call_cost's command line, with nothing built or booted: --help names the default base, and each
# wrong argument is refused with exit status 2 and a line saying why, before any build starts.
set -u
cc="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/call_cost"
fail() { echo "FAIL: $*"; exit 1; }
help=$("$cc" --help) || fail "--help exited $?"
grep -q "default 7e1d75f" <<<"$help" || fail "--help does not name the default base"
grep -q -- "--net passt|user" <<<"$help" || fail "--help does not list --net"
err=$(mktemp)
trap 'rm -f "$err"' EXIT
for bad in "--rounds 0" "--calls x" "--net slirp" "--ef 513" "--json" "--bogus" "--base no-such-rev-anywhere"; do
  # shellcheck disable=SC2086 # each case is several words on purpose
  "$cc" $bad >/dev/null 2>"$err"
  status=$?
  [ $status = 2 ] || fail "'$bad' exited $status, not 2"
  grep -q "^call_cost: " "$err" || fail "'$bad' said nothing: $(cat "$err")"
done
[ ! -e "$(dirname "$cc")/../../build/call-cost/no-such-rev-anywhere" ] || fail "a bad --base left a worktree"
echo "PASS bench.call_cost.args"
