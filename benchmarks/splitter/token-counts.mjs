// Writes cl100k_base token counts from js-tiktoken (LlamaIndex.TS's tokenizer,
// installed with it, version pinned by package-lock.json) for random mixes of
// tricky characters: one JSON line per text {text, tokens}. Sluice's splitter
// tests compare against the output (splitter/testdata/js-tiktoken-counts.jsonl):
//   npm ci && node token-counts.mjs > ../../splitter/testdata/js-tiktoken-counts.jsonl
import { getEncoding } from "js-tiktoken";
const e = getEncoding("cl100k_base");
const alphabet = ["a","b","Z"," ","  ","\n","\r\n","\t","0","12","'","'s","'LL",".",",","!","?","…","日","本","é","🙂","👍🏽","\u00a0","\u2003","\ufeff","\u0085","ſ","-","_","(",")","{","}","\"","“","<|","|>","https://x.y/","Dr.","3.14"];
let seed = 42;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const texts = [];
for (let i = 0; i < 3000; i++) {
  let s = ""; const len = 1 + rnd(24);
  for (let k = 0; k < len; k++) s += alphabet[rnd(alphabet.length)];
  texts.push(s);
}
for (const t of texts) {
  let tokens;
  try { tokens = e.encode(t).length; } catch { continue; }
  console.log(JSON.stringify({ text: t, tokens }));
}
