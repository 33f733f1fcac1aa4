// Acknowledged one-vector upserts from `callers` concurrent streams, `calls` in all: the figure
// storage_bench.mjs prints and call_cost compares between two builds. call(tool, args) must throw
// on a tool error; row() gives the next vector; ids run from firstId. Answers calls per second.
export async function upserts(call, collection, { callers, calls, firstId, row }) {
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: callers }, async () => {
    while (next < calls) {
      const id = firstId + next++;
      await call("vector_upsert", { collection, ids: [id], vectors: [row()] });
    }
  }));
  return calls / (Number(process.hrtime.bigint() - t0) / 1e9);
}
