// Hostile clients against the kernel's HTTP server: 200 connections at once (half idle, half
// slow-loris heads), oversize heads and bodies, garbage bytes, abrupt disconnects mid-request.
// Meanwhile a well-behaved client is still served; afterwards every connection is gone and the
// heap of the net task and the HTTP bridge is back to its baseline (nothing leaked).
// Usage: node http_hostile_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import net from "node:net";

import { HttpPool } from "./http_pool.mjs";
import { bootHttp, watch } from "./sdk.mjs";

const kernel = process.argv[2];
const ADMIN = "admin-key-0123456789abcdef";
const node = await bootHttp(["--key", `admin:root:${ADMIN}`], { kernel });
const verdict = watch(node, "http_hostile_test", 170000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The well-behaved client: one keep-alive connection, a 2026-07-28 request (no session needed).
const good = new HttpPool(node.url, 1);
const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
let id = 1;
const call = (name) => good.post({ jsonrpc: "2.0", id: id++, method: "tools/call", params: { name, arguments: {}, _meta: meta } },
                                  { Authorization: `Bearer ${ADMIN}` });
async function heaps() {
  const r = await call("kernel_tasks");
  assert.equal(r.status, 200, r.text);
  const tasks = r.json.result.structuredContent.tasks;
  const of = (name) => tasks.find((t) => t.name === name).heap_bytes;
  return { net: of("net"), http: of("mcp-http") };
}

// A raw connection that records what the server sent and when it closed.
function open() {
  return new Promise((resolve, reject) => {
    const s = net.connect(node.port, "127.0.0.1");
    s.received = "";
    s.gone = false;
    s.on("data", (d) => (s.received += d));
    s.on("close", () => (s.gone = true));
    s.on("error", () => {});
    s.once("connect", () => resolve(s));
    s.setTimeout(20000, () => reject(new Error("connect timed out")));
  });
}
const statusOf = (s) => Number((s.received.match(/^HTTP\/1\.1 (\d{3})/) || [])[1]);
async function until(pred, ms, what) {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100))
    if (pred())
      return;
  assert.fail(`timed out waiting for ${what}`);
}

try {
  assert.equal((await call("kernel_info")).status, 200);
  const base = await heaps();

  // 200 connections, opened one after another: QEMU's own user-network forward (--user-net)
  // accepts with a backlog of one, and a burst would leave connections hanging in the host's
  // queue for many seconds (see http_pool.mjs). The kernel's own count says when they have all
  // arrived.
  const idle = [], loris = [];
  for (let i = 0; i < 200; ++i) {
    (i < 100 ? idle : loris).push(await open());
    await sleep(15);
  }
  const openInKernel = async () => {
    const mark = node.log().length;
    node.shell("net");
    for (let i = 0; i < 20; ++i) {
      await sleep(100);
      // Open, or half-open: passt (the default user-mode network) completes a forwarded
      // connection's handshake only once its client sends, so the idle ones wait in the backlog.
      const m = node.log().slice(mark).match(/http :\d+: (\d+) open, (\d+) half-open/);
      if (m)
        return Number(m[1]) + Number(m[2]);
    }
    return -1;
  };
  let held = 0;
  for (let i = 0; i < 40 && held < 200; ++i)
    held = await openInKernel();
  assert.ok(held >= 200, `the kernel holds ${held} connections`);
  const t0 = Date.now();
  // Slow-loris: a head that never ends, one line every second.
  const drip = setInterval(() => {
    for (const s of loris)
      if (!s.gone)
        s.write(s.started ? `X-Drip-${Date.now() % 1000}: y\r\n` : ((s.started = true), "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  }, 1000);

  // While they hang on, a real client is served.
  const during = await call("kernel_info");
  assert.equal(during.status, 200);
  assert.equal(during.json.result.structuredContent.name, "Basalt");

  // Oversize head -> 431; oversize body (by Content-Length) -> 413; garbage -> 400; each closed.
  const bigHead = await open();
  bigHead.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + "a".repeat(20000) + "\r\n\r\n");
  const bigBody = await open();
  bigBody.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n{");
  const garbage = await open();
  garbage.write(Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 97 + 13) & 0xff)));
  const smuggle = await open();
  smuggle.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  for (const [s, status] of [[bigHead, 431], [bigBody, 413], [garbage, 400], [smuggle, 400]]) {
    await until(() => s.gone, 10000, `close after ${status}`);
    assert.equal(statusOf(s), status, s.received.slice(0, 200));
    assert.match(s.received, /"ok":false/);
  }

  // Abrupt disconnects mid-request: half a head, half a body, a call then gone.
  for (let i = 0; i < 20; ++i) {
    const s = await open();
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "kernel_info", arguments: {}, _meta: meta } });
    const full = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer ${ADMIN}\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: kernel_info\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    s.write(full.slice(0, [40, full.length - 10, full.length][i % 3]));
    if (i % 3 === 2)
      await sleep(5);
    s.destroy();
  }
  assert.equal((await call("kernel_info")).status, 200, "still serving after the disconnects");

  // Pipelining: a tool call (answered later, by its tool task) and a list in one write; both are
  // answered, in order, on the one connection.
  {
    const s = await open();
    const req = (id, method, params) => {
      const body = JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } });
      const mirrored = `MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: ${method}\r\n${params.name ? `Mcp-Name: ${params.name}\r\n` : ""}`;
      return `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
             `Authorization: Bearer ${ADMIN}\r\n${mirrored}Content-Length: ${body.length}\r\n\r\n${body}`;
    };
    s.write(req(1, "tools/call", { name: "kernel_info", arguments: {} }) + req(2, "tools/list", {}));
    await until(() => (s.received.match(/HTTP\/1\.1 200/g) || []).length === 2 && s.received.includes('"id":2'), 10000, "two pipelined answers");
    assert.ok(s.received.indexOf('"id":1') < s.received.indexOf('"id":2'), "answers in request order");
    s.destroy();
  }

  // Slow-loris heads are cut off: 408 about 10 s after their first byte.
  await until(() => loris.every((s) => s.gone), 30000, "slow-loris connections closed");
  const lorisMs = Date.now() - t0;
  clearInterval(drip);
  assert.ok(loris.every((s) => statusOf(s) === 408), `loris statuses: ${[...new Set(loris.map(statusOf))]}`);
  assert.ok(idle.every((s) => !s.gone), "idle connections are kept until their idle timeout");

  // Everyone leaves; the server lets go of every connection and of the memory they held.
  for (const s of idle)
    s.destroy();
  let after;
  for (let i = 0; i < 50; ++i) {
    await sleep(200);
    after = await heaps();
    if (after.net === base.net && after.http === base.http)
      break;
  }
  assert.deepEqual(after, base, "net task and HTTP bridge heaps are back to their baseline");
  console.log(`hostile: ${held} connections held, slow-loris cut after ${(lorisMs / 1000).toFixed(1)} s, heaps back to ` +
              `baseline (net ${base.net} B, mcp-http ${base.http} B)`);
  good.close();
  await verdict.pass();
} catch (e) {
  await verdict.fail(e);
}
