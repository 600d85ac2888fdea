// A client of the Chrome DevTools protocol, the inspector that workerd
// (`wrangler dev`), `node --inspect` and Chrome expose: the target list over
// HTTP (GET /json/list) and one WebSocket session per target. Built on
// Boost.Beast; V8-free. Every wait has a deadline, so a target that stops
// answering ends in an error, never a hang.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/core/host_port.h"
#include "heapprof/core/status.h"

namespace heapprof::remote {

using Millis = std::chrono::milliseconds;

// A host and TCP port, e.g. from "127.0.0.1:9229" (the core's one parser).
using heapprof::HostPort;

// An inspector's "HOST:PORT" ("[::1]:9229" for IPv6; port 0 is no address);
// kInvalidArgument otherwise.
Result<HostPort> ParseHostPort(std::string_view text);

// One entry of the inspector's /json/list.
struct InspectorTarget {
  std::string id;
  std::string title;
  std::string type;
  std::string url;
  std::string websocket_url;  // webSocketDebuggerUrl
};

// The targets an inspector lists. kUnavailable when nothing listens there,
// kDataLoss when the answer is not a target list.
Result<std::vector<InspectorTarget>> ListTargets(const HostPort& inspector, Millis timeout);

// The inspector's /json/version "Browser" field (e.g. "node.js/v20.19.0",
// "workerd"), or an error.
Result<std::string> InspectorVersion(const HostPort& inspector, Millis timeout);

// One DevTools session over a WebSocket. Move-only; closing is implicit on
// destruction. After a timeout or a dropped connection the session is broken
// and every further call fails at once.
class DevToolsSession {
 public:
  // Connects to a ws:// URL (wss:// is refused: inspectors listen on loopback).
  static Result<DevToolsSession> Connect(const std::string& websocket_url, Millis timeout);

  DevToolsSession(DevToolsSession&&) noexcept;
  DevToolsSession& operator=(DevToolsSession&&) noexcept;
  DevToolsSession(const DevToolsSession&) = delete;
  DevToolsSession& operator=(const DevToolsSession&) = delete;
  ~DevToolsSession();

  // Sends a command and waits for its reply, skipping the events in between.
  // Returns the reply's "result". A reply with "error" is kFailedPrecondition
  // ("protocol error ..."); a closed connection is kUnavailable; no reply
  // within `timeout` is kUnavailable too.
  Result<nlohmann::json> Call(std::string_view method, nlohmann::json params, Millis timeout);

  // Waits `duration` while keeping an eye on the connection: returns early
  // (Ok) when `stop()` turns true, and with kUnavailable when the target
  // closes the connection meanwhile.
  Status Wait(std::chrono::nanoseconds duration, const std::function<bool()>& stop);

 private:
  struct Impl;
  explicit DevToolsSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace heapprof::remote
