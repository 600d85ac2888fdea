import { Hono } from "hono";
import { logger } from "hono/logger";

type Session = { id: string; path: string; seen: number; cart: string[] };

const app = new Hono<{ Bindings: Env }>();

// Planted: a session per request, never expired.
const sessions = new Map<string, Session>();

function openSession(path: string): Session {
	const session = { id: crypto.randomUUID(), path, seen: Date.now(), cart: new Array(2000).fill(path) };
	sessions.set(session.id, session);
	return session;
}

app.use(logger(() => {}));

app.get("/message", (c) => c.text("Hello Hono!"));

app.get("*", (c) => {
	const session = openSession(c.req.path);
	return c.json({ session: session.id, sessions: sessions.size });
});

export default app;
