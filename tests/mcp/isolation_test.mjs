// Every reply is its own, and the scheduler stays sound, under load on both lines at once. One
// appliance at hz=1000 serves the serial line (the official SDK client, the console's admin) and
// Streamable HTTP (an operator's key) together: each line interleaves thousands of resource
// reads, tool calls that read different vectors (each reply names what it answers: the id and
// the vector's values, which differ per collection and per id) and long calls that report
// progress (each report wakes the line's bridge from the tool task). Checked: every status
// snapshot names the line it was read on; every vector is the one asked for, from the collection
// asked for; every progress report and result belongs to its call. Then kernel://status shows
// the scheduler's ready-list check passing at every tick of the run (a failed check, or a
// scheduler entry reached with IRQs enabled, is a kernel panic: the line would go dead).
// Usage: node isolation_test.mjs KERNEL_ELF [ROUNDS]
import assert from "node:assert/strict";

import { HttpPool } from "./http_pool.mjs";
import { boot, freePort, probe, types } from "./sdk.mjs";

const { CallToolResultSchema, ReadResourceResultSchema } = types;
const kernel = process.argv[2];
const ROUNDS = Number(process.argv[3] ?? 600); // per line; each round is a read, a get and (every 10th) a long call
const KEY = "operator-key-0123456789abcdef";
const DIM = 8, N = 200;
const port = await freePort();
const { client, transport, fail, done } = boot("basalt-isolation-test",
  ["--hostfwd", `127.0.0.1:${port}:8080`, "--key", `operator:olga:${KEY}`, "--append", "hz=1000"],
  { kernel, timeoutMs: 280000 });

// Collection c's vector for id i: values no other (collection, id) pair shares.
const vectorOf = (c, i) => Array.from({ length: DIM }, (_, d) => (c === "left" ? 1 : -1) * (i * 16 + d + 0.5));
const base = { left: 1000, right: 5000 }; // ids differ between the collections too

try {
  await client.connect(transport);
  const serialTool = (name, args, options) =>
    client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema, options);
  const serialRead = (uri) => client.request({ method: "resources/read", params: { uri } }, ReadResourceResultSchema);

  for (const c of ["left", "right"]) {
    await serialTool("collection_create", { name: c, dim: DIM, metric: "l2", max_elements: N });
    const ids = Array.from({ length: N }, (_, i) => base[c] + i);
    const r = await serialTool("vector_upsert", { collection: c, ids, vectors: ids.map((_, i) => vectorOf(c, i)) });
    assert.equal(r.isError, false, JSON.stringify(r));
  }

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
  const pool = new HttpPool(`http://127.0.0.1:${port}/mcp`, 2);
  const auth = { Authorization: `Bearer ${KEY}` };
  const init = await pool.post({ jsonrpc: "2.0", id: 0, method: "initialize",
                                 params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "isolation", version: "1" } } },
                               auth);
  assert.equal(init.status, 200, init.text);
  const headers = { ...auth, "Mcp-Session-Id": init.headers["mcp-session-id"] };
  let nextId = 1;
  const http = async (method, params) => {
    const r = await pool.post({ jsonrpc: "2.0", id: nextId++, method, params }, headers);
    assert.equal(r.status, 200, r.text);
    return r;
  };
  // A tools/call answered on the call's SSE stream (progress first) or as plain JSON.
  const sseMessages = (text) => text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));

  const statusBefore = JSON.parse((await serialRead("kernel://status")).contents[0].text);
  const t0 = performance.now();
  const checked = { serial: 0, http: 0, progress: 0 };

  const checkStatus = (text, line) => {
    const s = JSON.parse(text);
    assert.equal(s.mcp.transport, line, `a status read on the ${line} line says ${s.mcp.transport}`);
    assert.equal(s.mcp.line_principal, line === "serial" ? "console" : "anonymous"); // HTTP callers without a key
  };
  const checkVectors = (got, c, ids) => {
    assert.deepEqual(got.vectors.map((v) => v.id), ids, `${c}: the ids asked for`);
    for (const v of got.vectors)
      assert.deepEqual(v.vector, vectorOf(c, v.id - base[c]), `${c} ${v.id}: its own values`);
  };

  const serialLine = async () => {
    for (let i = 0; i < ROUNDS; ++i) {
      checkStatus((await serialRead("kernel://status")).contents[0].text, "serial");
      const ids = [base.left + ((i * 7) % N), base.left + ((i * 13 + 5) % N)];
      const got = await serialTool("vector_get", { collection: "left", ids });
      checkVectors(got.structuredContent, "left", ids);
      if (i % 10 === 0) {
        const steps = 2 + (i % 3), seen = [];
        const r = await serialTool("kernel_diagnose", { steps, step_ms: 10 },
                                   { onprogress: (p) => seen.push(p), timeout: 60000 });
        assert.equal(r.isError, false);
        assert.equal(r.structuredContent.steps_done, steps, "the result of this call");
        assert.ok(seen.every((p) => p.total === steps && p.progress >= 1 && p.progress <= steps),
                  `progress of this call: ${JSON.stringify(seen)}`);
        checked.progress += seen.length;
      }
      checked.serial += 2;
    }
  };

  const httpLine = async () => {
    for (let i = 0; i < ROUNDS; ++i) {
      const read = await http("resources/read", { uri: "kernel://status" });
      checkStatus(read.json.result.contents[0].text, "http");
      const ids = [base.right + ((i * 11) % N)];
      const got = await http("tools/call", { name: "vector_get", arguments: { collection: "right", ids } });
      checkVectors(got.json.result.structuredContent, "right", ids);
      if (i % 10 === 0) {
        const steps = 2 + (i % 3), token = `p-${i}`;
        const r = await http("tools/call", { name: "kernel_diagnose", arguments: { steps, step_ms: 10 }, _meta: { progressToken: token } });
        const msgs = r.json ? [r.json] : sseMessages(r.text);
        const result = msgs.find((m) => m.result);
        assert.ok(result, `a result for the long call: ${r.text.slice(0, 300)}`);
        assert.equal(result.result.structuredContent.steps_done, steps, "the result of this call");
        for (const m of msgs.filter((m) => m.method === "notifications/progress")) {
          assert.equal(m.params.progressToken, token, "progress of this call");
          assert.equal(m.params.total, steps, "progress of this call");
          ++checked.progress;
        }
      }
      checked.http += 2;
    }
  };

  await Promise.all([serialLine(), httpLine()]);
  const seconds = (performance.now() - t0) / 1000;
  const status = JSON.parse((await serialRead("kernel://status")).contents[0].text);
  const checks = status.scheduler.consistency_checks - statusBefore.scheduler.consistency_checks;
  const ticks = status.scheduler.ticks - statusBefore.scheduler.ticks;
  assert.ok(ticks > 0 && checks === ticks, `ready lists checked at every tick: ${checks} checks in ${ticks} ticks`);
  console.log(`isolation_test: ${checked.serial} serial and ${checked.http} HTTP replies each its own, ` +
              `${checked.progress} progress reports on their calls, in ${seconds.toFixed(1)} s at hz=1000; ` +
              `ready lists consistent at all ${checks} ticks`);
  pool.close();
  await done();
} catch (e) {
  await fail(e);
}
