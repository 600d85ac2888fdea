// CryptoKey: its material is reachable only through this module's functions.

import { DOMException } from '../dom_exception.js';

const keyToken = Symbol('CryptoKey');
let useKey, exportableKey, keyMaterial;  // set by CryptoKey's static block
class CryptoKey {
  #material;
  constructor(token, type, material, algorithm, extractable, usages) {
    if (token !== keyToken) throw new TypeError('Illegal constructor');
    if ((type === 'secret' || type === 'private') && usages.length === 0) {
      throw new SyntaxError('Secret/private CryptoKeys must have at least one usage.');
    }
    this.#material = material;
    Object.defineProperties(this, {
      usages: { value: Object.freeze(usages.slice()), enumerable: true },
      algorithm: { value: Object.freeze(algorithm), enumerable: true },
      extractable: { value: Boolean(extractable), enumerable: true },
      type: { value: type, enumerable: true },
    });
  }
  // The key's bytes (secret) or handle (private, public) for an operation
  // named `name` that needs `usage`. Private to this file: the static block
  // hands the functions out, so no worker reaches the key's material.
  static {
    useKey = (key, name, usage) => {
      if (!(key instanceof CryptoKey)) throw new TypeError('expected a CryptoKey');
      if (key.algorithm.name !== name) {
        throw new DOMException(`Requested algorithm "${name}" does not match this CryptoKey's algorithm "${key.algorithm.name}".`, 'InvalidAccessError');
      }
      if (!key.usages.includes(usage)) {
        throw new DOMException(`Requested key usage "${usage}" does not match any usage listed in this CryptoKey.`, 'InvalidAccessError');
      }
      return key.#material;
    };
    exportableKey = key => {
      if (!(key instanceof CryptoKey)) throw new TypeError('expected a CryptoKey');
      if (!key.extractable) throw new DOMException(`Attempt to export non-extractable ${key.algorithm.name} key.`, 'InvalidAccessError');
      return key.#material;
    };
    keyMaterial = key => key.#material;
  }
}

export { keyToken, useKey, exportableKey, keyMaterial, CryptoKey };
