// What workerd's log (started with --verbose) says about a worker's uncaught
// exceptions, for `heapprof run --runtime workerd`'s outcome report: workerd
// answers a handler that throws with "500 Internal Server Error" and writes
// the exception, with its stack, only to its log. V8-free.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace heapprof::remote {

// One uncaught exception of the worker.
struct WorkerdException {
  bool rejected = false;    // "Uncaught (in promise)": the handler's promise rejected
  std::string description;  // "TypeError: boom\n    at f (worker.js:1:39)": the message, then the stack's frames
};

// The uncaught exceptions in `log` (text of workerd's --verbose log), in
// order: each "uncaught exception; source = Uncaught[ (in promise)]; stack =
// MESSAGE" line with the "    at ..." lines after it, or "...; exception =
// VALUE" for a thrown value that is not an Error. A last entry whose stack may
// still be being written (the text ends inside it) is included as it is.
std::vector<WorkerdException> ParseWorkerdExceptions(std::string_view log);

// The Durable Object classes workerd's startup log says no worker exports
// ("A DurableObjectNamespace in the config referenced the class "X", but no
// such Durable Object class is exported from the worker"), in order: workerd
// serves on, and every call to such a namespace fails.
std::vector<std::string> UnexportedDurableObjectClasses(std::string_view log);

// `description` with the stack's module names (as workerd names a module, its
// file name) replaced by `path`, so source maps can be found for the frames.
std::string WithModulePath(std::string_view description, std::string_view module, std::string_view path);

}  // namespace heapprof::remote
