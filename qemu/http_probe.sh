# Sourced by ./basalt (--detach) and qemu/run.sh (--port): the readiness probe both wait on and the
# client configuration both print once it answers. Functions, not a script: no process per probe.

# http_answers PORT: one probe of http://127.0.0.1:PORT/mcp; true when it answered HTTP/1.1.
http_answers() {
  local status="" rc=0
  { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1 # (braces: exec would keep 2>/dev/null)
  printf 'GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n' "$1" >&3 2>/dev/null || true
  # A probe passt took while the guest booted is never answered: Debian 12's passt sends the SYN
  # once and resets the connection 10 s later. Closed before that, it has passt spin on the socket
  # (an EPOLLRDHUP it leaves pending) and take a core from QEMU: held open instead.
  IFS= read -r -t 3 status <&3 || rc=$?
  [ $rc -le 128 ] || { sleep 11 <&3 >/dev/null 2>&1 3<&- & } # timed out (above 128), not refused
  exec 3<&-
  [[ $status == HTTP/1.1\ * ]]
}

# client_configuration URL [KEY]: where to point an MCP client, with the key's header if given.
client_configuration() {
  local headers=""
  [ -z "${2:-}" ] || headers=", \"headers\": {\"Authorization\": \"Bearer $2\"}"
  echo "MCP over Streamable HTTP: $1 (answering)"
  echo "Client configuration (e.g. .mcp.json):"
  echo "  {\"mcpServers\": {\"basalt\": {\"type\": \"http\", \"url\": \"$1\"$headers}}}"
  [ -n "${2:-}" ] || echo "No --key given: callers are anonymous and may list, not call (add --key admin:SECRET)."
}
