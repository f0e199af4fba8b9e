// Splits every file of a folder with LlamaIndex.TS's SentenceSplitter (the
// npm package pinned in package.json) and writes the reference chunks, one
// JSON line per chunk: {file, index, text}, file relative to the folder.
//
//   npm ci   # installs the pinned llamaindex (package-lock.json)
//   node reference.mjs DIR OUT.jsonl [CHUNK_SIZE CHUNK_OVERLAP [FILE_LIST]]
//
// Files are taken from FILE_LIST (one relative path per line), else from
// DIR/MANIFEST.tsv (first column), else from a sorted walk of DIR. Files are
// read as UTF-8, as the shared fixtures were. On stderr it reports the bytes
// split and the time spent splitting alone (reading and writing excluded).
import fs from "node:fs";
import path from "node:path";
import { SentenceSplitter } from "llamaindex";

const [dir, out, size = "1024", overlap = "200", list] = process.argv.slice(2);
if (!dir || !out) {
  console.error("usage: node reference.mjs DIR OUT.jsonl [CHUNK_SIZE CHUNK_OVERLAP [FILE_LIST]]");
  process.exit(2);
}

function walk(root, rel = "") {
  const names = fs.readdirSync(path.join(root, rel), { withFileTypes: true })
    .map((d) => d.name).sort();
  return names.flatMap((name) => {
    const p = rel ? `${rel}/${name}` : name;
    const st = fs.statSync(path.join(root, p));
    return st.isDirectory() ? walk(root, p) : st.isFile() && name !== "MANIFEST.tsv" ? [p] : [];
  });
}

let files;
if (list) {
  files = fs.readFileSync(list, "utf8").split("\n").filter(Boolean);
} else if (fs.existsSync(path.join(dir, "MANIFEST.tsv"))) {
  files = fs.readFileSync(path.join(dir, "MANIFEST.tsv"), "utf8").split("\n").filter(Boolean)
    .map((l) => l.split("\t")[0]);
} else {
  files = walk(dir);
}

const splitter = new SentenceSplitter({ chunkSize: Number(size), chunkOverlap: Number(overlap) });

const fd = fs.openSync(out, "w");
let bytes = 0, splitNs = 0n, chunks = 0;
for (const file of files) {
  const text = fs.readFileSync(path.join(dir, file), "utf8");
  bytes += Buffer.byteLength(text, "utf8");
  const t0 = process.hrtime.bigint();
  const parts = splitter.splitText(text);
  splitNs += process.hrtime.bigint() - t0;
  parts.forEach((text, index) => fs.writeSync(fd, JSON.stringify({ file, index, text }) + "\n"));
  chunks += parts.length;
}
fs.closeSync(fd);
const secs = Number(splitNs) / 1e9;
console.error(JSON.stringify({ files: files.length, bytes, chunks, split_seconds: secs,
  split_mb_per_s: bytes / 1e6 / secs }));
