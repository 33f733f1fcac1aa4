// Durable storage, measured from outside with the official SDK client on `qemu/run.sh --stdio
// --disk` (a fresh sparse image in a temporary directory). Prints:
//   - acknowledged upserts/s (one vector per call) with 1 and 8 concurrent callers, on a durable
//     collection and on a memory one (durability "memory") for comparison, and how many callers
//     one commit answered at most (group commit at work);
//   - the mean time of one commit (the group's write and its flush) as the kernel measured it;
//   - bytes written to the disk per byte acknowledged (vector and id payload);
//   - recovery time for 100,000 vectors: from the log alone, and from a checkpoint.
// Usage: node tests/bench/storage_bench.mjs [--kernel ELF] [--calls N] [--vectors N] [--dim D]
//        [--recovery log,checkpoints]   (which recoveries to measure; default both)
//        [--per-call N]   (vectors per upsert call while filling; default 250)
//        [--log]   (after each recovery, the kernel's own storage and snapshot log lines, with uptimes)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { Client, StdioClientTransport, root, storageReady, types } from "../mcp/sdk.mjs";
import { upserts as upsertRate } from "./upserts.mjs";

const opt = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const kernel = opt("--kernel", path.join(root, "build/kernel/basalt.elf"));
const CALLS = Number(opt("--calls", 400));
const VECTORS = Number(opt("--vectors", 100000));
const DIM = Number(opt("--dim", 64));
const RECOVERY = opt("--recovery", "log,checkpoints").split(",");
const LOG = process.argv.includes("--log");
const PER_CALL = Number(opt("--per-call", 250));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-storage-bench."));
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));

function image(name) {
  const p = path.join(dir, name);
  fs.writeFileSync(p, "");
  fs.truncateSync(p, 1 << 30);
  return p;
}

async function boot(disk, extra = []) {
  const transport = new StdioClientTransport({
    command: path.join(root, "qemu/run.sh"),
    args: ["--kernel", kernel, "--stdio", "--disk", disk, "--memory", "1G", "--append", "rate=1000000/1000000", ...extra],
    stderr: "ignore",
  });
  const client = new Client({ name: "basalt-storage-bench", version: "1.0.0" });
  await client.connect(transport, { timeout: 1800000 }); // the first answer waits for recovery
  const call = async (name, args) => {
    const r = await client.request({ method: "tools/call", params: { name, arguments: args } }, types.CallToolResultSchema,
                                   { timeout: 600000 });
    if (r.isError)
      throw new Error(`${name}: ${JSON.stringify(r)}`);
    return r.structuredContent;
  };
  const status = async () => JSON.parse((await client.readResource({ uri: "kernel://status" })).contents[0].text).storage;
  return { client, transport, call, status };
}

// The QEMU serving `disk` (found in /proc), for the power cut before a recovery measurement.
function kill(disk) {
  for (const pid of fs.readdirSync("/proc").filter((d) => /^[0-9]+$/.test(d))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "latin1");
      if (cmd.startsWith("qemu-system-aarch64\0") && cmd.includes(`file=${disk},`))
        process.kill(Number(pid), "SIGKILL");
    } catch {}
  }
}

let seed = 1;
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296) * 2 - 1;
const row = () => Array.from({ length: DIM }, rand);

// `callers` concurrent streams of one-vector upserts, CALLS in all; acknowledged calls per second.
const upserts = (s, collection, callers, firstId) => upsertRate(s.call, collection, { callers, calls: CALLS, firstId, row });

// VECTORS vectors in calls of PER_CALL (base64 float32 rows).
async function fill(s, collection) {
  const per = PER_CALL, rowsPerString = Math.floor(49152 / (4 * DIM));
  for (let at = 0; at < VECTORS; at += per) {
    const n = Math.min(per, VECTORS - at);
    const f32 = Float32Array.from({ length: n * DIM }, rand);
    const strings = [];
    for (let r = 0; r < n; r += rowsPerString) {
      const part = f32.subarray(r * DIM, Math.min(n, r + rowsPerString) * DIM);
      strings.push(Buffer.from(part.buffer, part.byteOffset, part.byteLength).toString("base64"));
    }
    // A call held back by a checkpoint longer than the tool's wall-time limit (10 s) fails with
    // limit_time_exceeded, having stored a prefix: upserts are idempotent, so it is sent again.
    const args = { collection, ids: Array.from({ length: n }, (_, i) => at + i), vectors_f32: strings };
    for (let tries = 0; ; ++tries) {
      try {
        await s.call("vector_upsert", args);
        break;
      } catch (e) {
        if (tries >= 20 || !/limit_time_exceeded/.test(e.message))
          throw e;
        ++retried;
      }
    }
  }
}
let retried = 0;

const fmt = (x) => x.toFixed(0);
{
  const disk = image("rate.img");
  const s = await boot(disk);
  await s.call("collection_create", { name: "d", dim: DIM, metric: "l2", max_elements: 20000 });
  await s.call("collection_create", { name: "m", dim: DIM, metric: "l2", max_elements: 20000, durability: "memory" });
  await upserts(s, "d", 1, 900000); // warm-up
  const before = await s.status();
  const d1 = await upserts(s, "d", 1, 0);
  const d8 = await upserts(s, "d", 8, 10000);
  const after = await s.status();
  const m1 = await upserts(s, "m", 1, 0);
  const m8 = await upserts(s, "m", 8, 10000);
  const acknowledged = 2 * CALLS * (DIM * 4 + 8);
  const written = after.disk_io.bytes_written - before.disk_io.bytes_written;
  console.log(`upserts (one ${DIM}-float vector per call, ${CALLS} calls, acknowledged once durable):`);
  console.log(`  1 caller:  ${fmt(d1)}/s durable, ${fmt(m1)}/s memory`);
  console.log(`  8 callers: ${fmt(d8)}/s durable, ${fmt(m8)}/s memory; at most ${after.most_callers_per_commit} callers answered by one commit`);
  console.log(`  commits: ${after.commits - before.commits} for ${2 * CALLS} calls (their audit records included); ` +
              `mean commit (write + flush) ${after.mean_commit_us} us`);
  console.log(`  bytes written per byte acknowledged: ${(written / acknowledged).toFixed(2)} ` +
              `(${written} bytes for ${acknowledged}; each commit is whole sectors plus an end marker, and carries the call's audit record)`);
  await s.client.close();
}

// The log alone: checkpoints put off (checkpoint_kib at its largest); then the default, adaptive.
for (const [key, label, extra] of [["log", "the log alone", ["--append", "checkpoint_kib=1048576"]],
                                   ["checkpoints", "checkpoints (the default)", []]]) {
  if (!RECOVERY.includes(key))
    continue;
  const disk = image(`recovery-${label.length}.img`);
  let s = await boot(disk, extra);
  await s.call("collection_create", { name: "big", dim: DIM, metric: "l2", max_elements: VECTORS });
  const t0 = process.hrtime.bigint();
  await fill(s, "big");
  const filled = Number(process.hrtime.bigint() - t0) / 1e9;
  const st = await s.status();
  kill(disk); // a power cut: no clean shutdown, nothing flushed beyond what was acknowledged
  await s.transport.close().catch(() => {});
  const t1 = process.hrtime.bigint();
  s = await boot(disk, extra);
  const answered = Number(process.hrtime.bigint() - t1) / 1e6;
  const after = await storageReady(s.client, 3600000);
  const back = Number(process.hrtime.bigint() - t1) / 1e6;
  const stats = await s.call("collection_stats", { collection: "big" });
  console.log(`recovery of ${VECTORS} vectors of ${DIM} floats from ${label}: ${after.recovery.ms} ms in the kernel ` +
              `(${after.recovery.records} log records, checkpoint ${after.recovery.checkpoint_bytes} bytes); ` +
              `first answer ${fmt(answered)} ms after launch, the store back after ${fmt(back)} ms; ${stats.count} vectors back ` +
              `(filled at ${fmt(VECTORS / filled)} vectors/s, ${st.checkpoints} checkpoints meanwhile, the last ` +
              `${st.last_checkpoint_bytes} bytes in ${st.last_checkpoint_ms} ms; ${retried} calls held back past the ` +
              `tool time limit and sent again)`);
  retried = 0;
  if (LOG) {
    const log = await s.call("kernel_log", { limit: 200 });
    for (const r of log.records.filter((r) => /^(storage|vector): /.test(r.text)))
      console.log(`  [${(r.uptime_ns / 1e6).toFixed(0)} ms] ${r.text}`);
  }
  await s.client.close();
}
