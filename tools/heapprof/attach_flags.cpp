// `heapprof attach`'s flags.
#include <memory>

#include "tools/heapprof/attach_args.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/flag_values.h"
#include "tools/heapprof/profile_report.h"

namespace heapprof::cli {

void RegisterAttach(Commands& commands) {
  auto args = std::make_shared<AttachArgs>();
  CLI::App* attach = commands.Add(
      "attach",
      "Profile the heap of a V8 running in another process through its DevTools inspector: workerd and "
      "`wrangler dev` (--inspector-addr, port 9229 by default), `node --inspect`, Chrome.\n"
      "The protocol samples either every allocation or what stays alive per window, so by default two "
      "back-to-back windows of the same length are profiled: alloc_* from the first, inuse_* from the second "
      "(see --sample-types). Writes the same pprof file, tables and flamegraph as `heapprof run`.",
      [args] {
        args->continuous.output_given = args->output_option->count() > 0;
        return Attach(*args);
      });
  attach
      ->add_option("target", args->target,
                   "HOST:PORT of the inspector (its /json/list names the targets) or a target's ws:// URL")
      ->required();
  attach->add_option("--target", args->name, "Which listed target: its id or title (or part of its title or URL)");
  attach->add_option("--duration,-d")
      ->description("Length of each window, e.g. 10s (with --continuous: of the whole run) [default: until Ctrl-C]")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->duration_ns, ParsePositiveDuration));
  attach->add_option("--interval")
      ->description("Mean bytes between samples, e.g. 512KiB, 64k, 1MiB")
      ->type_name("SIZE")
      ->check(ParsedInto(&args->interval_bytes, ParseInterval))
      ->default_str(DefaultIntervalText());
  attach->add_flag("--leaks", args->leaks,
                   "Track growth instead of one window: one sampling session (no include flags), a live snapshot "
                   "after a full GC every --cadence; at the end, per allocation site, the growth rate with its 95 % "
                   "interval and a verdict (growing, bounded, steady, unclear), and the time to the heap limit "
                   "(docs/statistics.md)");
  attach->add_option("--cadence")
      ->description("With --leaks: time between snapshots [default: 100 x the first snapshot's cost, >= 1 s]")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->cadence_ns, ParsePositiveDuration));
  attach->add_option("--leaks-json", args->leaks_json, "With --leaks: also write the growth report as JSON to FILE");
  args->sample_types_option =
      attach
          ->add_option("--sample-types", args->sample_types,
                       "inuse (one window, what stays alive), alloc (one window, every allocation) or both (two "
                       "back-to-back windows)")
          ->capture_default_str();
  attach->add_flag("--no-gc", args->no_gc,
                   "Skip the full GC before the in-use snapshot (garbage not yet collected then counts as in use)");
  args->output_option =
      attach->add_option("-o,--output", args->output, "Where to write the profile")->capture_default_str();
  AddAttachContinuousOptions(attach, args->continuous);
  attach->add_option("--flamegraph", args->flamegraph,
                     "Also write an interactive flamegraph page (HTML) of the profile");
  attach->add_option("--top", args->top, "Rows per table printed at the end (0: no tables)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  attach->add_flag("--user-code", args->user_code, kUserCodeHelp);
  attach->add_option("--sample-index", args->sample_index,
                     "Print only this table: inuse_space, alloc_space, inuse_objects or alloc_objects");
  attach->add_flag("--no-source-maps", args->no_source_maps,
                   "Keep the generated names and positions (by default the source maps of the scripts the target "
                   "reports are applied: sourceMappingURL comment, inline map or SCRIPT.map, under --source-map-path)");
  attach
      ->add_option("--source-map-path", args->source_map_paths,
                   "Read the scripts the target names, and their maps, only under DIR (repeatable) "
                   "[default: the current folder]")
      ->allow_extra_args(false);
  attach
      ->add_option("--maps", args->map_dirs,
                   "Also look for maps in DIR: DIR/<script>.map (for scripts named by module name, e.g. workerd's)")
      ->allow_extra_args(false);
  attach->add_flag("--allow-inlining", args->exact.allow_inlining,
                   "Leave the target as it runs: by default heapprof turns its inlining flags off, deoptimizes it "
                   "once and lets it warm up before the window, and at detach restores the flags and deoptimizes "
                   "again (Node >= 20.16; workerd and older Node cannot be switched and are said so)");
  attach->add_option("--warmup")
      ->description(
          "After the deoptimization, how long the target runs before the first window opens (its hot "
          "code optimized again, without inlining); 0 for none")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->exact.warmup, ParseRequestTimeout))
      ->default_str("3s");
  attach->add_option("--timeout")
      ->description(
          "How long to wait for each step of the target: the connection, the WebSocket handshake, "
          "each answer")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->timeout, ParseTimeout))
      ->default_str("30s");
}

}  // namespace heapprof::cli
