# -*- Python -*-
# lit configuration for zero-mlir's integration tests: whole-tool runs
# (generate, verify, and later compile and train). Features describe what this
# machine offers, so tests can say `REQUIRES:`.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "ZERO-INTEGRATION"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs", "tools"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.zero_obj_root, "integration_tests")

config.substitutions.append(("%zero_src_root", config.zero_src_root))
config.substitutions.append(("%python", config.python_executable))
# Programs that embed a compiled step: the C compiler, the runtime's headers
# and the directory of its libraries.
config.substitutions.append(("%cc", config.c_compiler))
# Programs that link a sanitizer build's instrumented runtime need its flags.
config.substitutions.append(("%sanitizer_link_flags",
                             config.sanitizer_link_flags))
config.substitutions.append(("%zero_runtime_include",
                             os.path.join(config.zero_src_root, "runtime",
                                          "include")))
config.substitutions.append(("%zero_lib_dir",
                             os.path.join(config.zero_obj_root, "lib")))
config.substitutions.append(("%zero_obj_root", config.zero_obj_root))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["zero-opt", "zero-gen", "zero-run", "zero-compile", "zero-ckpt"],
                                   [config.zero_tools_dir,
                                    config.llvm_tools_dir])

if shutil.which("mpirun"):
    config.available_features.add("mpi")
    # Oversubscribe: tests run 4 ranks on 2 cores. CI runs as root. Each
    # mpirun gets a TMPDIR of its own: Open MPI's session directories of
    # overlapping runs share one tree otherwise, and one run's cleanup can
    # break another's start (scripts/with-own-tmpdir).
    mpirun = "sh %s mpirun --oversubscribe" % os.path.join(
        config.zero_src_root, "scripts", "with-own-tmpdir")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        mpirun += " --allow-run-as-root"
    config.substitutions.append(("%mpirun", mpirun))
# A Python with safetensors and numpy (and maybe PyTorch) for the checkpoint
# round trips: this build's bench venv (bench/vs_pytorch.py creates it and
# installs them) or the Python lit runs with.
for python in [os.path.join(config.zero_obj_root, "bench-venv", "bin", "python"),
               config.python_executable]:
    probe = "import importlib.util as u, sys; sys.exit(0 if u.find_spec('%s') else 1)"
    if os.path.exists(python) and all(
            subprocess.run([python, "-c", probe % m], capture_output=True).returncode == 0
            for m in ("safetensors", "numpy")):
        config.available_features.add("safetensors")
        config.substitutions.append(("%safetensors_python", python))
        # torch: PyTorch and torch-mlir (scripts/setup.sh --torch), for the
        # front door (python/zero_mlir, run from this checkout).
        if all(subprocess.run([python, "-c", probe % m],
                              capture_output=True).returncode == 0
               for m in ("torch", "torch_mlir")):
            config.available_features.add("torch")
            config.substitutions.append(
                ("%torch_python", "env PYTHONPATH=%s %s" % (
                    os.path.join(config.zero_src_root, "python"), python)))
        break
# A private tmpfs of a chosen size (a user and mount namespace, no root
# needed where the kernel allows it) for tests of a full disk.
if shutil.which("unshare") and subprocess.run(
        ["unshare", "-rm", "sh", "-c",
         "mount -t tmpfs -o size=64k tmpfs /tmp"],
        capture_output=True).returncode == 0:
    config.available_features.add("tmpfs")
if shutil.which("nvidia-smi") and os.path.exists("/dev/nvidiactl"):
    config.available_features.add("gpu")
# ptxas, for target=cuda's default fat binary (test/lit.cfg.py has the same
# look-up, which is zero-lower's).
if any(toolkit and os.path.exists(os.path.join(toolkit, "bin", "ptxas"))
       for toolkit in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                       "/usr/local/cuda")) or shutil.which("ptxas"):
    config.available_features.add("ptxas")

# zero-run's cache of compiled steps: one per build tree, never the user's.
config.environment["ZERO_CACHE_DIR"] = os.path.join(config.zero_obj_root,
                                                    "zero-cache")
# embedding/ configures and builds a separate project against an installed
# tree: the same CMake, generator, compilers (and ccache) as this build.
if config.cmake_command and os.path.exists(config.cmake_command):
    config.available_features.add("cmake")
    cmake_configure = [
        config.cmake_command,
        "-G", '"%s"' % config.cmake_generator,
        "-DCMAKE_BUILD_TYPE=Release",
        "-DCMAKE_C_COMPILER=%s" % config.c_compiler,
        "-DCMAKE_CXX_COMPILER=%s" % config.cxx_compiler,
        "-DMLIR_DIR=%s" % config.mlir_dir,
    ]
    if config.compiler_launcher and not config.compiler_launcher.endswith("-NOTFOUND"):
        cmake_configure += [
            "-DCMAKE_C_COMPILER_LAUNCHER=%s" % config.compiler_launcher,
            "-DCMAKE_CXX_COMPILER_LAUNCHER=%s" % config.compiler_launcher,
        ]
    if config.zero_enable_sanitizers.upper() in ("ON", "1", "TRUE", "YES"):
        # Our installed libraries are instrumented: so must the programs be
        # that link them.
        san = "-fsanitize=address,undefined"
        cmake_configure += [
            "-DCMAKE_C_FLAGS=%s" % san,
            "-DCMAKE_CXX_FLAGS=%s" % san,
            "-DCMAKE_EXE_LINKER_FLAGS=%s" % san,
        ]
    config.substitutions.append(("%cmake_configure", " ".join(cmake_configure)))
    config.substitutions.append(("%cmake", config.cmake_command))
