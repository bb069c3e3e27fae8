#!/usr/bin/env bash
# The main job: generate a small GPT training step with zero-gen, check it
# with zero-opt, and train it on the CPU with zero-run (built-in corpus, no
# download). Run after a build:
#   scripts/setup.sh && cmake --build build && scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BUILD_DIR:-build}/bin
for tool in zero-gen zero-opt zero-run zero-compile; do
  [ -x "$BIN/$tool" ] || { echo "demo: error: $BIN/$tool not found; build first: cmake --build ${BUILD_DIR:-build}" >&2; exit 1; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== GPT-2 small, generated and verified (not trained here: 124M parameters)"
"$BIN/zero-gen" gpt --preset gpt2-124m --summary
"$BIN/zero-gen" gpt --preset gpt2-124m --clip-grad-norm -o "$out/gpt2.mlir"
"$BIN/zero-opt" --zero-verify "$out/gpt2.mlir" -o /dev/null
echo "   $(wc -l < "$out/gpt2.mlir") lines of training-step IR; zero-opt --zero-verify: OK"

echo "== gpt-tiny: generate, verify, train 300 steps on the built-in corpus"
"$BIN/zero-gen" gpt --preset gpt-tiny --clip-grad-norm -o "$out/tiny.mlir"
"$BIN/zero-opt" --zero-verify "$out/tiny.mlir" -o /dev/null
"$BIN/zero-run" "$out/tiny.mlir" --steps 300 --lr 3e-3 --stats-json "$out/stats.json" \
  --dump-params "$out/run.bin"

echo "== the same step as a standalone training binary (zero-compile): same parameters"
"$BIN/zero-compile" "$out/tiny.mlir" -o "$out/train"
"$out/train" --steps 300 --lr 3e-3 --progress none --dump-params "$out/binary.bin"
cmp "$out/run.bin" "$out/binary.bin" && echo "   zero-run and the binary agree bit for bit"
