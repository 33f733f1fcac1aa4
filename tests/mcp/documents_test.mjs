// Document collections end to end (issue 37; docs/documents.md), through the official SDK's
// callTool() with text arguments only:
//   1. stdio, and then HTTP, each on a disk image of its own, with the default model and a
//      checkpoint every 64 KiB of log:
//      create a document collection, store 1,000 documents (20 topics x 50), search in each mode,
//      filter by metadata, read back, replace, delete; restart on the same disk (recovery from a
//      checkpoint and the log after it): every search answers as before, deletions and the
//      replacement hold; the vector tools and the document tools refuse each other's collections.
//   2. HTTP (the agent's path): "store three facts, then find the one about X".
//   3. No model: lexical search only; a search that names no mode is lexical, one that asks for
//      meaning is told why not.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { Client, StreamableHTTPClientTransport, boot, bootHttp, callOk, callRefused, root, storageReady } from "./sdk.mjs";

const kernel = process.argv[2];
const model = path.join(root, "build/model/basalt-embed.bin");
assert.ok(fs.existsSync(model), "./basalt build makes build/model/basalt-embed.bin");

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-documents."));
const disk = path.join(dir, "disk.img");
fs.writeFileSync(disk, "");
fs.truncateSync(disk, 256 << 20);
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));

// Twenty topics, each a few sentences of its own words; a document is one of its topic's
// sentences, a filler sentence and a tag of its own (a word no other document has).
const TOPICS = {
  ocean: ["The whale swam through the deep ocean past the coral reef.", "Dolphins and sharks hunt fish near the reef.",
          "Waves crashed on the beach as the tide rose."],
  space: ["The rocket carried astronauts to the orbiting station.", "Telescopes observe distant galaxies and stars.",
          "The planet circles its sun once a year."],
  cooking: ["Simmer the tomato sauce with garlic and basil.", "Bake the bread until the crust turns golden.",
            "Chop the onions and fry them in butter."],
  music: ["The pianist played a sonata at the concert hall.", "The orchestra rehearsed the symphony all afternoon.",
          "A guitarist strummed chords while the singer performed."],
  football: ["The striker scored a goal in the final minute.", "The goalkeeper saved a penalty kick.",
             "Fans cheered as the team won the championship."],
  medicine: ["The doctor prescribed antibiotics for the infection.", "Nurses monitored the patient after surgery.",
             "A vaccine protects against the disease."],
  finance: ["Stock prices fell sharply as investors sold shares.", "The bank raised interest rates on loans.",
            "Inflation reduced the value of savings."],
  weather: ["Heavy rain and thunder storms swept across the region.", "Snow fell overnight and temperatures dropped.",
            "A hurricane brought strong winds to the coast."],
  computing: ["The programmer wrote software in the Python language.", "The server crashed because of a memory leak.",
              "Compilers translate source code into machine instructions."],
  gardening: ["Plant the tulip bulbs in the autumn soil.", "Water the roses and prune the hedges.",
              "Vegetables grow well in a sunny garden."],
  travel: ["The train departed from the station for the capital.", "Tourists visited the museum and the cathedral.",
           "The flight to the airport was delayed by an hour."],
  history: ["The emperor ruled the ancient empire for decades.", "Soldiers fought the battle during the medieval war.",
            "The revolution overthrew the king."],
  chemistry: ["The acid reacted with the metal to release hydrogen.", "Molecules bond when atoms share electrons.",
              "The chemist measured the solution in a flask."],
  animals: ["The lion hunted zebras on the savanna.", "Elephants and giraffes gathered at the river.",
            "The tiger prowled through the jungle at night."],
  cars: ["The engine of the car needed new oil.", "The driver parked the truck near the garage.",
         "Electric vehicles charge their batteries overnight."],
  law: ["The judge sentenced the defendant after the trial.", "The lawyer argued the case before the court.",
        "The jury reached a verdict of guilty."],
  education: ["The teacher graded the students' exams.", "Pupils learned arithmetic at the school.",
              "The university awarded degrees to graduates."],
  architecture: ["The architect designed a tall tower of glass and steel.", "Builders laid the bricks of the wall.",
                 "The bridge spans the river with stone arches."],
  film: ["The director filmed the movie in Hollywood.", "Actors rehearsed their scenes before shooting.",
         "The cinema showed the new film to large audiences."],
  farming: ["The farmer harvested wheat and corn in the fields.", "Cows grazed in the meadow by the barn.",
            "The tractor ploughed the land before sowing."],
};
const TOPIC_NAMES = Object.keys(TOPICS);
const FILLER = ["It was noted in the records.", "Someone wrote this down later.", "This entry was kept for reference."];
const docs = [];
for (let i = 0; i < 1000; ++i) {
  const topic = TOPIC_NAMES[i % 20];
  const variant = Math.floor(i / 20);
  docs.push({ id: `doc-${i}`, text: `${TOPICS[topic][variant % 3]} ${FILLER[variant % 3]} Tag zq${i}x.`,
              metadata: { topic, n: i } });
}
const topicOf = (id) => TOPIC_NAMES[Number(id.slice(4)) % 20];

async function stdio(name, args, fn) {
  const s = boot(name, args, { kernel, timeoutMs: 0 });
  const timer = setTimeout(() => s.fail(`${name} timed out`), 240000);
  try {
    await s.client.connect(s.transport);
    await storageReady(s.client);
    await fn(s.client);
    clearTimeout(timer);
    await s.done();
  } catch (e) {
    clearTimeout(timer);
    await s.fail(e);
  }
}

const search = async (client, query, extra = {}) =>
  (await callOk(client, "document_search", { collection: "notes", query, ...extra })).results;
const ids = (results) => results.map((r) => r.id);

// What a restart must answer again.
const QUERIES = [
  ["zq123x", { mode: "lexical", k: 3 }],
  ["marine animals swimming in the sea", { mode: "semantic", k: 10 }],
  ["zq423x musician performing on stage", { mode: "hybrid", k: 10 }],
  ["garlic", { mode: "lexical", k: 5 }],
];

// Over HTTP: the same session through ./basalt run's network path (qemu/run.sh --hostfwd).
const KEY = "k-documents-test";
async function http(name, args, fn) {
  const node = await bootHttp([...args, "--key", `admin:root:${KEY}`], { kernel });
  const client = new Client({ name, version: "1.0.0" });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(node.url),
                                                           { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } }));
    await storageReady(client);
    await fn(client);
    await client.close();
  } finally {
    await node.stop();
  }
}

let before = null;
const diskArgs = (image) => ["--disk", image, "--model", model, "--append", "checkpoint_kib=64"];
const fill = async (client) => {
  const status = JSON.parse((await client.readResource({ uri: "kernel://status" })).contents[0].text);
  assert.equal(status.embedder.state, "loaded");
  assert.equal(status.embedder.bytes, fs.statSync(model).size);

  const made = await callOk(client, "collection_create", { name: "notes", kind: "documents", max_documents: 2000 });
  assert.deepEqual([made.kind, made.max_documents, made.durability], ["documents", 2000, "disk"]);
  await callRefused(client, "collection_create", { name: "bad", kind: "documents", dim: 4 }, "validation_failed",
                    "invalid_arguments");
  await callRefused(client, "collection_create", { name: "bad" }, "validation_failed", "invalid_arguments");
  await callOk(client, "collection_create", { name: "vecs", dim: 4, metric: "l2" });

  // Each kind's tools refuse the other's collections.
  await callRefused(client, "vector_upsert", { collection: "notes", ids: [1], vectors: [[1, 2, 3, 4]] },
                    "validation_failed", "not_a_vector_collection");
  await callRefused(client, "document_upsert", { collection: "vecs", documents: [{ id: "a", text: "x" }] },
                    "validation_failed", "not_a_document_collection");

  // 1,000 documents, 100 a call.
  const started = Date.now();
  for (let i = 0; i < docs.length; i += 100) {
    const r = await callOk(client, "document_upsert", { collection: "notes", documents: docs.slice(i, i + 100) });
    assert.equal(r.stored, 100);
  }
  const ingestMs = Date.now() - started;
  const stats = await callOk(client, "collection_stats", { collection: "notes" });
  assert.equal(stats.kind, "documents");
  assert.equal(stats.count, 1000);
  assert.equal(stats.dim, 100);
  assert.equal(stats.documents.semantic, true);
  const listed = (await callOk(client, "collection_list", {})).collections.find((c) => c.name === "notes");
  assert.deepEqual([listed.kind, listed.count, listed.max_elements], ["documents", 1000, 2000]);

  // Lexical: a word only one document has.
  const tag = await search(client, "zq123x", { mode: "lexical", k: 3 });
  assert.deepEqual(ids(tag), ["doc-123"]);
  assert.equal(tag[0].text, docs[123].text);
  assert.deepEqual(tag[0].metadata, docs[123].metadata);
  // Semantic: no word in common with the ocean topic, its documents found by meaning.
  const sea = await search(client, "marine animals swimming in the sea", { mode: "semantic", k: 10 });
  assert.equal(sea.length, 10);
  const seaTopics = sea.map((r) => r.metadata.topic);
  assert.ok(seaTopics.filter((t) => t === "ocean" || t === "animals").length >= 8, `semantic: ${seaTopics}`);
  const lexicalSea = await search(client, "marine animals swimming in the sea", { mode: "lexical", k: 10 });
  assert.ok(lexicalSea.every((r) => r.metadata.topic !== "ocean"), "lexically, nothing of the ocean topic matches");
  // Hybrid (the default): the words' best (a tag only doc-423 has) and the meaning's (music) together,
  // where lexical alone finds the one document and semantic alone a tie of identical texts.
  const both = await search(client, "zq423x musician performing on stage", { k: 10 });
  assert.equal(both[0].id, "doc-423", `hybrid: ${ids(both)}`);
  assert.ok(both.filter((r) => r.metadata.topic === "music").length >= 4, `hybrid: ${ids(both)}`);
  const lexicalBoth = await search(client, "zq423x musician performing on stage", { mode: "lexical", k: 10 });
  assert.equal(lexicalBoth[0].id, "doc-423");
  assert.ok(lexicalBoth.filter((r) => r.metadata.topic === "music").length <= 1, `lexical: ${ids(lexicalBoth)}`);
  // A metadata filter keeps k of the matching ones.
  const filtered = await search(client, "the", { mode: "lexical", k: 5, filter: { topic: "law" } });
  assert.equal(filtered.length, 5);
  assert.ok(filtered.every((r) => r.metadata.topic === "law"));
  // (A filter keeps what matches among the query's best 100.)
  const byNumber = await search(client, "onions butter", { mode: "lexical", k: 5, filter: { n: 42 } });
  assert.deepEqual(ids(byNumber), ["doc-42"]);

  // Read back: whole text, metadata, the request that stored it.
  const got = await callOk(client, "document_get", { collection: "notes", ids: ["doc-7", "nope"] });
  assert.equal(got.documents.length, 1);
  assert.equal(got.documents[0].text, docs[7].text);
  assert.deepEqual(got.documents[0].metadata, docs[7].metadata);
  assert.match(got.documents[0].provenance_node_id, /^[0-9a-z]+/);
  assert.deepEqual(got.missing, ["nope"]);

  // Replace one, delete ten (and one that is not there).
  await callOk(client, "document_upsert", { collection: "notes",
    documents: [{ id: "doc-5", text: "Volcanoes erupted lava and ash over the island.", metadata: { topic: "geology" } }] });
  assert.deepEqual(ids(await search(client, "zq5x", { mode: "lexical" })), []);
  assert.deepEqual(ids(await search(client, "volcanoes lava", { mode: "lexical" })), ["doc-5"]);
  const gone = Array.from({ length: 10 }, (_, i) => `doc-${900 + i}`);
  const del = await callOk(client, "document_delete", { collection: "notes", ids: [...gone, "doc-9999"] });
  assert.equal(del.deleted, 10);
  assert.deepEqual(del.missing, ["doc-9999"]);
  assert.deepEqual(ids(await search(client, "zq905x", { mode: "lexical" })), []);
  assert.equal((await callOk(client, "collection_stats", { collection: "notes" })).count, 990);

  before = [];
  for (const [q, a] of QUERIES)
    before.push(ids(await search(client, q, a)));
  const storage = JSON.parse((await client.readResource({ uri: "kernel://status" })).contents[0].text).storage;
  assert.ok(storage.checkpoints >= 1, `a checkpoint holds documents: ${JSON.stringify(storage)}`);
  console.log(`1,000 documents stored in ${ingestMs} ms (${(1000 / (ingestMs / 1000)).toFixed(0)}/s, 100 a call); ` +
              `${storage.checkpoints} checkpoints, the last ${storage.last_checkpoint_bytes} bytes`);
};

// The same disk again: recovery (a checkpoint holding the documents, then the log after it).
const again = async (client) => {
  const storage = JSON.parse((await client.readResource({ uri: "kernel://status" })).contents[0].text).storage;
  assert.ok(storage.recovery.checkpoint_bytes > 0, `recovered from a checkpoint: ${JSON.stringify(storage.recovery)}`);
  const stats = await callOk(client, "collection_stats", { collection: "notes" });
  assert.equal(stats.count, 990);
  const after = [];
  for (const [q, a] of QUERIES)
    after.push(ids(await search(client, q, a)));
  assert.deepEqual(after, before, "every search answers as before the restart");
  assert.deepEqual(ids(await search(client, "zq905x", { mode: "lexical" })), [], "deletions held");
  assert.deepEqual(ids(await search(client, "volcanoes lava", { mode: "lexical" })), ["doc-5"], "the replacement held");
  const got = await callOk(client, "document_get", { collection: "notes", ids: ["doc-5", "doc-6"] });
  assert.equal(got.documents[0].metadata.topic, "geology");
  assert.equal(got.documents[1].text, docs[6].text);
  console.log(`after a restart: 990 documents (a checkpoint of ${storage.recovery.checkpoint_bytes} bytes, then ` +
              `${storage.recovery.records} records), ${QUERIES.length} searches answer as before`);
};

await stdio("basalt-documents", diskArgs(disk), fill);
await stdio("basalt-documents-again", diskArgs(disk), again);
const httpDisk = path.join(dir, "http.img");
fs.writeFileSync(httpDisk, "");
fs.truncateSync(httpDisk, 256 << 20);
await http("documents-http", diskArgs(httpDisk), fill);
await http("documents-http-again", diskArgs(httpDisk), again);

// 2. The agent's path over HTTP: text in, text out.
{
  const node = await bootHttp(["--model", model, "--key", `admin:root:${KEY}`], { kernel });
  try {
    const client = new Client({ name: "agent", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(node.url),
                                                           { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } }));
    const tools = (await client.listTools()).tools.map((t) => t.name);
    for (const t of ["document_upsert", "document_search", "document_get", "document_delete"])
      assert.ok(tools.includes(t), t);
    await callOk(client, "collection_create", { name: "memory", kind: "documents" });
    await callOk(client, "document_upsert", { collection: "memory", documents: [
      { id: "fact-1", text: "The user's daughter is allergic to peanuts." },
      { id: "fact-2", text: "The user prefers meetings after ten in the morning." },
      { id: "fact-3", text: "The user's car is a blue Volvo estate." },
    ] });
    const found = await callOk(client, "document_search", { collection: "memory", query: "what vehicle does the user drive?" });
    assert.equal(found.results[0].id, "fact-3", JSON.stringify(found));
    assert.equal(found.results[0].text, "The user's car is a blue Volvo estate.");
    const food = await callOk(client, "document_search", { collection: "memory", query: "food allergy", k: 1 });
    assert.equal(food.results[0].id, "fact-1");
    console.log(`agent over HTTP: three facts stored; "what vehicle does the user drive?" found fact-3 ` +
                `(${found.mode}, score ${found.results[0].score.toFixed(4)})`);
    await client.close();
  } finally {
    await node.stop();
  }
}

// 3. No model: lexical only, and said so.
await stdio("basalt-documents-no-model", [], async (client) => {
  await callOk(client, "collection_create", { name: "plain", kind: "documents", durability: "memory",
                                             max_documents: 20, document_bytes: 256 });
  await callRefused(client, "collection_create", { name: "huge", kind: "documents", max_documents: 1000000,
                                                   document_bytes: 65536 }, "validation_failed", "over_budget");
  await callOk(client, "document_upsert", { collection: "plain", documents: docs.slice(0, 20) });
  const r = await callOk(client, "document_search", { collection: "plain", query: "whale ocean" });
  assert.equal(r.mode, "lexical");
  assert.equal(r.results[0].id, "doc-0");
  await callRefused(client, "document_search", { collection: "plain", query: "whale", mode: "semantic" },
                    "unavailable", "no_model");
  const stats = await callOk(client, "collection_stats", { collection: "plain" });
  assert.deepEqual([stats.dim, stats.documents.semantic, stats.documents.max_documents], [0, false, 20]);
  // Full: a 21st document is refused, the 20 stay.
  await callRefused(client, "document_upsert", { collection: "plain", documents: [{ id: "one-more", text: "x" }] },
                    "internal_error", "collection_full");
  assert.equal((await callOk(client, "collection_stats", { collection: "plain" })).count, 20);
  // Results past a call's 64 KiB: texts cut or the list ended, said so, never an error.
  await callOk(client, "collection_create", { name: "big", kind: "documents", durability: "memory",
                                             max_documents: 16, document_bytes: 12000 });
  const long = Array.from({ length: 16 }, (_, i) => ({ id: `long-${i}`, text: `common ${"word ".repeat(1900)}${i}`,
                                                        metadata: { note: "m".repeat(1000) } }));
  await callOk(client, "document_upsert", { collection: "big", documents: long });
  const all = await callOk(client, "document_get", { collection: "big", ids: long.map((d) => d.id) });
  assert.ok(all.incomplete || all.documents.some((d) => d.truncated), "cut, and said so");
  assert.ok(all.documents.every((d) => d.text_bytes === long[Number(d.id.slice(5))].text.length));
  const many = await callOk(client, "document_search", { collection: "big", query: "common", k: 16, text_bytes: 49152 });
  assert.ok(many.incomplete || many.results.every((r) => r.truncated), "cut, and said so");
  assert.ok(many.results.length >= 1);
  // Dropping it is a step up, as for vectors: a client that cannot ask a human leaves a proposal.
  await callRefused(client, "collection_drop", { name: "plain" }, "step_up_required", "proposal_pending");
  assert.equal((await callOk(client, "collection_stats", { collection: "plain" })).count, 20);
  console.log("without a model: lexical search, semantic refused (no_model)");
});
console.log("PASS documents");
process.exit(0);
