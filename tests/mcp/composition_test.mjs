// The system's composition as data (kernel/composition.cpp), seen from outside: kernel://composition
// lists which task holds a capability to which kernel object, with which rights, and it agrees with
// what the appliance shows otherwise: the tasks it names for this boot run (kernel_tasks), the
// storage task holds the disk, and a tool task's capability (kernel_caps) is of the type the bridge
// holds, with no right the bridge's lacks (derived copies never gain rights).
// Usage: node composition_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { boot, storageReady } from "./sdk.mjs";

const kernel = process.argv[2];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-composition."));
const disk = path.join(dir, "disk.img");
const { client, transport, fail, done } = boot("basalt-composition-test", ["--disk", disk, "--disk-size", "64M"],
                                               { kernel, timeoutMs: 90000 });
const RIGHTS = ["read", "write", "execute", "grant", "revoke", "create", "import", "drop"];

try {
  await client.connect(transport);
  await storageReady(client);
  const info = await client.callTool({ name: "kernel_info", arguments: {} });

  // Listed beside the other snapshots, and read like them.
  const uris = (await client.listResources()).resources.map((r) => r.uri);
  assert.ok(uris.includes("kernel://composition"), `resources: ${uris}`);
  const view = JSON.parse((await client.readResource({ uri: "kernel://composition" })).contents[0].text);
  assert.equal(view.uri, "kernel://composition");
  assert.equal(view.version, "1");
  assert.equal(view.source_commit, info.structuredContent.source_commit);

  // The table's shape: every grant names a task the table lists, once per object it holds, with
  // rights named as kernel_caps names them, in the same order.
  const taskNames = view.tasks.map((t) => t.task);
  assert.equal(new Set(taskNames).size, taskNames.length, `tasks listed once: ${taskNames}`);
  for (const t of view.tasks)
    assert.ok(typeof t.when === "string" && t.when.length > 0, JSON.stringify(t));
  const seen = new Set();
  for (const g of view.grants) {
    assert.ok(taskNames.includes(g.task), `a grant to an unlisted task: ${JSON.stringify(g)}`);
    const key = `${g.task}/${g.object}`;
    assert.ok(!seen.has(key), `one grant per task and object: ${key}`);
    seen.add(key);
    assert.ok(g.rights.length > 0, `no grant without rights: ${key}`);
    assert.deepEqual(g.rights, RIGHTS.filter((r) => g.rights.includes(r)), `rights in kernel_caps order: ${key}`);
    assert.equal(g.badge, 0, key);
  }
  const holds = (task, object) => view.grants.find((g) => g.task === task && g.object === object);

  // The storage task holds the disk, read and write, and no other task does.
  assert.deepEqual(holds("storage", "disk"), { task: "storage", object: "disk", type: "Disk", rights: ["read", "write"],
                                              badge: 0 });
  assert.deepEqual(view.grants.filter((g) => g.type === "Disk").map((g) => g.task), ["storage"]);
  // The Raft groups' durable state: the storage task (recovery, checkpoints) and the cluster task
  // (its consensus member) alone; no bridge or tool can forge a vote.
  assert.deepEqual(view.grants.filter((g) => g.type === "RaftLog").map((g) => g.task).sort(), ["cluster", "storage"]);
  // The vector store's workers hold the service; the bridges hold the store with every right.
  for (const w of ["vecstore-0", "vecstore-1"])
    assert.deepEqual([holds(w, "vector_service").type, holds(w, "vector_service").rights], ["VectorService", ["write"]]);
  for (const b of ["mcp-serial", "mcp-http"])
    assert.deepEqual(holds(b, "vector_store").rights, RIGHTS, b);

  // This boot (the console line carries MCP, a disk): those tasks run, the shell and the test
  // runner do not, and every task the table names that runs is one kernel_tasks lists.
  const running = (await client.callTool({ name: "kernel_tasks", arguments: {} })).structuredContent.tasks.map((t) => t.name);
  for (const t of ["mcp-serial", "storage", "vecstore-0", "vecstore-1"]) {
    assert.ok(taskNames.includes(t), `the table names ${t}`);
    assert.ok(running.includes(t), `${t} runs: ${running}`);
  }
  for (const t of ["shell", "ktest"]) {
    assert.ok(taskNames.includes(t), `the table names ${t}`);
    assert.ok(!running.includes(t), `${t} does not run on this boot: ${running}`);
  }

  // kernel_caps: the tool task's one capability comes from the bridge's introspection capability
  // (a token derived from it): the same type, and rights within the bridge's.
  const caps = (await client.callTool({ name: "kernel_caps", arguments: {} })).structuredContent.capabilities;
  assert.equal(caps.length, 1, JSON.stringify(caps));
  const bridge = holds("mcp-serial", "introspection");
  assert.equal(caps[0].type, bridge.type);
  for (const r of caps[0].rights)
    assert.ok(bridge.rights.includes(r), `the tool's right ${r} is one the bridge holds: ${bridge.rights}`);

  await done();
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(`PASS composition_test: ${view.grants.length} grants to ${taskNames.length} tasks; ` +
              `storage holds the disk; running: ${running.filter((t) => taskNames.includes(t)).join(", ")}`);
} catch (e) {
  fs.rmSync(dir, { recursive: true, force: true });
  await fail(e);
}
