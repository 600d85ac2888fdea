// A small shop API on Hono (npm `hono`), for `heapprof run --runtime
// workerd`: several routes, the cors middleware and a JSON POST, answering
// every route of heapprof's synthetic requests. The test bundles it with
// esbuild (minified, with a source map) and expects these functions and this
// .ts file in the profile.
import { Hono } from "hono";
import { cors } from "hono/cors";

interface LineItem {
  sku: string;
  qty: number;
}

interface Order {
  id: number;
  user: number;
  items: LineItem[];
  total: number;
}

const recentOrders: Order[] = [];
let nextOrderId = 1;

function renderUserProfile(id: number) {
  const history = [];
  for (let i = 0; i < 40; i++) history.push({ order: id * 100 + i, status: i % 3 === 0 ? "shipped" : "open" });
  return { id, name: `user-${id}`, tier: id % 7 === 0 ? "gold" : "basic", history };
}

function priceOrder(user: number, items: LineItem[]): Order {
  const priced = items.map((item) => ({ ...item, price: 100 + (item.sku.length * 37) % 900 }));
  const total = priced.reduce((sum, item) => sum + item.price * item.qty, 0);
  const order = { id: nextOrderId++, user, items: priced, total };
  recentOrders.push(order);
  if (recentOrders.length > 500) recentOrders.shift();
  return order;
}

function searchCatalog(query: string, page: number) {
  const words = query.toLowerCase().split(/\s+/);
  const hits = [];
  for (let i = 0; i < 25; i++) hits.push({ sku: `SKU-${page * 25 + i}`, title: `${words.join(" ")} #${i}`, score: 1 / (i + 1) });
  return { query, page, hits };
}

const app = new Hono();
app.use("/api/*", cors({ origin: "*", allowMethods: ["GET", "POST"] }));
app.get("/health", (c) => c.text("ok"));
app.get("/static/:file", (c) => c.body(`/* ${c.req.param("file")} */ console.log("app");`, 200, { "content-type": "text/javascript" }));
app.get("/api/users/:id", (c) => c.json(renderUserProfile(Number(c.req.param("id")))));
app.get("/api/orders/:id", (c) => {
  const id = Number(c.req.param("id"));
  return c.json({ id, include: c.req.query("include") ?? null, items: [{ sku: `SKU-${id % 5000}`, qty: 1 }] });
});
app.post("/api/orders", async (c) => {
  const body = await c.req.json<{ user: number; items: LineItem[] }>();
  return c.json(priceOrder(body.user, body.items), 201);
});
app.get("/api/search", (c) => c.json(searchCatalog(c.req.query("q") ?? "", Number(c.req.query("page") ?? "1"))));

export default app;
