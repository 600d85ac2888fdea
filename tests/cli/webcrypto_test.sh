#!/usr/bin/env bash
# crypto.subtle in the worker runtime against an independent implementation:
# Node's Web Crypto makes keys, signatures, ciphertexts and derived bits; a
# worker under `heapprof run` imports the keys (JWK, SPKI, PKCS #8, raw),
# verifies, decrypts and derives the same bits, and signs and encrypts with
# them; Node then verifies and decrypts what the worker made. Also what a
# verifier must refuse (a changed signature, a changed AES-GCM tag).
#   webcrypto_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

# Node writes the worker, with its keys and outputs inlined as FIXTURES.
cat >make-worker.mjs <<'JS'
import fs from 'node:fs';
const { subtle } = globalThis.crypto;
const hex = b => Buffer.from(b).toString('hex');
const message = new TextEncoder().encode('the message both runtimes agree on');
const f = { message: hex(message), keys: {}, out: {} };
const pair = async (name, algorithm, usages) => {
  const k = await subtle.generateKey(algorithm, true, usages);
  f.keys[name] = { jwkPrivate: await subtle.exportKey('jwk', k.privateKey), jwkPublic: await subtle.exportKey('jwk', k.publicKey),
    pkcs8: hex(await subtle.exportKey('pkcs8', k.privateKey)), spki: hex(await subtle.exportKey('spki', k.publicKey)) };
  return k;
};
const rsa = (name, hash) => ({ name, hash, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) });
const signers = {
  rs256: [rsa('RSASSA-PKCS1-v1_5', 'SHA-256'), { name: 'RSASSA-PKCS1-v1_5' }],
  ps384: [rsa('RSA-PSS', 'SHA-384'), { name: 'RSA-PSS', saltLength: 48 }],
  es256: [{ name: 'ECDSA', namedCurve: 'P-256' }, { name: 'ECDSA', hash: 'SHA-256' }],
  es384: [{ name: 'ECDSA', namedCurve: 'P-384' }, { name: 'ECDSA', hash: 'SHA-384' }],
};
for (const [name, [algorithm, params]] of Object.entries(signers)) {
  const k = await pair(name, algorithm, ['sign', 'verify']);
  f.out[name] = hex(await subtle.sign(params, k.privateKey, message));
}
const oaep = await pair('oaep', rsa('RSA-OAEP', 'SHA-256'), ['encrypt', 'decrypt']);
f.out.oaep = hex(await subtle.encrypt({ name: 'RSA-OAEP', label: message.slice(0, 4) }, oaep.publicKey, message));
const ecdhA = await pair('ecdhA', { name: 'ECDH', namedCurve: 'P-256' }, ['deriveBits']);
const ecdhB = await pair('ecdhB', { name: 'ECDH', namedCurve: 'P-256' }, ['deriveBits']);
f.out.ecdh = hex(await subtle.deriveBits({ name: 'ECDH', public: ecdhB.publicKey }, ecdhA.privateKey, 256));
const aesRaw = crypto.getRandomValues(new Uint8Array(32));
f.keys.aes = hex(aesRaw);
f.iv = hex(crypto.getRandomValues(new Uint8Array(16)));
for (const [mode, params] of [['AES-GCM', { iv: Buffer.from(f.iv, 'hex').subarray(0, 12), additionalData: message.slice(0, 5) }],
  ['AES-CBC', { iv: Buffer.from(f.iv, 'hex') }], ['AES-CTR', { counter: Buffer.from(f.iv, 'hex'), length: 64 }]]) {
  const k = await subtle.importKey('raw', aesRaw, mode, false, ['encrypt']);
  f.out[mode] = hex(await subtle.encrypt({ name: mode, ...params }, k, message));
}
const pb = await subtle.importKey('raw', message, 'PBKDF2', false, ['deriveBits']);
f.out.pbkdf2 = hex(await subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-512', salt: message.slice(0, 8), iterations: 1000 }, pb, 384));
const hk = await subtle.importKey('raw', message, 'HKDF', false, ['deriveBits']);
f.out.hkdf = hex(await subtle.deriveBits({ name: 'HKDF', hash: 'SHA-384', salt: message.slice(0, 8), info: message.slice(8, 16) }, hk, 200 * 8));
fs.writeFileSync('fixtures.json', JSON.stringify(f));
fs.writeFileSync('worker.js', `const FIXTURES = ${JSON.stringify(f)};\n` + fs.readFileSync('worker-body.js', 'utf8'));
JS

# The worker: each request checks everything and answers its own outputs.
cat >worker-body.js <<'JS'
const { subtle } = crypto;
const unhex = t => new Uint8Array(t.match(/../g).map(h => parseInt(h, 16)));
const hex = b => [...new Uint8Array(b)].map(x => x.toString(16).padStart(2, '0')).join('');
const F = FIXTURES;
const message = unhex(F.message);
const signers = {
  rs256: [{ name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, { name: 'RSASSA-PKCS1-v1_5' }],
  ps384: [{ name: 'RSA-PSS', hash: 'SHA-384' }, { name: 'RSA-PSS', saltLength: 48 }],
  es256: [{ name: 'ECDSA', namedCurve: 'P-256' }, { name: 'ECDSA', hash: 'SHA-256' }],
  es384: [{ name: 'ECDSA', namedCurve: 'P-384' }, { name: 'ECDSA', hash: 'SHA-384' }],
};
const flip = b => { const c = new Uint8Array(b); c[c.length - 1] ^= 1; return c; };
async function run() {
  const checks = {}, made = {};
  for (const [name, [algorithm, params]] of Object.entries(signers)) {
    const k = F.keys[name];
    const spki = await subtle.importKey('spki', unhex(k.spki), algorithm, true, ['verify']);
    const jwkPublic = await subtle.importKey('jwk', k.jwkPublic, algorithm, true, ['verify']);
    const pkcs8 = await subtle.importKey('pkcs8', unhex(k.pkcs8), algorithm, true, ['sign']);
    const jwkPrivate = await subtle.importKey('jwk', k.jwkPrivate, algorithm, true, ['sign']);
    checks[name + ' verifies Node (spki)'] = await subtle.verify(params, spki, unhex(F.out[name]), message);
    checks[name + ' verifies Node (jwk)'] = await subtle.verify(params, jwkPublic, unhex(F.out[name]), message);
    checks[name + ' refuses a changed signature'] = !(await subtle.verify(params, spki, flip(unhex(F.out[name])), message));
    checks[name + ' refuses another message'] = !(await subtle.verify(params, spki, unhex(F.out[name]), message.slice(1)));
    checks[name + ' exports the spki it imported'] = hex(await subtle.exportKey('spki', jwkPublic)) === k.spki;
    checks[name + ' exports the jwk d it imported'] = (await subtle.exportKey('jwk', pkcs8)).d === k.jwkPrivate.d;
    made[name] = hex(await subtle.sign(params, jwkPrivate, message));
    if (name === 'rs256') checks['rs256 signs as Node does'] = made[name] === F.out[name];
    if (algorithm.name === 'ECDSA') made[name + '-raw'] = hex(await subtle.exportKey('raw', spki));
  }
  const oaep = F.keys.oaep;
  const oaepPrivate = await subtle.importKey('pkcs8', unhex(oaep.pkcs8), { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['decrypt']);
  const oaepPublic = await subtle.importKey('jwk', oaep.jwkPublic, { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['encrypt']);
  checks['RSA-OAEP decrypts Node'] = hex(await subtle.decrypt({ name: 'RSA-OAEP', label: message.slice(0, 4) }, oaepPrivate, unhex(F.out.oaep))) === F.message;
  made.oaep = hex(await subtle.encrypt({ name: 'RSA-OAEP', label: message.slice(0, 4) }, oaepPublic, message));
  const ecdhA = await subtle.importKey('jwk', F.keys.ecdhA.jwkPrivate, { name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits']);
  const ecdhB = await subtle.importKey('spki', unhex(F.keys.ecdhB.spki), { name: 'ECDH', namedCurve: 'P-256' }, false, []);
  checks['ECDH derives what Node derived'] = hex(await subtle.deriveBits({ name: 'ECDH', public: ecdhB }, ecdhA, 256)) === F.out.ecdh;
  const iv = unhex(F.iv);
  for (const [mode, params] of [['AES-GCM', { iv: iv.slice(0, 12), additionalData: message.slice(0, 5) }], ['AES-CBC', { iv }], ['AES-CTR', { counter: iv, length: 64 }]]) {
    const k = await subtle.importKey('raw', unhex(F.keys.aes), mode, false, ['encrypt', 'decrypt']);
    checks[mode + ' decrypts Node'] = hex(await subtle.decrypt({ name: mode, ...params }, k, unhex(F.out[mode]))) === F.message;
    checks[mode + ' encrypts as Node does'] = hex(await subtle.encrypt({ name: mode, ...params }, k, message)) === F.out[mode];
    if (mode === 'AES-GCM') {
      checks['AES-GCM refuses a changed tag'] = await subtle.decrypt({ name: mode, ...params }, k, flip(unhex(F.out[mode])))
        .then(() => false, e => e instanceof DOMException && e.name === 'OperationError');
    }
  }
  const pb = await subtle.importKey('raw', message, 'PBKDF2', false, ['deriveBits']);
  checks['PBKDF2 derives what Node derived'] = hex(await subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-512', salt: message.slice(0, 8), iterations: 1000 }, pb, 384)) === F.out.pbkdf2;
  const hk = await subtle.importKey('raw', message, 'HKDF', false, ['deriveBits']);
  checks['HKDF derives what Node derived'] = hex(await subtle.deriveBits({ name: 'HKDF', hash: 'SHA-384', salt: message.slice(0, 8), info: message.slice(8, 16) }, hk, 200 * 8)) === F.out.hkdf;
  const generated = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  made.generatedJwk = await subtle.exportKey('jwk', generated.publicKey);
  made.generatedSignature = hex(await subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, generated.privateKey, message));
  return { checks, made };
}
export default { async fetch() { return Response.json(await run()); } };
JS
node make-worker.mjs || fail "Node could not make the fixtures"

expect_exit 0 run -- "$heapprof" run worker.js -n 3 --warmup 0 --top 0 -o worker.pb.gz --responses-out responses.jsonl
# Every check in every response, then Node's verdict on what the worker made.
cat >check.mjs <<'JS'
import fs from 'node:fs';
const { subtle } = globalThis.crypto;
const f = JSON.parse(fs.readFileSync('fixtures.json', 'utf8'));
const unhex = t => Buffer.from(t, 'hex');
const message = unhex(f.message);
const bad = [];
const records = fs.readFileSync('responses.jsonl', 'utf8').trim().split('\n').map(JSON.parse);
if (records.length !== 3) bad.push(`${records.length} responses, expected 3`);
for (const record of records) {
  if (record.status !== 200) { bad.push(`response ${record.index}: status ${record.status} ${record.body || record.error}`); continue; }
  const { checks, made } = JSON.parse(record.body);
  if (Object.keys(checks).length !== 36) bad.push(`response ${record.index}: ${Object.keys(checks).length} checks, expected 36`);
  for (const [name, ok] of Object.entries(checks)) if (ok !== true) bad.push(`response ${record.index}: ${name}`);
  const params = { rs256: [{ name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, { name: 'RSASSA-PKCS1-v1_5' }],
    ps384: [{ name: 'RSA-PSS', hash: 'SHA-384' }, { name: 'RSA-PSS', saltLength: 48 }],
    es256: [{ name: 'ECDSA', namedCurve: 'P-256' }, { name: 'ECDSA', hash: 'SHA-256' }],
    es384: [{ name: 'ECDSA', namedCurve: 'P-384' }, { name: 'ECDSA', hash: 'SHA-384' }] };
  for (const [name, [algorithm, p]] of Object.entries(params)) {
    const key = await subtle.importKey('spki', unhex(f.keys[name].spki), algorithm, false, ['verify']);
    if (!(await subtle.verify(p, key, unhex(made[name]), message))) bad.push(`response ${record.index}: Node rejects the worker's ${name} signature`);
    if (algorithm.name === 'ECDSA') {
      const raw = await subtle.importKey('raw', unhex(made[name + '-raw']), algorithm, false, ['verify']);
      if (!(await subtle.verify(p, raw, unhex(f.out[name]), message))) bad.push(`response ${record.index}: the worker's raw ${name} key is not Node's`);
    }
  }
  const oaep = await subtle.importKey('pkcs8', unhex(f.keys.oaep.pkcs8), { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['decrypt']);
  const plain = await subtle.decrypt({ name: 'RSA-OAEP', label: message.subarray(0, 4) }, oaep, unhex(made.oaep)).catch(() => null);
  if (plain === null || Buffer.from(plain).toString('hex') !== f.message) bad.push(`response ${record.index}: Node cannot decrypt the worker's RSA-OAEP`);
  const generated = await subtle.importKey('jwk', made.generatedJwk, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
  if (!(await subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, generated, unhex(made.generatedSignature), message))) {
    bad.push(`response ${record.index}: Node rejects the signature of the worker's generated key`);
  }
}
for (const line of bad) console.log(line);
process.exit(bad.length === 0 ? 0 : 1);
JS
expect_exit 0 check -- node check.mjs
[ -s check.out ] && sed 's/^/    /' check.out >&2

# Misuse is refused with workerd's DOMExceptions, not a crash: a public key
# asked to sign, a key of another algorithm, a non-extractable export.
cat >misuse.js <<'JS'
export default {
  async fetch() {
    const { subtle } = crypto;
    const k = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
    const out = [];
    for (const f of [() => subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, k.publicKey, new Uint8Array(1)),
      () => subtle.sign({ name: 'RSASSA-PKCS1-v1_5' }, k.privateKey, new Uint8Array(1)),
      () => subtle.exportKey('pkcs8', k.privateKey),
      () => subtle.importKey('spki', new Uint8Array(40), { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify'])]) {
      out.push(await f().then(() => 'accepted', e => `${e.constructor.name} ${e.name}: ${e.message}`));
    }
    return new Response(out.join('\n'));
  },
};
JS
expect_exit 0 misuse -- "$heapprof" run misuse.js -n 1 --warmup 0 --top 0 -o misuse.pb.gz --responses-out misuse.jsonl
node -e "console.log(JSON.parse(require('fs').readFileSync('misuse.jsonl', 'utf8')).body)" >misuse.txt
expect_in misuse.txt 'DOMException InvalidAccessError: Requested key usage "sign" does not match any usage listed in this CryptoKey.'
expect_in misuse.txt 'DOMException InvalidAccessError: Requested algorithm "RSASSA-PKCS1-v1_5" does not match this CryptoKey'"'"'s algorithm "ECDSA".'
expect_in misuse.txt 'DOMException InvalidAccessError: Attempt to export non-extractable ECDSA key.'
expect_in misuse.txt 'DOMException DataError: Invalid SPKI input.'
finish
