// BufferSource helpers every API shares, and the naming of natives.

// ---- bytes and text ----

// A private Uint8Array copy of a BufferSource, or null when `value` is not one.
function copyBytes(value) {
  if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
  if (ArrayBuffer.isView(value)) {
    return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
  }
  return null;
}
// A Uint8Array over a BufferSource without copying; TypeError for anything else.
function viewBytes(value, what) {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(what + ' must be an ArrayBuffer or an ArrayBufferView');
}
// A native function given the name and length a method of the API has.
function nameNative(fn, name, length) {
  Object.defineProperty(fn, 'name', { value: name });
  Object.defineProperty(fn, 'length', { value: length });
  return fn;
}
const toArrayBuffer = bytes => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);

export { copyBytes, viewBytes, nameNative, toArrayBuffer };
