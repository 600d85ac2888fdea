#!/usr/bin/env bash
# CTest's entry to the conformance suite: run.sh (every app's responses under
# heapprof run and workerd, compared), then proof that the comparison can
# fail: a status, a header and a body changed in heapprof's record each make
# compare.mjs exit 1 and name the request and the field.
#   conformance_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "$0")/../cli/lib.sh"
here="$src/tests/conformance"
export HEAPPROF_WORKERD="$src/.deps/workerd/bin/workerd"

expect_exit 0 suite -- "$here/run.sh" "$heapprof" "$work/suite"
cat suite.out
for app in "$here"/apps/*/; do
  name="$(basename "$app")"
  grep -qE "^$name +[0-9]+ +[0-9]+ +0$" suite.out || fail "the table has no clean row for $name"
done

# The comparison is not vacuous: one change at a time to hono's third response.
records="$work/suite/hono"
mutate() {  # <name> <node expression on r, the record>
  node -e "
    const fs = require('fs');
    const lines = fs.readFileSync('$records/heapprof.jsonl', 'utf8').trim().split('\n').map(JSON.parse);
    const r = lines[2];
    $2;
    fs.writeFileSync('$1.jsonl', lines.map(l => JSON.stringify(l)).join('\n') + '\n');"
  expect_exit 1 "$1" -- node "$here/compare.mjs" "hono=$1.jsonl,$records/workerd.jsonl"
  expect_in "$1.out" "hono #2 GET https://api.example.com/api/items/2"
}
mutate status 'r.status = 203'
expect_in status.out "status: heapprof 203, workerd 200"
mutate header 'r.headers.push(["x-extra", "1"])'
expect_in header.out 'header x-extra: heapprof "1", workerd "(absent)"'
mutate body 'r.body = r.body.replace("Kettle", "Kettel")'
expect_in body.out "body: heapprof"
n="$(grep -c . "$here/apps/hono/requests.jsonl")"
grep -qE "^hono +$n +$((n - 1)) +1\$" body.out || fail "body: the table does not count one differing request"

# The surface app catches a runtime helper a worker could reach (Headers.adopt
# was one): a static added to heapprof's answer for Headers fails the
# comparison and is named; the allow-list does not hide it.
node -e "
  const fs = require('fs');
  const lines = fs.readFileSync('$work/suite/surface/heapprof.jsonl', 'utf8').trim().split('\n').map(JSON.parse);
  const r = lines.find(l => l.url.endsWith('/class/Headers'));
  r.body = (r.body + '\nstatic adopt function').split('\n').sort().join('\n');
  fs.writeFileSync('surface.jsonl', lines.map(l => JSON.stringify(l)).join('\n') + '\n');"
expect_exit 1 surface -- node "$here/compare.mjs" "surface=surface.jsonl,$work/suite/surface/workerd.jsonl"
expect_in surface.out 'GET https://surface.example/class/Headers'
expect_in surface.out 'body lines: heapprof "static adopt function", workerd "(nothing else)"'
finish
