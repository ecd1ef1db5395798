#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build script, run inside the image of .clusterfuzzlite/Dockerfile as
# $SRC/build.sh with $SRC, $OUT and $SANITIZER set. fuzz/build.sh does the work: every target of
# fuzz/fuzz_targets/ built with `cargo fuzz build -O`, copied to $OUT with its seed corpus
# (corpus/<target>/ as $OUT/<target>_seed_corpus.zip) and its libFuzzer options.
# fuzz/check_cflite.sh runs this script outside Docker (the CI fuzz smoke calls it).
cd "$SRC/bitlens"
bash fuzz/build.sh
