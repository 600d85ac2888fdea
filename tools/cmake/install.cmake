# Install rules: each library with its include directory, the CLI, and two
# ways for projects outside this tree to use them: find_package(heapprof
# CONFIG [COMPONENTS ...]) (one imported target per library, each exported on
# its own with only its own dependencies: heapprofConfig.cmake.in) and
# heapprof.pc (core and the collector).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HEAPPROF_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/heapprof")

# Consumers compile the public headers as C++20, as we do.
target_compile_features(heapprof_core PUBLIC cxx_std_20)

# heapprof_<lib> -> heapprof::<lib>, in heapprof-<lib>-targets.cmake, with
# include/heapprof/<lib>/. Components: "devel" (headers, libraries, packages)
# and "cli" (the heapprof tool). The core's set carries the pprof schema and
# heapprof_warnings (static libraries export their private link dependencies;
# it carries nothing to link).
set_target_properties(heapprof_proto PROPERTIES EXPORT_NAME proto)
set_target_properties(heapprof_warnings PROPERTIES EXPORT_NAME warnings)
foreach(lib core workload v8 runtime http remote serve testing)
  if(NOT TARGET heapprof_${lib})
    continue()
  endif()
  set(extra)
  if(lib STREQUAL "core")
    set(extra heapprof_proto heapprof_warnings)
  endif()
  set_target_properties(heapprof_${lib} PROPERTIES EXPORT_NAME ${lib})
  install(TARGETS heapprof_${lib} ${extra} EXPORT heapprof-${lib}
          ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT devel
          INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  install(EXPORT heapprof-${lib} NAMESPACE heapprof:: FILE heapprof-${lib}-targets.cmake
          DESTINATION "${HEAPPROF_INSTALL_CMAKEDIR}" COMPONENT devel)
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/heapprof/${lib}" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/heapprof"
          COMPONENT devel FILES_MATCHING PATTERN "*.h")
endforeach()

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
