// The OTLP collector of the otel app, for both runtimes: heapprof run loads
// it with --fetch-handler, workerd runs it as the app's globalOutbound
// service. It accepts the exporter's JSON POST.
export default {
  async fetch(request) {
    await request.text();
    return Response.json({ partialSuccess: {} });
  },
};
