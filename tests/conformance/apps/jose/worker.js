// jose (panva/jose), the JWT/JWS/JWE library most Workers use, on top of
// crypto.subtle: RS256, ES256, ES384, PS256 and HS256 tokens signed and
// verified, JWEs (dir, RSA-OAEP-256 and ECDH-ES with A256GCM) encrypted and
// decrypted, keys imported from PEM and JWK, exported and generated, and the
// failures a verifier meets (a bad signature, another key, the wrong type of
// key, a tampered JWE). ECDSA and PSS signatures, JWE IVs and generated keys
// differ from run to run, so those answers carry what was verified or
// decrypted, never the random bytes; RS256 and HS256 tokens are deterministic
// and are compared whole. The tokens and JWEs in requests.jsonl were made by
// jose under Node (make_fixtures.mjs).
import * as jose from 'jose';
import keys from './keys.js';

const payload = { sub: 'alice', role: 'admin', iat: 1700000000, exp: 4102444800 };
const secret = jose.base64url.decode(keys.secret);
const text = 'session: cart=3; user=alice';
const pair = { RS256: keys.rsa, PS256: keys.rsa, ES256: keys.ec, ES384: keys.ec384, 'RSA-OAEP-256': keys.rsa, 'ECDH-ES': keys.ec };
const privateKey = alg => alg === 'HS256' || alg === 'dir' ? secret : jose.importPKCS8(pair[alg].private, alg);
const publicKey = alg => alg === 'HS256' || alg === 'dir' ? secret : jose.importSPKI(pair[alg].public, alg);
const failure = e => ({ error: e.constructor.name, code: e.code, message: e.message });
const bearer = request => (request.headers.get('authorization') || '').replace(/^Bearer /, '');

async function signed(alg) {
  return new jose.SignJWT(payload).setProtectedHeader({ alg, kid: 'k1' }).sign(await privateKey(alg));
}
async function verified(token, key, alg) {
  const { payload: claims, protectedHeader } = await jose.jwtVerify(token, key, { algorithms: [alg] });
  return { claims, protectedHeader };
}

const routes = {
  'sign': async alg => ({ token: await signed(alg) }),
  'roundtrip': async alg => verified(await signed(alg), await publicKey(alg), alg),
  'verify': async (alg, request) => verified(bearer(request), await publicKey(alg), alg),
  'verify-other-key': async (alg, request) => verified(bearer(request), await jose.importSPKI(keys.rsaOther.public, alg), alg),
  'verify-wrong-key-type': async (alg, request) => {
    // An ECDSA key handed to an RS256 verification: jose refuses it by its CryptoKey's algorithm.
    const key = await crypto.subtle.importKey('spki', pemBody(keys.ec.public), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
    return verified(bearer(request), key, alg);
  },
  'jwe/roundtrip': async alg => {
    const jwe = await new jose.CompactEncrypt(new TextEncoder().encode(text)).setProtectedHeader({ alg, enc: 'A256GCM' })
      .encrypt(await publicKey(alg));
    return decrypted(jwe, await privateKey(alg));
  },
  'jwe/decrypt': async (alg, request) => decrypted(await request.text(), await privateKey(alg)),
  'jwe/decrypt-wrong-key': async (alg, request) => {
    const key = alg === 'dir' ? new Uint8Array(32) : await jose.importPKCS8(keys.rsaOther.private, alg);
    return decrypted(await request.text(), key);
  },
  'jwk/export': async () => {
    const rsa = await jose.exportJWK(await publicKey('RS256'));
    const ec = await jose.exportJWK(await publicKey('ES256'));
    const ec384 = await jose.exportJWK(await publicKey('ES384'));
    return { rsa, ec, ec384, thumbprint: await jose.calculateJwkThumbprint(rsa) };
  },
  'jwk/roundtrip': async () => {
    // PEM in, private JWK out and back in, then an RS256 token (deterministic) and an ES256 verification.
    const rsaJwk = await jose.exportJWK(await jose.importPKCS8(keys.rsa.private, 'RS256', { extractable: true }));
    const ecJwk = await jose.exportJWK(await jose.importPKCS8(keys.ec.private, 'ES256', { extractable: true }));
    const token = await new jose.SignJWT(payload).setProtectedHeader({ alg: 'RS256' }).sign(await jose.importJWK(rsaJwk, 'RS256'));
    const es = await new jose.SignJWT(payload).setProtectedHeader({ alg: 'ES256' }).sign(await jose.importJWK(ecJwk, 'ES256'));
    return { token, members: Object.keys(rsaJwk).sort(), es256: await verified(es, await publicKey('ES256'), 'ES256') };
  },
  'generate': async alg => {
    const { publicKey: pub, privateKey: priv } = await jose.generateKeyPair(alg, { extractable: true });
    const jwk = await jose.exportJWK(pub);
    const token = await new jose.SignJWT(payload).setProtectedHeader({ alg }).sign(priv);
    return { kty: jwk.kty, crv: jwk.crv, e: jwk.e, modulusBytes: jwk.n && jose.base64url.decode(jwk.n).length, ...(await verified(token, await jose.importJWK(jwk, alg), alg)) };
  },
};
async function decrypted(jwe, key) {
  const { plaintext, protectedHeader } = await jose.compactDecrypt(jwe, key);
  return { plaintext: new TextDecoder().decode(plaintext), alg: protectedHeader.alg, enc: protectedHeader.enc };
}
function pemBody(pem) {
  return jose.base64url.decode(pem.replace(/-----[A-Z ]+-----|\s/g, '').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''));
}

export default {
  async fetch(request) {
    const path = new URL(request.url).pathname.slice(1);
    const at = path.lastIndexOf('/');
    const route = routes[path.slice(0, at)];
    if (!route) return Response.json({ routes: Object.keys(routes) }, { status: 404 });
    try {
      return Response.json(await route(path.slice(at + 1), request));
    } catch (e) {
      return Response.json(failure(e), { status: 401 });
    }
  },
};
