// A token binds what runs: test_fault's "tamper" mode has the bridge change the argument text
// after the token was issued; the tool task recomputes the binding from the text it would run,
// the redeem is refused (the tool never runs: token_refused) and both audit trails show it.
// Death reclaims everything (profile=faults: the test_fault tool takes 16 small heap blocks and
// one of 64 KiB, then faults in one of five ways, or hangs past its stop and is killed). Checked
// from outside: every faulting call is answered at once as internal_error with details.reason
// tool_fault (long before the 10 s wall-time limit it would otherwise wait for); every hanging
// call is answered at its 100 ms limit and its task killed; afterwards the kernel heap holds
// exactly what it held before (live allocations, bytes, physical pages), no tool task is left,
// and kernel_mem's reclaimed counters grew by exactly the blocks the tool took (17 per call).
// audit://log reads with the capability-event ring full (its newest 64 events).
// Usage: node faults_test.mjs KERNEL_ELF [FAULTING_CALLS]
import assert from "node:assert/strict";

import { boot, envelopeOf, taskGone, types } from "./sdk.mjs";

const { CallToolResultSchema, ReadResourceResultSchema } = types;
const kernel = process.argv[2];
const CALLS = Number(process.argv[3] ?? 10000);
const HANGS = 20;
const IN_FLIGHT = 8; // below the 10 calls a principal may have in flight
const HANGER = "hanger-key-0123456789abcdef";
const BLOCKS_PER_CALL = 17; // 16 x 200 bytes + 1 x 64 KiB, the tool's defaults
const { client, transport, fail, done } = boot("basalt-faults-test",
  ["--profile", "faults", "--key", `admin:hanger:${HANGER}`, "--limit", "hanger:time_ms=100"],
  { kernel, timeoutMs: 600000 });

const call = (name, args, key) =>
  client.request({ method: "tools/call",
                   params: { name, arguments: args, ...(key ? { _meta: { "io.basalt/api-key": key } } : {}) } },
                 CallToolResultSchema, { timeout: 120000 });

async function memory() {
  const m = await call("kernel_mem", {});
  assert.equal(m.isError, false);
  return m.structuredContent;
}

// Runs n calls, `width` at a time; returns the slowest answer in ms.
async function campaign(n, width, one) {
  let next = 0, slowest = 0;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      const t0 = performance.now();
      await one(i);
      slowest = Math.max(slowest, performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
  return slowest;
}

const MODES = ["data", "write", "exec", "undef", "brk"];

try {
  await client.connect(transport);
  // Warm-up: whatever the bridge allocates once (its job table, the inert event) exists before
  // the baseline is taken.
  for (const mode of MODES)
    await call("test_fault", { mode });
  assert.ok(await taskGone((p) => call(p.name, p.arguments), "tool:test_fault"), "warm-up tool tasks gone");

  const tampered = await call("test_fault", { mode: "tamper" });
  assert.equal(tampered.isError, true);
  assert.equal(envelopeOf(tampered).error.code, "internal_error");
  assert.equal(envelopeOf(tampered).error.details.reason, "token_refused", JSON.stringify(tampered));
  // The token binds the provenance node too: the same arguments acting for another node are refused.
  const reparented = await call("test_fault", { mode: "reparent" });
  assert.equal(reparented.isError, true);
  assert.equal(envelopeOf(reparented).error.details.reason, "token_refused", JSON.stringify(reparented));
  // Without its token the call does not run either (the sink policy's BLOCK, token_missing).
  const untokened = await call("test_fault", { mode: "no_token" });
  assert.equal(untokened.isError, true);
  assert.equal(envelopeOf(untokened).error.details.reason, "token_missing", JSON.stringify(untokened));
  const audit = JSON.parse((await client.request({ method: "resources/read", params: { uri: "audit://log" } },
                                                 ReadResourceResultSchema)).contents[0].text);
  const refusal = audit.capability_events.filter((e) => e.task === "tool:test_fault" && e.syscall === 21 && e.outcome === "deny");
  assert.deepEqual(refusal.map((e) => e.error), ["access_denied", "access_denied", "bad_handle"],
                   `two redeems refused for their binding, one with no token at all: ${JSON.stringify(audit.capability_events)}`);
  const decision = audit.decisions.filter((d) => d.name === "test_fault" && d.code === "internal_error");
  assert.equal(decision.length, MODES.length + 3, "the warm-up faults and the refused calls are decisions of the MCP trail");
  assert.deepEqual(decision.slice(-3).map((d) => d.reason), ["token_refused", "token_refused", "token_missing"],
                   "the trail says why each was refused");
  assert.ok(decision.every((d) => /^[0-9a-f]{8}-[1-9][0-9]*$/.test(d.provenance_node_id)), JSON.stringify(decision));
  assert.equal(new Set(decision.map((d) => d.provenance_node_id)).size, decision.length, "one node per request");
  assert.ok(await taskGone((p) => call(p.name, p.arguments), "tool:test_fault"), "tampered tool task gone");

  const before = await memory();
  const tasksBefore = (await call("kernel_tasks", {})).structuredContent.tasks.length;

  const t0 = performance.now();
  const slowestFault = await campaign(CALLS, IN_FLIGHT, async (i) => {
    const r = await call("test_fault", { mode: MODES[i % MODES.length] });
    assert.equal(r.isError, true, `call ${i}: ${JSON.stringify(r)}`);
    assert.equal(envelopeOf(r).error.code, "internal_error", `call ${i}`);
    assert.equal(envelopeOf(r).error.details.reason, "tool_fault", `call ${i}: ${JSON.stringify(r)}`);
  });
  const faultSeconds = (performance.now() - t0) / 1000;
  // At once, not at the limit: a fault left to the wall-time limit is answered after 10 s.
  assert.ok(slowestFault < 10000, `a faulting call took ${slowestFault.toFixed(0)} ms: answered at the wall-time limit`);

  // Two at a time: an answered hanging task lives on until its kill 250 ms later and still counts
  // against the caller's 10 calls in flight.
  const slowestHang = await campaign(HANGS, 2, async (i) => {
    const r = await call("test_fault", { mode: "hang" }, HANGER);
    assert.equal(r.isError, true);
    assert.equal(envelopeOf(r).error.code, "limit_time_exceeded", `hang ${i}: ${JSON.stringify(r)}`);
  });
  assert.ok(await taskGone((p) => call(p.name, p.arguments), "tool:test_fault", 100), "every hanging tool task was killed");

  const after = await memory();
  const tasksAfter = (await call("kernel_tasks", {})).structuredContent.tasks.length;
  assert.equal(tasksAfter, tasksBefore, "no zombie task is left");
  assert.equal(after.heap.live_allocations, before.heap.live_allocations, "heap allocations back at the baseline");
  assert.equal(after.heap.bytes_requested, before.heap.bytes_requested, "heap bytes back at the baseline");
  assert.equal(after.free_pages, before.free_pages, "physical pages back at the baseline");
  // Thousands of token redemptions later, far more than the kernel's capability-event ring holds
  // (256): audit://log still reads, with the newest 64 (the read failed past its output limit
  // once the ring had filled).
  const full = JSON.parse((await client.readResource({ uri: "audit://log" })).contents[0].text);
  assert.equal(full.capability_events.length, 64, JSON.stringify(full.capability_events.slice(-3)));
  assert.ok(full.capability_events_omitted > 0, `omitted: ${full.capability_events_omitted}`);
  assert.ok(full.capability_events.every((e, i, a) => i === 0 || e.seq > a[i - 1].seq), "oldest first, no repeats");
  assert.equal(full.capability_events.at(-1).task, "tool:kernel_tasks", "the newest are shown");
  const taken = (CALLS + HANGS) * BLOCKS_PER_CALL;
  assert.equal(after.reclaimed.heap_allocations - before.reclaimed.heap_allocations, taken,
               "the kernel took back exactly what the tool took");
  console.log(`faults_test: a tampered binding refused and audited; ${CALLS} faulting calls in ${faultSeconds.toFixed(1)} s (slowest answer ${slowestFault.toFixed(0)} ms), ` +
              `${HANGS} hanging calls killed (slowest ${slowestHang.toFixed(0)} ms); ${taken} heap blocks ` +
              `(${after.reclaimed.heap_bytes - before.reclaimed.heap_bytes} bytes) reclaimed; heap at its baseline ` +
              `(${after.heap.live_allocations} allocations, ${after.free_pages} free pages)`);
  await done();
} catch (e) {
  await fail(e);
}
