// Route parsing: allocates a little garbage per request, retains nothing.

export interface Route {
  name: string;
  params: Map<string, string>;
}

export function parseRoute(url: string): Route {
  const [path, query = ""] = url.split("?");
  const params = new Map<string, string>();
  for (const pair of query.split("&")) {
    const [key, value = ""] = pair.split("=");
    if (key) params.set(key, value);
  }
  return { name: path.replace(/\/+$/, "") || "/", params };
}

export const statusFor = (route: Route): number =>
  route.name.toLowerCase().split("/").includes("admin") ? 403 : 200;
