// A purgatory holds requests that cannot complete yet: a Fetch below min_bytes waiting for data,
// a Produce with acks=all waiting for the high watermark. Each delayed operation watches keys
// (topic-partitions: the replica manager uses its Partition objects, so waking costs no key string);
// `checkAndComplete(key)` after an append or a high-watermark move re-tries
// every operation watching that key. An operation completes exactly once: by `tryComplete`
// succeeding, or by expiring. Timers come from a `Scheduler` port so tests drive time by hand.
import { assert } from '../util/index.js';

export interface Scheduler {
  schedule(delayMs: number, fn: () => void): { cancel(): void };
}

export const realScheduler: Scheduler = {
  schedule(delayMs, fn) {
    const t = setTimeout(fn, delayMs);
    return { cancel: () => clearTimeout(t) };
  },
};

export interface DelayedOperation {
  /** Returns true when the operation could complete now (and then has done so). */
  tryComplete(): boolean;
  /** Called once when the timeout fires before completion. */
  onExpiration(): void;
}

export class PurgatoryFullError extends Error {
  override name = 'PurgatoryFullError';
}

interface Entry<K> {
  op: DelayedOperation;
  keys: readonly K[];
  completed: boolean;
  timer: { cancel(): void } | null;
}

export class Purgatory<K = string> {
  /**
   * Operations by watched key. A key's set stays when it empties (a partition is watched again
   * by the next fetch; creating and dropping a set per parked fetch was measurable), so the map
   * holds at most one set per key ever watched: the keys are the broker's partitions.
   */
  private readonly watchers = new Map<K, Set<Entry<K>>>();
  private size = 0;

  constructor(readonly name: string, private readonly scheduler: Scheduler, readonly operationsMax: number) {}

  /** Operations waiting right now. */
  get pending(): number { return this.size; }

  /**
   * Completes `op` now if it can; otherwise watches `keys` until it completes or `timeoutMs`
   * passes. Returns whether it completed immediately. Throws PurgatoryFullError at the limit.
   */
  tryCompleteElseWatch(op: DelayedOperation, keys: readonly K[], timeoutMs: number): boolean {
    if (op.tryComplete()) return true;
    if (this.size >= this.operationsMax) throw new PurgatoryFullError(`${this.name} purgatory holds ${this.size} operations`);
    const entry: Entry<K> = { op, keys, completed: false, timer: null };
    for (const k of keys) {
      let set = this.watchers.get(k);
      if (!set) this.watchers.set(k, (set = new Set()));
      set.add(entry);
    }
    this.size++;
    entry.timer = this.scheduler.schedule(Math.max(0, timeoutMs), () => {
      if (entry.completed) return;
      this.finish(entry);
      entry.op.onExpiration();
    });
    return false;
  }

  /** Re-tries the operations watching `key`; returns how many completed. */
  checkAndComplete(key: K): number {
    const set = this.watchers.get(key);
    if (!set || set.size === 0) return 0;
    let completed = 0;
    for (const entry of [...set]) {
      if (entry.completed) continue;
      if (entry.op.tryComplete()) {
        this.finish(entry);
        completed++;
      }
    }
    return completed;
  }

  /** Expires everything now (shutdown). */
  expireAll(): void {
    const all = new Set<Entry<K>>();
    for (const set of this.watchers.values()) for (const e of set) all.add(e);
    for (const e of all) {
      if (e.completed) continue;
      this.finish(e);
      e.op.onExpiration();
    }
  }

  /**
   * Drops everything without completing it (shutdown, once no connection is left to receive an
   * answer), so that no timer outlives the broker: a parked Fetch would otherwise keep the process
   * alive for its max_wait_ms and then read from logs that are closed. Returns how many were dropped.
   */
  dropAll(): number {
    const all = new Set<Entry<K>>();
    for (const set of this.watchers.values()) for (const e of set) all.add(e);
    for (const e of all) this.finish(e);
    return all.size;
  }

  /** Forgets a key no operation watches any more (a partition that left this broker). */
  forgetKey(key: K): void {
    if (this.watchers.get(key)?.size === 0) this.watchers.delete(key);
  }

  private finish(entry: Entry<K>): void {
    assert(!entry.completed, 'delayed operation finished twice');
    entry.completed = true;
    entry.timer?.cancel();
    this.size--;
    for (const k of entry.keys) {
      const set = this.watchers.get(k);
      if (!set) continue;
      set.delete(entry);
    }
  }
}
