// Where a call's time goes inside QEMU, by function of the kernel: boots the appliance with QEMU's
// perf map (run.sh, BASALT_QEMU_PERFMAP), makes --calls sequential calls with the official SDK
// client over HTTP, samples QEMU with `perf record` meanwhile, and prints
//   - the CPU each process spent per call (QEMU's threads, passt, this client),
//   - QEMU's samples split into the kernel's translated code, QEMU's own code and the host kernel,
//   - the kernel's functions by share of QEMU's samples (addresses resolved with addr2line),
//   - QEMU's and the host's busiest symbols.
// The kernel_perf stages time the pipeline from inside; this shows what the stages cannot: time
// spread thin over a library routine, interrupts, the exits into QEMU's devices.
// Needs `perf` (Debian: linux-perf) allowed to sample this user's processes.
// Usage: node tests/bench/guest_profile.mjs [--tool kernel_info|ping|NAME] [--args JSON]
//                                           [--calls N] [--top N] [--kernel ELF] [--freq HZ]
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { Client, StreamableHTTPClientTransport, bootHttp, defaultKernel, unmetered } from "../mcp/sdk.mjs";

const usage = `usage: node tests/bench/guest_profile.mjs [--tool kernel_info|ping|NAME] [--args JSON]
       [--calls N (default 1000)] [--top N (default 30)] [--kernel ELF] [--freq HZ (default 4000)]`;
const opts = { tool: "kernel_info", args: {}, calls: 1000, top: 30, kernel: defaultKernel, freq: 4000 };
for (let i = 2; i < process.argv.length; ++i) {
  const a = process.argv[i];
  const value = () => {
    if (i + 1 >= process.argv.length) {
      console.error(`guest_profile: ${a} needs a value\n${usage}`);
      process.exit(2);
    }
    return process.argv[++i];
  };
  if (a === "--tool") opts.tool = value();
  else if (a === "--args") opts.args = JSON.parse(value());
  else if (a === "--calls") opts.calls = Number(value());
  else if (a === "--top") opts.top = Number(value());
  else if (a === "--kernel") opts.kernel = path.resolve(value());
  else if (a === "--freq") opts.freq = Number(value());
  else {
    console.error(a === "--help" ? usage : `guest_profile: unknown option ${a}\n${usage}`);
    process.exit(a === "--help" ? 0 : 2);
  }
}
for (const k of ["calls", "top", "freq"])
  if (!Number.isInteger(opts[k]) || opts[k] < 1) {
    console.error(`guest_profile: --${k} takes a positive whole number\n${usage}`);
    process.exit(2);
  }
const have = (cmd) => {
  try {
    execFileSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};
if (!have("perf")) {
  console.error("guest_profile: needs perf (Debian: apt-get install linux-perf)");
  process.exit(2);
}

// CPU ticks (user + system) of a process or one of its threads.
const hz = 100; // USER_HZ on Linux
const ticks = (where) => {
  try {
    const f = fs.readFileSync(`/proc/${where}/stat`, "utf8");
    const s = f.slice(f.lastIndexOf(")") + 2).split(" ");
    return Number(s[11]) + Number(s[12]);
  } catch {
    return NaN;
  }
};
const threads = (pid) => Object.fromEntries(fs.readdirSync(`/proc/${pid}/task`).map((t) => {
  const name = fs.readFileSync(`/proc/${pid}/task/${t}/comm`, "utf8").trim();
  return [`${name} (${t})`, ticks(`${pid}/task/${t}`)];
}));

const KEY = "guest-profile-key-0123456789";
process.env.BASALT_QEMU_PERFMAP = "1";
const node = await bootHttp(["--key", `admin:bench:${KEY}`, ...unmetered], { kernel: opts.kernel });
const qemu = node.pid; // run.sh execs QEMU
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-guest-profile."));
const data = path.join(scratch, "perf.data");
let client;
try {
  client = new Client({ name: "guest-profile", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(node.url),
    { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } }));
  const call = opts.tool === "ping" ? () => client.ping()
    : async () => {
      const r = await client.callTool({ name: opts.tool, arguments: opts.args });
      if (r.isError)
        throw new Error(`${opts.tool}: ${JSON.stringify(r).slice(0, 300)}`);
    };
  for (let i = 0; i < 100; ++i) // warm: the code translated, the connection open
    await call();
  let passt = "";
  try {
    passt = execFileSync("pgrep", ["-f", `passt.*${node.port}`]).toString().trim().split("\n")[0];
  } catch { /* QEMU's own network: no passt */ }

  const perf = spawn("perf", ["record", "-q", "-F", String(opts.freq), "-o", data, "-p", String(qemu)],
                     { stdio: ["ignore", "ignore", "inherit"] });
  await new Promise((r) => setTimeout(r, 300)); // perf attached
  const t0 = threads(qemu), p0 = passt ? ticks(passt) : 0, c0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < opts.calls; ++i)
    await call();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const t1 = threads(qemu), p1 = passt ? ticks(passt) : 0, c1 = process.cpuUsage(c0);
  perf.kill("SIGINT");
  await new Promise((r) => perf.once("exit", r));

  const perCall = (t) => ((t * 1000) / hz / opts.calls).toFixed(3);
  console.log(`${opts.tool}: ${opts.calls} calls in ${ms.toFixed(0)} ms (${(opts.calls / ms * 1000).toFixed(0)}/s, ` +
              `network ${node.network}); CPU per call, ms:`);
  for (const [name, t] of Object.entries(t1))
    if (t - (t0[name] ?? 0) > 0)
      console.log(`  QEMU ${name.padEnd(24)} ${perCall(t - (t0[name] ?? 0))}`);
  if (passt)
    console.log(`  passt${" ".repeat(25)} ${perCall(p1 - p0)}`);
  console.log(`  this client (Node)${" ".repeat(12)} ${((c1.user + c1.system) / 1000 / opts.calls).toFixed(3)}`);

  const report = execFileSync("perf", ["report", "-i", data, "--no-children", "--sort", "dso,sym", "-g", "none",
                                       "--percent-limit", "0", "--stdio"],
                              { maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "ignore"] }).toString();
  const guest = [];
  const host = [];
  const shares = { guest: 0, qemu: 0, kernel: 0 };
  for (const line of report.split("\n")) {
    const m = line.match(/^\s+([\d.]+)%\s+(\S.*?)\s+\[(.)\]\s+(.*)$/);
    if (!m)
      continue;
    const [pct, dso, kind, sym] = [Number(m[1]), m[2].trim(), m[3], m[4].trim()];
    const g = sym.match(/^guest-0x([0-9a-f]+)/);
    if (g) {
      guest.push([g[1], pct]);
      shares.guest += pct;
    } else {
      shares[kind === "k" ? "kernel" : "qemu"] += pct;
      host.push([`${sym} (${dso})`, pct]);
    }
  }
  // Each translated block is named by its first guest address: resolved in one addr2line run.
  const names = guest.length ? execFileSync("aarch64-linux-gnu-addr2line", ["-f", "-C", "-e", opts.kernel,
                                                                           ...guest.map(([a]) => a)],
                                            { maxBuffer: 64 << 20 }).toString().split("\n") : [];
  const byFunction = new Map();
  guest.forEach(([, pct], i) => {
    const fn = (names[2 * i] ?? "??").replace(/\(.*$/, "");
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + pct);
  });
  console.log(`\nQEMU's samples: the kernel's code ${shares.guest.toFixed(1)}%, QEMU and its libraries ` +
              `${shares.qemu.toFixed(1)}%, the host kernel ${shares.kernel.toFixed(1)}%`);
  const top = (rows, title) => {
    console.log(`\n${title}`);
    for (const [name, pct] of rows.sort((a, b) => b[1] - a[1]).slice(0, opts.top))
      console.log(`  ${pct.toFixed(2).padStart(6)}%  ${name.slice(0, 110)}`);
  };
  top([...byFunction.entries()], "the kernel's functions (% of QEMU's samples):");
  top(host, "QEMU's and the host's symbols (% of QEMU's samples):");
} finally {
  await client?.close().catch(() => {});
  await node.stop();
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.rmSync(`/tmp/perf-${qemu}.map`, { force: true });
}
