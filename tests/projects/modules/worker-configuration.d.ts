// What `wrangler types` writes for this project, cut to the types the code
// names, and the module declarations wrangler's rules make true.
interface Env {}
declare module "*.txt" {
	const text: string;
	export default text;
}
declare module "*.bin" {
	const data: ArrayBuffer;
	export default data;
}
declare module "*.wasm" {
	const module: WebAssembly.Module;
	export default module;
}
