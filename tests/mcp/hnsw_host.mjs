// The host build of the vector index (tests/host/support/hnsw_cli.cpp) driven with the same
// operations the end-to-end test sends to the kernel: a BVC1 script in, one JSON line per
// search / get / stats out.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const metrics = { l2: 0, cosine: 1, ip: 2 };

export class HostIndex {
  constructor({ dim, metric, m, ef_construction, max_elements, max_ef = 512 }) {
    this.dim = dim;
    this.parts = [Buffer.from("BVC1"), u32s([dim, metrics[metric], m, ef_construction, max_elements, max_ef])];
    this.kinds = []; // what each output line answers
  }
  upsert(ids, rows) {
    this.parts.push(Buffer.from("I"), u32s([ids.length]), u64s(ids), f32s(rows));
  }
  remove(ids) {
    this.parts.push(Buffer.from("D"), u32s([ids.length]), u64s(ids));
  }
  search(query, k, ef, filter = []) {
    this.parts.push(Buffer.from("S"), u32s([k, ef, filter.length]), u64s(filter), f32s(query));
    this.kinds.push("search");
  }
  get(id) {
    this.parts.push(Buffer.from("G"), u64s([id]));
    this.kinds.push("get");
  }
  stats() {
    this.parts.push(Buffer.from("T"));
    this.kinds.push("stats");
  }
  // Writes the index's snapshot (the format collection_import takes) to `file`.
  save(file) {
    const name = Buffer.from(file);
    this.parts.push(Buffer.from("W"), u32s([name.length]), name);
    this.kinds.push("save");
  }
  // Runs the script; returns the answers in order.
  run(cli) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-hnsw-"));
    const script = path.join(dir, "script.bvc");
    try {
      fs.writeFileSync(script, Buffer.concat(this.parts));
      const out = execFileSync(cli, [script], { maxBuffer: 64 << 20, encoding: "utf8" });
      const lines = out.trim().split("\n").map((l) => JSON.parse(l));
      if (lines.length !== this.kinds.length)
        throw new Error(`hnsw_cli answered ${lines.length} of ${this.kinds.length} operations`);
      return lines;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

const u32s = (values) => Buffer.from(Uint32Array.from(values).buffer);
const u64s = (values) => Buffer.from(BigUint64Array.from(values.map(BigInt)).buffer);
const f32s = (values) => Buffer.from(Float32Array.from(values).buffer);
