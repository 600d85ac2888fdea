# Embeds the worker runtime's prelude (heapprof/v8/worker_prelude.js, a real
# JavaScript file: `node --check` tests it) into a library as a string literal
# at build time, with the same generator as the flamegraph page assets.

function(heapprof_embed_worker_prelude target)
  set(_js "${PROJECT_SOURCE_DIR}/heapprof/v8/worker_prelude.js")
  set(_out "${PROJECT_BINARY_DIR}/generated/heapprof/worker_prelude_source.cpp")
  set(_script "${PROJECT_SOURCE_DIR}/heapprof/core/flamegraph/FlamegraphAssets.cmake")
  add_custom_command(
    OUTPUT "${_out}"
    COMMAND ${CMAKE_COMMAND} "-DOUT=${_out}" "-DASSETS=kWorkerPreludeSource=${_js}"
            "-DHEADER=heapprof/v8/worker_prelude.h" -P "${_script}"
    DEPENDS "${_js}" "${_script}"
    COMMENT "Embedding the worker runtime's prelude"
    VERBATIM)
  target_sources(${target} PRIVATE "${_out}")
endfunction()
