# Install rules: public headers, the static libraries, the CLI, and two ways
# for projects outside this tree to use them: find_package(heapprof CONFIG)
# (imported targets carrying V8/protobuf/fmt/zlib requirements) and heapprof.pc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HEAPPROF_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/heapprof")

# Components: "devel" (headers, libraries, packages) and "cli" (the heapprof tool).
# Each installed library brings its include directory, include/heapprof/<lib>/.
foreach(lib core workload v8 runtime testing)
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/heapprof/${lib}" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/heapprof"
          COMPONENT devel FILES_MATCHING PATTERN "*.h")
endforeach()

# Consumers compile the public headers as C++20, as we do.
target_compile_features(heapprof_core PUBLIC cxx_std_20)

# Exported as heapprof::core, heapprof::v8, ... (heapprof::heapprof is the umbrella,
# made by the config file). heapprof_warnings rides along only because static
# libraries export their private link dependencies; it carries nothing to link.
set_target_properties(heapprof_core PROPERTIES EXPORT_NAME core)
set_target_properties(heapprof_v8 PROPERTIES EXPORT_NAME v8)
set_target_properties(heapprof_workload PROPERTIES EXPORT_NAME workload)
set_target_properties(heapprof_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(heapprof_proto PROPERTIES EXPORT_NAME proto)
set_target_properties(heapprof_warnings PROPERTIES EXPORT_NAME warnings)
install(TARGETS heapprof_core heapprof_workload heapprof_v8 heapprof_runtime heapprof_proto heapprof_warnings
        EXPORT heapprofTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT devel
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT heapprofTargets NAMESPACE heapprof:: DESTINATION "${HEAPPROF_INSTALL_CMAKEDIR}" COMPONENT devel)

# The Catch2 helpers get their own export set: the package loads them only
# when the consumer has Catch2 2.x.
if(TARGET heapprof_testing)
  set_target_properties(heapprof_testing PROPERTIES EXPORT_NAME testing)
  install(TARGETS heapprof_testing EXPORT heapprofTestingTargets
          ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT devel
          INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  install(EXPORT heapprofTestingTargets NAMESPACE heapprof:: DESTINATION "${HEAPPROF_INSTALL_CMAKEDIR}" COMPONENT devel)
endif()

# The CLI finds libnode through its rpath when installed, too.
if(TARGET heapprof)
  set_target_properties(heapprof PROPERTIES INSTALL_RPATH "${V8_LIBRARY_DIR}")
  install(TARGETS heapprof RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT cli)
endif()

# The config records the libnode this build used, so consumers link the same one.
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/heapprofConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/package/heapprofConfig.cmake"
  INSTALL_DESTINATION "${HEAPPROF_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/package/heapprofConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/package/heapprofConfig.cmake"
              "${PROJECT_BINARY_DIR}/package/heapprofConfigVersion.cmake"
              "${CMAKE_CURRENT_LIST_DIR}/FindV8.cmake"
        DESTINATION "${HEAPPROF_INSTALL_CMAKEDIR}" COMPONENT devel)

# pkg-config: prefix relative to the .pc file, so the tree can be installed anywhere.
# (Any absolute stand-in for the prefix gives the same relative path.)
file(RELATIVE_PATH HEAPPROF_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file("${CMAKE_CURRENT_LIST_DIR}/heapprof.pc.in" "${PROJECT_BINARY_DIR}/package/heapprof.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/package/heapprof.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig" COMPONENT devel)
