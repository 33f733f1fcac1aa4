// The embedder, measured from outside (issue 37; docs/documents.md, docs/benchmarks.md): the
// official SDK client on `qemu/run.sh --stdio --model build/model/basalt-embed.bin`. Prints:
//   - the model: words, bytes, and how long the kernel took to open it at boot (its log);
//   - text_embed: texts of ~100 words embedded per second, 16 texts a call, and the call's
//     p50/p99; the same for one text a call;
//   - the host build's rate on the same texts (basalt-embed-model --embed), for scale.
// The texts are drawn from the model's own vocabulary with GloVe's frequency skew (common words
// often), seeded: every run sees the same ones.
// Usage: node tests/bench/embed_bench.mjs [--kernel ELF] [--model FILE] [--calls N] [--words N]
import { spawnSync } from "node:child_process";
import path from "node:path";

import { Client, StdioClientTransport, root } from "../mcp/sdk.mjs";

const opt = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const kernel = opt("--kernel", path.join(root, "build/kernel/basalt.elf"));
const model = opt("--model", path.join(root, "build/model/basalt-embed.bin"));
const CALLS = Number(opt("--calls", 40));
const WORDS = Number(opt("--words", 100));
const hostTool = path.join(root, "build/tools/tools/embed_model/basalt-embed-model");

// A small deterministic generator (mulberry32) and the vocabulary in GloVe's order.
let seed = 37;
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const vocab = "the of and to in a is that for it as was with be by on not he i this are or his from at which but have an they you were her she there one all we their been has would more when if will so no out up into my who what can do some them than its about only other time over".split(" ")
  .concat("river mountain memory network kernel vector search garden music winter summer letter window village doctor market engine planet forest ocean bridge castle theory history language science".split(" "));
const text = () => Array.from({ length: WORDS }, () => vocab[Math.floor(vocab.length * rand() * rand())]).join(" ");
const texts = Array.from({ length: 16 * CALLS }, text);

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];

const transport = new StdioClientTransport({
  command: path.join(root, "qemu/run.sh"),
  args: ["--kernel", kernel, "--stdio", "--model", model, "--append", "rate=1000000/1000000"],
  stderr: "inherit",
});
const client = new Client({ name: "embed-bench", version: "1.0.0" });
await client.connect(transport);
const status = JSON.parse((await client.readResource({ uri: "kernel://status" })).contents[0].text);
const log = await client.callTool({ name: "kernel_log", arguments: { since: 0, limit: 100 } });
const records = log.structuredContent?.records ?? [];
const at = records.findIndex((r) => /^embedder: model/.test(r.text));
// The model is opened right after the memory map is installed (the record before it).
const openMs = at > 0 ? (records[at].uptime_ns - records[at - 1].uptime_ns) / 1e6 : NaN;
console.log(`model: ${status.embedder.words} words x ${status.embedder.dimensions}, ${status.embedder.bytes} bytes; ` +
            `opened and checked at boot in ${openMs.toFixed(1)} ms`);

async function rate(perCall) {
  const lat = [];
  const t0 = performance.now();
  let n = 0;
  for (let c = 0; c < CALLS; ++c) {
    const batch = texts.slice(c * perCall, (c + 1) * perCall);
    const s = performance.now();
    const r = await client.callTool({ name: "text_embed", arguments: { texts: batch } });
    lat.push(performance.now() - s);
    if (r.isError)
      throw new Error(JSON.stringify(r));
    n += batch.length;
  }
  const secs = (performance.now() - t0) / 1000;
  console.log(`text_embed, ${perCall} text(s) of ${WORDS} words a call: ${(n / secs).toFixed(0)} texts/s; ` +
              `call p50 ${pct(lat, 0.5).toFixed(2)} ms, p99 ${pct(lat, 0.99).toFixed(2)} ms (${CALLS} calls)`);
}
await rate(16);
await rate(1);
await client.close();

const t0 = performance.now();
const host = spawnSync(hostTool, ["--embed", model, ...texts.slice(0, 200)], { encoding: "utf8", maxBuffer: 1 << 26 });
if (host.status === 0)
  console.log(`host build (basalt-embed-model --embed, ${hostTool.includes("tools/tools") ? "release" : "?"}): ` +
              `${(200 / ((performance.now() - t0) / 1000)).toFixed(0)} texts/s including its start and the model's load`);
