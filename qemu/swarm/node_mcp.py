"""MCP on a swarm node's serial line (its unix socket): newline-delimited JSON-RPC, one client at a
time (QEMU's socket chardev serves one connection). Used by ./basalt swarm (status, logs, run)
and the swarm tests."""
import json
import select
import socket
import time


class NodeError(Exception):
    pass


class NodeLine:
    def __init__(self, path, timeout=10.0, confirm=None):
        """confirm: the client declares elicitation and, asked to confirm a destructive call (a
        step-up form naming its target), answers with that name: an operator confirming it."""
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.timeout = timeout
        self.buf = b""
        self.notifications = []  # those that arrived while waiting for an answer
        self.next_id = 1
        self.confirm = confirm
        self.request("initialize", {"protocolVersion": "2025-06-18",
                                    "capabilities": {"elicitation": {}} if confirm else {},
                                    "clientInfo": {"name": "basalt-swarm", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.sock.sendall(json.dumps(msg).encode() + b"\n")

    def request(self, method, params=None):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        deadline = time.monotonic() + self.timeout
        while True:
            for msg in self.take_messages():
                if msg.get("method") == "elicitation/create" and "id" in msg:
                    self.send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                        "action": "accept" if self.confirm else "decline",
                        **({"content": {"name": self.confirm}} if self.confirm else {})}})
                    continue
                if msg.get("id") == rid and "method" not in msg:
                    if "error" in msg:
                        raise NodeError(msg["error"].get("message", str(msg["error"])))
                    return msg["result"]
            left = deadline - time.monotonic()
            if left <= 0:
                raise NodeError(f"no answer to {method} within {self.timeout} s")
            self.receive(left)

    def take_messages(self):
        """The complete messages received so far; notifications are also kept for wait_notification."""
        out = []
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "method" in msg and "id" not in msg:
                self.notifications.append(msg)
            out.append(msg)
        return out

    def receive(self, timeout):
        if select.select([self.sock], [], [], timeout)[0]:
            data = self.sock.recv(65536)
            if not data:
                raise NodeError("the node closed its line")
            self.buf += data

    def wait_notification(self, method, timeout):
        """The first notification named `method` (kept or arriving within timeout s), or None."""
        deadline = time.monotonic() + timeout
        while True:
            self.take_messages()
            for i, msg in enumerate(self.notifications):
                if msg.get("method") == method:
                    return self.notifications.pop(i)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.receive(left)

    def call(self, tool, arguments=None):
        """A tool's structured result; NodeError when the call failed."""
        r = self.request("tools/call", {"name": tool, "arguments": arguments or {}})
        if r.get("isError"):
            text = " ".join(c.get("text", "") for c in r.get("content", []))
            raise NodeError(f"{tool}: {text}")
        return r.get("structuredContent")

    def read(self, uri):
        r = self.request("resources/read", {"uri": uri})
        return json.loads(r["contents"][0]["text"])

    def close(self):
        self.sock.close()


def call(path, tool, arguments=None, timeout=10.0, confirm=None):
    line = NodeLine(path, timeout, confirm)
    try:
        return line.call(tool, arguments)
    finally:
        line.close()


def read(path, uri, timeout=10.0):
    """A resource's JSON contents (resources/read)."""
    line = NodeLine(path, timeout)
    try:
        return line.read(uri)
    finally:
        line.close()
