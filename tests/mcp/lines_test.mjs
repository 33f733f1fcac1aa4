// One appliance serving both MCP lines at once: the serial line (the official SDK client over
// run.sh --stdio) and Streamable HTTP (raw requests through QEMU's port forward). A principal
// has one rate bucket whichever line it calls on, and the shared audit trail names the line of
// every decision.
// Usage: node lines_test.mjs KERNEL_ELF
import assert from "node:assert/strict";

import { HttpPool } from "./http_pool.mjs";
import { boot, freePort, probe, types } from "./sdk.mjs";

const { CallToolResultSchema, ReadResourceResultSchema } = types;
const kernel = process.argv[2];
const KEY = "operator-key-0123456789abcdef";
const port = await freePort();
// A bucket of 10 refilled at 1/s: 16 calls in a few hundred ms cannot all pass if it is shared.
const { client, transport, fail, done } = boot("basalt-lines-test",
  ["--hostfwd", `127.0.0.1:${port}:8080`, "--key", `operator:bob:${KEY}`, "--append", "rate=10/1"],
  { kernel, timeoutMs: 90000, metered: true });

try {
  await client.connect(transport);
  const serialCall = (name) =>
    client.request({ method: "tools/call", params: { name, arguments: {}, _meta: { "io.basalt/api-key": KEY } } },
                   CallToolResultSchema);

  // The HTTP line answers once the appliance has its DHCP lease.
  const end = Date.now() + 30000;
  for (;;) {
    try {
      await probe(port);
      break;
    } catch (e) {
      if (Date.now() > end)
        throw new Error(`no HTTP answer: ${e}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const pool = new HttpPool(`http://127.0.0.1:${port}/mcp`, 1);
  const init = await pool.post({ jsonrpc: "2.0", id: 0, method: "initialize",
                                 params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "lines", version: "1" } } });
  assert.equal(init.status, 200, init.text);
  const session = init.headers["mcp-session-id"];
  let id = 1;
  const httpCall = (name) => pool.post({ jsonrpc: "2.0", id: id++, method: "tools/call", params: { name, arguments: {} } },
                                       { "Mcp-Session-Id": session, Authorization: `Bearer ${KEY}` });

  // Six calls on the serial line: within the bucket.
  const t0 = performance.now(); // bob's bucket starts full at his first call
  for (let i = 0; i < 6; ++i) {
    const r = await serialCall("kernel_mem");
    assert.equal(r.isError, false, `serial call ${i}`);
  }
  // Ten on HTTP right after: only what is left of the same bucket (4, plus a refill or two) passes.
  let served = 0, limited = 0;
  for (let i = 0; i < 10; ++i) {
    const r = await httpCall("kernel_mem");
    if (r.status === 200) {
      assert.equal(r.json.result.isError, false);
      ++served;
    } else {
      assert.equal(r.status, 429, r.text);
      assert.equal(r.json.error.code, "limit_rate_exceeded");
      ++limited;
    }
  }
  // And the serial line draws on the bucket HTTP emptied: one more serial call, then the whole
  // count is bounded by one bucket, however long the 17 calls took (10, plus 1/s of that time).
  const last = await serialCall("kernel_mem").then(() => "served", (e) => {
    assert.ok(e.code === -32003 && e.data.error.code === "limit_rate_exceeded", `${e}`);
    return "limited";
  });
  const total = 6 + served + (last === "served" ? 1 : 0);
  const most = 10 + Math.ceil((performance.now() - t0) / 1000) + 1;
  assert.ok(served >= 4 && total <= most,
            `one bucket for both lines: ${total} served (HTTP ${served} served, ${limited} limited; serial again ${last}), at most ${most}`);
  if (most < 17)
    assert.ok(limited > 0 || last === "limited", "nothing was limited");

  // One audit trail: bob's decisions from both lines, each naming its line.
  const audit = await client.request({ method: "resources/read", params: { uri: "audit://log" } }, ReadResourceResultSchema);
  const decisions = JSON.parse(audit.contents[0].text).decisions.filter((d) => d.principal === "bob");
  // Repeated identical refusals are one record with a repeat count: count decisions, not records.
  const by = (transport, outcome) =>
    decisions.filter((d) => d.transport === transport && d.outcome === outcome).reduce((n, d) => n + d.repeats, 0);
  assert.equal(by("serial", "allow"), last === "served" ? 7 : 6);
  assert.equal(by("http", "allow"), served);
  assert.equal(by("http", "deny"), limited);
  assert.equal(by("serial", "deny"), last === "served" ? 0 : 1);
  console.log(`lines_test: one bucket for bob across lines: 6 serial calls, then HTTP ${served} served / ${limited} ` +
              `limited, then serial ${last}; audit trail names both lines`);
  await done();
} catch (e) {
  await fail(e);
}
