#!/usr/bin/env bash
# removal.sh — how fast `sluice run` removes the documents of files that are gone.
#
#   benchmarks/removal.sh [SIZE_MB] [KEEP_FOLDER]     (default: 50 debian-policy)
#
# Builds a corpus with ../shared/corpus/make-corpus.sh (or uses $CORPUS, a folder made by it), ingests
# it into the local store with the instant embedder, removes every top folder but KEEP_FOLDER (as an
# rm -rf of most of a tree, or a branch switch, does), and times the next `sluice run`, which deletes
# their documents. Prints the documents and chunks deleted, the seconds, the milliseconds per
# document and the peak RSS (both runs under /usr/bin/time -v; exit 3, some documents failed, is
# accepted). SLUICE_BIN=PATH times that binary instead of a build of this tree (to compare builds in
# one session). Nothing is written outside $TMPDIR.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

check_args 2 "$@"
SIZE="${1:-50}"
need_number SIZE_MB "$SIZE"
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
timed first ./sluice run docs --config sluice.yaml --json
find docs -mindepth 1 -maxdepth 1 -type d ! -name "$KEEP_FOLDER" -exec rm -rf {} +
timed second ./sluice run docs --config sluice.yaml --json

python3 - "$(wall_s second)" "$(peak_mib second)" <<'PY'
import json, sys
secs, peak = float(sys.argv[1]), sys.argv[2]
r = json.load(open("second.out"))
n = r["files_deleted"]
print("| documents deleted | chunks deleted | seconds (whole process) | ms per document | peak RSS (MiB) |")
print("|---|---|---|---|---|")
print(f"| {n:,} | {r['chunks_deleted']:,} | {secs:.2f} | {1000 * secs / max(n, 1):.2f} | {peak} |")
PY
log "machine: $(machine)"
