// [env.staging] replaces the top level's vars (vars are not inherited), so
// FEATURE is missing there, as wrangler deploy --env staging makes it.
const greeted: string[][] = [];

function greet(env: Env): string {
	const line = `${env.GREETING}; FEATURE=${env.FEATURE ?? "unset"}; SECRET=${env.API_TOKEN ?? "unset"}`;
	greeted.push(new Array(2000).fill(line));
	return line;
}

export default {
	async fetch(request, env): Promise<Response> {
		return new Response(greet(env));
	},
} satisfies ExportedHandler<Env>;
