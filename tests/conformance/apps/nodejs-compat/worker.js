// nodejs_compat's node: modules as Workers code uses them, one route per
// behaviour: AsyncLocalStorage across awaits, timers, then(), nested and
// interleaved runs, AsyncResource and snapshots; Buffer's encodings and the
// methods SDKs call; EventEmitter; node:crypto's hashes and HMACs; util's
// format, inspect, promisify and types; path, string_decoder, process, url;
// bare specifiers and the globals nodejs_compat adds. Every answer is
// compared with workerd's (run with the same flags, wrangler.toml).
import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import { Buffer } from 'node:buffer';
import BareBuffer from 'buffer';
import EventEmitter, { once, errorMonitor } from 'node:events';
import crypto, { createHash, createHmac, timingSafeEqual, randomBytes, randomUUID } from 'node:crypto';
import util, { format, inspect, promisify, callbackify, types, inherits, isDeepStrictEqual } from 'node:util';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import process from 'node:process';
import { fileURLToPath, pathToFileURL, URL as NodeURL } from 'node:url';

const als = new AsyncLocalStorage();
const other = new AsyncLocalStorage({ name: 'other' });
const tick = ms => new Promise(resolve => setTimeout(resolve, ms));
const lines = list => new Response(list.map(v => typeof v === 'string' ? v : JSON.stringify(v)).join('\n') + '\n');
const attempt = fn => { try { return fn(); } catch (e) { return `${e.name}: ${e.message}`; } };

const routes = {
  async '/als/awaits'() {
    const seen = [];
    await als.run({ id: 1 }, async () => {
      seen.push(als.getStore());
      await null;
      seen.push(als.getStore());
      await Promise.resolve().then(() => seen.push(als.getStore()));
      await new Promise(resolve => queueMicrotask(() => { seen.push(als.getStore()); resolve(); }));
      const value = await (async () => { await null; return als.getStore().id; })();
      seen.push(value);
    });
    seen.push(als.getStore() ?? 'outside');
    return lines(seen);
  },
  async '/als/timers'() {
    const seen = [];
    await als.run('timer-store', async () => {
      await tick(5);
      seen.push('after tick: ' + als.getStore());
      await new Promise(resolve => setTimeout(() => { seen.push('in callback: ' + als.getStore()); resolve(); }, 1));
      await new Promise(resolve => { const id = setInterval(() => { seen.push('interval: ' + als.getStore()); clearInterval(id); resolve(); }, 2); });
      await scheduler.wait(1);
      seen.push('scheduler.wait: ' + als.getStore());
    });
    return lines(seen);
  },
  async '/als/nested'() {
    const seen = [];
    await als.run('a', async () => {
      await als.run('b', async () => {
        await tick(1);
        seen.push(als.getStore() + '/' + other.getStore());
        await other.run('x', async () => { await null; seen.push(als.getStore() + '/' + other.getStore()); });
        seen.push(als.getStore() + '/' + other.getStore());
      });
      seen.push(als.getStore());
      seen.push('exit: ' + als.exit(() => als.getStore()));
      seen.push('still: ' + als.getStore());
    });
    seen.push('name: ' + other.name + ' / ' + JSON.stringify(als.name));
    return lines(seen);
  },
  async '/als/interleaved'() {
    const results = await Promise.all([3, 1, 2].map(n => als.run('req' + n, async () => {
      await tick(n);
      const first = als.getStore();
      await tick(4 - n);
      return first + '=' + als.getStore();
    })));
    return lines(results);
  },
  async '/als/resource'() {
    const seen = [];
    let resource, snapshot, bound, boundResource;
    als.run('captured', () => {
      resource = new AsyncResource('probe');
      snapshot = AsyncLocalStorage.snapshot();
      bound = AsyncLocalStorage.bind(() => als.getStore());
      boundResource = AsyncResource.bind(function (x) { return [als.getStore(), x, typeof this]; });
    });
    await als.run('later', async () => {
      seen.push(resource.runInAsyncScope(() => als.getStore()));
      seen.push(resource.runInAsyncScope(function (a, b) { return [this.tag, a, b]; }, { tag: 't' }, 1, 2));
      seen.push(snapshot(() => als.getStore()));
      seen.push(bound());
      seen.push(boundResource(5));
      seen.push(als.getStore());
      seen.push([resource.asyncId(), resource.triggerAsyncId(), resource.emitDestroy() === resource]);
    });
    seen.push(attempt(() => als.run('x')));
    seen.push(attempt(() => new AsyncResource()));
    seen.push(attempt(() => als.enterWith('y')));
    return lines(seen);
  },
  async '/buffer/encodings'() {
    const text = 'h\u00e9llo w\u00f6rld \u20ac \ud83d\ude00 ?>~';
    const b = Buffer.from(text);
    const out = [];
    for (const enc of ['utf8', 'utf-8', 'hex', 'base64', 'base64url', 'latin1', 'binary', 'ascii', 'ucs2', 'utf16le']) {
      const encoded = b.toString(enc);
      out.push(enc + ' ' + encoded.length + ' ' + JSON.stringify(encoded) + ' ' + Buffer.from(encoded, enc).length +
        ' ' + Buffer.byteLength(encoded, enc) + ' ' + Buffer.isEncoding(enc));
    }
    out.push(Buffer.from('aGk_Pz4-', 'base64url').toString());
    out.push(Buffer.from('aGk/Pz4+', 'base64').toString('base64url'));
    out.push(Buffer.from('SGVsbG8', 'base64').toString());
    out.push(Buffer.from('zz12', 'hex').length);
    out.push(Buffer.isEncoding('nope') + ' ' + Buffer.isEncoding('UTF8'));
    out.push(BareBuffer.Buffer === Buffer);
    return lines(out);
  },
  async '/buffer/methods'() {
    const b = Buffer.alloc(16);
    b.writeUInt32BE(0xdeadbeef, 0);
    b.writeInt16LE(-2, 4);
    b.writeDoubleLE(1.5, 8);
    const out = [
      b.toString('hex'), b.readUInt32BE(0), b.readInt16LE(4), b.readDoubleLE(8), b.readUInt8(0),
      Buffer.concat([Buffer.from('ab'), Buffer.from('cd')], 3).toString(),
      Buffer.compare(Buffer.from('a'), Buffer.from('b')), Buffer.from('abc').equals(Buffer.from('abc')),
      Buffer.from('hello world').indexOf('o'), Buffer.from('hello world').lastIndexOf('o'), Buffer.from('hello').includes('ell'),
      Buffer.from('hello').subarray(1, 3).toString(), Buffer.from('hello').slice(-3).toString(),
      Buffer.alloc(4, 'ab').toString(), Buffer.alloc(3).fill(7).join(','), JSON.stringify(Buffer.from('hi')),
      Buffer.from([256, -1, 3.7]).join(','), Buffer.from(new Uint16Array([1, 2]).buffer).join(','),
      Buffer.isBuffer(Buffer.alloc(1)), Buffer.isBuffer(new Uint8Array(1)), Buffer.from('xyz') instanceof Uint8Array,
      Buffer.from('abc').toJSON().data.join(','), Buffer.from('ab').swap16().toString(),
      Buffer.from('abc').copy(b, 0), b.subarray(0, 3).toString(), Buffer.from('b').compare(Buffer.from('a')),
      Buffer.allocUnsafe(5).length, Buffer.from('\u00e9').length, Buffer.from('AQID', 'base64').readUInt16LE(1),
      Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]).readBigUInt64BE(0).toString(),
      String(Buffer.from('12345').write('zz', 1)), Buffer.from('12345').toString('utf8', 1, 3),
    ];
    out.push(attempt(() => b.readUInt32BE(14)));
    return lines(out);
  },
  async '/events'() {
    const e = new EventEmitter();
    const got = [];
    e.on('x', (a, b) => got.push('on ' + a + b));
    e.prependListener('x', () => got.push('first'));
    e.once('x', a => got.push('once ' + a));
    e.on(errorMonitor, err => got.push('monitor ' + err.message));
    e.on('error', err => got.push('error ' + err.message));
    got.push(e.emit('x', 1, 2), e.emit('x', 3, 4), e.emit('nothing'), e.emit('error', new Error('boom')));
    got.push(e.listenerCount('x'), e.eventNames().map(String).join(','), e.getMaxListeners());
    const handler = () => got.push('removed?');
    e.on('y', handler);
    e.off('y', handler);
    e.emit('y');
    e.removeAllListeners('x');
    got.push(e.listenerCount('x'), e.rawListeners('error').length);
    setTimeout(() => e.emit('later', 'v', 2), 1);
    got.push(await once(e, 'later'));
    const bare = new EventEmitter();
    got.push(attempt(() => bare.emit('error', new Error('unhandled'))));
    class Sub extends EventEmitter {}
    const s = new Sub();
    s.on('z', function () { got.push(this === s); });
    s.emit('z');
    got.push(EventEmitter.defaultMaxListeners, typeof EventEmitter.EventEmitter, EventEmitter.EventEmitter === EventEmitter);
    return lines(got);
  },
  async '/crypto'() {
    const out = [
      createHash('sha256').update('abc').digest('hex'),
      createHash('sha1').update('a').update('bc').digest('base64'),
      createHash('md5').update(Buffer.from('abc')).digest('hex'),
      createHash('sha384').update('').digest('hex'),
      createHash('SHA512').update('abc', 'utf8').digest('base64url'),
      createHash('sha256').update('68656c6c6f', 'hex').digest('hex'),
      createHash('sha256').update(new Uint8Array([1, 2, 3])).digest().length,
      createHmac('sha256', 'Jefe').update('what do ya want for nothing?').digest('hex'),
      createHmac('sha1', Buffer.from('key')).update('The quick brown fox jumps over the lazy dog').digest('hex'),
      createHmac('sha512', '').update('').digest('hex').slice(0, 32),
      timingSafeEqual(Buffer.from('abc'), Buffer.from('abc')), timingSafeEqual(Buffer.from('abc'), Buffer.from('abd')),
      attempt(() => timingSafeEqual(Buffer.from('a'), Buffer.from('ab'))),
      randomBytes(24).length, Buffer.isBuffer(randomBytes(1)), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(randomUUID()),
      crypto.webcrypto === globalThis.crypto, crypto.subtle === globalThis.crypto.subtle,
      crypto.getRandomValues(new Uint8Array(8)).length,
      attempt(() => createHash('nope')),
      (() => { const h = createHash('sha256').update('a'); const c = h.copy(); c.update('b'); return h.digest('hex').slice(0, 8) + ' ' + c.digest('hex').slice(0, 8); })(),
      attempt(() => { const h = createHash('sha256'); h.digest(); return h.digest(); }),
      crypto.pbkdf2Sync('password', 'salt', 1, 20, 'sha1').toString('hex'),
    ];
    return lines(out);
  },
  async '/util'() {
    const sleep = promisify((ms, cb) => setTimeout(() => cb(null, 'slept ' + ms), ms));
    const failing = promisify(cb => cb(new Error('nope')));
    const cbified = callbackify(async x => x * 2);
    const viaCallback = await new Promise(resolve => cbified(21, (err, v) => resolve([err, v])));
    function Base() {}
    Base.prototype.hello = () => 'hi';
    function Derived() {}
    inherits(Derived, Base);
    class Point { constructor() { this.x = 1; this.y = { z: [1, 2, { deep: { deeper: true } }] }; } }
    const out = [
      format('%s is %d years and %i, %f', 'Bob', 42.5, 42.5, '1.5'), format('%j', { a: [1] }), format('%%s %s', 'x'),
      format('a', 'b', 3, { c: 1 }), format('%s', null, undefined), format(1, 2), format('%o', 'str'), format('%d', '0x10'),
      inspect('str'), inspect([1, 'two', [3, [4, [5, [6]]]]]), inspect({ a: 1, b: 'x', c: [1, 2], d: { e: { f: { g: 1 } } } }),
      inspect(new Map([['k', 1], [2, { v: true }]])), inspect(new Set([1, 'a'])), inspect(null), inspect(undefined),
      inspect(-0), inspect(12n), inspect(Symbol('s')), inspect(function named() {}), inspect(() => {}), inspect(class K {}),
      inspect(new Point()), inspect({}), inspect([]), inspect(Object.create(null)), inspect(new Date(0)), inspect(/re/g),
      inspect({ 'key with space': 1, valid_id: 2 }), inspect('it\'s'), inspect([undefined, null]), inspect(new Uint8Array([1, 2])),
      inspect({ a: { b: { c: { d: 1 } } } }, { depth: 0 }), inspect(Array.from({ length: 3 })),
      await sleep(2), await failing().catch(e => e.message), viaCallback,
      new Derived().hello(), Derived.super_ === Base,
      types.isPromise(Promise.resolve()), types.isDate(new Date()), types.isRegExp(/x/), types.isMap(new Map()),
      types.isUint8Array(Buffer.alloc(1)), types.isAsyncFunction(async () => {}), types.isGeneratorFunction(function* () {}),
      types.isArrayBuffer(new ArrayBuffer(1)), types.isTypedArray(new Float32Array(1)), types.isBoxedPrimitive(Object(1)),
      isDeepStrictEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), isDeepStrictEqual([1], ['1']),
      util.TextEncoder === TextEncoder, util.TextDecoder === TextDecoder, typeof util.inspect.custom,
    ];
    return lines(out);
  },
  async '/path'() {
    return lines([
      path.join('/a/b', '../c', './d.txt'), path.resolve('/x/y', '../z'), path.normalize('/a//b/../c/.'), path.dirname('/a/b/c.txt'),
      path.basename('/a/b/c.txt'), path.basename('/a/b/c.txt', '.txt'), path.extname('archive.tar.gz'), path.isAbsolute('a/b'),
      path.relative('/a/b/c', '/a/d'), path.sep, path.delimiter, path.parse('/home/u/file.md'),
      path.format({ dir: '/x', name: 'f', ext: '.js' }), path.posix === path, path.posix.join('a', 'b'),
    ]);
  },
  async '/string_decoder'() {
    const d = new StringDecoder('utf8');
    const euro = Buffer.from('\u20ac\ud83d\ude00');
    const parts = [];
    for (let i = 0; i < euro.length; i++) parts.push(d.write(euro.subarray(i, i + 1)));
    parts.push(d.end());
    const hex = new StringDecoder('hex');
    const b64 = new StringDecoder('base64');
    return lines([parts, hex.write(Buffer.from('ab')) + hex.end(Buffer.from('c')), b64.write(Buffer.from('ab')) + '|' + b64.end(),
      new StringDecoder().encoding, new StringDecoder('latin1').write(Buffer.from([0xe9]))]);
  },
  async '/process'() {
    return lines([
      process.env, process.platform, typeof process.nextTick, process === globalThis.process,
      await new Promise(resolve => process.nextTick((a, b) => resolve(a + b), 1, 2)),
      typeof process.getBuiltinModule, process.getBuiltinModule('node:buffer').Buffer === Buffer,
      process.getBuiltinModule('events') === EventEmitter,
    ]);
  },
  async '/url'() {
    return lines([
      fileURLToPath('file:///tmp/a%20b/c.txt'), pathToFileURL('/tmp/x y#z').href, NodeURL === URL,
      attempt(() => fileURLToPath('https://x/y')),
    ]);
  },
  async '/globals'() {
    const seen = [];
    await new Promise(resolve => setImmediate((a) => { seen.push('immediate ' + a); resolve(); }, 'arg'));
    return lines([
      typeof Buffer, Buffer === BareBuffer.Buffer, typeof process, typeof global, global === globalThis,
      typeof setImmediate, typeof clearImmediate, ...seen,
    ]);
  },
};

export default {
  async fetch(request) {
    const route = routes[new URL(request.url).pathname];
    if (!route) return new Response('no route', { status: 404 });
    return route();
  },
};
