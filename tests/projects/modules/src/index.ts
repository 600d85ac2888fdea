// A Text, a Data and a CompiledWasm module, by wrangler's default rules.
import greeting from "./greeting.txt";
import table from "./table.bin";
import addModule from "./add.wasm";

const add = new WebAssembly.Instance(addModule).exports.add as (a: number, b: number) => number;

// Planted: every answer is kept.
const answers: string[][] = [];

function keepAnswer(line: string): void {
	answers.push(new Array(2000).fill(line));
}

export default {
	async fetch(request, env, ctx): Promise<Response> {
		const bytes = new Uint8Array(table);
		const line = `${greeting.trim()}; 2 + 3 = ${add(2, 3)}; table ${bytes.join(",")}`;
		keepAnswer(line);
		return new Response(line);
	},
} satisfies ExportedHandler<Env>;
