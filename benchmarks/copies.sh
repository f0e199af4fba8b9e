#!/usr/bin/env bash
# copies.sh — what a copied and then a renamed folder cost with an embedder that charges by the token.
#
#   benchmarks/copies.sh [SIZE_MB] [FOLDER]     (default: 50 postgresql)
#
# Builds a corpus with ../shared/corpus/make-corpus.sh (or uses $CORPUS, a folder made by it) and
# copies its FOLDER alone into a fresh folder; starts `sluice devserver embeddings` (an
# OpenAI-compatible API that counts nothing but serves deterministic vectors) and runs `sluice run`
# into the local store with `embedder.provider: openai` three times: the folder alone, after `cp -r`
# of it beside itself, and after `mv` of the original to another name. Prints, per run, the files
# added and deleted, the chunks written and copied (written with the vector of a node of the same
# text), the tokens embedded and the seconds. SLUICE_BIN=PATH measures that binary instead of a build
# of this tree (to compare builds in one session). SINK=cloudsearch writes into a Cloud AI Search
# index instead, on `sluice devserver search` (the strict test double, in memory, on this machine),
# created by the first run. Nothing is written outside $TMPDIR.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

check_args 2 "$@"
SIZE="${1:-50}"
need_number SIZE_MB "$SIZE"
FOLDER="${2:-postgresql}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/sluice-copies.XXXXXX")"
SINK="${SINK:-local}"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

build_sluice "$WORK/sluice"
if [ -n "${CORPUS:-}" ]; then
  SRC="$CORPUS"
else
  make_corpus "$WORK/corpus" "$SIZE"
  SRC="$WORK/corpus"
fi
[ -d "$SRC/$FOLDER" ] || die "$SRC has no folder $FOLDER; pass one of: $(ls "$SRC" | tr '\n' ' ')"
mkdir "$WORK/docs"
cp -r "$SRC/$FOLDER" "$WORK/docs/$FOLDER"

# start_devserver KIND starts `sluice devserver KIND` on a free port, killed on exit, waits until it
# answers, and sets DEVSERVER_PORT.
start_devserver() {
  local port
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  "$WORK/sluice" devserver "$1" --addr "127.0.0.1:$port" >"$WORK/devserver-$1.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 50); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && break
    sleep 0.1
  done
  DEVSERVER_PORT=$port
}
start_devserver embeddings
PORT=$DEVSERVER_PORT
SINK_YAML=
case "$SINK" in
  local) ;;
  cloudsearch)
    export CLOUD_AI_SEARCH_KEY=copies-bench-key
    start_devserver search
    SEARCH_PORT=$DEVSERVER_PORT
    SINK_YAML="sink: {type: cloudsearch, cloudsearch: {endpoint: 'http://127.0.0.1:$SEARCH_PORT', indexName: copies, embeddingDimensionality: 1536, indexManagement: CreateIfNotExists}}"
    ;;
  *) die "SINK=$SINK: want local or cloudsearch" ;;
esac
bench_config "$WORK/sluice.yaml" \
  "embedder: {provider: openai, baseURL: 'http://127.0.0.1:$PORT/v1', model: text-embedding-3-small, dimensions: 1536, auth: none, requestsPerMinute: 0, tokensPerMinute: 0}" \
  "$SINK_YAML"

cd "$WORK"
echo "| run | files added | files deleted | chunks written | chunks copied | tokens embedded | seconds |"
echo "|---|---|---|---|---|---|---|"
row() {
  ./sluice run docs --config sluice.yaml --json 2>>run.log | python3 -c '
import json, sys
r = json.load(sys.stdin)
cells = [sys.argv[1]] + [f"{r.get(k, 0):,}" for k in
    ("files_added", "files_deleted", "chunks_written", "chunks_copied", "tokens_embedded")]
print("| " + " | ".join(cells) + f" | {r['"'"'seconds'"'"']:.2f} |")' "$1"
}
row "first: $FOLDER"
cp -r "docs/$FOLDER" "docs/$FOLDER-copy"
row "cp -r $FOLDER $FOLDER-copy"
mv "docs/$FOLDER" "docs/$FOLDER-renamed"
row "mv $FOLDER $FOLDER-renamed"
log "sink: $SINK; machine: $(machine)"
