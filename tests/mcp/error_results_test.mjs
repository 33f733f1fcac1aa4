// Failed tool calls as an agent built on the official TypeScript SDK sees them: Client.callTool()
// of @modelcontextprotocol/sdk 1.32.2, after listTools() as every host does. That client checks a
// result's structuredContent against the outputSchema it cached from tools/list even when isError
// is true, and throws its own -32602 when it does not conform, so the appliance's envelope must
// never be the structuredContent of a tool with an output schema (every tool here has one). Each
// way a call fails as a result: the input schema (kernel_info with an unknown argument), a store
// error reported by the tool task (vector_search in a collection that does not exist, a second
// collection_create of one name), a limit (kernel_diagnose past tool_time_ms) and a step-up
// refusal (collection_drop from a client that cannot be asked). Each must come back as a result
// with isError, the envelope in _meta["io.basalt/error"] and in the text; a success still has
// structuredContent the client validated.
// Over the serial line (a 2025-11-25 session) or over HTTP, where a v2 client pinned to 2026-07-28
// (stateless requests) makes the same calls.
// Usage: node error_results_test.mjs KERNEL_ELF stdio|http
import assert from "node:assert/strict";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { Client, StreamableHTTPClientTransport, boot, bootHttp, root, watch } from "./sdk.mjs";

const kernel = process.argv[2];
const line = process.argv[3] ?? "stdio";
const KEY = "admin-key-0123456789abcdef";
// 300 ms against a 2 s diagnostic: over the limit by far on any machine.
const limits = ["--append", "tool_time_ms=300"];

// The envelope of a failed result, checked where every client can read it.
function envelope(r, tool) {
  const what = `${tool}: ${JSON.stringify(r)}`;
  assert.equal(r.isError, true, what);
  assert.equal(r.structuredContent, undefined, `an error is not the tool's output: ${what}`);
  const env = r._meta?.["io.basalt/error"];
  assert.ok(env, `the envelope under _meta["io.basalt/error"]: ${what}`);
  assert.equal(env.ok, false, what);
  assert.match(env.timestamp, /Z$/, what);
  assert.equal(typeof env.request_id, "string", what);
  assert.equal(r.content[0].type, "text", what);
  assert.ok(r.content[0].text.includes(JSON.stringify(env)), `the envelope travels in the text too: ${what}`);
  return env.error;
}

// The calls, through callTool() of a client that has listed the tools (validators cached).
async function exercise(client, era) {
  const listed = await client.listTools();
  for (const name of ["kernel_info", "kernel_diagnose", "vector_search", "collection_create", "collection_drop"])
    assert.ok(listed.tools.find((t) => t.name === name)?.outputSchema, `${era}: ${name} declares an output schema`);

  const ok = await client.callTool({ name: "kernel_info", arguments: {} });
  assert.equal(ok.isError, false, `${era}: ${JSON.stringify(ok)}`);
  assert.equal(ok.structuredContent.name, "Basalt", "a success keeps its validated structuredContent");
  assert.equal(ok._meta?.["io.basalt/error"], undefined, "no envelope on a success");

  // The input schema: a tool error since 2025-11-25, with a sentence the model can act on.
  const bad = await client.callTool({ name: "kernel_info", arguments: { verbose: true } });
  const invalid = envelope(bad, "kernel_info");
  assert.equal(invalid.code, "validation_failed", era);
  assert.equal(invalid.details.reason, "additional_property", era);
  assert.match(bad.content[0].text, /^Invalid arguments for tool 'kernel_info': /, era);

  // The store, from the tool task: no such collection; then a name that is taken.
  const missing = await client.callTool({ name: "vector_search", arguments: { collection: `nope_${era}`, vector: [1, 0] } });
  assert.equal(envelope(missing, "vector_search").code, "not_found", era);
  const name = `errs_${era}`;
  const created = await client.callTool({ name: "collection_create", arguments: { name, dim: 2, metric: "l2", durability: "memory" } });
  assert.equal(created.isError, false, `${era}: ${JSON.stringify(created)}`);
  assert.equal(created.structuredContent.name, name);
  const again = await client.callTool({ name: "collection_create", arguments: { name, dim: 2, metric: "l2", durability: "memory" } });
  const exists = envelope(again, "collection_create");
  assert.deepEqual([exists.code, exists.details?.reason], ["validation_failed", "exists"], era);

  // A limit: the wall-time limit ends the call (the reply comes from the dispatcher, not the tool).
  const slow = await client.callTool({ name: "kernel_diagnose", arguments: { steps: 20, step_ms: 100 } });
  assert.equal(envelope(slow, "kernel_diagnose").code, "limit_time_exceeded", era);

  // The sink policy: a drop from a client that cannot be asked becomes a proposal, refused for now.
  const drop = await client.callTool({ name: "collection_drop", arguments: { name } });
  const held = envelope(drop, "collection_drop");
  assert.equal(held.code, "step_up_required", `${era}: ${JSON.stringify(held)}`);
  assert.match(held.details.proposal_id, /^\d+$/, era);
}

if (line === "stdio") {
  const { client, transport, fail, done } = boot("basalt-error-results", limits, { kernel, timeoutMs: 90000 });
  try {
    await client.connect(transport);
    await exercise(client, "2025");
    await done();
    console.log("PASS error_results_test (stdio)");
  } catch (e) {
    await fail(e);
  }
} else {
  const node = await bootHttp(["--key", `admin:root:${KEY}`, ...limits], { kernel });
  const verdict = watch(node, "error_results_test (http)", 120000);
  try {
    const transport = new StreamableHTTPClientTransport(new URL(node.url), { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } });
    const client = new Client({ name: "basalt-error-results", version: "1.0.0" });
    await client.connect(transport);
    await exercise(client, "2025");
    await client.close();

    const v2 = path.join(root, ".deps/npm/node_modules/@modelcontextprotocol/client/dist");
    const V2 = await import(pathToFileURL(path.join(v2, "index.mjs")));
    const modern = new V2.Client({ name: "basalt-error-results", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await modern.connect(new V2.StreamableHTTPClientTransport(new URL(node.url), { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } }));
    await exercise(modern, "2026");
    await modern.close();
    await verdict.pass();
  } catch (e) {
    await verdict.fail(e);
  }
}
