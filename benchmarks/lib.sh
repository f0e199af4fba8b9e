# lib.sh — helpers shared by the benchmark scripts (sourced, not run).

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$BENCH_DIR/.." && pwd)"
SHARED="${SLUICE_SHARED:-$REPO/../shared}"
MAKE_CORPUS="$SHARED/corpus/make-corpus.sh"

log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# usage prints the running script's usage: the comment block under its first line.
usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; }

# usage_error MESSAGE prints MESSAGE and the usage on stderr and exits 2.
usage_error() {
  log "error: $*"
  usage >&2
  exit 2
}

# check_args MAX ARG... prints the usage and exits 0 when the first ARG is -h or --help; exits 2, with
# the usage, when there are more than MAX ARGs or one starts with "-" (no script takes flags: its
# settings are environment variables). Each script calls it first, before it builds or downloads
# anything.
check_args() {
  local max="$1" a
  shift
  case "${1:-}" in -h | --help)
    usage
    exit 0
    ;;
  esac
  [ $# -le "$max" ] || usage_error "at most $max argument(s), got $#: $*"
  for a in "$@"; do
    case "$a" in -*) usage_error "unknown option $a" ;; esac
  done
}

# need_number NAME VALUE exits 2, with the usage, unless VALUE is a number above 0 (MiB may be
# fractional: make-corpus.sh takes 0.5). need_count NAME VALUE: a whole number above 0.
need_number() {
  [[ "$2" =~ ^[0-9]*\.?[0-9]+$ && ! "$2" =~ ^0*\.?0*$ ]] || usage_error "$1 must be a number above 0, got '$2'"
}
need_count() {
  [[ "$2" =~ ^[0-9]+$ && ! "$2" =~ ^0+$ ]] || usage_error "$1 must be a whole number above 0, got '$2'"
}

# machine prints the machine line recorded with every figure.
machine() {
  printf '%s, %s cores (%s), %s MiB RAM, %s, %s' \
    "$(uname -sr)" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')" \
    "$(($(grep MemTotal /proc/meminfo | awk '{print $2}') / 1024))" "$(go version | awk '{print $3}')" \
    "node $(node --version 2>/dev/null || echo none)"
}

# build_sluice OUT builds the sluice binary (or copies $SLUICE_BIN if set).
build_sluice() {
  if [ -n "${SLUICE_BIN:-}" ]; then
    cp "$SLUICE_BIN" "$1"
    return
  fi
  (cd "$REPO" && go build -trimpath -o "$1" ./cmd/sluice) || die "building sluice"
}

# make_corpus DIR SIZE_MB builds a corpus with the shared script (its
# download cache is $CORPUS_CACHE or $TMPDIR/sluice-corpus/cache).
make_corpus() {
  [ -x "$MAKE_CORPUS" ] || [ -f "$MAKE_CORPUS" ] || die "$MAKE_CORPUS not found; set SLUICE_SHARED to the shared folder"
  bash "$MAKE_CORPUS" "$1" "$2" >&2 || die "make-corpus.sh $1 $2 failed"
}

# BENCH_SOURCE is the source section of every sluice config the scripts write. The corpora of
# make-corpus.sh hold .md and .txt files and sluice's default include is ["**/*.md"], so the
# benchmarks list both, as every figure in RESULTS.md was measured over both.
BENCH_SOURCE='source: {include: ["**/*.md", "**/*.txt"]}'

# bench_config FILE [LINE...] writes a sluice config to FILE: BENCH_SOURCE, then each LINE (YAML
# of the other sections; everything not given keeps its default).
bench_config() {
  local file="$1"
  shift
  { echo "$BENCH_SOURCE"; [ $# -eq 0 ] || printf '%s\n' "$@"; } >"$file"
}

# corpus_bytes DIR prints the bytes of the files BENCH_SOURCE selects (*.md and *.txt, hidden
# entries skipped).
corpus_bytes() {
  find "$1" -type f \( -name '*.md' -o -name '*.txt' \) \
    -not -path '*/.*' -printf '%s\n' | awk '{s += $1} END {print s + 0}'
}

# timed OUT CMD... runs CMD under /usr/bin/time -v, its stdout to OUT.out
# and the time report to OUT.time. Exit code 3 (sluice: finished, some
# documents failed) is accepted.
timed() {
  local out="$1" rc=0
  shift
  /usr/bin/time -v -o "$out.time" "$@" >"$out.out" || rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 3 ] || die "$* failed with exit code $rc (see $out.time)"
}

# peak_mib OUT prints the peak RSS in MiB from OUT.time.
peak_mib() { awk -F: '/Maximum resident set size/ {printf "%.1f", $2 / 1024}' "$1.time"; }

# wall_s OUT prints the elapsed seconds from OUT.time.
wall_s() {
  awk '/Elapsed \(wall clock\)/ {n = split($NF, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s}' "$1.time"
}

# mb_per_s OUT [FORMAT] prints $BYTES in MB per second of the run measured in OUT (FORMAT default %.3f).
mb_per_s() { awk -v b="$BYTES" -v s="$(wall_s "$1")" -v f="${2:-%.3f}" 'BEGIN {printf f, b / 1e6 / s}'; }

# ratio A B prints A/B with two decimals.
ratio() {
  case "$1$2" in *[!0-9.]*) echo n/a; return ;; esac
  awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'
}
