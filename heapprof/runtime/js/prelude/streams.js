// Stream helpers of bodies (web-streams-polyfill's streams) and
// TextEncoderStream, TextDecoderStream.

import { loadApi, once, utf8Encode, webLibraries } from './host.js';
import { viewBytes } from './bytes.js';

// ---- streams (web-streams-polyfill) and bodies ----

// Whether reading from the stream has begun: the Streams standard's
// [[disturbed]] slot, which web-streams-polyfill keeps as `_disturbed`
// (pinned in heapprof/runtime/js/package.json; worker_web_api_test checks it).
const isDisturbed = stream => stream._disturbed === true;

// Marks a stream read from, for a body taken whole without reading it (takeUnread).
const markDisturbed = stream => { stream._disturbed = true; };

// A byte stream of one chunk: the content of a body (a string, as UTF-8, or
// bytes), enqueued as a copy (a byte stream's enqueue takes its buffer over)
// at the first read. Until then the content stays with the stream's source,
// so a body made from the stream while nothing read from it (`new
// Response(response.body, response)`, as itty-router's cors and Hono do for
// every response) takes the content whole (takeUnread): no reader loop, chunk
// copy or transfer per request.
// The source's class and the streams' map are made at the first stream body,
// so a worker that never reads a body as a stream carries neither.
let UnreadSource = null, unreadSources = null;
const unreadSource = content => new (UnreadSource ??= class {
  constructor(text) { this.content = text; }
  get type() { return 'bytes'; }
  pull(controller) {
    const held = this.content;
    this.content = null;
    if (held !== null) controller.enqueue(typeof held === 'string' ? utf8Encode(held) : held.slice());
    controller.close();
  }
})(content);
function bytesStream(content) {
  const { ReadableStream } = webLibraries();
  if (content.length === 0) return new ReadableStream({ type: 'bytes', start: controller => controller.close() });
  const source = unreadSource(content);
  const stream = new ReadableStream(source);
  (unreadSources ??= new WeakMap()).set(stream, source);
  return stream;
}
// The content of a stream of bytesStream's that nothing has read from or
// locked, taken: the stream is left locked and disturbed, as a read to its
// end leaves it. undefined for any other stream.
function takeUnread(stream) {
  const source = unreadSources === null ? undefined : unreadSources.get(stream);
  if (source === undefined || source.content === null || stream.locked || isDisturbed(stream)) return undefined;
  const content = source.content;
  source.content = null;
  unreadSources.delete(stream);
  stream.getReader();
  markDisturbed(stream);
  return content;
}

// Every chunk of a stream as one Uint8Array (chunks must be Uint8Arrays, as
// for a Response's body on the platform).
async function readAllBytes(stream) {
  const reader = stream.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!(value instanceof Uint8Array)) {
      const what = value === null ? 'null' : typeof value === 'object' ? Object.prototype.toString.call(value) : typeof value;
      const error = new TypeError('a body stream must produce Uint8Array chunks, not ' + what);
      reader.cancel(error).catch(() => {});
      throw error;
    }
    chunks.push(value);
    total += value.length;
  }
  if (chunks.length === 1) return chunks[0];
  const all = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) { all.set(c, at); at += c.length; }
  return all;
}

// TransformStreams, as in workerd (instanceof TransformStream holds), made
// with the streams library at the first use of either.
const textStreams = once(() => {
const { TransformStream } = webLibraries();
const { TextDecoder } = loadApi('encoding.js');
class TextEncoderStream extends TransformStream {
  constructor() {
    let pending = '';  // a high surrogate whose pair may come in the next chunk
    super({
      transform(chunk, controller) {
        let text = pending + String(chunk);
        pending = '';
        const last = text.charCodeAt(text.length - 1);
        if (last >= 0xd800 && last <= 0xdbff) { pending = text.slice(-1); text = text.slice(0, -1); }
        if (text.length > 0) controller.enqueue(utf8Encode(text));
      },
      flush(controller) { if (pending !== '') controller.enqueue(utf8Encode('\ufffd')); },
    });
  }
  get encoding() { return 'utf-8'; }
}
class TextDecoderStream extends TransformStream {
  #decoder;
  constructor(label = 'utf-8', options = {}) {
    const decoder = new TextDecoder(label, options);
    super({
      transform(chunk, controller) {
        const text = decoder.decode(viewBytes(chunk, 'a TextDecoderStream chunk'), { stream: true });
        if (text !== '') controller.enqueue(text);
      },
      flush(controller) {
        const text = decoder.decode();
        if (text !== '') controller.enqueue(text);
      },
    });
    this.#decoder = decoder;
  }
  get encoding() { return this.#decoder.encoding; }
  get fatal() { return this.#decoder.fatal; }
  get ignoreBOM() { return this.#decoder.ignoreBOM; }
}
return { TextEncoderStream, TextDecoderStream };
});

export { isDisturbed, bytesStream, takeUnread, readAllBytes, textStreams };
