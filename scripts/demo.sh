#!/usr/bin/env bash
# The main job: what ZeRO does, shown on this machine in about a minute.
# A GPT training step from zero-gen trains on 4 ranks (mpirun, the built-in
# corpus, no download) at stage 0 (plain data parallelism: every rank holds
# every parameter, gradient and optimizer state) and at stage 3 (each rank
# holds a quarter of each); the model-state bytes per rank of the two stand
# side by side with the ZeRO paper's formula, the losses are identical, and
# the same stage-3 step then runs as a standalone training binary. Run
# after a build:
#   scripts/setup.sh && cmake --build build && scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BUILD_DIR:-build}/bin
for tool in zero-gen zero-opt zero-run zero-compile; do
  [ -x "$BIN/$tool" ] || { echo "demo: error: $BIN/$tool not found; build first: cmake --build ${BUILD_DIR:-build}" >&2; exit 1; }
done
command -v mpirun > /dev/null ||
  { echo "demo: error: mpirun not found; install Open MPI (scripts/setup.sh does)" >&2; exit 1; }
command -v python3 > /dev/null ||
  { echo "demo: error: python3 not found (the demo formats its figures with it)" >&2; exit 1; }
# Four ranks on however many cores there are; Open MPI refuses root unless
# told. ZERO_DEMO_MPIRUN replaces the launcher (the test suite passes its
# own).
if [ -n "${ZERO_DEMO_MPIRUN:-}" ]; then
  read -r -a MPIRUN <<< "$ZERO_DEMO_MPIRUN"
else
  MPIRUN=(mpirun --oversubscribe)
  [ "$(id -u)" -ne 0 ] || MPIRUN+=(--allow-run-as-root)
fi
MPIRUN+=(-np 4)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export ZERO_CACHE_DIR="$out/cache"
STEPS=20

echo "== GPT-2 small, generated and verified (not trained here: 124M parameters)"
"$BIN/zero-gen" gpt --preset gpt2-124m --summary
"$BIN/zero-gen" gpt --preset gpt2-124m --clip-grad-norm -o "$out/gpt2.mlir"
"$BIN/zero-opt" --zero-verify "$out/gpt2.mlir" -o /dev/null
echo "   $(wc -l < "$out/gpt2.mlir") lines of training-step IR; zero-opt --zero-verify: OK"

echo "== A GPT (d_model 128, 2 layers, bf16 with an f32 master) on 4 ranks, $STEPS steps at stage 0, then at stage 3"
"$BIN/zero-gen" gpt --d-model 128 --layers 2 --heads 4 --seq 32 --batch 2 \
  --vocab 64 --dtype bf16 -o "$out/gpt.mlir"
for stage in 0 3; do
  # What each rank holds by design (zero-memory-report on the partitioned,
  # bufferized step), then the run, which measures it.
  "$BIN/zero-opt" "$out/gpt.mlir" --zero-partition="stage=$stage world-size=4" \
    --zero-bufferize-step --zero-memory-report="output=$out/report$stage.json" -o /dev/null
  "${MPIRUN[@]}" "$BIN/zero-run" "$out/gpt.mlir" --stage $stage --steps $STEPS \
    --progress none --stats-json "$out/stats$stage.json" --dump-params "$out/stage$stage.bin" \
    | sed 's/^/   stage '"$stage"': /'
done

python3 - "$out" "$out/gpt.mlir" <<'EOF'
import json, math, re, sys
out, module = sys.argv[1], sys.argv[2]
n = 4
# Psi: the parameter count, from the step's signature; the sharded terms
# are over the parameters padded to a multiple of N.
sig = open(module).read()
sig = sig[sig.index('@forward_backward('):]
sig = sig[:sig.index('->')]
shapes = [[int(d) for d in dims.split('x') if d] for dims in re.findall(
    r'tensor<((?:\d+x)*)bf16> \{(?:zero\.init = \{[^}]*\}, )?zero\.param', sig)]
psi = sum(math.prod(s) for s in shapes)
shard = sum((math.prod(s) + n - 1) // n for s in shapes)
terms = [('params', 2, 3), ('grads', 2, 2), ('optimizer_states', 12, 1)]
report = {s: next(r for r in json.load(open(f'{out}/report{s}.json'))
                  if r['function'] == 'train_step')['model_state_bytes']
          for s in (0, 3)}
stats = {s: json.load(open(f'{out}/stats{s}.json')) for s in (0, 3)}
print(f'   Psi = {psi:,} parameters; mixed precision keeps (2 + 2 + 12) bytes '
      f'of model state per parameter (bf16 params and grads; f32 master, '
      f'exp_avg, exp_avg_sq)')
print(f'   {"model states per rank":<24}{"stage 0":>12}{"stage 3":>12}   '
      f'formula at stage 3 (sharded from stage s on)')
ok = True
for name, b, sharded_from in terms:
    want = {s: b * (shard if s >= sharded_from else psi) for s in (0, 3)}
    got = {s: report[s][name] for s in (0, 3)}
    ok = ok and got == want
    print(f'   {name:<24}{got[0]:>12,}{got[3]:>12,}   {b} x Psi/{n} = '
          f'{b * shard:,} (stage {sharded_from}+)')
total = {s: sum(report[s][t] for t, _, _ in terms) for s in (0, 3)}
print(f'   {"total":<24}{total[0]:>12,}{total[3]:>12,}   '
      f'{total[0] / total[3]:.2f}x less per rank at stage 3')
peak = {s: stats[s]['peak_bytes_max_over_ranks']['total'] for s in (0, 3)}
print(f'   {"measured peak, all":<24}{peak[0]:>12,}{peak[3]:>12,}   '
      f'(model states, activations, gathered layers and buffers)')
sent = {s: sum(stats[s]['comm_bytes'].values()) for s in (0, 3)}
print(f'   {"bytes sent a step":<24}{sent[0]:>12,}{sent[3]:>12,}   '
      f'{sent[3] / sent[0]:.2f}x: 2 Psi elements a rank at stage 0, at most '
      f'3 Psi at stage 3 (parameters gathered for forward and backward)')
losses = {s: stats[s]['losses'] for s in (0, 3)}
same = losses[0] == losses[3]
print(f'   losses, stage 0: {losses[0][0]:.4f} -> {losses[0][-1]:.4f}; '
      f'stage 3: {losses[3][0]:.4f} -> {losses[3][-1]:.4f}; '
      f'{"identical at every step" if same else "DIFFERENT"}')
if not ok or not same:
    sys.exit('demo: error: the figures above break ZeRO\'s accounting or parity')
EOF
cmp "$out/stage0.bin" "$out/stage3.bin" && echo "   parameters after training: bit-identical at stage 0 and stage 3"

echo "== The stage-3 step as a standalone training binary (zero-compile: no MLIR at run time)"
"$BIN/zero-compile" "$out/gpt.mlir" --stage 3 --world-size 4 -o "$out/train"
"${MPIRUN[@]}" "$out/train" --steps $STEPS --progress none --dump-params "$out/binary.bin" \
  | sed 's/^/   /'
cmp "$out/stage3.bin" "$out/binary.bin" && echo "   zero-run and the binary agree bit for bit"
