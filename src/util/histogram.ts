// A log-linear latency histogram in the spirit of HdrHistogram: values (microseconds, say) fall
// into buckets whose width is a fixed fraction of their magnitude, so every percentile is exact to
// within 1 / 2^(subBucketBits - 1) of the value (1.6% with 7 bits) at any scale, in fixed memory.
import { assert } from './assert.js';

/** A histogram as plain data, for sending between worker threads or processes. */
export interface HistogramSnapshot {
  subBucketBits: number;
  maxBits: number;
  counts: Float64Array;
  total: number;
  min: number;
  max: number;
  sum: number;
}

export class Histogram {
  private readonly counts: Float64Array;
  private readonly subBuckets: number;
  private readonly limit: number;
  total = 0;
  min = Infinity;
  max = -Infinity;
  private sum = 0;

  /** Tracks integers in [0, 2^maxBits). */
  constructor(readonly subBucketBits = 7, readonly maxBits = 40) {
    assert(subBucketBits >= 1 && subBucketBits < maxBits && maxBits <= 52, 'histogram bits');
    this.subBuckets = 1 << subBucketBits;
    this.limit = 2 ** maxBits;
    this.counts = new Float64Array(this.subBuckets + (maxBits - subBucketBits + 1) * (this.subBuckets / 2));
  }

  private indexOf(value: number): number {
    if (value < this.subBuckets) return value;
    const half = this.subBuckets / 2;
    if (value <= 0x7fffffff) {
      // Integer bit arithmetic: log2 and powers here were most of a recording's cost (bench e2e
      // records every record's latency: ~100,000 calls a second).
      const shift = 31 - Math.clz32(value) - this.subBucketBits + 1;
      return this.subBuckets + (shift - 1) * half + ((value >>> shift) - half);
    }
    let e = Math.floor(Math.log2(value));
    while (2 ** (e + 1) <= value) e++;
    while (2 ** e > value) e--;
    const shift = e - this.subBucketBits + 1;
    const sub = Math.floor(value / 2 ** shift);
    return this.subBuckets + (shift - 1) * half + (sub - half);
  }

  /** The largest value that maps to bucket `index` (what percentiles report). */
  private highestOf(index: number): number {
    if (index < this.subBuckets) return index;
    const half = this.subBuckets / 2;
    const k = index - this.subBuckets;
    const shift = Math.floor(k / half) + 1;
    const sub = (k % half) + half;
    return (sub + 1) * 2 ** shift - 1;
  }

  record(value: number, count = 1): void {
    const v = Math.max(0, Math.round(value));
    // The message is built only on failure: record() runs for every record of a benchmark.
    if (!(v < this.limit)) assert(false, `histogram value ${v} out of range`);
    this.counts[this.indexOf(v)]! += count;
    this.total += count;
    this.sum += v * count;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
  }

  merge(other: Histogram): void {
    assert(other.counts.length === this.counts.length, 'histogram shapes differ');
    for (let i = 0; i < this.counts.length; i++) this.counts[i]! += other.counts[i]!;
    this.total += other.total;
    this.sum += other.sum;
    this.min = Math.min(this.min, other.min);
    this.max = Math.max(this.max, other.max);
  }

  /** A copy of the state (the counts array is a copy, safe to transfer). */
  snapshot(): HistogramSnapshot {
    return { subBucketBits: this.subBucketBits, maxBits: this.maxBits, counts: this.counts.slice(), total: this.total, min: this.min, max: this.max, sum: this.sum };
  }

  /** Rebuilds a histogram from `snapshot()` output, e.g. one received from a worker thread. */
  static fromSnapshot(s: HistogramSnapshot): Histogram {
    const h = new Histogram(s.subBucketBits, s.maxBits);
    assert(s.counts.length === h.counts.length, 'histogram snapshot shape');
    h.counts.set(s.counts);
    h.total = s.total;
    h.min = s.min;
    h.max = s.max;
    h.sum = s.sum;
    return h;
  }

  reset(): void {
    this.counts.fill(0);
    this.total = 0;
    this.sum = 0;
    this.min = Infinity;
    this.max = -Infinity;
  }

  get mean(): number { return this.total === 0 ? 0 : this.sum / this.total; }

  /** The value at percentile q (0..100): the highest value of the bucket holding that rank. */
  percentile(q: number): number {
    if (this.total === 0) return 0;
    const rank = Math.max(1, Math.ceil((q / 100) * this.total));
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return Math.min(this.highestOf(i), this.max);
    }
    return this.max;
  }
}
