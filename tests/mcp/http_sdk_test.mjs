// End to end over the network: the official MCP TypeScript SDK client with its Streamable HTTP
// transport against the kernel in QEMU (virtio-net, lwIP, the kernel's HTTP server), through
// QEMU's user-network port forward. Then a v2 client pinned to 2026-07-28 over the same URL, and
// the Inspector CLI listing tools.
// Usage: node http_sdk_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

import { Client, StreamableHTTPClientTransport, bootHttp, root, taskGone, watch } from "./sdk.mjs";

const kernel = process.argv[2];
const ADMIN = "admin-key-0123456789abcdef";
const started = Date.now();
const node = await bootHttp(["--key", `admin:root:${ADMIN}`], { kernel });
const verdict = watch(node, "http_sdk_test", 120000);

const connect = async (headers = { Authorization: `Bearer ${ADMIN}` }) => {
  const transport = new StreamableHTTPClientTransport(new URL(node.url), { requestInit: { headers } });
  const client = new Client({ name: "basalt-http-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
};

try {
  const { client, transport } = await connect();
  const connectedMs = Date.now() - started;
  assert.equal(client.getServerVersion().name, "basalt");
  assert.match(transport.sessionId, /^[0-9a-f]{32}$/, "the server named a session");

  // One page holds every tool (clients that read only the first must still see the vector tools).
  const firstPage = await client.listTools();
  const names = firstPage.tools.map((t) => t.name);
  assert.equal(firstPage.nextCursor, undefined);
  assert.ok(names.length >= 17 && names.includes("kernel_info") && names.includes("vector_search"), names.join());

  const t0 = process.hrtime.bigint();
  const info = await client.callTool({ name: "kernel_info", arguments: {} });
  const callUs = Number(process.hrtime.bigint() - t0) / 1000;
  assert.equal(info.isError, false);
  assert.equal(info.structuredContent.name, "Basalt");
  const tasks = (await client.callTool({ name: "kernel_tasks", arguments: {} })).structuredContent.tasks.map((t) => t.name);
  assert.ok(tasks.includes("mcp-http") && tasks.includes("net"), `tasks: ${tasks}`);
  // No direct execution over HTTP either: the call's whole table is its token's one capability.
  const caps = await client.callTool({ name: "kernel_caps", arguments: {} });
  assert.deepEqual(caps.structuredContent.capabilities.map((c) => [c.type, c.rights]), [["Introspection", ["read"]]]);

  // Progress arrives on the call's SSE stream, before the result.
  const progress = [];
  const diag = await client.callTool({ name: "kernel_diagnose", arguments: { steps: 4, step_ms: 40 } }, undefined,
                                     { onprogress: (p) => progress.push(p), timeout: 30000 });
  assert.equal(diag.structuredContent.steps_done, 4);
  assert.ok(progress.length >= 3 && progress.at(-1).progress >= 3, JSON.stringify(progress)); // the SDK may drop the last one (it runs notification handlers a microtask late)

  // Cancellation (notifications/cancelled in a POST of its own) stops the tool task.
  const ac = new AbortController();
  let firstStep;
  const stepped = new Promise((resolve) => (firstStep = resolve));
  const long = client.callTool({ name: "kernel_diagnose", arguments: { steps: 100, step_ms: 100 } }, undefined,
                               { signal: ac.signal, onprogress: () => firstStep(), timeout: 60000 });
  await stepped;
  ac.abort("test cancels");
  await assert.rejects(long);
  assert.ok(await taskGone((p) => client.callTool(p), "tool:kernel_diagnose"), "the cancelled tool task ended");

  // Resources: snapshots with version, generated_at, source_commit.
  for (const uri of ["kernel://status", "kernel://log", "audit://log"]) {
    const snap = JSON.parse((await client.readResource({ uri })).contents[0].text);
    assert.equal(snap.source_commit, info.structuredContent.source_commit);
    assert.match(snap.generated_at, /Z$/);
  }
  const status = JSON.parse((await client.readResource({ uri: "kernel://status" })).contents[0].text);
  assert.equal(status.mcp.transport, "http");
  assert.equal(status.mcp.line_role, "anonymous", "callers without a key");
  // The audit trail is shared by the bridges and names the transport.
  const audit = JSON.parse((await client.readResource({ uri: "audit://log" })).contents[0].text);
  assert.ok(audit.decisions.some((r) => r.transport === "http" && r.name === "kernel_info" && r.principal === "root"),
            JSON.stringify(audit.decisions.slice(-3)));

  // Deny by default, same envelope as on the serial line.
  await assert.rejects(client.callTool({ name: "rm_rf", arguments: {} }), (err) => {
    assert.equal(err.code, -32602);
    assert.equal(err.data.error.code, "validation_unknown_tool");
    return true;
  });

  // Session end: DELETE, after which the id is unknown (404).
  const sid = transport.sessionId;
  await transport.terminateSession();
  const after = await fetch(node.url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Session-Id": sid,
               Authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  assert.equal(after.status, 404);
  await client.close();

  // Without a key: connecting and listing work (anonymous), a protected call is a 401.
  const anon = await connect({});
  await assert.rejects(anon.client.callTool({ name: "kernel_info", arguments: {} }), (err) => err.code === 401 && /auth_missing_api_key/.test(err.message));
  await anon.client.close();

  // A v2 client pinned to 2026-07-28: stateless requests over the same endpoint.
  const v2 = path.join(root, ".deps/npm/node_modules/@modelcontextprotocol/client/dist");
  const V2 = await import(pathToFileURL(path.join(v2, "index.mjs")));
  const modern = new V2.Client({ name: "basalt-http-modern", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  const modernTransport = new V2.StreamableHTTPClientTransport(new URL(node.url), { requestInit: { headers: { "X-MCP-API-Key": ADMIN } } });
  await modern.connect(modernTransport);
  const modernInfo = await modern.callTool({ name: "kernel_info", arguments: {} });
  assert.equal(modernInfo.structuredContent.name, "Basalt");
  const modernTools = await modern.listTools();
  assert.ok(modernTools.tools.some((t) => t.name === "kernel_mem"));
  await modern.close();

  // The Inspector CLI, as a user would run it.
  const inspector = path.join(root, ".deps/npm/node_modules/.bin/mcp-inspector");
  const { stdout } = await promisify(execFile)(inspector, ["--cli", node.url, "--transport", "http", "--method", "tools/list"],
                                               { timeout: 60000 });
  const listed = JSON.parse(stdout).tools.map((t) => t.name);
  assert.ok(listed.includes("kernel_info"), `inspector listed: ${listed}`);

  console.log(`HTTP: served ${connectedMs} ms after launch; kernel_info round trip ${callUs.toFixed(0)} us`);
  await verdict.pass();
} catch (e) {
  await verdict.fail(e);
}
