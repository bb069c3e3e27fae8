#!/usr/bin/env bash
# Installs every system dependency of zero-mlir from Debian's packages and
# configures the build in ./build (Ninja, Release, ccache).
# Idempotent: a second run installs nothing and only re-configures.
#
#   scripts/setup.sh            install + configure
#   BUILD_DIR=out scripts/setup.sh
#   BUILD_DIR=build-asan scripts/setup.sh -DZERO_ENABLE_SANITIZERS=ON
#                               (further arguments go to cmake)
#   scripts/setup.sh --bench    also what the benchmarks use beyond the
#                               build: chromium (headless, to render trace
#                               pages: bench/trace_page.py --png)
#   scripts/setup.sh --torch    also PyTorch and torch-mlir from PyPI into
#                               the virtual environment BUILD_DIR/bench-venv
#                               (python/requirements-torch.txt) and the
#                               front door python/zero_mlir into it: the
#                               lit feature 'torch' and bench/'s peers
#                               (CI passes it)
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}

bench=0
torch=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bench) bench=1 ;;
    --torch) torch=1 ;;
    *) break ;;
  esac
  shift
done

packages=(
  cmake ninja-build ccache g++ python3 git
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  libgtest-dev libopenblas-dev libopenmpi-dev openmpi-bin zlib1g-dev
  liburing-dev nlohmann-json3-dev libcli11-dev
)
if ((torch)); then
  packages+=(python3-venv)
fi
if ((bench)); then
  packages+=(chromium)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null ||
      { echo "setup: error: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    SUDO=sudo
  fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cmake -G Ninja -S . -B "$BUILD_DIR" \
  -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir "$@" >/dev/null
echo "setup: configured $BUILD_DIR (build with: cmake --build $BUILD_DIR)"

if ((torch)); then
  venv="$BUILD_DIR/bench-venv"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  # pip prints only what it changes; a second run installs nothing.
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r python/requirements-torch.txt
  # Built from a copy: setuptools writes build/ and *.egg-info beside it.
  src=$(mktemp -d)
  cp -r python/pyproject.toml python/zero_mlir "$src"/
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-build-isolation --no-deps "$src"
  rm -rf "$src"
  "$venv/bin/python" -c "import torch, torch_mlir, zero_mlir.torch" ||
    { echo "setup: error: $venv cannot import torch, torch_mlir and zero_mlir" >&2; exit 1; }
  echo "setup: $venv has torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)') and torch-mlir (lit feature 'torch')"
fi
