#!/usr/bin/env bash
# Every figure of BENCHMARKS.md from one command: the seven criterion benches of the codec, the
# serialize.rs side-by-side (harness times, times over 16 code placements, callgrind counts), the captures against tshark
# (idle, then with one core busy), the live proxy against socat and direct loopback (closed loop,
# burst, instructions per datagram), netcode decryption against the clear, then the table of ratios
# (benches/summary.sh). Logs and the table go to target/bench-all/; each step's log starts with
# the time and the load average, so a disturbed step shows. Run it on an idle machine: about 30 minutes on 2 cores.
#
#   bash benches/all.sh                 # SERIALIZE_RS=/path/to/serialize.rs clone (default /tmp/serialize-rs)
#                                       # PEERS=/path/to/shared/peers (default ../shared/peers)
#
# Without a serialize.rs clone, or without valgrind, those rows are skipped and say so.
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/bench-all
mkdir -p "$out"
# What the steps run besides cargo (Debian packages), installed when missing: socat (the proxy's
# peer), hyperfine (captures, netcode cost), valgrind (instruction counts).
need=()
for tool in socat hyperfine valgrind; do command -v "$tool" >/dev/null || need+=("$tool"); done
if [ ${#need[@]} -gt 0 ] && command -v apt-get >/dev/null; then
  echo "installing: ${need[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
    { $sudo apt-get update -qq >/dev/null && $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; } ||
    echo "could not install ${need[*]}: their rows are skipped and say so"
fi
stamp() { echo "== $1 $(date -u +%FT%H:%M:%SZ) load $(cut -d' ' -f1-3 /proc/loadavg)"; }
{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GiB"
  rustc --version
  git log -1 --format='commit %h %s' 2>/dev/null || true
} | tee "$out/machine.txt"
for group in bitpacker entities packets tagged batch schema throughput; do
  { stamp "$group"
    cargo bench -q -p bitlens-codec --bench "$group" -- --warm-up-time 1 --measurement-time 4
  } 2>&1 | tee "$out/$group.log"
done
srs=${SERIALIZE_RS:-/tmp/serialize-rs}
if [ -f "$srs/Cargo.toml" ]; then
  { stamp "serialize.rs time"; bash benches/serialize_rs.sh time "$srs"; } 2>&1 | tee "$out/serialize_rs_time.log"
  { stamp "serialize.rs placement"; bash benches/serialize_rs.sh placement "$srs"; } 2>&1 | tee "$out/serialize_rs_placement.log"
  if command -v valgrind >/dev/null; then
    { stamp "serialize.rs count"; bash benches/serialize_rs.sh count "$srs"; } 2>&1 | tee "$out/serialize_rs_count.log"
  else
    echo "no valgrind: serialize.rs instruction counts skipped" | tee "$out/serialize_rs_count.log"
  fi
else
  echo "no serialize.rs clone at $srs: its rows are skipped" | tee "$out/serialize_rs_time.log" "$out/serialize_rs_placement.log" "$out/serialize_rs_count.log"
fi
{ stamp captures; bash benches/captures.sh; } 2>&1 | tee "$out/captures.log"
{ stamp "captures, one core busy"; BUSY=1 bash benches/captures.sh; } 2>&1 | tee "$out/captures-busy.log"
if command -v socat >/dev/null; then
  { stamp proxy; bash benches/proxy.sh; } 2>&1 | tee "$out/proxy.log"
else
  echo "no socat: the live proxy's rows are skipped" | tee "$out/proxy.log"
fi
{ stamp "netcode cost"; bash benches/netcode_cost.sh; } 2>&1 | tee "$out/netcode_cost.log"
stamp done | tee "$out/done.txt"
bash benches/summary.sh | tee "$out/table.md"
