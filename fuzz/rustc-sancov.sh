#!/bin/sh
# rustc wrapper (.cargo/config.toml's build.rustc-wrapper): cargo runs `rustc-sancov.sh RUSTC ARGS`.
#
# Fuzz builds only (issue 30, aim 2; fuzz/README.md, "Fuzz throughput, issue 30"): when the
# arguments ask for libFuzzer's coverage instrumentation (`-Cpasses=sancov-module`, which cargo
# fuzz puts in RUSTFLAGS for every crate), a crate from outside this repository (crates.io and git
# dependencies: serde, toml, clap, ratatui ...) is compiled without that pass, so none of its code
# gets 8-bit counters or comparison hooks, and without cargo fuzz's
# `-simplifycfg-branch-fold-threshold=0` (kept branches for the coverage that crate no longer
# has). Every other flag stays: ASan (`-Zsanitizer=address`), `--cfg fuzzing`, `-Cdebug-assertions`
# if asked, the optimization level. A crate of this repository
# (its manifest folder inside the repository: codec/, inspector/, fuzz/, examples/ ...) compiles
# with the arguments as cargo gave them, so the code under test is instrumented as before,
# including the dependencies' generic code instantiated in it.
#
# Any other compilation (no sancov pass asked for: cargo build, test, clippy, doc) is run as is.
# FUZZ_INSTRUMENT_ALL=1 instruments every crate, as cargo fuzz alone does.
case " $* " in
  *" -Cpasses=sancov-module "* | *" passes=sancov-module "*) ;;
  *) exec "$@" ;;
esac
[ "${FUZZ_INSTRUMENT_ALL:-0}" = 1 ] && exec "$@"
root=$(cd "$(dirname "$0")/.." && pwd -P)
if [ -n "${CARGO_MANIFEST_DIR:-}" ]; then
  dir=$(cd "$CARGO_MANIFEST_DIR" 2>/dev/null && pwd -P) || dir=$CARGO_MANIFEST_DIR
  case "$dir" in
    "$root" | "$root"/*) exec "$@" ;;
  esac
fi
# A dependency: drop the sancov pass (its -sanitizer-coverage-* LLVM options then do nothing) and
# the branch folding switch, in both spellings (`-Cx` and `-C x`).
skip_next=0
for arg do
  shift
  if [ "$skip_next" = 1 ]; then
    skip_next=0
    case "$arg" in
      passes=sancov-module | llvm-args=-simplifycfg-branch-fold-threshold=0) continue ;;
    esac
    set -- "$@" -C "$arg"
    continue
  fi
  case "$arg" in
    -Cpasses=sancov-module | -Cllvm-args=-simplifycfg-branch-fold-threshold=0) ;;
    -C) skip_next=1 ;;
    *) set -- "$@" "$arg" ;;
  esac
done
[ "$skip_next" = 1 ] && set -- "$@" -C
exec "$@"
