#!/usr/bin/env bash
# removal.sh — how fast `sluice run` removes the documents of files that are gone.
#
#   benchmarks/removal.sh [SIZE_MB] [KEEP_FOLDER]     (default: 50 debian-policy)
#
# Builds a corpus with ../shared/corpus/make-corpus.sh (or uses $CORPUS, a folder made by it), ingests
# it into the local store with the instant embedder, removes every top folder but KEEP_FOLDER (as an
# rm -rf of most of a tree, or a branch switch, does), and times the next `sluice run`, which deletes
# their documents. Prints the documents and chunks deleted, the seconds and the milliseconds per
# document. SLUICE_BIN=PATH times that binary instead of a build of this tree (to compare builds in
# one session). Nothing is written outside $TMPDIR.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SIZE="${1:-50}"
KEEP_FOLDER="${2:-debian-policy}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/sluice-removal.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

build_sluice "$WORK/sluice"
bench_config "$WORK/sluice.yaml" 'embedder: {provider: instant}'
if [ -n "${CORPUS:-}" ]; then
  cp -r "$CORPUS" "$WORK/docs"
else
  make_corpus "$WORK/docs" "$SIZE"
fi
[ -d "$WORK/docs/$KEEP_FOLDER" ] || die "$WORK/docs has no folder $KEEP_FOLDER to keep; pass one of: $(ls "$WORK/docs" | tr '\n' ' ')"

cd "$WORK"
./sluice run docs --config sluice.yaml --json >first.json 2>first.err || die "first run failed: $(tail -3 first.err)"
find docs -mindepth 1 -maxdepth 1 -type d ! -name "$KEEP_FOLDER" -exec rm -rf {} +
start=$(date +%s.%N)
./sluice run docs --config sluice.yaml --json >second.json 2>second.err || die "removing run failed: $(tail -3 second.err)"
end=$(date +%s.%N)

python3 - "$start" "$end" <<'PY'
import json, sys
start, end = float(sys.argv[1]), float(sys.argv[2])
r = json.load(open("second.json"))
secs = end - start
n = r["files_deleted"]
print("| documents deleted | chunks deleted | seconds (whole process) | ms per document |")
print("|---|---|---|---|")
print(f"| {n:,} | {r['chunks_deleted']:,} | {secs:.2f} | {1000 * secs / max(n, 1):.2f} |")
PY
log "machine: $(machine)"
