// Where the time of one tools/call goes inside the kernel: boots the working tree's kernel, makes
// --calls sequential kernel_info calls with the official SDK client over HTTP or the serial line
// (--transport), and prints kernel://perf's per-stage figures for them (what the calls added) as
// a table: calls, mean, p50 and p99 (log2 buckets: within a factor of two), max, and the share of
// the whole call. What the stages leave out (dispatch between them, the tool task's wait to run,
// the bridge's wait to notice it ended) is the "not in a stage" row.
// --tool vector_upsert makes each call upsert one vector of --floats components (default 100) as JSON
// numbers into a memory collection instead: a call with large arguments.
// Usage: node tests/bench/call_stages.mjs [--transport http|stdio] [--calls N] [--kernel ELF]
//                                         [--tool kernel_info|vector_upsert] [--floats N]
import path from "node:path";

import { boot, bootHttp, Client, root, StreamableHTTPClientTransport } from "../mcp/sdk.mjs";

const opt = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const kernel = opt("--kernel", path.join(root, "build/kernel/basalt.elf"));
const calls = Number(opt("--calls", 300));
const over = opt("--transport", "http");
const tool = opt("--tool", "kernel_info");
const floats = Number(opt("--floats", 100));
if (tool !== "kernel_info" && tool !== "vector_upsert")
  throw new Error(`--tool ${tool}: kernel_info or vector_upsert`);
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
let nextId = 1;
const callOnce = async () => {
  if (tool === "kernel_info")
    return client.callTool({ name: "kernel_info", arguments: {} });
  const vector = Array.from({ length: floats }, () => Number((Math.random() * 2 - 1).toFixed(6)));
  const r = await client.callTool({ name: "vector_upsert", arguments: { collection: "bench", ids: [nextId++], vectors: [vector] } });
  if (r.isError)
    throw new Error(`vector_upsert: ${JSON.stringify(r)}`);
  return r;
};
if (tool === "vector_upsert") {
  const r = await client.callTool({ name: "collection_create", arguments: { name: "bench", dim: floats, metric: "l2",
                                                                            max_elements: calls + 100, durability: "memory" } });
  if (r.isError)
    throw new Error(`collection_create: ${JSON.stringify(r)}`);
}
for (let i = 0; i < 10; ++i) // warm: first calls fault in what later ones find ready
  await callOnce();
const before = await perf();
for (let i = 0; i < calls; ++i)
  await callOnce();
const after = await perf();
await stop();

const us = (ns) => (ns / 1000).toFixed(1);
const d = (s, f) => after.stages[s][f] - before.stages[s][f];
const whole = d("call", "total_ns");
console.log(`${tool === "kernel_info" ? tool : `vector_upsert of ${floats} floats`} over ${over}, ${calls} sequential calls (kernel://perf; us; p50/p99/max over the boot)`);
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
