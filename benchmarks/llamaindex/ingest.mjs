// LlamaIndex.TS side of benchmarks/compare.sh: load every .md/.markdown/.txt/.text/.rst file under DIR
// (as sluice's default source.include does) and build VectorStoreIndex.fromDocuments with an instant mock
// embedding (zero vectors of DIMS floats) and SentenceSplitter chunkSize 1024 / chunkOverlap 200.
//   node ingest.mjs DIR [DIMS]
// Prints one JSON line: {files, bytes, nodes, seconds, mb_per_s}.
import fs from "node:fs";
import path from "node:path";
import { BaseEmbedding, Document, Settings, VectorStoreIndex } from "llamaindex";

const [dir, dimsArg] = process.argv.slice(2);
if (!dir) {
  console.error("usage: node ingest.mjs DIR [DIMS]");
  process.exit(2);
}
const dims = Number(dimsArg ?? 1536);

class InstantEmbedding extends BaseEmbedding {
  constructor() {
    super();
    this.zero = new Array(dims).fill(0);
  }
  async getTextEmbedding() {
    return this.zero;
  }
  async getTextEmbeddings(texts) {
    return texts.map(() => this.zero);
  }
}

Settings.embedModel = new InstantEmbedding();
Settings.chunkSize = 1024;
Settings.chunkOverlap = 200;

const exts = new Set([".md", ".markdown", ".txt", ".text", ".rst"]);
function walk(d, out) {
  for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.name.startsWith(".")) continue;
    const p = path.join(d, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile() && exts.has(path.extname(e.name).toLowerCase())) out.push(p);
  }
  return out;
}

const start = process.hrtime.bigint();
let bytes = 0;
const docs = walk(dir, []).map((p) => {
  const text = fs.readFileSync(p, "utf8");
  bytes += Buffer.byteLength(text);
  return new Document({ text, id_: path.relative(dir, p), metadata: { file_path: p, file_name: path.basename(p) } });
});
const index = await VectorStoreIndex.fromDocuments(docs);
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
const nodes = Object.keys(index.indexStruct.nodesDict ?? {}).length;
console.log(JSON.stringify({ files: docs.length, bytes, nodes, seconds, mb_per_s: bytes / 1e6 / seconds }));
