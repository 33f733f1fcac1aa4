// Where the time of one tools/call goes inside the kernel: boots the working tree's kernel, makes
// --calls sequential kernel_info calls with the official SDK client over HTTP or the serial line
// (--transport), and prints kernel://perf's per-stage figures for them (what the calls added) as
// a table: calls, mean, p50 and p99 (log2 buckets: within a factor of two), max, and the share of
// the whole call. What the stages leave out (dispatch between them, the tool task's wait to run,
// the bridge's wait to notice it ended) is the "not in a stage" row.
// Usage: node tests/bench/call_stages.mjs [--transport http|stdio] [--calls N] [--kernel ELF]
import path from "node:path";

import { boot, bootHttp, Client, root, StreamableHTTPClientTransport } from "../mcp/sdk.mjs";

const opt = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const kernel = opt("--kernel", path.join(root, "build/kernel/basalt.elf"));
const calls = Number(opt("--calls", 300));
const over = opt("--transport", "http");
const KEY = "bench-admin-key-0123456789abcdef";
const STAGES = ["parse", "authenticate", "provenance", "route", "authorise", "validate", "admit", "start", "body",
                "encode", "audit", "send"];

let client, stop;
if (over === "http") {
  const node = await bootHttp(["--key", `admin:root:${KEY}`], { kernel, timeoutMs: 60000 });
  client = new Client({ name: "call-stages", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(node.url),
                                                         { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } }));
  stop = async () => { await client.close(); await node.stop(); };
} else {
  const s = boot("call-stages", [], { kernel, timeoutMs: 0, stderr: "ignore" });
  client = s.client;
  await client.connect(s.transport);
  stop = () => s.done();
}

const perf = async () => JSON.parse((await client.readResource({ uri: "kernel://perf" })).contents[0].text);
for (let i = 0; i < 10; ++i) // warm: first calls fault in what later ones find ready
  await client.callTool({ name: "kernel_info", arguments: {} });
const before = await perf();
for (let i = 0; i < calls; ++i)
  await client.callTool({ name: "kernel_info", arguments: {} });
const after = await perf();
await stop();

const us = (ns) => (ns / 1000).toFixed(1);
const d = (s, f) => after.stages[s][f] - before.stages[s][f];
const whole = d("call", "total_ns");
console.log(`kernel_info over ${over}, ${calls} sequential calls (kernel://perf; us; p50/p99/max over the boot)`);
console.log("| stage | calls | mean us | p50 us | p99 us | max us | share |");
console.log("|---|---|---|---|---|---|---|");
let inStages = 0;
for (const s of [...STAGES, "call"]) {
  const n = d(s, "calls"), sum = d(s, "total_ns");
  if (s !== "call")
    inStages += sum;
  const t = after.stages[s];
  console.log(`| ${s} | ${n} | ${us(n ? sum / n : 0)} | ${us(t.p50_ns)} | ${us(t.p99_ns)} | ${us(t.max_ns)} | ` +
              `${((100 * sum) / whole).toFixed(1)}% |`);
}
console.log(`| not in a stage | | ${us((whole - inStages) / calls)} | | | | ${((100 * (whole - inStages)) / whole).toFixed(1)}% |`);
