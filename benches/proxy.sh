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

for relay in direct socat headless decoding; do
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
