// The collection as the checker models it: a map from ids to vectors. The state of one id is a
// string: ABSENT, or the vector's canonical form (exact: two vectors are the same value when every
// number is the same). What an operation does to one id is a step: it may observe the state
// (a read, a delete that says whether it found the id) and may write a new one.
//
// project() turns the recorded history into steps. An operation that failed did not happen and is
// left out; one whose end is unknown keeps its writes, may take effect at any time after its invoke
// or never (its completion is +Infinity: it can always be ordered last, which is the same as never
// for every read), and its reads are left out (nobody saw what they returned).
export const ABSENT = "-";
export const PRESENT = "*"; // an observation only: the id holds some vector (a search hit without one)

// The exact canonical form of a vector: every number written as JavaScript prints it, so 0.1 and
// 0.1000000001 differ and a float32 that reads back as a different double is a different value
// (test clients write values a float32 holds exactly, e.g. multiples of 1/1024).
export const canonical = (vector) => `[${Array.from(vector).join(",")}]`;

export const matches = (observed, state) => (observed === PRESENT ? state !== ABSENT : observed === state);

export const describeState = (s) => (s === ABSENT ? "absent" : s === PRESENT ? "present" : s);

// Every id the history names anywhere (arguments, results, failed operations too): "read all"
// observes each of them, absent when it does not list it.
export function universe(history) {
  const ids = new Set();
  for (const op of history.ops) {
    for (const it of op.args.items ?? [])
      ids.add(it.id);
    for (const id of op.args.ids ?? [])
      ids.add(id);
    if (op.status !== "ok" || !op.result)
      continue;
    for (const list of [op.result.items, op.result.vectors, op.result.hits])
      for (const it of list ?? [])
        ids.add(it.id);
    for (const id of op.result.missing ?? [])
      ids.add(id);
  }
  return ids;
}

// One operation of the history as steps on ids: { origin, invoke, complete, writes: Map id ->
// state, observes: [[id, observed]] } (an id may be observed twice by one operation: a read-all
// listing it twice with two vectors can never be ordered).
export function project(history, { universe: ids = universe(history) } = {}) {
  const out = [];
  for (const op of history.ops) {
    if (op.status === "fail")
      continue;
    const known = op.status === "ok";
    const writes = new Map();
    const observes = [];
    switch (op.kind) {
    case "upsert":
      for (const { id, vector } of op.args.items)
        writes.set(id, canonical(vector)); // the last row of an id in a batch is the one stored
      break;
    case "delete": {
      const missing = known && Array.isArray(op.result?.missing) ? new Set(op.result.missing) : null;
      for (const id of op.args.ids) {
        writes.set(id, ABSENT);
        if (missing)
          observes.push([id, missing.has(id) ? ABSENT : PRESENT]);
      }
      break;
    }
    case "get":
      if (known) {
        for (const { id, vector } of op.result?.vectors ?? [])
          observes.push([id, canonical(vector)]);
        for (const id of op.result?.missing ?? [])
          observes.push([id, ABSENT]);
      }
      break;
    case "search":
      if (known)
        for (const { id, vector } of op.result?.hits ?? [])
          observes.push([id, vector === undefined || vector === null ? PRESENT : canonical(vector)]);
      break;
    case "readAll":
      if (known) {
        const listed = new Set();
        for (const { id, vector } of op.result?.items ?? []) {
          observes.push([id, canonical(vector)]);
          listed.add(id);
        }
        for (const id of ids)
          if (!listed.has(id))
            observes.push([id, ABSENT]);
      }
      break;
    }
    if (writes.size === 0 && observes.length === 0)
      continue;
    out.push({ origin: op.index, invoke: op.invoke, complete: known ? op.complete : Infinity, writes, observes });
  }
  return out;
}

// Per-id partitioning: a map is a set of independent registers, and linearizability is local
// (Herlihy & Wing 1990, theorem 1): a history of single-id operations is linearizable exactly when
// each id's sub-history is. Operations on several ids (batches, searches, read-all) are split into
// one step per id over the same interval: each id is checked exactly, but a batch seen half-applied
// by a multi-id read is not a violation here (the whole-map model below checks that, on small
// histories). Returns Map id -> [{ origin, invoke, complete, write, observes: [observed] }].
export function partition(steps) {
  const byId = new Map();
  const part = (id) => {
    let list = byId.get(id);
    if (!list)
      byId.set(id, (list = []));
    return list;
  };
  for (const s of steps) {
    const mine = new Map();
    for (const [id, state] of s.writes)
      mine.set(id, { write: state, observes: [] });
    for (const [id, observed] of s.observes) {
      if (!mine.has(id))
        mine.set(id, { write: undefined, observes: [] });
      mine.get(id).observes.push(observed);
    }
    for (const [id, m] of mine)
      part(id).push({ origin: s.origin, invoke: s.invoke, complete: s.complete, write: m.write, observes: m.observes });
  }
  return byId;
}

// Writes whose end is unknown and whose state nobody observed change nothing the check can see:
// with one, an order exists exactly when one exists without it (it can always go last, where it
// is never seen; and dropping it from an order leaves every observation true, since none could
// see its state). Left out of one id's steps before the search, they cost nothing.
export function pruneUnseen(ops) {
  return ops.filter((op) => op.complete !== Infinity || op.observes.length > 0 ||
                            ops.some((o) => o.observes.some((ob) => matches(ob, op.write))));
}

// One id, given its steps: the state is ABSENT or a vector's canonical form. Two vectors that no
// step observes exactly behave the same from then on (every later step sees only "present"), so
// the memo keys them alike. Writes of unknown end that observe nothing and whose states are alike
// in that sense are interchangeable: the search takes them in the order they began (swapping two in
// any valid order gives a valid order), so k of them cost k + 1 choices, not 2^k.
export function registerModel(ops) {
  const seen = new Set();
  for (const op of ops)
    for (const o of op.observes)
      seen.add(o);
  const key = (state) => (state === ABSENT || seen.has(state) ? state : PRESENT);
  return {
    init: ABSENT,
    step(state, op) {
      for (const o of op.observes)
        if (!matches(o, state))
          return undefined;
      return op.write ?? state;
    },
    key,
    interchangeable: (op) => (op.complete === Infinity && op.observes.length === 0 ? key(op.write) : undefined),
  };
}

// The whole map (no partitioning): exponential in the concurrency of the whole history, so for
// small histories only; it also holds batches atomic. The state is a Map id -> vector; ids absent.
export const mapModel = {
  init: new Map(),
  step(state, op) {
    for (const [id, o] of op.observes)
      if (!matches(o, state.get(id) ?? ABSENT))
        return undefined;
    if (op.writes.size === 0)
      return state;
    const next = new Map(state);
    for (const [id, s] of op.writes) {
      if (s === ABSENT)
        next.delete(id);
      else
        next.set(id, s);
    }
    return next;
  },
  key: (state) => JSON.stringify([...state].sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1))),
};
