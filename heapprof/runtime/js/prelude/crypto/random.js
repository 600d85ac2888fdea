// crypto.getRandomValues and crypto.randomUUID (OpenSSL's generator).

import { DOMException } from '../dom_exception.js';
import { natives, utf8Decode } from '../host.js';
const { randomFill } = natives;

// ---- crypto (OpenSSL through natives) ----

function getRandomValues(array) {
  if (!(array instanceof Int8Array || array instanceof Uint8Array || array instanceof Uint8ClampedArray ||
        array instanceof Int16Array || array instanceof Uint16Array || array instanceof Int32Array ||
        array instanceof Uint32Array || array instanceof BigInt64Array || array instanceof BigUint64Array)) {
    throw new DOMException('getRandomValues() needs an integer typed array', 'TypeMismatchError');
  }
  if (array.byteLength > 65536) {
    throw new DOMException('getRandomValues() fills at most 65536 bytes at once', 'QuotaExceededError');
  }
  return randomFill(array);
}
// randomUUID's buffers, reused: its random bytes and its 36 characters as
// ASCII, decoded into one flat string (no string per byte, no array, no
// concatenations: toucan-js makes several UUIDs a request).
const uuidRandom = new Uint8Array(16);
const uuidAscii = new Uint8Array(36);
const hexDigit = n => n < 10 ? 0x30 + n : 0x57 + n;  // '0'-'9', 'a'-'f'
function randomUUID() {
  const b = randomFill(uuidRandom);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  let at = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) uuidAscii[at++] = 0x2d;  // '-'
    uuidAscii[at++] = hexDigit(b[i] >> 4);
    uuidAscii[at++] = hexDigit(b[i] & 0x0f);
  }
  return utf8Decode(uuidAscii);
}

export { getRandomValues, randomUUID };
