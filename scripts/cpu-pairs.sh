#!/usr/bin/env bash
# CPU time of two builds of a command, alternating on one core: N pairs, each build's task-clock
# (`perf stat`, user + system), pinned to core ${CORE:-1} with taskset. Prints the paired median
# of B/A with its quartiles, fastest/fastest and the ratio of the sums. For "no slower" claims:
# run it with the machine otherwise idle.
#
#   bash scripts/cpu-pairs.sh 30 FILE BUILD_A BUILD_B ARGS...
#   bash scripts/cpu-pairs.sh 30 /tmp/s100k.pcap /tmp/before/bitlens target/release/bitlens decode --json
#
# ARGS come before FILE on each command line (`BUILD decode --json FILE`).
set -euo pipefail
n=$1 file=$2 a=$3 b=$4
shift 4
core=${CORE:-1}
raw=$(mktemp)
trap 'rm -f "$raw" "$raw.err"' EXIT
ms() {
  local bin=$1
  shift
  taskset -c "$core" perf stat -x, -e task-clock "$bin" "$@" > /dev/null 2> "$raw.err" \
    || { cat "$raw.err" >&2; exit 1; }
  grep task-clock "$raw.err" | cut -d, -f1
}
for _ in $(seq "$n"); do
  echo "$(ms "$a" "$@" "$file") $(ms "$b" "$@" "$file")" >> "$raw"
done
awk '{print $2 / $1}' "$raw" | sort -n | awk '{r[NR] = $1}
  END {printf "paired median B/A %.3f of %d pairs (quartiles %.3f-%.3f)\n", r[int((NR + 1) / 2)], NR, r[int(NR / 4) + 1], r[int(3 * NR / 4)]}'
awk '{sa += $1; sb += $2; if (ma == "" || $1 < ma) ma = $1; if (mb == "" || $2 < mb) mb = $2}
  END {printf "fastest/fastest %.3f (A %.1f ms, B %.1f ms), sum ratio %.3f\n", mb / ma, ma, mb, sb / sa}' "$raw"
