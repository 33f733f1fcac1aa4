// Basalt's vector tools (docs/vector-store.md) recorded into a history: what a swarm scenario's
// MCP client calls instead of calling the tools directly. `call(tool, args)` is the client's own
// tools/call (any SDK client or transport) resolving to the CallToolResult; this module only maps
// arguments and answers to history operations and decides how each call ended:
//   ok       a result without isError;
//   fail     a refusal with an envelope code that says nothing was done (DEFINITE below);
//   unknown  every other refusal (a time limit, `unavailable`, an internal error: the write may have
//            been applied, wholly or, for a batch cut at its time limit, its first rows) and every
//            throw without an envelope (a client timeout, a lost connection).
// Unknown is always safe (it only allows more orders), so a code is definite only when the
// security page says nothing happened (docs/security.md, "Errors").
import { universe } from "./model.mjs";

export const DEFINITE = new Set([
  "auth_missing_api_key", "auth_invalid_api_key", "auth_insufficient_role", "validation_unknown_tool",
  "validation_failed", "limit_rate_exceeded", "limit_concurrency_exceeded", "not_found", "step_up_required",
  "step_up_refused", "storage_full",
]);

const envelopeOf = (x) => x?._meta?.["io.basalt/error"] ?? x?.data;

export class RefusedCall extends Error {
  constructor(tool, result) {
    const env = envelopeOf(result);
    super(`${tool}: ${env?.error?.code ?? "refused"}: ${env?.error?.message ?? JSON.stringify(result?.content)}`);
    this.result = result;
    this.code = env?.error?.code;
  }
}

export function classify(e) {
  const code = e instanceof RefusedCall ? e.code : envelopeOf(e)?.error?.code;
  return DEFINITE.has(code) ? "fail" : "unknown";
}

// One client of one collection; every method records its operation and returns the tool's
// structuredContent (or throws: RefusedCall for an isError result, or what `call` threw).
export function vectorClient(history, name, collection, call) {
  const run = (kind, args, tool, toolArgs, toHistory) => history.record(name, kind, args, async () => {
    const r = await call(tool, toolArgs);
    if (r.isError)
      throw new RefusedCall(tool, r);
    return toHistory(r.structuredContent);
  }, { classify });
  return {
    // rows: [{ id, vector }] (vectors a float32 holds exactly, each its own)
    upsert: (rows) => run("upsert", { items: rows }, "vector_upsert",
                          { collection, ids: rows.map((r) => r.id), vectors: rows.map((r) => Array.from(r.vector)) }, (s) => s),
    delete: (ids) => run("delete", { ids }, "vector_delete", { collection, ids }, (s) => s),
    get: (ids) => run("get", { ids }, "vector_get", { collection, ids },
                      (s) => ({ ...s, vectors: s.vectors.map(({ id, vector }) => ({ id, vector })) })),
    // Hits carry ids and distances, not vectors: each says only "present".
    search: (vector, k) => run("search", { k }, "vector_search", { collection, vector: Array.from(vector), k },
                               (s) => ({ ...s, hits: s.hits.map(({ id }) => ({ id })) })),
    // The whole collection after heal, by vector_get over every id the history names (16 at a
    // time), recorded as one read: valid while nothing else writes.
    async readAll(ids = [...universe(history)]) {
      const op = history.invoke(name, "readAll", {});
      try {
        const items = [];
        for (let i = 0; i < ids.length; i += 16) {
          const r = await call("vector_get", { collection, ids: ids.slice(i, i + 16) });
          if (r.isError)
            throw new RefusedCall("vector_get", r);
          items.push(...r.structuredContent.vectors.map(({ id, vector }) => ({ id, vector })));
        }
        history.ok(op, { items });
        return items;
      } catch (e) {
        history.unknown(op, e);
        throw e;
      }
    },
  };
}
