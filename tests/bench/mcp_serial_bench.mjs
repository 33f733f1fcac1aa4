// MCP over the serial line, measured from outside with the official SDK client (stdio transport
// on `qemu/run.sh --stdio`). Prints:
//   - time from spawning QEMU to the first MCP response (initialize), median of several launches
//   - tools/call round trip (kernel_info) over N calls: median, p99, min, max
//   - the smallest guest RAM (-m) the appliance still boots and serves with
// The line is the virtio console port run.sh --stdio uses by default; --line uart measures the
// PL011 instead (what a Raspberry Pi has); --board rpi4 measures the Pi 4 image on QEMU raspi4b
// (its PL011; RAM fixed at 2 GiB, so no smallest-RAM search).
// Usage: node tests/bench/mcp_serial_bench.mjs [--calls N] [--launches N] [--kernel ELF] [--line virtio|uart] [--board rpi4]
import path from "node:path";

import { Client, StdioClientTransport, root } from "../mcp/sdk.mjs";

const opt = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const kernel = opt("--kernel", path.join(root, "build/kernel/basalt.elf"));
const calls = Number(opt("--calls", 1000));
const launches = Number(opt("--launches", 5));
const board = opt("--board", "virt");
const line = board === "rpi4" ? "uart" : opt("--line", "virtio");
console.log(`serial line: ${line === "uart" ? "PL011 UART" : "virtio console port"}${board === "rpi4" ? " of the Pi 4 image on QEMU raspi4b" : ""}`);
// run.sh arguments for a serial-line appliance with `memory` of RAM.
const lineArgs = (memory) => (board === "rpi4" ? ["--board", "rpi4", "--stdio"]
                                               : ["--kernel", kernel, "--stdio", "--line", line, "--memory", memory]);

// The round-trip runs raise the per-caller bucket (rate=) so that 1,000 back-to-back calls are
// not refused: the limiter still runs on every call, it just never says no.
const unlimited = ["--append", "rate=1000000/1000000"];

async function connect(memory, extra = []) {
  const transport = new StdioClientTransport({
    command: path.join(root, "qemu/run.sh"),
    args: [...lineArgs(memory), ...extra],
    stderr: "ignore",
  });
  const client = new Client({ name: "basalt-bench", version: "1.0.0" });
  const t0 = process.hrtime.bigint();
  const deadline = new Promise((_, reject) => setTimeout(() => reject(new Error("no answer in 10 s")), 10000));
  await Promise.race([client.connect(transport), deadline]);
  return { client, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

// 1. Launch to first response.
const firsts = [];
for (let i = 0; i < launches; ++i) {
  const { client, ms } = await connect("512M");
  firsts.push(ms);
  await client.close();
}
firsts.sort((a, b) => a - b);
console.log(`launch -> first MCP response (initialize), ${launches} launches: median ${pct(firsts, 50).toFixed(1)} ms, ` +
            `min ${firsts[0].toFixed(1)} ms, max ${firsts[firsts.length - 1].toFixed(1)} ms`);

// 2. tools/call round trips (sequential; each waits for its answer).
{
  const { client } = await connect("512M", unlimited);
  const rtts = [];
  for (let i = 0; i < calls; ++i) {
    const t0 = process.hrtime.bigint();
    const r = await client.callTool({ name: "kernel_info", arguments: {} });
    rtts.push(Number(process.hrtime.bigint() - t0) / 1e3);
    if (r.isError) throw new Error("kernel_info failed");
  }
  rtts.sort((a, b) => a - b);
  console.log(`tools/call kernel_info round trip over ${calls} calls: median ${pct(rtts, 50).toFixed(0)} us, ` +
              `p99 ${pct(rtts, 99).toFixed(0)} us, min ${rtts[0].toFixed(0)} us, max ${rtts[rtts.length - 1].toFixed(0)} us`);
  await client.close();
}

// 2b. The same round trips without the SDK (one JSON line out, one line back): what the line and
// the kernel cost, apart from the client library.
{
  const { spawn } = await import("node:child_process");
  const child = spawn(path.join(root, "qemu/run.sh"), [...lineArgs("512M"), ...unlimited],
                      { stdio: ["pipe", "pipe", "ignore"] });
  let pending = "", waiter = null;
  // Hands the next complete line to the waiting request, whenever both exist.
  const deliver = () => {
    const nl = pending.indexOf("\n");
    if (nl < 0 || !waiter)
      return;
    const w = waiter;
    waiter = null;
    const lineText = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    w(lineText);
  };
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => { pending += d; deliver(); });
  const rpc = (msg) => new Promise((resolve) => {
    waiter = resolve;
    child.stdin.write(JSON.stringify(msg) + "\n");
    deliver();
  });
  await rpc({ jsonrpc: "2.0", id: 0, method: "initialize",
              params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
  for (const [label, msg] of [["ping", { method: "ping" }],
                              ["tools/call kernel_info", { method: "tools/call", params: { name: "kernel_info", arguments: {} } }]]) {
    const rtts = [];
    for (let i = 0; i < calls; ++i) {
      const t0 = process.hrtime.bigint();
      const answer = await rpc({ jsonrpc: "2.0", id: i + 1, ...msg });
      rtts.push(Number(process.hrtime.bigint() - t0) / 1e3);
      if (!answer.startsWith(`{"jsonrpc":"2.0","id":${i + 1},"result"`)) throw new Error(`${label}: ${answer.slice(0, 200)}`);
    }
    rtts.sort((a, b) => a - b);
    console.log(`raw client (no SDK), ${label} over ${calls} calls: median ${pct(rtts, 50).toFixed(0)} us, ` +
                `p99 ${pct(rtts, 99).toFixed(0)} us`);
  }
  child.stdin.end();
  await new Promise((r) => child.once("exit", r));
}

// 3. Smallest -m that still serves a tools/call.
let smallest = null;
for (const mb of board === "rpi4" ? [] : [64, 48, 32, 24, 16, 12, 8]) {
  try {
    const { client } = await connect(`${mb}M`);
    const r = await client.callTool({ name: "kernel_info", arguments: {} });
    await client.close();
    if (r.isError) break;
    smallest = mb;
  } catch {
    break;
  }
}
if (board !== "rpi4")
  console.log(`smallest guest RAM that serves: ${smallest ?? "none of the sizes tried"}${smallest ? " MiB (-m " + smallest + "M)" : ""}`);
