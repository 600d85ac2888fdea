# Script mode (cmake -P): -DIN=<esbuild's prelude bundle, or its second script worker_apis.js> -DOUT=<bundle to embed> -DMAP_OUT=<map to embed>
# (esbuild's map is IN.map)
#
# 1. Class names. When bundling, esbuild writes a top-level class whose body
#    names the class (`new Headers()`, `Headers.#sorted`) as
#    `var Headers = class _Headers {...}` (`Headers = class _Headers` in a
#    module loaded by require(), which esbuild wraps in a lazy initialiser),
#    so Headers.name, the constructor's
#    frame in profiles and `new _Headers` in stacks would all change. The
#    inner name is given back: every `_Headers` token becomes `Headers ` (one
#    space after it), the same length, so no column of the source map moves.
#    Inside the class body the name then binds the class itself, as in the
#    source. Any other `class _X` left is a build error.
# 2. The map's sources. esbuild names each by its path relative to the build
#    folder; heapprof/runtime/js/prelude/headers.js becomes
#    heapprof:runtime/headers.js and the installer heapprof/runtime/worker_prelude.js
#    heapprof:runtime/worker_prelude.js: the script is kWorkerPreludeName
#    (heapprof:runtime, worker_prelude.h), and a frame names its module.

set(_prefix "heapprof:runtime")
file(READ "${IN}" _code)
string(REGEX MATCHALL "[ \n][A-Za-z0-9_]+ = class _[A-Za-z0-9_]+ " _renamed "${_code}")
foreach(_decl IN LISTS _renamed)
  string(REGEX REPLACE "^[ \n]([A-Za-z0-9_]+) = class _([A-Za-z0-9_]+) $" "\\1;\\2" _pair "${_decl}")
  list(GET _pair 0 _outer)
  list(GET _pair 1 _inner)
  if(NOT _outer STREQUAL _inner)
    message(FATAL_ERROR "${IN}: esbuild renamed class ${_outer} to _${_inner}: a name two modules declare?")
  endif()
  # Twice: one pass misses a token right after another (`_X,_X`).
  foreach(_pass 1 2)
    string(REGEX REPLACE "([^A-Za-z0-9_.#])_${_inner}([^A-Za-z0-9_])" "\\1${_inner} \\2" _code "${_code}")
  endforeach()
endforeach()
if(_code MATCHES "class _[A-Za-z0-9_]+")
  message(FATAL_ERROR "${IN}: a class esbuild renamed is left (${CMAKE_MATCH_0})")
endif()

file(READ "${IN}.map" _map)
string(JSON _count LENGTH "${_map}" sources)
math(EXPR _last "${_count} - 1")
foreach(_i RANGE ${_last})
  string(JSON _source GET "${_map}" sources ${_i})
  if(_source MATCHES "(^|/)heapprof/runtime/js/prelude/(.+)$")
    set(_name "${CMAKE_MATCH_2}")
  elseif(_source MATCHES "(^|/)heapprof/runtime/(worker_prelude\\.js|worker_apis\\.js)$")
    set(_name "${CMAKE_MATCH_2}")
  else()
    message(FATAL_ERROR "${IN}.map: source ${_source} is not a module of the prelude")
  endif()
  string(JSON _map SET "${_map}" sources ${_i} "\"${_prefix}/${_name}\"")
endforeach()

file(WRITE "${OUT}.tmp" "${_code}")
file(RENAME "${OUT}.tmp" "${OUT}")
file(WRITE "${MAP_OUT}.tmp" "${_map}")
file(RENAME "${MAP_OUT}.tmp" "${MAP_OUT}")
