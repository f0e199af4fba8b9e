// Writes the sentence boundaries of natural's SentenceTokenizer as
// LlamaIndex.TS 0.12.1 configures it, for random mixes of tricky fragments:
// one JSON line per text {text, sentences}. Sluice's splitter tests compare
// against the output (splitter/testdata/natural-sentences.jsonl):
//   npm ci && node sentences.mjs > ../../splitter/testdata/natural-sentences.jsonl
import { splitBySentenceTokenizer } from "@llamaindex/core/node-parser";
const split = splitBySentenceTokenizer();
const fragments = [
  "word", "Word", " ", "  ", "\n", ".", ". ", "?", "!", "…", "...", ". . .", "\"", "'", ")", "]", "}", "”", "’",
  "Dr.", "dr.", "Mr.", "Mrs.", "etc.", "i.e.", "e.g.", "vs.", "A.S.A.P.", "a.m.", "p.m.", "start.", "string.",
  "Abs.", "Profs.", "3", "3.14", "1,234", "1,234.56", "12345", "1.2.3", "v2.0", "x1.5",
  "https://ex.com/a.b", "http://x.y/z?q=1.", "www.site.org.", "ftp://f.tp/x", "file:///tmp/a.txt",
  "me@mail.com", "mailto:a.b@c.de", "a@b", "x@y.z", "user.name+tag@sub.example.co.uk.", "@", ",", ";", "日本。", "？", "{", "{{",
];
let seed = 7;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
for (let i = 0; i < 2000; i++) {
  let text = "";
  const len = 1 + rnd(16);
  for (let k = 0; k < len; k++) text += fragments[rnd(fragments.length)];
  const sentences = split(text);
  if (sentences.join("") !== text) continue; // natural altered the text (placeholder bug)
  console.log(JSON.stringify({ text, sentences }));
}
