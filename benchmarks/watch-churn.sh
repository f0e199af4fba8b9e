#!/usr/bin/env bash
# watch-churn.sh — does `sluice watch` keep the index equal to the folder through rapid git branch
# switches on a busy machine?
#
#   benchmarks/watch-churn.sh [TRIALS]     (default 10)
#
# Each trial builds a git repository with docs/d1..200.md and docs/api/a1..50.md, written one at a
# time, and a branch `feature` that moves docs/ to documentation/. It starts `sluice watch` on the
# local store with the default settings (debounce 500ms), switches to feature and back SWITCHES
# times (default 3) with SLEEP seconds (default 0.3) after each checkout, ends on feature, waits
# until the watch's gauges (debouncing, pending, in flight) are all 0, stops the watch with SIGINT
# and asks `sluice run --dry-run` what is left to do. A watch that kept up leaves nothing: 0 new,
# 0 changed, 0 deleted. Each trial prints that line; the script prints how many trials left
# documents behind and exits 1 if any did.
#
# LOAD (default 2: one per core here) busy loops run meanwhile: the watcher and the rounds then lag
# behind git, which is what exposed the watcher's races. Env: SLUICE_BIN, as in lib.sh. Nothing is
# written outside $TMPDIR.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

check_args 1 "$@"
TRIALS="${1:-10}"
need_count TRIALS "$TRIALS"
SWITCHES="${SWITCHES:-3}"
SLEEP="${SLEEP:-0.3}"
LOAD="${LOAD:-2}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/sluice-watch-churn.XXXXXX")"
LOADERS=()
cleanup() {
  for p in "${LOADERS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
command -v git >/dev/null || die "git is needed"
command -v curl >/dev/null || die "curl is needed"

build_sluice "$WORK/sluice"
for _ in $(seq "$LOAD"); do
  (while :; do :; done) &
  LOADERS+=($!)
done

# gauges URL prints the sum of the three gauges that are 0 once every change seen is in the index.
gauges() {
  curl -fsS "$1" | awk '/^sluice_(watch_debouncing_documents|watch_pending_documents|pipeline_inflight_documents) /{s += $2; n++}
    END {if (n == 3) print s; else print "missing"}'
}

left=0
for trial in $(seq "$TRIALS"); do
  T="$WORK/t$trial"
  mkdir -p "$T/repo/docs/api" "$T/work"
  (
    cd "$T/repo"
    git init -q -b main && git config user.email bench@example.com && git config user.name bench
    for i in $(seq 200); do printf '# Doc %s\n\nThis is document number %s.\n' "$i" "$i" >"docs/d$i.md"; done
    for i in $(seq 50); do printf '# API %s\n\nEndpoint %s returns things.\n' "$i" "$i" >"docs/api/a$i.md"; done
    git add -A && git commit -qm init
    git checkout -qb feature && git mv docs documentation && git commit -qm move && git checkout -q main
  )
  (cd "$T/work" && exec "$WORK/sluice" watch "$T/repo" --metrics-addr 127.0.0.1:0) >"$T/watch.log" 2>&1 &
  WATCH=$!
  for _ in $(seq 300); do grep -q 'round=initial' "$T/watch.log" && break; sleep 0.1; done
  grep -q 'round=initial' "$T/watch.log" || die "trial $trial: no initial round; see $T/watch.log"
  URL="$(grep -o 'url=[^ ]*' "$T/watch.log" | head -1 | cut -d= -f2)"
  (
    cd "$T/repo"
    for _ in $(seq "$SWITCHES"); do
      git checkout -q feature; sleep "$SLEEP"
      git checkout -q main; sleep "$SLEEP"
    done
    git checkout -q feature
  )
  quiet=0
  for _ in $(seq 600); do
    sleep 0.2
    if [ "$(gauges "$URL")" = 0 ]; then quiet=$((quiet + 1)); else quiet=0; fi
    [ "$quiet" -lt 5 ] || break # 1 s at 0
  done
  [ "$quiet" -ge 5 ] || die "trial $trial: the watch did not settle; see $T/watch.log"
  kill -INT "$WATCH"
  wait "$WATCH" || die "trial $trial: sluice watch exited $?; see $T/watch.log"
  line="$(cd "$T/work" && "$WORK/sluice" run "$T/repo" --dry-run 2>&1 | grep '^Dry run')"
  echo "trial $trial: ${line%%: would*}"
  case "$line" in
    *"(0 new, 0 changed, "*", 0 deleted, 0 failed)"*) ;;
    *) left=$((left + 1)) ;;
  esac
done
echo "Command: benchmarks/watch-churn.sh $TRIALS (SWITCHES=$SWITCHES SLEEP=$SLEEP LOAD=$LOAD)"
echo "Machine: $(machine)"
echo "Date: $(date -u +%Y-%m-%dT%H:%MZ)"
echo "Trials that left the index behind the folder: $left of $TRIALS"
[ "$left" -eq 0 ]
