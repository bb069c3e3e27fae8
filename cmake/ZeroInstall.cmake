# Install rules: headers (ours, the generated .inc files, the runtime's), the
# libraries an embedding compiler links, the tools, and the CMake package
# ZeroMLIRConfig.cmake with the ZeroMLIR:: targets (cmake/ZeroMLIRConfig.cmake.in).
#
#   cmake --install build --prefix <prefix>
#
# zero-compile and the archives it links training binaries with
# (libzero_runtime.a, libzero_driver.a, libzero_driver_main.a) are installed
# by tools/ and runtime/ (not exported: nothing links them through CMake).
include(CMakePackageConfigHelpers)

set(ZERO_INSTALL_INCLUDEDIR include)
set(ZERO_INSTALL_LIBDIR lib)
set(ZERO_INSTALL_BINDIR bin)
set(ZERO_INSTALL_CMAKEDIR ${ZERO_INSTALL_LIBDIR}/cmake/ZeroMLIR)

# The compiler libraries, in link order; each carries the installed include
# directory (MLIR's and LLVM's are added by ZeroMLIRConfig.cmake).
set(ZERO_MLIR_CXX_TARGETS ZeroSupport ZeroDialect ZeroAnalysis ZeroTransforms
  ZeroConversion ZeroTarget ZeroModels)

function(zero_install_libraries)
  foreach(lib ${ARGN})
    target_include_directories(${lib} INTERFACE
      $<INSTALL_INTERFACE:${ZERO_INSTALL_INCLUDEDIR}>)
  endforeach()
  install(TARGETS ${ARGN}
    EXPORT ZeroMLIRTargets
    ARCHIVE DESTINATION ${ZERO_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${ZERO_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${ZERO_INSTALL_BINDIR}
    )
endfunction()

zero_install_libraries(${ZERO_MLIR_CXX_TARGETS} ZeroCAPI zero_runtime)

# Headers: the hand-written ones and the .td they come from, then what
# mlir-tblgen generated next to them in the build tree.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/zero
  ${PROJECT_SOURCE_DIR}/include/zero-c
  DESTINATION ${ZERO_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td"
  )
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/zero
  DESTINATION ${ZERO_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE
  )

install(EXPORT ZeroMLIRTargets
  NAMESPACE ZeroMLIR::
  DESTINATION ${ZERO_INSTALL_CMAKEDIR}
  )
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/ZeroMLIRConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lib/cmake/ZeroMLIR/ZeroMLIRConfig.cmake
  INSTALL_DESTINATION ${ZERO_INSTALL_CMAKEDIR}
  )
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/lib/cmake/ZeroMLIR/ZeroMLIRConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion
  )
install(FILES
  ${PROJECT_BINARY_DIR}/lib/cmake/ZeroMLIR/ZeroMLIRConfig.cmake
  ${PROJECT_BINARY_DIR}/lib/cmake/ZeroMLIR/ZeroMLIRConfigVersion.cmake
  DESTINATION ${ZERO_INSTALL_CMAKEDIR}
  )
