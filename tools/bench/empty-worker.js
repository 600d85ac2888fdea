// The empty worker of tools/bench/memory_baseline.mjs: answers every request
// with a constant, keeps nothing. Its heap after warm-up is the runtime's own.
export default {
  async fetch() {
    return new Response('ok');
  },
};
