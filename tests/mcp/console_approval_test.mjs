// A destructive call a single operator can finish: the appliance as `./basalt run` starts it, with
// one administrator key. A client that cannot be asked (no elicitation) gets step_up_required and
// a proposal, which its own key may not approve (four eyes between MCP principals stays); the
// step_up_required message says a console operator can. At the console (the shell: physical
// presence), `proposal list` shows it, `proposal approve N` runs it through the same proposal
// book and sink policy, and the audit trail and provenance name the console; `proposal reject N`
// makes another one never run; a decided one is refused.
// Usage: node console_approval_test.mjs KERNEL_ELF
import assert from "node:assert/strict";

import { Client, StreamableHTTPClientTransport, bootHttp, envelopeOf, watch, callOk, callRefused, collectionNames } from "./sdk.mjs";

const kernel = process.argv[2];
const KEY = "admin-only-key-0123456789";
const node = await bootHttp(["--key", `admin:local:${KEY}`], { kernel });
const verdict = watch(node, "console_approval_test", 150000);

// The console's output after what was already read, until `re` matches (the shell echoes input,
// so each pattern is one only the command's answer prints).
let seen = 0;
async function console_(cmd, re, timeoutMs = 30000) {
  seen = node.log().length;
  node.shell(cmd);
  const end = Date.now() + timeoutMs;
  for (;;) {
    const m = re.exec(node.log().slice(seen));
    if (m)
      return m;
    if (Date.now() > end)
      throw new Error(`console never showed ${re} after '${cmd}':\n${node.log().slice(seen).slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const ok = callOk;
const refused = callRefused;
const collections = collectionNames;

try {
  // The model: the only key there is, no elicitation.
  const model = new Client({ name: "model", version: "1" });
  await model.connect(new StreamableHTTPClientTransport(new URL(node.url), { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } }));
  await ok(model, "collection_create", { name: "logs", dim: 2, metric: "l2" });
  await ok(model, "vector_upsert", { collection: "logs", ids: [1, 2], vectors: [[1, 0], [0, 1]] });
  const held = await refused(model, "collection_drop", { name: "logs" }, "step_up_required", "proposal_pending");
  const id = Number(held.details.proposal_id);
  assert.match(held.message, /an operator at the appliance's console with 'proposal approve ID'/, held.message);
  // Four eyes between MCP principals: the one administrator cannot approve its own.
  await refused(model, "proposal_approve", { proposal_id: id }, "auth_insufficient_role", "own_proposal");
  assert.ok((await collections(model)).includes("logs"), "nothing ran");

  await console_("proposal list", new RegExp(`\\n  ${id}  collection_drop 'logs', 2 vectors when proposed, by local, \\d+ s ago, expires in \\d+ s\\r?\\n`));
  await console_(`proposal approve ${id}`, new RegExp(`proposal ${id} approved at the console: collection_drop 'logs' ran\\r?\\n`));
  assert.ok(!(await collections(model)).includes("logs"), "the console's approval ran the drop");
  const approved = await ok(model, "proposal_get", { proposal_id: id });
  assert.deepEqual([approved.state, approved.decided_by], ["approved", "console"]);
  await console_(`proposal approve ${id}`, new RegExp(`proposal ${id} not approved: the proposal was already decided\\r?\\n`));
  await console_("proposal list", /no proposal is pending\r?\n/);

  // Rejected at the console: it never runs.
  await ok(model, "collection_create", { name: "keep", dim: 2, metric: "l2" });
  const second = Number((await refused(model, "collection_drop", { name: "keep" }, "step_up_required", "proposal_pending")).details.proposal_id);
  await console_(`proposal reject ${second}`, new RegExp(`proposal ${second} rejected at the console: collection_drop 'keep' will never run\\r?\\n`));
  assert.equal((await ok(model, "proposal_get", { proposal_id: second })).state, "rejected");
  assert.ok((await collections(model)).includes("keep"));
  await console_("proposal approve 999", /proposal 999 not approved: no proposal with that id\r?\n/);
  await console_("proposal drop 1", /proposal: list \| approve ID \| reject ID\r?\n/);

  // The audit trail names the console as the principal and transport of the approval, and what
  // it ran; its provenance node derives from the proposing request's.
  const trail = JSON.parse((await model.readResource({ uri: "audit://log" })).contents[0].text).decisions;
  const approval = trail.filter((d) => d.name === "proposal_approve" && d.code === "");
  assert.equal(approval.length, 1, JSON.stringify(approval));
  assert.deepEqual([approval[0].principal, approval[0].transport, approval[0].target], ["console", "console", "collection_drop logs"]);
  const rejection = trail.filter((d) => d.name === "proposal_reject" && d.code === "");
  assert.deepEqual(rejection.map((d) => d.principal), ["console"]);
  const derived = JSON.parse((await model.readResource({ uri: `provenance://node/${approval[0].provenance_node_id}` })).contents[0].text);
  assert.deepEqual([derived.node.principal, derived.node.method], ["console", "proposal_approve"]);
  assert.deepEqual(derived.chain.map((n) => [n.principal, n.method]), [["local", "tools/call"]]);
  await model.close();
  await verdict.pass();
} catch (e) {
  await verdict.fail(e);
}
