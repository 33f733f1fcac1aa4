// Refusals are not free, and the audit trail cannot be filled (over HTTP). One client sends
// 100,000 tool calls with bad keys as fast as the appliance answers (8 connections); another,
// with a good key, calls a tool every 50 ms throughout and must be served every time. After the
// burst of failures its source allows, the attacker's requests are refused before any key is
// checked (429, auth_throttled) while the good key, which authenticated from the same address
// (QEMU's user network shows every host connection as one peer), still passes. The trail (a ring
// of 43 records here: audit_kib=16) counts the bad keys into a few records with repeat counts,
// still holds the good client's latest decisions, and says how many records gave way.
// Usage: node http_flood_test.mjs KERNEL_ELF [BAD_REQUESTS]
import assert from "node:assert/strict";

import { HttpPool } from "./http_pool.mjs";
import { bootHttp, watch } from "./sdk.mjs";

const kernel = process.argv[2];
const BAD = Number(process.argv[3] ?? 100000);
const GOOD_KEY = "operator-key-0123456789abcdef";
const AUDITOR = "admin-key-0123456789abcdef";
const node = await bootHttp(["--key", `operator:olga:${GOOD_KEY}`, "--key", `admin:root:${AUDITOR}`,
                             "--append", "audit_kib=16"], { kernel });
const verdict = watch(node, "http_flood_test", 900000);
const hello = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "flood", version: "1" } };

try {
  const good = new HttpPool(node.url, 1);
  const bad = new HttpPool(node.url, 8);
  const goodInit = await good.post({ jsonrpc: "2.0", id: 0, method: "initialize", params: hello }, { Authorization: `Bearer ${GOOD_KEY}` });
  assert.equal(goodInit.status, 200, goodInit.text);
  const goodSession = { "Mcp-Session-Id": goodInit.headers["mcp-session-id"], Authorization: `Bearer ${GOOD_KEY}` };
  // The auditor opens its session before the flood: a key that has not authenticated from an
  // address before is throttled with the bad ones while that address keeps failing.
  const auditorInit = await good.post({ jsonrpc: "2.0", id: 0, method: "initialize", params: hello }, { Authorization: `Bearer ${AUDITOR}` });
  assert.equal(auditorInit.status, 200, auditorInit.text);
  const badInit = await bad.post({ jsonrpc: "2.0", id: 0, method: "initialize", params: hello });
  const badSession = badInit.headers["mcp-session-id"];

  let goodCalls = 0, goodId = 1, attacking = true;
  const goodFailures = [];
  const goodLoop = (async () => {
    while (attacking) {
      const r = await good.post({ jsonrpc: "2.0", id: goodId++, method: "tools/call", params: { name: "kernel_info", arguments: {} } },
                                goodSession);
      if (r.status !== 200 || r.json?.result?.isError !== false)
        goodFailures.push(`${r.status} ${r.text.slice(0, 200)}`);
      ++goodCalls;
      await new Promise((res) => setTimeout(res, 50));
    }
  })();

  const statuses = new Map();
  const reasons = new Map();
  let sent = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (sent < BAD) {
      const i = sent++;
      const r = await bad.post({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name: "kernel_info", arguments: {} } },
                               { "Mcp-Session-Id": badSession, Authorization: `Bearer bad-key-${i % 1000}-0123456789` });
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      const reason = r.json?.error?.details?.reason ?? r.json?.error?.code ?? "?";
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  const seconds = (performance.now() - t0) / 1000;
  attacking = false;
  await goodLoop;

  assert.deepEqual(goodFailures, [], "the good client was refused during the flood");
  assert.ok(goodCalls >= 2, `the good client made ${goodCalls} calls`);
  const throttled = reasons.get("auth_throttled") ?? 0;
  const checked = statuses.get(403) ?? 0;
  assert.equal(checked + throttled, BAD, `every bad request refused: ${JSON.stringify([...statuses])} ${JSON.stringify([...reasons])}`);
  assert.equal(statuses.get(429), throttled, "throttled refusals are 429");
  // At most the burst plus what the refill allowed during the flood had their keys checked.
  const bound = 20 + Math.ceil(2 * seconds) + 1;
  assert.ok(checked <= bound, `${checked} bad keys were checked (at most ${bound} in ${seconds.toFixed(1)} s)`);

  // The trail: the good client's latest decisions are there; the flood is a few counted records.
  const audit = await good.post({ jsonrpc: "2.0", id: goodId++, method: "resources/read", params: { uri: "audit://log" } },
                                { "Mcp-Session-Id": auditorInit.headers["mcp-session-id"], Authorization: `Bearer ${AUDITOR}` });
  assert.equal(audit.status, 200, audit.text);
  const log = JSON.parse(audit.json.result.contents[0].text);
  const decisions = log.decisions;
  assert.ok(log.decisions_total >= BAD + goodCalls, `decisions_total ${log.decisions_total}`);
  // Refusals fold into the record before them while nothing else comes between: each good call
  // and each bad key that was checked can start new records (its own, and a run of each kind of
  // refusal after it: throttled, rate-limited), so the records are bounded by what came between,
  // not by how long the flood took on this machine.
  const between = 3 * (goodCalls + checked) + 32;
  assert.ok(log.records_total <= between && log.records_total < log.decisions_total / 10,
            `records ${log.records_total} for ${log.decisions_total} decisions (${goodCalls} good calls, ${checked} keys checked)`);
  const lastGood = decisions.filter((d) => d.principal === "olga" && d.outcome === "allow");
  assert.ok(lastGood.length > 0, "the good client's recent decisions are in the trail");
  assert.ok(decisions.some((d) => d.repeats > 1 && d.outcome === "deny"), "repeated refusals are counted into one record");
  const counted = decisions.filter((d) => d.outcome === "deny").reduce((n, d) => n + d.repeats, 0);
  assert.ok(log.decisions_dropped > 0, `the 43-record ring overflowed: ${log.decisions_dropped} dropped`);
  const newest = decisions[decisions.length - 1];
  assert.ok(newest.dropped_before > 0, "the newest record says how many gave way before it");
  assert.ok(decisions.length <= 43, "the ring holds 43 records");

  console.log(`http_flood_test: ${BAD} bad-key requests in ${seconds.toFixed(1)} s (${Math.round(BAD / seconds)}/s): ` +
              `${checked} keys checked (403), ${throttled} throttled before authentication (429); the good client ` +
              `served ${goodCalls}/${goodCalls}; trail: ${log.records_total} records for ${log.decisions_total} decisions, ` +
              `${log.decisions_dropped} gave way, ${counted} refusals counted in the records still held`);
  good.close();
  bad.close();
  await verdict.pass();
} catch (e) {
  await verdict.fail(e);
}
