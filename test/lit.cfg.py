# -*- Python -*-
# lit configuration for zero-mlir's IR-level tests (test/) and the docs whose
# examples are tests (docs/*.md carry RUN lines in HTML comments).

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ZERO"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".md"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit",
                   "Inputs", "README.md"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.zero_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%zero_src_root", config.zero_src_root))
config.substitutions.append(("%python", config.python_executable))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.zero_tools_dir, config.llvm_tools_dir]
tools = ["zero-opt", "zero-gen", "zero-run", "zero-compile"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# zero-run's cache of compiled steps: one per build tree, never the user's.
config.environment["ZERO_CACHE_DIR"] = os.path.join(config.zero_obj_root,
                                                    "zero-cache")

# ptxas (the CUDA toolkit), which target=cuda's default gpu-format=fatbin
# needs; gpu-format=isa (PTX text) needs only LLVM's NVPTX backend. The
# toolkit is looked up as zero-lower does.
import shutil
if any(toolkit and os.path.exists(os.path.join(toolkit, "bin", "ptxas"))
       for toolkit in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                       "/usr/local/cuda")) or shutil.which("ptxas"):
    config.available_features.add("ptxas")
