// MCP over Streamable HTTP, measured from outside: tools/call (kernel_info) round trips against
// the kernel in QEMU (virtio-net, lwIP, the kernel's HTTP server) with 1, 8 and 32 concurrent
// clients, each on its own keep-alive connection. Prints requests/s, p50 and p99 latency, the
// kernel's memory in use and QEMU's resident memory; then the same client against the official
// TypeScript SDK server (stateless Streamable HTTP, one tool) running natively on the host, and
// the ratio. Also the memory with 32 sessions open.
// Usage: node tests/bench/mcp_http_bench.mjs [--seconds S] [--memory 64M] [--kernel ELF]
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { HttpPool } from "../mcp/http_pool.mjs";
import { bootHttp, root } from "../mcp/sdk.mjs";

const opt = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const kernel = opt("--kernel", path.join(root, "build/kernel/basalt.elf"));
const seconds = Number(opt("--seconds", 5));
const memory = opt("--memory", "64M"); // guest RAM: what QEMU's resident size is measured at
const levels = [1, 8, 32];
// One principal per client (the in-flight cap of 10 is per principal), and a bucket large enough
// that the rate limit measures nothing (boot argument rate=).
const keys = Array.from({ length: 32 }, (_, i) => `bench-key-${String(i).padStart(2, "0")}-0123456789`);
const authOf = (i) => ({ Authorization: `Bearer ${keys[i % keys.length]}` });

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
const rssMiB = (pid, field = "VmRSS") => {
  const m = fs.readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`${field}:\\s+(\\d+) kB`));
  return m ? Number(m[1]) / 1024 : NaN;
};
// Resident size, and the part that is the process's own (RssAnon: guest RAM touched, TCG
// buffers, heap; the rest is the QEMU binary and libraries, shared between instances).
const rss = (pid) => `RSS ${rssMiB(pid).toFixed(1)} MiB (${rssMiB(pid, "RssAnon").toFixed(1)} MiB private)`;

const initialize = { jsonrpc: "2.0", id: 0, method: "initialize",
                     params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } } };

// `clients` loops, each with its own connection (and session, when the server names one), for
// `seconds`; every request a tools/call of kernel_info.
async function run(url, clients, headersOf) {
  const pool = new HttpPool(url, clients);
  await pool.warm();
  const sessions = await Promise.all(Array.from({ length: clients }, async (_, c) => {
    const headers = headersOf(c);
    const r = await pool.post(initialize, headers);
    if (r.status !== 200)
      throw new Error(`initialize: ${r.status} ${r.text}`);
    const sid = r.headers["mcp-session-id"];
    return sid ? { ...headers, "Mcp-Session-Id": sid } : headers;
  }));
  const latencies = [];
  let failures = 0;
  const end = Date.now() + seconds * 1000;
  await Promise.all(sessions.map(async (h, c) => {
    for (let i = 0; Date.now() < end; ++i) {
      const t0 = process.hrtime.bigint();
      const r = await pool.post({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name: "kernel_info", arguments: {} } }, h);
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (r.status !== 200 || !r.json?.result || r.json.result.isError) {
        if (!failures)
          console.log(`    first failure: ${r.status} ${r.text.slice(0, 300)}`);
        ++failures;
      }
    }
  }));
  pool.close();
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99), n: latencies.length, failures };
}

const fmt = (r) => `${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2).padStart(7)} ms  p99 ${r.p99.toFixed(2).padStart(7)} ms` +
                   `  (${r.n} calls${r.failures ? `, ${r.failures} FAILED` : ""})`;

// 1. Basalt in QEMU.
const node = await bootHttp([...keys.flatMap((k, i) => ["--key", `admin:b${i}:${k}`]), "--memory", memory,
                            "--append", "rate=1000000/1000000"],
                           { kernel });
const auth = authOf(0);
const usage = async () => {
  const pool = new HttpPool(node.url, 1);
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
  const r = await pool.post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "kernel_mem", arguments: {}, _meta: meta } }, auth);
  pool.close();
  const m = r.json.result.structuredContent;
  return `kernel ${(((m.total_pages - m.free_pages) * 4096) / 2 ** 20).toFixed(1)} MiB in use (heap ${m.heap.live_allocations} allocations), ` +
         `QEMU ${rss(node.pid)}`;
};
const basalt = {};
try {
  console.log(`Basalt (QEMU TCG, -m ${memory}, ${node.url}), ${seconds} s per level:`);
  for (const c of levels) {
    basalt[c] = await run(node.url, c, authOf);
    console.log(`  ${String(c).padStart(2)} client(s): ${fmt(basalt[c])}`);
    console.log(`             ${await usage()}`);
  }
  // 32 sessions left open.
  const pool = new HttpPool(node.url, 1);
  for (let i = 0; i < 32; ++i)
    await pool.post(initialize, auth);
  pool.close();
  console.log(`  with 32 more sessions open: ${await usage()}`);
} finally {
  await node.stop();
}

// 2. The SDK server natively.
const peer = spawn(process.execPath, [path.join(path.dirname(fileURLToPath(import.meta.url)), "sdk_http_server.mjs")],
                   { stdio: ["ignore", "pipe", "inherit"] });
const port = await new Promise((resolve, reject) => {
  peer.stdout.on("data", (d) => {
    const m = String(d).match(/listening (\d+)/);
    if (m)
      resolve(Number(m[1]));
  });
  peer.once("exit", (code) => reject(new Error(`SDK server exited ${code}`)));
});
try {
  console.log(`Official TypeScript SDK server (stateless, native on the host):`);
  for (const c of levels) {
    const r = await run(`http://127.0.0.1:${port}/mcp`, c, () => ({}));
    console.log(`  ${String(c).padStart(2)} client(s): ${fmt(r)}  ${rss(peer.pid)}` +
                `  -> Basalt/SDK ${(basalt[c].rps / r.rps).toFixed(2)}x req/s`);
  }
} finally {
  peer.kill();
}
process.exit(0);
