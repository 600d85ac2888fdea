// workerd as a child process: config in a temporary folder, fork + exec with
// the child in its own process group and tied to heapprof's life, readiness by
// polling the inspector's /json/version and the worker's socket.
#include "heapprof/remote/workerd.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "heapprof/core/file_io.h"
#include "heapprof/remote/http_client.h"

namespace heapprof::remote {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// A Cap'n Proto text literal. Its escapes are C's: a raw newline would end
// the literal (a parse error), so control characters become \xHH; other
// bytes (UTF-8 included) go through.
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

RuntimeSupport WorkerdRuntimeSupport() {
  RuntimeSupport support;
  support.runtime = "heapprof's workerd mode";
  support.keys = {"name", "main", "compatibility_date", "compatibility_flags", "vars"};
  support.all_compatibility_flags = true;  // workerd's own; it refuses one it does not know
  return support;
}

std::vector<WorkerdBinding> WorkerdBindings(const WorkerConfig& config) {
  std::vector<WorkerdBinding> out;
  for (const auto& [name, value] : config.bindings.vars) {
    nlohmann::json parsed = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_string()) {
      out.push_back({name, WorkerdBinding::Kind::kText, parsed.get<std::string>()});
    } else {
      out.push_back({name, WorkerdBinding::Kind::kJson, value});
    }
  }
  return out;
}

bool LooksLikeEsModule(std::string_view script) {
  // An export statement (minified bundles end in `export{x as default}`), or
  // no fetch listener of a service-worker script.
  static const std::regex kExport(
      R"((^|[\n;}])\s*export(\s*[{*]|\s+(default|const|let|var|function|class|async)\b))");
  static const std::regex kListener(R"(addEventListener\s*\(\s*["'`]fetch["'`])");
  if (std::regex_search(script.begin(), script.end(), kExport)) return true;
  return !std::regex_search(script.begin(), script.end(), kListener);
}

std::string WorkerdConfig(const WorkerdSpec& spec, const std::string& module_name, bool es_module,
                          uint16_t http_port) {
  std::string flags;
  for (const std::string& f : spec.v8_flags) flags += (flags.empty() ? "" : ", ") + Quote(f);
  std::string flags_list;
  for (const std::string& f : spec.compatibility_flags) flags_list += (flags_list.empty() ? "" : ", ") + Quote(f);
  std::string bindings;
  for (const WorkerdBinding& b : spec.bindings) {
    bindings += fmt::format("{}(name = {}, {} = {})", bindings.empty() ? "" : ",\n    ", Quote(b.name),
                            b.kind == WorkerdBinding::Kind::kText ? "text" : "json", Quote(b.value));
  }
  std::string code = es_module ? fmt::format("modules = [ (name = {0}, esModule = embed {0}) ],", Quote(module_name))
                               : fmt::format("serviceWorkerScript = embed {},", Quote(module_name));
  return fmt::format(R"(# Written by heapprof run --runtime workerd.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:{}", http = (style = proxy), service = "main") ],
  v8Flags = [ {} ],
);

const worker :Workerd.Worker = (
  {}
  compatibilityDate = {},
  compatibilityFlags = [ {} ],
  bindings = [
    {}
  ],
);
)",
                     http_port, flags, code, Quote(spec.compatibility_date), flags_list, bindings);
}

Result<uint16_t> FreeLoopbackPort() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor acceptor(ioc);
  boost::system::error_code ec;
  boost::asio::ip::tcp::endpoint any(boost::asio::ip::make_address("127.0.0.1"), 0);
  acceptor.open(any.protocol(), ec);
  if (!ec) acceptor.bind(any, ec);
  if (ec) return Error(ErrorCode::kUnavailable, "cannot find a free loopback port: " + ec.message());
  return acceptor.local_endpoint().port();
}

WorkerdProcess::WorkerdProcess(WorkerdProcess&& other) noexcept { *this = std::move(other); }

WorkerdProcess& WorkerdProcess::operator=(WorkerdProcess&& other) noexcept {
  if (this != &other) {
    Stop();
    pid_ = std::exchange(other.pid_, -1);
    http_port_ = other.http_port_;
    inspector_port_ = other.inspector_port_;
    dir_ = std::exchange(other.dir_, std::string());
    module_name_ = other.module_name_;
  }
  return *this;
}

WorkerdProcess::~WorkerdProcess() {
  Stop();
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

std::string WorkerdProcess::Output() const {
  if (dir_.empty()) return "";
  std::ifstream in(dir_ + "/workerd.log");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool WorkerdProcess::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void WorkerdProcess::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  for (int i = 0; i < 100; ++i) {  // up to 5 s for a clean exit
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

Result<WorkerdProcess> WorkerdProcess::Start(const WorkerdSpec& spec, Millis timeout) {
  if (access(spec.binary.c_str(), X_OK) != 0) {
    return Error(ErrorCode::kNotFound, fmt::format("workerd not found at {} (tools/bootstrap.sh installs it into "
                                                   ".deps/workerd; or pass --workerd PATH)",
                                                   spec.binary));
  }
  Result<std::string> script = ReadFileBytes(spec.worker);
  if (!script.ok()) return script.status();
  const bool es_module = LooksLikeEsModule(script.value());

  WorkerdProcess p;
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string pattern = (base / "heapprof-workerd-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return Error(ErrorCode::kIo, fmt::format("cannot create a temporary folder: {}", std::strerror(errno)));
  }
  p.dir_ = pattern;
  // The module keeps the worker's file name, so the profile names it; a link
  // lets the config embed it from its own folder.
  p.module_name_ = fs::path(spec.worker).filename().string();
  fs::create_symlink(fs::absolute(spec.worker), fs::path(p.dir_) / p.module_name_, ec);
  if (ec) return Error(ErrorCode::kIo, fmt::format("cannot link {} into {}: {}", spec.worker, p.dir_, ec.message()));

  Result<uint16_t> http_port = FreeLoopbackPort();
  if (!http_port.ok()) return http_port.status();
  Result<uint16_t> inspector_port = FreeLoopbackPort();
  if (!inspector_port.ok()) return inspector_port.status();
  p.http_port_ = http_port.value();
  p.inspector_port_ = inspector_port.value();
  const std::string config = p.dir_ + "/heapprof.capnp";
  if (Status s = WriteFileAtomic(config, WorkerdConfig(spec, p.module_name_, es_module, p.http_port_)); !s.ok()) {
    return s;
  }

  // Everything the child needs, prepared before fork (only async-signal-safe calls after it).
  const std::string log = p.dir_ + "/workerd.log";
  const std::string inspector_arg = fmt::format("--inspector-addr=127.0.0.1:{}", p.inspector_port_);
  std::vector<std::string> args = {spec.binary, "serve", config, inspector_arg};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return Error(ErrorCode::kInternal, fmt::format("cannot start workerd: {}", std::strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);                    // Ctrl-C at the terminal is heapprof's to handle
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive heapprof
    if (getppid() != parent) _exit(127);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  p.pid_ = pid;

  // Ready when the inspector answers and the worker's socket accepts.
  const Clock::time_point deadline = Clock::now() + timeout;
  while (true) {
    if (!p.Running()) {
      return Error(ErrorCode::kScriptError,
                   fmt::format("workerd exited before serving the worker:\n{}", p.Output()));
    }
    Result<std::string> version = InspectorVersion(p.inspector(), Millis(500));
    if (version.ok()) {
      HttpRequest probe;
      probe.target = "/favicon.ico";
      Result<HttpResponse> served = SendHttp(p.http(), probe, Millis(2000));
      if (served.ok()) break;
    }
    if (Clock::now() >= deadline) {
      return Error(ErrorCode::kUnavailable, fmt::format("workerd did not start serving within {} ms:\n{}",
                                                        timeout.count(), p.Output()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return p;
}

}  // namespace heapprof::remote
