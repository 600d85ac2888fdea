// Default options of the sanitizer runtimes for every executable of a
// sanitizer build (see tools/cmake/Sanitizers.cmake). The runtimes call these
// before main; an ASAN_OPTIONS, UBSAN_OPTIONS, LSAN_OPTIONS or TSAN_OPTIONS
// variable in the environment overrides any single flag. Why each flag is
// set, and what each suppression covers: docs/sanitizers.md.

#ifndef HEAPPROF_SANITIZER_DIR
#error "HEAPPROF_SANITIZER_DIR (the folder of the suppression files) must be defined"
#endif

#define HEAPPROF_SANITIZER_EXPORT extern "C" __attribute__((visibility("default"), used))

HEAPPROF_SANITIZER_EXPORT const char* __asan_default_options() {
  // A 32 MB quarantine (default 256 MB) keeps RSS-based assertions (soak,
  // continuous windows) meaningful; freed blocks are still poisoned.
  return "detect_leaks=1:strict_string_checks=1:check_initialization_order=1:strict_init_order=1:"
         "quarantine_size_mb=32";
}

HEAPPROF_SANITIZER_EXPORT const char* __lsan_default_options() {
  return "suppressions=" HEAPPROF_SANITIZER_DIR "/lsan.supp:print_suppressions=0";
}

HEAPPROF_SANITIZER_EXPORT const char* __ubsan_default_options() {
  return "print_stacktrace=1:halt_on_error=1:suppressions=" HEAPPROF_SANITIZER_DIR "/ubsan.supp";
}

HEAPPROF_SANITIZER_EXPORT const char* __tsan_default_options() {
  return "halt_on_error=1:second_deadlock_stack=1:suppressions=" HEAPPROF_SANITIZER_DIR "/tsan.supp";
}
