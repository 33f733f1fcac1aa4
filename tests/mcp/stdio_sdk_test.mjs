// End to end: the official MCP TypeScript SDK client (npm @modelcontextprotocol/sdk) spawns
// `qemu/run.sh --stdio` as a stdio MCP server and talks to the booted kernel over the serial line.
// The same session runs on the Raspberry Pi 4 image under QEMU raspi4b (BASALT_BOARD=rpi4).
// Usage: node stdio_sdk_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";

import { board, boot, confirmAsHuman, envelopeOf, root, taskGone, types } from "./sdk.mjs";

const kernel = process.argv[2];
const started = Date.now();
// Five tools a page (the default serves every tool in one): pagination proven from outside.
// It declares elicitation and confirms destructive calls as a human would (the sink policy).
const { client, transport, fail, done } = boot("basalt-test", ["--append", "list_page=5"],
                                               { kernel, capabilities: { elicitation: {} } });
confirmAsHuman(client);

try {
  await client.connect(transport); // initialize + notifications/initialized
  const connectedMs = Date.now() - started;
  const info = client.getServerVersion();
  assert.equal(info.name, "basalt");
  assert.ok(client.getServerCapabilities().tools, "tools capability declared");

  // All pages of tools/list.
  const names = [];
  let cursor, pages = 0;
  do {
    ++pages;
    const page = await client.listTools(cursor ? { cursor } : {});
    for (const t of page.tools) {
      names.push(t.name);
      assert.equal(t.inputSchema.type, "object");
      assert.ok(t.outputSchema, `${t.name} has an output schema`);
    }
    cursor = page.nextCursor;
  } while (cursor);
  assert.deepEqual(names.sort(), ["collection_create", "collection_drop", "collection_export", "collection_import",
                                 "collection_list", "collection_stats", "document_delete", "document_get", "document_search", "document_upsert",
                                 "kernel_caps", "kernel_diagnose", "kernel_info", "kernel_log", "kernel_mem", "kernel_perf",
                                 "kernel_tasks", "proposal_approve", "proposal_get", "proposal_list", "proposal_reject", "text_embed",
                                 "vector_delete", "vector_get", "vector_search", "vector_upsert"]);
  assert.equal(pages, Math.ceil(names.length / 5), "list_page=5: five tools a page");

  const t0 = process.hrtime.bigint();
  const result = await client.callTool({ name: "kernel_info", arguments: {} });
  const callUs = Number(process.hrtime.bigint() - t0) / 1000;
  assert.equal(result.isError, false);
  assert.equal(result.structuredContent.name, "Basalt");
  assert.equal(result.structuredContent.board, board === "rpi4" ? "rpi4" : "qemu-virt");
  assert.match(result.structuredContent.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  // The Pi: what its firmware reports through the mailbox (QEMU's raspi4b models a Pi 4 B 2 GB).
  if (board === "rpi4") {
    const fw = result.structuredContent.firmware;
    assert.equal(fw.board, "Raspberry Pi 4 Model B rev 1.5, 2 GiB", JSON.stringify(fw));
    assert.equal(fw.revision, "0xb03115");
    assert.match(fw.mac, /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
    assert.ok(fw.arm_memory_bytes > 512 << 20 && fw.clocks_hz.arm > 0, JSON.stringify(fw));
  } else {
    assert.equal(result.structuredContent.firmware, undefined, "no VideoCore on virt");
  }
  // The Pi has no RTC: its time is the launcher's, passed at boot (run.sh --board rpi4).
  assert.ok(Math.abs(Date.parse(result.structuredContent.time) - Date.now()) < 120000, result.structuredContent.time);
  assert.ok(result.structuredContent.uptime_ms > 0);
  assert.equal(JSON.parse(result.content[0].text).source_commit, result.structuredContent.source_commit);
  // The commit the image was built from (read at build time, "-dirty" for uncommitted changes):
  // the tree's HEAD, since ./basalt test builds before it tests.
  const head = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: root }).toString().trim();
  assert.match(result.structuredContent.source_commit, new RegExp(`^${head}(-dirty)?$`),
               "kernel_info.source_commit is the tree's HEAD (rebuild the kernel if it is not)");

  const tasks = await client.callTool({ name: "kernel_tasks", arguments: {} });
  const taskNames = tasks.structuredContent.tasks.map((t) => t.name);
  assert.ok(taskNames.includes("mcp-serial") && taskNames.includes("idle"), `tasks: ${taskNames}`);
  assert.ok(!taskNames.includes("shell"), "no shell on a protocol line");

  const mem = await client.callTool({ name: "kernel_mem", arguments: {} });
  assert.ok(mem.structuredContent.free_pages > 0 && mem.structuredContent.free_pages < mem.structuredContent.total_pages);
  const caps = await client.callTool({ name: "kernel_caps", arguments: {} });
  // No direct execution: the call ran in a task of its own whose whole capability table is the
  // one right its single-use execution token granted.
  assert.equal(caps.structuredContent.task, "tool:kernel_caps");
  assert.deepEqual(caps.structuredContent.capabilities.map((c) => [c.type, c.rights]), [["Introspection", ["read"]]]);
  const log = await client.callTool({ name: "kernel_log", arguments: { limit: 5, min_level: "info" } });
  assert.ok(log.structuredContent.records.length > 0 && log.structuredContent.records.length <= 5);
  assert.ok(log.structuredContent.records.some((r) => /mcp: serving/.test(r.text)) ||
            (await client.callTool({ name: "kernel_log", arguments: { limit: 200 } })).structuredContent.records.some((r) => /mcp: serving/.test(r.text)));
  const perf = await client.callTool({ name: "kernel_perf", arguments: { iterations: 2000 } });
  const sc = perf.structuredContent.syscall_ns;
  assert.ok(sc.min > 0 && sc.min <= sc.p50 && sc.p50 <= sc.p99, JSON.stringify(sc));

  // Progress: a long-running call reports after every step (MCP "Progress").
  const progress = [];
  const diag = await client.callTool({ name: "kernel_diagnose", arguments: { steps: 5, step_ms: 40 } }, undefined,
                                     { onprogress: (p) => progress.push(p), timeout: 30000 });
  assert.equal(diag.isError, false);
  assert.equal(diag.structuredContent.steps_done, 5);
  assert.ok(diag.structuredContent.syscalls > 0);
  assert.ok(progress.length >= 3, `progress notifications: ${JSON.stringify(progress)}`);
  assert.ok(progress.every((p, i) => p.total === 5 && (i === 0 || p.progress > progress[i - 1].progress)));
  assert.ok(progress.at(-1).progress >= 4); // the SDK may drop the last one (it runs notification handlers a microtask late)

  // The line keeps serving while a tool runs, and cancellation really stops the tool task.
  const ac = new AbortController();
  let firstStep;
  const stepped = new Promise((resolve) => (firstStep = resolve));
  const long = client.callTool({ name: "kernel_diagnose", arguments: { steps: 100, step_ms: 100 } }, undefined,
                               { signal: ac.signal, onprogress: () => firstStep(), timeout: 60000 });
  await stepped;
  const during = await client.callTool({ name: "kernel_tasks", arguments: {} });
  assert.ok(during.structuredContent.tasks.some((t) => t.name === "tool:kernel_diagnose"),
            `a diagnose task runs: ${during.structuredContent.tasks.map((t) => t.name)}`);
  ac.abort("test cancels");
  await assert.rejects(long);
  assert.ok(await taskGone((p) => client.callTool(p), "tool:kernel_diagnose"), "the cancelled tool task ended");

  // Resources: every one listed, each read is a snapshot with version, generated_at, source_commit.
  const resources = (await client.listResources()).resources.map((r) => r.uri).sort();
  assert.deepEqual(resources,
                   ["audit://log", "kernel://composition", "kernel://log", "kernel://perf", "kernel://status"]);
  for (const uri of resources) {
    const r = await client.readResource({ uri });
    const snap = JSON.parse(r.contents[0].text);
    assert.equal(r.contents[0].mimeType, "application/json");
    assert.equal(snap.version, "1");
    assert.match(snap.generated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(snap.source_commit, result.structuredContent.source_commit);
  }
  const status = JSON.parse((await client.readResource({ uri: "kernel://status" })).contents[0].text);
  assert.equal(status.mcp.transport, "serial");
  assert.equal(status.mcp.serial_device, process.env.BASALT_LINE === "uart" || board === "rpi4" ? "pl011" : "virtio-console");
  assert.deepEqual(status.clock, { set: true, source: board === "rpi4" ? "boot argument" : "rtc" });
  assert.deepEqual(status.kernel.firmware, result.structuredContent.firmware);
  // Everything this session sent and received so far went over that device.
  assert.ok(status.mcp.serial_counters.rx_bytes > 500 && status.mcp.serial_counters.tx_bytes > 2000,
            JSON.stringify(status.mcp.serial_counters));
  assert.equal(status.mcp.serial_counters.rx_dropped, 0);
  assert.deepEqual(status.mcp.config_warnings, [], "a default boot has nothing to warn about");
  assert.equal(status.mcp.line_role, "admin");
  assert.deepEqual((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate), ["provenance://node/{id}"]);
  // Provenance: the status read above has a node, named by its audit record; the node says who
  // sent it, over which line, as which client (as the client declared itself), and is UNTRUSTED.
  const trail = JSON.parse((await client.readResource({ uri: "audit://log" })).contents[0].text).decisions;
  const statusRead = trail.filter((d) => d.name === "kernel://status" && d.action === "read").at(-1);
  assert.match(statusRead.provenance_node_id, /^[0-9a-f]{8}-[1-9][0-9]*$/, JSON.stringify(statusRead));
  const prov = JSON.parse((await client.readResource({ uri: `provenance://node/${statusRead.provenance_node_id}` })).contents[0].text);
  assert.equal(prov.node.id, statusRead.provenance_node_id);
  assert.deepEqual([prov.node.integrity, prov.node.principal, prov.node.role, prov.node.transport, prov.node.method],
                   ["UNTRUSTED", "console", "admin", "serial", "resources/read"]);
  assert.deepEqual(prov.node.client, { name: "basalt-test", version: "1.0.0" });
  assert.equal(prov.node.parent, "");
  assert.deepEqual(prov.chain, [], "a request straight from a client derives from nothing");
  assert.deepEqual(prov.decisions.map((d) => [d.name, d.outcome]), [["kernel://status", "allow"]]);
  const unknown = prov.node.id.replace(/-\d+$/, "-999999");
  await assert.rejects(client.readResource({ uri: `provenance://node/${unknown}` }),
                       (e) => e.code === -32002 && /no such node/.test(e.data.error.message));
  await assert.rejects(client.readResource({ uri: "provenance://node/00000000-1" }),
                       (e) => e.data.error.details.reason === "invalid_id" && /not a provenance node id/.test(e.data.error.message));

  // Logging: after logging/setLevel, kernel log records arrive as notifications/message.
  const { LoggingMessageNotificationSchema } = types;
  const got = new Promise((resolve) => client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => resolve(n.params)));
  await client.setLoggingLevel("notice");
  // A refusal is logged at notice level by the kernel, so it must come back as a notification.
  await assert.rejects(client.callTool({ name: "no_such_tool_for_logging", arguments: {} }));
  const note = await Promise.race([got, new Promise((r) => setTimeout(() => r(null), 5000))]);
  assert.ok(note, "a notifications/message arrived");
  assert.equal(note.logger, "kernel");
  assert.equal(note.level, "notice");
  assert.match(note.data, /no_such_tool_for_logging/);
  await client.setLoggingLevel("emergency"); // quiet again

  // Deny by default: an unknown tool gets the canonical envelope.
  await assert.rejects(client.callTool({ name: "rm_rf", arguments: {} }), (err) => {
    assert.equal(err.code, -32602);
    assert.equal(err.data.ok, false);
    assert.equal(err.data.error.code, "validation_unknown_tool");
    assert.match(err.data.timestamp, /Z$/);
    return true;
  });
  // Invalid arguments: refused by the tool's schema before anything runs, with the field named,
  // as a tool error the model reads (2025-11-25, SEP-1303). Through callTool() after listTools():
  // this SDK checks even an error's structuredContent against the tool's outputSchema
  // (typescript-sdk#1943), so the envelope is in _meta, never structuredContent.
  const invalid = await client.callTool({ name: "kernel_log", arguments: { limit: 100000 } });
  assert.equal(invalid.isError, true);
  assert.equal(invalid.structuredContent, undefined);
  assert.equal(envelopeOf(invalid).error.code, "validation_failed");
  assert.equal(envelopeOf(invalid).error.details.path, "/limit");
  assert.match(invalid.content[0].text, /^Invalid arguments for tool 'kernel_log': \/limit: /);
  assert.match(invalid.content[0].text, /"validation_failed"/, "the envelope travels in the text too");

  // A vector collection round trip: create, upsert, search, read back, drop.
  const tool = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    assert.equal(r.isError, false, `${name}: ${JSON.stringify(r)}`);
    return r.structuredContent;
  };
  await tool("collection_create", { name: "trip", dim: 4, metric: "l2", max_elements: 16 });
  const rows = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0.9, 0.1, 0, 0]];
  assert.equal((await tool("vector_upsert", { collection: "trip", ids: [10, 20, 30, 40], vectors: rows })).upserted, 4);
  const found = await tool("vector_search", { collection: "trip", vector: [1, 0.05, 0, 0], k: 2 });
  assert.deepEqual(found.hits.map((h) => h.id), [10, 40]);
  const read = await tool("vector_get", { collection: "trip", ids: [30] });
  assert.deepEqual(read.vectors[0].vector, [0, 0, 1, 0]);
  assert.deepEqual(await tool("collection_drop", { name: "trip" }), { dropped: "trip" });
  await client.ping();

  console.log(`connected (initialize answered) ${connectedMs} ms after spawn; kernel_info round trip ${callUs.toFixed(0)} us`);
  console.log("PASS stdio_sdk_test");
  await done();
  process.exit(0);
} catch (e) {
  await fail(e);
}
