import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AcknowledgeType, RecordState, SharePartition, type BatchSpan, type SharePartitionConfig } from '../../src/coordinator/share/share-partition.js';
import { ErrorCode } from '../../src/protocol/index.js';

const config: SharePartitionConfig = { recordLockDurationMs: 1000, deliveryCountLimit: 3, maxInFlightRecords: 50 };
/** A log of `n` offsets in batches of `size` records, from `from`. */
function log(from: number, n: number, size = 4): BatchSpan[] {
  const out: BatchSpan[] = [];
  for (let o = from; o < from + n; o += size) out.push({ baseOffset: o, lastOffset: Math.min(o + size, from + n) - 1 });
  return out;
}
const fromOffset = (batches: BatchSpan[], offset: number) => batches.filter((b) => b.lastOffset >= offset);

test('two members acquire different records; accepted ones move the start offset; released ones go to the next fetch', () => {
  const sp = new SharePartition(config, { startOffset: 0, stateBatches: [] });
  const all = log(0, 10, 2);
  const a = sp.acquire(0, 'a', fromOffset(all, sp.nextFetchOffset()), 4);
  assert.deepEqual(a, [{ firstOffset: 0, lastOffset: 3, deliveryCount: 1 }]);
  const b = sp.acquire(0, 'b', fromOffset(all, sp.nextFetchOffset()), 4);
  assert.deepEqual(b, [{ firstOffset: 4, lastOffset: 7, deliveryCount: 1 }]);
  assert.equal(sp.acknowledge('b', [{ firstOffset: 0, lastOffset: 0, acknowledgeTypes: [AcknowledgeType.ACCEPT] }]), ErrorCode.INVALID_RECORD_STATE, 'b does not hold 0');
  assert.equal(sp.acknowledge('a', [{ firstOffset: 0, lastOffset: 3, acknowledgeTypes: [1, 1, 2, 3] }]), ErrorCode.NONE);
  assert.equal(sp.startOffset, 2, 'offsets 0 and 1 are accepted; 2 was released');
  assert.equal(sp.stateOf(3)!.state, RecordState.ARCHIVED);
  assert.equal(sp.nextFetchOffset(), 2);
  assert.deepEqual(sp.acquire(5, 'b', fromOffset(all, 2), 1), [{ firstOffset: 2, lastOffset: 2, deliveryCount: 2 }]);
  sp.checkInvariants(5);
});

test('a lock that runs out makes the record available again; at the delivery limit it is archived', () => {
  const sp = new SharePartition(config, { startOffset: 0, stateBatches: [] });
  const all = log(0, 1, 1);
  for (let delivery = 1; delivery <= config.deliveryCountLimit; delivery++) {
    const now = delivery * 10_000;
    assert.deepEqual(sp.acquire(now, 'a', all, 10), [{ firstOffset: 0, lastOffset: 0, deliveryCount: delivery }]);
    assert.equal(sp.nextLockDeadlineMs(), now + config.recordLockDurationMs);
    assert.equal(sp.expireLocks(now + config.recordLockDurationMs - 1), 0);
    assert.equal(sp.expireLocks(now + config.recordLockDurationMs), 1);
  }
  assert.equal(sp.startOffset, 1, 'archived after its third delivery');
  assert.deepEqual(sp.acquire(100_000, 'a', all, 10), []);
});

test('the in-flight limit stops new acquisitions, not the redelivery of available records', () => {
  const sp = new SharePartition({ ...config, maxInFlightRecords: 4 }, { startOffset: 0, stateBatches: [] });
  const all = log(0, 10, 1);
  assert.equal(sp.acquire(0, 'a', all, 100).length, 1);
  assert.equal(sp.endOffset, 4);
  assert.equal(sp.canAcquire(), false);
  sp.releaseMember('a');
  assert.equal(sp.canAcquire(), true);
  assert.deepEqual(sp.acquire(0, 'b', fromOffset(all, sp.nextFetchOffset()), 100), [{ firstOffset: 0, lastOffset: 3, deliveryCount: 2 }]);
});

test('gaps between batches and aborted records are archived, never delivered', () => {
  const sp = new SharePartition(config, { startOffset: 0, stateBatches: [] });
  const acquired = sp.acquire(0, 'a', [{ baseOffset: 0, lastOffset: 1 }, { baseOffset: 5, lastOffset: 9 }], 100, [{ baseOffset: 6, lastOffset: 7 }]);
  assert.deepEqual(acquired, [{ firstOffset: 0, lastOffset: 1, deliveryCount: 1 }, { firstOffset: 5, lastOffset: 5, deliveryCount: 1 }, { firstOffset: 8, lastOffset: 9, deliveryCount: 1 }]);
  for (const o of [2, 3, 4, 6, 7]) assert.equal(sp.stateOf(o)!.state, RecordState.ARCHIVED);
  assert.equal(sp.acknowledge('a', [{ firstOffset: 0, lastOffset: 1, acknowledgeTypes: [1] }, { firstOffset: 5, lastOffset: 5, acknowledgeTypes: [1] }]), 0);
  assert.equal(sp.startOffset, 8);
});

test('the persisted state rebuilds the partition: acquired records come back available with their delivery count', () => {
  const sp = new SharePartition(config, { startOffset: 0, stateBatches: [] });
  const all = log(0, 6, 3);
  sp.acquire(0, 'a', all, 100);
  sp.acknowledge('a', [{ firstOffset: 0, lastOffset: 1, acknowledgeTypes: [1] }, { firstOffset: 3, lastOffset: 3, acknowledgeTypes: [3] }]);
  const state = sp.persistentState();
  assert.equal(state.startOffset, 2);
  const next = new SharePartition(config, state);
  assert.equal(next.startOffset, 2);
  assert.equal(next.endOffset, 6);
  assert.deepEqual(next.acquire(0, 'b', fromOffset(all, next.nextFetchOffset()), 100),
    [{ firstOffset: 2, lastOffset: 2, deliveryCount: 2 }, { firstOffset: 4, lastOffset: 5, deliveryCount: 2 }]);
});

test('a record in flight on its last allowed delivery at a leader change is archived, not delivered again (fast-check seed -640450996)', () => {
  let sp = new SharePartition(config, { startOffset: 0, stateBatches: [] });
  const one = log(0, 1, 1);
  for (let d = 1; d <= config.deliveryCountLimit; d++) {
    assert.equal(sp.acquire(0, `m${d}`, one, 1)[0]!.deliveryCount, d);
    sp = new SharePartition(config, sp.persistentState());
  }
  assert.deepEqual(sp.acquire(0, 'm', one, 1), []);
  assert.equal(sp.startOffset, 1);
});

test('malformed acknowledgements are INVALID_REQUEST and change nothing', () => {
  const sp = new SharePartition(config, { startOffset: 0, stateBatches: [] });
  sp.acquire(0, 'a', log(0, 4), 100);
  assert.equal(sp.acknowledge('a', [{ firstOffset: 2, lastOffset: 1, acknowledgeTypes: [1] }]), ErrorCode.INVALID_REQUEST);
  assert.equal(sp.acknowledge('a', [{ firstOffset: 0, lastOffset: 3, acknowledgeTypes: [1, 1] }]), ErrorCode.INVALID_REQUEST);
  assert.equal(sp.acknowledge('a', [{ firstOffset: 0, lastOffset: 0, acknowledgeTypes: [9] }]), ErrorCode.INVALID_REQUEST);
  assert.equal(sp.acquiredRecords(), 4);
});

/** One step of a random schedule against one share-partition. */
type Step =
  | { kind: 'fetch'; member: number; maxRecords: number }
  | { kind: 'ack'; member: number; type: number; take: number }
  | { kind: 'leave'; member: number }
  | { kind: 'time'; ms: number }
  | { kind: 'reload' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('fetch' as const), member: fc.nat(2), maxRecords: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('ack' as const), member: fc.nat(2), type: fc.integer({ min: 0, max: 3 }), take: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ kind: fc.constant('leave' as const), member: fc.nat(2) }),
  fc.record({ kind: fc.constant('time' as const), ms: fc.integer({ min: 0, max: 1500 }) }),
  fc.constant({ kind: 'reload' as const }),
);

test('property: no record is held by two members at once while its lock holds, accepted records are never redelivered, the delivery limit archives', () => {
  fc.assert(fc.property(fc.array(step, { maxLength: 80 }), fc.integer({ min: 1, max: 5 }), (steps, batchSize) => {
    const all = log(0, 40, batchSize);
    let sp = new SharePartition(config, { startOffset: 0, stateBatches: [] });
    let now = 0;
    const holder = new Map<number, { member: string; until: number }>();
    const accepted = new Set<number>();
    const deliveries = new Map<number, number>();
    const held = (m: string) => [...holder].filter(([, h]) => h.member === m && h.until > now).map(([o]) => o).sort((a, b) => a - b);
    for (const s of steps) {
      if (s.kind === 'time') {
        now += s.ms;
        sp.expireLocks(now);
        for (const [o, h] of holder) if (h.until <= now) holder.delete(o);
      } else if (s.kind === 'fetch') {
        const member = `m${s.member}`;
        for (const r of sp.acquire(now, member, fromOffset(all, sp.nextFetchOffset()), s.maxRecords)) {
          for (let o = r.firstOffset; o <= r.lastOffset; o++) {
            const h = holder.get(o);
            assert.ok(!h || h.until <= now, `offset ${o} acquired by ${member} while ${h?.member} holds it`);
            assert.ok(!accepted.has(o), `accepted offset ${o} delivered again`);
            const n = (deliveries.get(o) ?? 0) + 1;
            deliveries.set(o, n);
            assert.equal(r.deliveryCount, n, `offset ${o}: delivery count`);
            assert.ok(n <= config.deliveryCountLimit, `offset ${o} delivered past the limit`);
            holder.set(o, { member, until: now + config.recordLockDurationMs });
          }
        }
      } else if (s.kind === 'ack') {
        const member = `m${s.member}`;
        const mine = held(member).slice(0, s.take);
        if (mine.length === 0) continue;
        const batches = mine.map((o) => ({ firstOffset: o, lastOffset: o, acknowledgeTypes: [s.type] }));
        assert.equal(sp.acknowledge(member, batches), ErrorCode.NONE);
        for (const o of mine) {
          holder.delete(o);
          if (s.type === AcknowledgeType.ACCEPT) accepted.add(o);
        }
      } else if (s.kind === 'leave') {
        const member = `m${s.member}`;
        sp.releaseMember(member);
        for (const o of held(member)) holder.delete(o);
      } else {
        // A new leader: what was acquired is available again, with its deliveries counted.
        sp = new SharePartition(config, sp.persistentState());
        holder.clear();
      }
      sp.checkInvariants(now);
      for (const o of accepted) assert.ok(o < sp.startOffset || sp.stateOf(o)?.state === RecordState.ACKNOWLEDGED);
      for (const [o, n] of deliveries) {
        const st = sp.stateOf(o);
        if (n >= config.deliveryCountLimit && st !== undefined && !holder.has(o)) assert.notEqual(st.state, RecordState.AVAILABLE, `offset ${o} at the limit is available`);
      }
    }
  }), { numRuns: 300 });
});

test('dead letters: a reject, a release and a lock expiry at the delivery limit, and a record a new leader finds at the limit; not gaps, accepts or aborted records', () => {
  const sp = new SharePartition({ ...config, deliveryCountLimit: 2 }, { startOffset: 0, stateBatches: [] });
  const all = log(0, 6, 6);
  assert.equal(sp.acquire(0, 'a', all, 10, [{ baseOffset: 5, lastOffset: 5 }]).length, 1);
  assert.equal(sp.acknowledge('a', [{ firstOffset: 0, lastOffset: 4, acknowledgeTypes: [1, 3, 2, 2, 2] }]), ErrorCode.NONE);
  assert.deepEqual(sp.takeDeadLetters(), [{ offset: 1, reason: 'rejected', deliveryCount: 1 }]);
  sp.acquire(10, 'a', fromOffset(all, sp.nextFetchOffset()), 10);
  assert.equal(sp.acknowledge('a', [{ firstOffset: 2, lastOffset: 2, acknowledgeTypes: [2] }]), ErrorCode.NONE);
  assert.equal(sp.expireLocks(10 + config.recordLockDurationMs), 2);
  assert.deepEqual(sp.takeDeadLetters(), [
    { offset: 2, reason: 'delivery_limit', deliveryCount: 2 }, { offset: 3, reason: 'delivery_limit', deliveryCount: 2 }, { offset: 4, reason: 'delivery_limit', deliveryCount: 2 },
  ]);
  assert.deepEqual(sp.takeDeadLetters(), [], 'each is taken once');
  const loaded = new SharePartition({ ...config, deliveryCountLimit: 2 }, { startOffset: 7, stateBatches: [{ firstOffset: 7, lastOffset: 7, deliveryState: RecordState.AVAILABLE, deliveryCount: 2 }] });
  assert.deepEqual(loaded.takeDeadLetters(), [{ offset: 7, reason: 'delivery_limit', deliveryCount: 2 }]);
});

test('share.partition.max.record.locks bounds what is held per offset, gaps the log skipped included', () => {
  const sp = new SharePartition(config, { startOffset: 0, stateBatches: [] });
  // Offset 0, then a compaction gap of a million offsets, then four records.
  const batches = [{ baseOffset: 0, lastOffset: 0 }, { baseOffset: 1_000_000, lastOffset: 1_000_003 }];
  assert.deepEqual(sp.acquire(0, 'a', batches, 100), [{ firstOffset: 0, lastOffset: 0, deliveryCount: 1 }], 'the records past the gap wait: the gap would not fit under the limit');
  assert.equal(sp.inFlightRecords, 1);
  assert.equal(sp.acknowledge('a', [{ firstOffset: 0, lastOffset: 0, acknowledgeTypes: [AcknowledgeType.ACCEPT] }]), ErrorCode.NONE);
  assert.deepEqual(sp.acquire(0, 'a', fromOffset(batches, sp.nextFetchOffset()), 100), [{ firstOffset: 1_000_000, lastOffset: 1_000_003, deliveryCount: 1 }], 'with nothing in flight the gap is passed over');
  assert.equal(sp.startOffset, 1_000_000);
  assert.equal(sp.inFlightRecords, 4);
  sp.checkInvariants(0);
});
