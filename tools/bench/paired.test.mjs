// The benchmarks' statistics (paired.mjs, the JavaScript twin of paired.h):
// the order-statistic interval of a median, the verdict and the looks.
import assert from 'node:assert/strict';
import test from 'node:test';
import { median, medianInterval, nextLook, summary, verdict } from './paired.mjs';

const ten = [9, 1, 8, 2, 7, 3, 6, 4, 5, 10];

test('the interval is the binomial order statistics', () => {
  // n = 10: P(X <= 1) = 11/1024 <= 2.5 % < P(X <= 2) = 56/1024, so the 2nd and 9th values.
  assert.deepEqual(medianInterval(ten, 0.95), [2, 9]);
  // At 99 %: P(X <= 0) = 1/1024 <= 0.5 % < P(X <= 1), so the extremes.
  assert.deepEqual(medianInterval(ten, 0.99), [1, 10]);
  // Five values cannot make a 95 % interval (P(X = 0) = 1/32 > 2.5 %), eight make a 99 % one.
  assert.equal(medianInterval([1, 2, 3, 4, 5], 0.95), null);
  assert.deepEqual(medianInterval([8, 7, 6, 5, 4, 3, 2, 1], 0.99), [1, 8]);
  assert.equal(median(ten), 5.5);
});

test('the verdict needs the whole interval on one side of the target', () => {
  const below = Array.from({ length: 40 }, (_, i) => 1 + i / 10000);      // 1.0000 .. 1.0039
  const above = below.map((x) => x + 0.02);                                 // 1.0200 .. 1.0239
  const across = Array.from({ length: 40 }, (_, i) => 0.99 + i / 1000);     // 0.990 .. 1.029
  assert.equal(verdict(below, 1.01), 'met');
  assert.equal(verdict(above, 1.01), 'not met');
  assert.equal(verdict(across, 1.01), 'undecided');
  assert.equal(verdict([1, 1, 1], 1.01), null);
  const s = summary(across, 1.01);
  assert.equal(s.verdict, 'undecided');
  assert.ok(s.pairs_to_decide > across.length, 'an undecided row asks for more pairs than it has');
  assert.equal(summary(below, 1.01).pairs_to_decide, undefined);
});

test('looks come every 25 % more pairs', () => {
  const looks = [8];
  while (looks.at(-1) < 1000) looks.push(nextLook(looks.at(-1)));
  assert.deepEqual(looks.slice(0, 6), [8, 10, 13, 17, 22, 28]);
  assert.ok(looks.length <= 25, `${looks.length} looks up to 1000 pairs`);
});
