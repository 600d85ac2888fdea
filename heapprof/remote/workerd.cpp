// workerd as a child process: config in a temporary folder, fork + exec with
// the child in its own process group and tied to heapprof's life, readiness by
// polling the inspector's /json/version and the worker's socket.
#include "heapprof/remote/workerd.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

#include "heapprof/core/file_io.h"
#include "heapprof/remote/http_client.h"

namespace heapprof::remote {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

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

Result<LoopbackListener> LoopbackListener::Open() {
  LoopbackListener l;
  l.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (l.fd < 0) return Error(ErrorCode::kUnavailable, fmt::format("cannot open a socket: {}", std::strerror(errno)));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  if (bind(l.fd, reinterpret_cast<sockaddr*>(&address), size) != 0 || listen(l.fd, SOMAXCONN) != 0 ||
      getsockname(l.fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    return Error(ErrorCode::kUnavailable, fmt::format("cannot listen on 127.0.0.1: {}", std::strerror(errno)));
  }
  l.port = ntohs(address.sin_port);
  return l;
}

LoopbackListener::~LoopbackListener() { Close(); }

void LoopbackListener::Close() {
  if (fd >= 0) close(fd);
  fd = -1;
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

std::string WorkerdProcess::OutputSince(uint64_t* offset) const {
  if (dir_.empty()) return "";
  std::ifstream in(dir_ + "/workerd.log", std::ios::binary);
  in.seekg(static_cast<std::streamoff>(*offset));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Whole lines only: workerd may be writing the last one.
  const size_t newline = text.rfind('\n');
  text.resize(newline == std::string::npos ? 0 : newline + 1);
  *offset += text.size();
  return text;
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
  WorkerdProcess p;
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string pattern = (base / "heapprof-workerd-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return Error(ErrorCode::kIo, fmt::format("cannot create a temporary folder: {}", std::strerror(errno)));
  }
  p.dir_ = pattern;
  // Each module keeps its script's file name, so stacks and the profile name
  // it; a link in a folder of its own (two workers' scripts are often both
  // index.js) lets the config embed it from its own folder.
  std::vector<std::string> scripts = {spec.worker.script};
  for (const WorkerdWorker& w : spec.services) scripts.push_back(w.script);
  if (!spec.outbound.empty()) scripts.push_back(spec.outbound);
  std::vector<WorkerdModule> modules;
  for (size_t i = 0; i < scripts.size(); ++i) {
    Result<std::string> script = ReadFileBytes(scripts[i]);
    if (!script.ok()) return script.status();
    WorkerdModule m;
    m.name = fs::path(scripts[i]).filename().string();
    m.es_module = LooksLikeEsModule(script.value());
    const fs::path folder = i == 0 ? fs::path() : fs::path(fmt::format("worker-{}", i));
    m.embed = (folder / m.name).string();
    if (i > 0) fs::create_directory(fs::path(p.dir_) / folder, ec);
    if (!ec) fs::create_symlink(fs::absolute(scripts[i]), fs::path(p.dir_) / m.embed, ec);
    if (ec) return Error(ErrorCode::kIo, fmt::format("cannot link {} into {}: {}", scripts[i], p.dir_, ec.message()));
    // The other modules of its bundle, linked beside it under their names.
    const WorkerdWorker* worker = i == 0 ? &spec.worker : i <= spec.services.size() ? &spec.services[i - 1] : nullptr;
    for (const BundleModule& extra : worker != nullptr ? worker->modules : std::vector<BundleModule>{}) {
      const fs::path file = fs::path(scripts[i]).parent_path() / extra.name;
      WorkerdModule::Extra e{extra.name, (folder / extra.name).string(), extra.type};
      fs::create_directories((fs::path(p.dir_) / e.embed).parent_path(), ec);
      if (!ec) fs::create_symlink(fs::absolute(file), fs::path(p.dir_) / e.embed, ec);
      if (ec)
        return Error(ErrorCode::kIo, fmt::format("cannot link {} into {}: {}", file.string(), p.dir_, ec.message()));
      m.extras.push_back(std::move(e));
    }
    modules.push_back(std::move(m));
  }
  p.module_name_ = modules.front().name;

  // workerd binds the inspector itself: a port freed for it can be taken
  // in between by another process, so a start that lost it is tried again.
  // The worker's socket is heapprof's own, listening before workerd starts.
  Status started;
  for (int attempt = 1; attempt <= 4; ++attempt) {
    started = p.Launch(spec, modules, timeout);
    if (started.ok()) return p;
    p.Stop();
    if (p.Output().find("Address already in use") == std::string::npos) break;
  }
  return started;
}

Status WorkerdProcess::Launch(const WorkerdSpec& spec, const std::vector<WorkerdModule>& modules, Millis timeout) {
  Result<LoopbackListener> http = LoopbackListener::Open();
  if (!http.ok()) return http.status();
  Result<uint16_t> inspector_port = FreeLoopbackPort();
  if (!inspector_port.ok()) return inspector_port.status();
  http_port_ = http.value().port;
  inspector_port_ = inspector_port.value();
  const std::string config = dir_ + "/heapprof.capnp";
  WorkerdConfigText text = WorkerdConfig(spec, modules, http_port_);
  for (const auto& [name, contents] : text.files) {
    if (Status s = WriteFileAtomic(dir_ + "/" + name, contents); !s.ok()) return s;
  }
  if (Status s = WriteFileAtomic(config, text.capnp); !s.ok()) return s;

  // Everything the child needs, prepared before fork (only async-signal-safe calls after it).
  const std::string log = dir_ + "/workerd.log";
  const int socket_fd = http.value().fd;
  const std::string inspector_arg = fmt::format("--inspector-addr=127.0.0.1:{}", inspector_port_);
  const std::string socket_arg = fmt::format("--socket-fd=http={}", socket_fd);
  // --verbose: the worker's uncaught exceptions are logged with their stacks (workerd_log.h).
  std::vector<std::string> args = {spec.binary, "serve", config, inspector_arg, socket_arg, "--verbose"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return Error(ErrorCode::kInternal, fmt::format("cannot start workerd: {}", std::strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);                     // Ctrl-C at the terminal is heapprof's to handle
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive heapprof
    if (getppid() != parent) _exit(127);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    fcntl(socket_fd, F_SETFD, 0);  // the one descriptor workerd inherits
    execv(argv[0], argv.data());
    _exit(127);
  }
  pid_ = pid;
  http.value().Close();  // workerd holds it now

  // Ready when the inspector answers and the worker's socket accepts.
  const Clock::time_point deadline = Clock::now() + timeout;
  while (true) {
    if (!Running()) {
      return Error(ErrorCode::kScriptError, fmt::format("workerd exited before serving the worker:\n{}", Output()));
    }
    Result<std::string> version = InspectorVersion(inspector(), Millis(500));
    if (version.ok()) {
      HttpRequest probe;
      probe.target = "/favicon.ico";
      Result<HttpResponse> served = SendHttp(this->http(), probe, Millis(2000));
      if (served.ok()) break;
    }
    if (Clock::now() >= deadline) {
      return Error(ErrorCode::kUnavailable,
                   fmt::format("workerd did not start serving within {} ms:\n{}", timeout.count(), Output()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Status();
}

std::string FindWorkerd(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("HEAPPROF_WORKERD"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  for (fs::path dir = exe.parent_path(); !ec && !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    fs::path candidate = dir / ".deps/workerd/bin/workerd";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::string_view rest(path);
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      fs::path candidate = fs::path(std::string(rest.substr(0, colon))) / "workerd";
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  return ".deps/workerd/bin/workerd";
}

std::vector<std::string> UnknownV8Flags(const std::string& startup_output, const std::vector<std::string>& flags) {
  std::vector<std::string> unknown;
  for (const std::string& flag : flags) {
    if (startup_output.find("flag " + flag) != std::string::npos ||
        startup_output.find("flag \"" + flag) != std::string::npos) {
      unknown.push_back(flag);
    }
  }
  return unknown;
}

}  // namespace heapprof::remote
