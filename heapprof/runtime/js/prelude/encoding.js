// TextEncoder, TextDecoder, atob, btoa and structuredClone.

import { DOMException } from './dom_exception.js';
import { natives, utf8Decode, utf8Encode } from './host.js';
import { nameNative, viewBytes } from './bytes.js';
const { base64Functions, structuredClone: nativeClone } = natives;

class TextEncoder {
  get encoding() { return 'utf-8'; }
  encode(input = '') { return utf8Encode(String(input)); }  // replaced by the native below
  encodeInto(source, destination) {
    const bytes = utf8Encode(String(source));
    // Whole code points only: stop before a UTF-8 sequence that does not fit.
    let written = Math.min(bytes.length, destination.length);
    while (written > 0 && written < bytes.length && (bytes[written] & 0xc0) === 0x80) written--;
    destination.set(bytes.subarray(0, written));
    const read = utf8Decode(bytes.subarray(0, written)).length;
    return { read, written };
  }
}
// encode() is the native itself, as workerd's is C++: the bytes are charged to
// the worker's caller, with no frame of the runtime's in between.
Object.defineProperty(TextEncoder.prototype, 'encode', { value: nameNative(utf8Encode, 'encode', 0) });

const utf8Labels = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'x-unicode20utf8']);
// How many bytes at the end of `bytes` start a UTF-8 sequence that is not complete yet.
function incompleteTail(bytes) {
  for (let back = 1; back <= 3 && back <= bytes.length; back++) {
    const b = bytes[bytes.length - back];
    if ((b & 0xc0) === 0x80) continue;  // a continuation byte: look further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}
class TextDecoder {
  #fatal; #ignoreBOM;
  constructor(label = 'utf-8', options = {}) {
    if (!utf8Labels.has(String(label).trim().toLowerCase())) {
      throw new RangeError('heapprof\'s runtime decodes UTF-8 only, not "' + label + '"');
    }
    this.#fatal = Boolean(options.fatal);
    this.#ignoreBOM = Boolean(options.ignoreBOM);
  }
  get encoding() { return 'utf-8'; }
  get fatal() { return this.#fatal; }
  get ignoreBOM() { return this.#ignoreBOM; }
  #pending = null;  // the bytes of an incomplete UTF-8 sequence kept by decode(..., { stream: true })
  #bomSeen = false;
  decode(input = new Uint8Array(0), options = {}) {
    let bytes = viewBytes(input, 'TextDecoder.decode input');
    const stream = Boolean(options && options.stream);
    if (this.#pending !== null) {
      const joined = new Uint8Array(this.#pending.length + bytes.length);
      joined.set(this.#pending);
      joined.set(bytes, this.#pending.length);
      bytes = joined;
      this.#pending = null;
    }
    if (stream) {
      const keep = incompleteTail(bytes);
      if (keep > 0) { this.#pending = bytes.slice(bytes.length - keep); bytes = bytes.subarray(0, bytes.length - keep); }
    }
    if (!this.#ignoreBOM && !this.#bomSeen && bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
      bytes = bytes.subarray(3);
    }
    if (bytes.length > 0) this.#bomSeen = stream;
    else if (!stream) this.#bomSeen = false;
    const text = utf8Decode(bytes);
    // Valid UTF-8 round-trips byte for byte; anything else had a replacement.
    if (this.#fatal && text.includes('\ufffd')) {
      const again = utf8Encode(text);
      if (again.length !== bytes.length || again.some((b, i) => b !== bytes[i])) {
        throw new TypeError('Failed to decode input.');
      }
    }
    return text;
  }
}

// atob (HTML's forgiving base64) and btoa over Latin-1 strings: native
// functions, as workerd's are, so that the decoded string is the one
// allocation and is charged to the worker's caller (worker_natives.cpp).
const [atob, btoa] = base64Functions(kind => kind === 'btoa'
  ? new DOMException('btoa() can only operate on characters in the Latin1 (ISO/IEC 8859-1) range.', 'InvalidCharacterError')
  : new DOMException('atob() called with invalid base64-encoded data. (Only whitespace, \'+\', \'/\', alphanumeric ASCII, and up to two terminal \'=\' signs when the input data length is divisible by 4 are allowed.)', 'InvalidCharacterError'));

function structuredClone(value) {
  if (arguments.length === 0) throw new TypeError('structuredClone needs a value');
  try {
    return nativeClone(value);
  } catch (e) {
    // V8's serializer throws a plain Error for what it cannot clone; the spec names it.
    if (e instanceof Error && / could not be cloned\.$/.test(e.message)) throw new DOMException(e.message, 'DataCloneError');
    throw e;
  }
}

export { TextEncoder, TextDecoder, atob, btoa, structuredClone };
