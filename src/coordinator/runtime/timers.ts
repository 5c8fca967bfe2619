// Deadlines of a coordinator shard, as data: a timer is a key, a deadline and what to do when it
// passes. Nothing here reads the clock; the runtime (or a test) calls `expire(nowMs)` and asks for
// `nextDeadlineMs()` to know when to come back. Timers with equal deadlines fire in the order they
// were scheduled, so a replay of the same inputs fires them identically.
import { limits } from '../../util/index.js';

export class Timers {
  private readonly entries = new Map<string, { deadlineMs: number; seq: number; fire: (nowMs: number) => void }>();
  private seq = 0;

  /** Schedules (or reschedules) the timer `key`. */
  schedule(key: string, deadlineMs: number, fire: (nowMs: number) => void): void {
    this.entries.set(key, { deadlineMs, seq: this.seq++, fire });
  }

  cancel(key: string): void { this.entries.delete(key); }
  clear(): void { this.entries.clear(); }
  has(key: string): boolean { return this.entries.has(key); }
  deadlineOf(key: string): number | undefined { return this.entries.get(key)?.deadlineMs; }
  get size(): number { return this.entries.size; }

  nextDeadlineMs(): number | null {
    let best: number | null = null;
    for (const e of this.entries.values()) if (best === null || e.deadlineMs < best) best = e.deadlineMs;
    return best;
  }

  /** Fires every timer due at `nowMs`, earliest first; at most `fireMax` of them. Returns how many fired. */
  expire(nowMs: number, fireMax: number = limits.coordinatorTimersPerExpiryMax): number {
    let fired = 0;
    while (fired < fireMax) {
      let dueKey: string | null = null;
      let due: { deadlineMs: number; seq: number; fire: (nowMs: number) => void } | null = null;
      for (const [k, e] of this.entries) {
        if (e.deadlineMs > nowMs) continue;
        if (due === null || e.deadlineMs < due.deadlineMs || (e.deadlineMs === due.deadlineMs && e.seq < due.seq)) { due = e; dueKey = k; }
      }
      if (due === null) return fired;
      this.entries.delete(dueKey!);
      due.fire(nowMs);
      fired++;
    }
    return fired;
  }
}
