// Replication throttles (Kafka's ReplicationQuotaManager): a byte rate measured over sampled
// windows (replication.quota.window.num windows of replication.quota.window.size.seconds), and
// which replicas it applies to (leader/follower.replication.throttled.replicas: "*" or
// partition:broker pairs). Kafka checks "is the rate over the quota" before a fetch and lets one
// fetch overshoot; here the check answers how many bytes may move now without the rate over the
// sampled time exceeding the quota, so a fetch is also bounded in size and the copy rate holds
// from the first second (Kafka counts a fresh quota's rate over its whole window count, which
// lets a first burst through).
import { limits } from '../util/index.js';

/** Kafka's Long.MAX_VALUE default: no throttle. */
export const UNTHROTTLED_RATE = Number.MAX_SAFE_INTEGER;

export interface ReplicationQuotaConfig {
  /** replication.quota.window.num (Kafka: 11). */
  readonly windowCount: number;
  /** replication.quota.window.size.seconds, in ms (Kafka: 1 s). */
  readonly windowMs: number;
}

interface Sample { startMs: number; bytes: number }

export class ReplicationQuota {
  private samples: Sample[] = [];

  /** `rate()`: the quota in bytes/s as the configs have it now (UNTHROTTLED_RATE or more: none). */
  constructor(private readonly rate: () => number, private readonly config: ReplicationQuotaConfig) {}

  get isThrottling(): boolean { return this.rate() < UNTHROTTLED_RATE; }

  /** Bytes a throttled copy may move now (0: wait); Infinity when there is no quota. */
  allowance(nowMs: number): number {
    const rate = this.rate();
    if (!(rate < UNTHROTTLED_RATE)) return Infinity;
    this.roll(nowMs);
    const first = this.samples[0]!;
    const elapsedMs = Math.max(nowMs - first.startMs, limits.replicationQuotaElapsedMinMs);
    let bytes = 0;
    for (const s of this.samples) bytes += s.bytes;
    return Math.max(0, Math.floor((rate * elapsedMs) / 1000 - bytes));
  }

  /** How long until some bytes may move again (0 when they may now). */
  delayMs(nowMs: number): number {
    const rate = this.rate();
    if (!(rate < UNTHROTTLED_RATE) || this.allowance(nowMs) > 0) return 0;
    let bytes = 0;
    for (const s of this.samples) bytes += s.bytes;
    const first = this.samples[0]!;
    const dueMs = first.startMs + Math.ceil(((bytes + 1) * 1000) / Math.max(rate, 1));
    return Math.max(1, dueMs - nowMs);
  }

  /** Throttled bytes moved at `nowMs`. */
  record(bytes: number, nowMs: number): void {
    if (bytes <= 0 || !this.isThrottling) return;
    this.roll(nowMs);
    this.samples[this.samples.length - 1]!.bytes += bytes;
  }

  /** Starts a sample when the current one is a window old, and drops the ones past the window count. */
  private roll(nowMs: number): void {
    const { windowMs, windowCount } = this.config;
    const last = this.samples[this.samples.length - 1];
    if (last === undefined || nowMs - last.startMs >= windowMs) this.samples.push({ startMs: nowMs, bytes: 0 });
    while (this.samples.length > 1 && nowMs - this.samples[0]!.startMs >= windowMs * windowCount) this.samples.shift();
  }
}

/** A parsed leader/follower.replication.throttled.replicas value. */
export type ThrottledReplicas = '*' | ReadonlySet<string>;

const parsed = new Map<string, ThrottledReplicas>();

/** "*" or "partition:broker,..." (as the topic config stores it; memoized, values are few). */
export function parseThrottledReplicas(value: string | undefined): ThrottledReplicas | null {
  if (value === undefined || value.trim() === '') return null;
  let out = parsed.get(value);
  if (out === undefined) {
    const items = value.split(',').map((x) => x.trim()).filter((x) => x !== '');
    out = items.length === 1 && items[0] === '*' ? '*' : new Set(items);
    if (parsed.size >= 1024) parsed.clear();
    parsed.set(value, out);
  }
  return out;
}

/** Whether the list names `partition` on `brokerId` (Kafka marks a broker's partitions from it). */
export function isThrottledReplica(list: ThrottledReplicas | null, partition: number, brokerId: number): boolean {
  if (list === null) return false;
  return list === '*' || list.has(`${partition}:${brokerId}`);
}
