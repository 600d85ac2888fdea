// Fidelity case: an async helper builds a large response model per request.
// Culprit: loadProfile (alloc_space).
async function loadProfile(id) {
  await null;
  const friends = [];
  for (let i = 0; i < 100; ++i) friends.push({ id: id * 100 + i, name: 'friend-' + i });
  return { id, friends };
}

export default {
  async fetch(request) {
    const profile = await loadProfile(request.url.length);
    return new Response(String(profile.friends.length));
  },
};
