#!/usr/bin/env bash
# bitlens against serialize.rs (github:mas-bandwidth/serialize.rs), the same-wire Rust peer, on
# its own throughput workload. serialize.rs is not in the package registry: clone it first
# (its mirror, or GitHub) and pass the clone's path, or set SERIALIZE_RS.
#
#   bash benches/serialize_rs.sh time  [SERIALIZE_RS_CLONE]  # the peers' harness: ns/packet, MB/s, same-run ratios
#   bash benches/serialize_rs.sh count [SERIALIZE_RS_CLONE]  # callgrind instructions per packet / per 64 KiB pass
#   bash benches/serialize_rs.sh placement [SERIALIZE_RS_CLONE]  # same-run ratios over 16 code placements
#
# `time` runs ../shared/peers/serialize-rs/run.sh (PEERS overrides where it lives): both
# libraries in one process, best of 7 trials, three rounds. `count` builds
# benches/serialize_rs/count.rs against both libraries and counts each loop under callgrind
# (load-independent), minus the set-up alone. `placement` builds benches/serialize_rs/placement.rs
# (functions aligned to 64 bytes, each measured function moved by 0..60 bytes; its doc says why)
# and prints each workload's ratio per placement, then the median and range.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: serialize_rs.sh time|count|placement [SERIALIZE_RS_CLONE]}
srs=${2:-${SERIALIZE_RS:-/tmp/serialize-rs}}
if [ ! -f "$srs/Cargo.toml" ]; then
  echo "serialize_rs.sh: no serialize.rs clone at $srs (git clone https://github.com/mas-bandwidth/serialize.rs $srs)" >&2
  exit 2
fi
srs=$(cd "$srs" && pwd)
echo "serialize.rs: $(git -C "$srs" describe --tags --always 2>/dev/null || echo '?') at $srs"
# A throw-away crate in a temporary folder: benches/serialize_rs/NAME.rs as its main, beside the
# shared serialize.rs side (srs.rs), against both libraries.
project() {
  w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
  mkdir -p "$w/src"
  for f in "$1.rs:main.rs" srs.rs:srs.rs; do
    sed "s#\"../../codec/benches/common/throughput.rs\"#\"$PWD/codec/benches/common/throughput.rs\"#" \
      "benches/serialize_rs/${f%%:*}" > "$w/src/${f##*:}"
  done
  cat > "$w/Cargo.toml" <<T
[package]
name = "serialize-rs-$1"
version = "0.1.0"
edition = "2024"
publish = false
[dependencies]
serialize = { path = "$srs" }
bitlens-codec = { path = "$PWD/codec" }
[profile.release]
debug = 1
T
}
case "$mode" in
  time)
    peers=${PEERS:-../shared/peers}
    CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target/h2h} bash "$peers/serialize-rs/run.sh" "$srs" codec
    ;;
  count)
    command -v valgrind >/dev/null || { echo "serialize_rs.sh count needs valgrind" >&2; exit 2; }
    project count
    target=${CARGO_TARGET_DIR:-$PWD/target/serialize-rs-count}
    CARGO_TARGET_DIR=$target cargo build --release -q --manifest-path "$w/Cargo.toml"
    bin=$target/release/serialize-rs-count
    ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$@" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'; }
    base=$(ir none bitlens)
    echo "| loop | bitlens | serialize.rs | bitlens / serialize.rs |"
    echo "|---|---|---|---|"
    for m in vary write read measure bp-write bp-read; do
      case $m in bp-*) per=20; unit="per 64 KiB pass";; *) per=100000; unit="per packet";; esac
      a=$(ir "$m" bitlens); b=$(ir "$m" serialize.rs)
      awk -v m="$m" -v u="$unit" -v a="$a" -v b="$b" -v z="$base" -v n="$per" \
        'BEGIN { x = (a - z) / n; y = (b - z) / n; printf "| %s (%s) | %.0f | %.0f | %.2f |\n", m, u, x, y, x / y }'
    done
    ;;
  placement)
    project placement
    target=${CARGO_TARGET_DIR:-$PWD/target/serialize-rs-placement}
    CARGO_TARGET_DIR=$target RUSTFLAGS="-C llvm-args=-align-all-functions=6 -C llvm-args=-align-loops=1" \
      cargo build --release -q --manifest-path "$w/Cargo.toml"
    "$target/release/serialize-rs-placement"
    ;;
  *) echo "serialize_rs.sh: unknown mode $mode (time, count or placement)" >&2; exit 2 ;;
esac
