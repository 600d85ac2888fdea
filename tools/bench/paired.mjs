// The statistics of tools/bench/paired.h for the JavaScript benchmarks and
// the table: the median's distribution-free interval (order statistics of a
// binomial), the verdict against a target, and the sequential rule's looks.
export const SEQUENTIAL_LEVEL = 0.99;

export const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  const n = v.length;
  return n === 0 ? NaN : n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
};

// [x_(k), x_(n-k-1)] with the largest k such that P(Binomial(n, 1/2) <= k)
// <= (1 - level) / 2; null when n is too small for one.
export function medianInterval(xs, level = 0.95) {
  const v = [...xs].sort((a, b) => a - b);
  const n = v.length, tail = (1 - level) / 2;
  let cdf = 0, pmf = 0.5 ** n, k = -1;
  for (let i = 0; i < n; ++i) {
    cdf += pmf;
    if (cdf > tail) break;
    k = i;
    pmf = (pmf * (n - i)) / (i + 1);
  }
  return k < 0 ? null : [v[k], v[n - k - 1]];
}

// "met" (upper end <= target), "not met" (lower end above), "undecided", or
// null with too few values.
export function verdict(xs, target, level = SEQUENTIAL_LEVEL) {
  const ci = medianInterval(xs, level);
  if (!ci) return null;
  return ci[1] <= target ? 'met' : ci[0] > target ? 'not met' : 'undecided';
}

// The row's summary: median, interval, verdict and, when undecided, the
// pairs that would decide it at this noise (half-width ~ 1/sqrt(n)).
export function summary(xs, target, level = SEQUENTIAL_LEVEL) {
  const m = median(xs), ci = medianInterval(xs, level);
  const out = { median: m, min: Math.min(...xs), max: Math.max(...xs), n: xs.length, target, level, ci, verdict: verdict(xs, target, level) };
  if (out.verdict === 'undecided' && m !== target) {
    out.pairs_to_decide = Math.ceil(xs.length * (((ci[1] - ci[0]) / 2) / Math.abs(m - target)) ** 2);
  }
  return out;
}

// Looks of the sequential rule: the first at `first` pairs, then every 25 % more.
export const nextLook = (n) => Math.max(n + 1, Math.ceil(n * 1.25));
