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
# including the dependencies' generic code instantiated in it. Except an oracle: a crate of this
# repository whose manifest says `fuzz-oracle = true` (under `[package.metadata.bitlens]`) holds
# code the harnesses run only to check the code under test (codec/fuzz-oracle: parsing a
# `decode --json` line back with serde_json); it is compiled like a dependency, without the pass,
# so libFuzzer is not steered towards inputs that exercise the checker. Its checks all still run.
# The rule: whatever a harness calls only to compute an expected value or to read an output back
# goes into such a crate, with non-generic functions (a generic one would be instantiated, and
# instrumented, in its caller).
#
# A crate of this repository that forbids `unsafe` (the workspace's `unsafe_code = "forbid"`, which
# cargo passes as `--forbid=unsafe_code`, or `#![forbid(unsafe_code)]` in its crate root) also
# drops `-Zsanitizer=address` (third pass): safe code cannot make a memory error that ASan's
# instrumentation of its loads and stores would see; the ASan runtime, its allocator and every
# crate that may hold `unsafe` (dependencies, the guard allocator, the fuzz crate and targets) keep
# it. The rule reads the compilation's own flags and source, so a crate that gains `unsafe`
# (and so loses the forbid) is instrumented again. A dependency whose crate root forbids `unsafe`
# (toml, toml_datetime, serde_spanned, toml_parser without its `unsafe` feature, clap ...) drops
# ASan as well (fourth pass), once an uncapped check has shown that rustc enforces the forbid on
# it (cargo's `--cap-lints allow` would lift it: `uncapped_check_passes`).
# FUZZ_ASAN_ALL=1 keeps ASan in every crate.
#
# Any other compilation (no sancov pass asked for: cargo build, test, clippy, doc) is run as is.
# FUZZ_INSTRUMENT_ALL=1 instruments every crate, as cargo fuzz alone does (coverage and ASan).
case " $* " in
  *" -Cpasses=sancov-module "* | *" passes=sancov-module "*) ;;
  *) exec "$@" ;;
esac
[ "${FUZZ_INSTRUMENT_ALL:-0}" = 1 ] && exec "$@"
root=$(cd "$(dirname "$0")/.." && pwd -P)
# Does this compilation forbid `unsafe` in the whole crate? Either cargo passes the workspace's
# `[lints.rust] unsafe_code = "forbid"` (`--forbid=unsafe_code` or `-F unsafe_code`), or the crate
# root (the `.rs` file on the command line) has `#![forbid(unsafe_code)]` (alone or in a list),
# or `#![cfg_attr(not(feature = "X"), forbid(unsafe_code))]` and this compilation does not
# enable feature X (no `--cfg feature="X"`), or `#![cfg_attr(not(test), forbid(unsafe_code))]`
# and this is no `--test` build: rustc itself then refuses any `unsafe` block, function or impl
# in the crate, and no `allow` can lift a forbid. Any other form (a forbid over several lines,
# another cfg) is not decided here: the crate keeps ASan.
forbids_unsafe() {
  prev= src= feats=' ' test=0
  for arg do
    case "$prev $arg" in
      "-F unsafe_code" | "--forbid unsafe_code" | *" -Funsafe_code" | *" --forbid=unsafe_code") return 0 ;;
      "--cfg feature="*) feats="$feats${arg#feature=} " ;;
    esac
    case "$arg" in
      --cfg=feature=*) feats="$feats${arg#--cfg=feature=} " ;;
      --test) test=1 ;;
      *.rs) [ -z "$src" ] && src=$arg ;;
    esac
    prev=$arg
  done
  [ -n "$src" ] || return 1
  case "$src" in
    /*) ;;
    *) [ -f "$src" ] || src=${CARGO_MANIFEST_DIR:-.}/$src ;;
  esac
  lint='forbid\(([^]]*[(, ])?unsafe_code([, ][^]]*)?\)'
  grep -Eq "^[[:space:]]*#!\[$lint\]" "$src" 2>/dev/null && return 0
  [ "$test" = 0 ] &&
    grep -Eq "^[[:space:]]*#!\[cfg_attr\(not\(test\),[[:space:]]*$lint\)\]" "$src" 2>/dev/null &&
    return 0
  for feat in $(sed -nE "s/^[[:space:]]*#!\[cfg_attr\(not\(feature[[:space:]]*=[[:space:]]*(\"[A-Za-z0-9_-]+\")\),[[:space:]]*$lint\)\][[:space:]]*\$/\1/p" "$src" 2>/dev/null); do
    case "$feats" in
      *" $feat "*) ;;
      *) return 0 ;;
    esac
  done
  return 1
}
# A dependency's compilation has `--cap-lints allow` (cargo passes it for every crate from outside
# the workspace), which lowers even a forbid to allow: its root's forbid is not enforced by the
# compilation itself. So the crate is checked once more, as rustc would enforce it: the same
# command with `--emit=metadata` into a scratch folder, without `--cap-lints` and with
# `-F unsafe_code`, its messages discarded (cargo reads rustc's output). It succeeds only if the
# crate holds no `unsafe` in this configuration (cfg and features as compiled); any failure (an
# `unsafe`, an `allow(unsafe_code)` against the forbid, any other lint the crate denies) keeps ASan.
uncapped_check_passes() {
  scratch=$(mktemp -d) || return 1
  skip=
  for arg do
    shift
    if [ -n "$skip" ]; then skip=; continue; fi
    case "$arg" in
      --cap-lints | --emit | --out-dir | -o) skip=1 ;;
      --cap-lints=* | --emit=* | --out-dir=*) ;;
      *) set -- "$@" "$arg" ;;
    esac
  done
  "$@" --emit=metadata --out-dir "$scratch" -F unsafe_code > /dev/null 2>&1
  ok=$?
  rm -rf "$scratch"
  return $ok
}
# What to drop: the coverage instrumentation (cov) and ASan's (asan), 1 = drop.
cov=1 asan=0
if [ -n "${CARGO_MANIFEST_DIR:-}" ]; then
  dir=$(cd "$CARGO_MANIFEST_DIR" 2>/dev/null && pwd -P) || dir=$CARGO_MANIFEST_DIR
  case "$dir" in
    "$root" | "$root"/*)
      # A crate of this repository is code under test (instrumented), unless its manifest
      # marks it an oracle (`fuzz-oracle = true` under `[package.metadata.bitlens]`: code a
      # harness runs only to check the code under test, e.g. parsing its JSON back).
      cov=0
      grep -Eq '^[[:space:]]*fuzz-oracle[[:space:]]*=[[:space:]]*true' "$dir/Cargo.toml" 2>/dev/null &&
        cov=1
      # One that forbids `unsafe` compiles without ASan's instrumentation (the ASan runtime,
      # its allocator and every other crate keep it); FUZZ_ASAN_ALL=1 keeps ASan everywhere,
      # as cargo fuzz alone does. fuzz/README.md says why no check is lost.
      [ "${FUZZ_ASAN_ALL:-0}" != 1 ] && forbids_unsafe "$@" && asan=1
      ;;
    *)
      # A dependency whose root forbids `unsafe` (toml, toml_datetime, serde_spanned, toml_parser
      # without its `unsafe` feature ...) is in the same position, once the forbid is checked
      # without the cap (fourth pass).
      if [ "${FUZZ_ASAN_ALL:-0}" != 1 ] && forbids_unsafe "$@"; then
        case " $* " in
          *" --cap-lints"*) uncapped_check_passes "$@" && asan=1 ;;
          *) asan=1 ;;
        esac
      fi
      ;;
  esac
fi
[ -n "${FUZZ_WRAPPER_LOG:-}" ] && echo "drop-cov=$cov drop-asan=$asan ${dir:-?}" >> "$FUZZ_WRAPPER_LOG"
[ "$cov" = 0 ] && [ "$asan" = 0 ] && exec "$@"
# Drop the sancov pass (its -sanitizer-coverage-* LLVM options then do nothing) and the branch
# folding switch, and/or `-Zsanitizer=address`, in both spellings (`-Cx` and `-C x`, `-Zx`, `-Z x`).
dropped() {
  case "$cov:$1" in
    1:passes=sancov-module | 1:llvm-args=-simplifycfg-branch-fold-threshold=0) return 0 ;;
  esac
  [ "$asan:$1" = 1:sanitizer=address ]
}
flag=
for arg do
  shift
  if [ -n "$flag" ]; then
    dropped "$arg" || set -- "$@" "$flag" "$arg"
    flag=
    continue
  fi
  case "$arg" in
    -C | -Z) flag=$arg ;;
    -C?* | -Z?*) dropped "${arg#-?}" || set -- "$@" "$arg" ;;
    *) set -- "$@" "$arg" ;;
  esac
done
[ -n "$flag" ] && set -- "$@" "$flag"
exec "$@"
