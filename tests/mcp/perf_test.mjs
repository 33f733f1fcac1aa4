// Where the time of a tools/call goes, seen from outside: kernel://perf counts every stage of the
// kernel's tools/call pipeline (mcp/server/call_stages.h). N calls of kernel_info over the line
// add exactly N to every stage, on the line's transport and in the total: only tools/calls are
// timed, so the resource reads, the handshake and the listing in between add nothing. The stages
// lie one after another within the call, so what they add up to never exceeds what the whole
// calls took. No timing threshold: only counts and the order of sums are checked.
// Usage: node perf_test.mjs KERNEL_ELF
import assert from "node:assert/strict";

import { boot } from "./sdk.mjs";

const kernel = process.argv[2];
const N = 25;
const STAGES = ["parse", "authenticate", "provenance", "route", "authorise", "validate", "admit", "start", "body",
                "encode", "audit", "send"];
const { client, transport, fail, done } = boot("basalt-perf-test", [],
                                               { kernel, timeoutMs: 90000 });

const perf = async () => JSON.parse((await client.readResource({ uri: "kernel://perf" })).contents[0].text);
const grew = (after, before, stage, field) => after[stage][field] - before[stage][field];

try {
  await client.connect(transport);
  const uris = (await client.listResources()).resources.map((r) => r.uri);
  assert.ok(uris.includes("kernel://perf"), `resources: ${uris}`);

  const before = await perf();
  assert.equal(before.version, "1");
  assert.equal(before.unit, "ns");
  for (let i = 0; i < N; ++i) {
    const r = await client.callTool({ name: "kernel_info", arguments: {} });
    assert.ok(!r.isError, JSON.stringify(r));
  }
  const after = await perf();

  // The line is the serial transport; the total is every transport's together.
  const line = Object.keys(after.transports).find((t) => t !== "http");
  assert.ok(line, `transports: ${Object.keys(after.transports)}`);
  for (const view of [[after.stages, before.stages], [after.transports[line], before.transports[line]]]) {
    const [a, b] = view;
    let stageSum = 0;
    for (const s of [...STAGES, "call"]) {
      assert.equal(grew(a, b, s, "calls"), N, `${s}: ${JSON.stringify(a[s])} after ${JSON.stringify(b[s])}`);
      const t = a[s];
      assert.ok(t.max_ns <= t.total_ns && t.mean_ns <= t.max_ns, `${s}: ${JSON.stringify(t)}`);
      assert.ok(t.p50_ns <= t.p99_ns && t.p99_ns <= t.max_ns, `${s}: ${JSON.stringify(t)}`);
      if (s !== "call")
        stageSum += grew(a, b, s, "total_ns");
    }
    const call = grew(a, b, "call", "total_ns");
    assert.ok(call > 0, "the calls took some time");
    assert.ok(stageSum <= call, `the stages (${stageSum} ns) lie within the calls (${call} ns)`);
  }

  const rows = [...STAGES, "call"].map((s) => {
    const n = grew(after.stages, before.stages, s, "calls");
    return `${s} ${Math.round(grew(after.stages, before.stages, s, "total_ns") / n)}`;
  });
  await done();
  console.log(`PASS perf_test: ${N} kernel_info calls, mean ns per stage: ${rows.join(", ")}`);
} catch (e) {
  await fail(e);
}
