# Sourced by the serve tests: start `heapprof serve` on free loopback ports and
# stop it. After start_serve: $serve_pid, $base (http://host:port of the
# worker), $debug (http://host:port of the debug listener, https:// with TLS).
# shellcheck shell=bash

# start_serve <name> <heapprof serve arguments...>: waits until both listeners
# answer. SIGINT at its default, as at a terminal (a script's background jobs
# ignore it), so a test can send Ctrl-C.
start_serve() {
  local name="$1"
  shift
  env --default-signal=INT "$heapprof" serve "$@" --listen 127.0.0.1:0 --debug-listen 127.0.0.1:0 >"$name.out" 2>"$name.err" &
  serve_pid=$!
  local i
  for i in $(seq 1 600); do
    if grep -q "/debug/pprof/, e.g." "$name.out" 2>/dev/null; then break; fi
    if ! kill -0 "$serve_pid" 2>/dev/null; then
      cat "$name.err" >&2
      echo "FAIL: heapprof serve $* exited before listening" >&2
      exit 1
    fi
    sleep 0.1
  done
  base="$(sed -n 's|^heapprof serve: .* on \(http://[0-9.:]*\)/ (.*|\1|p' "$name.out")"
  debug="$(sed -n 's|^heapprof serve: profiles on \(https\{0,1\}://[0-9.:]*\)/debug/pprof/.*|\1|p' "$name.out")"
  if [ -z "$base" ] || [ -z "$debug" ]; then
    cat "$name.out" "$name.err" >&2
    echo "FAIL: heapprof serve did not print its addresses" >&2
    exit 1
  fi
}

# stop_serve: SIGTERM, then the exit code must be 0 (a graceful stop).
stop_serve() {
  kill -TERM "$serve_pid"
  local code=0
  wait "$serve_pid" || code=$?
  [ "$code" -eq 0 ] || fail "heapprof serve exited with $code after SIGTERM"
}

# status_of <curl arguments...>: prints the HTTP status code.
status_of() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 60 "$@"
}
