#!/usr/bin/env bash
# A long campaign: every target (or the ones named) for FUZZ_MINUTES (default 10) under ASan,
# FUZZ_JOBS at a time (default: the cores), from the committed corpus, new inputs kept in a
# scratch folder. Prints one line per target: executions, average exec/s, libFuzzer's edge
# coverage (cov) and features (ft) at the end, corpus size, peak RSS, and the finding if any.
#
#   bash fuzz/long.sh                      # all targets, 10 minutes each
#   FUZZ_MINUTES=30 bash fuzz/long.sh pipeline schema_load
#
# The binaries are copied first (to the scratch folder), so a rebuild during the campaign does
# not change what it measures. Findings go to fuzz/artifacts/<target>/ as in the smoke; the new
# inputs stay in $FUZZ_LONG_DIR/<target>/ (merge them with fuzz/cmin.sh, README "Corpus").
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=${FUZZ_MINUTES:-10}
jobs=${FUZZ_JOBS:-$(nproc)}
target_dir=${FUZZ_TARGET_DIR:-fuzz/target}
work=${FUZZ_LONG_DIR:-$(mktemp -d /tmp/bitlens-fuzz-long.XXXXXX)}
toolchain=()
rustup toolchain list 2>/dev/null | grep -q '^nightly' && toolchain=(+nightly)

if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
  cargo "${toolchain[@]}" fuzz build -O -s address --target-dir "$target_dir"
fi
if [ $# -eq 0 ]; then
  set -- $(for f in fuzz/fuzz_targets/*.rs; do basename "$f" .rs; done)
fi
mkdir -p "$work/bin"
for t in "$@"; do cp "$target_dir/x86_64-unknown-linux-gnu/release/$t" "$work/bin/$t"; done
echo "fuzz long: $# targets, $minutes min each, $jobs at a time, at $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (modified)'); logs in $work"

run_one() {
  local t=$1
  mkdir -p "$work/$t" "fuzz/artifacts/$t"
  local status=none
  "$work/bin/$t" -max_total_time=$((minutes * 60)) -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t/" "$work/$t" "corpus/$t" \
    > "$work/$t.log" 2>&1 || status=FINDING
  local last runs eps rss
  last=$(grep -E '^#[0-9]+' "$work/$t.log" | tail -1)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$t.log")
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$work/$t.log")
  printf '%s | runs %s | exec/s %s | %s | corp %s | rss %s MB | %s\n' "$t" "$runs" "$eps" \
    "$(grep -oE 'cov: [0-9]+ ft: [0-9]+' <<<"$last")" "$(grep -oE 'corp: [^ ]+' <<<"$last" | cut -d' ' -f2)" \
    "$rss" "$status" | tee -a "$work/summary.txt"
}

pids=()
for t in "$@"; do
  run_one "$t" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}"
    pids=("${pids[@]:1}")
  fi
done
wait
if grep -q FINDING "$work/summary.txt"; then
  echo "fuzz long: FINDINGS (see fuzz/artifacts/)" >&2
  exit 1
fi
echo "fuzz long: no finding"
