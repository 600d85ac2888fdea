# Included at the end of the top-level CMakeLists.txt when HEAPPROF_SANITIZE is
# set (the compile and link flags themselves are set before any target).
#
# 1. Every executable of the tree links tools/sanitizers/default_options.cpp:
#    the sanitizer runtimes read those defaults (options and the suppression
#    files in tools/sanitizers/) before main, so ctest, the CLI test scripts,
#    the browser test's page tool and a run by hand all behave alike. An
#    ASAN_OPTIONS / UBSAN_OPTIONS / LSAN_OPTIONS / TSAN_OPTIONS variable in the
#    environment still overrides any single flag.
# 2. The installed static libraries are instrumented, so their package tells
#    consumers to link the same sanitizer runtime.

add_library(heapprof_sanitizer_options OBJECT ${PROJECT_SOURCE_DIR}/tools/sanitizers/default_options.cpp)
target_compile_definitions(heapprof_sanitizer_options PRIVATE
  HEAPPROF_SANITIZER_DIR="${PROJECT_SOURCE_DIR}/tools/sanitizers")
target_link_libraries(heapprof_sanitizer_options PRIVATE heapprof_warnings)

function(heapprof_link_sanitizer_options dir)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_link_libraries(${t} PRIVATE heapprof_sanitizer_options)
    endif()
  endforeach()
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(d IN LISTS subdirs)
    heapprof_link_sanitizer_options("${d}")
  endforeach()
endfunction()
heapprof_link_sanitizer_options("${PROJECT_SOURCE_DIR}")

target_link_options(heapprof_core INTERFACE $<INSTALL_INTERFACE:-fsanitize=${HEAPPROF_SANITIZE}>)

# Catch2's own runner (its single header's implementation, tests/catch_main.cpp)
# is third-party code that takes over 15 minutes to compile under UBSan: it
# keeps ASan / TSan but not UBSan. Every test file is fully instrumented.
target_compile_options(heapprof_catch_main PRIVATE -fno-sanitize=undefined)

