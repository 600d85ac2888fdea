#!/usr/bin/env bash
# heapprof run --continuous 1s --push: each window of the embedded runtime
# pushed to the stand-in store (push_store.mjs, the store's checks) as it
# closes, with the labels serve gives (runtime embedded, replica = the
# replica's name); a store answering 503 twice loses nothing; the final
# report counts what was sent and retried; the bytes open with go tool pprof;
# no files without -o. And what run refuses with --push.
#   push_run_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work/go"
export HEAPPROF_JS_DIR="$src/tests/js"
node="$(command -v node)"
store_pid=""
trap 'kill -9 ${store_pid:-} 2>/dev/null || true' EXIT

start_store() {
  rm -f "$1.port"
  "$node" "$here/push_store.mjs" "$1.port" "$1" "${2:-}" 2>"$1.store.err" &
  store_pid=$!
  for _ in $(seq 1 100); do [ -s "$1.port" ] && break; sleep 0.1; done
  store_port="$(cat "$1.port")"
}

mkdir -p app
cp "$examples/prometheus-leak.js" app/worker.js
printf 'name = "shop"\nmain = "worker.js"\n' >app/wrangler.toml

# --- refused up front
expect_exit 2 run-no-continuous -- "$heapprof" run app --push http://127.0.0.1:9
expect_in run-no-continuous.err "--continuous 60s"
expect_exit 2 run-leaks -- "$heapprof" run app --leaks --push http://127.0.0.1:9
expect_exit 2 run-label-alone -- "$heapprof" run app --continuous 1s --push-label team=a
expect_in run-label-alone.err "without --push URL nothing is pushed"
expect_exit 2 run-workerd -- "$heapprof" run app --runtime workerd --continuous 1s --push http://127.0.0.1:9
expect_in run-workerd.err "heapprof attach HOST:PORT --continuous D --push URL"
expect_exit 2 run-replica-label -- "$heapprof" run app --continuous 1s --push http://127.0.0.1:9 --push-label replica=x

# --- 1 s windows for 4.5 s, the store failing the first two requests
start_store ok 503,503
mkdir -p out && cd out
expect_exit 0 pushed -- "$heapprof" run ../app --continuous 1s --duration 4.5s --interval 16KiB --top 0 \
  --push "http://127.0.0.1:$store_port" --push-label team=shop
cd ..
kill "$store_pid"; wait "$store_pid" 2>/dev/null || true
expect_in out/pushed.out "Continuous: "
expect_in out/pushed.out "2 failed requests retried"
expect_in out/pushed.out "last error: HTTP 503"
if grep -q "dropped\|refused by the store\|not pushed" out/pushed.out; then fail "windows lost: $(grep pushed out/pushed.out)"; fi
[ -z "$(ls out/*.pb.gz 2>/dev/null)" ] || fail "run --push wrote files without -o: $(ls out)"
closed="$(sed -n 's/^Continuous: \([0-9]*\) windows.*/\1/p' out/pushed.out)"
sent="$(sed -n 's/^pushed \([0-9]*\) windows.*/\1/p' out/pushed.out)"
[ -n "$closed" ] && [ "$closed" -ge 4 ] && [ "$sent" = "$closed" ] || fail "closed $closed windows, pushed $sent"
"$node" "$here/push_check.mjs" ok/log.jsonl "$closed" __name__=memory service_name=shop __delta__=false \
  runtime=embedded replica=worker team=shop 'version~^[0-9a-f]{12}$' heapprof_version=0.1.0 \
  >accepted.txt 2>accepted.err || fail "the store's log: $(cat accepted.err)"
echo "run: $(head -1 accepted.txt) series accepted of $closed windows"
f="$(sed -n '2p' accepted.txt)"
go tool pprof -raw "$f" >first.raw 2>first.err || fail "go tool pprof -raw on a pushed profile: $(cat first.err)"
expect_in first.raw "inuse_space/bytes"

# --- with -o the files are written too
start_store both
mkdir -p files
expect_exit 0 both -- "$heapprof" run app --continuous 1s --duration 2.5s --interval 16KiB --top 0 \
  --push "http://127.0.0.1:$store_port" -o files/shop.pb.gz
kill "$store_pid"; wait "$store_pid" 2>/dev/null || true
[ -n "$(ls files/worker-*.pb.gz 2>/dev/null)" ] || fail "run --push -o wrote no window files"
expect_in both.out "written to files/"

finish
