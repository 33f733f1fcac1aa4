// Clients that never read, through the network `./basalt run` gives (the default user-mode network,
// a host port forwarded): 80 connections each pipeline 1,000 valid 2026-07-28 tools/list requests
// and never read an answer. Throughout, a client with a good key opens a fresh connection each
// second for a tools/list, and each must be answered within 2 s. (test_net_flood.py holds the
// same flood on the datagram link, where the attackers' window is closed from the start; here the
// host's socket buffers take answers until they are full, so the appliance has real work for
// every one of them: it must still take its turns fairly, and not let their pipelines fill its
// buffers.) The appliance's own limits apply, as under ./basalt run.
// Usage: node http_nonreading_test.mjs KERNEL_ELF [SECONDS]
import assert from "node:assert/strict";
import net from "node:net";

import { bootHttp, skipUnlessPasst, watch } from "./sdk.mjs";

const kernel = process.argv[2];
const SECONDS = Number(process.argv[3] ?? 30);
const ATTACKERS = 80;
const REQUESTS = 1000;
const KEY = "admin-key-0123456789abcdef";
const node = await bootHttp(["--key", `admin:root:${KEY}`], { kernel, metered: true });
await skipUnlessPasst(node, "http_nonreading_test");
const verdict = watch(node, "http_nonreading_test", (SECONDS + 90) * 1000);

const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {
  _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } } });
const request = (key) => `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${node.port}\r\nContent-Type: application/json\r\n` +
  `Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n` +
  (key ? `Authorization: Bearer ${key}\r\nConnection: close\r\n` : "") + `Content-Length: ${body.length}\r\n\r\n${body}`;
const pipeline = request(null).repeat(REQUESTS);

const attackers = [];
function attack() {
  const s = net.connect(node.port, "127.0.0.1");
  s.pause(); // never read: the host's receive buffer fills, then the window closes
  s.on("error", () => {});
  s.write(pipeline);
  attackers.push(s);
}

// The good client: a fresh connection, its answer complete; resolves with the seconds it took.
function good() {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const s = net.connect(node.port, "127.0.0.1");
    let got = "";
    const timer = setTimeout(() => { s.destroy(); resolve({ s: Infinity, status: "none in 20 s" }); }, 20000);
    s.on("data", (d) => (got += d));
    s.on("error", () => {});
    s.on("close", () => {
      clearTimeout(timer);
      resolve({ s: (performance.now() - t0) / 1000, status: got.slice(0, 12), tools: got.includes('"tools"') });
    });
    s.write(request(KEY));
  });
}

try {
  const warm = await good();
  assert.ok(warm.tools, `before the flood: ${warm.status}`);
  const t0 = performance.now();
  for (let i = 0; i < ATTACKERS; ++i)
    attack();
  const answers = [];
  while (performance.now() - t0 < SECONDS * 1000) {
    await new Promise((r) => setTimeout(r, 1000));
    const at = (performance.now() - t0) / 1000;
    const r = await good();
    answers.push({ at, ...r });
  }
  for (const s of attackers)
    s.destroy();
  const worst = answers.reduce((w, a) => (a.s > w.s ? a : w));
  const late = answers.filter((a) => !(a.s <= 2) || !a.tools);
  const sorted = answers.map((a) => a.s).sort((a, b) => a - b);
  console.log(`${ATTACKERS} non-reading connections for ${SECONDS} s: ` +
              `${answers.length} good-key tools/list, median ${(sorted[sorted.length >> 1] * 1000).toFixed(0)} ms, ` +
              `worst ${worst.s === Infinity ? "none in 20 s" : `${(worst.s * 1000).toFixed(0)} ms`} at ${worst.at.toFixed(0)} s, ` +
              `${late.length} late or unanswered` + (late.length ? `: ${late.map((a) => `${a.at.toFixed(0)} s: ${a.s.toFixed(1)} s ${JSON.stringify(a.status)}`).join(", ")}` : ""));
  assert.equal(late.length, 0, "the good client waited over 2 s");
  verdict.pass();
} catch (e) {
  verdict.fail(e);
}
