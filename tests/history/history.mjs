// The history of a test's client operations on one collection, as the linearizability checker reads
// it (docs: tests/README.md, "History checker"). A test client calls invoke() before it sends a
// request and ok() / fail() / unknown() when it knows how the request ended:
//   ok       the server answered with a result: the operation happened, once, somewhere between
//            invoke and the answer;
//   fail     a definite refusal: the operation did not happen (validation_failed, not_found...);
//   unknown  no answer, or an answer that does not say (a time limit, `unavailable`, a dropped
//            connection): the operation may have happened, at any time after invoke, or never.
// An operation still open when the history is checked counts as unknown.
//
// Operations (ids are integers or strings, vectors arrays of numbers compared exactly):
//   upsert   { items: [{ id, vector }] }           result: anything (not read)
//   delete   { ids: [id] }                         result: optional { missing: [id] } (the others found)
//   get      { ids: [id] }                         result: { vectors: [{ id, vector }], missing: [id] }
//   search   { ...any query }                      result: { hits: [{ id, vector? }] } (present ids; a
//                                                  hit without a vector says only "present")
//   readAll  {}                                    result: { items: [{ id, vector }] }: the whole map
//                                                  (ids it does not list are absent)
// Every time comes from one monotonic clock (performance.now() in the process that runs the clients).
import { performance } from "node:perf_hooks";

export const KINDS = ["upsert", "delete", "get", "search", "readAll"];
const STATUSES = ["pending", "ok", "fail", "unknown"];

export class History {
  constructor({ clock = () => performance.now() } = {}) {
    this.ops = [];
    this.clock = clock;
  }

  // Starts an operation; returns its handle (the operation record, whose `index` names it).
  invoke(client, kind, args) {
    return this.#push({ client: String(client), kind, args: normalizeArgs(kind, args), invoke: this.clock(),
                        complete: null, status: "pending", result: undefined, note: undefined });
  }

  ok(op, result) { this.#end(op, "ok", { result }); }
  fail(op, note) { this.#end(op, "fail", { note: describe(note) }); }
  unknown(op, note) { this.#end(op, "unknown", { note: describe(note) }); }
  timeout(op, note = "timed out") { this.unknown(op, note); }

  // Runs `call` between invoke and its end: its value is the result; a throw is a failure when
  // `classify(error)` says "fail" and unknown otherwise (by default every throw is unknown: only
  // the caller knows which refusals are definite).
  async record(client, kind, args, call, { classify = () => "unknown" } = {}) {
    const op = this.invoke(client, kind, args);
    try {
      const result = await call();
      this.ok(op, result);
      return result;
    } catch (e) {
      if (classify(e) === "fail")
        this.fail(op, e);
      else
        this.unknown(op, e);
      throw e;
    }
  }

  // A complete operation with its own times (known histories in tests, generated ones, loading).
  add({ client = "c", kind, args, invoke, complete = null, status, result, note }) {
    if (!STATUSES.includes(status) || status === "pending")
      throw new Error(`history: status must be ok, fail or unknown, not ${status}`);
    if (!Number.isFinite(invoke))
      throw new Error("history: invoke must be a finite time");
    if (status === "ok" && !(Number.isFinite(complete) && complete >= invoke))
      throw new Error("history: an ok operation needs a completion time at or after its invoke");
    return this.#push({ client: String(client), kind, args: normalizeArgs(kind, args), invoke,
                        complete: status === "ok" ? complete : (complete ?? null), status, result, note });
  }

  toJSON() { return { ops: this.ops.map(({ index, ...op }) => op) }; }

  static fromJSON(json) {
    const h = new History();
    for (const op of json.ops) {
      if (op.status === "pending")
        h.#push({ ...op, args: normalizeArgs(op.kind, op.args) });
      else
        h.add(op);
    }
    return h;
  }

  #push(op) {
    op.index = this.ops.length;
    this.ops.push(op);
    return op;
  }

  #end(op, status, fields) {
    if (this.ops[op.index] !== op)
      throw new Error("history: not an operation of this history");
    if (op.status !== "pending")
      throw new Error(`history: operation #${op.index} already ended (${op.status})`);
    Object.assign(op, fields, { status, complete: this.clock() });
  }
}

function describe(note) {
  if (note === undefined || typeof note === "string")
    return note;
  return note instanceof Error ? note.message : JSON.stringify(note);
}

// Checks the arguments of each kind once, when recorded, so the checker can trust their shape. A
// single { id, vector } upsert and a single { id } delete or get are accepted as one-item batches.
function normalizeArgs(kind, args = {}) {
  const isId = (id) => (typeof id === "number" && Number.isFinite(id)) || typeof id === "string";
  const bad = (why) => new Error(`history: ${kind} ${why}`);
  switch (kind) {
  case "upsert": {
    const items = args.items ?? [{ id: args.id, vector: args.vector }];
    if (!Array.isArray(items) || !items.every((it) => isId(it?.id) && isVector(it.vector)))
      throw bad("needs items [{ id, vector }]");
    return { items: items.map(({ id, vector }) => ({ id, vector: Array.from(vector) })) };
  }
  case "delete":
  case "get": {
    const ids = args.ids ?? [args.id];
    if (!Array.isArray(ids) || !ids.every(isId))
      throw bad("needs ids");
    return { ids: [...ids] };
  }
  case "search":
  case "readAll":
    return { ...args };
  default:
    throw new Error(`history: unknown operation kind ${kind} (one of ${KINDS.join(", ")})`);
  }
}

export const isVector = (v) => (Array.isArray(v) || ArrayBuffer.isView(v)) && Array.from(v).every(Number.isFinite);
