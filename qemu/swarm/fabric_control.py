"""A client of basalt-fabric's control socket (JSON lines, one answer per command), for
./basalt swarm and the tests that drive the fabric."""
import json
import socket


class FabricControl:
    def __init__(self, path, timeout=5):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.reader = self.sock.makefile("r")

    def __call__(self, **command):
        """Sends one command ({"cmd": ..., ...}) and returns the fabric's answer."""
        self.sock.sendall(json.dumps(command).encode() + b"\n")
        return json.loads(self.reader.readline())

    def send_raw(self, line):
        self.sock.sendall(line)
        return json.loads(self.reader.readline())

    def close(self):
        self.reader.close()
        self.sock.close()
