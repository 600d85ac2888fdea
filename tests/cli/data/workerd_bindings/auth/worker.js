// The auth worker, a services binding's target: found beside the api worker by its wrangler.toml name.
import { WorkerEntrypoint } from 'cloudflare:workers';
export class Admin extends WorkerEntrypoint {
  role(user) { return user === this.env.OWNER ? 'owner' : 'member'; }
}
export default {
  fetch(request, env) {
    const user = new URL(request.url).searchParams.get('user');
    return Response.json({ user, by: env.ISSUER, ok: user === env.OWNER });
  },
};
