#!/usr/bin/env bash
# The main job, as far as the project goes today: generate GPT training steps
# with zero-gen and run them through zero-opt's passes. Run after a build:
#   scripts/setup.sh && cmake --build build && scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BUILD_DIR:-build}/bin
for tool in zero-gen zero-opt; do
  [ -x "$BIN/$tool" ] || { echo "demo: error: $BIN/$tool not found; build first: cmake --build ${BUILD_DIR:-build}" >&2; exit 1; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for preset in gpt-tiny gpt2-124m; do
  echo "== zero-gen gpt --preset $preset"
  "$BIN/zero-gen" gpt --preset "$preset" --summary
  "$BIN/zero-gen" gpt --preset "$preset" --clip-grad-norm -o "$out/$preset.mlir"
  echo "   $(wc -l < "$out/$preset.mlir") lines of training-step IR"
  "$BIN/zero-opt" --zero-verify "$out/$preset.mlir" -o /dev/null
  echo "   zero-opt --zero-verify: the step follows the contract"
done
