#!/usr/bin/env bash
# The exported Wireshark dissector (`bitlens export-wireshark`) run by tshark, against
# `bitlens decode --json` and `bitlens check`, on a 1,000,000-datagram capture from
# `bitlens synth`. One run each (the tshark runs take minutes), timed by /usr/bin/time: wall
# time, and CPU time (user + sys), which a busy machine moves less.
#
#   bash benches/wireshark.sh [PACKETS]       # default 1000000; files in target/bench-wireshark/
#
# tshark modes:
#   -q -Y 'demo || demo_batch'       the dissector runs on every datagram for the filter, values
#                                    only, no labels (what Wireshark's packet list does on load)
#   -T json -J 'frame demo demo_batch'  the whole tree of every datagram, printed: the
#                                    counterpart of decode --json
#   -q -Y udp (no dissector)         tshark's own cost of reading and dissecting to UDP
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-1000000}
out=target/bench-wireshark
mkdir -p "$out"

cargo build --release -q -p bitlens
bitlens=target/release/bitlens
schema=captures/demo.schema.toml
capture="$out/synth-$packets.pcap"
[ -f "$capture" ] || "$bitlens" synth "$capture" --packets "$packets" --seed 1
"$bitlens" export-wireshark --schema "$schema" --port 40000 --batch-port 40001 > "$out/demo.lua"
ls -l "$capture"
echo "machine: $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
tshark --version | head -1

run() {
  local name=$1
  shift
  /usr/bin/time -f "$name: %e s wall, %U s user, %S s sys, %M KB max" "$@" > /dev/null 2> "$out/time.txt" || true
  grep -v '^Running as user' "$out/time.txt"
}
run "bitlens decode --json" "$bitlens" decode --schema "$schema" "$capture" --json
run "bitlens check" "$bitlens" check --schema "$schema" "$capture"
run "tshark -q -Y udp (no dissector)" tshark -r "$capture" -q -Y udp
run "tshark + dissector, -q -Y 'demo || demo_batch'" tshark -X "lua_script:$out/demo.lua" -r "$capture" -q -Y "demo || demo_batch"
run "tshark + dissector, -T json" tshark -X "lua_script:$out/demo.lua" -r "$capture" -T json -J "frame demo demo_batch"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
