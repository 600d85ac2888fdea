#include "tools/heapprof/attach_target.h"

#include <fmt/format.h>

#include <vector>

namespace heapprof::cli {

using remote::InspectorTarget;

namespace {
std::string TargetLine(const InspectorTarget& t) {
  return fmt::format("  {}  {}{}", t.id.empty() ? "(no id)" : t.id, t.title, t.url.empty() ? "" : "  (" + t.url + ")");
}

}  // namespace

bool IsWebSocketUrl(const std::string& target) { return target.starts_with("ws://") || target.starts_with("wss://"); }

Result<InspectorTarget> ChooseTarget(const ChooseTargetArgs& args) {
  if (IsWebSocketUrl(args.target)) {
    return InspectorTarget{"", args.target, "", "", args.target};
  }
  Result<remote::HostPort> where = remote::ParseHostPort(args.target);
  if (!where.ok()) return where.status();
  Result<std::vector<InspectorTarget>> listed = remote::ListTargets(where.value(), args.timeout);
  if (!listed.ok()) return listed.status();
  std::vector<InspectorTarget> targets;
  for (InspectorTarget& t : listed.value()) {
    if (!t.websocket_url.empty()) targets.push_back(std::move(t));  // one without a URL has a debugger attached
  }
  std::string list;
  for (const InspectorTarget& t : targets) list += "\n" + TargetLine(t);
  if (targets.empty()) {
    return Error(ErrorCode::kNotFound,
                 fmt::format("{} lists no target to attach to (a debugger may hold it)", args.target));
  }
  if (args.name.empty()) {
    if (targets.size() == 1) return targets.front();
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("{} lists {} targets; pick one with --target ID or --target TITLE:{}", args.target,
                             targets.size(), list));
  }
  std::vector<InspectorTarget> exact, partial;
  for (const InspectorTarget& t : targets) {
    if (t.id == args.name || t.title == args.name)
      exact.push_back(t);
    else if (t.title.find(args.name) != std::string::npos || t.url.find(args.name) != std::string::npos) {
      partial.push_back(t);
    }
  }
  const std::vector<InspectorTarget>& chosen = exact.empty() ? partial : exact;
  if (chosen.size() == 1) return chosen.front();
  return Error(chosen.empty() ? ErrorCode::kNotFound : ErrorCode::kInvalidArgument,
               fmt::format("{} targets at {} match --target {}; the targets are:{}", chosen.size(), args.target,
                           args.name, list));
}

Result<remote::HostPort> InspectorOf(const std::string& target) {
  if (!IsWebSocketUrl(target)) return remote::ParseHostPort(target);
  std::string rest = target.substr(target.find("//") + 2);
  return remote::ParseHostPort(rest.substr(0, rest.find('/')));
}

}  // namespace heapprof::cli
