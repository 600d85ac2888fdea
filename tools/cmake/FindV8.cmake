# Finds V8 as shipped by Debian's libnode-dev (libnode.so.108, V8 10.2).
# Looks in the system first, then in the project-local unpacked copy that
# tools/bootstrap.sh makes (.deps/libnode). Headers and library must come from
# the same package: /usr/include/node may hold another Node.js's headers, so a
# system header directory is accepted only when libnode-dev's library is there
# too. Defines the imported target V8::V8 (headers + libnode.so).
#
# Hints: V8_ROOT (a prefix holding usr/include/node and usr/lib/<multiarch>).

set(_v8_prefixes)
if(V8_ROOT)
  list(APPEND _v8_prefixes "${V8_ROOT}")
endif()
list(APPEND _v8_prefixes "/" "${PROJECT_SOURCE_DIR}/.deps/libnode")

foreach(_p IN LISTS _v8_prefixes)
  if(NOT V8_LIBRARY OR NOT V8_INCLUDE_DIR)
    unset(_lib CACHE)
    unset(_inc CACHE)
    find_library(_lib NAMES node.so.108 libnode.so.108 node
                 PATHS "${_p}/usr/lib/x86_64-linux-gnu" "${_p}/usr/lib"
                 NO_DEFAULT_PATH)
    find_path(_inc NAMES v8-profiler.h
              PATHS "${_p}/usr/include/node" NO_DEFAULT_PATH)
    if(_lib AND _inc)
      # The headers must be libnode's own: check their version matches 108's V8.
      file(STRINGS "${_inc}/v8-version.h" _maj REGEX "define V8_MAJOR_VERSION")
      file(STRINGS "${_inc}/node_version.h" _nmv REGEX "define NODE_MODULE_VERSION [0-9]+")
      if(_nmv MATCHES "108")
        set(V8_LIBRARY "${_lib}" CACHE FILEPATH "libnode shared library" FORCE)
        set(V8_INCLUDE_DIR "${_inc}" CACHE PATH "V8 headers matching V8_LIBRARY" FORCE)
      endif()
    endif()
    unset(_lib CACHE)
    unset(_inc CACHE)
  endif()
endforeach()

if(V8_INCLUDE_DIR)
  file(STRINGS "${V8_INCLUDE_DIR}/v8-version.h" _v8_ver_lines
       REGEX "#define V8_(MAJOR|MINOR|BUILD)_VERSION +[0-9]+")
  foreach(_l IN LISTS _v8_ver_lines)
    if(_l MATCHES "V8_(MAJOR|MINOR|BUILD)_VERSION +([0-9]+)")
      set(_v8_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
    endif()
  endforeach()
  set(V8_VERSION "${_v8_MAJOR}.${_v8_MINOR}.${_v8_BUILD}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(V8
  REQUIRED_VARS V8_LIBRARY V8_INCLUDE_DIR
  VERSION_VAR V8_VERSION
  FAIL_MESSAGE "V8 (libnode 108) not found: run tools/bootstrap.sh")

if(V8_FOUND AND NOT TARGET V8::V8)
  add_library(V8::V8 SHARED IMPORTED)
  set_target_properties(V8::V8 PROPERTIES
    IMPORTED_LOCATION "${V8_LIBRARY}"
    IMPORTED_NO_SONAME FALSE
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${V8_INCLUDE_DIR}"
    INTERFACE_INCLUDE_DIRECTORIES "${V8_INCLUDE_DIR}")
  find_package(Threads REQUIRED)
  set_property(TARGET V8::V8 APPEND PROPERTY INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()
mark_as_advanced(V8_LIBRARY V8_INCLUDE_DIR)
