// End to end under protocol revision 2026-07-28: the official v2 client
// (npm @modelcontextprotocol/client) pinned to that revision talks to the booted kernel through
// `qemu/run.sh --stdio` — no initialize, per-request _meta, server/discover. Then the same line
// answers raw 2026-07-28 requests that the client would never send (errors the revision defines).
// Usage: node modern_sdk_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { root, taskGone, unmetered } from "./sdk.mjs";

const kernel = process.argv[2];
const clientDir = path.join(root, ".deps/npm/node_modules/@modelcontextprotocol/client/dist");
const { Client } = await import(pathToFileURL(path.join(clientDir, "index.mjs")));
const { StdioClientTransport } = await import(pathToFileURL(path.join(clientDir, "stdio.mjs")));

const transport = new StdioClientTransport({
  command: path.join(root, "qemu/run.sh"),
  args: ["--kernel", kernel, "--stdio", ...unmetered],
  stderr: "inherit",
});
const client = new Client({ name: "basalt-modern-test", version: "1.0.0" },
                          { versionNegotiation: { mode: { pin: "2026-07-28" } } });
const fail = async (e) => {
  console.error("FAIL:", e);
  await transport.close().catch(() => {});
  process.exit(1);
};
const timer = setTimeout(() => fail("timed out"), 90000);

// The raw part: one request per line, straight to a second kernel, to see the wire itself.
async function rawSession(lines) {
  const child = spawn(path.join(root, "qemu/run.sh"), ["--kernel", kernel, "--stdio", ...unmetered], { stdio: ["pipe", "pipe", "inherit"] });
  const replies = [];
  let buffer = "";
  const want = lines.filter((l) => l.id !== undefined).length;
  const finished = new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      buffer += chunk;
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const msg = JSON.parse(line); // nothing but JSON-RPC may appear on the line
        if (msg.id !== undefined)
          replies.push(msg);
        if (replies.length === want)
          resolve();
      }
    });
    child.on("exit", () => reject(new Error(`kernel exited with ${replies.length}/${want} replies`)));
  });
  for (const l of lines)
    child.stdin.write(JSON.stringify(l) + "\n");
  await finished;
  child.stdin.end();
  child.kill("SIGTERM");
  return new Map(replies.map((r) => [r.id, r]));
}

const meta = (extra = {}) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  ...extra,
});

try {
  const started = Date.now();
  await client.connect(transport);
  const connectedMs = Date.now() - started;
  assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
  assert.equal(client.getServerVersion()?.name, "basalt");
  assert.ok(client.getServerCapabilities().tools, "tools capability declared");

  const discovered = await client.discover();
  assert.deepEqual(discovered.supportedVersions, ["2026-07-28"]);
  assert.ok(discovered.capabilities.resources && discovered.capabilities.logging);

  // tools/list: the client walks every page (the server serves four tools per page).
  const listed = await client.listTools();
  const names = listed.tools.map((t) => t.name).sort();
  assert.deepEqual(names, ["collection_create", "collection_drop", "collection_export", "collection_import", "collection_list",
                           "collection_stats", "document_delete", "document_get", "document_search", "document_upsert", "kernel_caps", "kernel_diagnose", "kernel_info", "kernel_log", "kernel_mem",
                           "kernel_perf", "kernel_tasks", "proposal_approve", "proposal_get", "proposal_list", "proposal_reject", "text_embed",
                           "vector_delete", "vector_get", "vector_search", "vector_upsert"]);
  for (const t of listed.tools)
    assert.ok(t.inputSchema.type === "object" && t.outputSchema, `${t.name} has both schemas`);

  // Every tool answers (the client checks structuredContent against each outputSchema).
  const info = await client.callTool({ name: "kernel_info", arguments: {} });
  assert.equal(info.isError, false);
  assert.equal(info.structuredContent.name, "Basalt");
  const caps = await client.callTool({ name: "kernel_caps", arguments: {} });
  assert.deepEqual(caps.structuredContent.capabilities.map((c) => [c.type, c.rights]), [["Introspection", ["read"]]]);
  for (const [name, args] of [["kernel_tasks", {}], ["kernel_mem", {}], ["kernel_log", { limit: 3 }], ["kernel_perf", { iterations: 500 }]]) {
    const r = await client.callTool({ name, arguments: args });
    assert.equal(r.isError, false, `${name}: ${JSON.stringify(r)}`);
    assert.equal(typeof r.structuredContent, "object");
  }

  // Progress, and the per-request log opt-in: what the call logs arrives as notifications/message.
  const messages = [];
  client.setNotificationHandler("notifications/message", (n) => messages.push(n.params));
  const progress = [];
  const diag = await client.callTool(
    { name: "kernel_diagnose", arguments: { steps: 4, step_ms: 40 }, _meta: { "io.modelcontextprotocol/logLevel": "info" } },
    { onprogress: (p) => progress.push(p), timeout: 30000 });
  assert.equal(diag.structuredContent.steps_done, 4);
  assert.ok(progress.length >= 2 && progress.at(-1).progress >= 3, `progress: ${JSON.stringify(progress)}`); // the SDK may drop the last one
  assert.ok(messages.some((m) => m.logger === "kernel" && /^diagnose: 4 steps/.test(m.data)),
            `log messages during the call: ${JSON.stringify(messages)}`);
  // Without the opt-in nothing is forwarded.
  messages.length = 0;
  await client.callTool({ name: "kernel_diagnose", arguments: { steps: 1, step_ms: 20 } });
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(messages, []);

  // Cancellation stops the tool task.
  const ac = new AbortController();
  let firstStep;
  const stepped = new Promise((resolve) => (firstStep = resolve));
  const long = client.callTool({ name: "kernel_diagnose", arguments: { steps: 100, step_ms: 100 } },
                               { signal: ac.signal, onprogress: () => firstStep(), timeout: 60000 });
  await stepped;
  ac.abort("test cancels");
  await assert.rejects(long);
  assert.ok(await taskGone((p) => client.callTool(p), "tool:kernel_diagnose"), "the cancelled tool task ended");

  // Resources: listed, each read a snapshot with version, generated_at, source_commit.
  const resources = (await client.listResources()).resources.map((r) => r.uri).sort();
  assert.deepEqual(resources,
                   ["audit://log", "kernel://composition", "kernel://log", "kernel://perf", "kernel://status"]);
  for (const uri of resources) {
    const snap = JSON.parse((await client.readResource({ uri })).contents[0].text);
    assert.equal(snap.version, "1");
    assert.match(snap.generated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(snap.source_commit, info.structuredContent.source_commit);
  }
  assert.deepEqual((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate), ["provenance://node/{id}"]);
  // A stateless request's node records the client it declares per request.
  const trail = JSON.parse((await client.readResource({ uri: "audit://log" })).contents[0].text).decisions;
  const read = trail.filter((d) => d.name === "kernel://status").at(-1);
  const prov = JSON.parse((await client.readResource({ uri: `provenance://node/${read.provenance_node_id}` })).contents[0].text);
  assert.deepEqual([prov.node.integrity, prov.node.method, prov.node.client.name], ["UNTRUSTED", "resources/read", "basalt-modern-test"]);

  // Deny by default, the same envelope as in the 2025 revisions.
  await assert.rejects(client.callTool({ name: "rm_rf", arguments: {} }), (err) => {
    assert.equal(err.code, -32602);
    assert.equal(err.data.error.code, "validation_unknown_tool");
    return true;
  });
  clearTimeout(timer);
  await client.close();

  // The wire, raw: result shapes and the errors 2026-07-28 defines.
  const r = await rawSession([
    { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: meta() } },
    { jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: meta() } },
    { jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: "kernel://status", _meta: meta() } },
    { jsonrpc: "2.0", id: 4, method: "resources/read", params: { uri: "kernel://nope", _meta: meta() } },
    { jsonrpc: "2.0", id: 5, method: "tools/list", params: { _meta: meta({ "io.modelcontextprotocol/protocolVersion": "2099-01-01" }) } },
    { jsonrpc: "2.0", id: 6, method: "tools/list", params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } } },
    { jsonrpc: "2.0", id: 7, method: "ping", params: { _meta: meta() } },
    { jsonrpc: "2.0", id: 8, method: "logging/setLevel", params: { level: "info", _meta: meta() } },
    { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "kernel_info", arguments: {}, _meta: meta() } },
    { jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "kernel_log", arguments: { limit: 100000 }, _meta: meta() } },
    { jsonrpc: "2.0", id: 11, method: "ping" }, // the handshake era still works on the same line
    { jsonrpc: "2.0", id: 12, method: "resources/read", params: { uri: "kernel://nope" } },
  ]);
  const d = r.get(1).result;
  assert.equal(d.resultType, "complete");
  assert.deepEqual(d.supportedVersions, ["2026-07-28"]);
  assert.equal(d._meta["io.modelcontextprotocol/serverInfo"].name, "basalt");
  assert.ok(Number.isInteger(d.ttlMs) && ["public", "private"].includes(d.cacheScope));
  for (const id of [2, 3]) {
    const res = r.get(id).result;
    assert.equal(res.resultType, "complete", `result ${id}`);
    assert.ok(Number.isInteger(res.ttlMs) && res.ttlMs >= 0 && ["public", "private"].includes(res.cacheScope), `cache hints on ${id}`);
  }
  assert.equal(r.get(3).result.cacheScope, "private"); // a live, scope-gated snapshot
  assert.equal(r.get(3).result.ttlMs, 0);
  assert.equal(r.get(4).error.code, -32602); // 2026-07-28 retired -32002 for unknown resources
  assert.equal(r.get(4).error.data.error.code, "validation_unknown_tool");
  assert.equal(r.get(5).error.code, -32022);
  assert.deepEqual(r.get(5).error.data.supported, ["2026-07-28"]);
  assert.equal(r.get(5).error.data.requested, "2099-01-01");
  assert.equal(r.get(5).error.data.ok, false);
  assert.equal(r.get(6).error.code, -32602);
  assert.equal(r.get(6).error.data.error.details.reason, "missing_meta");
  assert.equal(r.get(7).error.code, -32601); // not methods of 2026-07-28
  assert.equal(r.get(8).error.code, -32601);
  assert.equal(r.get(9).result.resultType, "complete");
  assert.equal(r.get(9).result.structuredContent.name, "Basalt");
  assert.equal(r.get(10).result.isError, true); // schema validation: a tool error since 2025-11-25
  assert.equal(r.get(10).result._meta["io.basalt/error"].error.code, "validation_failed");
  assert.equal(r.get(10).result.structuredContent, undefined, "kernel_log's outputSchema describes its records");
  assert.deepEqual(r.get(11).result, {});
  assert.equal(r.get(12).error.code, -32002);

  console.log(`connected (server/discover answered) ${connectedMs} ms after spawn`);
  console.log("PASS modern_sdk_test");
  process.exit(0);
} catch (e) {
  await fail(e);
}
