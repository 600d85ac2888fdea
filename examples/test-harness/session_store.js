// A tiny session store, the module under test. remember() has the bug the
// leak test catches: every session is kept forever. rememberRecent() is the
// fix, keeping only the last few. renderPage() has an allocation budget.
const sessions = new Map();
function remember(id) {
  const session = { id, history: new Array(256).fill(id) };
  sessions.set(id, session);
  return session;
}

const recent = [];
function rememberRecent(id) {
  const session = { id, history: new Array(256).fill(id) };
  recent.push(session);
  if (recent.length > 16) recent.shift();
  return session;
}

function renderPage(user) {
  const rows = [];
  for (let i = 0; i < 200; ++i) rows.push('<tr><td>' + user + '</td><td>' + i + '</td></tr>');
  return rows.join('\n');
}
