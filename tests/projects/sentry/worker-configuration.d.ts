// What `wrangler types` writes for this project, cut to the types the code names.
interface Env {
	SENTRY_DSN: string;
}
