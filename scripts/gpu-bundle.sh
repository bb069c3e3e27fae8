#!/usr/bin/env bash
# Builds the GPU checks of the CUDA backend into one directory that runs on a
# machine with an NVIDIA GPU but no MLIR, LLVM, MPI or OpenBLAS (the device
# machines: CUDA and PyTorch only). Everything is compiled here:
#
#   scripts/gpu-bundle.sh DIR        (BUILD_DIR=build by default)
#
# DIR then holds
#   bin/         training binaries built with zero-compile --target cuda,
#                the small models' CPU binaries (reference gradients),
#                and the runtime's GoogleTest units (RuntimeCuda.*)
#   lib/         the shared libraries they need that such a machine lacks
#                (OpenBLAS, Open MPI and theirs; never glibc or libstdc++)
#   ref/         the same steps trained here on the CPU: losses (stats JSON)
#                and zero-memory-report's predictions
#   check.py     the checks (scripts/gpu_check.py), run.sh to run them
#   speed.py     GPT-2 124M against PyTorch eager and torch.compile
#                (scripts/gpu_speed.py; needs PyTorch with CUDA there)
# and is small enough to travel (a few tens of MB). On the GPU machine:
#
#   bash DIR/run.sh OUTDIR
#
# GPU_BUNDLE_TARGET=cpu builds the same bundle with CPU binaries under the
# same names, and GPU_BUNDLE_SMALL=1 leaves GPT-2 124M out: what the
# bundle's own test (integration_tests/zero-compile/gpu-bundle.test) runs,
# so that check.py is exercised before a GPU ever sees it.
#
# prints one line per check and a summary, writes the figures to OUTDIR, and
# exits 0 only if every check passed; then
#
#   python3 DIR/speed.py DIR OUTDIR
#
# measures the speed. docs/building.md ("GPU") says more.
set -euo pipefail

usage() { echo "usage: scripts/gpu-bundle.sh DIR" >&2; exit 2; }
[ $# -eq 1 ] || usage
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${BUILD_DIR:-$root/build}" && pwd) ||
  { echo "gpu-bundle: error: no build directory (run scripts/setup.sh and cmake --build build)" >&2; exit 1; }
bin=$build/bin
for tool in zero-gen zero-opt zero-compile; do
  [ -x "$bin/$tool" ] ||
    { echo "gpu-bundle: error: $bin/$tool is missing: build zero-mlir first (cmake --build $build)" >&2; exit 1; }
done

target=${GPU_BUNDLE_TARGET:-cuda}
case "$target" in
  cuda|cpu) ;;
  *) echo "gpu-bundle: error: GPU_BUNDLE_TARGET must be cuda or cpu, not '$target'" >&2; exit 2 ;;
esac
models="gpt-tiny gpt-d256 gpt-vocab"
[ "${GPU_BUNDLE_SMALL:-0}" = 1 ] || models="$models gpt2-124m gpt2-124m-bf16"

out=$1
rm -rf "$out.tmp"
mkdir -p "$out.tmp"/{bin,lib,ref,steps}
t=$out.tmp

# The steps: the issue's gpt-tiny and gpt d256 L4 (the benchmarks' GPT), and
# GPT-2 124M at sequence 1024 for the memory check.
"$bin/zero-gen" gpt --preset gpt-tiny -o "$t/steps/gpt-tiny.mlir"
"$bin/zero-gen" gpt --d-model 256 --layers 4 --heads 4 --seq 128 --batch 2 \
  --vocab 256 -o "$t/steps/gpt-d256.mlir"
# gpt-tiny with GPT-2's vocabulary: logits rows of 50,257 elements, which
# target=cuda pads to aligned strides (zero-pad-gemm-rows).
"$bin/zero-gen" gpt --preset gpt-tiny --vocab 50257 -o "$t/steps/gpt-vocab.mlir"
"$bin/zero-gen" gpt --preset gpt2-124m --batch "${GPT2_BATCH:-8}" \
  -o "$t/steps/gpt2-124m.mlir"
"$bin/zero-gen" gpt --preset gpt2-124m --batch "${GPT2_BATCH:-8}" \
  --summary > "$t/ref/gpt2-124m.summary.json"
# The same in bf16 mixed precision: the speed comparison, and its memory.
"$bin/zero-gen" gpt --preset gpt2-124m --batch "${GPT2_BATCH:-8}" --dtype bf16 \
  -o "$t/steps/gpt2-124m-bf16.mlir"

steps=20
for m in $models; do
  echo "gpu-bundle: $m"
  "$bin/zero-compile" "$t/steps/$m.mlir" --target "$target" -o "$t/bin/$m-cuda"
  # The prediction the device's measured peaks are held to: the same
  # bufferized step (zero-bufferize-step for target=cuda: GEMM operands
  # with padded rows), predicted for the cuda target (its bf16 GEMMs
  # allocate nothing).
  "$bin/zero-opt" "$t/steps/$m.mlir" --zero-bufferize-step="target=$target" \
    --zero-memory-report="output=$t/ref/$m.report.json target=cuda" -o /dev/null
done
# GPU_BUNDLE_NOFUSE=1: GPT-2 124M's binaries also built without
# zero-fuse-row-nests (zero-lower's fuse-rows=false), as
# <name>-cuda-nofuse, for speed.py --variants nofuse: the fusion's A/B in
# one run on the device.
if [ "${GPU_BUNDLE_NOFUSE:-0}" = 1 ] && [ "$target" = cuda ]; then
  for m in $models; do
    case "$m" in gpt2-124m*) ;; *) continue ;; esac
    echo "gpu-bundle: $m, fuse-rows=false"
    "$bin/zero-opt" "$t/steps/$m.mlir" \
      --pass-pipeline='builtin.module(zero-verify,zero-lower{target=cuda fuse-rows=false})' \
      -o "$t/steps/$m.nofuse.mlir"
    "$bin/zero-compile" "$t/steps/$m.nofuse.mlir" -o "$t/bin/$m-cuda-nofuse"
  done
fi
# CPU references on the same initial parameters and batches (the driver
# draws both from the seed alone): f32 losses of every step.
# ZeRO-Offload (optimizer=host): the states in host memory, the updates on
# the host; the report of the same pipeline zero-compile runs.
hosted="gpt-d256"
[ "${GPU_BUNDLE_SMALL:-0}" = 1 ] || hosted="$hosted gpt2-124m"
for m in $hosted; do
  echo "gpu-bundle: $m, optimizer=host"
  "$bin/zero-compile" "$t/steps/$m.mlir" --target "$target" \
    --offload optimizer=host -o "$t/bin/$m-host"
  "$bin/zero-opt" "$t/steps/$m.mlir" --zero-partition="stage=0 world-size=1" \
    --zero-schedule="target=cuda" --zero-offload="optimizer=host" \
    --zero-bufferize-step="target=$target" \
    --zero-memory-report="output=$t/ref/$m.host.report.json target=cuda" \
    -o /dev/null
done
# The deepest GPTs that fit the device, with and without optimizer=host, as
# bench/offload_fit.py predicted them (GPU_BUNDLE_FIT=its --json output):
# the binaries zero-compile makes of them, and the predictions check.py
# holds their 3-step runs to. Minutes per binary on hundreds of layers.
if [ -n "${GPU_BUNDLE_FIT:-}" ]; then
  cp "$GPU_BUNDLE_FIT" "$t/ref/fit.json"
  python3 - "$GPU_BUNDLE_FIT" > "$t/steps/fit.txt" <<'PY'
import json, sys
fit = json.load(open(sys.argv[1]))
shape = fit.get('shape', {'d_model': 1600, 'heads': 25, 'seq': 1024, 'vocab': 50257})
for r in fit['rows']:
    print(r['dtype'], r['optimizer'], r['layers'], shape['d_model'], shape['heads'],
          shape['seq'], shape['vocab'], fit['batch'])
PY
  while read -r dtype opt layers d heads seq vocab batch; do
    name=fit-$dtype-$opt-$layers
    echo "gpu-bundle: $name"
    "$bin/zero-gen" gpt --d-model "$d" --heads "$heads" --layers "$layers" \
      --seq "$seq" --vocab "$vocab" --batch "$batch" --dtype "$dtype" \
      -o "$t/steps/$name.mlir"
    offload=()
    [ "$opt" = host ] && offload=(--offload optimizer=host)
    "$bin/zero-compile" "$t/steps/$name.mlir" --target "$target" --stage 0 \
      "${offload[@]}" -o "$t/bin/$name"
    rm -f "$t/steps/$name.mlir"
  done < "$t/steps/fit.txt"
fi
for m in gpt-tiny gpt-d256 gpt-vocab; do
  "$bin/zero-compile" "$t/steps/$m.mlir" -o "$t/steps/$m-cpu"
  "$t/steps/$m-cpu" --steps $steps --progress none \
    --stats-json "$t/ref/$m.cpu.json" > /dev/null
  # The CPU binary travels too (the CPU backend's libraries are in lib/
  # anyway): the grads check makes the reference gradients there rather
  # than carry them (13 MB for d256). params.json says which parameter
  # each stretch of them is.
  cp "$t/steps/$m-cpu" "$t/bin/$m-cpu"
  python3 - "$t/steps/$m.mlir" > "$t/ref/$m.params.json" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
sig = text[text.index('func.func @forward_backward('):]
sig = sig[:sig.index(') -> ')]
params = []
for piece in re.split(r', (?=%\w+: )', sig[sig.index('(') + 1:]):
    m = re.match(r'%\w+: tensor<([^>]*)>', piece)
    name = re.search(r'zero\.param = "([^"]+)"', piece)
    if not m or not name:
        continue
    *dims, dtype = m.group(1).split('x')
    count = 1
    for d in dims:
        count *= int(d)
    params.append({'name': name.group(1), 'elements': count, 'dtype': dtype})
json.dump(params, sys.stdout, indent=1)
PY
done

# Shared libraries the binaries load that a CUDA-only machine may lack.
# glibc, libstdc++ and libgcc_s are the target's own (its are newer), and
# the CUDA libraries are opened at run time from the machine's installation.
tests=$build/runtime/test/zero-runtime-tests
[ -x "$tests" ] ||
  { echo "gpu-bundle: error: $tests is missing: build zero-mlir with its tests" >&2; exit 1; }
cp "$tests" "$t/bin/"
{ ldd "$t/bin/gpt-tiny-cuda"; ldd "$tests"; } | awk '$3 ~ /^\// {print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libdl.so.*|librt.so.*|libpthread.so.*|ld-linux*|\
    libstdc++.so.*|libgcc_s.so.*) ;;
    *) cp -L "$lib" "$t/lib/" ;;
  esac
done

cp "$root/scripts/gpu_check.py" "$t/check.py"
cp "$root/scripts/gpu_speed.py" "$t/speed.py"
cp "$root/bench/torch_gpt.py" "$t/torch_gpt.py"
cp "$root/integration_tests/tools/check_memory.py" "$t/check_memory.py"
cat > "$t/run.sh" <<'EOF'
#!/usr/bin/env bash
# Runs the CUDA backend's checks (see check.py); OUTDIR gets the figures.
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/check.py" "$here" "${1:-${OUT:-gpu-check-out}}"
EOF
chmod +x "$t/run.sh"
rm -rf "$t/steps"
rm -rf "$out" && mv "$t" "$out"
echo "gpu-bundle: $out ($(du -sh "$out" | cut -f1)); run it there with: bash $out/run.sh OUTDIR"
