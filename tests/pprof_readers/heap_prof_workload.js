// A small Node.js program for `node --heap-prof`: retains records through a
// named function and churns garbage through another, so the profile names both.
'use strict';
globalThis.retained = [];

function retainSessionRecords(n) {
  for (let i = 0; i < n; i++) globalThis.retained.push({ id: i, body: 'session-'.repeat(16) + i });
}

function churnJsonGarbage(n) {
  let total = 0;
  for (let i = 0; i < n; i++) total += JSON.stringify({ a: i, list: [i, i + 1, i + 2] }).length;
  return total;
}

retainSessionRecords(30000);
churnJsonGarbage(100000);
// Keep the retained records alive until the profile is written at exit.
process.on('exit', () => { if (globalThis.retained.length === 0) console.log('lost'); });
