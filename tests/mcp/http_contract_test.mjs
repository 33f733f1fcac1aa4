// The security contracts over Streamable HTTP, row by row, with the HTTP status each maps to:
// auth refusals 401 (with WWW-Authenticate) / 403, limits 429 (with Retry-After), the envelope as
// the body; failures of an admitted call and validation stay JSON-RPC answers (200). Raw HTTP
// (fetch), so the statuses and headers are checked exactly as sent.
// Usage: node http_contract_test.mjs KERNEL_ELF
import assert from "node:assert/strict";

import { HttpPool } from "./http_pool.mjs";
import { bootHttp, watch } from "./sdk.mjs";

const kernel = process.argv[2];
const READER = "reader-key-0123456789";
const ADMIN = "admin-key-0123456789abcdef";
// burst's bucket (20, refilled at 1/s) is the rate row's own: what it proves does not depend on
// how fast the machine makes calls (the appliance's bucket is raised out of reach).
const BURST = "burst-key-0123456789abcdef";
const node = await bootHttp(["--key", `reader:ada:${READER}`, "--key", `admin:root:${ADMIN}`,
                             "--key", `reader:burst:${BURST}`, "--limit", "burst:rate=20/1",
                             "--append", "tool_time_ms=300 tool_output_bytes=4096"], { kernel });
const verdict = watch(node, "http_contract_test", 150000);

let nextId = 1;
// 16 keep-alive connections, opened up front: the concurrency row needs 14 requests to arrive
// together (see http_pool.mjs).
const pool = new HttpPool(node.url, 16);
const post = (body, headers = {}) => pool.post(body, headers);

let session;
const auth = (key) => ({ "Mcp-Session-Id": session, ...(key ? { Authorization: `Bearer ${key}` } : {}) });
const call = (name, args, key) =>
  post({ jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name, arguments: args } }, auth(key));
const read = (uri, key) => post({ jsonrpc: "2.0", id: nextId++, method: "resources/read", params: { uri } }, auth(key));

function expectRefusal(r, status, code) {
  assert.equal(r.status, status, `${code}: ${r.text}`);
  assert.equal(r.json.ok, false);
  assert.equal(r.json.error.code, code);
  assert.ok("details" in r.json.error);
  assert.match(r.json.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(typeof r.json.request_id, "string");
}
function expectRpcError(r, rpcCode, code) {
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.error.code, rpcCode);
  assert.equal(r.json.error.data.error.code, code);
  return r.json.error.data;
}
function expectToolError(r, code) {
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.result.isError, true);
  assert.equal(r.json.result.structuredContent, undefined, r.text);
  assert.equal(r.json.result._meta["io.basalt/error"].error.code, code);
}

try {
  const init = await post({ jsonrpc: "2.0", id: 0, method: "initialize",
                            params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "contract", version: "1" } } });
  assert.equal(init.status, 200);
  session = init.headers["mcp-session-id"];
  assert.match(session, /^[0-9a-f]{32}$/);
  assert.equal((await post({ jsonrpc: "2.0", method: "notifications/initialized" }, auth())).status, 202);

  const rows = [];
  const row = async (name, fn) => { await fn(); rows.push(name); };
  await row("no key -> 401 auth_missing_api_key", async () => {
    const r = await call("kernel_info", {});
    expectRefusal(r, 401, "auth_missing_api_key");
    // RFC 6750 error and description: an OAuth-capable client learns it needs an API key.
    assert.match(r.headers["www-authenticate"], /^Bearer realm="basalt", error="invalid_request", error_description="[^"]*API key, not OAuth/);
    assert.match(r.json.error.message, /Authorization: Bearer <key>/);
  });
  await row("bad key -> 403 auth_invalid_api_key", async () =>
    expectRefusal(await call("kernel_info", {}, "not-a-key-of-this-appliance"), 403, "auth_invalid_api_key"));
  await row("bad key on tools/list and ping -> 403 (never served as anonymous)", async () => {
    for (const method of ["tools/list", "ping"])
      expectRefusal(await post({ jsonrpc: "2.0", id: nextId++, method }, auth("not-a-key-of-this-appliance")), 403,
                    "auth_invalid_api_key");
    assert.equal((await post({ jsonrpc: "2.0", id: nextId++, method: "tools/list" }, auth())).status, 200, "no key: anonymous");
  });
  await row("OAuth paths -> RFC 6749 error JSON (404 metadata, 400 endpoints), saying to send an API key", async () => {
    for (const [path, status] of [["/.well-known/oauth-protected-resource/mcp", 404], ["/.well-known/oauth-authorization-server", 404],
                                  ["/register", 400], ["/token", 400]]) {
      const res = await fetch(new URL(path, node.url), path.startsWith("/.well-known/") ? {} : { method: "POST", body: "{}",
                              headers: { "Content-Type": "application/json" } });
      const body = await res.json();
      assert.equal(res.status, status, path);
      assert.equal(body.error, "invalid_request", path);
      assert.match(body.error_description, /does not use OAuth; it takes an API key/);
    }
  });
  await row("X-MCP-API-Key bad key -> 403 auth_invalid_api_key", async () =>
    expectRefusal(await post({ jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name: "kernel_info", arguments: {} } },
                             { "Mcp-Session-Id": session, "X-MCP-API-Key": "nope-nope-nope-nope" }), 403, "auth_invalid_api_key"));
  await row("wrong role -> 403 auth_insufficient_role", async () => {
    const r = await read("audit://log", READER);
    expectRefusal(r, 403, "auth_insufficient_role");
    assert.equal(r.json.error.details.required, "audit:read");
  });
  await row("unknown tool -> 200 JSON-RPC -32602 validation_unknown_tool", async () =>
    expectRpcError(await call("shell_exec", {}, ADMIN), -32602, "validation_unknown_tool"));
  await row("invalid arguments -> 200 isError result validation_failed (2025-11-25)", async () => {
    const r = await call("kernel_log", { limit: 5000 }, READER);
    assert.equal(r.status, 200);
    assert.equal(r.json.result.isError, true, r.text);
    assert.equal(r.json.result._meta["io.basalt/error"].error.code, "validation_failed");
    assert.equal(r.json.result._meta["io.basalt/error"].error.details.reason, "above_maximum");
    assert.match(r.json.result.content[0].text, /Invalid arguments for tool 'kernel_log'/);
  });
  // audit://log shows the newest 100 decisions: check the early ones before the rate row.
  const auditSnapshot = async () => {
    await new Promise((r) => setTimeout(r, 100));
    const audit = await read("audit://log", ADMIN);
    assert.ok(!audit.text.includes(READER) && !audit.text.includes(ADMIN), "no key in the audit log");
    return JSON.parse(audit.json.result.contents[0].text);
  };
  const early = (await auditSnapshot()).decisions.map((d) => d.code);
  for (const code of ["auth_missing_api_key", "auth_invalid_api_key", "auth_insufficient_role", "validation_unknown_tool",
                      "validation_failed"])
    assert.ok(early.includes(code), `audit has ${code}`);
  const ok = await call("kernel_info", {}, READER);
  assert.equal(ok.status, 200);
  assert.equal(ok.json.result.structuredContent.name, "Basalt");

  await row("over rate -> 429 limit_rate_exceeded with Retry-After", async () => {
    const results = [];
    const t0 = performance.now();
    for (let i = 0; i < 40; ++i)
      results.push(await call("kernel_mem", {}, BURST));
    const seconds = (performance.now() - t0) / 1000;
    const refused = results.filter((r) => r.status === 429);
    for (const r of refused) {
      expectRefusal(r, 429, "limit_rate_exceeded");
      assert.equal(r.headers["retry-after"], "1");
    }
    // At least the full bucket, at most the bucket and what 1/s refilled while the calls ran.
    const served = results.length - refused.length, most = 20 + Math.ceil(seconds) + 1;
    assert.ok(served >= 20 && served <= most, `served ${served} of 40 in ${seconds.toFixed(2)} s (at most ${most})`);
    if (most < 40)
      assert.ok(refused.length > 0, "some calls are refused");
  });
  await row("over concurrency -> 429 limit_concurrency_exceeded", async () => {
    assert.ok(await pool.warm() >= 14, "connections open");
    const results = await Promise.all(Array.from({ length: 14 }, () => call("kernel_diagnose", { steps: 2, step_ms: 30 }, READER)));
    const refused = results.filter((r) => r.status === 429);
    assert.equal(refused.length, 4, results.map((r) => `${r.status}:${r.text.slice(0, 80)}`).join("\n"));
    for (const r of refused)
      expectRefusal(r, 429, "limit_concurrency_exceeded");
    // The ten admitted calls ran: each finished, or (ten CPU-bound calls sharing one emulated
    // core against the 300 ms limit) was stopped by the wall-time limit.
    for (const r of results.filter((r) => r.status === 200)) {
      const { structuredContent: sc, _meta: meta } = r.json.result;
      assert.ok(sc?.steps_done === 2 || meta?.["io.basalt/error"]?.error?.code === "limit_time_exceeded", r.text);
    }
  });
  await row("over time -> 200 isError limit_time_exceeded", async () =>
    expectToolError(await call("kernel_diagnose", { steps: 20, step_ms: 100 }, READER), "limit_time_exceeded"));
  await row("over output -> 200 isError limit_output_exceeded", async () =>
    expectToolError(await call("kernel_log", { limit: 200 }, READER), "limit_output_exceeded"));

  // DNS rebinding: a page on another site reaches 127.0.0.1 but names itself in Origin / Host.
  await row("foreign Origin -> 403", async () => {
    const r = await post({ jsonrpc: "2.0", id: nextId++, method: "tools/list" }, { ...auth(), Origin: "http://evil.example" });
    expectRefusal(r, 403, "validation_failed");
  });

  // Every decision is audited, over HTTP too, and no key appears in the trail.
  const snapshot = await auditSnapshot();
  const codes = snapshot.decisions.map((d) => d.code);
  for (const code of ["limit_rate_exceeded", "limit_concurrency_exceeded", "limit_time_exceeded", "limit_output_exceeded"])
    assert.ok(codes.includes(code), `audit has ${code}`);
  const allowed = snapshot.decisions.find((d) => d.outcome === "allow" && d.name === "kernel_diagnose");
  assert.equal(allowed.transport, "http");
  assert.equal(allowed.principal, "ada");

  console.log(`contract rows proven over HTTP: ${rows.length}\n  ${rows.join("\n  ")}`);
  pool.close();
  await verdict.pass();
} catch (e) {
  await verdict.fail(e);
}
