// Sessions are not authentication, and their ids are unguessable (MCP security guidance), over
// raw HTTP: a key presented at initialize does not carry over (a later request without a key acts
// as the guest; another key is refused on that session, also for DELETE); 64 session ids are 32 hex
// digits, all different, with balanced bits and nothing shared between neighbours (they come
// from the kernel's ChaCha20 generator, seeded from the virtio entropy device, as kernel://status
// says); a full session table refuses an anonymous initialize (503 sessions_full) and keeps the
// sessions of others; an authenticated caller still gets one. A second boot without the entropy
// device says loudly that its random numbers are predictable.
// Usage: node http_sessions_test.mjs KERNEL_ELF
import assert from "node:assert/strict";

import { HttpPool } from "./http_pool.mjs";
import { bootHttp, watch } from "./sdk.mjs";

const kernel = process.argv[2];
const OPERATOR = "operator-key-0123456789abcdef";
const READER = "reader-key-0123456789abcdef";
const SLOTS = 64;
let node = await bootHttp(["--key", `operator:olga:${OPERATOR}`, "--key", `reader:rita:${READER}`], { kernel });
let verdict = watch(node, "http_sessions_test", 120000);

let nextId = 1;
const hello = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "sessions", version: "1" } };
const bearer = (key) => (key ? { Authorization: `Bearer ${key}` } : {});

try {
  const pool = new HttpPool(node.url, 2);
  const post = (body, headers = {}) => pool.post(body, headers);
  const initialize = (key) => post({ jsonrpc: "2.0", id: 0, method: "initialize", params: hello }, bearer(key));
  const call = (sid, key) => post({ jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name: "kernel_info", arguments: {} } },
                                  { "Mcp-Session-Id": sid, ...bearer(key) });

  // The key of the initialize is the session's only to refuse others.
  const opened = await initialize(OPERATOR);
  assert.equal(opened.status, 200, opened.text);
  const mine = opened.headers["mcp-session-id"];
  const without = await call(mine);
  assert.equal(without.status, 401, `a request without its key: ${without.text}`);
  assert.equal(without.json.error.code, "auth_missing_api_key");
  const own = await call(mine, OPERATOR);
  assert.equal(own.status, 200, own.text);
  assert.equal(own.json.result.isError, false);
  const other = await call(mine, READER);
  assert.equal(other.status, 403, other.text);
  assert.equal(other.json.error.details.reason, "session_key_mismatch");
  const end = await pool.request("DELETE", undefined, { "Mcp-Session-Id": mine, ...bearer(READER) });
  assert.equal(end.status, 403, "another key cannot end the session");

  // The rest of the table, anonymously: ids unguessable.
  const ids = [];
  for (let i = 1; i < SLOTS; ++i) {
    const r = await initialize();
    assert.equal(r.status, 200, r.text);
    ids.push(r.headers["mcp-session-id"]);
  }
  ids.push(mine);
  assert.ok(ids.every((id) => /^[0-9a-f]{32}$/.test(id)), "32 hex digits each");
  assert.equal(new Set(ids).size, SLOTS, "all different");
  const bits = (id) => [...id].map((c) => parseInt(c, 16).toString(2).padStart(4, "0")).join("");
  const ones = ids.map(bits).join("").split("").filter((b) => b === "1").length;
  const share = ones / (SLOTS * 128);
  assert.ok(share > 0.45 && share < 0.55, `share of one bits ${share.toFixed(3)}`);
  let minDistance = 128;
  for (let i = 1; i < ids.length; ++i) {
    const a = bits(ids[i - 1]), b = bits(ids[i]);
    let d = 0;
    for (let k = 0; k < 128; ++k)
      d += a[k] !== b[k];
    minDistance = Math.min(minDistance, d);
  }
  assert.ok(minDistance > 32, `neighbouring ids differ in only ${minDistance} of 128 bits`);
  const status = JSON.parse((await post({ jsonrpc: "2.0", id: nextId++, method: "resources/read", params: { uri: "kernel://status" } },
                                        { "Mcp-Session-Id": mine, ...bearer(OPERATOR) })).json.result.contents[0].text);
  assert.equal(status.random.secure, true, JSON.stringify(status.random));
  assert.match(status.random.sources, /virtio-rng/);

  // Full: an anonymous initialize displaces nobody.
  const refused = await initialize();
  assert.equal(refused.status, 503, refused.text);
  assert.equal(refused.json.error.details.reason, "sessions_full");
  assert.equal((await call(mine, OPERATOR)).status, 200, "the operator's session survived");
  assert.equal((await call(ids[0])).status, 401, "the oldest anonymous session survived (answered, as the guest)");
  // An authenticated caller with a session of its own makes room from its own.
  const second = await initialize(OPERATOR);
  assert.equal(second.status, 200, second.text);
  assert.equal((await call(mine, OPERATOR)).status, 404, "its own oldest session gave way");
  assert.equal((await call(ids[0])).status, 401, "nobody else's did");
  console.log(`http_sessions_test: key per request, other keys refused; ${SLOTS} ids distinct, ${(share * 100).toFixed(1)}% one bits, ` +
              `neighbours >= ${minDistance} bits apart (random: ${status.random.sources}); a full table refused an anonymous ` +
              `initialize and kept everyone's sessions`);
  pool.close();
  verdict.cancel();
  await node.stop();

  // Without hardware entropy the kernel says so, in the log and in kernel://status.
  node = await bootHttp(["--no-rng", "--key", `operator:olga:${OPERATOR}`], { kernel });
  verdict = watch(node, "http_sessions_test", 60000);
  const pool2 = new HttpPool(node.url, 1);
  const init2 = await pool2.post({ jsonrpc: "2.0", id: 0, method: "initialize", params: hello }, bearer(OPERATOR));
  const status2 = JSON.parse((await pool2.post({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "kernel://status" } },
                                               { "Mcp-Session-Id": init2.headers["mcp-session-id"], ...bearer(OPERATOR) })).json.result.contents[0].text);
  assert.equal(status2.random.secure, false);
  assert.equal(status2.random.sources, "none");
  assert.match(node.log(), /NO HARDWARE ENTROPY/);
  pool2.close();
  await verdict.pass();
} catch (e) {
  await verdict.fail(e);
}
