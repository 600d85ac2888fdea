// What `wrangler types` writes for this project, cut to the one type the
// code names (the generated file is 600 KB of runtime types).
interface Env {}
