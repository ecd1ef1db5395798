#!/usr/bin/env bash
# `bitlens proxy` on localhost beside a plain `socat` UDP relay and no relay at all: round-trip
# latency at a quiet rate (p50 / p99) and the highest rate forwarded without loss.
#
#   bash benches/proxy.sh            # results in target/bench-proxy/results.txt
#   RATES="10000 20000" SECS=3 bash benches/proxy.sh
#
# One program (inspector/examples/proxy_load.rs) is both the echo server (127.0.0.1:47001) and
# the client, which sends demo PacketAs (so the proxy has something to decode) through the
# relay on 127.0.0.1:47002. Relays:
#   direct    the client talks to the echo server (the baseline)
#   socat     socat UDP4-LISTEN -> UDP4 (one peer, no fork: the plainest relay)
#   headless  bitlens proxy --quiet (forwarding only: nothing decoded, no output)
#   decoding  bitlens proxy --decode 47001=demo > /dev/null (every datagram decoded, one
#             NDJSON line each)
# A relay forwards two datagrams per round trip (request and echo). Each rate step starts the
# relay afresh (socat serves the first peer only). Everything shares the machine's cores:
# client, echo server and relay are on the same host, so the figures are a floor.
#
# Then (issue 30, aim 5), each relay started afresh per measurement:
#   closed    one round trip in flight at a time for CLOSED_SECS (default 5) seconds, round
#             trips per second; ROUNDS (default 2) rounds over the relays in turn, so each
#             ratio to direct and to socat is of the same round
#   burst     BURST (default 200000) datagrams sent back to back to a server that only counts
#             them (its SO_RCVBUF 8 MiB, forced past net.core.rmem_max when run as root, as the
#             proxy's 128 MiB are: the start-up line printed after the bursts says which);
#             delivered share, and the host's receive-buffer drops in the run
#   instr     with valgrind: callgrind over the relay process (all threads, user space) while
#             `latency --rate 500 --seconds 10` runs through it, minus a run of the relay that
#             forwarded nothing for as long; instructions per forwarded datagram
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/bench-proxy
mkdir -p "$out"
command -v socat >/dev/null || { echo "socat is needed (apt-get install socat)"; exit 2; }
cargo build --release -q -p bitlens --bin bitlens --example proxy_load
bitlens=target/release/bitlens
load=target/release/examples/proxy_load
server=127.0.0.1:47001
relay_addr=127.0.0.1:47002
secs=${SECS:-2}
rates=${RATES:-"5000 10000 20000 40000 60000 80000 100000 150000"}
results="$out/results.txt"
: > "$results"
say() { echo "$*" | tee -a "$results"; }
say "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ)"
say "$("$bitlens" --version); $(socat -V | grep -m1 'socat version')"

pid=""
start() {
  case $1 in
    direct) pid="" ;;
    socat) socat -T 60 UDP4-LISTEN:47002,bind=127.0.0.1,reuseaddr "UDP4:$server" & pid=$! ;;
    headless) "$bitlens" proxy --listen "$relay_addr" --upstream "$server" --quiet 2>>"$out/proxy.log" & pid=$! ;;
    decoding) "$bitlens" proxy --listen "$relay_addr" --upstream "$server" --decode 47001=demo >/dev/null 2>>"$out/proxy.log" & pid=$! ;;
  esac
  sleep 0.5
}
stop() {
  if [ -n "$pid" ]; then
    kill -INT "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
  fi
}
trap stop EXIT

for relay in ${ONLY_NEW:+none} direct socat headless decoding; do
  [ "$relay" = none ] && break
  target=$relay_addr
  [ "$relay" = direct ] && target=$server
  start "$relay"
  say "$relay $("$load" --server "$server" --target "$target" latency --rate 1000 --seconds 5)"
  stop
  for rate in $rates; do
    start "$relay"
    say "$relay $("$load" --server "$server" --target "$target" throughput --rates "$rate" --seconds "$secs")"
    stop
  done
done

say "net.core.rmem_max $(cat /proc/sys/net/core/rmem_max 2>/dev/null || echo ?), net.core.wmem_max $(cat /proc/sys/net/core/wmem_max 2>/dev/null || echo ?)"
for round in $(seq "${ROUNDS:-2}"); do
  for relay in direct socat headless decoding; do
    target=$relay_addr
    [ "$relay" = direct ] && target=$server
    start "$relay"
    say "round $round $relay $("$load" --server "$server" --target "$target" closed --seconds "${CLOSED_SECS:-5}")"
    stop
  done
done
for relay in direct socat headless decoding; do
  target=$relay_addr
  [ "$relay" = direct ] && target=$server
  start "$relay"
  say "$relay $("$load" --server "$server" --target "$target" burst --count "${BURST:-200000}")"
  stop
done
grep -h 'socket buffers' "$out/proxy.log" | tail -1 | sed 's/^/relay start-up (the last relay run): /' | tee -a "$results" || true

if command -v valgrind >/dev/null; then
  # Total instructions of a callgrind profile.
  total() { sed -n 's/^totals: *\([0-9]*\).*/\1/p; s/^summary: *\([0-9]*\).*/\1/p' "$1" | head -1; }
  vg="valgrind --tool=callgrind --callgrind-out-file"
  for relay in socat headless decoding; do
    for phase in idle load; do
      f="$out/callgrind.$relay.$phase"
      case $relay in
        socat) $vg="$f" socat -T 60 UDP4-LISTEN:47002,bind=127.0.0.1,reuseaddr "UDP4:$server" 2>/dev/null & pid=$! ;;
        headless) $vg="$f" "$bitlens" proxy --listen "$relay_addr" --upstream "$server" --quiet 2>>"$out/proxy.log" & pid=$! ;;
        decoding) $vg="$f" "$bitlens" proxy --listen "$relay_addr" --upstream "$server" --decode 47001=demo >/dev/null 2>>"$out/proxy.log" & pid=$! ;;
      esac
      sleep 3
      if [ "$phase" = load ]; then
        line=$("$load" --server "$server" --target "$relay_addr" latency --rate 500 --seconds 10)
      else
        sleep 10.5; line="latency: 0 of 0"
      fi
      kill -INT "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""
      if [ "$phase" = idle ]; then idle=$(total "$f"); continue; fi
      back=$(echo "$line" | sed -n 's/latency: \([0-9]*\) of.*/\1/p')
      busy=$(total "$f")
      say "instr $relay: $busy - $idle idle over $((2 * back)) datagrams = $(( (busy - idle) / (2 * back) )) per datagram ($line)"
    done
  done
else
  say "no valgrind: instructions per datagram skipped"
fi
