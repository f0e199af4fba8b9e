#!/usr/bin/env bash
# bench-sim.sh — `sluice bench --simulate` against a token quota, the figure behind the "recommended
# setting uses >= 95% of the quota" target.
#
#   benchmarks/bench-sim.sh [OUT_DIR]     (default: benchmarks/results/sim)
#
# Builds a 10 MiB corpus with ../shared/corpus/make-corpus.sh under a temporary folder and runs
# `sluice bench` with the simulated provider: 1,000,000 tokens per minute, latency 100ms + 10µs per
# token, batch sizes 1,8,32,100,256 and concurrency 1,4,16, each configuration in its own process.
# The corpus's *.md and *.txt files are read (BENCH_SOURCE in lib.sh, written to a config file).
# Writes table.txt, meta.txt, bench.csv and bench.svg to OUT_DIR. Env: SIZE_MB (default 10),
# BENCH_FLAGS (extra flags for sluice bench).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

check_args 1 "$@"
OUT="${1:-$BENCH_DIR/results/sim}"
SIZE_MB="${SIZE_MB:-10}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-sim.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
OUT="$(mkdir -p "$OUT" && cd "$OUT" && pwd)"

make_corpus "$WORK/corpus" "$SIZE_MB"
build_sluice "$WORK/sluice"
bench_config "$WORK/sluice.yaml"
FLAGS=(--simulate --sim-tpm 1000000 --sim-latency 100ms --sim-token-latency 10us
  --batch-sizes 1,8,32,100,256 --concurrency 1,4,16 --min-requests 10 --duration 5s --out .)
log "sluice bench ${FLAGS[*]} ${BENCH_FLAGS:-}"
# shellcheck disable=SC2086 # BENCH_FLAGS is a list of flags
(cd "$OUT" && "$WORK/sluice" bench "$WORK/corpus" --config "$WORK/sluice.yaml" "${FLAGS[@]}" ${BENCH_FLAGS:-} >"$OUT/table.txt")
{
  echo "Command: benchmarks/bench-sim.sh (sluice bench CORPUS --config CONFIG ${FLAGS[*]} ${BENCH_FLAGS:-})"
  echo "Config: $BENCH_SOURCE"
  echo "Corpus: make-corpus.sh SIZE_MB=$SIZE_MB"
  echo "Machine: $(machine)"
  echo "Date: $(date -u +%Y-%m-%dT%H:%MZ)"
} >"$OUT/meta.txt"
cat "$OUT/meta.txt" "$OUT/table.txt"
