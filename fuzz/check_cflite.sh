#!/usr/bin/env bash
# Checks the ClusterFuzzLite / OSS-Fuzz integration without Docker: the files of .clusterfuzzlite/
# and .github/workflows/cflite_*.yml say what the docs require, and .clusterfuzzlite/build.sh,
# run the way the image runs it (the source at $SRC/<name> as the Dockerfile copies it, the
# working directory its WORKDIR, the script at $SRC/build.sh), puts every target of
# fuzz/fuzz_targets/ into $OUT with its seed corpus zip and options file, and nothing else.
#   bash fuzz/check_cflite.sh
# fuzz/smoke.sh calls it (CI); CARGO_FUZZ_TOOLCHAIN (+nightly), FUZZ_SANITIZER and
# FUZZ_TARGET_DIR are passed on to fuzz/build.sh, so the smoke's build is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
say() { printf 'check_cflite: %s\n' "$*"; }
fail() { say "FAILED: $*"; exit 1; }

# ---- the files ----
dockerfile=.clusterfuzzlite/Dockerfile
for f in .clusterfuzzlite/project.yaml "$dockerfile" .clusterfuzzlite/build.sh \
  .github/workflows/cflite_pr.yml .github/workflows/cflite_batch.yml; do
  [ -f "$f" ] || fail "$f is missing"
done
grep -qx 'language: rust' .clusterfuzzlite/project.yaml || fail "project.yaml must say language: rust"
grep -q '^FROM gcr.io/oss-fuzz-base/base-builder-rust' "$dockerfile" \
  || fail "the Dockerfile must start from gcr.io/oss-fuzz-base/base-builder-rust"
# The source folder the Dockerfile copies the repository to, its WORKDIR, and where build.sh goes.
name=$(sed -n 's|^COPY \. \$SRC/\([A-Za-z0-9_-]*\)$|\1|p' "$dockerfile")
[ -n "$name" ] || fail "the Dockerfile must COPY . \$SRC/<name>"
grep -qx "WORKDIR \$SRC/$name" "$dockerfile" || fail "the Dockerfile's WORKDIR must be \$SRC/$name"
grep -qx 'COPY .clusterfuzzlite/build.sh $SRC/' "$dockerfile" \
  || fail "the Dockerfile must COPY .clusterfuzzlite/build.sh \$SRC/"
grep -q "\$SRC/$name" .clusterfuzzlite/build.sh || fail "build.sh must work in \$SRC/$name"
# The workflows: the two actions, language rust, and the modes the docs give PR and batch fuzzing.
python3 - <<'PY' || fail "a workflow does not say what ClusterFuzzLite needs (above)"
import sys, yaml
want = {".github/workflows/cflite_pr.yml": ("pull_request", "code-change"),
        ".github/workflows/cflite_batch.yml": ("schedule", "batch"),
        ".github/workflows/cflite_cron.yml": ("schedule", "prune")}
ok = True
for path, (event, mode) in want.items():
    doc = yaml.safe_load(open(path))
    on = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` as true
    steps = [s for job in doc["jobs"].values() for s in job["steps"]]
    uses = [s.get("uses", "") for s in steps]
    build = [s for s in steps if s.get("uses", "").startswith("google/clusterfuzzlite/actions/build_fuzzers@")]
    run = [s for s in steps if s.get("uses", "").startswith("google/clusterfuzzlite/actions/run_fuzzers@")]
    problems = []
    if event not in on:
        problems.append(f"not triggered by {event}")
    if not build or any(s["with"].get("language") != "rust" for s in build):
        problems.append("no build_fuzzers step with language: rust")
    if not run or any(s["with"].get("mode") != mode for s in run):
        problems.append(f"no run_fuzzers step with mode: {mode}")
    for p in problems:
        print(f"{path}: {p}", file=sys.stderr)
        ok = False
sys.exit(0 if ok else 1)
PY

# ---- build.sh as the image runs it ----
# The image's default toolchain is nightly; here, use nightly when rustup has one.
if [ -z "${CARGO_FUZZ_TOOLCHAIN+set}" ] && rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  export CARGO_FUZZ_TOOLCHAIN=+nightly
fi
src=$(mktemp -d)
out=$(mktemp -d)
trap 'rm -rf "$src" "$out"' EXIT
ln -s "$repo" "$src/$name"
cp .clusterfuzzlite/build.sh "$src/build.sh"
say "running \$SRC/build.sh with SRC=$src (\$SRC/$name -> this repository), OUT=$out"
start=$(date +%s)
(cd "$src/$name" && SRC=$src OUT=$out SANITIZER=${FUZZ_SANITIZER:-address} bash "$src/build.sh")
say "built in $(( $(date +%s) - start )) s"

targets=()
for f in fuzz/fuzz_targets/*.rs; do targets+=("$(basename "$f" .rs)"); done
missing=()
for t in "${targets[@]}"; do
  [ -x "$out/$t" ] || missing+=("$t")
  [ -s "$out/${t}_seed_corpus.zip" ] || missing+=("${t}_seed_corpus.zip")
  grep -q '^\[libfuzzer\]' "$out/$t.options" 2>/dev/null || missing+=("$t.options")
  # A seed zip holds every file of the committed corpus.
  if [ -s "$out/${t}_seed_corpus.zip" ]; then
    n_zip=$(unzip -Z1 "$out/${t}_seed_corpus.zip" | grep -vc '/$' || true)
    n_dir=$(find "corpus/$t" -type f | wc -l)
    [ "$n_zip" -eq "$n_dir" ] || missing+=("${t}_seed_corpus.zip ($n_zip of $n_dir files)")
  fi
done
[ ${#missing[@]} -eq 0 ] || fail "not in \$OUT: ${missing[*]}"
extra=$(find "$out" -maxdepth 1 -type f -perm -u+x -printf '%f\n' | sort | comm -23 - <(printf '%s\n' "${targets[@]}" | sort))
[ -z "$extra" ] || fail "binaries in \$OUT that are no fuzz target: $extra"
# Every binary is a libFuzzer target that runs its seeds (a few seconds at most).
for t in "${targets[@]}"; do
  "$out/$t" -runs=0 "corpus/$t" > "$out/$t.log" 2>&1 || { tail -5 "$out/$t.log"; fail "$t does not run its corpus"; }
done
say "ok: ${#targets[@]} targets, each with its seed corpus and options, and each runs its corpus"
