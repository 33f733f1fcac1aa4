// Retrieval quality on a corpus nobody here wrote (issue 37; docs/documents.md): Princeton
// WordNet 3.0's noun synsets, as Debian's wordnet-base installs them (/usr/share/wordnet/
// data.noun; the bootstrap installs the package). Each document is a synset's gloss (its
// definition and examples); each query is a synset's words ("laying waste ruin ruining
// ruination wrecking"), and the one relevant document is that synset's gloss: a reverse-dictionary
// lookup, judged by WordNet's own lexicographers. recall@10: the share of queries whose gloss
// is among the first ten.
//
// The appliance (./basalt run's kernel and model, over stdio, the official SDK's callTool())
// answers each query in each mode; the host computes a textbook BM25 (k1 1.2, b 0.75, the same
// tokens) over the same documents. Passes when the appliance's hybrid recall@10 is at least the
// host BM25's and above its own lexical-only and semantic-only recall; its lexical mode must
// equal the host's BM25 (the same ranking function on the same tokens).
// Documents and queries are a seeded sample (SEED); nothing in the search was tuned on them.
// Usage: node recall_test.mjs KERNEL_ELF [DOCS] [QUERIES] [SEED]
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

import { boot, callOk, root } from "./sdk.mjs";

const [kernel, docsArg, queriesArg, seedArg] = process.argv.slice(2);
const DOCS = Number(docsArg ?? 5000);
const QUERIES = Number(queriesArg ?? 500);
const SEED = Number(seedArg ?? 20261130);
const WORDNET = "/usr/share/wordnet/data.noun";
const model = process.env.BASALT_EMBED_MODEL ?? path.join(root, "build/model/basalt-embed.bin");
if (!fs.existsSync(WORDNET)) {
  console.error(`SKIP: ${WORDNET} is missing (Debian's wordnet-base; toolchain/bootstrap.sh installs it)`);
  process.exit(77);
}

let state = SEED >>> 0 || 1;
const rand = () => {
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state / 4294967296;
};

// data.noun: "offset lex_filenum ss_type w_cnt(hex) word lex_id ... | gloss"; licence lines start
// with two spaces.
const synsets = [];
for (const line of fs.readFileSync(WORDNET, "latin1").split("\n")) {
  if (!line || line.startsWith("  "))
    continue;
  const bar = line.indexOf(" | ");
  if (bar < 0)
    continue;
  const f = line.slice(0, bar).split(" ");
  const count = parseInt(f[3], 16);
  const words = [];
  for (let i = 0; i < count; ++i)
    words.push(f[4 + 2 * i].replace(/_/g, " ").replace(/\(.*\)$/, ""));
  synsets.push({ id: f[0], words, gloss: line.slice(bar + 3).trim() });
}
// A seeded sample of DOCS synsets; queries from a seeded sample of those.
for (let i = synsets.length - 1; i > 0; --i) {
  const j = Math.floor(rand() * (i + 1));
  [synsets[i], synsets[j]] = [synsets[j], synsets[i]];
}
const docs = synsets.slice(0, DOCS);
const queries = docs.slice(0, QUERIES).map((d) => ({ text: d.words.join(" "), want: d.id }));

// The host's textbook BM25 over lib/text/tokenizer.h's tokens (runs of ASCII letters and digits,
// lower-cased, with bytes from 0x80 up; at most 32 bytes kept).
const tokens = (s) => {
  const out = [];
  for (const m of Buffer.from(s, "utf8").toString("latin1").matchAll(/[A-Za-z0-9\x80-\xff]+/g))
    out.push(m[0].toLowerCase().slice(0, 32));
  return out;
};
const df = new Map();
const docTf = docs.map((d) => {
  const tf = new Map();
  const t = tokens(d.gloss);
  for (const w of t)
    tf.set(w, (tf.get(w) ?? 0) + 1);
  for (const w of tf.keys())
    df.set(w, (df.get(w) ?? 0) + 1);
  return { id: d.id, tf, len: t.length };
});
const avgdl = docTf.reduce((s, d) => s + d.len, 0) / docTf.length;
function bm25(query, k = 10) {
  const terms = [...new Set(tokens(query))];
  const scored = [];
  docTf.forEach((d, slot) => {
    let s = 0;
    for (const t of terms) {
      const f = d.tf.get(t);
      if (!f)
        continue;
      const n = df.get(t);
      const idf = Math.log(1 + (docTf.length - n + 0.5) / (n + 0.5));
      s += idf * f * 2.2 / (f + 1.2 * (1 - 0.75 + 0.75 * d.len / avgdl));
    }
    if (s > 0)
      scored.push({ id: d.id, s, slot });
  });
  scored.sort((a, b) => b.s - a.s || a.slot - b.slot);
  return scored.slice(0, k).map((x) => x.id);
}

const s = boot("basalt-recall", ["--model", model], { kernel, timeoutMs: 0 });
const timer = setTimeout(() => s.fail("timed out"), 600000);
try {
  await s.client.connect(s.transport);
  await callOk(s.client, "collection_create", { name: "wordnet", kind: "documents", max_documents: DOCS,
                                               durability: "memory" });
  for (let i = 0; i < docs.length; i += 200)
    await callOk(s.client, "document_upsert", { collection: "wordnet",
      documents: docs.slice(i, i + 200).map((d) => ({ id: d.id, text: d.gloss })) });
  const hits = { hybrid: 0, lexical: 0, semantic: 0, host: 0 };
  let sameAsHost = 0;
  for (const q of queries) {
    const host = bm25(q.text);
    hits.host += host.includes(q.want) ? 1 : 0;
    for (const mode of ["hybrid", "lexical", "semantic"]) {
      const r = await callOk(s.client, "document_search", { collection: "wordnet", query: q.text, k: 10, mode,
                                                            text_bytes: 64 });
      const ids = r.results.map((x) => x.id);
      hits[mode] += ids.includes(q.want) ? 1 : 0;
      if (mode === "lexical" && ids.join() === host.join())
        ++sameAsHost;
    }
  }
  const recall = Object.fromEntries(Object.entries(hits).map(([k, v]) => [k, v / queries.length]));
  console.log(`WordNet 3.0 nouns (Debian wordnet-base), ${docs.length} glosses, ${queries.length} queries (seed ${SEED}): ` +
              `recall@10 hybrid ${recall.hybrid.toFixed(3)}, lexical ${recall.lexical.toFixed(3)}, ` +
              `semantic ${recall.semantic.toFixed(3)}; host BM25 ${recall.host.toFixed(3)}; ` +
              `lexical ranking equal to the host's on ${sameAsHost} of ${queries.length}`);
  assert.ok(sameAsHost >= 0.95 * queries.length, "the lexical mode is the textbook BM25");
  assert.ok(recall.hybrid >= recall.host, "hybrid at least the host's BM25");
  assert.ok(recall.hybrid > recall.lexical && recall.hybrid > recall.semantic, "hybrid above either mode alone");
  clearTimeout(timer);
  await s.done();
  console.log("PASS recall");
  process.exit(0);
} catch (e) {
  clearTimeout(timer);
  await s.fail(e);
}
