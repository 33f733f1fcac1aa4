// Why one id's history cannot be ordered, in as few operations as the search can show it.
//
// shrink() removes operations from a failing sub-history while it still fails, keeping only
// removals that cannot turn a linearizable history into a failing one (so what is left is a real
// witness, not an artifact of the removal):
//   - an observation (a read, or what a delete said it found) may always go: fewer constraints;
//   - a write may go when no remaining observation could be satisfied by the state it writes:
//     in any valid order of the larger history nothing observed that state, so dropping the write
//     changes no observation (the state between it and the next write was seen by nobody).
// What is left is 1-minimal for those removals: every remaining operation is needed.
import { ABSENT, describeState, matches } from "./model.mjs";
import { linearize } from "./search.mjs";

export function shrink(ops, model, { deadline }) {
  let kept = ops.slice();
  const fails = (list) => linearize(list, model, { deadline, maxStates: 200_000 }).ok === false;
  // Chunks first, halving (delta debugging): a witness is usually a handful of operations, so most
  // of a long history goes in a few large removals before the one-by-one pass.
  for (let size = Math.ceil(kept.length / 2); size >= 1 && Date.now() < deadline;) {
    let changed = false;
    for (let at = Math.max(0, kept.length - size); at >= 0 && Date.now() < deadline; at = at > 0 ? Math.max(0, at - size) : -1) {
      const trial = without(kept, at, at + size);
      if (trial && fails(trial)) {
        kept = trial;
        changed = true;
      }
    }
    if (size > 1)
      size = Math.ceil(size / 2);
    else if (!changed)
      break;
  }
  return kept;
}

// kept with what may go of kept[from..to): its observations (a write keeps its write), then its
// writes whose state no remaining observation could see. Null when nothing would go.
function without(kept, from, to) {
  const out = [];
  const writes = [];
  let gone = 0;
  for (let k = 0; k < kept.length; k++) {
    const op = kept[k];
    if (k < from || k >= to) {
      out.push(op);
    } else if (op.observes.length > 0) {
      gone++;
      if (op.write !== undefined)
        writes.push(out.push({ ...op, observes: [] }) - 1);
    } else {
      writes.push(out.push(op) - 1);
    }
  }
  const drop = new Set(writes.filter((k) => !out.some((o) => o.observes.some((ob) => matches(ob, out[k].write)))));
  gone += drop.size;
  return gone ? out.filter((_, k) => !drop.has(k)) : null;
}

// The explanation of one id: the operations that cannot be ordered together (history indices),
// the longest order the search found for them (each with the state after it), and for each
// operation left out, why it could not come next.
export function explainKey(id, ops, model, { deadline, written }) {
  const small = shrink(ops, model, { deadline });
  const r = linearize(small, model, { deadline: Infinity, maxStates: 200_000, trackBest: true });
  const order = [];
  let state = model.init;
  for (const i of r.best.order) {
    state = model.step(state, small[i]);
    order.push({ op: small[i].origin, state });
  }
  const placed = new Set(r.best.order);
  const left = small.map((op, i) => ({ op, i })).filter(({ i }) => !placed.has(i));
  const stuck = left.map(({ op }) => {
    const why = [];
    const blocker = left.find(({ op: o }) => o !== op && o.complete < op.invoke);
    if (blocker)
      why.push(`must follow #${blocker.op.origin}, which ended before it began`);
    for (const o of op.observes) {
      if (!matches(o, state))
        why.push(`observed ${describeState(o)} where the order reaches ${describeState(state)}`);
      if (o !== ABSENT && o !== "*" && !written.has(o))
        why.push(`no operation that did not fail wrote ${describeState(o)} to this id`);
    }
    if (why.length === 0)
      why.push("every place for it breaks another operation");
    return { op: op.origin, why };
  });
  return { id, ops: [...new Set(small.map((o) => o.origin))].sort((a, b) => a - b), order, stuck,
           shrunkFrom: ops.length, complete: r.ok === false };
}

// A line for one operation of the history; with `id`, a read-all shows what it read for that id.
export function formatOp(op, id) {
  const t = (x) => (x === null || x === undefined ? "?" : x.toFixed(2));
  const vec = (v) => `[${v.join(",")}]`;
  let what;
  switch (op.kind) {
  case "upsert": what = op.args.items.map((it) => `${it.id}=${vec(it.vector)}`).join(" "); break;
  case "delete":
  case "get": what = op.args.ids.join(","); break;
  default: what = "";
  }
  let got = "";
  if (op.status === "ok" && op.result) {
    if (op.kind === "get")
      got = ` -> ${(op.result.vectors ?? []).map((it) => `${it.id}=${vec(it.vector)}`).concat((op.result.missing ?? []).map((id) => `${id}=absent`)).join(" ")}`;
    else if (op.kind === "search")
      got = ` -> ${(op.result.hits ?? []).map((h) => (h.vector ? `${h.id}=${vec(h.vector)}` : `${h.id}`)).join(" ")}`;
    else if (op.kind === "readAll") {
      const mine = (op.result.items ?? []).filter((it) => it.id === id).map((it) => `${it.id}=${vec(it.vector)}`);
      got = id === undefined ? ` -> ${(op.result.items ?? []).length} ids` : ` -> ${mine.join(" ") || `${id}=absent`}`;
    }
    else if (op.kind === "delete" && Array.isArray(op.result.missing))
      got = ` -> missing ${op.result.missing.join(",") || "none"}`;
  }
  const note = op.note ? ` (${op.note})` : "";
  return `#${op.index} ${op.client} ${op.kind} ${what}${got} [${t(op.invoke)}..${t(op.complete)} ms] ${op.status}${note}`;
}
