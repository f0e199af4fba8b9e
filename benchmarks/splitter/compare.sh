#!/usr/bin/env bash
# Splits the same corpus with LlamaIndex.TS's SentenceSplitter and with
# `sluice split --json`, and prints the throughput (MB/s) and peak RSS of
# each, the speed ratio, and the share of LlamaIndex.TS chunks Sluice
# reproduces byte for byte.
#
#   benchmarks/splitter/compare.sh CORPUS_DIR [CHUNK_SIZE [CHUNK_OVERLAP]]
#
# Set KEEP=DIR to keep both outputs (llamaindex.jsonl, sluice.jsonl) there.
# Needs node (20+) and go; installs the pinned llamaindex package into
# benchmarks/splitter/node_modules on first use (not committed). Peak RSS
# comes from GNU time (/usr/bin/time; apt-get install time).
set -euo pipefail

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 CORPUS_DIR [CHUNK_SIZE [CHUNK_OVERLAP]]" >&2
	exit 2
fi
corpus=$(cd "$1" && pwd)
size=${2:-1024}
overlap=${3:-200}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
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
(cd "$root" && go build -o "$work/sluice" ./cmd/sluice)

# Same files, same order, for both.
(cd "$corpus" && find . -type f ! -name MANIFEST.tsv ! -name '.*' -printf '%P\n' | LC_ALL=C sort) >"$work/files"
mapfile -t files <"$work/files"
bytes=$(cd "$corpus" && cat -- "${files[@]}" | wc -c)

timed() { # timed NAME CMD... : runs CMD, records "seconds maxrss_kb" in $work/NAME.time
	local name=$1
	shift
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f '%e %M' -o "$work/$name.time" "$@"
	else
		local t0 t1
		t0=$(date +%s.%N)
		"$@"
		t1=$(date +%s.%N)
		echo "$(echo "$t1 - $t0" | bc) 0" >"$work/$name.time"
	fi
}

echo "corpus: $corpus (${#files[@]} files, $bytes bytes), chunkSize $size, chunkOverlap $overlap" >&2
timed llamaindex node "$here/reference.mjs" "$corpus" "$work/llamaindex.jsonl" "$size" "$overlap" "$work/files" 2>"$work/llamaindex.log"
(cd "$corpus" && timed sluice "$work/sluice" split --json --chunk-size "$size" --chunk-overlap "$overlap" -- "${files[@]}" >"$work/sluice.jsonl")
(cd "$corpus" && GOMAXPROCS=1 timed sluice1 "$work/sluice" split --json --chunk-size "$size" --chunk-overlap "$overlap" -- "${files[@]}" >/dev/null)

report() { # report LABEL NAME
	read -r secs rss <"$work/$2.time"
	awk -v l="$1" -v b="$bytes" -v s="$secs" -v r="$rss" \
		'BEGIN { printf "%-28s %8.2f s  %8.2f MB/s  peak RSS %7.1f MiB\n", l, s, b / 1e6 / s, r / 1024 }'
}
echo "== whole process (read, split, write JSON lines)"
report "LlamaIndex.TS 0.12.1" llamaindex
report "sluice split ($(nproc) cores)" sluice
report "sluice split (GOMAXPROCS=1)" sluice1
read -r li _ <"$work/llamaindex.time"
read -r sl _ <"$work/sluice.time"
read -r sl1 _ <"$work/sluice1.time"
awk -v a="$li" -v b="$sl" -v c="$sl1" 'BEGIN { printf "speed-up: %.1fx (all cores), %.1fx (one core)\n", a / b, a / c }'
echo "== LlamaIndex.TS splitting alone: $(cat "$work/llamaindex.log")"
echo "== parity: $(node "$here/parity.mjs" "$work/llamaindex.jsonl" "$work/sluice.jsonl")"
