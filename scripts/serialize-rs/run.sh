#!/bin/bash
# Checks bitlens against serialize.rs (github:mas-bandwidth/serialize.rs), the Rust library of
# the serialize 1.0 family (WIRE.md section 1, "Checking against serialize.rs"):
#
#   vectors.rs       every vector of codec/tests/vectors/ that serialize.rs has the operations
#                    for, written, read and measured with serialize.rs;
#   differential.rs  random operation sequences written by each library and read by the other,
#                    measured by both, and read from arbitrary bytes by both.
#
#   bash scripts/serialize-rs/run.sh SERIALIZE_RS_CLONE [SEQUENCES]
#
# SERIALIZE_RS_CLONE: a clone of serialize.rs (fetch github:mas-bandwidth/serialize.rs and
# `git clone` the mirror into /tmp). Nothing of serialize.rs is copied here; it is built from the
# clone. SEQUENCES defaults to 300000.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
srs=$(cd "${1:?usage: run.sh SERIALIZE_RS_CLONE [SEQUENCES]}" && pwd)
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
mkdir -p "$w/src/bin"
cp "$here/vectors.rs" "$w/src/bin/vectors.rs"
cp "$here/differential.rs" "$w/src/bin/differential.rs"
cat > "$w/Cargo.toml" <<T
[package]
name = "serialize-rs-check"
version = "0.1.0"
edition = "2024"
publish = false
[dependencies]
serialize = { path = "$srs" }
bitlens-codec = { path = "$root/codec" }
serde_json = "1"
hex = "0.4"
[profile.release]
overflow-checks = true
[workspace]
T
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/tmp/serialize-rs-check-target}
cargo build --release -q --manifest-path "$w/Cargo.toml"
"$CARGO_TARGET_DIR/release/vectors" "$root"/codec/tests/vectors/*.json
"$CARGO_TARGET_DIR/release/differential" "${2:-300000}"
