// What `wrangler types` writes for this project, cut to the types the code names.
interface Env {
	GREETING: string;
	FEATURE?: string;
	API_TOKEN?: string;
}
