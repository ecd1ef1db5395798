#!/usr/bin/env bash
# OSS-Fuzz / ClusterFuzzLite build script: builds every fuzz target into $OUT, with its seed
# corpus as $OUT/<target>_seed_corpus.zip and libFuzzer options as $OUT/<target>.options.
# In OSS-Fuzz's base-builder-rust image this runs as `$SRC/bitlens/fuzz/build.sh` with
# $SANITIZER set; CI runs it outside Docker from fuzz/smoke.sh with a temporary OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the output folder}"

sanitizer=${FUZZ_SANITIZER:-${SANITIZER:-address}}
case "$sanitizer" in
  address | memory | thread | leak | none) ;;
  coverage | undefined | introspector) sanitizer=none ;; # built by the image's own flags
  *) echo "build.sh: unknown sanitizer $sanitizer" >&2; exit 1 ;;
esac
# shellcheck disable=SC2086 # CARGO_FUZZ_TOOLCHAIN is "+nightly" or empty
target_dir=${FUZZ_TARGET_DIR:-fuzz/target}
cargo ${CARGO_FUZZ_TOOLCHAIN:-} fuzz build -O -s "$sanitizer" --target-dir "$target_dir"

bin=$target_dir/x86_64-unknown-linux-gnu/release
for src in fuzz/fuzz_targets/*.rs; do
  t=$(basename "$src" .rs)
  cp "$bin/$t" "$OUT/$t"
  rm -f "$OUT/${t}_seed_corpus.zip"
  (cd "corpus/$t" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
  printf '[libfuzzer]\nrss_limit_mb = 2048\ntimeout = 10\n' > "$OUT/$t.options"
done
