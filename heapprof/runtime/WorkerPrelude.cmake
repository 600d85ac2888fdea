# Embeds the worker runtime's JavaScript into a library as string literals at
# build time, with the same generator as the flamegraph page assets:
# - the prelude: heapprof/runtime/worker_prelude.js (the installer) and its
#   modules, one per Web API, in heapprof/runtime/js/prelude/, bundled by
#   esbuild into the body of the installer, a function of (natives, libraries, options),
#   with its source map (PreludeMap.cmake), so a profile or a stack names
#   the API's file (heapprof:runtime/headers.js:88), not a line of the bundle;
# - the libraries bundle: maintained npm implementations of Web APIs
#   (heapprof/runtime/js/package.json, installed by tools/bootstrap.sh into
#   .deps/js-runtime), bundled by their pinned esbuild from
#   heapprof/runtime/js/libraries.js. Their code is never copied into the repository.
# - the libraries bundle's source map (RuntimeLibrariesMap.cmake), so profiles
#   name those frames by package file instead of a line of the bundle.
# - HTMLRewriter's engine (heapprof/runtime/js/html_rewriter.js and
#   html-rewriter-wasm's glue) as a second bundle with its source map, run
#   only by a worker that uses HTMLRewriter (natives.htmlRewriterEngine);
# - html-rewriter-wasm's WebAssembly module (lol-html) as bytes in the binary
#   (.incbin), not in a bundle: a base64 string there would be script source
#   on the V8 heap, while the bytes are read (natives.htmlRewriterWasm) only
#   by a worker that uses HTMLRewriter.

set(HEAPPROF_JS_RUNTIME_DEPS "${PROJECT_SOURCE_DIR}/.deps/js-runtime" CACHE PATH
    "Where tools/bootstrap.sh installed heapprof/runtime/js/package.json's npm packages")

# For the .incbin of the HTMLRewriter module (at file scope, as CMake requires).
enable_language(ASM)

function(heapprof_embed_worker_prelude target)
  set(_src "${PROJECT_SOURCE_DIR}/heapprof/runtime")
  set(_deps "${HEAPPROF_JS_RUNTIME_DEPS}")
  set(_esbuild "${_deps}/node_modules/.bin/esbuild")
  if(NOT EXISTS "${_esbuild}" OR NOT EXISTS "${_deps}/installed-lock.json")
    message(FATAL_ERROR "The worker runtime's npm packages (heapprof/runtime/js/package.json) are not installed in "
                        "${_deps}: run tools/bootstrap.sh (it needs npm).")
  endif()
  file(READ "${_src}/js/package-lock.json" _wanted)
  file(READ "${_deps}/installed-lock.json" _installed)
  if(NOT _wanted STREQUAL _installed)
    message(FATAL_ERROR "The worker runtime's npm packages in ${_deps} do not match "
                        "heapprof/runtime/js/package-lock.json: run tools/bootstrap.sh to update them.")
  endif()
  # Reconfigure (and so re-check) when the lock or the installed copy changes.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               "${_src}/js/package-lock.json" "${_deps}/installed-lock.json")

  set(_gen "${PROJECT_BINARY_DIR}/generated/heapprof")
  # What both bundles share: an IIFE for libnode's V8 10.2 (chrome102), ASCII
  # output (V8 keeps a source with any other character at two bytes a
  # character), an external map without sourcesContent (the packages' dist
  # files are on npm at the pinned versions; profiles need only positions).
  set(_esbuild_common --bundle --format=iife --target=chrome102 --charset=ascii --legal-comments=eof
                      --log-level=warning --sourcemap=external --sources-content=false)
  # The prelude, the body of its installer, is ESM output without exports:
  # its modules' code unwrapped, so their top-level names are the installer's
  # locals, without esbuild's module wrapper and export helpers (the
  # prelude hands its internals over with natives.setInternals).
  string(REPLACE "--format=iife" "--format=esm" _esbuild_flat "${_esbuild_common}")
  set(_bundle "${_gen}/worker_libraries.js")
  set(_map "${_gen}/worker_libraries.map.json")
  set(_map_script "${_src}/RuntimeLibrariesMap.cmake")
  # Its completion value is { load }: load() runs the bundle at its first call
  # and returns libraries.js's namespace (then the same one again), so until a
  # worker uses a stream, URLPattern or a Durable Object V8 has only
  # pre-parsed it (no function of it exists on the heap). Module resolution
  # looks in the installed node_modules; the bundle keeps its lines and has no
  # sourceMappingURL.
  add_custom_command(
    OUTPUT "${_bundle}" "${_map}"
    BYPRODUCTS "${_bundle}.map"
    COMMAND ${CMAKE_COMMAND} -E env "NODE_PATH=${_deps}/node_modules"
            "${_esbuild}" "${_src}/js/libraries.js" ${_esbuild_common} --global-name=libraries
            "--banner:js=(() => { let loaded; const load = () => loaded ??= (() => {"
            "--footer:js=return libraries })(); return { load }; })()" "--outfile=${_bundle}"
    COMMAND ${CMAKE_COMMAND} "-DIN=${_bundle}.map" "-DOUT=${_map}" -P "${_map_script}"
    DEPENDS "${_src}/js/libraries.js" "${_src}/js/durable_objects.js" "${_src}/js/durable_object_storage.js" "${_deps}/installed-lock.json" "${_map_script}"
    COMMENT "Bundling the worker runtime's Web API libraries and their source map (esbuild)"
    VERBATIM)

  # HTMLRewriter's engine, a script of its own that the runtime runs at the
  # first HTMLRewriter use (its value: html_rewriter.js's load). Its sources
  # are named under the libraries' prefix, as npm package files. The glue is
  # CommonJS for Node: its `fs`, `path` and `util` come from
  # html_rewriter_host.js, `assert` from html_rewriter_assert.js (aliases
  # resolve in the working directory).
  set(_rewriter "${_gen}/worker_html_rewriter.js")
  set(_rewriter_map "${_gen}/worker_html_rewriter.map.json")
  set(_wasm "${_deps}/node_modules/html-rewriter-wasm/dist/html_rewriter_bg.wasm")
  add_custom_command(
    OUTPUT "${_rewriter}" "${_rewriter_map}"
    BYPRODUCTS "${_rewriter}.map"
    COMMAND ${CMAKE_COMMAND} -E env "NODE_PATH=${_deps}/node_modules"
            "${_esbuild}" "${_src}/js/html_rewriter.js" ${_esbuild_common} --global-name=htmlRewriter
            --alias:fs=./html_rewriter_host.js --alias:path=./html_rewriter_host.js
            --alias:util=./html_rewriter_host.js --alias:assert=./html_rewriter_assert.js "--define:__dirname=\"\""
            "--banner:js=(() => {" "--footer:js=return htmlRewriter.load })()" "--outfile=${_rewriter}"
    COMMAND ${CMAKE_COMMAND} "-DIN=${_rewriter}.map" "-DOUT=${_rewriter_map}" -P "${_map_script}"
    DEPENDS "${_src}/js/html_rewriter.js" "${_src}/js/html_rewriter_host.js" "${_src}/js/html_rewriter_assert.js"
            "${_deps}/installed-lock.json" "${_map_script}"
    WORKING_DIRECTORY "${_src}/js"
    COMMENT "Bundling the worker runtime's HTMLRewriter engine and its source map (esbuild)"
    VERBATIM)

  # The node: modules of nodejs_compat (heapprof/runtime/js/node.js and node/,
  # over the buffer, events, path-browserify and string_decoder packages), a
  # script of its own that the runtime runs at a worker's first import of a
  # node: module (its value: node.js's load).
  set(_node "${_gen}/worker_node.js")
  set(_node_map "${_gen}/worker_node.map.json")
  file(GLOB _node_sources CONFIGURE_DEPENDS "${_src}/js/node/*.js")
  add_custom_command(
    OUTPUT "${_node}" "${_node_map}"
    BYPRODUCTS "${_node}.map"
    COMMAND ${CMAKE_COMMAND} -E env "NODE_PATH=${_deps}/node_modules"
            "${_esbuild}" "${_src}/js/node.js" ${_esbuild_common} --global-name=nodeLibraries
            "--banner:js=(() => {" "--footer:js=return nodeLibraries.load })()" "--outfile=${_node}"
    COMMAND ${CMAKE_COMMAND} "-DIN=${_node}.map" "-DOUT=${_node_map}" -P "${_map_script}"
    DEPENDS "${_src}/js/node.js" ${_node_sources} "${_deps}/installed-lock.json" "${_map_script}"
    COMMENT "Bundling the worker runtime's node: modules and their source map (esbuild)"
    VERBATIM)

  # The prelude: its modules share one closure (esbuild's scope hoisting), so
  # what they hand each other (a class's private accessors) stays out of a
  # worker's reach. esbuild turns a top-level class that names itself inside
  # its body into `var X = class _X`, which would rename the class (X.name,
  # the frames of profiles and stacks): PreludeMap.cmake gives it back its
  # name, byte for byte in place, and fails the build on any other rename.
  set(_prelude "${_gen}/worker_prelude.js")
  set(_prelude_map "${_gen}/worker_prelude.map.json")
  set(_prelude_script "${_src}/PreludeMap.cmake")
  file(GLOB_RECURSE _prelude_sources CONFIGURE_DEPENDS "${_src}/js/prelude/*.js")
  add_custom_command(
    OUTPUT "${_prelude}" "${_prelude_map}"
    BYPRODUCTS "${_prelude}.raw.js" "${_prelude}.raw.js.map"
    COMMAND "${_esbuild}" "${_src}/worker_prelude.js" ${_esbuild_flat}
            "--banner:js='use strict';" "--outfile=${_prelude}.raw.js"
    COMMAND ${CMAKE_COMMAND} "-DIN=${_prelude}.raw.js" "-DOUT=${_prelude}" "-DMAP_OUT=${_prelude_map}"
            -P "${_prelude_script}"
    DEPENDS "${_src}/worker_prelude.js" ${_prelude_sources} "${_prelude_script}" "${_deps}/installed-lock.json"
    COMMENT "Bundling the worker runtime's prelude and its source map (esbuild)"
    VERBATIM)

  # The prelude's second script, worker_apis.js: the Web APIs off the request
  # path, bundled with the modules only they use and compiled at their first
  # use (natives.webApis); the modules of the first script that they import
  # stay imports (esbuild's __require, which the script's `require` parameter
  # answers from worker_prelude.js's shareWithApis). Same renames and map.
  set(_apis "${_gen}/worker_apis.js")
  set(_apis_map "${_gen}/worker_apis.map.json")
  set(_shared host headers request response body bytes streams runtime_token href own_strings missing timers
              cloudflare_workers context fetch crypto/globals)
  set(_externals "")
  foreach(_module IN LISTS _shared)
    list(APPEND _externals "--external:${_src}/js/prelude/${_module}.js")
  endforeach()
  add_custom_command(
    OUTPUT "${_apis}" "${_apis_map}"
    BYPRODUCTS "${_apis}.raw.js" "${_apis}.raw.js.map"
    COMMAND "${_esbuild}" "${_src}/worker_apis.js" ${_esbuild_common} --global-name=apis ${_externals}
            "--banner:js='use strict';" "--footer:js=return apis.modules;" "--outfile=${_apis}.raw.js"
    COMMAND ${CMAKE_COMMAND} "-DIN=${_apis}.raw.js" "-DOUT=${_apis}" "-DMAP_OUT=${_apis_map}" -P "${_prelude_script}"
    DEPENDS "${_src}/worker_apis.js" ${_prelude_sources} "${_prelude_script}" "${_deps}/installed-lock.json"
    COMMENT "Bundling the worker runtime's prelude's Web APIs off the request path and their source map (esbuild)"
    VERBATIM)

  set(_out "${_gen}/worker_prelude_source.cpp")
  set(_script "${PROJECT_SOURCE_DIR}/heapprof/core/flamegraph/FlamegraphAssets.cmake")
  add_custom_command(
    OUTPUT "${_out}"
    COMMAND ${CMAKE_COMMAND} "-DOUT=${_out}"
            "-DASSETS=kWorkerPreludeSource=${_prelude}|kWorkerPreludeSourceMap=${_prelude_map}|kWorkerLibrariesSource=${_bundle}|kWorkerLibrariesSourceMap=${_map}|kWorkerHtmlRewriterSource=${_rewriter}|kWorkerHtmlRewriterSourceMap=${_rewriter_map}|kWorkerNodeSource=${_node}|kWorkerNodeSourceMap=${_node_map}|kWorkerApisSource=${_apis}|kWorkerApisSourceMap=${_apis_map}"
            "-DHEADER=heapprof/runtime/worker_prelude.h" -P "${_script}"
    DEPENDS "${_prelude}" "${_prelude_map}" "${_bundle}" "${_map}" "${_rewriter}" "${_rewriter_map}" "${_node}" "${_node_map}"
            "${_apis}" "${_apis_map}"
            "${_script}"
    COMMENT "Embedding the worker runtime's prelude, libraries and their source map"
    VERBATIM)
  target_sources(${target} PRIVATE "${_out}")

  set(_wasm_asm "${_gen}/html_rewriter_wasm.S")
  file(WRITE "${_wasm_asm}.tmp"
       ".section .rodata\n"
       ".global heapprof_html_rewriter_wasm\n.balign 16\nheapprof_html_rewriter_wasm:\n"
       ".incbin \"${_wasm}\"\n"
       ".global heapprof_html_rewriter_wasm_end\nheapprof_html_rewriter_wasm_end:\n"
       ".section .note.GNU-stack,\"\",@progbits\n")
  file(COPY_FILE "${_wasm_asm}.tmp" "${_wasm_asm}" ONLY_IF_DIFFERENT)
  set_source_files_properties("${_wasm_asm}" PROPERTIES LANGUAGE ASM OBJECT_DEPENDS "${_wasm}")
  target_sources(${target} PRIVATE "${_wasm_asm}")
endfunction()
