// What one MCP call costs, in two builds side by side: an older commit (built in a scratch git
// worktree under build/call-cost/<rev>/) and the working tree. Both are booted in alternation
// (base, current, base, current ...) so that both meet the same load on a shared machine, each
// through its own qemu/run.sh as `./basalt run` would start it, and measured from outside with
// the official MCP SDK client. Run it through tests/bench/call_cost (the --help text is below).
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { loadGlove, glovePath } from "../mcp/glove.mjs";
import { HttpPool } from "../mcp/http_pool.mjs";
import { bootHttp, Client, root, StdioClientTransport, storageReady, StreamableHTTPClientTransport, types }
  from "../mcp/sdk.mjs";
import { upserts } from "./upserts.mjs";

// The last release point: the tree as it stood before wave 2 of the restructuring.
const DEFAULT_BASE = "7e1d75f";

const HELP = `Usage: tests/bench/call_cost [options]
Compares what MCP calls cost in two builds, measured in one run: --base REV (built in a git
worktree under build/call-cost/<rev>/, kept for the next run) against the working tree (its own
build/kernel). The two are booted alternately, base first in odd rounds, current first in even
ones (use an even --rounds), for --rounds rounds, each
through its own qemu/run.sh as ./basalt run starts it (no disk; a fresh image of its own where a
figure needs one, never build/disk.img), and measured with the official MCP SDK client (one
figure also with a plain HTTP client, whose own cost is a fraction of the SDK's):
  kernel_info over HTTP    tools/call round trip p50 and calls/s, --calls sequential calls
                           (also with a fresh disk image, where the build has --disk)
  ping over HTTP           calls/s, --calls sequential calls
  kernel_info, plain       the same round trip from node:http on one keep-alive connection, no
                           SDK: p50 and calls/s (what the appliance itself costs, less diluted)
  vector_search over stdio p50 of --queries searches (k 10, ef --ef) in --vectors GloVe 100-d
                           vectors (cosine; a seeded random set if the GloVe file is absent)
  durable upserts          acknowledged one-vector (64 floats) upserts/s from 8 concurrent
                           callers on a fresh disk image (storage_bench.mjs's figure)
Prints a table (figure | base | current | current/base) with each side's range over the rounds.
Options:
  --base REV        the commit to compare against (default ${DEFAULT_BASE}, the last release point:
                    the tree before wave 2)
  --rounds N        rounds of base + current boots (default 4: each side first twice)
  --calls N         kernel_info and ping calls per round (default 300)
  --vectors N       vectors in the search collection (default 10000)
  --queries N       searches per round (default 200)
  --ef N            search ef (default 128)
  --upserts N       durable upserts per round (default 400)
  --net passt|user  the same user-mode network for both, where both run.sh know it (an older
                    run.sh may know only QEMU's own, "user"); default: each tree's own default.
                    The table says what each one used
  --json FILE       also write the figures (every round) as JSON
  --help            this text
The machine's load average is printed before and after: timings on a shared machine move with it,
which is why the two builds alternate and their ratio, not their absolute figures, is the result.`;

// --- arguments ---------------------------------------------------------------------------------

function usageError(message) {
  console.error(`call_cost: ${message}\n(tests/bench/call_cost --help lists the options)`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = { base: DEFAULT_BASE, rounds: 4, calls: 300, vectors: 10000, queries: 200, ef: 128, upserts: 400,
              net: null, json: null };
  const counts = { "--rounds": "rounds", "--calls": "calls", "--vectors": "vectors", "--queries": "queries",
                   "--ef": "ef", "--upserts": "upserts" };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === "--help" || a === "-h") {
      console.log(HELP);
      process.exit(0);
    }
    const value = () => {
      if (i + 1 >= argv.length || argv[i + 1].startsWith("--"))
        usageError(`${a} needs a value`);
      return argv[++i];
    };
    if (counts[a]) {
      const v = value();
      if (!/^[1-9][0-9]{0,6}$/.test(v))
        usageError(`${a} takes a whole number from 1, not '${v}'`);
      o[counts[a]] = Number(v);
    } else if (a === "--base") {
      o.base = value();
    } else if (a === "--net") {
      o.net = value();
      if (o.net !== "passt" && o.net !== "user")
        usageError(`--net takes passt or user, not '${o.net}'`);
    } else if (a === "--json") {
      o.json = value();
    } else {
      usageError(`unknown argument '${a}'`);
    }
  }
  if (o.ef > 512)
    usageError("--ef is at most 512 (the tool's bound)");
  return o;
}

const opts = parseArgs(process.argv.slice(2));

// --- the two builds ----------------------------------------------------------------------------

const git = (...args) => execFileSync("git", ["-C", root, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
const jobs = process.env.BASALT_JOBS ?? "2";

// Configures (once) and builds only the QEMU virt kernel of the tree at `dir`; its log beside it.
function buildKernel(dir, log) {
  const out = path.join(dir, "build/kernel");
  const steps = [];
  if (!fs.existsSync(path.join(out, "CMakeCache.txt")))
    steps.push(["cmake", ["-S", dir, "-B", out, "-GNinja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                          `-DCMAKE_TOOLCHAIN_FILE=${path.join(dir, "toolchain/aarch64-kernel.cmake")}`]]);
  steps.push(["cmake", ["--build", out, "--target", "basalt.elf", `-j${jobs}`]]);
  for (const [cmd, args] of steps) {
    const r = spawnSync(cmd, args, { encoding: "utf8" });
    fs.appendFileSync(log, `$ ${cmd} ${args.join(" ")}\n${r.stdout ?? ""}${r.stderr ?? ""}`);
    if (r.status !== 0) {
      console.error(`call_cost: building ${dir} failed (${log}):\n${(r.stdout + r.stderr).slice(-3000)}`);
      process.exit(1);
    }
  }
  return path.join(out, "basalt.elf");
}

// The base: a detached worktree of REV under build/call-cost/<rev>/, reused when it exists. Its
// .deps is a link to ours (the toolchain and the SDK are the same packages).
function prepareBase(rev) {
  let full;
  try {
    full = git("rev-parse", "--verify", `${rev}^{commit}`);
  } catch {
    usageError(`--base '${rev}' is not a commit of this repository`);
  }
  const short = full.slice(0, 7);
  const dir = path.join(root, "build/call-cost", short);
  if (!fs.existsSync(dir)) {
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    git("worktree", "add", "--detach", dir, full);
  } else if (execFileSync("git", ["-C", dir, "rev-parse", "HEAD"], { encoding: "utf8" }).trim() !== full) {
    console.error(`call_cost: ${dir} exists but is not at ${short}; remove it (git worktree remove ${dir}) to rebuild it`);
    process.exit(1);
  }
  const deps = path.join(dir, ".deps");
  if (!fs.existsSync(deps))
    fs.symlinkSync(fs.realpathSync(path.join(root, ".deps")), deps);
  console.error(`call_cost: building the base ${short} (${path.relative(root, dir)}/build/kernel) if needed...`);
  return { label: short, dir, kernel: buildKernel(dir, path.join(path.dirname(dir), `${short}.build.log`)) };
}

function prepareCurrent() {
  const head = git("rev-parse", "--short=7", "HEAD");
  const changed = git("status", "--porcelain", "--untracked-files=no") !== "";
  console.error("call_cost: building the working tree's kernel (build/kernel) if needed...");
  fs.mkdirSync(path.join(root, "build/call-cost"), { recursive: true });
  return { label: `working tree (${head}${changed ? ", with changes" : ""})`, dir: root,
           kernel: buildKernel(root, path.join(root, "build/call-cost/current.build.log")) };
}

// What a tree's run.sh can do, read from the script itself: an older one lacks options.
function describe(tree) {
  const runSh = path.join(tree.dir, "qemu/run.sh");
  const text = fs.readFileSync(runSh, "utf8");
  const has = (option) => text.includes(`    ${option})`);
  const passt = text.includes("passt") && spawnSync("sh", ["-c", "command -v passt"]).status === 0;
  let network = [], netNote;
  if (opts.net === "user") {
    network = has("--user-net") ? ["--user-net"] : [];
    netNote = "user (QEMU's slirp)";
    if (!has("--user-net") && text.includes("passt"))
      usageError(`${runSh} runs passt and knows no --user-net: --net user cannot apply to it`);
  } else {
    netNote = passt ? "passt" : "user (QEMU's slirp)";
    if (opts.net === "passt" && !passt)
      netNote += ", its run.sh knows no passt";
  }
  return { ...tree, runSh, network, netNote, passt, staticIp: has("--static-ip"), disk: has("--disk") };
}

// --- measurements ------------------------------------------------------------------------------

const KEY = `call-cost-${Date.now().toString(36)}-0123456789`;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-call-cost."));
process.on("exit", () => fs.rmSync(scratch, { recursive: true, force: true }));
let images = 0;
const freshImage = () => path.join(scratch, `disk-${++images}.img`); // run.sh creates it (sparse, 1 GiB)
const unmetered = ["--append", "rate=1000000/1000000"]; // the bucket must not measure itself
const elapsed = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// Whether a passt process serves the forwarded port: run.sh falls back to QEMU's own network where
// passt cannot run, and the table must say which network a figure was measured on.
function passtServes(port) {
  for (const pid of fs.readdirSync("/proc").filter((d) => /^[0-9]+$/.test(d))) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0");
      if (path.basename(cmd[0]) === "passt" && cmd.some((a) => a.endsWith(`/${port}:8080`)))
        return true;
    } catch {}
  }
  return false;
}

// kernel_info and ping over HTTP, through the SDK's Streamable HTTP client, one call at a time.
async function httpFigures(tree, disk) {
  const args = ["--key", `admin:bench:${KEY}`, ...(tree.staticIp ? ["--static-ip"] : []),
                ...(disk ? ["--disk", freshImage()] : [])];
  const node = await bootHttp(args, { kernel: tree.kernel, runSh: tree.runSh, network: tree.network,
                                      timeoutMs: 120000 });
  const client = new Client({ name: "basalt-call-cost", version: "1.0.0" });
  try {
    const usedPasst = passtServes(node.port);
    await client.connect(new StreamableHTTPClientTransport(new URL(node.url),
                                                           { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } }));
    const info = async () => {
      const r = await client.callTool({ name: "kernel_info", arguments: {} });
      if (r.isError)
        throw new Error(`kernel_info: ${JSON.stringify(r).slice(0, 300)}`);
    };
    for (let i = 0; i < 10; ++i) // the first connections and the client's own first-call work
      await info();
    const rtts = [];
    let t0 = process.hrtime.bigint();
    for (let i = 0; i < opts.calls; ++i) {
      const t = process.hrtime.bigint();
      await info();
      rtts.push(elapsed(t));
    }
    const infoRate = opts.calls / (elapsed(t0) / 1000);
    t0 = process.hrtime.bigint();
    for (let i = 0; i < opts.calls; ++i)
      await client.ping();
    const pingRate = opts.calls / (elapsed(t0) / 1000);
    const plain = await plainFigures(node.url);
    return { p50: median(rtts), infoRate, pingRate, plainP50: plain.p50, plainRate: plain.rate,
             network: usedPasst ? "passt" : "user (QEMU's slirp)" };
  } finally {
    await client.close().catch(() => {});
    await node.stop();
  }
}

// kernel_info through a plain keep-alive HTTP client (node:http, no SDK): the SDK client spends more
// CPU per call than the appliance, so its figures dilute what the appliance itself gained or lost.
async function plainFigures(url) {
  const pool = new HttpPool(url, 1);
  try {
    const auth = { Authorization: `Bearer ${KEY}` };
    const init = await pool.post({ jsonrpc: "2.0", id: 0, method: "initialize",
                                   params: { protocolVersion: "2025-11-25", capabilities: {},
                                             clientInfo: { name: "basalt-call-cost-plain", version: "1" } } }, auth);
    if (init.status !== 200)
      throw new Error(`initialize (plain client): ${init.status} ${init.text.slice(0, 300)}`);
    const sid = init.headers["mcp-session-id"];
    const headers = sid ? { ...auth, "Mcp-Session-Id": sid } : auth;
    const call = async (id) => {
      const r = await pool.post({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "kernel_info", arguments: {} } },
                                headers);
      if (r.status !== 200 || !r.json?.result || r.json.result.isError)
        throw new Error(`kernel_info (plain client): ${r.status} ${r.text.slice(0, 300)}`);
    };
    for (let i = 0; i < 10; ++i)
      await call(i + 1);
    const rtts = [];
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < opts.calls; ++i) {
      const t = process.hrtime.bigint();
      await call(100 + i);
      rtts.push(elapsed(t));
    }
    return { p50: median(rtts), rate: opts.calls / (elapsed(t0) / 1000) };
  } finally {
    pool.close();
  }
}

// A stdio session on the tree's own run.sh; call() throws on a tool error.
async function stdioSession(tree, extra) {
  const transport = new StdioClientTransport({ command: tree.runSh,
                                               args: ["--kernel", tree.kernel, "--stdio", ...unmetered, ...extra],
                                               stderr: "ignore" });
  const client = new Client({ name: "basalt-call-cost", version: "1.0.0" });
  await client.connect(transport, { timeout: 120000 });
  const call = async (name, args) => {
    const r = await client.request({ method: "tools/call", params: { name, arguments: args } },
                                   types.CallToolResultSchema, { timeout: 300000 });
    if (r.isError)
      throw new Error(`${name}: ${JSON.stringify(r).slice(0, 300)}`);
    return r.structuredContent;
  };
  return { client, call };
}

// The search set, loaded once: GloVe rows [0, vectors) to insert, the next `queries` to search.
const DIM = 100;
let searchSet;
function loadSearchSet() {
  const n = opts.vectors + opts.queries;
  if (fs.existsSync(glovePath))
    return { data: loadGlove(n, DIM), name: `GloVe 6B 100-d (first ${opts.vectors} words, cosine)` };
  let seed = 12345;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296) * 2 - 1;
  return { data: Float32Array.from({ length: n * DIM }, rand),
           name: `seeded random 100-d vectors (the GloVe file ${glovePath} is absent; cosine)` };
}

async function searchFigure(tree) {
  const { data } = searchSet;
  const s = await stdioSession(tree, []).catch((e) => {
    e.message = `booting: ${e.message}`;
    throw e;
  });
  try {
    await s.call("collection_create", { name: "search", dim: DIM, metric: "cosine", max_elements: opts.vectors });
    const batch = 250, perString = 100 * DIM; // strings of at most 100 rows (the kernel's JSON strings are <= 64 KiB)
    for (let at = 0; at < opts.vectors; at += batch) {
      const n = Math.min(batch, opts.vectors - at);
      const rows = data.subarray(at * DIM, (at + n) * DIM);
      const strings = [];
      for (let o = 0; o < rows.length; o += perString) {
        const part = rows.subarray(o, Math.min(rows.length, o + perString));
        strings.push(Buffer.from(part.buffer, part.byteOffset, part.byteLength).toString("base64"));
      }
      await s.call("vector_upsert", { collection: "search", ids: Array.from({ length: n }, (_, i) => at + i),
                                      vectors_f32: strings });
    }
    const rtts = [];
    for (let q = 0; q < opts.queries; ++q) {
      const row = opts.vectors + q;
      const vector = Array.from(data.subarray(row * DIM, (row + 1) * DIM));
      const t = process.hrtime.bigint();
      await s.call("vector_search", { collection: "search", vector, k: 10, ef: opts.ef });
      rtts.push(elapsed(t));
    }
    return { p50: median(rtts) };
  } finally {
    await s.client.close().catch(() => {});
  }
}

async function upsertFigure(tree) {
  const s = await stdioSession(tree, ["--disk", freshImage()]);
  try {
    await storageReady(s.client);
    await s.call("collection_create", { name: "durable", dim: 64, metric: "l2", max_elements: opts.upserts + 1000 });
    let seed = 1;
    const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296) * 2 - 1;
    const row = () => Array.from({ length: 64 }, rand);
    await upserts(s.call, "durable", { callers: 1, calls: 20, firstId: 900000, row }); // warm-up
    return { rate: await upserts(s.call, "durable", { callers: 8, calls: opts.upserts, firstId: 0, row }) };
  } finally {
    await s.client.close().catch(() => {});
  }
}

// --- the run -----------------------------------------------------------------------------------

// Each figure: how to read it from a round's results, its unit, and which way is better.
const FIGURES = [
  { key: "info_p50", name: "kernel_info over HTTP, p50", unit: "ms", better: "lower", from: (r) => r.http?.p50 },
  { key: "info_rate", name: "kernel_info over HTTP", unit: "calls/s", better: "higher", from: (r) => r.http?.infoRate },
  { key: "info_disk_p50", name: "kernel_info over HTTP with a disk, p50", unit: "ms", better: "lower",
    from: (r) => r.httpDisk?.p50 },
  { key: "info_disk_rate", name: "kernel_info over HTTP with a disk", unit: "calls/s", better: "higher",
    from: (r) => r.httpDisk?.infoRate },
  { key: "ping_rate", name: "ping over HTTP", unit: "calls/s", better: "higher", from: (r) => r.http?.pingRate },
  { key: "plain_p50", name: "kernel_info over HTTP, plain client (no SDK), p50", unit: "ms", better: "lower",
    from: (r) => r.http?.plainP50 },
  { key: "plain_rate", name: "kernel_info over HTTP, plain client (no SDK)", unit: "calls/s", better: "higher",
    from: (r) => r.http?.plainRate },
  { key: "search_p50", name: `vector_search over stdio (ef ${opts.ef}), p50`, unit: "ms", better: "lower",
    from: (r) => r.search?.p50 },
  { key: "upsert_rate", name: "durable upserts, 8 callers", unit: "acked/s", better: "higher",
    from: (r) => r.upsert?.rate },
];

const loadavg = () => os.loadavg().map((x) => x.toFixed(2)).join(" ");

async function measureRound(tree, round) {
  const r = { notes: [] };
  const attempt = async (key, what, fn) => {
    const t0 = process.hrtime.bigint();
    try {
      r[key] = await fn();
    } catch (e) {
      const note = `${what}: ${e.message.split("\n")[0]} (after ${(elapsed(t0) / 1000).toFixed(0)} s)`;
      r.notes.push(note);
      console.error(`call_cost: round ${round}, ${tree.label}: ${note}`);
    }
  };
  await attempt("http", "HTTP, no disk", () => httpFigures(tree, false));
  if (tree.disk)
    await attempt("httpDisk", "HTTP with a disk", () => httpFigures(tree, true));
  await attempt("search", "vector_search", () => searchFigure(tree));
  if (tree.disk)
    await attempt("upsert", "durable upserts", () => upsertFigure(tree));
  return r;
}

const fmt = (x, unit) => (x === undefined ? "" : unit === "ms" ? x.toFixed(2) : x.toFixed(0));
function cell(values, unit) {
  const v = values.filter((x) => x !== undefined);
  if (!v.length)
    return { text: "n/a", mid: undefined };
  const mid = median(v);
  const lo = Math.min(...v), hi = Math.max(...v);
  return { text: `${fmt(mid, unit)} (${fmt(lo, unit)}–${fmt(hi, unit)})`, mid };
}

async function main() {
  const base = describe(prepareBase(opts.base));
  const current = describe(prepareCurrent());
  searchSet = loadSearchSet();
  const startLoad = loadavg();
  console.log(`call_cost: base ${base.label} vs ${current.label}, ${opts.rounds} round(s), alternating; ` +
              `load average at the start ${startLoad} (${os.cpus().length} cores)`);
  const results = { base: [], current: [] };
  // The side booted first alternates by round: the second boot of a round came out slower on every
  // figure when both sides were the same build (an A/A run, 2026-11-29: 0.77-0.95x, searches 1.37x).
  for (let round = 1; round <= opts.rounds; ++round) {
    const order = round % 2 ? [["base", base], ["current", current]] : [["current", current], ["base", base]];
    for (const [side, tree] of order) {
      console.error(`call_cost: round ${round}/${opts.rounds}: ${tree.label}...`);
      results[side].push(await measureRound(tree, round));
    }
  }
  const endLoad = loadavg();

  const rows = FIGURES.map((f) => {
    const b = cell(results.base.map(f.from), f.unit), c = cell(results.current.map(f.from), f.unit);
    const ratio = b.mid !== undefined && c.mid !== undefined ? c.mid / b.mid : undefined;
    return { f, b, c, ratio };
  });
  const networks = (side, tree) => [...new Set(results[side].flatMap((r) => [r.http?.network, r.httpDisk?.network])
                                                              .filter(Boolean))].join(", ") || tree.netNote;
  const header = ["figure", `base (${base.label})`, `current (${current.label})`, "current/base"];
  const table = [header, ...rows.map(({ f, b, c, ratio }) => [
    `${f.name} [${f.unit}, ${f.better} is better]`, b.text, c.text, ratio === undefined ? "n/a" : `${ratio.toFixed(2)}×`])];
  console.log(`\nmedian over the rounds (range in brackets):`);
  console.log(`| ${table[0].join(" | ")} |\n|${table[0].map(() => "---").join("|")}|`);
  for (const line of table.slice(1))
    console.log(`| ${line.join(" | ")} |`);
  console.log(`\nnetwork: base ${networks("base", base)}; current ${networks("current", current)}` +
              (opts.net ? ` (--net ${opts.net})` : " (each run.sh's default)"));
  console.log(`search set: ${searchSet.name}, ${opts.queries} queries, k 10, ef ${opts.ef}; ` +
              `${opts.calls} calls per HTTP figure per round; ${opts.upserts} upserts per round`);
  for (const [side, tree] of [["base", base], ["current", current]]) {
    if (!tree.disk)
      console.log(`${side} ${tree.label}: its run.sh has no --disk, so no figure with a disk`);
    const notes = results[side].flatMap((r, i) => r.notes.map((n) => `round ${i + 1}: ${n}`));
    for (const n of notes)
      console.log(`${side}: FAILED ${n}`);
  }
  console.log(`load average at the end ${endLoad}`);

  if (opts.json) {
    const side = (tree, name) => ({ label: tree.label, dir: tree.dir, kernel: tree.kernel, network: networks(name, tree),
                                    has_disk: tree.disk, rounds: results[name] });
    fs.writeFileSync(opts.json, JSON.stringify({
      base: side(base, "base"), current: side(current, "current"),
      options: opts, search_set: searchSet.name, load_average: { start: startLoad, end: endLoad },
      figures: rows.map(({ f, b, c, ratio }) => ({ key: f.key, name: f.name, unit: f.unit, better: f.better,
                                                   base: results.base.map(f.from) ?? null, base_median: b.mid ?? null,
                                                   current: results.current.map(f.from), current_median: c.mid ?? null,
                                                   ratio: ratio ?? null })),
    }, null, 2) + "\n");
  }
  const failed = [...results.base, ...results.current].some((r) => r.notes.length);
  process.exit(failed ? 1 : 0);
}

await main();
