// Writes this app's fixtures: keys.js (test-only keys, made by Node's crypto)
// and requests.jsonl (tokens and JWEs made by jose under Node, so both
// runtimes verify and decrypt what a third party produced). Run it again only
// to change the fixtures:
//   node tests/conformance/apps/jose/make_fixtures.mjs
import { createRequire } from 'node:module';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const jose = createRequire(path.join(here, '../../../js/node_modules/'))('jose');

const pem = (pair) => ({
  private: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }),
  public: pair.publicKey.export({ type: 'spki', format: 'pem' }),
});
const keys = {
  rsa: pem(crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })),
  rsaOther: pem(crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })),
  ec: pem(crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })),
  ec384: pem(crypto.generateKeyPairSync('ec', { namedCurve: 'P-384' })),
  secret: crypto.randomBytes(32).toString('base64url'),
};
fs.writeFileSync(path.join(here, 'keys.js'),
  '// Test-only keys for the jose conformance app (make_fixtures.mjs wrote them); they protect nothing.\n' +
  `export default ${JSON.stringify(keys, null, 2)};\n`);

const payload = { sub: 'alice', role: 'admin', iat: 1700000000, exp: 4102444800 };
const sign = async (alg, privatePem) =>
  new jose.SignJWT(payload).setProtectedHeader({ alg, kid: 'k1' }).sign(await jose.importPKCS8(privatePem, alg));
const tamper = token => { const [h, p, s] = token.split('.'); return `${h}.${p}.${s.startsWith('A') ? 'B' : 'A'}${s.slice(1)}`; };
const secret = Buffer.from(keys.secret, 'base64url');
const text = new TextEncoder().encode('session: cart=3; user=alice');
const jwe = await new jose.CompactEncrypt(text).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).encrypt(secret);
const jweOaep = await new jose.CompactEncrypt(text).setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM' })
  .encrypt(await jose.importSPKI(keys.rsa.public, 'RSA-OAEP-256'));
const jweEcdh = await new jose.CompactEncrypt(text).setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256GCM' })
  .encrypt(await jose.importSPKI(keys.ec.public, 'ECDH-ES'));
const rs256 = await sign('RS256', keys.rsa.private);
const es256 = await sign('ES256', keys.ec.private);
const ps256 = await sign('PS256', keys.rsa.private);
const jweTampered = (() => { const parts = jwe.split('.'); parts[3] = tamper(`a.b.${parts[3]}`).split('.')[2]; return parts.join('.'); })();

const base = 'https://auth.example.com';
const bearer = (route, token) => ({ url: base + route, headers: { authorization: `Bearer ${token}` } });
const post = (route, body) => ({ method: 'POST', url: base + route, headers: { 'content-type': 'text/plain' }, body });
const requests = [
  { url: base + '/sign/RS256' },
  { url: base + '/sign/HS256' },
  { url: base + '/roundtrip/RS256' },
  { url: base + '/roundtrip/ES256' },
  { url: base + '/roundtrip/ES384' },
  { url: base + '/roundtrip/PS256' },
  { url: base + '/roundtrip/HS256' },
  bearer('/verify/RS256', rs256),
  bearer('/verify/ES256', es256),
  bearer('/verify/PS256', ps256),
  bearer('/verify/RS256', tamper(rs256)),
  bearer('/verify/ES256', tamper(es256)),
  bearer('/verify/PS256', tamper(ps256)),
  bearer('/verify-other-key/RS256', rs256),
  bearer('/verify/RS256', es256),
  bearer('/verify-wrong-key-type/RS256', rs256),
  bearer('/verify/RS256', 'not.a.jwt'),
  { url: base + '/jwe/roundtrip/dir' },
  { url: base + '/jwe/roundtrip/RSA-OAEP-256' },
  { url: base + '/jwe/roundtrip/ECDH-ES' },
  post('/jwe/decrypt/dir', jwe),
  post('/jwe/decrypt/RSA-OAEP-256', jweOaep),
  post('/jwe/decrypt/ECDH-ES', jweEcdh),
  post('/jwe/decrypt/dir', jweTampered),
  post('/jwe/decrypt-wrong-key/dir', jwe),
  post('/jwe/decrypt-wrong-key/RSA-OAEP-256', jweOaep),
  { url: base + '/jwk/export/public' },
  { url: base + '/jwk/roundtrip/private' },
  { url: base + '/generate/RS256' },
  { url: base + '/generate/ES256' },
];
fs.writeFileSync(path.join(here, 'requests.jsonl'), requests.map(r => JSON.stringify(r)).join('\n') + '\n');
