// Provenance end to end, with the official SDK client over the serial line: every stored vector
// remembers the provenance node of the upsert that wrote it (vector_get, vector_search on
// request, an exported snapshot; an imported one remembers the import); the node reads back through
// provenance://node/{id} with who sent the write (the console, or a principal whose key the call
// presented) and as which client; and the audit trail names the node, the action and the target
// of every decision.
import assert from "node:assert/strict";
import zlib from "node:zlib";

import { boot } from "./sdk.mjs";

const kernel = process.argv[2];
const OPERATOR_KEY = "operator-key-0123456789";
const { client, transport, fail, done } = boot("basalt-provenance", ["--append", `key=operator:olga:${OPERATOR_KEY}`],
                                               { kernel, timeoutMs: 90000 });

const call = async (name, args, meta) => {
  const r = await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) });
  assert.ok(!r.isError, `${name}: ${JSON.stringify(r.structuredContent ?? r.content)}`);
  return r.structuredContent;
};
const read = async (uri) => JSON.parse((await client.readResource({ uri })).contents[0].text);
const NODE = /^[0-9a-f]{8}-[1-9][0-9]*$/;

try {
  await client.connect(transport);
  await call("collection_create", { name: "docs", dim: 4, metric: "l2" });
  const a = await call("vector_upsert", { collection: "docs", ids: [1, 2], vectors: [[1, 0, 0, 0], [0, 1, 0, 0]] });
  const b = await call("vector_upsert", { collection: "docs", ids: [3], vectors: [[0, 0, 1, 0]] },
                       { "io.basalt/api-key": OPERATOR_KEY });
  const c = await call("vector_upsert", { collection: "docs", ids: [2], vectors: [[0, 0.5, 0.5, 0]] });
  for (const u of [a, b, c])
    assert.match(u.provenance_node_id, NODE);
  assert.equal(new Set([a, b, c].map((u) => u.provenance_node_id)).size, 3, "one node per call");

  // Each vector names the write that stored it; a replaced vector, the write that replaced it.
  const got = await call("vector_get", { collection: "docs", ids: [1, 2, 3] });
  assert.deepEqual(got.vectors.map((v) => [v.id, v.provenance_node_id]),
                   [[1, a.provenance_node_id], [2, c.provenance_node_id], [3, b.provenance_node_id]]);
  const hits = await call("vector_search", { collection: "docs", vector: [0, 0, 1, 0], k: 3, with_provenance: true });
  assert.equal(hits.hits[0].id, 3);
  assert.ok(hits.hits.every((h) => h.provenance_node_id === got.vectors.find((v) => v.id === h.id).provenance_node_id),
            JSON.stringify(hits));
  const plain = await call("vector_search", { collection: "docs", vector: [0, 0, 1, 0], k: 1 });
  assert.equal(plain.hits[0].provenance_node_id, undefined, "only on request");

  // The node of b: the operator's key, over the serial line, as this client declared itself.
  const nb = await read(`provenance://node/${b.provenance_node_id}`);
  assert.deepEqual([nb.node.principal, nb.node.role, nb.node.transport, nb.node.method, nb.node.integrity],
                   ["olga", "operator", "serial", "tools/call", "UNTRUSTED"]);
  assert.deepEqual(nb.node.client, { name: "basalt-provenance", version: "1.0.0" });
  assert.deepEqual(nb.decisions.map((d) => [d.name, d.action, d.target, d.outcome, d.principal]),
                   [["vector_upsert", "write", "docs, 1 ids", "allow", "olga"]]);
  const na = await read(`provenance://node/${a.provenance_node_id}`);
  assert.equal(na.node.principal, "console");
  assert.deepEqual(na.decisions.map((d) => d.target), ["docs, 2 ids"]);

  // The audit trail links the chain: every decision of this session names its node, none twice
  // for different requests; a refusal too (an unknown tool has a node, the decision names it).
  await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }).then((r) => { if (r.isError) throw new Error("refused"); }));
  const trail = (await read("audit://log")).decisions;
  const tools = trail.filter((d) => d.kind === "tool");
  assert.ok(tools.every((d) => NODE.test(d.provenance_node_id)), JSON.stringify(tools));
  const refused = tools.filter((d) => d.name === "no_such_tool");
  assert.equal(refused.length, 1);
  assert.equal(refused[0].outcome, "deny");
  const nr = await read(`provenance://node/${refused[0].provenance_node_id}`);
  assert.deepEqual(nr.decisions.map((d) => d.code), ["validation_unknown_tool"], "decided after its node was made");
  const drop = trail.filter((d) => d.name === "collection_create");
  assert.deepEqual([drop[0].action, drop[0].target], ["create", "docs"]);

  // A snapshot carries each vector's node; an import does not take a snapshot's word for who wrote
  // its vectors (anyone with vector:admin can write one): they remember the import that stored them.
  const page = await call("collection_export", { collection: "docs", offset: 0 });
  assert.equal(page.next, page.size, "one page");
  const snapshot = Buffer.from(page.data, "base64");
  const nodeA = Buffer.alloc(8);
  nodeA.writeBigUInt64LE((BigInt(`0x${a.provenance_node_id.split("-")[0]}`) << 32n) | BigInt(a.provenance_node_id.split("-")[1]));
  assert.ok(snapshot.includes(nodeA), "the exported snapshot holds the node of the write");
  const imported = await call("collection_import", { name: "copy", size: snapshot.length, offset: 0, snapshot_b64: [page.data],
                                                     crc32: zlib.crc32(snapshot) });
  assert.match(imported.provenance_node_id, NODE);
  const copied = await call("vector_get", { collection: "copy", ids: [1, 2, 3] });
  assert.deepEqual(copied.vectors.map((v) => v.provenance_node_id), Array(3).fill(imported.provenance_node_id));

  // Ids that name no node of this boot are told apart.
  const status = await read("kernel://status");
  assert.ok(status.mcp.provenance_nodes >= 10 && status.mcp.provenance_failed === 0, JSON.stringify(status.mcp));
  const otherBoot = (b.provenance_node_id.startsWith("0") ? "1" : "0") + b.provenance_node_id.slice(1);
  await assert.rejects(read(`provenance://node/${otherBoot}`), (e) => e.code === -32002 && /another boot/.test(e.data.error.message));
  console.log(`provenance_test: 3 writes traced to their nodes through get, search and a snapshot; ` +
              `${tools.length} tool decisions each naming a node; ${status.mcp.provenance_nodes} nodes kept`);
  await done();
} catch (e) {
  await fail(e);
}
