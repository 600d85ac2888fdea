import * as Sentry from "@sentry/cloudflare";

// Planted: every order is kept in a module-level list.
const orders: { id: number; items: string[] }[] = [];

function placeOrder(id: number): number {
	orders.push({ id, items: new Array(2000).fill(`item-${id}`) });
	return orders.length;
}

export default Sentry.withSentry(
	(env: Env) => ({ dsn: env.SENTRY_DSN, tracesSampleRate: 1.0 }),
	{
		async fetch(request, env, ctx): Promise<Response> {
			Sentry.setTag("path", new URL(request.url).pathname);
			const count = placeOrder(Date.now());
			return new Response(`orders: ${count}`);
		},
	} satisfies ExportedHandler<Env>,
);
