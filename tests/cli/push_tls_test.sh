#!/usr/bin/env bash
# Pushing over HTTPS: the stand-in store (push_store.mjs) serves TLS with a
# self-signed certificate made here for 127.0.0.1 and localhost; run
# --continuous --push https://... --push-ca-file gets every window in, by IP
# address and by host name; without the CA file (not a CA this machine
# trusts), and with a certificate for another name, the handshake fails
# ("certificate verify failed"): retried, never sent in clear, counted, exit 1.
#   push_tls_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
export HEAPPROF_JS_DIR="$src/tests/js"
node="$(command -v node)"
stores=()
trap 'for p in "${stores[@]}"; do kill -9 "$p" 2>/dev/null || true; done' EXIT

# start_store <dir> <cert> <key>: a TLS store on a free port; sets $store_port.
start_store() {
  rm -f "$1.port"
  PUSH_STORE_TLS_CERT="$2" PUSH_STORE_TLS_KEY="$3" "$node" "$here/push_store.mjs" "$1.port" "$1" 2>"$1.store.err" &
  stores+=($!)
  for _ in $(seq 1 100); do [ -s "$1.port" ] && break; sleep 0.1; done
  store_port="$(cat "$1.port")"
}
# cert <name> <subjectAltName>: a self-signed certificate and its key.
cert() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=$1" \
    -addext "subjectAltName=$2" -keyout "$1.key" -out "$1.crt" 2>"$1.openssl.err" ||
    fail "openssl could not make the $1 certificate: $(cat "$1.openssl.err")"
}
cert store "IP:127.0.0.1,DNS:localhost"
cert elsewhere "DNS:elsewhere.example"

mkdir -p app
cp "$examples/prometheus-leak.js" app/worker.js
printf 'name = "shop"\nmain = "worker.js"\n' >app/wrangler.toml
run_push() {  # run_push <name> <exit code> <url> [flags...]
  local name="$1" code="$2" url="$3"
  shift 3
  expect_exit "$code" "$name" -- "$heapprof" run app --continuous 1s --duration 1.5s --interval 16KiB --top 0 \
    --push "$url" "$@"
}

# --- verified: by IP address and by host name, the CA given
start_store ok store.crt store.key
ok_port="$store_port"
run_push by-ip 0 "https://127.0.0.1:$ok_port" --push-ca-file store.crt
run_push by-name 0 "https://localhost:$ok_port/" --push-ca-file store.crt
expect_in by-ip.out "to https://127.0.0.1:$ok_port"
for r in by-ip by-name; do
  sent="$(sed -n 's/^pushed \([0-9]*\) windows.*/\1/p' "$r.out")"
  [ -n "$sent" ] && [ "$sent" -ge 2 ] || fail "$r: $sent windows pushed over https"
  if grep -q "retried" "$r.out"; then fail "$r: a verified push was retried: $(grep pushed "$r.out")"; fi
done
"$node" "$here/push_check.mjs" ok/log.jsonl 4 __name__=memory service_name=shop runtime=embedded \
  >accepted.txt 2>accepted.err || fail "the TLS store's log: $(cat accepted.err)"

# --- not verified: no CA file (a self-signed certificate), and a certificate for
# another name with its CA given; both at once (each waits out its drain).
start_store wrong elsewhere.crt elsewhere.key
wrong_port="$store_port"
run_push no-ca 1 "https://127.0.0.1:$ok_port" &
no_ca=$!
run_push wrong-name 1 "https://localhost:$wrong_port" --push-ca-file elsewhere.crt &
wrong=$!
wait "$no_ca" "$wrong"
for r in no-ca wrong-name; do
  expect_in "$r.err" "certificate verify failed"
  expect_in "$r.out" "last error: the TLS handshake with"
  if grep -q "^pushed [1-9]" "$r.out"; then fail "$r: windows pushed to a store that did not verify"; fi
done
expect_in no-ca.err "--push-ca-file"
n="$(grep -c '"status"' wrong/log.jsonl 2>/dev/null || true)"
[ "${n:-0}" -eq 0 ] || fail "the store with the wrong name got $n HTTP requests"

finish
