import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Histogram } from '../../src/util/index.js';

test('property: percentiles are within 1/64 of the exact order statistic', () => {
  // Small values, and values past 2^31 (where bucketing leaves 32-bit arithmetic), near powers of two too.
  const value = fc.oneof(
    fc.integer({ min: 0, max: 50_000_000 }),
    fc.integer({ min: 0, max: 2 ** 40 - 1 }),
    fc.tuple(fc.integer({ min: 7, max: 39 }), fc.integer({ min: -2, max: 2 })).map(([k, d]) => 2 ** k + d),
  );
  fc.assert(fc.property(fc.array(value, { minLength: 1, maxLength: 500 }), fc.double({ min: 0, max: 100, noNaN: true }), (values, q) => {
    const h = new Histogram();
    for (const v of values) h.record(v);
    const sorted = [...values].sort((a, b) => a - b);
    const exact = sorted[Math.max(0, Math.ceil((q / 100) * sorted.length) - 1)]!;
    const got = h.percentile(q);
    assert.ok(got >= exact, `p${q}: ${got} < exact ${exact}`);
    assert.ok(got <= exact + Math.max(1, exact / 64), `p${q}: ${got} too far above exact ${exact}`);
    assert.equal(h.total, values.length);
    assert.equal(h.max, sorted[sorted.length - 1]);
  }));
});

test('merging histograms equals recording everything into one', () => {
  const a = new Histogram();
  const b = new Histogram();
  const all = new Histogram();
  for (let i = 0; i < 1000; i++) { (i % 2 ? a : b).record(i * 37); all.record(i * 37); }
  a.merge(b);
  for (const q of [50, 90, 99, 99.9, 100]) assert.equal(a.percentile(q), all.percentile(q));
  assert.equal(a.mean, all.mean);
});

test('a snapshot (as sent from a worker thread) rebuilds the same histogram, and merges', () => {
  const a = new Histogram();
  for (let i = 1; i <= 5000; i++) a.record(i * 13);
  const copy = Histogram.fromSnapshot(structuredClone(a.snapshot()));
  for (const q of [0, 50, 99, 99.9, 100]) assert.equal(copy.percentile(q), a.percentile(q));
  assert.deepEqual([copy.total, copy.min, copy.max, copy.mean], [a.total, a.min, a.max, a.mean]);
  const merged = new Histogram();
  merged.merge(copy);
  merged.merge(Histogram.fromSnapshot(new Histogram().snapshot()));
  assert.equal(merged.percentile(99), a.percentile(99), 'an empty snapshot changes nothing');
  a.reset();
  assert.equal(a.total, 0);
  assert.equal(a.percentile(99), 0);
});

test('a value beyond the tracked range is refused, not bucketed somewhere', () => {
  const h = new Histogram(7, 20);
  h.record(2 ** 20 - 1);
  assert.throws(() => h.record(2 ** 20), /out of range/);
  assert.equal(h.total, 1);
});
