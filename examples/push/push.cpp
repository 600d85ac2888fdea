// An embedder that pushes every profiling window to a continuous-profiling
// store (Grafana Pyroscope's push API): two isolates, one per Durable-Object-
// style object, each registered with the controller under the object's id;
// a continuous run on each hands every closed window to one pusher, which
// labels it durable_object=<id> and sends it from its own thread.
// Usage: heapprof_push_example URL [SECONDS] [WINDOW_MS]
#include <v8.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "heapprof/remote/window_pusher.h"
#include "heapprof/v8/controller.h"
#include "heapprof/v8/v8_host.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kScript = R"JS(
const rooms = [];
function joinRoom(n) {  // what each object keeps
  for (let i = 0; i < n; ++i) rooms.push({ member: 'user' + i, at: Date.now(), log: new Array(8).fill(i) });
  if (rooms.length > 200000) rooms.length = 0;
}
function render(n) {  // garbage
  let s = 0;
  for (let i = 0; i < n; ++i) s += JSON.stringify({ i, tags: ['a', 'b'] }).length;
  return s;
}
)JS";

// One object's isolate on its own thread: registered, busy until `stop`, unregistered.
void RunObject(heapprof::Controller& controller, const std::string& id, std::atomic<int>& ready,
               std::atomic<bool>& stop, std::atomic<int>& failures) {
  heapprof::IsolateOptions options;
  options.name = id;
  auto isolate = heapprof::Isolate::Create(options);
  if (!isolate.ok()) {
    std::fprintf(stderr, "push example: %s: %s\n", id.c_str(), isolate.status().message().c_str());
    ++failures;
    ++ready;
    return;
  }
  {
    v8::Isolate::Scope isolate_scope(isolate->get());
    v8::HandleScope handle_scope(isolate->get());
    if (auto r = isolate->RunScript(kScript, id + ".js"); !r.ok()) ++failures;
    if (auto s = controller.Register(id, isolate.value()); !s.ok()) ++failures;
    ++ready;
    while (!stop.load()) {
      if (auto r = isolate->RunScript("joinRoom(200); render(2000)", "request.js"); !r.ok()) ++failures;
      controller.Pump(isolate.value());  // lifecycle steps between requests
    }
    (void)controller.Unregister(id);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: heapprof_push_example URL [SECONDS] [WINDOW_MS]\n");
    return 2;
  }
  const double seconds = argc > 2 ? std::atof(argv[2]) : 3.0;
  const int window_ms = argc > 3 ? std::atoi(argv[3]) : 1000;

  // 1. The pusher: where, and who is pushing (the labels of every series).
  heapprof::remote::PushOptions push;
  push.url = argv[1];
  push.log = [](const std::string& line) { std::fprintf(stderr, "push example: %s\n", line.c_str()); };
  heapprof::remote::PushIdentity identity;
  identity.service_name = "chat-rooms";
  identity.version = "v42";
  identity.runtime = "embedded";
  identity.target_label = "durable_object";  // each target is one object
  identity.extra = {{"region", "eu-west"}};
  auto pusher = heapprof::remote::WindowPusher::Start(std::move(push), std::move(identity));
  if (!pusher.ok()) {
    std::fprintf(stderr, "push example: %s\n", pusher.status().message().c_str());
    return 2;
  }
  std::shared_ptr<heapprof::remote::WindowPusher> shared = std::move(pusher).value();

  // 2. The objects' isolates, each a controller target named by the object's id.
  heapprof::Controller controller;
  std::atomic<int> ready{0}, failures{0};
  std::atomic<bool> stop{false};
  const std::vector<std::string> ids = {"room:lobby", "room:support"};
  std::vector<std::thread> threads;
  for (const std::string& id : ids) {
    threads.emplace_back([&, id] { RunObject(controller, id, ready, stop, failures); });
  }
  while (ready.load() < static_cast<int>(ids.size())) std::this_thread::sleep_for(std::chrono::milliseconds(5));

  // 3. Back-to-back windows on each; every closed window goes to the pusher.
  std::vector<uint64_t> runs;
  for (const std::string& id : ids) {
    heapprof::WindowRequest request;
    request.target = id;
    request.duration = std::chrono::milliseconds(window_ms);
    request.options.interval_bytes = 32 * 1024;
    auto run = controller.StartContinuous(request, heapprof::remote::PushingSink(shared));
    if (!run.ok()) {
      std::fprintf(stderr, "push example: %s: %s\n", id.c_str(), run.status().message().c_str());
      ++failures;
      continue;
    }
    runs.push_back(run.value());
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));

  // 4. The last partial windows, then the queue drained (for at most 10 s).
  for (uint64_t run : runs) controller.StopContinuous(run);
  stop = true;
  for (std::thread& t : threads) t.join();
  controller.Shutdown();
  shared->Stop(std::chrono::seconds(10));
  std::printf("%s\n", shared->Summary().c_str());
  return failures.load() == 0 && shared->AllPushed() ? 0 : 1;
}
