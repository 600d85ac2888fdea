// node:string_decoder from the npm package `string_decoder` (Node's own, ported).
export function makeStringDecoder(host) {
  const { StringDecoder } = require('string_decoder/');
  return { StringDecoder };
}
