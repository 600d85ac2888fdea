// node:process and the global `process` of nodejs_compat, as workerd's are:
// env, exit, features, getBuiltinModule, nextTick and platform. env is
// empty unless the nodejs_compat_populate_process_env flag fills it with the
// worker's text vars (host.processEnv). exit() is refused.
export function makeProcess(host) {
  const process = {
    env: host.processEnv(),
    exit() { throw host.missingApi('process.exit()'); },
    features: { inspector: false, debug: false, uv: false, ipv6: false, tls_alpn: false, tls_sni: false, tls_ocsp: false, tls: false, cached_builtins: true, typescript: false },
    getBuiltinModule: name => host.builtinModule(String(name)),
    nextTick(callback, ...args) {
      if (typeof callback !== 'function') throw new TypeError('The "callback" argument must be of type function');
      queueMicrotask(() => callback(...args));
    },
    platform: 'linux',
  };
  return { ...process, default: process };
}
