// How long the history checker takes on a swarm-sized history: 10,000 operations by 8 clients on
// 100 ids (batches of up to 3 rows, 5 % failed, 3 % timed out), generated linearizable, then with
// one stale read (which the checker must refuse and explain). Prints the times; fails if a verdict
// is wrong. Usage: node tests/bench/history_bench.mjs [OPS] [IDS] [CLIENTS] [SEED]
import { checkHistory } from "../history/checker.mjs";
import { mutateStale, randomHistory } from "../history/generate.mjs";
import { postHealChecks } from "../history/post_heal.mjs";

const [ops = 10_000, ids = 100, clients = 8, seed = 35] = process.argv.slice(2).map(Number);
let t = Date.now();
const { history, final } = randomHistory(seed, { ops, ids, clients, batch: 3, pFail: 0.05, pUnknown: 0.03 });
console.log(`generated ${history.ops.length} operations on ${ids} ids by ${clients} clients in ${Date.now() - t} ms`);

const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
let c = cpu();
const ok = checkHistory(history);
console.log(`linearizable history: ${ok.text.split("\n")[0]}; ${Math.round(cpu() - c)} ms of CPU`);
t = Date.now();
const heal = postHealChecks(history, final);
console.log(`post-heal checks: ${heal.text} in ${Date.now() - t} ms`);

const stale = mutateStale(history, seed);
c = cpu();
const bad = checkHistory(stale.history);
console.log(`one stale read (#${stale.op}, id ${stale.id}): ${bad.text.split("\n")[0]}; ${Math.round(cpu() - c)} ms of CPU`);
console.log(bad.text.split("\n").slice(1).join("\n"));
if (ok.linearizable !== true || !heal.ok || bad.linearizable !== false)
  process.exit(1);
