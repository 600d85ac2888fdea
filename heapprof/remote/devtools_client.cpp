// The DevTools protocol over Boost.Beast. The session keeps one read pending
// at all times (replies and events land in an inbox), so a target that goes
// away is noticed while a window waits, not only at the next command. Every
// wait runs the io_context in slices up to a deadline; on a timeout the
// socket is closed and the pending operations drained before returning, so no
// handler outlives the state it refers to.
#include "heapprof/remote/devtools_client.h"

#include <fmt/format.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <charconv>
#include <deque>
#include <optional>

#include "heapprof/remote/http_client.h"
#include "heapprof/remote/net_util.h"

namespace heapprof::remote {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using internal::Describe;
using internal::NetError;

namespace {

// A sampling profile of a busy worker is a few MB of JSON; allow far more.
constexpr uint64_t kMaxMessage = 1ull << 30;
// How often a wait looks at its stop condition.
constexpr auto kSlice = std::chrono::milliseconds(50);

Status BadReply(const std::string& what) { return Error(ErrorCode::kDataLoss, what); }

Result<Json> GetJson(const HostPort& inspector, const std::string& path, Millis timeout) {
  HttpRequest request;
  request.target = path;
  Result<HttpResponse> response = SendHttp(inspector, request, timeout);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return BadReply(
        fmt::format("{}{} answered HTTP {}: is it a DevTools inspector (e.g. node --inspect, "
                    "workerd --inspector-addr)?",
                    Describe(inspector), path, response->status));
  }
  try {
    return Json::parse(response->body);
  } catch (const Json::exception&) {
    return BadReply(fmt::format("{}{} did not answer JSON: is it a DevTools inspector?", Describe(inspector), path));
  }
}

std::string StringField(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Result<HostPort> ParseHostPort(std::string_view text) {
  Result<HostPort> parsed = heapprof::ParseHostPort(text, PortZero::kInvalid);
  if (!parsed.ok()) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("\"{}\" is not HOST:PORT (e.g. 127.0.0.1:9229) or a ws:// URL: {}", text,
                             parsed.status().message()));
  }
  return parsed;
}

Result<std::vector<InspectorTarget>> ListTargets(const HostPort& inspector, Millis timeout) {
  Result<Json> list = GetJson(inspector, "/json/list", timeout);
  if (!list.ok()) return list.status();
  if (!list->is_array()) return BadReply(Describe(inspector) + "/json/list is not a list of targets");
  std::vector<InspectorTarget> targets;
  for (const Json& entry : list.value()) {
    if (!entry.is_object()) continue;
    InspectorTarget t;
    t.id = StringField(entry, "id");
    t.title = StringField(entry, "title");
    t.type = StringField(entry, "type");
    t.url = StringField(entry, "url");
    t.websocket_url = StringField(entry, "webSocketDebuggerUrl");
    targets.push_back(std::move(t));
  }
  return targets;
}

Result<std::string> InspectorVersion(const HostPort& inspector, Millis timeout) {
  Result<Json> version = GetJson(inspector, "/json/version", timeout);
  if (!version.ok()) return version.status();
  if (!version->is_object()) return BadReply(Describe(inspector) + "/json/version is not an object");
  return StringField(version.value(), "Browser");
}

struct DevToolsSession::Impl {
  asio::io_context ioc;
  websocket::stream<beast::tcp_stream> ws{ioc};
  HostPort where;
  std::string path;
  beast::flat_buffer buffer;
  bool reading = false;
  std::deque<std::string> inbox;
  beast::error_code read_error;
  Status broken;  // not ok once the session cannot be used any more
  int64_t next_id = 1;

  std::string Name() const { return "ws://" + Describe(where) + path; }

  void StartRead() {
    if (reading || read_error || !broken.ok()) return;
    reading = true;
    ws.async_read(buffer, [this](beast::error_code ec, size_t) {
      reading = false;
      if (ec) {
        read_error = ec;
        return;
      }
      inbox.push_back(beast::buffers_to_string(buffer.data()));
      buffer.consume(buffer.size());
      StartRead();
    });
  }

  // Closes the socket and lets every pending handler run (with an error).
  void Abandon(Status why) {
    if (broken.ok()) broken = std::move(why);
    beast::error_code ignored;
    beast::get_lowest_layer(ws).socket().close(ignored);
    ioc.restart();
    ioc.run();
  }

  Status Gone() {
    Status s = read_error == websocket::error::closed || read_error == asio::error::eof
                   ? Error(ErrorCode::kUnavailable, fmt::format("the target {} went away (it closed the DevTools "
                                                                "connection)",
                                                                Name()))
                   : NetError("reading from the DevTools connection", where, read_error);
    Abandon(s);
    return broken;
  }

  // Runs the I/O until `done()` or the deadline; a dropped connection ends it early.
  Status Pump(Clock::time_point deadline, const std::function<bool()>& done, const std::string& waiting_for) {
    if (!broken.ok()) return broken;
    StartRead();
    while (true) {
      if (done()) return Status::Ok();
      if (!broken.ok()) return broken;
      if (read_error) return Gone();
      Clock::time_point now = Clock::now();
      if (now >= deadline) {
        Abandon(Error(ErrorCode::kUnavailable,
                      fmt::format("the target {} did not answer {} in time", Name(), waiting_for)));
        return broken;
      }
      if (ioc.stopped()) ioc.restart();
      ioc.run_one_until(std::min(deadline, now + kSlice));
    }
  }
};

DevToolsSession::DevToolsSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DevToolsSession::DevToolsSession(DevToolsSession&&) noexcept = default;
DevToolsSession& DevToolsSession::operator=(DevToolsSession&&) noexcept = default;

DevToolsSession::~DevToolsSession() {
  if (!impl_ || !impl_->broken.ok()) return;
  // A polite close, briefly; the target copes with an abrupt one too.
  Impl& s = *impl_;
  bool closed = false;
  s.ws.async_close(websocket::close_code::normal, [&closed](beast::error_code) { closed = true; });
  (void)s.Pump(
      Clock::now() + Millis(500), [&] { return closed || static_cast<bool>(s.read_error); }, "the close");
  s.Abandon(Error(ErrorCode::kFailedPrecondition, "the session is closed"));
}

Result<DevToolsSession> DevToolsSession::Connect(const std::string& websocket_url, Millis timeout) {
  auto bad = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("bad WebSocket URL \"{}\": {}", websocket_url, why));
  };
  constexpr std::string_view kScheme = "ws://";
  if (websocket_url.rfind("wss://", 0) == 0)
    return bad("wss:// is not supported (inspectors listen on loopback ws://)");
  if (websocket_url.rfind(kScheme, 0) != 0) return bad("it must start with ws://");
  std::string rest = websocket_url.substr(kScheme.size());
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "/" : rest.substr(slash);
  Result<HostPort> where = ParseHostPort(authority);
  if (!where.ok()) return bad("the host must be HOST:PORT");

  auto impl = std::make_unique<Impl>();
  impl->where = where.value();
  impl->path = path;
  auto endpoints = internal::Resolve(impl->ioc, impl->where);
  if (!endpoints.ok()) return endpoints.status();

  Impl& s = *impl;
  Status status;
  bool done = false;
  beast::get_lowest_layer(s.ws).expires_after(timeout);
  beast::get_lowest_layer(s.ws).async_connect(endpoints.value(), [&](beast::error_code ec, const auto&) {
    if (ec) {
      status = NetError("connect", s.where, ec);
      done = true;
      return;
    }
    s.ws.async_handshake(authority, path, [&](beast::error_code hec) {
      if (hec == websocket::error::upgrade_declined) {
        status = Error(ErrorCode::kNotFound, fmt::format("{} has no DevTools target at {} (the WebSocket upgrade "
                                                         "was declined); list the targets with HOST:PORT",
                                                         Describe(s.where), path));
      } else if (hec) {
        status = NetError("the WebSocket handshake", s.where, hec);
      }
      done = true;
    });
  });
  s.ioc.run();
  if (!done) status = Error(ErrorCode::kInternal, "the WebSocket connect did not complete");
  if (!status.ok()) return status;
  beast::get_lowest_layer(s.ws).expires_never();  // deadlines from here on are per wait (Pump)
  s.ws.read_message_max(kMaxMessage);
  s.ws.text(true);
  return DevToolsSession(std::move(impl));
}

Result<Json> DevToolsSession::Call(std::string_view method, Json params, Millis timeout) {
  Impl& s = *impl_;
  if (!s.broken.ok()) return s.broken;
  const Clock::time_point deadline = Clock::now() + timeout;
  const int64_t id = s.next_id++;
  const std::string text = Json{{"id", id}, {"method", method}, {"params", std::move(params)}}.dump();
  bool written = false;
  beast::error_code write_error;
  s.ws.async_write(asio::buffer(text), [&](beast::error_code ec, size_t) {
    written = true;
    write_error = ec;
  });
  if (Status st = s.Pump(
          deadline, [&] { return written; }, std::string(method));
      !st.ok())
    return st;
  if (write_error) {
    s.Abandon(NetError("sending " + std::string(method), s.where, write_error));
    return s.broken;
  }

  std::optional<Json> reply;
  Status malformed;
  auto find_reply = [&] {
    while (!s.inbox.empty() && !reply && malformed.ok()) {
      std::string message = std::move(s.inbox.front());
      s.inbox.pop_front();
      Json parsed = Json::parse(message, nullptr, /*allow_exceptions=*/false);
      if (!parsed.is_object()) {
        malformed = BadReply(fmt::format("the target {} sent a message that is not a JSON object", s.Name()));
        break;
      }
      auto it = parsed.find("id");
      if (it != parsed.end() && it->is_number_integer() && it->get<int64_t>() == id) reply = std::move(parsed);
      // Anything else is an event (or a late reply): not ours.
    }
    return reply.has_value() || !malformed.ok();
  };
  if (Status st = s.Pump(deadline, find_reply, "the command " + std::string(method)); !st.ok()) return st;
  if (!malformed.ok()) return malformed;

  if (auto err = reply->find("error"); err != reply->end()) {
    std::string message = err->is_object() ? StringField(*err, "message") : std::string();
    int64_t code = err->is_object() && err->contains("code") && (*err)["code"].is_number_integer()
                       ? (*err)["code"].get<int64_t>()
                       : 0;
    return Error(ErrorCode::kFailedPrecondition, fmt::format("protocol error: {} failed: {} (code {})", method,
                                                             message.empty() ? "no message" : message, code));
  }
  auto result = reply->find("result");
  if (result == reply->end()) return Json::object();
  return std::move(*result);
}

Status DevToolsSession::Wait(std::chrono::nanoseconds duration, const std::function<bool()>& stop) {
  Impl& s = *impl_;
  const Clock::time_point end = Clock::now() + std::chrono::duration_cast<Clock::duration>(duration);
  // The window's end is not an error: pump to the end, then report Ok.
  Status st = s.Pump(
      Clock::time_point::max(), [&] { return stop() || Clock::now() >= end; }, "");
  s.inbox.clear();  // events during the window are of no interest
  return st;
}

}  // namespace heapprof::remote
