// Compares reference chunks (reference.mjs) with `sluice split --json`
// output for the same files and prints the share of LlamaIndex.TS chunks
// that Sluice reproduces byte for byte.
//
//   node parity.mjs LLAMAINDEX.jsonl SLUICE.jsonl
import fs from "node:fs";

const read = (p) => fs.readFileSync(p, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const [refPath, oursPath] = process.argv.slice(2);
if (!refPath || !oursPath || process.argv.length > 4 || refPath.startsWith("-")) {
  console.error("usage: node parity.mjs LLAMAINDEX.jsonl SLUICE.jsonl");
  process.exit(2);
}
const ours = new Map();
for (const c of read(oursPath)) {
  const m = ours.get(c.file) ?? new Map();
  m.set(c.text, (m.get(c.text) ?? 0) + 1);
  ours.set(c.file, m);
}
let total = 0, same = 0, placeholders = 0;
for (const c of read(refPath)) {
  total++;
  const m = ours.get(c.file);
  if (m && m.get(c.text) > 0) {
    m.set(c.text, m.get(c.text) - 1);
    same++;
  } else if (/\{\{(ABBREV|URI|NUMBER|DELIM)_\d+\}\}/.test(c.text)) {
    placeholders++;
  }
}
console.log(JSON.stringify({ llamaindex_chunks: total, reproduced: same,
  percent: total ? (100 * same) / total : 100, not_reproduced_with_placeholders: placeholders }));
