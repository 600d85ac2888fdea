/**
 * Welcome to Cloudflare Workers! This is your first worker.
 *
 * - Run `npm run dev` in your terminal to start a development server
 * - Open a browser tab at http://localhost:8787/ to see your worker in action
 * - Run `npm run deploy` to publish your worker
 *
 * Learn more at https://developers.cloudflare.com/workers/
 */

// Planted: every request is remembered and never forgotten.
const visits: { path: string; at: number; trail: string[] }[] = [];

function rememberVisit(url: URL): void {
	visits.push({ path: url.pathname, at: Date.now(), trail: new Array(2000).fill(url.search) });
}

export default {
	async fetch(request, env, ctx): Promise<Response> {
		rememberVisit(new URL(request.url));
		return new Response("Hello World!");
	},
} satisfies ExportedHandler<Env>;
