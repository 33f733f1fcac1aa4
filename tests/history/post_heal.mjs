// The three properties issue 35 names, checked directly on the state read after the faults heal,
// beside the full linearizability check (checker.mjs) and readable on their own. `final` is the
// read of the whole collection once every client has stopped: [{ id, vector }].
//
// Words used below, for the writes (upserts and deletes that did not fail) on one id:
//   w could come after u   unless w ended before u began (then w is ordered before u, whatever
//                          happened inside the system);
//   w is replaced          when an acknowledged write on the same id began after w ended: the final
//                          state can no longer be w's.
import { ABSENT, canonical, describeState } from "./model.mjs";
import { formatOp } from "./explain.mjs";

function writesById(history) {
  const byId = new Map();
  for (const op of history.ops) {
    if (op.status === "fail" || (op.kind !== "upsert" && op.kind !== "delete"))
      continue;
    const rows = op.kind === "upsert" ? new Map(op.args.items.map((it) => [it.id, canonical(it.vector)]))
                                      : new Map(op.args.ids.map((id) => [id, ABSENT]));
    for (const [id, state] of rows) {
      if (!byId.has(id))
        byId.set(id, []);
      byId.get(id).push({ op, state, acked: op.status === "ok", invoke: op.invoke,
                          complete: op.status === "ok" ? op.complete : Infinity });
    }
  }
  return byId;
}

const couldComeAfter = (w, u) => w !== u && !(w.complete < u.invoke);
const replacedBy = (w, writes) => writes.find((o) => o !== w && o.acked && o.invoke > w.complete);

function finalState(final) {
  const state = new Map();
  const twice = [];
  for (const { id, vector } of final) {
    if (state.has(id))
      twice.push(id);
    state.set(id, canonical(vector));
  }
  return { state, twice };
}

// Every acknowledged upsert is readable after heal: unless another write on its id could come
// after it, the final state holds exactly its vector; and an id with an acknowledged write whose
// last possible writes are all upserts is not absent (one of them was the last).
export function acknowledgedUpsertsReadable(history, final) {
  const { state } = finalState(final);
  const out = [];
  for (const [id, writes] of writesById(history)) {
    const now = state.get(id) ?? ABSENT;
    for (const u of writes)
      if (u.acked && u.state !== ABSENT && !writes.some((w) => couldComeAfter(w, u)) && now !== u.state)
        out.push(`id ${id}: acknowledged upsert ${formatOp(u.op)} is not readable after heal (read ${describeState(now)})`);
    const last = writes.filter((w) => !replacedBy(w, writes));
    if (now === ABSENT && writes.some((w) => w.acked) && last.every((w) => w.state !== ABSENT) &&
        last.some((w) => writes.some((o) => couldComeAfter(o, w))))
      out.push(`id ${id}: absent after heal, but one of ${last.map((w) => `#${w.op.index}`).join(", ")} (upserts) was the last write`);
  }
  return out;
}

// No acknowledged delete comes back: unless another write on its id could come after it, the id
// is absent; and if the id is there, what is there was written by an upsert that could come after
// the delete.
export function acknowledgedDeletesStayDeleted(history, final) {
  const { state } = finalState(final);
  const out = [];
  for (const [id, writes] of writesById(history)) {
    const now = state.get(id) ?? ABSENT;
    for (const d of writes) {
      if (!d.acked || d.state !== ABSENT || now === ABSENT)
        continue;
      if (!writes.some((w) => couldComeAfter(w, d) && w.state === now))
        out.push(`id ${id}: deleted by ${formatOp(d.op)} and back after heal with ${now}, which no write that could follow the delete wrote`);
    }
  }
  return out;
}

// Nothing is applied twice (nor from nowhere): each id is read once, its vector was written by an
// operation that did not fail, and by one that was not replaced (a replaced write's vector coming
// back is that write applied again, e.g. a log entry replayed after a newer one). Needs each
// write's vector to be its own (test clients write unique vectors); `notes` says when they are not.
export function nothingAppliedTwice(history, final) {
  const { state, twice } = finalState(final);
  const writes = writesById(history);
  const out = twice.map((id) => `id ${id}: read twice after heal`);
  for (const [id, now] of state) {
    const mine = writes.get(id) ?? [];
    const writers = mine.filter((w) => w.state === now);
    if (writers.length === 0) {
      out.push(`id ${id}: ${now} after heal was never written by an operation that did not fail`);
      continue;
    }
    const replaced = writers.map((w) => replacedBy(w, mine));
    if (replaced.every(Boolean))
      out.push(`id ${id}: ${now} is back after heal but ${formatOp(writers[0].op)} was replaced by ${formatOp(replaced[0].op)}`);
  }
  return out;
}

// Writes of one vector to one id by more than one operation: the checks above cannot tell them apart.
export function repeatedValues(history) {
  const notes = [];
  for (const [id, writes] of writesById(history)) {
    const seen = new Map();
    for (const w of writes) {
      if (w.state !== ABSENT && seen.has(w.state))
        notes.push(`id ${id}: ${w.state} written by #${seen.get(w.state)} and #${w.op.index}`);
      seen.set(w.state, w.op.index);
    }
  }
  return notes;
}

export function postHealChecks(history, final) {
  const r = {
    upsertsReadable: acknowledgedUpsertsReadable(history, final),
    deletesStayDeleted: acknowledgedDeletesStayDeleted(history, final),
    appliedOnce: nothingAppliedTwice(history, final),
    notes: repeatedValues(history),
  };
  r.ok = !r.upsertsReadable.length && !r.deletesStayDeleted.length && !r.appliedOnce.length;
  r.text = [...r.upsertsReadable, ...r.deletesStayDeleted, ...r.appliedOnce].join("\n") || "post-heal checks hold";
  return r;
}
