// The linearizability check of a recorded history (history.mjs) against the collection as a map
// from ids to vectors (model.mjs), per id by default (search.mjs), with an explanation of each id
// that cannot be ordered (explain.mjs). Returns
//   { linearizable: true | false | null (undecided within the limits), elapsedMs, ops, ids,
//     states (memo entries explored), failures: [explanation], undecided: [{ id, reason }], text }
// and text is what a test prints: the verdict, its time, and per failing id the operations that
// cannot be ordered together, the longest order found and why each other one does not fit.
import { canonical, describeState, mapModel, partition, project, pruneUnseen, registerModel, universe } from "./model.mjs";
import { linearize } from "./search.mjs";
import { explainKey, formatOp } from "./explain.mjs";

export { History } from "./history.mjs";

export function checkHistory(history, { perId = true, timeLimitMs = 10_000, maxStates = 1_000_000, explainIds = 3,
                                        explainMs = 3_000 } = {}) {
  const start = Date.now();
  const deadline = start + timeLimitMs;
  const ids = universe(history);
  const steps = project(history, { universe: ids });
  const result = { linearizable: true, elapsedMs: 0, ops: history.ops.length, ids: ids.size, states: 0, failures: [],
                   undecided: [] };
  if (!perId) {
    const r = linearize(steps, mapModel, { deadline, maxStates, trackBest: true });
    result.states = r.states;
    result.linearizable = r.ok;
    if (r.ok === null)
      result.undecided.push({ id: "*", reason: r.reason });
    if (r.ok === false)
      result.failures.push({ id: "*", ops: steps.map((s) => s.origin), order: r.best.order.map((i) => ({ op: steps[i].origin })),
                             stuck: [], shrunkFrom: steps.length, complete: false });
  } else {
    const written = writtenValues(history);
    for (const [id, all] of partition(steps)) {
      const ops = pruneUnseen(all);
      const model = registerModel(ops);
      const r = linearize(ops, model, { deadline, maxStates });
      result.states += r.states;
      if (r.ok === null) {
        result.undecided.push({ id, reason: r.reason });
      } else if (r.ok === false) {
        result.failures.push(result.failures.length < explainIds
          ? explainKey(id, ops, model, { deadline: Date.now() + explainMs, written: written.get(id) ?? new Set() })
          : { id, ops: ops.map((o) => o.origin), order: [], stuck: [], shrunkFrom: ops.length, complete: false });
      }
    }
    result.linearizable = result.failures.length ? false : result.undecided.length ? null : true;
  }
  result.elapsedMs = Date.now() - start;
  result.text = report(history, result);
  return result;
}

// id -> the set of vectors (canonical) written to it by operations that did not fail.
function writtenValues(history) {
  const byId = new Map();
  for (const op of history.ops) {
    if (op.kind !== "upsert" || op.status === "fail")
      continue;
    for (const { id, vector } of op.args.items) {
      if (!byId.has(id))
        byId.set(id, new Set());
      byId.get(id).add(canonical(vector));
    }
  }
  return byId;
}

function report(history, r) {
  const lines = [];
  const head = r.linearizable === true ? "linearizable" : r.linearizable === false ? "NOT linearizable" : "undecided";
  lines.push(`${head}: ${r.ops} operations on ${r.ids} ids checked in ${r.elapsedMs} ms (${r.states} states explored)`);
  for (const u of r.undecided)
    lines.push(`  id ${u.id}: undecided (${u.reason})`);
  for (const f of r.failures) {
    const these = f.ops.length === 1 ? "this operation" : `these ${f.ops.length} operations`;
    lines.push(`  id ${f.id}: ${these} (of ${f.shrunkFrom} on it) ${f.ops.length === 1 ? "cannot be ordered" : "cannot be ordered together"}:`);
    for (const i of f.ops)
      lines.push(`    ${formatOp(history.ops[i], f.id)}`);
    if (f.order.length)
      lines.push(`    longest order found: ${f.order.map((o) => `#${o.op}${o.state === undefined ? "" : ` (${describeState(o.state)})`}`).join(" -> ")}`);
    for (const s of f.stuck)
      lines.push(`    #${s.op} cannot come next: ${s.why.join("; ")}`);
  }
  return lines.join("\n");
}
