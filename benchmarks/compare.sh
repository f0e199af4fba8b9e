#!/usr/bin/env bash
# compare.sh — Sluice against LlamaIndex.TS on the same corpus, in one run.
#
#   benchmarks/compare.sh [SIZE_MB]      (default 1; LlamaIndex.TS needs minutes per MB here)
#
# Builds a corpus of SIZE_MB MiB with ../shared/corpus/make-corpus.sh under a temporary folder, then on
# that corpus:
#   1. LlamaIndex.TS (llamaindex 0.12.1, pinned in llamaindex/package-lock.json):
#      VectorStoreIndex.fromDocuments with an instant mock embedding (llamaindex/ingest.mjs);
#   2. `sluice run` into the local store with the instant embedder (embedder.provider: instant, one
#      constant vector per chunk, like LlamaIndex.TS's mock), then with the default hash embedder
#      (which does real work per chunk); both read *.md and *.txt (BENCH_SOURCE in lib.sh), the files
#      LlamaIndex.TS loads;
#   3. tokenizing the same corpus alone on the same cores (BenchmarkTokenize), the ceiling for Sluice.
# Each command runs under /usr/bin/time -v; the script prints MB/s, peak RSS and the ratios as a
# Markdown table ready for RESULTS.md. Nothing is written outside $TMPDIR (default /tmp).
# Env: KEEP=1 keeps the temporary folder; SKIP_LLAMAINDEX=1 runs Sluice only.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

check_args 1 "$@"
SIZE_MB="${1:-1}"
need_number SIZE_MB "$SIZE_MB"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/sluice-compare.XXXXXX")"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
CORPUS="$WORK/corpus-${SIZE_MB}mb"

log "building the ${SIZE_MB} MiB corpus in $CORPUS"
make_corpus "$CORPUS" "$SIZE_MB"
BYTES="$(corpus_bytes "$CORPUS")"
MB="$(awk -v b="$BYTES" 'BEGIN {printf "%.2f", b / 1e6}')"
log "building sluice"
build_sluice "$WORK/sluice"

# 1. LlamaIndex.TS
LI_MBS=n/a LI_RSS=n/a LI_S=n/a
if [ "${SKIP_LLAMAINDEX:-0}" != 1 ]; then
  if [ ! -d "$BENCH_DIR/llamaindex/node_modules/llamaindex" ]; then
    log "installing llamaindex (npm ci)"
    (cd "$BENCH_DIR/llamaindex" && npm ci --no-audit --no-fund --ignore-scripts >&2) || die "npm ci failed"
  fi
  log "LlamaIndex.TS on $MB MB (slow)"
  timed "$WORK/llamaindex" node "$BENCH_DIR/llamaindex/ingest.mjs" "$CORPUS" 1536
  LI_S="$(wall_s "$WORK/llamaindex")"
  LI_RSS="$(peak_mib "$WORK/llamaindex")"
  LI_MBS="$(mb_per_s "$WORK/llamaindex" %.4f)"
  log "llamaindex: $(cat "$WORK/llamaindex.out")"
fi

# 2. sluice run into the local store: the instant embedder, then the default (hash) embedder
# run_sluice NAME CONFIG runs sluice run over the corpus with CONFIG, measured in $WORK/sluice-NAME.*.
run_sluice() {
  log "sluice run ($1 embedder) on $MB MB"
  mkdir -p "$WORK/run-$1"
  (cd "$WORK/run-$1" && timed "$WORK/sluice-$1" "$WORK/sluice" run "$CORPUS" --json --config "$2")
  log "sluice ($1): $(head -c 400 "$WORK/sluice-$1.out")"
}
bench_config "$WORK/instant.yaml" 'embedder:' '  provider: instant'
bench_config "$WORK/hash.yaml"
run_sluice instant "$WORK/instant.yaml"
run_sluice hash "$WORK/hash.yaml"
I_S="$(wall_s "$WORK/sluice-instant")" I_RSS="$(peak_mib "$WORK/sluice-instant")" I_MBS="$(mb_per_s "$WORK/sluice-instant")"
S_S="$(wall_s "$WORK/sluice-hash")" S_RSS="$(peak_mib "$WORK/sluice-hash")" S_MBS="$(mb_per_s "$WORK/sluice-hash")"

# 3. tokenizing alone, same corpus, same cores
log "tokenizing alone (BenchmarkTokenize)"
TOK_MBS="$(cd "$REPO" && SLUICE_BENCH_CORPUS="$CORPUS" go test -run '^$' -bench 'BenchmarkTokenize$' -benchtime 3x ./benchmarks/pipeline/ |
  awk '/^BenchmarkTokenize/ {for (i = 1; i <= NF; i++) if ($(i+1) == "MB/s") print $i}')"

cat <<OUT

Corpus: $MB MB ($BYTES bytes, make-corpus.sh SIZE_MB=$SIZE_MB), $(find "$CORPUS" -type f -not -name MANIFEST.tsv | wc -l) files
Machine: $(machine)
Date: $(date -u +%Y-%m-%dT%H:%MZ)

| run | wall s | MB/s | peak RSS MiB |
|---|---|---|---|
| LlamaIndex.TS 0.12.1, VectorStoreIndex.fromDocuments, instant mock embedding | $LI_S | $LI_MBS | $LI_RSS |
| sluice run, instant embedder, local store | $I_S | $I_MBS | $I_RSS |
| sluice run, hash embedder, local store | $S_S | $S_MBS | $S_RSS |
| tokenizing alone (BenchmarkTokenize, GOMAXPROCS=$(nproc)) | | $TOK_MBS | |

Sluice (instant) / LlamaIndex.TS MB/s: $(ratio "$I_MBS" "$LI_MBS")x (target >= 100x)
Sluice (instant) / tokenizing alone: $(ratio "$I_MBS" "$TOK_MBS") (target >= 0.90)
Sluice (hash) / LlamaIndex.TS MB/s: $(ratio "$S_MBS" "$LI_MBS")x
LlamaIndex.TS / Sluice (instant) peak RSS: $(ratio "$LI_RSS" "$I_RSS")x
OUT
