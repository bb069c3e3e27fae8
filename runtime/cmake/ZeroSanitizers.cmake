# ZERO_ENABLE_SANITIZERS: AddressSanitizer and UndefinedBehaviorSanitizer on
# everything built from the including directory down (our libraries, tools,
# tests and the runtime). Upstream LLVM/MLIR, MPI and OpenBLAS stay as they
# are: their code is not instrumented, calls into it are. The top-level
# project includes this before add_subdirectory(runtime); the runtime
# includes it when built on its own. docs/building.md says how to run the
# suites under it.
option(ZERO_ENABLE_SANITIZERS
  "Build with -fsanitize=address,undefined (ASan + UBSan)" OFF)

if(ZERO_ENABLE_SANITIZERS AND NOT ZERO_SANITIZERS_APPLIED)
  set(ZERO_SANITIZERS_APPLIED ON)
  message(STATUS "zero-mlir: building with ASan and UBSan")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer)
  # LLVM's headers poison the slabs of BumpPtrAllocator (StorageUniquer's,
  # for an attribute's storage) when the including code is built with ASan
  # (llvm/Support/Compiler.h, LLVM_ADDRESS_SANITIZER_BUILD); uninstrumented
  # libMLIR then allocates from such a slab without unpoisoning, and the
  # next access from our code is a false use-after-poison. Our code compiles
  # those inline functions as libMLIR does; the instrumentation stays.
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-U__SANITIZE_ADDRESS__>)
  add_link_options(-fsanitize=address,undefined)
endif()
# What a program linking our instrumented libraries needs on its link line
# (the integration tests' %sanitizer_link_flags).
if(ZERO_ENABLE_SANITIZERS)
  set(ZERO_SANITIZER_LINK_FLAGS "-fsanitize=address,undefined")
else()
  set(ZERO_SANITIZER_LINK_FLAGS "")
endif()
