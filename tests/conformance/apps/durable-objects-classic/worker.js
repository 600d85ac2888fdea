// Durable Objects of the classic form: a class with constructor(state, env)
// and fetch(request), no base class, reached only by stub.fetch(). A chat
// room per name keeps its messages in state.storage; the worker routes
// /room/NAME/... to the room, as the platform's examples do. An RPC call on
// such a class is refused, and the refusal crosses the stub.
export class ChatRoom {
  constructor(state, env) {
    this.state = state;
    this.env = env;
    this.sessions = 0;
    state.blockConcurrencyWhile(async () => {
      this.messages = (await state.storage.get('messages')) ?? [];
    });
  }
  async fetch(request) {
    const url = new URL(request.url);
    this.sessions++;
    if (request.method === 'POST' && url.pathname === '/post') {
      const { user, text } = await request.json();
      if (typeof text !== 'string' || text === '') return new Response('empty message', { status: 400 });
      this.messages.push({ user, text, seq: this.messages.length + 1 });
      await this.state.storage.put('messages', this.messages);
      await this.state.storage.put(`by:${user}`, ((await this.state.storage.get(`by:${user}`)) ?? 0) + 1);
      return Response.json({ ok: true, seq: this.messages.length }, { status: 201 });
    }
    if (url.pathname === '/history') {
      return Response.json({ room: this.state.id.name ?? null, messages: this.messages, sessions: this.sessions });
    }
    if (url.pathname === '/authors') {
      const authors = await this.state.storage.list({ prefix: 'by:' });
      return Response.json(Object.fromEntries(authors));
    }
    if (url.pathname === '/id') {
      return new Response(this.state.id.toString(), { headers: { 'x-env-has-rooms': String(typeof this.env.ROOMS) } });
    }
    if (url.pathname === '/throw') throw new Error('the room failed');
    return new Response('unknown room path ' + url.pathname, { status: 404 });
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const match = /^\/room\/([^/]+)(\/.*)$/.exec(url.pathname);
    if (match) {
      const id = env.ROOMS.idFromName(decodeURIComponent(match[1]));
      const room = env.ROOMS.get(id);
      const inner = new URL(match[2] + url.search, 'https://room.internal');
      try {
        return await room.fetch(new Request(inner, request));
      } catch (e) {
        return Response.json({ caught: e.name, message: e.message }, { status: 502 });
      }
    }
    if (url.pathname === '/rpc') {
      try {
        await env.ROOMS.get(env.ROOMS.idFromName('lobby')).history();
        return new Response('rpc answered');
      } catch (e) {
        return Response.json({ name: e.name, message: e.message });
      }
    }
    if (url.pathname === '/burst') {
      const room = env.ROOMS.get(env.ROOMS.idFromName('burst'));
      const posts = Array.from({ length: 8 }, (_, i) => room.fetch('https://room.internal/post', {
        method: 'POST', body: JSON.stringify({ user: 'u' + (i % 3), text: 'm' + i }),
      }).then(r => r.json()));
      const seqs = (await Promise.all(posts)).map(p => p.seq);
      const history = await (await room.fetch('https://room.internal/history')).json();
      return Response.json({ seqs, texts: history.messages.map(m => m.text) });
    }
    return new Response('not found', { status: 404 });
  },
};
