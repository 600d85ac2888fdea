// crypto.getRandomValues and crypto.randomUUID (OpenSSL's generator).

import { DOMException } from '../dom_exception.js';
import { natives } from '../host.js';
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
function randomUUID() {
  const b = randomFill(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = Array.from(b, x => x.toString(16).padStart(2, '0')).join('');
  return hex.slice(0, 8) + '-' + hex.slice(8, 12) + '-' + hex.slice(12, 16) + '-' + hex.slice(16, 20) + '-' + hex.slice(20);
}

export { getRandomValues, randomUUID };
