#!/usr/bin/env bash
# Fuzz smoke for CI (.ci/run calls it after `cargo test`, which already replayed the corpus on
# stable): installs the pinned cargo-fuzz, builds every target once, runs each for FUZZ_SECONDS
# from the committed corpus, checks the ClusterFuzzLite / OSS-Fuzz build (fuzz/check_cflite.sh),
# and fails on any finding. See fuzz/README.md.
#
# FUZZ_SECONDS defaults to what FUZZ_BUDGET (default 360 s of wall time for all the runs, so that
# the whole CI stays under 30 minutes) gives each target, FUZZ_JOBS at a time, at most 60 s: 16
# targets on 2 cores get 45 s each.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_FUZZ_VERSION=0.13.2
# ASan by default; FUZZ_SANITIZER=none builds faster and runs ~2x more execs (see README).
SANITIZER=${FUZZ_SANITIZER:-address}
TRIPLE=x86_64-unknown-linux-gnu
# Where cargo fuzz builds (default fuzz/target).
TARGET_DIR=${FUZZ_TARGET_DIR:-fuzz/target}

say() { printf 'fuzz smoke: %s\n' "$*"; }

if [ "$(uname -m)" != x86_64 ] || [ "$(uname -s)" != Linux ]; then
  say "SKIPPED: only x86_64 Linux is set up (libFuzzer + ASan); the stable corpus replay in cargo test still ran"
  exit 0
fi

if ! cargo fuzz --version 2>/dev/null | grep -qx "cargo-fuzz $CARGO_FUZZ_VERSION"; then
  say "installing cargo-fuzz $CARGO_FUZZ_VERSION"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi

toolchain=()
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  toolchain=(+nightly)
  say "using the nightly toolchain ($(rustc +nightly --version))"
else
  say "NO NIGHTLY TOOLCHAIN: building with stable and RUSTC_BOOTSTRAP=1 ($(rustc --version));"
  say "if that fails, only the stable corpus replay of cargo test protects the readers"
  export RUSTC_BOOTSTRAP=1
fi

targets=()
for f in fuzz/fuzz_targets/*.rs; do targets+=("$(basename "$f" .rs)"); done

say "building ${#targets[@]} targets (sanitizer: $SANITIZER)"
start=$(date +%s)
cargo "${toolchain[@]}" fuzz build -O -s "$SANITIZER" --target-dir "$TARGET_DIR"
say "built in $(( $(date +%s) - start )) s"

bin=$TARGET_DIR/$TRIPLE/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=()
# One target per core at a time: the machine's cores are the CI budget.
jobs=${FUZZ_JOBS:-$(nproc)}
rounds=$(( (${#targets[@]} + jobs - 1) / jobs ))
budget=${FUZZ_BUDGET:-360}
per_round=$(( budget / rounds ))
SECONDS_PER_TARGET=${FUZZ_SECONDS:-$(( per_round < 60 ? per_round : 60 ))}
if [ -z "${FUZZ_SECONDS:-}" ] && [ "$SECONDS_PER_TARGET" -lt 10 ]; then
  say "FUZZ_BUDGET=$budget s over $rounds rounds leaves $SECONDS_PER_TARGET s a target: raise it or FUZZ_JOBS"
  exit 1
fi
run_one() {
  local t=$1
  mkdir -p "$work/$t" fuzz/artifacts/"$t"
  # New inputs go to a scratch folder: the committed corpus is only read.
  if "$bin/$t" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 \
      -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t/" \
      "$work/$t" "corpus/$t" > "$work/$t.log" 2>&1; then
    echo ok > "$work/$t.status"
  else
    echo finding > "$work/$t.status"
  fi
}
say "running ${#targets[@]} targets, ${SECONDS_PER_TARGET} s each, $jobs at a time"
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  batch=("${targets[@]:i:jobs}")
  for t in "${batch[@]}"; do
    if [ -d "corpus/$t" ]; then run_one "$t" & else say "corpus/$t is missing"; failed+=("$t (no corpus)"); fi
  done
  wait
  for t in "${batch[@]}"; do
    [ -f "$work/$t.status" ] || continue
    if [ "$(cat "$work/$t.status")" = ok ]; then
      printf 'fuzz smoke: %s: ' "$t"
      grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/$t.log" \
        | tr '\n' ' '; echo
    else
      tail -n 40 "$work/$t.log"
      say "FINDING in $t: see fuzz/artifacts/$t/ (reproduce: cargo fuzz run $t fuzz/artifacts/$t/<file>)"
      failed+=("$t")
    fi
  done
done

say "checking the ClusterFuzzLite / OSS-Fuzz build (.clusterfuzzlite/build.sh -> fuzz/build.sh) without Docker"
CARGO_FUZZ_TOOLCHAIN="${toolchain[*]}" FUZZ_SANITIZER="$SANITIZER" FUZZ_TARGET_DIR="$TARGET_DIR" \
  bash fuzz/check_cflite.sh || failed+=("ClusterFuzzLite build (fuzz/check_cflite.sh)")

# A game's own fuzz crate, as `bitlens fuzz-init` writes it (examples/*/fuzz): it must build with
# cargo-fuzz as written, and its targets run like ours, from its committed corpus.
user_targets=0
for dir in examples/*/fuzz; do
  [ -f "$dir/Cargo.toml" ] || continue
  say "building $dir (sanitizer: $SANITIZER)"
  start=$(date +%s)
  if ! cargo "${toolchain[@]}" fuzz build -O -s "$SANITIZER" --fuzz-dir "$dir"; then
    failed+=("$dir (build)")
    continue
  fi
  say "built in $(( $(date +%s) - start )) s"
  # Where cargo put them: its target folder for that crate (CARGO_TARGET_DIR, a config's
  # build.target-dir, or the crate's own target/), as cargo metadata says.
  if ! target=$(cargo metadata --format-version 1 --no-deps --manifest-path "$dir/Cargo.toml" \
      | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'); then
    failed+=("$dir (cargo metadata)")
    continue
  fi
  user_bin=$target/$TRIPLE/release
  for src in "$dir"/fuzz_targets/*.rs; do
    t=$(basename "$src" .rs)
    user_targets=$((user_targets + 1))
    mkdir -p "$work/user-$t" "$dir/artifacts/$t"
    if "$user_bin/$t" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 \
        -timeout=10 -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t/" \
        "$work/user-$t" "$dir/corpus/$t" > "$work/user-$t.log" 2>&1; then
      printf 'fuzz smoke: %s %s: ' "$dir" "$t"
      grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/user-$t.log" \
        | tr '\n' ' '; echo
    else
      tail -n 40 "$work/user-$t.log"
      say "FINDING in $dir $t: see $dir/artifacts/$t/"
      failed+=("$dir $t")
    fi
  done
done

if [ ${#failed[@]} -gt 0 ]; then
  say "FAILED: ${failed[*]}"
  exit 1
fi
say "all ${#targets[@]} targets (and $user_targets of examples/*/fuzz) ran ${SECONDS_PER_TARGET} s without a finding"
