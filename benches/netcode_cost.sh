#!/usr/bin/env bash
# What decrypting costs end to end (issue 26): `bitlens decode --json` and `check` of a netcode
# 1.02 capture with its key log against the same inner datagrams in the clear, one hyperfine
# run (the four commands alternate), then callgrind's instruction counts of the same four
# commands on a smaller pair of captures.
#
#   bash benches/netcode_cost.sh        # N=1000000 datagrams; results in target/bench-netcode/
#
# The captures come from inspector/examples/netcode_capture.rs: the game port's datagrams of
# `bitlens synth --seed 1` (demo packets, 4 clients and their server), and each of them as a
# netcode payload packet sealed with its client's session key for that direction (same
# addresses and times), with the key log.
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/bench-netcode
mkdir -p "$out"
n=${N:-1000000}
cargo build --release -q -p bitlens --bin bitlens --example netcode_capture
bitlens=target/release/bitlens
make=target/release/examples/netcode_capture
"$make" "$out/big" "$n"
"$make" "$out/small" "${SMALL:-20000}"
echo "machine: $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ); $("$bitlens" --version)"
nc() { echo "--decode 40000=netcode+demo --netcode-keylog $1/netcode.keylog"; }
if command -v hyperfine >/dev/null; then
  hyperfine -N -w 1 -r "${RUNS:-5}" -u second --export-json "$out/results.json" \
    -n "clear decode --json" "$bitlens decode $out/big/clear.pcap --json" \
    -n "netcode decode --json" "$bitlens decode $out/big/netcode.pcap $(nc "$out/big") --json" \
    -n "clear check" "$bitlens check $out/big/clear.pcap" \
    -n "netcode check" "$bitlens check $out/big/netcode.pcap $(nc "$out/big")"
else
  echo "no hyperfine: the times are skipped"
fi
if command -v valgrind >/dev/null; then
  total() { sed -n 's/^totals: *\([0-9]*\).*/\1/p; s/^summary: *\([0-9]*\).*/\1/p' "$1" | head -1; }
  count() { # name, command...
    local name=$1; shift
    valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.$name" "$@" >/dev/null 2>&1 || true
    echo "instr $name: $(total "$out/callgrind.$name")"
  }
  s=$out/small
  count clear-json "$bitlens" decode "$s/clear.pcap" --json
  # shellcheck disable=SC2046
  count netcode-json "$bitlens" decode "$s/netcode.pcap" $(nc "$s") --json
  count clear-check "$bitlens" check "$s/clear.pcap"
  # shellcheck disable=SC2046
  count netcode-check "$bitlens" check "$s/netcode.pcap" $(nc "$s")
else
  echo "no valgrind: instruction counts skipped"
fi
