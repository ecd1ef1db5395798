#!/usr/bin/env bash
# Minimises corpus/<target>/ (all targets when none is named) the way `cargo fuzz cmin` does
# (libFuzzer -merge=1; here on edge coverage only, -use_counters=0 -use_cmp=0, which keeps the
# corpus at tens to a few hundred files), but keeps the named seed files and their names: the
# named files go into the merged corpus first, and only hash-named inputs that add coverage
# beyond them are kept.
#   bash fuzz/cmin.sh [target...]      (builds the targets first with cargo fuzz build -O)
set -euo pipefail
cd "$(dirname "$0")/.."
toolchain=()
rustup toolchain list 2>/dev/null | grep -q '^nightly' && toolchain=(+nightly)
target_dir=${FUZZ_TARGET_DIR:-fuzz/target}
cargo "${toolchain[@]}" fuzz build -O --target-dir "$target_dir"
bin=$target_dir/x86_64-unknown-linux-gnu/release
if [ $# -eq 0 ]; then
  set -- $(for f in fuzz/fuzz_targets/*.rs; do basename "$f" .rs; done)
fi
for t in "$@"; do
  dir=corpus/$t
  tmp=$(mktemp -d)
  # Named seeds: anything whose name is not a 40-hex-digit libFuzzer hash.
  find "$dir" -maxdepth 1 -type f -regextype posix-extended ! -regex '.*/[0-9a-f]{40}' -exec cp {} "$tmp/" \;
  before=$(find "$dir" -maxdepth 1 -type f | wc -l)
  "$bin/$t" -merge=1 -use_counters=0 -use_cmp=0 -rss_limit_mb=2048 -timeout=10 "$tmp" "$dir" > "$tmp.log" 2>&1 \
    || { tail -20 "$tmp.log"; echo "cmin: merge of $t failed" >&2; exit 1; }
  find "$dir" -maxdepth 1 -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' -delete
  find "$tmp" -maxdepth 1 -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' -exec cp {} "$dir/" \;
  after=$(find "$dir" -maxdepth 1 -type f | wc -l)
  echo "cmin $t: $before -> $after files ($(cat "$dir"/* | wc -c) bytes)"
  rm -rf "$tmp" "$tmp.log"
done
