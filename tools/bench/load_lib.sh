# Shared by the load benchmarks (serve_bench.sh, attach_bench.sh, serve_soak.sh):
# wrk present, a temporary folder and the background processes to end on exit,
# free loopback ports, waiting for a listener. Source it; it sets $tmp and pids.
command -v wrk >/dev/null || { echo "wrk is not installed (tools/bootstrap.sh installs it)" >&2; exit 1; }
tmp="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() {
  for _ in $(seq 1 200); do curl -s -o /dev/null "$1" && return 0; sleep 0.05; done
  echo "nothing answers on $1" >&2
  exit 1
}
