// Exact attribution from outside: the target's inlining flags through
// Runtime.evaluate, the deoptimization through precise coverage. See the header.
#include "heapprof/remote/exact_attribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace heapprof::remote {
namespace {

using Json = nlohmann::json;

// Where a previous attach records what it changed, so that one that dies
// before detaching is undone by the next (a symbol-keyed, non-enumerable
// property of the target's global object).
constexpr std::string_view kMarker = "heapprof.attach.inlining";

// Turns `flags` (names without dashes) off one by one, reading the flag hash
// around each; returns what it saw. Never throws into the target.
std::string SwitchOffScript(const std::vector<std::string>& names) {
  return fmt::format(R"JS((() => {{
  const flags = {0};
  const key = Symbol.for({1});
  const out = {{ node: typeof process === "object" && process !== null && typeof process.versions === "object" &&
                       typeof process.versions.node === "string" }};
  out.version = out.node ? String(process.version) : "";
  out.v8 = out.node ? String(process.versions.v8) : "";
  const get = typeof process === "object" && process !== null ? process.getBuiltinModule : undefined;
  if (typeof get !== "function") {{
    out.why = out.node ? "this Node.js has no process.getBuiltinModule (Node >= 20.16 and >= 22.3 have it)"
                       : "the target has no process.getBuiltinModule, so no JS-reachable V8 flag setter";
    return out;
  }}
  let v8;
  try {{ v8 = get("v8"); }} catch (e) {{ out.why = "process.getBuiltinModule('v8') threw: " + e; return out; }}
  if (!v8 || typeof v8.setFlagsFromString !== "function" || typeof v8.cachedDataVersionTag !== "function") {{
    out.why = "its v8 module has no setFlagsFromString and cachedDataVersionTag";
    return out;
  }}
  const left = Object.getOwnPropertyDescriptor(globalThis, key);
  if (left && left.value && Array.isArray(left.value.changed)) {{
    out.adopted = left.value.changed.filter((f) => typeof f === "string");
    out.tag_before = left.value.tag;
  }} else {{
    out.adopted = [];
    out.tag_before = v8.cachedDataVersionTag();
  }}
  out.changed = [];
  out.no_effect = [];
  try {{
    for (const f of flags) {{
      const before = v8.cachedDataVersionTag();
      v8.setFlagsFromString("--no-" + f);
      (v8.cachedDataVersionTag() !== before ? out.changed : out.no_effect).push(f);
    }}
  }} catch (e) {{
    for (const f of out.changed) v8.setFlagsFromString("--" + f);
    out.changed = [];
    out.why = "v8.setFlagsFromString threw: " + e;
    return out;
  }}
  const all = [...new Set([...out.adopted, ...out.changed])];
  if (all.length > 0) {{
    Object.defineProperty(globalThis, key, {{ value: {{ changed: all, tag: out.tag_before }}, configurable: true,
                                            enumerable: false, writable: true }});
  }}
  out.tag_after = v8.cachedDataVersionTag();
  return out;
}})())JS",
                     Json(names).dump(), Json(std::string(kMarker)).dump());
}

std::string RestoreScript(const std::vector<std::string>& names) {
  return fmt::format(R"JS((() => {{
  const v8 = process.getBuiltinModule("v8");
  for (const f of {0}) v8.setFlagsFromString("--" + f);
  delete globalThis[Symbol.for({1})];
  return {{ tag: v8.cachedDataVersionTag() }};
}})())JS",
                     Json(names).dump(), Json(std::string(kMarker)).dump());
}

// Runtime.evaluate with the value returned as JSON; a thrown exception is an
// error (kFailedPrecondition), as a refused command is.
Result<Json> Evaluate(DevToolsSession& session, const std::string& expression, Millis timeout) {
  Result<Json> reply = session.Call(
      "Runtime.evaluate", Json{{"expression", expression}, {"returnByValue", true}, {"silent", true}}, timeout);
  if (!reply.ok()) return reply.status();
  if (auto ex = reply->find("exceptionDetails"); ex != reply->end()) {
    std::string text = ex->value("text", std::string("an exception"));
    if (auto e = ex->find("exception"); e != ex->end() && e->is_object()) text = e->value("description", text);
    return Error(ErrorCode::kFailedPrecondition, "Runtime.evaluate threw: " + text);
  }
  auto result = reply->find("result");
  if (result == reply->end() || !result->is_object()) {
    return Error(ErrorCode::kDataLoss, "Runtime.evaluate returned no result");
  }
  auto value = result->find("value");
  if (value == result->end()) return Error(ErrorCode::kDataLoss, "Runtime.evaluate returned no value");
  return *value;
}

std::vector<std::string> Strings(const Json& object, const char* key) {
  std::vector<std::string> out;
  if (auto it = object.find(key); it != object.end() && it->is_array()) {
    for (const Json& v : *it) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    }
  }
  return out;
}

std::optional<uint64_t> Tag(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return static_cast<uint64_t>(it->get<double>());
}

// A session's broken connection ends the command; a refused or failing
// evaluation only means the target cannot be switched.
bool ConnectionLost(const Status& s) {
  return s.code() == ErrorCode::kUnavailable || s.code() == ErrorCode::kDeadlineExceeded;
}

std::string Join(const std::vector<std::string>& names, std::string_view prefix) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + std::string(prefix) + n;
  return out;
}

}  // namespace

std::vector<std::string> InliningSwitch::ToRestore() const {
  std::vector<std::string> out = adopted;
  for (const std::string& f : changed) {
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

RuntimeKind RuntimeFromBrowser(const std::string& browser) {
  std::string lower;
  for (char c : browser) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.starts_with("node")) return RuntimeKind::kNode;
  if (lower.find("workerd") != std::string::npos) return RuntimeKind::kWorkerd;
  if (lower.find("chrome") != std::string::npos || lower.find("chromium") != std::string::npos) {
    return RuntimeKind::kChrome;
  }
  return RuntimeKind::kOther;
}

std::string HowToStartExact(RuntimeKind kind, const std::vector<std::string>& flags) {
  std::string plain;
  for (const std::string& f : flags) plain += (plain.empty() ? "" : " ") + f;
  std::string quoted;
  for (const std::string& f : flags) quoted += (quoted.empty() ? "" : ", ") + Json(f).dump();
  switch (kind) {
    case RuntimeKind::kNode:
      return fmt::format("start node with {} (or use Node >= 20.16, which heapprof can switch)", plain);
    case RuntimeKind::kWorkerd:
      return fmt::format(
          "start workerd with v8Flags = [{}] in the worker's config, or profile "
          "with `heapprof run WORKER --runtime workerd`, which sets them",
          quoted);
    case RuntimeKind::kChrome:
      return fmt::format("start Chrome with --js-flags=\"{}\"", plain);
    case RuntimeKind::kOther:
      break;
  }
  return fmt::format("start the target's V8 with {}", plain);
}

Result<InliningSwitch> SwitchInliningOff(DevToolsSession& session, const std::string& browser,
                                         const std::vector<std::string>& flags, Millis timeout) {
  InliningSwitch out;
  out.runtime = browser;
  const RuntimeKind kind = RuntimeFromBrowser(browser);
  auto cannot = [&](std::string why) {
    out.outcome = InliningSwitch::Outcome::kCannotSwitch;
    out.why = std::move(why);
    out.how = HowToStartExact(kind, flags);
    return out;
  };
  if (kind == RuntimeKind::kWorkerd) {
    // workerd has no JS-reachable flag setter (no process.getBuiltinModule('v8'));
    // and its inspector runs commands only while the isolate has work, so no probe.
    return cannot("workerd has no JS-reachable V8 flag setter");
  }
  std::vector<std::string> names;
  for (const std::string& f : flags) names.push_back(f.starts_with("--no-") ? f.substr(5) : f);
  Result<Json> seen = Evaluate(session, SwitchOffScript(names), timeout);
  if (!seen.ok()) {
    if (ConnectionLost(seen.status())) return seen.status();
    return cannot("the target refused Runtime.evaluate (" + seen.status().message() + ")");
  }
  if (!seen->is_object()) return cannot("Runtime.evaluate returned no object");
  const Json& v = seen.value();
  if (v.value("node", false)) {
    out.runtime = "node.js " + v.value("version", std::string());
    out.v8_version = v.value("v8", std::string());
  }
  if (v.contains("why")) return cannot(v.value("why", std::string("no flag setter")));
  out.changed = Strings(v, "changed");
  out.no_effect = Strings(v, "no_effect");
  out.adopted = Strings(v, "adopted");
  out.tag_before = Tag(v, "tag_before");
  out.outcome = out.changed.empty() ? InliningSwitch::Outcome::kAlreadyOff : InliningSwitch::Outcome::kSwitchedOff;
  return out;
}

Result<Deoptimization> DeoptimizeAll(DevToolsSession& session, Millis timeout) {
  if (Result<Json> r = session.Call("Profiler.enable", Json::object(), timeout); !r.ok()) return r.status();
  // takePreciseCoverage answers only while precise coverage runs: then it is someone else's.
  if (Result<Json> running = session.Call("Profiler.takePreciseCoverage", Json::object(), timeout); running.ok()) {
    return Deoptimization::kCoverageRunning;
  } else if (ConnectionLost(running.status())) {
    return running.status();
  }
  // Node's own coverage (NODE_V8_COVERAGE, as c8 and node --test's coverage
  // set it) runs in Node's in-process session, whose state the call above
  // cannot see; stopping ours would still end it, isolate-wide.
  Result<Json> node_coverage =
      Evaluate(session,
               "typeof process === 'object' && process !== null && typeof process.env === 'object' && "
               "!!process.env.NODE_V8_COVERAGE",
               timeout);
  if (node_coverage.ok() && node_coverage->is_boolean() && node_coverage->get<bool>()) {
    return Deoptimization::kCoverageRunning;
  } else if (!node_coverage.ok() && ConnectionLost(node_coverage.status())) {
    return node_coverage.status();
  }
  // callCount: V8's precise-count mode, which deoptimizes every function on start.
  if (Result<Json> r =
          session.Call("Profiler.startPreciseCoverage", Json{{"callCount", true}, {"detailed", false}}, timeout);
      !r.ok()) {
    return r.status();
  }
  if (Result<Json> r = session.Call("Profiler.stopPreciseCoverage", Json::object(), timeout); !r.ok())
    return r.status();
  if (Result<Json> r = session.Call("Profiler.disable", Json::object(), timeout); !r.ok()) return r.status();
  return Deoptimization::kDone;
}

Result<InliningRestore> RestoreInlining(DevToolsSession& session, const InliningSwitch& from, Millis timeout) {
  InliningRestore out;
  out.restored = from.ToRestore();
  if (out.restored.empty()) return out;
  Result<Json> done = Evaluate(session, RestoreScript(out.restored), timeout);
  if (!done.ok()) return done.status();
  if (done->is_object()) out.tag_after = Tag(done.value(), "tag");
  out.tag_matches = out.tag_after && from.tag_before && *out.tag_after == *from.tag_before;
  Result<Deoptimization> deoptimized = DeoptimizeAll(session, timeout);
  if (!deoptimized.ok()) return deoptimized.status();
  // Under another tool's coverage the code optimized meanwhile stays; the flags are the target's own again.
  out.deoptimized = *deoptimized == Deoptimization::kDone;
  return out;
}

std::string InliningRestore::Describe(const InliningSwitch& from) const {
  if (restored.empty()) return "nothing to restore";
  std::string tag = !tag_after ? "the flag hash could not be read"
                    : tag_matches
                        ? fmt::format("v8.cachedDataVersionTag() {} again, as found", *tag_after)
                        : fmt::format("v8.cachedDataVersionTag() {} now, {} when found: other flags changed meanwhile",
                                      *tag_after, from.tag_before ? std::to_string(*from.tag_before) : "unknown");
  if (!deoptimized) {
    return fmt::format("set {} again, not deoptimized: {} ({})", Join(restored, "--"), kCoverageRunningText, tag);
  }
  return fmt::format("set {} again and deoptimized once more ({})", Join(restored, "--"), tag);
}

}  // namespace heapprof::remote
