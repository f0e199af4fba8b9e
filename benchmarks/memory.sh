#!/usr/bin/env bash
# memory.sh — peak RSS of `sluice run` as the corpus grows, and for one huge file.
#
#   benchmarks/memory.sh [SIZES_MB...]     (default: 10 200 1024)
#
# For each size builds a corpus with ../shared/corpus/make-corpus.sh under a temporary folder. The shared
# document pool holds about 140 MiB, so larger corpora are the full pool repeated in copy-N/ subfolders
# (hard links: distinct documents to Sluice, no extra disk). Then one single file of the largest size,
# the pool's text concatenated and repeated. Each `sluice run` (default config: hash embedder, local
# store, memoryBudgetMB 64; but source.include *.md and *.txt, BENCH_SOURCE in lib.sh, as the default
# reads *.md only) runs under /usr/bin/time -v; the script prints a Markdown table of MB,
# seconds, MB/s, peak RSS (target: <= 100 MiB everywhere) and the peak of RssAnon sampled every 0.2 s
# (RSS without file pages: what remains file-backed is mostly the sluice binary itself).
# Nothing is written outside $TMPDIR.
# Env: KEEP=1 keeps the temporary folder; SINGLE_FILE=0 skips the single-file run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

check_args 99 "$@"
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10 200 1024)
for s in "${SIZES[@]}"; do need_count SIZES_MB "$s"; done
WORK="$(mktemp -d "${TMPDIR:-/tmp}/sluice-memory.XXXXXX")"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
POOL_MB=140

build_sluice "$WORK/sluice"
bench_config "$WORK/sluice.yaml"

# corpus_of SIZE_MB DIR builds a corpus of about SIZE_MB MiB in DIR.
corpus_of() {
  local size="$1" dir="$2"
  if [ "$size" -le "$POOL_MB" ]; then
    make_corpus "$dir" "$size"
    return
  fi
  [ -d "$WORK/pool" ] || make_corpus "$WORK/pool" "$POOL_MB"
  local pool_bytes want n=0
  pool_bytes="$(corpus_bytes "$WORK/pool")"
  want=$((size * 1048576))
  mkdir -p "$dir"
  while [ $((n * pool_bytes)) -lt "$want" ]; do
    n=$((n + 1))
    cp -al "$WORK/pool" "$dir/copy-$n"
  done
}

# one_file SIZE_MB FILE writes a single text file of SIZE_MB MiB.
one_file() {
  local size="$1" file="$2"
  [ -d "$WORK/pool" ] || make_corpus "$WORK/pool" "$POOL_MB"
  mkdir -p "$(dirname "$file")"
  local want=$((size * 1048576))
  : >"$file"
  while [ "$(stat -c %s "$file")" -lt "$want" ]; do
    find "$WORK/pool" -type f -name '*.txt' -print0 | sort -z | xargs -0 cat >>"$file"
  done
  truncate -s "$want" "$file"
}

# run_sampled OUT CMD... runs CMD under /usr/bin/time -v like timed, and
# samples the anonymous memory (RssAnon: heap and stacks, without the file
# pages a memory-mapped database adds to RSS) of CMD every 0.2 s; the peak,
# in KiB, goes to OUT.anon.
run_sampled() {
  local out="$1" tpid pid kb peak=0 rc=0
  shift
  /usr/bin/time -v -o "$out.time" "$@" >"$out.out" &
  tpid=$!
  while kill -0 "$tpid" 2>/dev/null; do
    for pid in $(pgrep -P "$tpid"); do
      kb="$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)"
      if [ -n "$kb" ] && [ "$kb" -gt "$peak" ]; then peak="$kb"; fi
    done
    sleep 0.2
  done
  wait "$tpid" || rc=$?
  echo "$peak" >"$out.anon"
  [ "$rc" = 0 ] || [ "$rc" = 3 ] || die "$* failed with exit code $rc (see $out.time)"
}

# measure NAME DIR runs sluice over DIR and prints a table row.
measure() {
  local name="$1" dir="$2" bytes s
  bytes="$(corpus_bytes "$dir")"
  log "sluice run over $name ($bytes bytes)"
  rm -rf "$WORK/run" && mkdir -p "$WORK/run"
  (cd "$WORK/run" && run_sampled "$WORK/run/sluice" "$WORK/sluice" run "$dir" --json --config "$WORK/sluice.yaml")
  s="$(wall_s "$WORK/run/sluice")"
  printf '| %s | %.1f | %s | %s | %s | %.1f |\n' "$name" "$(awk -v b="$bytes" 'BEGIN {print b / 1e6}')" "$s" \
    "$(BYTES="$bytes" mb_per_s "$WORK/run/sluice" %.2f)" "$(peak_mib "$WORK/run/sluice")" \
    "$(awk '{print $1 / 1024}' "$WORK/run/sluice.anon")"
}

ROWS=()
for size in "${SIZES[@]}"; do
  corpus_of "$size" "$WORK/corpus-$size"
  ROWS+=("$(measure "corpus ${size} MiB" "$WORK/corpus-$size")")
  rm -rf "$WORK/corpus-$size"
done
if [ "${SINGLE_FILE:-1}" = 1 ]; then
  big="${SIZES[${#SIZES[@]} - 1]}"
  one_file "$big" "$WORK/single/one.txt"
  ROWS+=("$(measure "one file of ${big} MiB" "$WORK/single")")
fi

cat <<OUT

Machine: $(machine)
Date: $(date -u +%Y-%m-%dT%H:%MZ)
Command: benchmarks/memory.sh ${SIZES[*]}

| corpus | MB | wall s | MB/s | peak RSS MiB | peak RssAnon MiB (sampled) |
|---|---|---|---|---|---|
$(printf '%s\n' "${ROWS[@]}")
OUT
