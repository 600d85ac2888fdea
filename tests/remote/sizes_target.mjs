// For the attach sizes test: keeps small arrays (smallKeep, ~1 KiB each, far
// under the sampling interval) and large ones (bigKeep, ~32 KiB, one object per
// sample) at a fixed pace, 20 small to 1 large, and says what one of each
// keeps alive, so the test knows the true byte ratio: a JSArray and its
// FixedArray of Smis, by V8's object layout (heapUsed deltas are too noisy for
// a 5-sd test: +-10 % between rounds).
const compressed = Number(process.config.variables.v8_enable_pointer_compression ?? 0) === 1;
const tagged = compressed ? 4 : 8;
const arrayBytes = (length) => 4 * tagged + (2 * tagged + tagged * length);  // JSArray + FixedArray

const kept = [];
function smallKeep(n) { for (let i = 0; i < n; i++) kept.push(new Array(128).fill(0)); }
function bigKeep() { kept.push(new Array(4096).fill(0)); }
setInterval(() => { smallKeep(20); bigKeep(); }, 10);
console.error(`node target ready small=${arrayBytes(128)} big=${arrayBytes(4096)}`);
