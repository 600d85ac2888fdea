// The Sentry ingest endpoint of the sentry app, for both runtimes: heapprof
// run loads it with --fetch-handler, workerd runs it as the app's
// globalOutbound service. It answers the SDK's envelope POST with what it
// received (the app answers with what beforeSend saw).
export default {
  async fetch(request) {
    const body = await request.text();
    const url = new URL(request.url);
    return Response.json({
      method: request.method,
      host: url.host,
      path: url.pathname,
      contentType: request.headers.get('content-type'),
      lines: body.split('\n').filter(Boolean).length,
    }, { headers: { 'x-sentry-rate-limits': '' } });
  },
};
