# Embeds the flamegraph page template (real .html/.css/.js sources, editable
# and lintable as such) into a library as raw string literals, at build time.
#
# Included from the top-level CMakeLists.txt; also runs in script mode
# (cmake -P) to write the generated source.

set(_heapprof_asset_delim "heapprof_asset")

if(CMAKE_SCRIPT_MODE_FILE)
  # Script mode: -DOUT=<file.cpp> -DASSETS=<symbol=path|symbol=path...>
  set(_body "// Generated from heapprof/core/flamegraph/ by FlamegraphAssets.cmake. Do not edit.\n")
  string(APPEND _body "#include \"heapprof/core/flamegraph_assets.h\"\n\nnamespace heapprof::internal {\n")
  string(REPLACE "|" ";" _assets "${ASSETS}")
  foreach(_asset IN LISTS _assets)
    string(REGEX MATCH "^([A-Za-z0-9_]+)=(.*)$" _m "${_asset}")
    set(_symbol "${CMAKE_MATCH_1}")
    set(_path "${CMAKE_MATCH_2}")
    file(READ "${_path}" _content)
    string(FIND "${_content}" ")${_heapprof_asset_delim}\"" _clash)
    if(NOT _clash EQUAL -1)
      message(FATAL_ERROR "${_path} contains the raw-string delimiter )${_heapprof_asset_delim}\"")
    endif()
    string(APPEND _body "\nextern const char ${_symbol}[] = R\"${_heapprof_asset_delim}(${_content})${_heapprof_asset_delim}\";\n")
  endforeach()
  string(APPEND _body "\n}  // namespace heapprof::internal\n")
  file(WRITE "${OUT}.tmp" "${_body}")
  file(RENAME "${OUT}.tmp" "${OUT}")
  return()
endif()

# Adds the generated source to `target`.
function(heapprof_embed_flamegraph_assets target)
  set(_dir "${PROJECT_SOURCE_DIR}/heapprof/core/flamegraph")
  set(_out "${PROJECT_BINARY_DIR}/generated/heapprof/flamegraph_assets.cpp")
  set(_inputs "${_dir}/page.html" "${_dir}/page.css" "${_dir}/page.js")
  set(_assets "kFlamegraphPageHtml=${_dir}/page.html|kFlamegraphPageCss=${_dir}/page.css|kFlamegraphPageJs=${_dir}/page.js")
  add_custom_command(
    OUTPUT "${_out}"
    COMMAND ${CMAKE_COMMAND} "-DOUT=${_out}" "-DASSETS=${_assets}"
            -P "${_dir}/FlamegraphAssets.cmake"
    DEPENDS ${_inputs} "${_dir}/FlamegraphAssets.cmake"
    COMMENT "Embedding the flamegraph page template"
    VERBATIM)
  target_sources(${target} PRIVATE "${_out}")
endfunction()
