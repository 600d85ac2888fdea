#!/usr/bin/env bash
# heapprof serve's debug listener over TLS (issue #36): a self-signed
# certificate made here with the openssl CLI; /debug/pprof/heap scraped over
# https with curl --cacert (and fetched by go tool pprof itself), the profile
# opened by go tool pprof; plain HTTP to the TLS port answered 400 in clear
# text without hurting the listener; a half-closing TLS client still gets its
# window; bad, missing and mismatched files refused at start; off loopback,
# TLS with tokens binds without --debug-insecure and without the clear-text warning.
#   serve_tls_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=serve_lib.sh
source "$here/serve_lib.sh"
for tool in curl openssl python3 go; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed" >&2; exit 1; }
done
pids=()
trap 'kill -9 "${pids[@]}" 2>/dev/null || true' EXIT

selfsigned() {  # selfsigned <cert> <key>
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$2" -out "$1" -days 2 -subj /CN=localhost \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" 2>/dev/null
}
selfsigned cert.pem key.pem
selfsigned other.pem other-key.pem
cat >tokens.txt <<'TOK'
ops  ops-secret-0123456789abcdef  *
TOK
auth=(-H 'Authorization: Bearer ops-secret-0123456789abcdef')

# --- a window over https; go tool pprof opens it; plain HTTP is told to use https
start_serve tls "$examples/clean.js" --replicas 2 --debug-token-file tokens.txt \
  --debug-tls-cert cert.pem --debug-tls-key key.pem
pids+=("$serve_pid")
case "$debug" in https://*) ;; *) fail "the debug listener's URL is not https: $debug" ;; esac
curl -s -o /dev/null "$base/api/users/[1-50]"
code="$(curl -s --cacert cert.pem "${auth[@]}" -o heap.pb.gz -w '%{http_code}' \
  "$debug/debug/pprof/heap?seconds=1&target=0")"
[ "$code" = 200 ] || fail "the window over https is $code, not 200"
go tool pprof -top heap.pb.gz >heap.top 2>&1 || fail "go tool pprof cannot open the profile: $(cat heap.top)"
expect_in heap.top "flat%"
curl -s --cacert cert.pem "${auth[@]}" -o index.html "$debug/debug/pprof/" || fail "the index over https failed"
expect_in index.html "clean-1"
# Without the certificate trusted, curl refuses the connection: it is not one it knows.
curl -s -o /dev/null "$debug/debug/pprof/" && fail "curl trusted the self-signed certificate without --cacert"
# Plain HTTP to the TLS port: a clear-text 400 that says so, and the listener goes on.
plain="${debug/https:/http:}"
code="$(curl -s -o plain.txt -w '%{http_code}' "$plain/debug/pprof/")"
[ "$code" = 400 ] || fail "plain HTTP to the TLS port is $code, not 400"
expect_in plain.txt "this listener speaks HTTPS only"
# Garbage that looks like a TLS record, a handshake cut short, an idle connection.
python3 - "${debug#https://}" <<'PY'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
for raw in (b"\x16\x03\x01\x00\x05hello", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", b""):
    s = socket.create_connection((host, int(port)))
    s.sendall(raw)
    s.shutdown(socket.SHUT_WR)
    s.settimeout(15)
    try:
        while s.recv(4096): pass
    except OSError:
        pass
    s.close()
PY
for i in 1 2 3; do
  code="$(curl -s --cacert cert.pem "${auth[@]}" -o /dev/null -w '%{http_code}' "$debug/debug/pprof/")"
  [ "$code" = 200 ] || fail "after plain HTTP and bad handshakes the https index is $code (try $i)"
done
# TLS clients that go away (curl -m1: close_notify, then FIN) end their windows: the
# token holds at most 2, so a third window is 429 while the two abandoned ones last.
for t in 0 1; do
  curl -s -m1 --cacert cert.pem "${auth[@]}" -o /dev/null "$debug/debug/pprof/heap?seconds=3600&target=$t" || true
done
freed=""
for _ in $(seq 1 25); do
  code="$(curl -s --cacert cert.pem "${auth[@]}" -o /dev/null -w '%{http_code}' "$debug/debug/pprof/heap?seconds=100ms&target=0")"
  [ "$code" = 200 ] && { freed=1; break; }
  sleep 0.2
done
[ -n "$freed" ] || fail "windows of TLS clients that left still held (last status $code)"
# A TLS client that half-closes its TCP side after its request still gets its window.
python3 - "${debug#https://}" "$work/cert.pem" >halfclose.txt <<'PY' || fail "the half-closing TLS client: $(cat halfclose.txt)"
import socket, ssl, sys
host, port = sys.argv[1].rsplit(":", 1)
ctx = ssl.create_default_context(cafile=sys.argv[2])
t = ctx.wrap_socket(socket.create_connection((host, int(port))), server_hostname=host)
t.sendall(b"GET /debug/pprof/heap?seconds=2&target=1 HTTP/1.1\r\nHost: x\r\n"
          b"Authorization: Bearer ops-secret-0123456789abcdef\r\n\r\n")
raw = socket.socket(fileno=socket.dup(t.fileno()))
raw.shutdown(socket.SHUT_WR)
raw.detach()
t.settimeout(30)
data = b""
while True:
    try:
        chunk = t.recv(65536)
    except (ssl.SSLError, OSError):
        break
    if not chunk: break
    data += chunk
while data.startswith(b"HTTP/1.1 100 Continue\r\n\r\n"): data = data[25:]
head, _, body = data.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode())
sys.exit(0 if head.startswith(b"HTTP/1.1 200") and body[:2] == b"\x1f\x8b" else 1)
PY
expect_in halfclose.txt "HTTP/1.1 200 OK"
stop_serve

# --- go tool pprof fetches over https itself, trusting the certificate through SSL_CERT_FILE
start_serve tls1 "$examples/clean.js" --debug-tls-cert cert.pem --debug-tls-key key.pem
pids+=("$serve_pid")
curl -s -o /dev/null "$base/api/users/[1-50]"
SSL_CERT_FILE="$work/cert.pem" go tool pprof -top "$debug/debug/pprof/heap?seconds=1" >fetched.top 2>&1 ||
  fail "go tool pprof over https: $(cat fetched.top)"
expect_in fetched.top "flat%"
stop_serve

# --- bad, missing and mismatched files: a clear error at start, non-zero exit, nothing served
serve=("$heapprof" serve "$examples/clean.js" --listen 127.0.0.1:0 --debug-listen 127.0.0.1:0)
expect_exit 1 missing -- "${serve[@]}" --debug-tls-cert nowhere.pem --debug-tls-key key.pem
expect_in missing.err "the TLS certificate nowhere.pem is not a file"
expect_exit 1 missing-key -- "${serve[@]}" --debug-tls-cert cert.pem --debug-tls-key nowhere.pem
expect_in missing-key.err "the TLS key nowhere.pem is not a file"
echo "not a certificate" >garbage.pem
expect_exit 1 garbage -- "${serve[@]}" --debug-tls-cert garbage.pem --debug-tls-key key.pem
expect_in garbage.err "the TLS certificate garbage.pem cannot be used"
expect_exit 1 key-as-cert -- "${serve[@]}" --debug-tls-cert key.pem --debug-tls-key key.pem
expect_in key-as-cert.err "the TLS certificate key.pem cannot be used"
expect_exit 1 mismatch -- "${serve[@]}" --debug-tls-cert cert.pem --debug-tls-key other-key.pem
expect_in mismatch.err "other-key.pem"
openssl pkey -in key.pem -aes256 -passout pass:secret -out locked.pem 2>/dev/null
expect_exit 1 locked -- timeout 30 "${serve[@]}" --debug-tls-cert cert.pem --debug-tls-key locked.pem </dev/null
expect_in locked.err "the TLS key locked.pem cannot be used"
expect_exit 2 cert-alone -- "${serve[@]}" --debug-tls-cert cert.pem
expect_in cert-alone.err "--debug-tls-cert and --debug-tls-key go together"
expect_exit 2 tls-off -- "$heapprof" serve "$examples/clean.js" --listen 127.0.0.1:0 --debug-listen off \
  --debug-tls-cert cert.pem --debug-tls-key key.pem
expect_in tls-off.err "there is no debug listener"

# --- off loopback: TLS + tokens needs no --debug-insecure and has no clear-text warning;
# tokens without TLS keep the warning; TLS without tokens is still refused
off=("$heapprof" serve "$examples/clean.js" --listen 127.0.0.1:0 --debug-listen 0.0.0.0:0 --debug-token-file tokens.txt)
"${off[@]}" --debug-tls-cert cert.pem --debug-tls-key key.pem >off.out 2>off.err &
pid=$!
pids+=("$pid")
for _ in $(seq 1 300); do grep -q "/debug/pprof/, e.g." off.out 2>/dev/null && break; sleep 0.1; done
expect_in off.out "profiles on https://0.0.0.0:"
grep -q "clear text" off.err && fail "TLS with tokens off loopback still warns of clear text"
kill -TERM "$pid"
wait "$pid" || fail "serve off loopback with TLS and tokens did not exit 0"
"${off[@]}" >clear.out 2>clear.err &
pid=$!
pids+=("$pid")
for _ in $(seq 1 300); do grep -q "clear text" clear.err 2>/dev/null && break; sleep 0.1; done
expect_in clear.err "travel in clear text (no --debug-tls-cert)"
kill -TERM "$pid"
wait "$pid" || true
expect_exit 1 tls-no-tokens -- "$heapprof" serve "$examples/clean.js" --listen 127.0.0.1:0 --debug-listen 0.0.0.0:0 \
  --debug-tls-cert cert.pem --debug-tls-key key.pem
expect_in tls-no-tokens.err "--debug-insecure"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "serve TLS: https windows opened by go tool pprof, plain HTTP answered 400, half-closing TLS client served, bad files refused"
