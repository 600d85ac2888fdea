import { DurableObject } from "cloudflare:workers";

/**
 * Welcome to Cloudflare Workers! This is your first Durable Objects application.
 *
 * Learn more at https://developers.cloudflare.com/durable-objects
 */

/** A Durable Object's behavior is defined in an exported Javascript class */
export class MyDurableObject extends DurableObject<Env> {
	// Planted: every greeting is kept by the object, forever.
	greetings: { name: string; at: number; words: string[] }[] = [];

	constructor(ctx: DurableObjectState, env: Env) {
		super(ctx, env);
	}

	recordGreeting(name: string): void {
		this.greetings.push({ name, at: Date.now(), words: new Array(2000).fill(name) });
	}

	async sayHello(name: string): Promise<string> {
		this.recordGreeting(name);
		return `Hello, ${name}!`;
	}
}

export default {
	async fetch(request, env, ctx): Promise<Response> {
		// Create a stub to open a communication channel with the Durable Object
		// instance named "foo".
		const stub = env.MY_DURABLE_OBJECT.getByName("foo");

		// Call the `sayHello()` RPC method on the stub to invoke the method on
		// the remote Durable Object instance.
		const greeting = await stub.sayHello("world");

		return new Response(greeting);
	},
} satisfies ExportedHandler<Env>;
