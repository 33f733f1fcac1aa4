// The security contracts, row by row, against the booted kernel through the official SDK client
// (stdio transport on `qemu/run.sh --stdio`). The serial line is configured anonymous, so every
// protected call must present an API key in params._meta["io.basalt/api-key"].
// Usage: node contract_test.mjs KERNEL_ELF
import assert from "node:assert/strict";

import { boot, envelopeOf, types } from "./sdk.mjs";

const { CallToolResultSchema, ReadResourceResultSchema } = types;
const kernel = process.argv[2];
const READER = "reader:ada:reader-key-0123456789";
const ADMIN = "admin:root:admin-key-0123456789abcdef";
// A reader with its own, tighter limits; and a looser override for ada that must change nothing.
const SLOW = "reader:slow:slow-key-0123456789abcdef";
const SLOW_LIMITS = "slow:time_ms=150,output_bytes=1024,rate=12/1,concurrency=2";
// A reader whose tool tasks may make three system calls.
const TINY = "reader:tiny:tiny-key-0123456789abcdef";
// A reader whose bucket holds 20 calls refilled at 1/s: the rate row's own, so what it proves does
// not depend on how fast the machine makes calls (the appliance's bucket is raised out of reach).
const BURST = "reader:burst:burst-key-0123456789abcdef";
// An admin narrowed to kernel:read.
const NARROW = "admin:narrow:narrow-key-0123456789abcdef";
const secret = (spec) => spec.split(":").slice(2).join(":");
const { client, transport, fail, done } = boot("basalt-contract-test",
  ["--role", "anonymous", "--key", READER, "--key", ADMIN, "--key", SLOW, "--limit", SLOW_LIMITS,
   "--key", BURST, "--limit", "burst:rate=20/1",
   "--key", TINY, "--limit", "tiny:syscalls=3", "--key", NARROW, "--limit", "narrow:scopes=kernel:read", "--limit", "ada:bogus=1", "--limit", "nobody:concurrency=1",
   "--limit", "ada:time_ms=60000,output_bytes=65536,rate=1000/1000,concurrency=100",
   "--append", "tool_time_ms=300 tool_output_bytes=4096",
   "--tools", "kernel_info,kernel_tasks,kernel_caps,kernel_mem,kernel_log,kernel_perf,kernel_diagnose"],
  { kernel, timeoutMs: 90000 });

// The most calls a token bucket (burst, refilled continuously at perSecond) can serve over a span
// of seconds: the full bucket and the refill, plus one for the clocks' rounding.
const bucketBound = (burst, perSecond, seconds) => burst + Math.ceil(perSecond * seconds) + 1;

const meta = (spec) => (spec ? { _meta: { "io.basalt/api-key": spec } } : {});
const call = (name, args, key) =>
  client.request({ method: "tools/call", params: { name, arguments: args, ...meta(key) } }, CallToolResultSchema);
const read = (uri, key) => client.request({ method: "resources/read", params: { uri, ...meta(key) } }, ReadResourceResultSchema);

function expectToolEnvelope(result, code, check = () => {}) {
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.equal(result.structuredContent, undefined, "an error is not the tool's output");
  const env = envelopeOf(result);
  assert.equal(env.ok, false);
  assert.equal(env.error.code, code);
  assert.match(env.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  assert.equal(typeof env.request_id, "string");
  check(env, result.content[0].text);
}

async function expectEnvelope(promise, rpcCode, code, check = () => {}) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.code, rpcCode, `JSON-RPC code for ${code}: ${err.message}`);
    const env = err.data;
    assert.equal(env.ok, false);
    assert.equal(env.error.code, code);
    assert.equal(typeof env.error.message, "string");
    assert.ok("details" in env.error);
    assert.match(env.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.equal(typeof env.request_id, "string");
    check(env);
    return true;
  });
}

try {
  await client.connect(transport);
  const rows = [];
  const row = async (name, fn) => { await fn(); rows.push(name); };

  await row("no key -> auth_missing_api_key", () => expectEnvelope(call("kernel_info", {}), -32001, "auth_missing_api_key"));
  await row("bad key -> auth_invalid_api_key", () =>
    expectEnvelope(call("kernel_info", {}, "not-a-key-of-this-appliance"), -32001, "auth_invalid_api_key"));
  await row("bad key on tools/list -> auth_invalid_api_key (never served as anonymous)", () =>
    expectEnvelope(client.request({ method: "tools/list", params: meta("not-a-key-of-this-appliance") }, types.ListToolsResultSchema),
                   -32001, "auth_invalid_api_key"));
  await row("wrong role -> auth_insufficient_role", () =>
    expectEnvelope(read("audit://log", secret(READER)), -32001, "auth_insufficient_role", (env) => {
      assert.equal(env.error.details.role, "reader");
      assert.equal(env.error.details.required, "audit:read");
    }));
  await row("unknown tool -> validation_unknown_tool", () =>
    expectEnvelope(call("shell_exec", {}, secret(ADMIN)), -32602, "validation_unknown_tool"));
  // 2025-11-25 (SEP-1303): a schema failure is a tool result the model reads, not a JSON-RPC error.
  await row("invalid arguments -> isError validation_failed", async () =>
    expectToolEnvelope(await call("kernel_log", { limit: 5000 }, secret(READER)), "validation_failed", (env, text) => {
      assert.equal(env.error.details.reason, "above_maximum");
      assert.equal(env.error.details.path, "/limit");
      assert.match(text, /Invalid arguments for tool 'kernel_log': \/limit: .*maximum/);
    }));
  await row("unknown argument -> isError validation_failed", async () =>
    expectToolEnvelope(await call("kernel_info", { verbose: true }, secret(READER)), "validation_failed", (env) =>
      assert.equal(env.error.details.reason, "additional_property")));

  // Every decision so far is in the audit trail (audit://log shows the newest 100).
  const auditSnapshot = async () => {
    await new Promise((r) => setTimeout(r, 100));
    const audit = await read("audit://log", secret(ADMIN));
    const text = audit.contents[0].text;
    assert.ok(!text.includes(secret(READER)) && !text.includes(secret(ADMIN)), "no key in the audit log");
    return JSON.parse(text);
  };
  const early = (await auditSnapshot()).decisions.map((d) => d.code);
  for (const code of ["auth_missing_api_key", "auth_invalid_api_key", "auth_insufficient_role", "validation_unknown_tool",
                      "validation_failed"])
    assert.ok(early.includes(code), `audit has ${code}`);

  // The right key works, and the tool really ran.
  const ok = await call("kernel_info", {}, secret(READER));
  assert.equal(ok.isError, false);
  assert.equal(ok.structuredContent.name, "Basalt");

  // Over rate: 40 calls one after another against burst's bucket (20, refilled at 1/s). However
  // fast or slow the machine, at most 20 + 1/s of the time the calls took can be served, at least
  // the 20 in the bucket are, and every refusal is limit_rate_exceeded.
  await row("over rate -> limit_rate_exceeded", async () => {
    // One after another, so the in-flight cap never interferes: only the bucket can refuse.
    const results = [];
    const t0 = performance.now();
    for (let i = 0; i < 40; ++i)
      results.push(await call("kernel_mem", {}, secret(BURST)).then((value) => ({ status: "fulfilled", value }),
                                                                   (reason) => ({ status: "rejected", reason })));
    const seconds = (performance.now() - t0) / 1000;
    const refused = results.filter((r) => r.status === "rejected");
    for (const r of refused) {
      assert.equal(r.reason.code, -32003);
      assert.equal(r.reason.data.error.code, "limit_rate_exceeded");
    }
    const served = results.length - refused.length;
    const most = bucketBound(20, 1, seconds);
    assert.ok(served >= 20 && served <= most, `served ${served} of 40 in ${seconds.toFixed(2)} s (at most ${most})`);
    if (most < 40)
      assert.ok(refused.length > 0, "some calls are refused");
  });

  // Over concurrency: 14 two-step diagnostics at once against the in-flight cap of 10.
  await row("over concurrency -> limit_concurrency_exceeded", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 14 }, () => call("kernel_diagnose", { steps: 2, step_ms: 50 }, secret(READER))));
    const refused = results.filter((r) => r.status === "rejected");
    assert.equal(refused.length, 4, `refused ${refused.length}`);
    for (const r of refused) {
      assert.equal(r.reason.code, -32003);
      assert.equal(r.reason.data.error.code, "limit_concurrency_exceeded");
    }
    for (const r of results.filter((r) => r.status === "fulfilled"))
      assert.equal(r.value.structuredContent.steps_done, 2);
  });

  // Over time: a 2 s diagnostic against a 300 ms wall-time limit (boot argument tool_time_ms).
  await row("over time -> limit_time_exceeded", async () => {
    const slow = await call("kernel_diagnose", { steps: 20, step_ms: 100 }, secret(READER));
    assert.equal(slow.isError, true);
    assert.equal(envelopeOf(slow).ok, false);
    assert.equal(envelopeOf(slow).error.code, "limit_time_exceeded");
  });

  // A tool that ignores the stop is killed: a 1 s step (sleep, then a busy loop that checks
  // nothing) against the 300 ms limit. The answer comes at the limit; the task is killed 250 ms
  // later instead of running on to the end of its step.
  await row("over time, not stopping -> limit_time_exceeded, task killed", async () => {
    const slow = await call("kernel_diagnose", { steps: 3, step_ms: 1000 }, secret(READER));
    assert.equal(envelopeOf(slow).error.code, "limit_time_exceeded");
    let killed = false, since = 0;
    for (let i = 0; i < 200 && !killed; ++i) { // pages through the log ring (4 KiB output limit)
      const log = await call("kernel_log", { since, limit: 15, min_level: "notice" }, secret(READER));
      killed = log.structuredContent.records.some((r) => /tool task for 'kernel_diagnose' killed/.test(r.text));
      if (log.structuredContent.records.length === 0)
        await new Promise((r) => setTimeout(r, 100));
      since = log.structuredContent.next;
    }
    assert.ok(killed, "the kernel logged the kill");
    const tasks = await call("kernel_tasks", {}, secret(READER));
    assert.ok(!tasks.structuredContent.tasks.some((t) => t.name === "tool:kernel_diagnose"), "the task is gone");
  });

  // Over output: the line boots with tool_output_bytes=4096 (the 64 KiB default, tightened).
  await row("over output -> limit_output_exceeded", async () => {
    const big = await call("kernel_log", { limit: 200 }, secret(READER));
    assert.equal(big.isError, true);
    assert.equal(envelopeOf(big).ok, false);
    assert.equal(envelopeOf(big).error.code, "limit_output_exceeded");
    const small = await call("kernel_log", { limit: 2 }, secret(READER));
    assert.equal(small.isError, false);
  });

  // Per-principal overrides tighten each limit for that principal only (ada, on the appliance's
  // limits, passes every call below; her looser override changed nothing, as the rows above show).
  await row("per-principal limits -> tighter for that principal only", async () => {
    const slowStart = performance.now(); // slow's first call: its bucket (12, 1/s) starts full here
    const pair = () => Promise.allSettled([call("kernel_diagnose", { steps: 2, step_ms: 100 }, secret(SLOW)),
                                           call("kernel_diagnose", { steps: 2, step_ms: 100 }, secret(READER))]);
    const [slowRun, adaRun] = await pair();
    assert.equal(adaRun.value.isError, false, "200 ms fits ada's 300 ms");
    assert.equal(envelopeOf(slowRun.value).error.code, "limit_time_exceeded", "not slow's 150 ms");

    // A page of log records that ada (4 KiB) gets whole and that is well over slow's 1 KiB.
    let limit = 4, page;
    for (; limit <= 40; limit += 2) {
      page = await call("kernel_log", { limit }, secret(READER));
      assert.equal(page.isError, false, `kernel_log limit ${limit} within ada's 4 KiB`);
      if (JSON.stringify(page.structuredContent).length > 1400)
        break;
    }
    const slowLog = await call("kernel_log", { limit }, secret(SLOW));
    assert.equal(envelopeOf(slowLog).error.code, "limit_output_exceeded", "over slow's 1 KiB");

    const three = await Promise.allSettled(
      Array.from({ length: 3 }, () => call("kernel_diagnose", { steps: 1, step_ms: 50 }, secret(SLOW))));
    const refused = three.filter((r) => r.status === "rejected");
    assert.equal(refused.length, 1, "two in flight for slow");
    assert.equal(refused[0].reason.data.error.code, "limit_concurrency_exceeded");

    // slow's bucket holds 12 (4 taken above, refilled at 1/s); ada's would serve all 15.
    let served = 0, limited = 0;
    for (let i = 0; i < 15; ++i) {
      await call("kernel_mem", {}, secret(SLOW)).then(() => ++served, (e) => {
        assert.equal(e.data.error.code, "limit_rate_exceeded");
        ++limited;
      });
    }
    const most = bucketBound(12, 1, (performance.now() - slowStart) / 1000) - 4;
    assert.ok(served <= most, `slow: ${served} served, ${limited} limited (at most ${most})`);
    if (most < 15)
      assert.ok(limited > 0, `slow: ${served} served, none limited`);
  });

  // Over the system-call budget: a ten-step diagnostic sleeps once a step, past tiny's three
  // calls; the same for ada fits the default budget.
  await row("over system calls -> limit_syscalls_exceeded", async () => {
    const tiny = await call("kernel_diagnose", { steps: 10, step_ms: 10 }, secret(TINY));
    assert.equal(tiny.isError, true);
    assert.equal(envelopeOf(tiny).error.code, "limit_syscalls_exceeded", JSON.stringify(tiny));
    const ada = await call("kernel_diagnose", { steps: 10, step_ms: 10 }, secret(READER));
    assert.equal(ada.isError, false, JSON.stringify(ada));
    assert.equal(ada.structuredContent.steps_done, 10);
  });

  // Scopes narrowed per principal: an admin key limited to kernel:read reads no audit trail.
  await row("narrowed scopes -> auth_insufficient_role", async () => {
    await expectEnvelope(read("audit://log", secret(NARROW)), -32001, "auth_insufficient_role", (env) => {
      assert.equal(env.error.details.role, "admin");
      assert.equal(env.error.details.required, "audit:read");
    });
    assert.equal((await call("kernel_info", {}, secret(NARROW))).isError, false, "kernel:read is kept");
  });

  // Overrides that cannot be parsed, name nobody or would loosen a limit are ignored, and say
  // so where a client looks (kernel://status), not only in the kernel log.
  await row("ignored overrides -> warnings in kernel://status", async () => {
    const status = JSON.parse((await read("kernel://status", secret(READER))).contents[0].text);
    const warnings = status.mcp.config_warnings;
    assert.equal(warnings.length, 3, JSON.stringify(warnings));
    assert.ok(warnings.some((w) => /^limit= for 'ada' asks for more than the appliance allows/.test(w)), JSON.stringify(warnings));
    assert.ok(warnings.some((w) => /^limit=ada:bogus=1 refused/.test(w)), JSON.stringify(warnings));
    assert.ok(warnings.some((w) => /^limit= names 'nobody', which no key= defines/.test(w)), JSON.stringify(warnings));
  });

  const snapshot = await auditSnapshot();
  assert.equal(snapshot.version, "1");
  assert.match(snapshot.generated_at, /Z$/);
  const codes = snapshot.decisions.map((d) => d.code);
  for (const code of ["limit_rate_exceeded", "limit_time_exceeded", "limit_concurrency_exceeded", "limit_output_exceeded"])
    assert.ok(codes.includes(code), `audit has ${code}`);
  const allowed = snapshot.decisions.find((d) => d.outcome === "allow" && d.name === "kernel_diagnose");
  assert.equal(allowed.principal, "ada");
  assert.equal(allowed.role, "reader");
  assert.equal(allowed.transport, "serial");
  assert.ok(allowed.token_id > 0, "an executed call names its execution token");
  for (const d of snapshot.decisions)
    for (const field of ["timestamp", "request_id", "principal", "role", "transport", "kind", "name", "outcome", "code",
                         "token_id", "args_hash", "duration_us"])
      assert.ok(field in d, `audit record field ${field}`);

  console.log(`contract rows proven: ${rows.length}\n  ${rows.join("\n  ")}`);
  console.log("PASS contract_test");
  await done();
  process.exit(0);
} catch (e) {
  await fail(e);
}
