// A burst of fresh connections, as `./basalt run` serves them (the default user-mode network, a
// host port forwarded to the appliance's HTTP port, the appliance's own call bucket): 100 tools/call
// requests, 50 at a time, each on a connection of its own (Connection: close, no agent) with a
// good key. Every one must be answered, 200 or 429 (the bucket's burst is 50), within 2 s: a
// legitimate burst must never lose its handshakes, neither to the host's kernel (QEMU's own user
// network listens with a backlog of one: 13 to 24 of 100 unanswered after 20 s) nor to the
// kernel's SYN-flood defence (a backlog of 16 reset the older half of the burst's handshakes),
// and so never waits out TCP's retransmission timeouts.
// Usage: node http_burst_test.mjs KERNEL_ELF [TOTAL] [CONCURRENCY]
import assert from "node:assert/strict";
import http from "node:http";

import { bootHttp, skipUnlessPasst, watch } from "./sdk.mjs";

const kernel = process.argv[2];
const TOTAL = Number(process.argv[3] ?? 100);
const CONCURRENCY = Number(process.argv[4] ?? 50);
const BOUND_MS = 2000;
const KEY = "admin-key-0123456789abcdef";
const node = await bootHttp(["--key", `admin:root:${KEY}`], { kernel, metered: true });
await skipUnlessPasst(node, "http_burst_test");
const verdict = watch(node, "http_burst_test", 120000);
const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };

// One request on a fresh connection; resolves with its status and how long it took (or the
// failure: a connection still unanswered after 20 s is given up, as the client did).
function call(id) {
  const body = JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "kernel_info", arguments: {}, _meta: meta } });
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.request(node.url, {
      method: "POST", agent: false, timeout: 20000,
      headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body), Connection: "close",
                 Accept: "application/json, text/event-stream", Authorization: `Bearer ${KEY}`,
                 "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "kernel_info" },
    }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode, ms: performance.now() - t0 }));
    });
    req.on("timeout", () => req.destroy(new Error("no answer in 20 s")));
    req.on("error", (e) => resolve({ status: 0, error: e.message, ms: performance.now() - t0 }));
    req.end(body);
  });
}

try {
  // The bucket is full again before the burst (the readiness probe took nothing from it).
  const results = [];
  let next = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (next < TOTAL)
      results.push(await call(++next));
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  const total = performance.now() - t0;
  const statuses = {};
  for (const r of results)
    statuses[r.error ?? r.status] = (statuses[r.error ?? r.status] ?? 0) + 1;
  const times = results.map((r) => r.ms).sort((a, b) => a - b);
  const slow = results.filter((r) => r.ms > BOUND_MS).length;
  console.log(`burst: ${TOTAL} requests, ${CONCURRENCY} at a time: ${JSON.stringify(statuses)}; ` +
              `median ${times[times.length >> 1].toFixed(0)} ms, slowest ${times[times.length - 1].toFixed(0)} ms, ` +
              `${slow} over ${BOUND_MS} ms, total ${(total / 1000).toFixed(2)} s`);
  // The appliance's own counters beside the client's figures (the shell's `net`).
  const mark = node.log().length;
  node.shell("net");
  await new Promise((r) => setTimeout(r, 500));
  console.log(node.log().slice(mark).split("\n").filter((l) => /^(vn0|lwip|http) /.test(l.replace(/^.*?(vn0|lwip|http) /, "$1 "))).join("\n"));
  assert.equal(results.length, TOTAL);
  assert.ok(results.every((r) => r.status === 200 || r.status === 429), `every request answered 200 or 429: ${JSON.stringify(statuses)}`);
  assert.ok((statuses[200] ?? 0) >= 1, "some calls were served");
  assert.equal(slow, 0, `${slow} requests took over ${BOUND_MS} ms (slowest ${times[times.length - 1].toFixed(0)} ms)`);
  verdict.pass();
} catch (e) {
  verdict.fail(e);
}
