// Shared by the end-to-end tests and the benchmark: the official MCP SDK from .deps/npm (installed
// by toolchain/bootstrap.sh) and a client that boots the kernel with `qemu/run.sh --stdio`.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const sdkDir = path.join(root, ".deps/npm/node_modules/@modelcontextprotocol/sdk/dist/esm");
const load = (file) => import(pathToFileURL(path.join(sdkDir, file)));

export const { Client } = await load("client/index.js");
export const { StdioClientTransport, getDefaultEnvironment } = await load("client/stdio.js");
export const types = await load("types.js");
export const defaultKernel = path.join(root, "build/kernel/basalt.elf");

// The envelope of a failed tool result (isError): under _meta["io.basalt/error"], never as
// structuredContent, which is kept for output that conforms to the tool's outputSchema.
export const envelopeOf = (result) => result._meta?.["io.basalt/error"];

// BASALT_LINE=uart|virtio: which device carries the line (run.sh --line; default virtio).
const lineArgs = process.env.BASALT_LINE ? ["--line", process.env.BASALT_LINE] : [];
// BASALT_BOARD=rpi4: the same session on the Raspberry Pi 4 image under QEMU raspi4b (its PL011
// carries the line; the image is kernel8.img beside the ELF the test was given).
export const board = process.env.BASALT_BOARD ?? "virt";
// BASALT_DTB: the device tree the Pi's firmware would pass (e.g. Debian's bcm2711-rpi-4-b.dtb).
const boardArgs = board === "virt" ? [] : ["--board", board, ...(process.env.BASALT_DTB ? ["--dtb", process.env.BASALT_DTB] : [])];
const imageFor = (kernel) => (board === "rpi4" ? path.join(path.dirname(kernel), "kernel8.img") : kernel);

// The call bucket a test boots with. A test must not pass only because the machine is slow enough
// to stay under the appliance's default bucket (burst 50, 20/s), so every test that is not about
// the limiter raises it out of reach; the tests of the limiter itself (contract_test,
// http_contract_test, lines_test) pass `metered: true` and keep the appliance's own limits.
export const unmetered = ["--append", "rate=1000000/1000000"];
const meterArgs = (metered) => (metered ? [] : unmetered);

// Each boot() serves QEMU's monitor on a socket of its own (run.sh's BASALT_QEMU_MONITOR), so a test
// that fails or times out prints where the guest's tasks were (qemu/task_dump.py) before it ends
// QEMU: a hang seen once in CI then says what it was.
let monitorDir = null;
let monitors = 0;
function monitorSocket() {
  if (!monitorDir) {
    monitorDir = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-mon."));
    process.on("exit", () => fs.rmSync(monitorDir, { recursive: true, force: true }));
  }
  return path.join(monitorDir, `${++monitors}.sock`);
}

// Prints every task of the guest behind a monitor socket (nothing if QEMU is gone).
export function dumpTasks(socket, kernel = defaultKernel) {
  if (!socket || !fs.existsSync(socket))
    return;
  const r = spawnSync(path.join(root, "qemu/task_dump.py"), [socket, kernel], { encoding: "utf8", timeout: 60000 });
  console.error(`the guest's tasks when the test failed (qemu/task_dump.py):\n${r.stdout ?? ""}${r.stderr ?? ""}`);
}

// A client and its transport for a kernel booted with extra run.sh arguments. On failure or
// timeout, fail() closes the transport (QEMU holds the test's stdout open while it runs).
// capabilities: what the client declares at initialize (e.g. { sampling: {}, elicitation: {} }).
// env: more environment for run.sh (e.g. BASALT_DISK_FAULTS).
export function boot(name, runArgs, { kernel = defaultKernel, stderr = "inherit", timeoutMs = 60000, capabilities,
                                     metered = false, env = {} } = {}) {
  const monitor = monitorSocket();
  const transport = new StdioClientTransport({
    command: path.join(root, "qemu/run.sh"),
    args: [...boardArgs, "--kernel", imageFor(kernel), "--stdio", ...lineArgs, ...meterArgs(metered), ...runArgs],
    stderr,
    env: { ...getDefaultEnvironment(), BASALT_QEMU_MONITOR: monitor, ...env },
  });
  const client = new Client({ name, version: "1.0.0" }, capabilities ? { capabilities } : undefined);
  const fail = async (e) => {
    console.error("FAIL:", e);
    dumpTasks(monitor, kernel);
    await transport.close().catch(() => {});
    process.exit(1);
  };
  const timer = timeoutMs ? setTimeout(() => fail("timed out"), timeoutMs) : null;
  const done = async () => {
    if (timer)
      clearTimeout(timer);
    await client.close();
  };
  return { client, transport, fail, done };
}

// Polls kernel_tasks (through callTool) until no task named `name` is left: cancellation must
// really stop the tool task, not just silence its answer.
export async function taskGone(callTool, name, tries = 20) {
  for (let i = 0; i < tries; ++i) {
    await new Promise((r) => setTimeout(r, 100));
    const now = await callTool({ name: "kernel_tasks", arguments: {} });
    if (!now.structuredContent.tasks.some((t) => t.name === name))
      return true;
  }
  return false;
}

export const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

// A free TCP port on the host loopback (for QEMU's user-network forward).
export async function freePort() {
  const net = await import("node:net");
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// passt (Debian 12's) takes a forwarded connection at once, before the guest can answer its SYN,
// and sends that SYN only once: a connection made while the guest boots waits until passt resets
// it 10 s later. Closed by the client before that, it has passt spin on the closed socket (a
// level-triggered EPOLLRDHUP it does not handle until then), a core's worth of the host's CPU
// taken from QEMU and the client for the first 10 s of the appliance's life. A probe that timed
// out is therefore held open that long, not closed.
const kPasstSynTimeoutMs = 11000;

// Resolves when anything answers HTTP on the port (a connection of its own, closed after).
export function probe(port) {
  return new Promise((resolve, reject) => {
    import("node:http").then(({ default: http }) => {
      const req = http.get({ host: "127.0.0.1", port, path: "/mcp", agent: false, timeout: 1000, headers: { Connection: "close" } },
                           (res) => { res.resume(); res.on("end", resolve); });
      req.on("timeout", () => {
        setTimeout(() => req.destroy(), kPasstSynTimeoutMs).unref();
        reject(new Error("timeout"));
      });
      req.on("error", reject);
    }, reject);
  });
}

// Boots the kernel with a NIC whose port 8080 is forwarded to a free host port, and resolves once
// the HTTP bridge answers. Returns { url, port, log(), stop() }. runSh: another tree's run.sh (the
// call-cost benchmark boots an older build through its own script); network: run.sh's network
// arguments, instead of the ones BASALT_USER_NET chooses.
export async function bootHttp(runArgs = [], { kernel = defaultKernel, timeoutMs = 30000, metered = false,
                                             runSh = path.join(root, "qemu/run.sh"), network } = {}) {
  const { spawn } = await import("node:child_process");
  const port = await freePort();
  // BASALT_USER_NET=1: QEMU's own user network instead of the default (passt), for comparison.
  network ??= process.env.BASALT_USER_NET ? ["--user-net"] : [];
  const child = spawn(runSh, ["--kernel", kernel, "--hostfwd", `127.0.0.1:${port}:8080`,
                                                      ...network, ...meterArgs(metered), ...runArgs],
                      { stdio: ["pipe", "pipe", "pipe"] });
  let text = "";
  child.stdout.on("data", (d) => (text += d));
  // run.sh's own lines pass through; the one saying passt could not serve is remembered.
  let fellBack = network.includes("--user-net");
  child.stderr.on("data", (d) => {
    process.stderr.write(d);
    if (/^run\.sh: passt (cannot run here|is not installed)/m.test(d.toString()))
      fellBack = true;
  });
  // Ready when the appliance answers HTTP at all (it has its address and the bridge runs).
  const ready = (async () => {
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
      if (child.exitCode !== null)
        throw new Error(`QEMU exited (${child.exitCode}) before serving:\n${text}`);
      try {
        await probe(port); // a connection of its own, closed after the answer: nothing lingers
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    throw new Error(`no HTTP answer after ${timeoutMs} ms:\n${text}`);
  })();
  const stop = () => new Promise((resolve) => {
    if (child.exitCode !== null)
      return resolve();
    child.once("exit", resolve);
    child.kill("SIGTERM");
  });
  try {
    await ready;
  } catch (e) {
    await stop();
    throw e;
  }
  // shell(): a command for the console shell (when the console is not the MCP line).
  const shell = (cmd) => child.stdin.write(cmd + "\r");
  // network: "passt" (the default) or "user" (QEMU's own, asked for or where passt cannot run).
  return { url: `http://127.0.0.1:${port}/mcp`, port, pid: child.pid, log: () => text, stop, shell,
           network: fellBack ? "user" : "passt" };
}

// A test of what the default network (passt) guarantees cannot pass on QEMU's own, whose forwarded
// port listens with a backlog of one: where run.sh had to fall back (passt not installed, or no user
// namespaces for its sandbox, as in a chroot), the test stops QEMU and says it is skipped (exit 77,
// the tests' SKIP_RETURN_CODE).
export async function skipUnlessPasst(node, name) {
  if (node.network === "passt")
    return;
  console.log(`SKIP ${name}: the appliance is on QEMU's own user network (asked for, or passt cannot run here), ` +
              "whose forwarded port loses SYNs to bursts by design: this test holds the default network to its guarantee");
  await node.stop();
  process.exit(77);
}

// The ending of a test against a booted node: a watchdog, and pass()/fail(e) that stop QEMU,
// print the verdict (with the end of the console on failure) and exit.
export function watch(node, name, timeoutMs) {
  const finish = async (code, ...message) => {
    clearTimeout(timer);
    (code ? console.error : console.log)(...message);
    await node.stop();
    process.exit(code);
  };
  const timer = setTimeout(() => finish(1, "FAIL: timed out\n--- console ---\n" + node.log().slice(-3000)), timeoutMs);
  return {
    pass: () => finish(0, `PASS ${name}`),
    fail: (e) => finish(1, "FAIL:", e, "\n--- console ---\n" + node.log().slice(-3000)),
    cancel: () => clearTimeout(timer), // the node is stopped by hand and another watched
  };
}

// A client standing in for the human at the sink policy's confirmation form (a destructive call
// from a client is held back until someone types the collection's name back): it must have
// declared elicitation ({ capabilities: { elicitation: {} } } to boot), and answers every
// confirmation by typing back the name the form's message quotes.
export function confirmAsHuman(client) {
  client.setRequestHandler(types.ElicitRequestSchema, async (req) => {
    const quoted = /collection '([^']+)'/.exec(req.params.message);
    return quoted ? { action: "accept", content: { name: quoted[1] } } : { action: "decline" };
  });
}

// kernel://status's storage section.
export async function storageStatus(client) {
  return JSON.parse((await client.readResource({ uri: "kernel://status" })).contents[0].text).storage;
}

// The same once recovery has ended: with a disk the appliance answers while it rebuilds the store
// (vector tools then wait for it, within their time limit), so tests about the store wait first.
export async function storageReady(client, timeoutMs = 300000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const storage = await storageStatus(client);
    if (storage.state !== "recovering" || Date.now() > deadline)
      return storage;
    await new Promise((r) => setTimeout(r, 20));
  }
}

// One session on a disk image, once its store is recovered: fn({ call, status }) with call(tool,
// args) answering the raw result (errors included) and status() the storage section. human: a
// client that confirms what the sink policy asks (drops); args: more run.sh arguments.
export async function diskSession(name, disk, fn, { kernel = defaultKernel, timeoutMs = 60000, callTimeoutMs = 30000,
                                                   human = false, args = [] } = {}) {
  const s = boot(name, ["--disk", disk, ...args], { kernel, timeoutMs, capabilities: human ? { elicitation: {} } : undefined });
  if (human)
    confirmAsHuman(s.client);
  const call = (tool, args) => s.client.request({ method: "tools/call", params: { name: tool, arguments: args } },
                                                types.CallToolResultSchema, { timeout: callTimeoutMs });
  try {
    await s.client.connect(s.transport);
    await storageReady(s.client);
    await fn({ call, status: () => storageStatus(s.client) });
    await s.done();
  } catch (e) {
    await s.fail(e);
  }
}

// A tool call through the client's own callTool() that must succeed: its structuredContent.
export async function callOk(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError)
    throw new Error(`${name}: ${JSON.stringify(r)}`);
  return r.structuredContent;
}

// A tool call that must be refused with `code` and details.reason `reason`: its envelope's error.
export async function callRefused(client, name, args, code, reason) {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError !== true)
    throw new Error(`${name} ran: ${JSON.stringify(r)}`);
  const e = envelopeOf(r).error;
  if (e.code !== code || e.details?.reason !== reason)
    throw new Error(`${name}: expected ${code}/${reason}, got ${JSON.stringify(r)}`);
  return e;
}

// The store's collection names, sorted.
export const collectionNames = async (client) =>
  (await callOk(client, "collection_list", {})).collections.map((c) => c.name).sort();
