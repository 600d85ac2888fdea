// What `wrangler types` writes for this project, cut to the types the code
// names (the generated file is 600 KB of runtime types).
interface Env {
	MY_DURABLE_OBJECT: DurableObjectNamespace<import("./src/index").MyDurableObject>;
}
