#!/usr/bin/env bash
# Region coverage of the codec reached by the committed corpus, measured on the stable replay
# test (`codec/testkit/tests/corpus_replay.rs` runs every corpus file through the same harness functions
# as the fuzz targets), with `-C instrument-coverage` and LLVM tools of rustc's LLVM major
# version (Debian's llvm-NN; the toolchains here have no llvm-tools-preview component).
#
#   bash fuzz/coverage.sh            # summary per file, and the read paths' region coverage
#   HTML=1 bash fuzz/coverage.sh     # also an HTML report in fuzz/coverage/html/
set -euo pipefail
cd "$(dirname "$0")/.."

major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
profdata=$(command -v "llvm-profdata-$major" || command -v llvm-profdata || true)
cov=$(command -v "llvm-cov-$major" || command -v llvm-cov || true)
filt=$(command -v "llvm-cxxfilt-$major" || command -v llvm-cxxfilt || true)
if [ -z "$profdata" ] || [ -z "$cov" ]; then
  echo "coverage.sh: needs llvm-profdata/llvm-cov of LLVM $major (apt-get install llvm-$major)" >&2
  exit 1
fi

out=fuzz/coverage/replay
rm -rf "$out" && mkdir -p "$out"
target_dir=$PWD/fuzz/coverage/target
RUSTFLAGS="-C instrument-coverage" CARGO_TARGET_DIR=$target_dir \
  LLVM_PROFILE_FILE=$PWD/$out/replay-%p-%m.profraw \
  cargo test -p bitlens-codec --test corpus_replay >/dev/null
"$profdata" merge -sparse "$out"/*.profraw -o "$out/replay.profdata"
bin=$(find "$target_dir/debug/deps" -name 'corpus_replay-*' -type f -executable -newer "$out/replay.profdata" -o \
  -name 'corpus_replay-*' -type f -executable | xargs ls -t | head -1)
ignore='/.cargo/|/rustc/|/tests/|/fuzzing/|vectors.rs'
"$cov" report "$bin" -instr-profile="$out/replay.profdata" --ignore-filename-regex="$ignore"
if [ "${HTML:-0}" = 1 ]; then
  "$cov" show "$bin" -instr-profile="$out/replay.profdata" --ignore-filename-regex="$ignore" \
    -format=html -output-dir=fuzz/coverage/html
fi

# The read paths: every instantiation for the read stream, the bit reader, packet reading, and
# the tagged format's reader, decoder, raw walk and varint reader.
"$cov" export "$bin" -instr-profile="$out/replay.profdata" --ignore-filename-regex="$ignore" \
  > "$out/export.json"
python3 - "$out/export.json" "$filt" <<'PY'
import json, re, subprocess, sys
data = json.load(open(sys.argv[1]))["data"][0]["functions"]
names = [f["name"] for f in data]
if sys.argv[2]:
    names = subprocess.run([sys.argv[2]], input="\n".join(names), capture_output=True,
                           text=True).stdout.splitlines()
read = re.compile(r"ReadStream|BitReader|read_packet|tagged::io::Reader|tagged::raw::|"
                  r"Decoder|decode|read_varint|unzigzag")
regions = {}
for f, name in zip(data, names):
    if not read.search(name):
        continue
    for r in f["regions"]:
        line0, col0, line1, col1, count, file_id, _, kind = r[:8]
        if kind != 0:
            continue
        path = f["filenames"][file_id]
        if "/codec/src/" not in path or re.search(r"/fuzzing/|/vectors\.rs$", path):
            continue
        key = (path, line0, col0, line1, col1)
        regions[key] = regions.get(key, False) or count > 0
by_file = {}
for (path, *_), hit in regions.items():
    t = by_file.setdefault(path.split("/codec/src/")[-1], [0, 0])
    t[0] += 1
    t[1] += hit
total = sum(t[0] for t in by_file.values())
hit = sum(t[1] for t in by_file.values())
print("\nread paths (functions matching %s):" % read.pattern)
for path, (n, h) in sorted(by_file.items()):
    print(f"  {path:28} {h:5}/{n:<5} {100 * h / n:6.2f}%")
print(f"  {'TOTAL':28} {hit:5}/{total:<5} {100 * hit / total:6.2f}% regions covered")
PY
