// The history checker on histories written by hand: the recorder, histories that have a valid order
// (overlapping operations, timeouts that did or did not take effect) and histories that do not
// (a stale read after an acknowledged write, a deleted id coming back, a write applied twice, a
// value never written), each with the explanation and the post-heal checks it must give; and the
// vector tools' adapter (vector_client.mjs) against a stand-in node.
// Usage: node checker_test.mjs
import assert from "node:assert/strict";
import test from "node:test";

import { checkHistory, History } from "./checker.mjs";
import { postHealChecks } from "./post_heal.mjs";
import { vectorClient } from "./vector_client.mjs";

// A history from rows [client, invoke, complete, kind, args, status, result]; a null complete with
// status "unknown" is a timeout.
function H(...rows) {
  const h = new History();
  for (const [client, invoke, complete, kind, args, status = "ok", result] of rows)
    h.add({ client, kind, args, invoke, complete, status, result });
  return h;
}
const up = (id, vector) => ({ items: [{ id, vector }] });
const got = (id, vector) => (vector ? { vectors: [{ id, vector }], missing: [] } : { vectors: [], missing: [id] });
const all = (...items) => ({ items: items.map(([id, vector]) => ({ id, vector })) });
const A = [1, 0], B = [2, 0], C = [3, 0];

const good = (h, opts) => {
  const r = checkHistory(h, opts);
  assert.equal(r.linearizable, true, r.text);
  return r;
};
const bad = (h, { culprit, id } = {}, opts) => {
  const r = checkHistory(h, opts);
  assert.equal(r.linearizable, false, r.text);
  if (culprit !== undefined)
    assert.ok(r.failures.some((f) => f.ops.includes(culprit)), `#${culprit} should be named:\n${r.text}`);
  if (id !== undefined)
    assert.deepEqual(r.failures.map((f) => f.id), [id], r.text);
  return r;
};

test("the recorder: invoke, then ok / fail / unknown, on one clock", async () => {
  let now = 0;
  const h = new History({ clock: () => now });
  const a = h.invoke("c1", "upsert", { id: 1, vector: [0.5, 0.25] });
  now = 2;
  const b = h.invoke("c2", "get", { id: 1 });
  now = 3;
  h.ok(a, { upserted: 1 });
  h.ok(b, got(1, [0.5, 0.25]));
  assert.deepEqual([a.invoke, a.complete, a.status, a.args], [0, 3, "ok", { items: [{ id: 1, vector: [0.5, 0.25] }] }]);
  assert.throws(() => h.fail(a, "again"), /already ended/);
  const c = h.invoke("c1", "delete", { id: 1 });
  h.timeout(c);
  assert.equal(c.status, "unknown");
  await assert.rejects(h.record("c3", "upsert", up(2, A), async () => { throw new Error("validation_failed"); },
                                { classify: (e) => (/validation/.test(e.message) ? "fail" : "unknown") }));
  assert.equal(h.ops.at(-1).status, "fail");
  assert.equal(await h.record("c3", "get", { ids: [1] }, async () => got(1, null)), h.ops.at(-1).result);
  h.invoke("c4", "upsert", up(3, C)); // still open when checked: unknown
  assert.throws(() => h.invoke("c1", "merge", {}), /unknown operation kind/);
  assert.throws(() => h.invoke("c1", "upsert", { id: 1, vector: [NaN] }), /needs items/);
  const again = History.fromJSON(JSON.parse(JSON.stringify(h.toJSON())));
  assert.equal(JSON.stringify(again.toJSON()), JSON.stringify(h.toJSON()));
  good(again);
});

test("known good: sequential writes, reads and deletes", () => {
  good(H(["c1", 0, 1, "upsert", up(1, A)], ["c1", 2, 3, "get", { ids: [1] }, "ok", got(1, A)],
         ["c1", 4, 5, "delete", { ids: [1] }, "ok", { deleted: 1, missing: [] }],
         ["c1", 6, 7, "get", { ids: [1] }, "ok", got(1, null)],
         ["c1", 8, 9, "delete", { ids: [1] }, "ok", { deleted: 0, missing: [1] }]));
});

test("known good: overlapping writes seen in the order they took effect, not the order they began", () => {
  // b takes effect before a, though a began first: b, read b, a, read a.
  good(H(["c1", 0, 10, "upsert", up(1, A)], ["c2", 2, 12, "upsert", up(1, B)],
         ["c3", 3, 5, "get", { ids: [1] }, "ok", got(1, B)], ["c3", 6, 8, "get", { ids: [1] }, "ok", got(1, A)],
         ["c3", 13, 14, "get", { ids: [1] }, "ok", got(1, A)]));
  // A read that overlaps a write sees either state; later reads agree with the first that saw it.
  good(H(["c1", 0, 1, "upsert", up(1, A)], ["c1", 2, 10, "upsert", up(1, B)],
         ["c2", 3, 4, "get", { ids: [1] }, "ok", got(1, A)], ["c2", 5, 6, "get", { ids: [1] }, "ok", got(1, B)],
         ["c3", 5.5, 9, "get", { ids: [1] }, "ok", got(1, B)]));
  // Operations that touch (one ends as the other begins) are concurrent.
  good(H(["c1", 0, 5, "upsert", up(1, A)], ["c2", 5, 6, "get", { ids: [1] }, "ok", got(1, null)]));
});

test("known good: timeouts that took effect, late or never, and failures that did not", () => {
  // Took effect: seen after the client gave up.
  good(H(["c1", 0, null, "upsert", up(1, A), "unknown"], ["c2", 20, 21, "get", { ids: [1] }, "ok", got(1, A)]));
  // Took effect late: absent at first, there later.
  good(H(["c1", 0, null, "upsert", up(1, A), "unknown"], ["c2", 20, 21, "get", { ids: [1] }, "ok", got(1, null)],
         ["c2", 30, 31, "get", { ids: [1] }, "ok", got(1, A)]));
  // Never took effect.
  good(H(["c1", 0, 1, "upsert", up(1, A)], ["c1", 2, null, "delete", { ids: [1] }, "unknown"],
         ["c2", 20, 21, "readAll", {}, "ok", all([1, A])]));
  // A failed write did not happen; a read that timed out saw nothing we know.
  good(H(["c1", 0, 1, "upsert", up(1, A), "fail"], ["c2", 2, 3, "get", { ids: [1] }, "ok", got(1, null)],
         ["c2", 4, null, "get", { ids: [1] }, "unknown", got(1, C)]));
});

test("known good: batches, searches and the read after heal", () => {
  const h = H(["c1", 0, 1, "upsert", { items: [{ id: 1, vector: A }, { id: 2, vector: B }] }],
              ["c2", 0.5, 3, "upsert", { items: [{ id: 2, vector: C }, { id: 3, vector: A }] }],
              ["c3", 4, 5, "search", { k: 3 }, "ok", { hits: [{ id: 1 }, { id: 2, vector: C }] }],
              ["c3", 6, 7, "delete", { ids: [3, 4] }, "ok", { deleted: 1, missing: [4] }],
              ["after-heal", 10, 11, "readAll", {}, "ok", all([1, A], [2, C])]);
  good(h);
  good(h, { perId: false });
  assert.equal(postHealChecks(h, h.ops.at(-1).result.items).ok, true);
});

test("known bad: a stale read after an acknowledged write completed", () => {
  const r = bad(H(["c1", 0, 1, "upsert", up(1, A)], ["c1", 2, 3, "upsert", up(1, B)], ["c2", 0, 1, "upsert", up(2, C)],
                  ["c2", 4, 5, "get", { ids: [1] }, "ok", got(1, A)]), { culprit: 3, id: 1 });
  // Shrunk to the three operations that make it: the two writes and the read.
  assert.deepEqual(r.failures[0].ops, [0, 1, 3], r.text);
  assert.match(r.text, /#3 cannot come next: observed \[1,0\] where the order reaches \[2,0\]/);
});

test("known bad: an acknowledged delete comes back", () => {
  const h = H(["c1", 0, 1, "upsert", up(1, A)], ["c1", 2, 3, "delete", { ids: [1] }, "ok", { deleted: 1, missing: [] }],
              ["c2", 4, 5, "get", { ids: [1] }, "ok", got(1, A)]);
  bad(h, { culprit: 2, id: 1 });
  const healed = H(["c1", 0, 1, "upsert", up(1, A)], ["c1", 2, 3, "delete", { ids: [1] }],
                   ["after-heal", 4, 5, "readAll", {}, "ok", all([1, A])]);
  bad(healed, { culprit: 2 });
  const p = postHealChecks(healed, all([1, A]).items);
  assert.equal(p.ok, false);
  assert.match(p.deletesStayDeleted.join(), /deleted by #1 .* and back after heal/);
});

test("known bad: a write applied twice (an old value back after a newer acknowledged write)", () => {
  const h = H(["c1", 0, 1, "upsert", up(1, A)], ["c1", 2, 3, "upsert", up(1, B)],
              ["c2", 4, 5, "get", { ids: [1] }, "ok", got(1, B)], ["c2", 6, 7, "get", { ids: [1] }, "ok", got(1, A)],
              ["after-heal", 8, 9, "readAll", {}, "ok", all([1, A])]);
  bad(h, { culprit: 3 });
  const p = postHealChecks(h, all([1, A]).items);
  assert.match(p.appliedOnce.join(), /\[1,0\] is back after heal but #0 .* was replaced by #1/);
  assert.match(p.upsertsReadable.join(), /acknowledged upsert #1 .* is not readable after heal/);
  // Two concurrent writes, each applied once: reads may not flip back and forth between them.
  bad(H(["c1", 0, 10, "upsert", up(1, A)], ["c2", 0, 10, "upsert", up(1, B)],
        ["c3", 1, 2, "get", { ids: [1] }, "ok", got(1, A)], ["c3", 3, 4, "get", { ids: [1] }, "ok", got(1, B)],
        ["c3", 5, 6, "get", { ids: [1] }, "ok", got(1, A)]));
  // The read after heal lists an id twice.
  const twice = H(["c1", 0, 1, "upsert", up(1, A)], ["after-heal", 2, 3, "readAll", {}, "ok", all([1, A], [1, A])]);
  assert.match(postHealChecks(twice, all([1, A], [1, A]).items).appliedOnce.join(), /id 1: read twice/);
});

test("known bad: a value never written, or written only by a failed call", () => {
  let r = bad(H(["c1", 0, 1, "upsert", up(1, A)], ["c2", 2, 3, "get", { ids: [1] }, "ok", got(1, C)]), { culprit: 1 });
  assert.match(r.text, /no operation that did not fail wrote \[3,0\]/);
  r = bad(H(["c1", 0, 1, "upsert", up(1, A), "fail"], ["c2", 2, 3, "search", {}, "ok", { hits: [{ id: 1, vector: A }] }]),
          { culprit: 1 });
  const p = postHealChecks(H(["c1", 0, 1, "upsert", up(1, A), "fail"]), all([1, A]).items);
  assert.match(p.appliedOnce.join(), /never written by an operation that did not fail/);
});

test("known bad: an acknowledged upsert lost, a delete that found what was not there", () => {
  const h = H(["c1", 0, 1, "upsert", up(1, A)], ["c2", 0, 1, "upsert", up(2, B)],
              ["after-heal", 5, 6, "readAll", {}, "ok", all([2, B])]);
  bad(h, { culprit: 2, id: 1 });
  assert.match(postHealChecks(h, all([2, B]).items).upsertsReadable.join(), /id 1: acknowledged upsert #0/);
  bad(H(["c1", 0, 1, "delete", { ids: [7] }, "ok", { deleted: 1, missing: [] }]), { culprit: 0, id: 7 });
  // A search saw an id after its acknowledged delete.
  bad(H(["c1", 0, 1, "upsert", up(1, A)], ["c1", 2, 3, "delete", { ids: [1] }],
        ["c2", 4, 5, "search", {}, "ok", { hits: [{ id: 1 }] }]), { culprit: 2 });
});

test("post-heal checks allow what a write still open at heal may have done", () => {
  // The delete timed out: the id may be there or not.
  const h = H(["c1", 0, 1, "upsert", up(1, A)], ["c1", 2, null, "delete", { ids: [1] }, "unknown"]);
  assert.equal(postHealChecks(h, all([1, A]).items).ok, true);
  assert.equal(postHealChecks(h, []).ok, true);
  // Two overlapping upserts: either may be the last.
  const o = H(["c1", 0, 5, "upsert", up(1, A)], ["c2", 1, 4, "upsert", up(1, B)]);
  assert.equal(postHealChecks(o, all([1, A]).items).ok, true);
  assert.equal(postHealChecks(o, all([1, B]).items).ok, true);
  assert.equal(postHealChecks(o, []).ok, false);
});

test("the per-id check against the whole map: a batch seen half applied", () => {
  // Per id each read has an order; as a map, the batch took effect before the first read (it saw
  // row 1) and so before the second, which did not see row 2.
  const h = H(["c1", 0, 10, "upsert", { items: [{ id: 1, vector: A }, { id: 2, vector: B }] }],
              ["c2", 1, 2, "get", { ids: [1] }, "ok", got(1, A)], ["c2", 3, 4, "get", { ids: [2] }, "ok", got(2, null)]);
  good(h);
  bad(h, {}, { perId: false });
});

test("bounded: past its state limit the answer is undecided, never a guess", () => {
  // Twelve concurrent writes never observed and a read that no order satisfies: proving that
  // takes every subset of the writes.
  const rows = Array.from({ length: 12 }, (_, i) => ["c" + i, 0, 100, "upsert", up(1, [i, 1])]);
  rows.push(["r", 200, 201, "get", { ids: [1] }, "ok", got(1, [99, 1])]);
  const r = checkHistory(H(...rows), { maxStates: 50 });
  assert.equal(r.linearizable, null, r.text);
  assert.match(r.text, /undecided \(state limit\)/);
  assert.equal(checkHistory(H(...rows)).linearizable, false);
});

test("timeouts cost little: 20 timed-out deletes, any of which may serve each read, then an impossible read", () => {
  // All the deletes began at once and never ended; each read of absent after an upsert needs one
  // of them after that upsert. Which ones were used is every subset of them, unless the search
  // takes alike ones in the order they began (it does): then a few hundred states, not 2^20.
  const rows = [];
  for (let i = 0; i < 20; i++)
    rows.push(["d" + i, 0, null, "delete", { ids: [1] }, "unknown"]);
  for (let i = 0; i < 20; i++) {
    rows.push(["w", i * 10 + 1, i * 10 + 2, "upsert", up(1, [i, 2])]);
    rows.push(["r", i * 10 + 3, i * 10 + 4, "get", { ids: [1] }, "ok", got(1, null)]);
  }
  good(H(...rows), { maxStates: 20_000 });
  rows.push(["r", 400, 401, "get", { ids: [1] }, "ok", got(1, [99, 9])]);
  const r = bad(H(...rows), { culprit: 60 }, { maxStates: 20_000 });
  assert.ok(r.states < 20_000, r.text);
});

test("vector_client: the vector tools' answers and refusals recorded", async () => {
  // A stand-in for a node: the tools over a Map, refusing as the envelope says.
  const map = new Map();
  const refuse = (code) => ({ isError: true, content: [{ type: "text", text: code }],
                              _meta: { "io.basalt/error": { ok: false, error: { code, message: code } } } });
  let next = null; // the next call's fate: a code to refuse with, or "throw"
  const call = async (tool, a) => {
    const fate = next;
    next = null;
    if (fate === "throw")
      throw new Error("request timed out");
    if (fate === "limit_time_exceeded")
      map.set(a.ids[0], a.vectors[0]); // cut at its limit: the first row stored
    if (fate)
      return refuse(fate);
    switch (tool) {
    case "vector_upsert": a.ids.forEach((id, i) => map.set(id, a.vectors[i])); return { structuredContent: { upserted: a.ids.length } };
    case "vector_delete": {
      const missing = a.ids.filter((id) => !map.has(id));
      a.ids.forEach((id) => map.delete(id));
      return { structuredContent: { deleted: a.ids.length - missing.length, missing } };
    }
    case "vector_get":
      return { structuredContent: { vectors: a.ids.filter((id) => map.has(id)).map((id) => ({ id, provenance_node_id: "n0", vector: map.get(id) })),
                                    missing: a.ids.filter((id) => !map.has(id)) } };
    case "vector_search":
      return { structuredContent: { hits: [...map.keys()].slice(0, a.k).map((id) => ({ id, distance: 0 })), count: Math.min(a.k, map.size) } };
    }
  };
  const h = new History();
  const c = vectorClient(h, "c1", "docs", call);
  await c.upsert([{ id: 1, vector: A }, { id: 2, vector: B }]);
  next = "validation_failed";
  await assert.rejects(c.upsert([{ id: 3, vector: C }]), /validation_failed/);
  next = "limit_time_exceeded";
  await assert.rejects(c.upsert([{ id: 4, vector: C }, { id: 5, vector: C }]), /limit_time_exceeded/);
  next = "throw";
  await assert.rejects(c.delete([2]), /timed out/);
  assert.deepEqual(await c.delete([1, 9]), { deleted: 1, missing: [9] });
  assert.deepEqual((await c.get([1, 4])).vectors, [{ id: 4, vector: C }]);
  assert.deepEqual((await c.search([0, 0], 5)).hits, [{ id: 2 }, { id: 4 }]);
  assert.deepEqual(h.ops.map((o) => o.status), ["ok", "fail", "unknown", "unknown", "ok", "ok", "ok"]);
  const final = await c.readAll();
  assert.deepEqual(final, [{ id: 2, vector: B }, { id: 4, vector: C }]);
  good(h);
  assert.equal(postHealChecks(h, final).ok, true, postHealChecks(h, final).text);
});
