# add_zero_library(name [DIALECT] [RUNTIME_HEADER] [HEADERS dir] sources...
#                  [add_mlir_library's keywords: DEPENDS, LINK_COMPONENTS, ...])
#
# One of the compiler's libraries in lib/: add_mlir_library (or
# add_mlir_dialect_library with DIALECT) with what every one of ours shares:
# its headers under include/zero/<dir>, kept out of libMLIR and out of the
# upstream install (ZeroInstall.cmake installs ours). RUNTIME_HEADER: the
# library includes zero/runtime.h, for a formula the runtime and the compiler
# share (a static inline function there), and links nothing of the runtime.
function(add_zero_library name)
  cmake_parse_arguments(ARG "DIALECT;RUNTIME_HEADER" "HEADERS"
                        "DEPENDS;LINK_COMPONENTS" ${ARGN})
  # The keywords after the sources: add_mlir_library hands what follows a
  # list keyword down to llvm_add_library, which would read a later keyword
  # of ours as a list entry.
  set(args ${ARG_UNPARSED_ARGUMENTS})
  if(ARG_HEADERS)
    list(APPEND args ADDITIONAL_HEADER_DIRS
         ${PROJECT_SOURCE_DIR}/include/zero/${ARG_HEADERS})
  endif()
  list(APPEND args EXCLUDE_FROM_LIBMLIR DISABLE_INSTALL)
  if(ARG_DEPENDS)
    list(APPEND args DEPENDS ${ARG_DEPENDS})
  endif()
  if(ARG_LINK_COMPONENTS)
    list(APPEND args LINK_COMPONENTS ${ARG_LINK_COMPONENTS})
  endif()
  if(ARG_DIALECT)
    add_mlir_dialect_library(${name} ${args})
  else()
    add_mlir_library(${name} ${args})
  endif()
  if(ARG_RUNTIME_HEADER)
    target_include_directories(${name} PRIVATE
      $<TARGET_PROPERTY:zero_runtime,INTERFACE_INCLUDE_DIRECTORIES>)
  endif()
endfunction()
