// navigator (Navigator).

import { illegalConstructor, runtimeToken } from './runtime_token.js';
import { missingApi } from './missing.js';

// navigator's fields are the instance's own, as in workerd. Libraries detect
// Workers by navigator.userAgent (Hono's getRuntimeKey does).
class Navigator {
  constructor(token) {
    illegalConstructor(token);
    this.platform = '';
    this.hardwareConcurrency = 1;
    this.userAgent = 'Cloudflare-Workers';
    Object.freeze(this);
  }
}
// A method of Navigator's, as workerd's navigator.sendBeacon is.
Object.defineProperty(Navigator.prototype, 'sendBeacon', {
  value: { sendBeacon() { throw missingApi('navigator.sendBeacon'); } }.sendBeacon,
  writable: true, configurable: true,
});
// The global navigator.
const navigator = new Navigator(runtimeToken);

export { Navigator, navigator };
