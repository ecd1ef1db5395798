#!/usr/bin/env bash
# Fuzz throughput of two builds of the same targets, in the same run (issue 30, aim 2; see
# fuzz/README.md, "Fuzz throughput, issue 30"):
#
#   bash fuzz/throughput.sh BEFORE_DIR AFTER_DIR target...
#
# BEFORE_DIR and AFTER_DIR hold built fuzz binaries (e.g. a copy of
# fuzz/target/x86_64-unknown-linux-gnu/release/ from main, and the branch's). For each target:
#
# - replay: PASSES (default 50) passes over corpus/<target>/* as fixed inputs (no mutation, no
#   feature collection), before and after alternated ROUNDS (default 3) times; the CPU seconds
#   (user + sys) each took, and inputs per CPU second. This is the harness's own cost under the
#   sanitizer, steady on a loaded machine.
# - fuzzing: both binaries at the same time for SECONDS (default 30) each round, one worker each,
#   from the committed corpus (read only; new inputs go to a scratch folder), ROUNDS rounds;
#   libFuzzer's executions, its exec/s, and exec/s after the corpus is loaded (from its INITED
#   line). Two fuzzers diverge after the first mutations, so these ratios are noisier.
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 3 ] || { echo "usage: $0 BEFORE_DIR AFTER_DIR target..." >&2; exit 2; }
before=$1 after=$2
shift 2
passes=${PASSES:-50} rounds=${ROUNDS:-3} secs=${SECONDS_EACH:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# exec/s after the corpus load: (units at DONE - units at INITED) / (seconds - INITED's time).
after_init() {
  awk -v secs="$2" '
    /INITED/ { iu = substr($1, 2); for (i = 1; i <= NF; i++) if ($i == "exec/s:") ie = $(i + 1) }
    /DONE/ { du = substr($1, 2) }
    END { it = ie > 0 ? iu / ie : 0; printf "%.0f", (du - iu) / (secs - it) }' "$1"
}

for t in "$@"; do
  files=()
  for ((p = 0; p < passes; p++)); do files+=(corpus/"$t"/*); done
  for ((r = 1; r <= rounds; r++)); do
    for v in before after; do
      dir=$before
      [ "$v" = after ] && dir=$after
      /usr/bin/time -f '%U %S' -o "$work/time" "$dir/$t" -rss_limit_mb=2048 "${files[@]}" \
        > "$work/replay.log" 2>&1
      read -r u s < "$work/time"
      n=$(grep -c '^Executed' "$work/replay.log")
      printf '%s replay round %d %s: %d inputs in %s cpu-s, %s inputs/cpu-s (load %s)\n' "$t" "$r" \
        "$v" "$n" "$(echo "$u + $s" | bc)" "$(echo "scale=1; $n / ($u + $s)" | bc)" \
        "$(cut -d' ' -f1 /proc/loadavg)"
    done
  done
  for ((r = 1; r <= rounds; r++)); do
    for v in before after; do
      dir=$before
      [ "$v" = after ] && dir=$after
      mkdir -p "$work/$v-new"
      rm -rf "${work:?}/$v-new"/*
      "$dir/$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$work/$v-" "$work/$v-new" "corpus/$t" > "$work/$v.log" 2>&1 &
    done
    wait
    for v in before after; do
      if grep -q '^==[0-9]*==ERROR\|^SUMMARY: libFuzzer\|deadly signal' "$work/$v.log"; then
        tail -n 30 "$work/$v.log"
        echo "$t fuzzing round $r $v: a FINDING (the log above); its rate measures nothing"
      fi
      printf '%s fuzzing round %d %s: %s executions, %s exec/s, %s exec/s after the corpus load (load %s)\n' \
        "$t" "$r" "$v" "$(awk '/number_of_executed_units/ { print $2 }' "$work/$v.log")" \
        "$(awk '/average_exec_per_sec/ { print $2 }' "$work/$v.log")" \
        "$(after_init "$work/$v.log" "$secs")" "$(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
