// A keyless peer cannot flush the audit trail: a node with the cluster enabled (its membership
// port forwarded from the host) makes ten MCP decisions, then receives 5,000 datagrams that
// alternate malformed and badly tagged ones from 200 source ports. Afterwards every one of the
// ten decisions is still in audit://log (a ring of only 43 records here: audit_kib=16), the
// peers' refusals hold no more records than their budget, and cluster_status counts the rest.
// The cluster secret shows nowhere a client or the console can read.
// Usage: node cluster_flood_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import dgram from "node:dgram";

import { HttpPool } from "./http_pool.mjs";
import { bootHttp, freePort, watch } from "./sdk.mjs";

const kernel = process.argv[2];
const ADMIN = "admin-key-0123456789abcdef";
const SECRET = "flood-test-cluster-secret";
const udpPort = await freePort();
const node = await bootHttp(["--key", `admin:root:${ADMIN}`, "--static-ip", "--udpfwd", `127.0.0.1:${udpPort}:7946`,
                             "--append", `audit_kib=16 cluster=flood node=target cluster_key=${SECRET}`], { kernel });
const verdict = watch(node, "cluster_flood_test", 170000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const hello = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "cluster-flood", version: "1" } };

try {
  const pool = new HttpPool(node.url, 1);
  const init = await pool.post({ jsonrpc: "2.0", id: 0, method: "initialize", params: hello }, { Authorization: `Bearer ${ADMIN}` });
  assert.equal(init.status, 200, init.text);
  const session = { "Mcp-Session-Id": init.headers["mcp-session-id"], Authorization: `Bearer ${ADMIN}` };
  let id = 1;
  const call = async (name, args = {}) => {
    const r = await pool.post({ jsonrpc: "2.0", id: `call-${id++}`, method: "tools/call", params: { name, arguments: args } }, session);
    assert.equal(r.status, 200, r.text);
    return r.json.result;
  };
  const status = async () => (await call("cluster_status")).structuredContent;

  // The membership task runs once the node has its address and its boot id.
  for (let i = 0; !(await status()).running; ++i) {
    assert.ok(i < 50, "the cluster task never ran");
    await sleep(200);
  }
  const before = [];
  for (let i = 0; i < 10; ++i) {
    before.push(`call-${id}`);
    await call("kernel_info");
  }

  // The flood: even datagrams too short to be anything (malformed), odd ones long enough and
  // with the right magic but a tag made without the key (bad MAC).
  const sockets = await Promise.all(Array.from({ length: 200 }, () => new Promise((resolve) => {
    const s = dgram.createSocket("udp4");
    s.bind(0, "127.0.0.1", () => resolve(s));
  })));
  const malformed = Buffer.from("BCSW\x01\x04short");
  const badMac = Buffer.alloc(120, 0x41);
  badMac.write("BCSW", 0);
  // In batches smaller than the node's receive ring (24 datagrams), paced so that the flood
  // reaches the protocol rather than the ring's drop counter (a slower machine drops more: the
  // assertions below only need most of it to arrive, and count the rest).
  for (let i = 0; i < 5000;) {
    for (const end = Math.min(i + 20, 5000); i < end; ++i) {
      const s = sockets[i % sockets.length];
      await new Promise((resolve) => s.send(i % 2 ? badMac : malformed, udpPort, "127.0.0.1", resolve));
    }
    await sleep(30);
  }
  await sleep(1000);
  for (const s of sockets)
    s.close();

  const audit = await pool.post({ jsonrpc: "2.0", id: "audit", method: "resources/read", params: { uri: "audit://log" } }, session);
  assert.equal(audit.status, 200, audit.text);
  const log = JSON.parse(audit.json.result.contents[0].text);
  const held = new Set(log.decisions.map((d) => d.request_id));
  const missing = before.filter((r) => !held.has(r) && !held.has(JSON.stringify(r)));
  assert.deepEqual(missing, [], `decisions made before the flood pushed out of the trail (${log.decisions.length} held)`);
  const st = await status();
  const c = st.counters;
  const refused = c.malformed + c.bad_mac;
  assert.equal(refused + c.udp.rx_dropped, 5000, `every datagram was refused or dropped: ${JSON.stringify(c)}`);
  assert.ok(c.malformed >= 1000 && c.bad_mac >= 1000, `the flood reached the protocol: ${JSON.stringify(c)}`);
  assert.equal(c.accepted, 0, "nothing of it was accepted");

  const peer = log.decisions.filter((d) => d.kind === "peer");
  assert.ok(peer.length >= 1 && peer.length <= 2, `peer refusals hold ${peer.length} records (budget: 43 / 16)`);
  assert.ok(peer.every((d) => d.transport === "udp" && d.outcome === "deny"));
  assert.equal(c.refusals_unreported + c.refusals_unaudited + peer.length, refused,
               `every refusal is a record or counted: ${JSON.stringify(c)}`);

  // The cluster secret is kept only as the key derived from it: nothing a client or the console
  // reads holds it.
  for (const uri of ["kernel://status", "kernel://log", "audit://log"]) {
    const r = await pool.post({ jsonrpc: "2.0", id: uri, method: "resources/read", params: { uri } }, session);
    assert.equal(r.status, 200, r.text);
    assert.ok(!r.text.includes(SECRET), `${uri} shows the cluster secret`);
  }
  assert.ok(!(JSON.stringify(st)).includes(SECRET), "cluster_status shows the cluster secret");
  assert.ok(node.log().includes("cluster_key=***"), "the console shows the arguments, the secret hidden");
  assert.ok(!node.log().includes(SECRET), "the console shows the cluster secret");

  console.log(`cluster_flood_test: ${refused} refusals (${c.malformed} malformed, ${c.bad_mac} bad MAC; ` +
              `${c.udp?.rx_dropped ?? 0} dropped by the receive ring) made ${peer.length} audit records; ` +
              `${c.refusals_unreported} unreported, ${c.refusals_unaudited} beyond the budget; ` +
              `all ${before.length} earlier decisions held`);
  pool.close();
  await verdict.pass();
} catch (e) {
  await verdict.fail(e);
}
