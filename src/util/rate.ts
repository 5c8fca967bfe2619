// Rates measured over a window of samples, as Kafka's quotas measure them (its SimpleRate over a
// SampledStat, and its TokenBucket): the client quotas (src/broker/quotas.ts) and the network's
// connection creation rates (src/network/connection-quotas.ts) share them. Pure: time comes in as
// `nowMs` arguments.
import { limits } from './limits.js';

export interface QuotaWindow {
  /** quota.window.num (Kafka: 11). */
  readonly samples: number;
  /** quota.window.size.seconds, in ms (Kafka: 1 s). */
  readonly windowMs: number;
}

export const QUOTA_WINDOW_DEFAULT: QuotaWindow = { samples: 11, windowMs: 1000 };

interface Sample { startMs: number; lastEventMs: number; value: number }

/**
 * Kafka's SimpleRate over a SampledStat (as of Kafka 3.7): a sum over rolling samples divided by
 * the time they cover, at least one window. One sample more than `samples` is kept, and a sample
 * counts until its last event is `samples` windows old.
 */
export class SampledRate {
  private readonly samples: Sample[] = [];
  private current = 0;

  constructor(private readonly w: QuotaWindow) {}

  record(value: number, nowMs: number): void {
    let s = this.currentSample(nowMs);
    if (nowMs - s.startMs >= this.w.windowMs) s = this.advance(nowMs);
    s.value += value;
    s.lastEventMs = nowMs;
  }

  /** Per second, over `windowMs(nowMs)`. */
  measure(nowMs: number): number {
    const windowMs = this.windowMs(nowMs);
    return this.total() / (windowMs / 1000);
  }

  /** The sum of the samples as they stand (call windowMs first to drop the ones that no longer count). */
  total(): number {
    let total = 0;
    for (const s of this.samples) total += s.value;
    return total;
  }

  /** The time the rate is measured over: since the oldest sample that still counts, at least one window. */
  windowMs(nowMs: number): number {
    this.purge(nowMs);
    let oldestMs = this.currentSample(nowMs).startMs;
    for (const s of this.samples) oldestMs = Math.min(oldestMs, s.startMs);
    return Math.max(nowMs - oldestMs, this.w.windowMs);
  }

  /** Milliseconds since the last event recorded (since the first sample began when none was). */
  idleSinceMs(nowMs: number): number {
    let lastMs = -Infinity;
    for (const s of this.samples) lastMs = Math.max(lastMs, s.lastEventMs);
    return this.samples.length === 0 ? Infinity : nowMs - lastMs;
  }

  private currentSample(nowMs: number): Sample {
    if (this.samples.length === 0) this.samples.push({ startMs: nowMs, lastEventMs: nowMs, value: 0 });
    return this.samples[this.current]!;
  }

  private advance(nowMs: number): Sample {
    this.current = (this.current + 1) % (this.w.samples + 1);
    if (this.current >= this.samples.length) this.samples.push({ startMs: nowMs, lastEventMs: nowMs, value: 0 });
    const s = this.samples[this.current]!;
    s.startMs = nowMs;
    s.lastEventMs = nowMs;
    s.value = 0;
    return s;
  }

  /** Samples with no event in the last `samples` windows are reset (they no longer count). */
  private purge(nowMs: number): void {
    const expireMs = this.w.samples * this.w.windowMs;
    for (const s of this.samples) {
      if (nowMs - s.lastEventMs >= expireMs) { s.startMs = nowMs; s.lastEventMs = nowMs; s.value = 0; }
    }
  }
}

/** Kafka's TokenBucket: refills at the quota per second up to quota × samples × window. */
export class TokenBucket {
  private tokens: number | null = null;
  private lastMs = 0;

  constructor(private readonly w: QuotaWindow) {}

  /** Tokens left (negative: in debt) at `nowMs`. */
  measure(quota: number, nowMs: number): number {
    return this.refill(quota, nowMs);
  }

  record(value: number, quota: number, nowMs: number): void {
    this.tokens = Math.min(this.burst(quota), this.refill(quota, nowMs) - value);
  }

  private burst(quota: number): number { return quota * this.w.samples * (this.w.windowMs / 1000); }

  private refill(quota: number, nowMs: number): number {
    const burst = this.burst(quota);
    // A new bucket starts full (Kafka's starts empty at time 0 and fills by the epoch's worth at once).
    this.tokens = this.tokens === null ? burst : Math.min(burst, this.tokens + (quota * Math.max(0, nowMs - this.lastMs)) / 1000);
    this.lastMs = nowMs;
    return this.tokens;
  }
}

/** Kafka's throttle time: how long until the observed rate is back at the quota if nothing more is recorded. */
export function throttleTimeMs(observed: number, quota: number, windowMs: number): number {
  if (!(observed > quota)) return 0;
  if (quota <= 0) return limits.clientQuotaThrottleMsMax;
  return Math.min(Math.round(((observed - quota) / quota) * windowMs), limits.clientQuotaThrottleMsMax);
}
