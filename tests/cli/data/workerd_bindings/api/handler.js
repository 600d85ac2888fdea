// The upstream API the api worker fetches: --fetch-handler makes it the workers' globalOutbound.
export default {
  async fetch(request) {
    const url = new URL(request.url);
    return Response.json({ host: url.host, item: url.searchParams.get('item'), cents: 450 });
  },
};
