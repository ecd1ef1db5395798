#!/usr/bin/env bash
# Capture-level speed: `bitlens check` and `bitlens decode --json` against
# `tshark -r FILE -T fields -e udp.payload` (which decodes nothing of ours, only extracts the
# payloads) on a 1,000,000-datagram capture from `bitlens synth`, timed with hyperfine.
#
#   bash benches/captures.sh [PACKETS]        # default 1000000; results in target/bench-captures/
#   BUSY=1 bash benches/captures.sh           # the same with one core kept busy by a spinning shell
#                                             # (results-busy.*): capture speed under a realistic load
#
# Installs what it needs (hyperfine and tshark from Debian) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-1000000}
out=target/bench-captures
mkdir -p "$out"

need=()
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v tshark >/dev/null || need+=(tshark)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1; then
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
fi

cargo build --release -q -p bitlens
bitlens=target/release/bitlens
capture="$out/synth-$packets.pcap"
[ -f "$capture" ] || "$bitlens" synth "$capture" --packets "$packets" --seed 1
ls -l "$capture"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bitlens" --version
tshark --version | head -1
hyperfine --version

suffix=
if [ "${BUSY:-0}" = 1 ]; then
  # One core busy for the whole measurement: a loop this script starts, and stops on exit.
  ( while :; do :; done ) &
  busy=$!
  trap 'kill "$busy"' EXIT
  suffix=-busy
  echo "one core busy: pid $busy"
fi
hyperfine --warmup 1 --runs 5 --export-markdown "$out/results$suffix.md" --export-json "$out/results$suffix.json" \
  -n "bitlens check" "$bitlens check $capture > /dev/null" \
  -n "bitlens decode --json" "$bitlens decode --json $capture > /dev/null" \
  -n "tshark -T fields -e udp.payload" "tshark -r $capture -T fields -e udp.payload > /dev/null"
cat "$out/results$suffix.md"
