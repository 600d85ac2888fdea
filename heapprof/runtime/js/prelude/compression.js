// CompressionStream and DecompressionStream (zlib through natives).

import { natives, webLibraries } from './host.js';
import { copyBytes } from './bytes.js';
const { zlibClose, zlibOpen, zlibRun } = natives;

// CompressionStream and DecompressionStream through zlib (natives), chunk by
// chunk on one z_stream: a written chunk is fed to zlib while the readable
// side has room, and output comes out in pieces of at most 64 KiB. Up to
// 16 MiB of output waits unread; beyond that a write waits for the reader
// (backpressure), so a small input that inflates to gigabytes (a gzip bomb)
// takes memory only as fast as it is read. (workerd lets a write finish
// without a reader however much it inflates to; here the output past 16 MiB
// waits for one.) The z_stream is freed at the end, on an error, a cancel or
// an abort, or when V8 collects a stream dropped half-way.
const compressionFormats = new Set(['gzip', 'deflate', 'deflate-raw']);
const zlibPieceBytes = 64 * 1024;
const zlibQueuedBytes = 16 * 1024 * 1024;
const noBytes = new Uint8Array(0);
function zlibStreams(mode, format, what) {
  const { ReadableStream, WritableStream } = webLibraries();
  format = String(format);
  if (!compressionFormats.has(format)) throw new TypeError("The compression format must be either 'deflate', 'deflate-raw' or 'gzip'.");
  let handle = zlibOpen(mode, format);
  const inputs = [];   // written chunks zlib has not taken whole yet: { bytes, at, resolve, reject }
  let closing = null;  // { resolve, reject } once the writable side is closed
  let failed = false;
  let pumping = false;
  let spare = null;    // an output buffer zlib wrote nothing to (or whose bytes were copied out), for the next run
  let readable, writable;  // the two sides' controllers
  const release = () => {
    if (handle !== null) zlibClose(handle);
    handle = null;
  };
  // An error on either side errors both, fails the waiting writes and frees zlib.
  const fail = error => {
    if (failed) return;
    failed = true;
    release();
    for (const input of inputs.splice(0)) input.reject(error);
    if (closing !== null) closing.reject(error);
    readable.error(error);
    writable.error(error);
  };
  // Runs zlib while there is input (or the end to write) and room in the readable queue.
  const pump = () => {
    if (pumping) return;  // enqueue() calls pull() synchronously: this loop already runs
    pumping = true;
    try {
      while (handle !== null && readable.desiredSize > 0) {
        const input = inputs[0];
        if (input === undefined && closing === null) return;
        const output = spare ?? new Uint8Array(zlibPieceBytes);
        spare = null;
        let read, written, ended;
        try {
          [read, written, ended] = zlibRun(handle, input === undefined ? noBytes : input.bytes.subarray(input.at),
                                           input === undefined, output);
        } catch (error) {
          fail(error);
          return;
        }
        if (written === 0) {
          spare = output;
        } else if (written * 2 > output.length) {
          readable.enqueue(output.subarray(0, written));
        } else {  // a few bytes: do not pin 64 KiB to them
          readable.enqueue(output.slice(0, written));
          spare = output;
        }
        if (input !== undefined) {
          input.at += read;
          if (input.at === input.bytes.length) {
            inputs.shift();
            input.resolve();
          }
        } else if (ended) {
          release();
          readable.close();
          closing.resolve();
        }
      }
    } finally {
      pumping = false;
    }
  };
  return {
    readable: new ReadableStream({
      start(controller) { readable = controller; },
      pull() { pump(); },
      cancel(reason) { fail(reason); },
    }, { highWaterMark: zlibQueuedBytes, size: chunk => chunk.byteLength }),
    writable: new WritableStream({
      start(controller) { writable = controller; },
      write(chunk) {
        const bytes = copyBytes(chunk);  // a private copy: the writer may reuse its buffer before zlib reads it
        if (bytes === null) {
          const error = new TypeError(what + ' chunk must be an ArrayBuffer or an ArrayBufferView');
          fail(error);
          throw error;
        }
        if (bytes.length === 0) return undefined;
        return new Promise((resolve, reject) => {
          inputs.push({ bytes, at: 0, resolve, reject });
          pump();
        });
      },
      close() {
        return new Promise((resolve, reject) => {
          closing = { resolve, reject };
          pump();
        });
      },
      abort(reason) { fail(reason); },
    }),
  };
}
class CompressionStream {
  #streams;
  constructor(format) { this.#streams = zlibStreams('deflate', format, 'a CompressionStream'); }
  get readable() { return this.#streams.readable; }
  get writable() { return this.#streams.writable; }
}
class DecompressionStream {
  #streams;
  constructor(format) { this.#streams = zlibStreams('inflate', format, 'a DecompressionStream'); }
  get readable() { return this.#streams.readable; }
  get writable() { return this.#streams.writable; }
}

export { CompressionStream, DecompressionStream };
