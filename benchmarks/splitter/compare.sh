#!/usr/bin/env bash
# Splits the same corpus with LlamaIndex.TS's SentenceSplitter and with
# `sluice split --json`, and prints the throughput (MB/s) and peak RSS of
# each, the speed ratio, and the share of LlamaIndex.TS chunks Sluice
# reproduces byte for byte.
#
#   benchmarks/splitter/compare.sh CORPUS_DIR [CHUNK_SIZE [CHUNK_OVERLAP]]
#
# Set KEEP=DIR to keep both outputs (llamaindex.jsonl, sluice.jsonl) there.
# Needs node (20+), go and GNU time (/usr/bin/time; apt-get install time),
# which measures each command (timed in ../lib.sh); installs the pinned
# llamaindex package into benchmarks/splitter/node_modules on first use (not
# committed).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 CORPUS_DIR [CHUNK_SIZE [CHUNK_OVERLAP]]" >&2
	exit 2
fi
corpus=$(cd "$1" && pwd)
size=${2:-1024}
overlap=${3:-200}
here="$BENCH_DIR/splitter"
if [ -n "${KEEP:-}" ]; then
	mkdir -p "$KEEP"
	work=$(cd "$KEEP" && pwd)
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi

if [ ! -d "$here/node_modules/llamaindex" ]; then
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
build_sluice "$work/sluice"

# Same files, same order, for both.
(cd "$corpus" && find . -type f ! -name MANIFEST.tsv ! -name '.*' -printf '%P\n' | LC_ALL=C sort) >"$work/files"
mapfile -t files <"$work/files"
BYTES=$(cd "$corpus" && cat -- "${files[@]}" | wc -c)

echo "corpus: $corpus (${#files[@]} files, $BYTES bytes), chunkSize $size, chunkOverlap $overlap" >&2
# reference.mjs reports on stderr, and so does timed when it fails: show that
# report rather than exiting without a word.
(timed "$work/llamaindex" node "$here/reference.mjs" "$corpus" "$work/llamaindex.jsonl" "$size" "$overlap" "$work/files" 2>"$work/llamaindex.log") ||
	die "LlamaIndex.TS failed: $(tail -n 20 "$work/llamaindex.log")"
split=(split --json --chunk-size "$size" --chunk-overlap "$overlap" -- "${files[@]}")
(cd "$corpus" && timed "$work/sluice" "$work/sluice" "${split[@]}")
mv "$work/sluice.out" "$work/sluice.jsonl"
(cd "$corpus" && GOMAXPROCS=1 timed "$work/sluice1" "$work/sluice" "${split[@]}")
rm -f "$work/llamaindex.out" "$work/sluice1.out"

report() { # report LABEL NAME
	awk -v l="$1" -v s="$(wall_s "$work/$2")" -v m="$(mb_per_s "$work/$2" %.2f)" -v r="$(peak_mib "$work/$2")" \
		'BEGIN { printf "%-28s %8.2f s  %8.2f MB/s  peak RSS %7.1f MiB\n", l, s, m, r }'
}
echo "== whole process (read, split, write JSON lines)"
report "LlamaIndex.TS 0.12.1" llamaindex
report "sluice split ($(nproc) cores)" sluice
report "sluice split (GOMAXPROCS=1)" sluice1
awk -v a="$(wall_s "$work/llamaindex")" -v b="$(wall_s "$work/sluice")" -v c="$(wall_s "$work/sluice1")" 'BEGIN { printf "speed-up: %.1fx (all cores), %.1fx (one core)\n", a / b, a / c }'
echo "== LlamaIndex.TS splitting alone: $(cat "$work/llamaindex.log")"
echo "== parity: $(node "$here/parity.mjs" "$work/llamaindex.jsonl" "$work/sluice.jsonl")"
