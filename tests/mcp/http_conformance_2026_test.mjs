// The official MCP conformance suite's release for protocol revision 2026-07-28
// (@modelcontextprotocol/conformance@0.2.0-alpha.12, npm alias conformance-2026-07-28) against
// the kernel in QEMU over Streamable HTTP, booted with the fixtures' profile, run as a new user
// would: `server --spec-version 2026-07-28 --suite all`. Every scenario of that revision must pass
// with at least one check of its own and no warning; the extension scenarios (tasks, skills),
// which the suite does not run at a revision, must stay absent (docs/mcp.md lists them as not
// served). Then the official v2 client (@modelcontextprotocol/client, pinned to 2026-07-28)
// completes tools and a prompt that ask in input rounds, its own handlers answering.
// Usage: node http_conformance_2026_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

import { bootHttp, root, watch } from "./sdk.mjs";

const kernel = process.argv[2];
const modules = path.join(root, ".deps/npm/node_modules");
const suite = path.join(modules, "conformance-2026-07-28/dist/index.js");
const node = await bootHttp(["--profile", "conformance"], { kernel });
const verdict = watch(node, "http_conformance_2026_test", 280000);
const results = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-conformance-"));
process.on("exit", () => fs.rmSync(results, { recursive: true, force: true })); // the suite's check files

try {
  const run = (args) =>
    promisify(execFile)(path.join(modules, ".bin/node"), [suite, ...args], { timeout: 240000, maxBuffer: 16 << 20 }).catch((e) => e);
  // The scenarios the suite has for this revision, from the suite itself.
  const listed = (await run(["list", "--server"])).stdout;
  const scenarios = [...listed.matchAll(/^\s+- (\S+) \[([^\]]+)\]/gm)];
  const expected = scenarios.filter(([, , versions]) => versions.split(",").includes("2026-07-28")).map(([, name]) => name);
  const extensions = scenarios.filter(([, , versions]) => versions === "extension").map(([, name]) => name);
  assert.ok(expected.length >= 35 && extensions.length > 0, `the suite lists ${expected.length} scenarios for 2026-07-28:\n${listed}`);

  const { stdout } = await run(["server", "--url", node.url, "--spec-version", "2026-07-28", "--suite", "all", "-o", results]);
  const outcome = [...stdout.matchAll(/^([✓✗]) (\S+): (\d+) passed, (\d+) failed/gmu)]
    .map(([, , name, passed, failed]) => ({ name, passed: Number(passed), failed: Number(failed) }));
  const total = stdout.match(/Total: (\d+) passed, (\d+) failed/);
  assert.ok(total, `suite summary missing:\n${stdout.slice(-3000)}`);
  console.log(outcome.map((r) => `  ${r.failed || !r.passed ? "✗" : "✓"} ${r.name}: ${r.passed} passed, ${r.failed} failed`).join("\n"));

  const ran = new Set(outcome.map((r) => r.name));
  assert.deepEqual(expected.filter((n) => !ran.has(n)), [], "scenarios of 2026-07-28 that did not run");
  assert.deepEqual(extensions.filter((n) => ran.has(n)), [], "extension scenarios ran: the README says they are not served");
  assert.deepEqual(outcome.filter((r) => r.failed > 0 || r.passed === 0), [], "scenarios that failed, or passed without a check");

  // Warnings (SHOULDs) and failures from the checks themselves, wire-schema validation included.
  const off = [];
  for (const dir of fs.readdirSync(results))
    for (const c of JSON.parse(fs.readFileSync(path.join(results, dir, "checks.json"), "utf8")))
      if (c.status === "WARNING" || c.status === "FAILURE")
        off.push(`${dir}: ${c.id} ${c.status} ${c.errorMessage ?? ""}`);
  assert.deepEqual(off, [], "checks that warned or failed");
  console.log(`conformance 2026-07-28: ${total[0]} in ${outcome.length} scenarios; not served (extensions): ${extensions.join(", ")}`);

  // The official v2 client pinned to 2026-07-28 drives the input rounds itself: its handlers
  // answer the embedded requests, it sends the original request again with the answers and the
  // state, until the result is complete.
  const V2 = await import(pathToFileURL(path.join(modules, "@modelcontextprotocol/client/dist/index.mjs")));
  const client = new V2.Client({ name: "basalt-mrtr", version: "1.0.0" },
                               { capabilities: { elicitation: {}, sampling: {}, roots: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } });
  const asked = [];
  client.setRequestHandler("elicitation/create", async (req) => {
    asked.push(req.params.message);
    return { action: "accept", content: /colou?r/.test(req.params.message) ? { color: "blue" } : /context/.test(req.params.message) ? { context: "tests" } : { name: "Alice" } };
  });
  client.setRequestHandler("sampling/createMessage", async () => {
    asked.push("sampling");
    return { role: "assistant", content: { type: "text", text: "Hello there!" }, model: "test-model", stopReason: "endTurn" };
  });
  client.setRequestHandler("roots/list", async () => {
    asked.push("roots");
    return { roots: [{ uri: "file:///work", name: "work" }] };
  });
  await client.connect(new V2.StreamableHTTPClientTransport(new URL(node.url)));
  const started = performance.now();
  let r = await client.callTool({ name: "test_input_required_result_multi_round", arguments: {} });
  const threeLegsMs = performance.now() - started;
  assert.deepEqual(r.content, [{ type: "text", text: 'step1: {"name":"Alice"}; step2: {"color":"blue"}' }], JSON.stringify(r));
  assert.deepEqual(asked.splice(0), ["Step 1: What is your name?", "Step 2: What is your favorite color?"], "one round each");
  r = await client.callTool({ name: "test_input_required_result_multiple_inputs", arguments: {} });
  assert.equal(r.content[0].text, 'user_name: {"name":"Alice"}; greeting: Hello there!; client_roots: 1 root(s), the first file:///work');
  assert.deepEqual(asked.splice(0).sort(), ["What is your name?", "roots", "sampling"]);
  const prompt = await client.getPrompt({ name: "test_input_required_result_prompt" });
  assert.match(prompt.messages[0].content.text, /context in mind: .*tests/);
  await client.close();
  console.log(`official v2 client: a call in three legs (two input rounds) took ${threeLegsMs.toFixed(1)} ms`);
  await verdict.pass();
} catch (e) {
  await verdict.fail(e);
} finally {
  fs.rmSync(results, { recursive: true, force: true });
}
