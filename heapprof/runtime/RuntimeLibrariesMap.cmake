# Script mode (cmake -P): -DIN=<esbuild's map> -DOUT=<map to embed>
#
# esbuild names each source of the libraries bundle by its path relative to
# the build folder (../../.deps/js-runtime/node_modules/PACKAGE/dist/FILE),
# which says nothing to a reader and is one machine's layout. Every source
# becomes heapprof:runtime-libraries/PACKAGE/dist/FILE instead (the entry,
# heapprof/runtime/js/libraries.js, becomes heapprof:runtime-libraries/libraries.js,
# heapprof/runtime/js/node/buffer.js heapprof:runtime-libraries/node/buffer.js),
# the name the runtime's library frames carry in profiles once mapped; a
# scheme-like name is kept as written by the source map reader. The prefix is
# the script name kWorkerLibrariesName (worker_prelude.h); a test checks both agree.

set(_prefix "heapprof:runtime-libraries")
file(READ "${IN}" _map)
string(JSON _count LENGTH "${_map}" sources)
if(_count EQUAL 0)
  message(FATAL_ERROR "${IN}: the libraries bundle's source map names no source")
endif()
math(EXPR _last "${_count} - 1")
foreach(_i RANGE ${_last})
  string(JSON _source GET "${_map}" sources ${_i})
  string(FIND "${_source}" "node_modules/" _at REVERSE)
  if(NOT _at EQUAL -1)
    math(EXPR _at "${_at} + 13")  # past "node_modules/"
    string(SUBSTRING "${_source}" ${_at} -1 _name)
  elseif(_source MATCHES "(^|/)heapprof/runtime/js/((node/)?[^/]+)$")
    set(_name "${CMAKE_MATCH_2}")
  else()
    # Anything else would put a build path in every profile: fail the build instead.
    message(FATAL_ERROR "${IN}: source ${_source} is neither an npm package file nor heapprof/runtime/js/")
  endif()
  string(JSON _map SET "${_map}" sources ${_i} "\"${_prefix}/${_name}\"")
endforeach()
file(WRITE "${OUT}.tmp" "${_map}")
file(RENAME "${OUT}.tmp" "${OUT}")
