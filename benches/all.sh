#!/usr/bin/env bash
# Every benchmark group of BENCHMARKS.md in one pass: the six criterion benches of the codec,
# then the capture benchmark against tshark (which installs hyperfine and tshark if missing).
# Each line of the log starts a group with the time and the load average, so a disturbed
# group shows. Run it on an idle machine: ~7 minutes on 2 cores.
#
#   bash benches/all.sh 2>&1 | tee target/bench-all.log
set -euo pipefail
cd "$(dirname "$0")/.."
stamp() { echo "== $1 $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"; }
for group in bitpacker entities packets tagged batch schema; do
  stamp "$group"
  cargo bench -q -p bitlens-codec --bench "$group" -- --warm-up-time 1 --measurement-time 4
done
stamp captures
bash benches/captures.sh
stamp done
