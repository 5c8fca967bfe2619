import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Purgatory, PurgatoryFullError, type Scheduler } from '../../src/replication/purgatory.js';

/** A scheduler driven by hand: `advance(ms)` fires what is due, in order. */
class ManualScheduler implements Scheduler {
  now = 0;
  private timers: { at: number; fn: () => void; cancelled: boolean }[] = [];
  schedule(delayMs: number, fn: () => void) {
    const t = { at: this.now + delayMs, fn, cancelled: false };
    this.timers.push(t);
    return { cancel: () => { t.cancelled = true; } };
  }
  advance(ms: number): void {
    this.now += ms;
    const due = this.timers.filter((t) => !t.cancelled && t.at <= this.now).sort((a, b) => a.at - b.at);
    this.timers = this.timers.filter((t) => !due.includes(t));
    for (const t of due) t.fn();
  }
}

function delayedFetch(available: () => number, minBytes: number, log: string[], name: string) {
  return {
    tryComplete: () => {
      if (available() < minBytes) return false;
      log.push(`${name}:complete`);
      return true;
    },
    onExpiration: () => log.push(`${name}:expired`),
  };
}

test('a fetch waiting for min_bytes completes on the append that satisfies it, not before', () => {
  const s = new ManualScheduler();
  const p = new Purgatory('fetch', s, 100);
  let bytes = 0;
  const log: string[] = [];
  assert.equal(p.tryCompleteElseWatch(delayedFetch(() => bytes, 10, log, 'f1'), ['t-0'], 500), false);
  bytes = 5;
  assert.equal(p.checkAndComplete('t-0'), 0);
  bytes = 12;
  assert.equal(p.checkAndComplete('t-1'), 0, 'another partition does not wake it');
  assert.equal(p.checkAndComplete('t-0'), 1);
  s.advance(1000);
  assert.deepEqual(log, ['f1:complete'], 'completed once, never expired');
  assert.equal(p.pending, 0);
});

test('an operation expires after its timeout and is never completed afterwards', () => {
  const s = new ManualScheduler();
  const p = new Purgatory('fetch', s, 100);
  const log: string[] = [];
  let bytes = 0;
  p.tryCompleteElseWatch(delayedFetch(() => bytes, 1, log, 'f'), ['a', 'b'], 100);
  s.advance(99);
  assert.deepEqual(log, []);
  s.advance(1);
  assert.deepEqual(log, ['f:expired']);
  bytes = 10;
  assert.equal(p.checkAndComplete('a'), 0);
  assert.deepEqual(log, ['f:expired']);
});

test('dropAll at shutdown cancels every timer and neither completes nor expires what was waiting', () => {
  const s = new ManualScheduler();
  const p = new Purgatory('fetch', s, 100);
  const log: string[] = [];
  let bytes = 0;
  p.tryCompleteElseWatch(delayedFetch(() => bytes, 1, log, 'f1'), ['a', 'b'], 10_000);
  p.tryCompleteElseWatch(delayedFetch(() => bytes, 1, log, 'f2'), ['b'], 500);
  assert.equal(p.dropAll(), 2);
  assert.equal(p.pending, 0);
  bytes = 10;
  assert.equal(p.checkAndComplete('b'), 0);
  s.advance(10_000);
  assert.deepEqual(log, []);
});

test('the purgatory refuses operations beyond its limit', () => {
  const p = new Purgatory('produce', new ManualScheduler(), 2);
  const never = { tryComplete: () => false, onExpiration: () => {} };
  p.tryCompleteElseWatch(never, ['x'], 10);
  p.tryCompleteElseWatch(never, ['x'], 10);
  assert.throws(() => p.tryCompleteElseWatch(never, ['x'], 10), PurgatoryFullError);
});

test('property: every operation finishes exactly once, by completion or expiry', () => {
  fc.assert(fc.property(
    fc.array(fc.record({ key: fc.integer({ min: 0, max: 3 }), need: fc.integer({ min: 0, max: 20 }), timeout: fc.integer({ min: 0, max: 50 }) }), { maxLength: 30 }),
    fc.array(fc.oneof(fc.record({ append: fc.integer({ min: 0, max: 3 }) }), fc.record({ tick: fc.integer({ min: 1, max: 20 }) })), { maxLength: 40 }),
    (ops, events) => {
      const s = new ManualScheduler();
      const p = new Purgatory('prop', s, 1000);
      const bytes = [0, 0, 0, 0];
      const finished = new Map<number, number>();
      ops.forEach((o, i) => {
        const mark = () => finished.set(i, (finished.get(i) ?? 0) + 1);
        const done = p.tryCompleteElseWatch({
          tryComplete: () => { if (bytes[o.key]! >= o.need) { mark(); return true; } return false; },
          onExpiration: mark,
        }, [`k${o.key}`], o.timeout);
        void done;
      });
      for (const e of events) {
        if ('append' in e) { bytes[e.append]! += 5; p.checkAndComplete(`k${e.append}`); } else s.advance(e.tick);
      }
      s.advance(1000);
      assert.equal(p.pending, 0);
      for (let i = 0; i < ops.length; i++) assert.equal(finished.get(i), 1, `op ${i}`);
    },
  ));
});
