// The history checker on random histories (generate.mjs): each made from a real sequential
// execution with random overlaps, failures and timeouts (half of them took effect), so each must
// be linearizable and pass the post-heal checks; then one read changed to a vector nobody wrote, and
// one changed to a state an acknowledged write had replaced before the read began (a stale read,
// or a deleted id back): each must not be, and the explanation must name the changed read.
// Small histories are also checked as a whole map, which must agree with the per-id check.
// Usage: node random_test.mjs [SEEDS] [FIRST_SEED]   (300 seeds from 1 by default: about 2 s of CPU;
// it fails past 20 s of CPU, counted as CPU so that a loaded machine does not fail it)
import assert from "node:assert/strict";

import { checkHistory } from "./checker.mjs";
import { mutateNeverWritten, mutateStale, randomHistory, rng } from "./generate.mjs";
import { postHealChecks } from "./post_heal.mjs";

const SEEDS = Number(process.argv[2] ?? 300);
const FIRST = Number(process.argv[3] ?? 1);
const BUDGET_MS = 20_000;
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };

const start = Date.now();
const counts = { histories: 0, ops: 0, wholeMap: 0, neverWritten: 0, stale: 0, checkMs: 0 };
for (let seed = FIRST; seed < FIRST + SEEDS; seed++) {
  const r = rng(seed * 7919);
  const shape = { clients: 2 + r.int(7), ops: 20 + r.int(100), ids: 1 + r.int(6), batch: 1 + r.int(3),
                  pUnknown: r() * 0.15, pFail: r() * 0.1 };
  const { history, final } = randomHistory(seed, shape);
  const where = `seed ${seed} ${JSON.stringify(shape)}`;
  const ok = checkHistory(history);
  counts.histories++;
  counts.ops += history.ops.length;
  counts.checkMs += ok.elapsedMs;
  assert.equal(ok.linearizable, true, `${where}\n${ok.text}`);
  const heal = postHealChecks(history, final);
  assert.ok(heal.ok, `${where}\n${heal.text}`);
  if (history.ops.length <= 40) {
    const whole = checkHistory(history, { perId: false });
    assert.equal(whole.linearizable, true, `${where} (whole map)\n${whole.text}`);
    counts.wholeMap++;
  }

  const never = mutateNeverWritten(history, seed);
  if (never) {
    const v = checkHistory(never.history);
    assert.equal(v.linearizable, false, `${where}: #${never.op} reads a vector never written\n${v.text}`);
    assert.ok(v.failures[0].ops.includes(never.op), `${where}: #${never.op} not named\n${v.text}`);
    counts.neverWritten++;
  }
  const stale = mutateStale(history, seed);
  if (stale) {
    const v = checkHistory(stale.history);
    assert.equal(v.linearizable, false, `${where}: #${stale.op} reads a replaced state of id ${stale.id}\n${v.text}`);
    const f = v.failures.find((x) => x.id === stale.id);
    assert.ok(f && f.ops.includes(stale.op), `${where}: #${stale.op} not named for id ${stale.id}\n${v.text}`);
    counts.stale++;
  }
  assert.ok(cpuMs() < BUDGET_MS, `over ${BUDGET_MS} ms of CPU after ${counts.histories} histories`);
}
console.log(`random histories: ${counts.histories} linearizable (${counts.ops} operations, checked in ${counts.checkMs} ms; ` +
            `${counts.wholeMap} also as a whole map), ${counts.neverWritten} with a vector never written and ` +
            `${counts.stale} with a stale read refused, in ${Date.now() - start} ms (${Math.round(cpuMs())} ms of CPU)`);
