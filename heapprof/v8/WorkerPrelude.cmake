# Embeds the worker runtime's JavaScript into a library as string literals at
# build time, with the same generator as the flamegraph page assets:
# - the prelude (heapprof/v8/worker_prelude.js, a real JavaScript file:
#   `node --check` tests it);
# - the libraries bundle: maintained npm implementations of Web APIs
#   (heapprof/v8/js/package.json, installed by tools/bootstrap.sh into
#   .deps/js-runtime), bundled by their pinned esbuild from
#   heapprof/v8/js/libraries.js. Their code is never copied into the repository.

set(HEAPPROF_JS_RUNTIME_DEPS "${PROJECT_SOURCE_DIR}/.deps/js-runtime" CACHE PATH
    "Where tools/bootstrap.sh installed heapprof/v8/js/package.json's npm packages")

function(heapprof_embed_worker_prelude target)
  set(_src "${PROJECT_SOURCE_DIR}/heapprof/v8")
  set(_deps "${HEAPPROF_JS_RUNTIME_DEPS}")
  set(_esbuild "${_deps}/node_modules/.bin/esbuild")
  if(NOT EXISTS "${_esbuild}" OR NOT EXISTS "${_deps}/installed-lock.json")
    message(FATAL_ERROR "The worker runtime's npm packages (heapprof/v8/js/package.json) are not installed in "
                        "${_deps}: run tools/bootstrap.sh (it needs npm).")
  endif()
  file(READ "${_src}/js/package-lock.json" _wanted)
  file(READ "${_deps}/installed-lock.json" _installed)
  if(NOT _wanted STREQUAL _installed)
    message(FATAL_ERROR "The worker runtime's npm packages in ${_deps} do not match "
                        "heapprof/v8/js/package-lock.json: run tools/bootstrap.sh to update them.")
  endif()
  # Reconfigure (and so re-check) when the lock or the installed copy changes.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               "${_src}/js/package-lock.json" "${_deps}/installed-lock.json")

  set(_gen "${PROJECT_BINARY_DIR}/generated/heapprof")
  set(_bundle "${_gen}/worker_libraries.js")
  # An IIFE whose completion value is libraries.js's namespace; chrome102 is
  # libnode's V8 10.2. Module resolution looks in the installed node_modules.
  add_custom_command(
    OUTPUT "${_bundle}"
    COMMAND ${CMAKE_COMMAND} -E env "NODE_PATH=${_deps}/node_modules"
            "${_esbuild}" "${_src}/js/libraries.js" --bundle --format=iife --global-name=libraries
            --target=chrome102 --charset=utf8 --legal-comments=eof --log-level=warning
            "--banner:js=(() => {" "--footer:js=return libraries })()" "--outfile=${_bundle}"
    DEPENDS "${_src}/js/libraries.js" "${_deps}/installed-lock.json"
    COMMENT "Bundling the worker runtime's Web API libraries (esbuild)"
    VERBATIM)

  set(_out "${_gen}/worker_prelude_source.cpp")
  set(_script "${PROJECT_SOURCE_DIR}/heapprof/core/flamegraph/FlamegraphAssets.cmake")
  add_custom_command(
    OUTPUT "${_out}"
    COMMAND ${CMAKE_COMMAND} "-DOUT=${_out}"
            "-DASSETS=kWorkerPreludeSource=${_src}/worker_prelude.js|kWorkerLibrariesSource=${_bundle}"
            "-DHEADER=heapprof/v8/worker_prelude.h" -P "${_script}"
    DEPENDS "${_src}/worker_prelude.js" "${_bundle}" "${_script}"
    COMMENT "Embedding the worker runtime's prelude and libraries"
    VERBATIM)
  target_sources(${target} PRIVATE "${_out}")
endfunction()
