// The linearizability search: Wing & Gong's depth-first search for an order of the operations that
// respects real time and the model, with Lowe's memoization of (operations already ordered, model
// state) as Porcupine does it. Written here for the collection model (model.mjs), generic over
// any model { init, step(state, op) -> next state or undefined when op cannot happen there,
// key(state) -> string, and optionally interchangeable(op) -> a class key or undefined }: operations
// of one class are ordered in the order they began (the model vouches that this loses no order).
//
// The operations become a list of call and return events in time order (a call before a return
// at the same instant: operations that touch are concurrent, the lenient reading). The search walks
// the list: at a call it tries to order that operation next (legal in the model and not a
// (set, state) pair already explored), removing its call and return from the list; at a return it
// has reached an operation that had to be ordered already, so it undoes the last choice. An
// operation with completion +Infinity (unknown end) has its return at the end of the list: it can
// be left to the end. Bounded: a deadline and a cap on explored states, past which the answer is
// "undecided" (ok: null), never a guess. With trackBest, `best` is the longest order reached (what a
// failure is explained by; it costs a copy of the stack at each new depth, so only on request).
export function linearize(ops, model, { deadline = Infinity, maxStates = 1_000_000, trackBest = false } = {}) {
  const n = ops.length;
  const events = [];
  for (let i = 0; i < n; i++) {
    events.push({ t: ops[i].invoke, ret: 0, i });
    events.push({ t: ops[i].complete, ret: 1, i });
  }
  events.sort((a, b) => a.t - b.t || a.ret - b.ret || a.i - b.i);

  // For each operation of an interchangeable class, the one of its class that began just before.
  const before = new Int32Array(n).fill(-1);
  if (model.interchangeable) {
    const lastOf = new Map();
    for (const e of events) {
      const c = e.ret ? undefined : model.interchangeable(ops[e.i]);
      if (c === undefined)
        continue;
      if (lastOf.has(c))
        before[e.i] = lastOf.get(c);
      lastOf.set(c, e.i);
    }
  }
  const ordered = (i) => (words[i >> 4] & (1 << (i & 15))) !== 0;

  // A doubly linked list over nodes 1..2n; 0 is the head, 2n+1 the tail.
  const tail = 2 * n + 1;
  const next = new Int32Array(tail + 1), prev = new Int32Array(tail + 1);
  const opOf = new Int32Array(tail + 1), isRet = new Uint8Array(tail + 1), retOf = new Int32Array(tail + 1);
  const callNode = new Int32Array(n);
  for (let k = 0; k < events.length; k++) {
    const node = k + 1, e = events[k];
    opOf[node] = e.i;
    isRet[node] = e.ret;
    if (e.ret)
      retOf[callNode[e.i]] = node;
    else
      callNode[e.i] = node;
    prev[node] = k;
    next[node] = node + 1;
  }
  next[0] = events.length ? 1 : tail;
  prev[tail] = events.length;
  const unlink = (x) => { next[prev[x]] = next[x]; prev[next[x]] = prev[x]; };
  const relink = (x) => { next[prev[x]] = x; prev[next[x]] = x; };

  // Which operations are ordered: a bit set whose 16-bit words, as a string, key the memo.
  const words = new Uint16Array(Math.ceil(n / 16) || 1);
  const seen = new Set();
  const stack = []; // [{ node, state }]: the choices made, each with the state before it
  let state = model.init;
  let best = { order: [], state };
  let steps = 0;

  const finish = (ok, reason) => ({ ok, reason, states: seen.size, steps, best });
  let entry = next[0];
  while (next[0] !== tail) {
    if (++steps % 4096 === 0 && Date.now() > deadline)
      return finish(null, "time limit");
    if (!isRet[entry]) {
      const i = opOf[entry];
      const after = before[i] >= 0 && !ordered(before[i]) ? undefined : model.step(state, ops[i]);
      if (after !== undefined) {
        words[i >> 4] |= 1 << (i & 15);
        const key = String.fromCharCode.apply(null, words) + "\u0000" + model.key(after);
        if (!seen.has(key)) {
          if (seen.size >= maxStates)
            return finish(null, "state limit");
          seen.add(key);
          stack.push({ node: entry, state });
          state = after;
          unlink(entry);
          unlink(retOf[entry]);
          if (trackBest && stack.length > best.order.length)
            best = { order: stack.map((s) => opOf[s.node]), state };
          entry = next[0];
          continue;
        }
        words[i >> 4] &= ~(1 << (i & 15));
      }
      entry = next[entry];
    } else {
      // An operation that returned here is still unordered: the last choice was wrong.
      if (stack.length === 0)
        return finish(false, "no order");
      const top = stack.pop();
      const i = opOf[top.node];
      words[i >> 4] &= ~(1 << (i & 15));
      state = top.state;
      relink(retOf[top.node]);
      relink(top.node);
      entry = next[top.node];
    }
  }
  return { ok: true, states: seen.size, steps, order: stack.map((s) => opOf[s.node]), best: { order: stack.map((s) => opOf[s.node]), state } };
}
