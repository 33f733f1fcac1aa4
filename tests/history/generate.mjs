// Random histories that are linearizable by construction, and mutations that make them not, for the
// checker's own tests and its benchmark. Clients run operations one after another with random gaps
// and durations; each operation that takes effect does so at a random instant inside its interval
// on a real map, in the order of those instants, and its result is what the map gave there. Some
// operations fail (no effect), some time out (their end is unknown: half of them took effect).
import { History } from "./history.mjs";
import { canonical } from "./model.mjs";

// xorshift32: a seed names a history.
export function rng(seed) {
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
  next.int = (n) => Math.floor(next() * n);
  next.pick = (list) => list[next.int(list.length)];
  return next;
}

export function randomHistory(seed, { clients = 4, ops = 40, ids = 3, pFail = 0.05, pUnknown = 0.08, pRead = 0.45,
                                      batch = 3, readAll = true } = {}) {
  const r = rng(seed);
  const pending = [];
  const clock = new Array(clients).fill(0);
  let written = 0;
  for (let k = 0; k < ops; k++) {
    const c = r.int(clients);
    const invoke = clock[c] + r() * 3;
    const duration = 0.5 + r() * 10;
    const at = invoke + r() * duration; // the instant it takes effect
    clock[c] = invoke + duration;
    const anyId = () => 1 + r.int(ids);
    const some = (n) => [...new Set(Array.from({ length: 1 + r.int(n) }, anyId))];
    let kind, args;
    const roll = r();
    if (roll < pRead * 0.6) {
      kind = "get"; args = { ids: some(3) };
    } else if (roll < pRead) {
      kind = "search"; args = { k: 1 + r.int(ids) };
    } else if (roll < pRead + (1 - pRead) * 0.75) {
      // Every vector written is its own: [write number, row].
      const n = ++written;
      kind = "upsert"; args = { items: some(batch).map((id, j) => ({ id, vector: [n, j] })) };
    } else {
      kind = "delete"; args = { ids: some(2) };
    }
    const fate = r();
    const status = fate < pFail ? "fail" : fate < pFail + pUnknown ? "unknown" : "ok";
    const applies = status === "ok" || (status === "unknown" && r() < 0.5);
    pending.push({ client: `c${c}`, kind, args, invoke, complete: status === "ok" ? invoke + duration : null, status, at,
                   applies, withVectors: r() < 0.7, pick: r() });
  }
  // Take effect in order of the instants, on a real map.
  const map = new Map();
  for (const p of [...pending].sort((a, b) => a.at - b.at)) {
    if (!p.applies)
      continue;
    switch (p.kind) {
    case "upsert":
      for (const it of p.args.items)
        map.set(it.id, it.vector);
      break;
    case "delete": {
      const missing = p.args.ids.filter((id) => !map.has(id));
      p.args.ids.forEach((id) => map.delete(id));
      p.result = { deleted: p.args.ids.length - missing.length, missing };
      break;
    }
    case "get":
      p.result = { vectors: p.args.ids.filter((id) => map.has(id)).map((id) => ({ id, vector: map.get(id) })),
                   missing: p.args.ids.filter((id) => !map.has(id)) };
      break;
    case "search": {
      // A search returns some of what is there (an approximate top k), with or without vectors.
      const hits = [...map.keys()].filter((_, j) => (p.pick * 7 + j) % 2 < 1.2).slice(0, p.args.k);
      p.result = { hits: hits.map((id) => (p.withVectors ? { id, vector: map.get(id) } : { id })) };
      break;
    }
    }
  }
  const history = new History();
  for (const p of pending.sort((a, b) => a.invoke - b.invoke))
    history.add({ client: p.client, kind: p.kind, args: p.args, invoke: p.invoke, complete: p.complete, status: p.status,
                  result: p.status === "ok" ? p.result : undefined, note: p.status === "unknown" ? (p.applies ? "took effect" : "did not") : undefined });
  const end = Math.max(0, ...clock) + 1;
  const final = [...map].map(([id, vector]) => ({ id, vector }));
  if (readAll)
    history.add({ client: "after-heal", kind: "readAll", args: {}, invoke: end, complete: end + 1, status: "ok", result: { items: final } });
  return { history, final };
}

// Reads that observed a vector (get, search with vectors, read-all), as [op, row] pairs.
function observedRows(history) {
  const rows = [];
  for (const op of history.ops) {
    if (op.status !== "ok")
      continue;
    const list = op.kind === "get" ? op.result.vectors : op.kind === "search" ? op.result.hits : op.kind === "readAll" ? op.result.items : [];
    for (const row of list ?? [])
      if (row.vector)
        rows.push([op, row]);
  }
  return rows;
}

const copy = (history) => History.fromJSON(JSON.parse(JSON.stringify(history.toJSON())));

// One read now returns a vector nobody wrote. Returns { history, op } or null (no read to change).
export function mutateNeverWritten(history, seed) {
  const h = copy(history);
  const rows = observedRows(h);
  if (!rows.length)
    return null;
  const [op, row] = rng(seed).pick(rows);
  row.vector = [-1, op.index];
  return { history: h, op: op.index };
}

// One read of an id now returns an older state that an acknowledged write had replaced before the
// read began: a stale read, or, when the replacing write was a delete, a deleted id coming back.
// Impossible whatever else happened: the old write ends before the new one begins, which ends
// before the read begins (and each vector is written once). Returns { history, op, id } or null.
export function mutateStale(history, seed) {
  const h = copy(history);
  const writes = [];
  for (const op of h.ops) {
    if (op.status !== "ok")
      continue;
    if (op.kind === "upsert")
      op.args.items.forEach((it) => writes.push({ op, id: it.id, vector: it.vector }));
    if (op.kind === "delete")
      op.args.ids.forEach((id) => writes.push({ op, id, vector: null }));
  }
  const choices = [];
  for (const read of h.ops) {
    if (read.status !== "ok" || (read.kind !== "get" && read.kind !== "readAll"))
      continue;
    const ids = read.kind === "get" ? read.args.ids : [...new Set(writes.map((w) => w.id))];
    for (const id of ids)
      for (const older of writes)
        if (older.id === id && older.vector && older.op.complete < read.invoke &&
            writes.some((newer) => newer.id === id && newer.op.invoke > older.op.complete && newer.op.complete < read.invoke))
          choices.push({ read, id, vector: older.vector });
  }
  if (!choices.length)
    return null;
  const { read, id, vector } = rng(seed).pick(choices);
  const list = read.kind === "get" ? read.result.vectors : read.result.items;
  const row = list.find((it) => it.id === id);
  if (row && canonical(row.vector) === canonical(vector))
    return null; // already reads it (a write of the same vector cannot happen: they are unique)
  if (row)
    row.vector = vector;
  else
    list.push({ id, vector });
  if (read.kind === "get")
    read.result.missing = read.result.missing.filter((m) => m !== id);
  return { history: h, op: read.index, id };
}
