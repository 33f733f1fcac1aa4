// Step-up and proposals end to end (the sink policy), with the official SDK clients over
// Streamable HTTP. A destructive call from a client is never simply run, whatever its role:
//  - a client that declared elicitation is asked (a form naming the collection and its vector
//    count, the name to be typed back): declined, cancelled or a wrong name leave the collection
//    whole; the right name drops it. A v2 client pinned to 2026-07-28 answers in an input round.
//  - a client that cannot be asked gets a proposal: nothing runs until another administrator
//    approves it; its proposer cannot; an operator lacks the scope; a proposal whose collection
//    changed since is refused as stale; a rejected one never runs.
//  - deletes of more than 100 ids step up; smaller ones run at once.
// Usage: node step_up_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { HttpPool } from "./http_pool.mjs";
import { Client, StreamableHTTPClientTransport, bootHttp, envelopeOf, root, types, watch, callOk, callRefused, collectionNames } from "./sdk.mjs";

const kernel = process.argv[2];
const ANA = "admin-ana-key-0123456789";
const BEN = "admin-ben-key-0123456789";
const OLGA = "operator-olga-key-012345";
const CARL = "admin-carl-key-012345678"; // an administrator narrowed to approving and reading
const node = await bootHttp(["--key", `admin:ana:${ANA}`, "--key", `admin:ben:${BEN}`, "--key", `operator:olga:${OLGA}`,
                             "--key", `admin:carl:${CARL}`, "--limit", "carl:scopes=proposal:approve+vector:read"],
                            { kernel });
const verdict = watch(node, "step_up_test", 150000);

const connect = async (key, capabilities) => {
  const transport = new StreamableHTTPClientTransport(new URL(node.url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  const client = new Client({ name: "basalt-step-up", version: "1.0.0" }, capabilities ? { capabilities } : undefined);
  await client.connect(transport);
  return client;
};
const ok = callOk;
const refused = callRefused;
const collections = collectionNames;

const forms = [];
const modernForms = [];
try {
  // The human: ana's key, elicitation declared, answers as told.
  const human = await connect(ANA, { elicitation: {} });
  let answer = () => ({ action: "decline" });
  human.setRequestHandler(types.ElicitRequestSchema, async (req) => {
    forms.push(req.params);
    return answer(req.params);
  });
  await ok(human, "collection_create", { name: "docs", dim: 4, metric: "l2" });
  await ok(human, "vector_upsert", { collection: "docs", ids: [1, 2, 3], vectors: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]] });
  assert.equal(forms.length, 0, "creating and writing are not critical sinks by default");

  await refused(human, "collection_drop", { name: "docs" }, "step_up_refused", "declined");
  assert.equal(forms.length, 1);
  assert.match(forms[0].message, /destroy collection 'docs' and the 3 vectors in it/);
  assert.deepEqual(forms[0].requestedSchema.required, ["name"]);
  answer = () => ({ action: "cancel" });
  await refused(human, "collection_drop", { name: "docs" }, "step_up_refused", "cancelled");
  answer = () => ({ action: "accept", content: { name: "doc" } });
  await refused(human, "collection_drop", { name: "docs" }, "step_up_refused", "name_mismatch");
  assert.deepEqual(await collections(human), ["docs"], "declined, cancelled, mistyped: the collection is whole");
  assert.equal((await ok(human, "collection_stats", { collection: "docs" })).count, 3);
  answer = () => ({ action: "accept", content: { name: "docs" } });
  assert.deepEqual(await ok(human, "collection_drop", { name: "docs" }), { dropped: "docs" });
  assert.deepEqual(await collections(human), []);
  assert.equal(forms.length, 4);

  // Bulk deletes: more than 100 ids need the yes; 100 or fewer do not.
  const ids = Array.from({ length: 150 }, (_, i) => i + 1);
  await ok(human, "collection_create", { name: "bulk", dim: 2, metric: "l2" });
  await ok(human, "vector_upsert", { collection: "bulk", ids, vectors: ids.map((i) => [i, 1]) });
  assert.equal((await ok(human, "vector_delete", { collection: "bulk", ids: ids.slice(0, 100) })).deleted, 100);
  assert.equal(forms.length, 4, "100 ids: no question");
  answer = () => ({ action: "decline" });
  await refused(human, "vector_delete", { collection: "bulk", ids }, "step_up_refused", "declined");
  assert.match(forms[4].message, /delete up to 150 vectors from collection 'bulk' \(it holds 50\)/);
  assert.equal((await ok(human, "collection_stats", { collection: "bulk" })).count, 50);

  // The model: ana's key again, no elicitation: its drop becomes a proposal.
  const model = await connect(ANA);
  await ok(model, "collection_create", { name: "logs", dim: 2, metric: "l2" });
  await ok(model, "vector_upsert", { collection: "logs", ids: [1, 2], vectors: [[1, 0], [0, 1]] });
  const held = await refused(model, "collection_drop", { name: "logs" }, "step_up_required", "proposal_pending");
  const id = Number(held.details.proposal_id);
  assert.ok(id > 0, JSON.stringify(held));
  assert.ok((await collections(model)).includes("logs"), "nothing ran");
  const listed = (await ok(model, "proposal_list", {})).proposals.find((p) => p.id === id);
  assert.deepEqual([listed.state, listed.tool, listed.sink, listed.collection, listed.proposed_by], ["pending", "collection_drop", "drop", "logs", "ana"]);
  assert.equal(listed.arguments, undefined, "the list is a summary");
  assert.deepEqual((await ok(model, "proposal_get", { proposal_id: id })).arguments, { name: "logs" }, "exactly what would run");
  assert.deepEqual(listed.target_when_proposed.vectors, 2);
  assert.match(listed.provenance_node_id, /^[0-9a-f]{8}-[1-9][0-9]*$/);

  // Four eyes: not the proposer (whoever it is), not an operator; another administrator may.
  await refused(model, "proposal_approve", { proposal_id: id }, "auth_insufficient_role", "own_proposal");
  await refused(human, "proposal_approve", { proposal_id: id }, "auth_insufficient_role", "own_proposal");
  const olga = await connect(OLGA);
  const denied = await olga.callTool({ name: "proposal_approve", arguments: { proposal_id: id } }).catch((e) => e);
  assert.ok(denied instanceof Error ? /auth_insufficient_role|Forbidden/.test(JSON.stringify(denied.data ?? denied.message))
                                    : denied.isError && envelopeOf(denied).error.code === "auth_insufficient_role",
            "an operator lacks proposal:approve");
  const carl = await connect(CARL);
  await refused(carl, "proposal_approve", { proposal_id: id }, "auth_insufficient_role", "approver_lacks_scope");
  assert.ok((await collections(model)).includes("logs"));
  assert.equal((await ok(model, "proposal_get", { proposal_id: id })).state, "pending", "still pending after the refusals");
  const ben = await connect(BEN);
  assert.deepEqual(await ok(ben, "proposal_approve", { proposal_id: id }), { dropped: "logs" }, "the proposal's own answer");
  assert.ok(!(await collections(model)).includes("logs"));
  const approved = await ok(ben, "proposal_get", { proposal_id: id });
  assert.deepEqual([approved.state, approved.decided_by], ["approved", "ben"]);
  await refused(ben, "proposal_approve", { proposal_id: id }, "validation_failed", "already_decided");

  // Stale: the collection moved after the proposal; approving it would run something else.
  await ok(model, "collection_create", { name: "keep", dim: 2, metric: "l2" });
  await ok(model, "vector_upsert", { collection: "keep", ids: [1], vectors: [[1, 1]] });
  const stale = Number((await refused(model, "collection_drop", { name: "keep" }, "step_up_required", "proposal_pending")).details.proposal_id);
  await ok(model, "vector_upsert", { collection: "keep", ids: [2], vectors: [[2, 2]] });
  await refused(ben, "proposal_approve", { proposal_id: stale }, "validation_failed", "target_changed");
  assert.equal((await ok(ben, "proposal_get", { proposal_id: stale })).state, "stale");
  assert.ok((await collections(model)).includes("keep"));

  // Rejected: never runs.
  const rejected = Number((await refused(model, "collection_drop", { name: "keep" }, "step_up_required", "proposal_pending")).details.proposal_id);
  assert.equal((await ok(ben, "proposal_reject", { proposal_id: rejected })).state, "rejected");
  await refused(ben, "proposal_approve", { proposal_id: rejected }, "validation_failed", "already_decided");
  assert.ok((await collections(model)).includes("keep"));
  await refused(ben, "proposal_approve", { proposal_id: 999999 }, "not_found", "unknown_proposal");

  // A bulk delete from the model: a proposal too, approved by ben, run exactly as proposed.
  await ok(model, "vector_upsert", { collection: "bulk", ids, vectors: ids.map((i) => [i, 2]) });
  const bulk = Number((await refused(model, "vector_delete", { collection: "bulk", ids }, "step_up_required", "proposal_pending")).details.proposal_id);
  assert.equal((await ok(model, "collection_stats", { collection: "bulk" })).count, 150);
  const del = await ok(ben, "proposal_approve", { proposal_id: bulk });
  assert.equal(del.deleted, 150);
  assert.equal((await ok(model, "collection_stats", { collection: "bulk" })).count, 0);

  // 2026-07-28: the v2 client is asked in an input round and answers; the drop then runs.
  const V2 = await import(pathToFileURL(path.join(root, ".deps/npm/node_modules/@modelcontextprotocol/client/dist/index.mjs")));
  const modern = new V2.Client({ name: "basalt-step-up-modern", version: "1.0.0" },
                               { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } });
  modern.setRequestHandler("elicitation/create", async (req) => {
    modernForms.push(req.params.message);
    return { action: "accept", content: { name: "keep" } };
  });
  await modern.connect(new V2.StreamableHTTPClientTransport(new URL(node.url), { requestInit: { headers: { "X-MCP-API-Key": BEN } } }));
  const dropped = await modern.callTool({ name: "collection_drop", arguments: { name: "keep" } });
  assert.deepEqual(dropped.structuredContent, { dropped: "keep" }, JSON.stringify(dropped));
  assert.equal(modernForms.length, 1);
  assert.match(modernForms[0], /destroy collection 'keep' and the 2 vectors in it/);

  // The audit trail: every held-back call, refusal and approval, each naming its node.
  const trail = JSON.parse((await ben.readResource({ uri: "audit://log" })).contents[0].text).decisions;
  const codes = trail.filter((d) => d.action === "drop").map((d) => d.code);
  for (const code of ["step_up_refused", "step_up_required", ""])
    assert.ok(codes.includes(code), `${code} in ${codes}`);
  const proposing = trail.find((d) => d.provenance_node_id === listed.provenance_node_id);
  assert.deepEqual([proposing.name, proposing.code, proposing.reason, proposing.target, proposing.principal],
                   ["collection_drop", "step_up_required", "proposal_pending", "logs", "ana"]);
  const reasons = trail.filter((d) => d.code === "step_up_refused").map((d) => d.reason);
  for (const why of ["declined", "cancelled", "name_mismatch"])
    assert.ok(reasons.includes(why), `${why} in ${reasons}`);
  const approval = trail.filter((d) => d.name === "proposal_approve" && d.code === "");
  assert.equal(approval.length, 2, "two approvals ran");
  assert.deepEqual(approval.map((d) => d.target), ["collection_drop logs", "vector_delete bulk"], "the trail names what they ran");
  // The approved call's node derives from the proposing request's: the chain leads back to it.
  const derived = JSON.parse((await ben.readResource({ uri: `provenance://node/${approval[0].provenance_node_id}` })).contents[0].text);
  assert.deepEqual([derived.node.principal, derived.node.method, derived.node.parent], ["ben", "proposal_approve", listed.provenance_node_id]);
  assert.deepEqual(derived.chain.map((n) => [n.id, n.principal, n.method]), [[listed.provenance_node_id, "ana", "tools/call"]]);
  assert.deepEqual(derived.decisions.map((d) => [d.name, d.outcome]), [["proposal_approve", "allow"]]);
  // An answer sent before being asked answers nothing: a raw 2026-07-28 call carrying an accept
  // under a guessed key is asked the question instead (under a key it could not have guessed).
  const pool = new HttpPool(node.url, 1);
  await ok(ben, "collection_create", { name: "guarded", dim: 2, metric: "l2" });
  const guess = await pool.post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: {
    name: "collection_drop", arguments: { name: "guarded" },
    inputResponses: { step_up_confirm: { action: "accept", content: { name: "guarded" } } },
    _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
             "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } } } }, { Authorization: `Bearer ${BEN}` });
  const asked = Object.keys(guess.json?.result?.inputRequests ?? {});
  assert.equal(asked.length, 1, JSON.stringify(guess.json));
  assert.match(asked[0], /^confirm_[0-9a-f]{20}$/);
  pool.close();
  assert.ok((await collections(ben)).includes("guarded"), "nothing was dropped");

  // One caller cannot fill the book: four pending proposals each, then a refusal.
  await ok(model, "collection_create", { name: "many", dim: 2, metric: "l2" });
  const mine = [];
  for (let i = 0; i < 4; ++i)
    mine.push(Number((await refused(model, "collection_drop", { name: "many" }, "step_up_required", "proposal_pending")).details.proposal_id));
  await refused(model, "collection_drop", { name: "many" }, "step_up_required", "too_many_proposals");
  for (const p of mine)
    assert.equal((await ok(ben, "proposal_reject", { proposal_id: p })).state, "rejected");
  const status = JSON.parse((await ben.readResource({ uri: "kernel://status" })).contents[0].text).mcp;
  assert.deepEqual(status.step_up, { critical_sinks: ["drop", "bulk_delete"], delete_over: 100, proposals_pending: 0 });
  await Promise.all([human, model, olga, carl, ben, modern].map((c) => c.close()));
  verdict.cancel();
  await node.stop();
} catch (e) {
  await verdict.fail(e);
}

// Boot arguments widen the policy (creation becomes a sink, deletes of more than 10 ids need a
// yes), and cannot narrow it: a threshold above 100 is ignored, a list naming no sink is
// refused whole with a warning.
for (const [args, want, warned] of [
  [["--append", "step_up=create", "--append", "step_up_delete_over=10"], { critical_sinks: ["drop", "bulk_delete", "create"], delete_over: 10 }, false],
  [["--append", "step_up=drop,nothing", "--append", "step_up_delete_over=5000"], { critical_sinks: ["drop", "bulk_delete"], delete_over: 100 }, true],
]) {
  const wide = await bootHttp(["--key", `admin:ana:${ANA}`, ...args], { kernel });
  const check = watch(wide, "step_up_test (boot arguments)", 60000);
  try {
    const transport = new StreamableHTTPClientTransport(new URL(wide.url), { requestInit: { headers: { Authorization: `Bearer ${ANA}` } } });
    const model = new Client({ name: "basalt-step-up", version: "1.0.0" });
    await model.connect(transport);
    const status = JSON.parse((await model.readResource({ uri: "kernel://status" })).contents[0].text).mcp;
    assert.deepEqual({ critical_sinks: status.step_up.critical_sinks, delete_over: status.step_up.delete_over }, want);
    assert.equal(status.config_warnings.some((w) => /step_up=drop,nothing/.test(w)), warned, JSON.stringify(status.config_warnings));
    const create = await model.callTool({ name: "collection_create", arguments: { name: "c", dim: 2, metric: "l2" } });
    if (want.critical_sinks.includes("create")) {
      assert.equal(envelopeOf(create).error?.code, "step_up_required", JSON.stringify(create));
    } else {
      assert.equal(create.isError, false);
      const ids = Array.from({ length: 11 }, (_, i) => i + 1);
      await model.callTool({ name: "vector_upsert", arguments: { collection: "c", ids, vectors: ids.map((i) => [i, 0]) } });
      const del = await model.callTool({ name: "vector_delete", arguments: { collection: "c", ids } });
      assert.equal(del.structuredContent.deleted, 11, "11 ids are under the default threshold");
    }
    await model.close();
    if (warned) {
      console.log(`step_up_test: ${forms.length + modernForms.length} confirmations asked, 4 proposals decided ` +
                  "(approved, stale, rejected, bulk); boot arguments widen and never narrow");
      await check.pass();
    }
    check.cancel();
    await wide.stop();
  } catch (e) {
    await check.fail(e);
  }
}
