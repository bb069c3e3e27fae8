#!/usr/bin/env bash
# The parameters a build trains are bit-identical to another build's: issue
# 49's check that a redesign changes no result. Trains the same steps with
# the zero-run (and zero-compile) of OLD and NEW and compares the
# --dump-params files byte for byte.
#
# usage: bench/bit_identity.sh OLD_BIN_DIR NEW_BIN_DIR [WORK_DIR]
#   OLD_BIN_DIR, NEW_BIN_DIR: the bin/ folders of two builds (zero-gen,
#   zero-run, zero-compile), e.g. a build of the commit before a change
#   (git worktree add /tmp/old REV && cmake -S /tmp/old -B /tmp/old/build
#   -G Ninja && ninja -C /tmp/old/build zero-gen zero-run zero-compile) and
#   this one's. A build's bin/ and lib/ copied elsewhere together
#   (cp -r build/bin build/lib /tmp/old/) serve as well: zero-run and
#   zero-compile find their libraries in ../lib.
# Environment: STEPS (default 20), RANKS (default "1 2 4"), QUICK=1 for a
#   subset (gpt-tiny only, stages 0 and 3).
# Prints one line per run and a summary; exits 1 if any run differs or
# fails.
set -u
if [ $# -lt 2 ]; then
  sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
old=$1 new=$2 work=${3:-$(mktemp -d)}
steps=${STEPS:-20}
ranks=${RANKS:-"1 2 4"}
for b in "$old" "$new"; do
  for t in zero-gen zero-run zero-compile; do
    [ -x "$b/$t" ] || { echo "bit_identity: error: $b/$t is not an executable; give the bin/ folder of a build" >&2; exit 2; }
  done
done
mpirun=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
mkdir -p "$work"

models=("tiny f32:--preset gpt-tiny" "tiny bf16:--preset gpt-tiny --dtype bf16"
        "d256 f32:--preset gpt-tiny --d-model 256 --layers 4 --heads 4")
stages="0 1 2 3"
if [ "${QUICK:-0}" = 1 ]; then
  models=("tiny f32:--preset gpt-tiny" "tiny bf16:--preset gpt-tiny --dtype bf16")
  stages="0 3"
fi

runs=0 differ=0 failed=0
# run LABEL NP ARGS...: trains with both builds, compares the parameters.
run() {
  local label=$1 np=$2; shift 2
  local tag; tag=$(echo "$label" | tr -c 'a-zA-Z0-9' _)
  local ok=1
  for side in old new; do
    local bin=$old; [ $side = new ] && bin=$new
    # A build's bin/ copied out of its tree keeps its libraries in ../lib,
    # as zero-compile expects (zero-run links the runtime dynamically).
    local libs=(); [ -e "$bin/../lib/libzero_runtime.so" ] &&
      libs=(-x "LD_LIBRARY_PATH=$(cd "$bin/../lib" && pwd)")
    if ! "${mpirun[@]}" "${libs[@]}" -np "$np" "$bin/zero-run" "$@" --steps "$steps" \
        --progress none --dump-params "$work/$tag.$side.bin" \
        > "$work/$tag.$side.log" 2>&1; then
      echo "FAILED  $label ($side; $work/$tag.$side.log)"
      ok=0
    fi
  done
  runs=$((runs + 1))
  if [ $ok = 0 ]; then failed=$((failed + 1)); return; fi
  if cmp -s "$work/$tag.old.bin" "$work/$tag.new.bin"; then
    echo "same    $label ($(stat -c %s "$work/$tag.new.bin") bytes)"
  else
    echo "DIFFER  $label"
    differ=$((differ + 1))
  fi
}

for m in "${models[@]}"; do
  name=${m%%:*} args=${m#*:}
  mfile="$work/$(echo "$name" | tr ' ' _).mlir"
  # shellcheck disable=SC2086
  "$new/zero-gen" gpt $args -o "$mfile" || { echo "bit_identity: error: zero-gen gpt $args failed" >&2; exit 1; }
  for n in $ranks; do
    for s in $stages; do
      run "$name stage $s on $n" "$n" "$mfile" --stage "$s"
    done
  done
  # Host offload of the optimizer (stage 2 keeps its shards on the host).
  run "$name stage 2 on 2 --offload optimizer=host" 2 "$mfile" --stage 2 --offload optimizer=host
  # Gradient accumulation: the loop over micro-batches is code of its own.
  run "$name stage 3 on 2 --accumulate 4" 2 "$mfile" --stage 3 --accumulate 4
done

# A zero-compile binary of each build, trained the same way.
tiny="$work/tiny_f32.mlir"
for side in old new; do
  bin=$old; [ $side = new ] && bin=$new
  "$bin/zero-compile" "$tiny" --stage 3 --world-size 2 -o "$work/step.$side" \
      > "$work/compile.$side.log" 2>&1 || { echo "FAILED  zero-compile ($side; $work/compile.$side.log)"; failed=$((failed + 1)); }
done
if [ -x "$work/step.old" ] && [ -x "$work/step.new" ]; then
  for side in old new; do
    "${mpirun[@]}" -np 2 "$work/step.$side" --steps "$steps" --progress none \
        --dump-params "$work/aot.$side.bin" > "$work/aot.$side.log" 2>&1 || failed=$((failed + 1))
  done
  runs=$((runs + 1))
  if cmp -s "$work/aot.old.bin" "$work/aot.new.bin"; then
    echo "same    zero-compile binary, tiny f32 stage 3 on 2"
  else
    echo "DIFFER  zero-compile binary, tiny f32 stage 3 on 2"
    differ=$((differ + 1))
  fi
fi

echo "bit_identity: $runs runs of $steps steps: $((runs - differ - failed)) the same, $differ differ, $failed failed (work in $work)"
[ $differ = 0 ] && [ $failed = 0 ]
