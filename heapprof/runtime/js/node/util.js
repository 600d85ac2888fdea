// node:util: format and inspect (Node's output rules for the values workers
// log: primitives, arrays, plain objects, Map, Set, Error, Date, RegExp,
// functions, class instances, typed arrays, nesting to depth 2, circular
// references), promisify, callbackify, inherits, deprecate, types,
// isDeepStrictEqual, TextEncoder and TextDecoder.
export function makeUtil(host) {
  const types = makeTypes(host);
  const customInspect = Symbol.for('nodejs.util.inspect.custom');
  const promisifyCustom = Symbol.for('nodejs.util.promisify.custom');
  const defaults = { depth: 2, breakLength: 80, compact: 3, showHidden: false, colors: false, maxArrayLength: 100,
    maxStringLength: 10000, sorted: false, getters: false, numericSeparator: false, customInspect: true, showProxy: false };

  const strEscape = s => {
    let quote = "'";
    if (s.includes("'")) {
      if (!s.includes('"')) quote = '"';
      else if (!s.includes('`') && !s.includes('${')) quote = '`';
    }
    const escaped = s.replace(/[\x00-\x1f\x7f\\]/g, c => ({ '\n': '\\n', '\t': '\\t', '\r': '\\r', '\b': '\\b', '\f': '\\f', '\v': '\\v', '\\': '\\\\' })[c] ||
      '\\x' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0'));
    return quote + (quote === "'" ? escaped.replace(/'/g, "\\'") : escaped) + quote;
  };
  const keyName = key => typeof key === 'symbol' ? '[' + key.toString() + ']' : /^[a-zA-Z_][a-zA-Z_0-9]*$/.test(key) ? key : strEscape(key);
  const formatNumber = n => Object.is(n, -0) ? '-0' : String(n);
  function functionBase(fn) {
    const source = Function.prototype.toString.call(fn);
    if (source.startsWith('class') && /^class\s*[^\w$]|^class\s+[\w$]/.test(source)) {
      const parent = Object.getPrototypeOf(fn);
      return '[class ' + (fn.name || '(anonymous)') + (parent && parent.name ? ' extends ' + parent.name : '') + ']';
    }
    const kind = types.isAsyncFunction(fn) ? (types.isGeneratorFunction(fn) ? 'AsyncGeneratorFunction' : 'AsyncFunction')
      : types.isGeneratorFunction(fn) ? 'GeneratorFunction' : 'Function';
    return '[' + kind + (fn.name ? ': ' + fn.name : ' (anonymous)') + ']';
  }
  function constructorName(value) {
    let proto = Object.getPrototypeOf(value);
    if (proto === null) return null;
    while (proto !== null) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, 'constructor');
      if (descriptor !== undefined && typeof descriptor.value === 'function' && descriptor.value.name !== '') return descriptor.value.name;
      proto = Object.getPrototypeOf(proto);
    }
    return '';
  }
  function isBelowBreakLength(ctx, output, start, base) {
    let total = output.length + start;
    if (total + output.length > ctx.breakLength) return false;
    for (const entry of output) {
      total += entry.length;
      if (total > ctx.breakLength) return false;
    }
    return base === '' || !base.includes('\n');
  }
  function reduceToSingleString(ctx, output, base, braces, recurseTimes) {
    if (ctx.currentDepth - recurseTimes < ctx.compact) {
      const start = output.length + ctx.indentationLvl + braces[0].length + base.length + 10;
      if (isBelowBreakLength(ctx, output, start, base)) {
        const joined = output.join(', ');
        if (!joined.includes('\n')) return (base ? base + ' ' : '') + braces[0] + ' ' + joined + ' ' + braces[1];
      }
    }
    const indentation = '\n' + ' '.repeat(ctx.indentationLvl);
    return (base ? base + ' ' : '') + braces[0] + indentation + '  ' + output.join(',' + indentation + '  ') + indentation + braces[1];
  }
  function formatProperty(ctx, value, recurseTimes, key) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key) || { value: value[key], enumerable: true };
    let shown;
    if (descriptor.value !== undefined || !('get' in descriptor || 'set' in descriptor)) {
      ctx.indentationLvl += 2;
      shown = formatValue(ctx, descriptor.value, recurseTimes);
      ctx.indentationLvl -= 2;
    } else {
      shown = descriptor.get !== undefined ? (descriptor.set !== undefined ? '[Getter/Setter]' : '[Getter]') : descriptor.set !== undefined ? '[Setter]' : 'undefined';
    }
    return keyName(key) + ': ' + shown;
  }
  function formatValue(ctx, value, recurseTimes, topLevel = false) {
    if (typeof value === 'string') return topLevel ? value : strEscape(value);
    if (typeof value === 'number') return formatNumber(value);
    if (typeof value === 'bigint') return value + 'n';
    if (typeof value === 'boolean' || value === undefined || value === null) return String(value);
    if (typeof value === 'symbol') return value.toString();
    if (ctx.customInspect && typeof value[customInspect] === 'function' && value[customInspect] !== inspect) {
      const result = value[customInspect](ctx.depth - recurseTimes, { ...ctx }, inspect);
      return typeof result === 'string' ? result : formatValue(ctx, result, recurseTimes);
    }
    if (ctx.seen.includes(value)) return '[Circular *1]';
    return formatRaw(ctx, value, recurseTimes);
  }
  function formatRaw(ctx, value, recurseTimes) {
    const name = constructorName(value);
    const prefix = (fallback, size) => {
      const n = name === null ? '[' + fallback + ': null prototype]' : name;
      return (size === undefined ? n : n + '(' + size + ')') + ' ';
    };
    let keys = Object.keys(value);
    let braces = ['{', '}'];
    let base = '';
    let entries = null;  // () => the formatted entries before the keys (at the next depth)
    if (Array.isArray(value)) {
      braces = [(name === 'Array' ? '' : prefix('Array', value.length)) + '[', ']'];
      keys = keys.filter(k => !/^(0|[1-9][0-9]*)$/.test(k) || Number(k) >= value.length);
      entries = depth => formatList(ctx, value.length, i => (i in value ? formatValue(ctx, value[i], depth) : null));
    } else if (types.isTypedArray(value)) {
      braces = [prefix(name, value.length) + '[', ']'];
      keys = keys.filter(k => !/^(0|[1-9][0-9]*)$/.test(k));
      entries = () => formatList(ctx, value.length, i => typeof value[i] === 'bigint' ? value[i] + 'n' : formatNumber(value[i]));
    } else if (types.isMap(value)) {
      braces = [prefix('Map', value.size) + '{', '}'];
      entries = depth => Array.from(value, ([k, v]) => formatValue(ctx, k, depth) + ' => ' + formatValue(ctx, v, depth));
    } else if (types.isSet(value)) {
      braces = [prefix('Set', value.size) + '{', '}'];
      entries = depth => Array.from(value, v => formatValue(ctx, v, depth));
    } else if (typeof value === 'function') {
      base = functionBase(value);
      if (keys.length === 0) return base;
    } else if (types.isRegExp(value)) {
      base = RegExp.prototype.toString.call(value);
      if (keys.length === 0) return base;
    } else if (types.isDate(value)) {
      base = Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
      if (keys.length === 0) return base;
    } else if (types.isNativeError(value) || value instanceof Error) {
      base = value.stack ? String(value.stack) : '[' + Error.prototype.toString.call(value) + ']';
      keys = keys.filter(k => k !== 'stack' && k !== 'message');
      if (keys.length === 0) return base;
    } else if (types.isPromise(value)) {
      // A promise's state is not readable from JavaScript.
      braces = [prefix('Promise') + '{', '}'];
      entries = () => ['<unknown>'];
    } else if (types.isBoxedPrimitive(value)) {
      base = '[' + (name || 'Object') + ': ' + formatValue(ctx, value.valueOf(), recurseTimes) + ']';
      if (keys.length === 0) return base;
    } else {
      if (name !== 'Object') braces[0] = prefix('Object') + '{';
      const tag = value[Symbol.toStringTag];
      if (typeof tag === 'string' && tag !== '' && tag !== name) braces[0] = (name === null ? '[Object: null prototype]' : name) + ' [' + tag + '] {';
      if (keys.length === 0) return braces[0] + '}';
    }
    if (recurseTimes > ctx.depth && ctx.depth !== null) {
      return Array.isArray(value) ? '[Array]' : '[' + (name || (types.isMap(value) ? 'Map' : types.isSet(value) ? 'Set' : 'Object')) + ']';
    }
    recurseTimes += 1;
    ctx.seen.push(value);
    ctx.currentDepth = recurseTimes;
    const output = entries === null ? [] : entries(recurseTimes);
    const symbols = Object.getOwnPropertySymbols(value).filter(s => Object.prototype.propertyIsEnumerable.call(value, s));
    for (const key of [...keys, ...symbols]) output.push(formatProperty(ctx, value, recurseTimes, key));
    ctx.seen.pop();
    if (output.length === 0 && base === '') return braces[0] + braces[1];
    return reduceToSingleString(ctx, output, base, braces, recurseTimes);
  }
  function formatList(ctx, length, item) {
    const out = [];
    const shown = Math.min(length, ctx.maxArrayLength);
    let holes = 0;
    const flush = () => { if (holes > 0) { out.push('<' + holes + ' empty item' + (holes > 1 ? 's' : '') + '>'); holes = 0; } };
    for (let i = 0; i < shown; i++) {
      const text = item(i);
      if (text === null) holes++;
      else { flush(); out.push(text); }
    }
    flush();
    if (length > shown) out.push('... ' + (length - shown) + ' more item' + (length - shown > 1 ? 's' : ''));
    return out;
  }
  function inspect(value, options) {
    const ctx = { ...defaults, seen: [], indentationLvl: 0, currentDepth: 0 };
    if (typeof options === 'boolean') ctx.showHidden = options;
    else if (options !== null && typeof options === 'object') Object.assign(ctx, options);
    if (ctx.depth === Infinity) ctx.depth = null;
    return formatValue(ctx, value, 0);
  }
  inspect.custom = customInspect;
  inspect.defaultOptions = defaults;

  function formatWithOptions(options, ...args) {
    const first = args[0];
    let out = '';
    let next = 0;
    if (typeof first === 'string') {
      next = 1;
      out = first.replace(/%([sdifjoOc%])/g, (match, c) => {
        if (c === '%') return '%';
        if (next >= args.length) return match;
        const arg = args[next++];
        switch (c) {
          case 's':
            if (typeof arg === 'bigint') return arg + 'n';
            if (typeof arg === 'number') return formatNumber(arg);
            if (typeof arg === 'object' && arg !== null) return inspect(arg, { ...options, depth: 0 });
            return String(arg);
          case 'd': return typeof arg === 'bigint' ? arg + 'n' : typeof arg === 'symbol' ? 'NaN' : formatNumber(Number(arg));
          case 'i': return typeof arg === 'bigint' ? arg + 'n' : typeof arg === 'symbol' ? 'NaN' : formatNumber(parseInt(arg));
          case 'f': return typeof arg === 'symbol' ? 'NaN' : formatNumber(parseFloat(arg));
          case 'j': try { return JSON.stringify(arg); } catch { return '[Circular]'; }
          case 'o': return inspect(arg, { ...options, showHidden: true, depth: 4 });
          case 'O': return inspect(arg, options);
          case 'c': return '';
        }
        return match;
      });
    }
    for (let i = next; i < args.length; i++) {
      const arg = args[i];
      out += (i > 0 ? ' ' : '') + (typeof arg === 'string' ? arg : inspect(arg, options));
    }
    return out;
  }
  const format = (...args) => formatWithOptions(undefined, ...args);

  function promisify(original) {
    if (typeof original !== 'function') throw new TypeError('The "original" argument must be of type function');
    if (original[promisifyCustom]) {
      const fn = original[promisifyCustom];
      return Object.defineProperty(fn, promisifyCustom, { value: fn, enumerable: false, writable: false, configurable: true });
    }
    function fn(...args) {
      return new Promise((resolve, reject) => {
        Reflect.apply(original, this, [...args, (error, value) => error ? reject(error) : resolve(value)]);
      });
    }
    Object.setPrototypeOf(fn, Object.getPrototypeOf(original));
    Object.defineProperty(fn, promisifyCustom, { value: fn, enumerable: false, writable: false, configurable: true });
    return Object.defineProperties(fn, Object.getOwnPropertyDescriptors(original));
  }
  promisify.custom = promisifyCustom;
  function callbackify(original) {
    if (typeof original !== 'function') throw new TypeError('The "original" argument must be of type function');
    return function (...args) {
      const callback = args.pop();
      if (typeof callback !== 'function') throw new TypeError('The last argument must be of type function');
      Reflect.apply(original, this, args).then(value => queueMicrotask(() => callback(null, value)), reason => {
        const error = reason || Object.assign(new Error('Promise was rejected with a falsy value'), { reason });
        queueMicrotask(() => callback(error));
      });
    };
  }
  function inherits(ctor, superCtor) {
    if (typeof ctor !== 'function') throw new TypeError('The "ctor" argument must be of type function');
    if (typeof superCtor !== 'function' || superCtor.prototype === undefined) throw new TypeError('The "superCtor" argument must be of type function');
    Object.defineProperty(ctor, 'super_', { value: superCtor, writable: true, configurable: true });
    Object.setPrototypeOf(ctor.prototype, superCtor.prototype);
  }
  function deprecate(fn, message) {
    let warned = false;
    return function (...args) {
      if (!warned) { warned = true; console.warn('DeprecationWarning: ' + message); }
      return new.target ? Reflect.construct(fn, args, new.target) : Reflect.apply(fn, this, args);
    };
  }
  const debuglog = () => Object.assign(() => {}, { enabled: false });
  const exports = {
    format, formatWithOptions, inspect, promisify, callbackify, inherits, deprecate, debuglog, debug: debuglog, types,
    isDeepStrictEqual: (a, b) => deepStrictEqual(a, b, types),
    TextEncoder: host.TextEncoder, TextDecoder: host.TextDecoder,
    isArray: Array.isArray, isBoolean: v => typeof v === 'boolean', isBuffer: v => host.isBuffer(v),
    isDate: types.isDate, isError: v => types.isNativeError(v) || v instanceof Error, isFunction: v => typeof v === 'function',
    isNull: v => v === null, isNullOrUndefined: v => v === null || v === undefined, isNumber: v => typeof v === 'number',
    isObject: v => v !== null && typeof v === 'object', isPrimitive: v => v === null || (typeof v !== 'object' && typeof v !== 'function'),
    isRegExp: types.isRegExp, isString: v => typeof v === 'string', isSymbol: v => typeof v === 'symbol',
    isUndefined: v => v === undefined,
    toUSVString: s => String(s).toWellFormed ? String(s).toWellFormed() : String(s).replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'),
    stripVTControlCharacters: s => String(s).replace(/\u001b\[[0-9;]*[A-Za-z]/g, ''),
  };
  return exports;
}

// util.types, from V8's own brand checks where a worker's JavaScript can
// make them (Object.prototype.toString and the built-ins' getters).
export function makeTypes(host) {
  const tag = v => Object.prototype.toString.call(v).slice(8, -1);
  const typedArrayTag = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag).get;
  const brand = (getter, v) => { try { getter.call(v); return true; } catch { return false; } };
  const mapSize = Object.getOwnPropertyDescriptor(Map.prototype, 'size').get;
  const setSize = Object.getOwnPropertyDescriptor(Set.prototype, 'size').get;
  const abLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
  const sabLength = typeof SharedArrayBuffer === 'function' ? Object.getOwnPropertyDescriptor(SharedArrayBuffer.prototype, 'byteLength').get : null;
  const dvLength = Object.getOwnPropertyDescriptor(DataView.prototype, 'byteLength').get;
  const isObject = v => v !== null && (typeof v === 'object' || typeof v === 'function');
  const typed = name => v => typedArrayTag.call(v) === name;
  const AsyncFunction = (async () => {}).constructor;
  const GeneratorFunction = (function* () {}).constructor;
  const AsyncGeneratorFunction = (async function* () {}).constructor;
  const fnKind = (v, ...kinds) => typeof v === 'function' && kinds.some(k => Object.getPrototypeOf(v) === k.prototype);
  const boxed = (proto, method) => v => isObject(v) && typeof v !== 'function' && brand(proto[method], v) && typeof v.valueOf() !== 'object';
  const isNumberObject = boxed(Number.prototype, 'valueOf');
  const isStringObject = boxed(String.prototype, 'valueOf');
  const isBooleanObject = boxed(Boolean.prototype, 'valueOf');
  const isBigIntObject = boxed(BigInt.prototype, 'valueOf');
  const isSymbolObject = boxed(Symbol.prototype, 'valueOf');
  const isArrayBuffer = v => isObject(v) && brand(abLength, v);
  const isSharedArrayBuffer = v => isObject(v) && sabLength !== null && brand(sabLength, v);
  return {
    isAnyArrayBuffer: v => isArrayBuffer(v) || isSharedArrayBuffer(v),
    isArrayBuffer, isSharedArrayBuffer,
    isArgumentsObject: v => isObject(v) && tag(v) === 'Arguments',
    isArrayBufferView: v => ArrayBuffer.isView(v),
    isAsyncFunction: v => fnKind(v, AsyncFunction, AsyncGeneratorFunction),
    isGeneratorFunction: v => fnKind(v, GeneratorFunction, AsyncGeneratorFunction),
    isGeneratorObject: v => isObject(v) && tag(v) === 'Generator',
    isFloat16Array: typed('Float16Array'),  // V8 10.2 has none: always false
    isBigInt64Array: typed('BigInt64Array'), isBigUint64Array: typed('BigUint64Array'),
    isFloat32Array: typed('Float32Array'), isFloat64Array: typed('Float64Array'),
    isInt8Array: typed('Int8Array'), isInt16Array: typed('Int16Array'), isInt32Array: typed('Int32Array'),
    isUint8Array: typed('Uint8Array'), isUint8ClampedArray: typed('Uint8ClampedArray'),
    isUint16Array: typed('Uint16Array'), isUint32Array: typed('Uint32Array'),
    isTypedArray: v => typedArrayTag.call(v) !== undefined,
    isDataView: v => isObject(v) && brand(dvLength, v),
    isDate: v => isObject(v) && brand(Date.prototype.getTime, v),
    isMap: v => isObject(v) && brand(mapSize, v),
    isSet: v => isObject(v) && brand(setSize, v),
    isWeakMap: v => isObject(v) && brand(WeakMap.prototype.has, v),
    isWeakSet: v => isObject(v) && brand(WeakSet.prototype.has, v),
    isMapIterator: v => isObject(v) && tag(v) === 'Map Iterator',
    isSetIterator: v => isObject(v) && tag(v) === 'Set Iterator',
    isNativeError: v => isObject(v) && tag(v) === 'Error' && Object.prototype.hasOwnProperty.call(v, 'stack') === true,
    isPromise: v => isObject(v) && tag(v) === 'Promise',
    isRegExp: v => isObject(v) && brand(Object.getOwnPropertyDescriptor(RegExp.prototype, 'flags').get, v) && tag(v) === 'RegExp',
    isBoxedPrimitive: v => isNumberObject(v) || isStringObject(v) || isBooleanObject(v) || isBigIntObject(v) || isSymbolObject(v),
    isNumberObject, isStringObject, isBooleanObject, isBigIntObject, isSymbolObject,
    isModuleNamespaceObject: v => isObject(v) && tag(v) === 'Module' && Object.getPrototypeOf(v) === null,
    isProxy: () => false,
    isExternal: () => false,
    isCryptoKey: v => v instanceof host.CryptoKey,
    isKeyObject: () => false,
  };
}

function deepStrictEqual(a, b, types, seen = new Map()) {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (Object.prototype.toString.call(a) !== Object.prototype.toString.call(b)) return false;
  if (seen.get(a) === b) return true;
  seen.set(a, b);
  if (types.isDate(a) && a.getTime() !== b.getTime()) return false;
  if (types.isRegExp(a) && String(a) !== String(b)) return false;
  if (ArrayBuffer.isView(a)) {
    if (a.byteLength !== b.byteLength) return false;
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength), y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  }
  if (types.isMap(a)) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !deepStrictEqual(v, b.get(k), types, seen)) return false;
  } else if (types.isSet(a)) {
    if (a.size !== b.size) return false;
    for (const v of a) if (!b.has(v)) return false;
  }
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!Object.prototype.hasOwnProperty.call(b, k) || !deepStrictEqual(a[k], b[k], types, seen)) return false;
  return true;
}
