// navigator (Navigator).

import { illegalConstructor } from './runtime_token.js';

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

export { Navigator };
