import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ShareCoordinatorShard, mergeStateBatches } from '../../src/coordinator/share/state-shard.js';
import { decodeShareStateRecord, encodeShareStateRecord, type ShareStateRecord } from '../../src/coordinator/share/state-records.js';
import { SharePartition, type StateBatch } from '../../src/coordinator/share/share-partition.js';
import { ErrorCode } from '../../src/protocol/index.js';

const key = { groupId: 'g', topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partition: 0 };

/** Runs an operation the way the runtime does: its records are replayed once "committed", then it answers. */
function run(shard: ShareCoordinatorShard, log: ShareStateRecord[], effects: { records: ShareStateRecord[]; replies: { send(): void }[] }): void {
  for (const r of effects.records) {
    // Through the topic's bytes, as a load would read them.
    const bytes = encodeShareStateRecord(r);
    const decoded = decodeShareStateRecord(bytes.key, bytes.value)!;
    log.push(decoded);
    shard.replay(decoded);
  }
  for (const reply of effects.replies) reply.send();
}

test('writes become updates on a snapshot, a snapshot again every N updates; a load replays to the same state', () => {
  const live = new ShareCoordinatorShard({ updatesPerSnapshot: 2 });
  const log: ShareStateRecord[] = [];
  const codes: number[] = [];
  run(live, log, live.initialize(1, key, 0, 10, (c) => codes.push(c)));
  for (let i = 0; i < 5; i++) {
    run(live, log, live.write(2 + i, { ...key, stateEpoch: 0, leaderEpoch: 3, startOffset: 10 + i, stateBatches: [{ firstOffset: 10 + i, lastOffset: 20, deliveryState: 0, deliveryCount: i }] }, (c) => codes.push(c)));
  }
  assert.deepEqual(codes, [0, 0, 0, 0, 0, 0]);
  assert.deepEqual(log.map((r) => r.type), ['snapshot', 'update', 'update', 'snapshot', 'update', 'update']);
  const loaded = new ShareCoordinatorShard({ updatesPerSnapshot: 2 });
  for (const r of log) loaded.replay(r);
  assert.deepEqual(loaded.read(key), live.read(key));
  assert.deepEqual(live.read(key).stateBatches, [{ firstOffset: 14, lastOffset: 20, deliveryState: 0, deliveryCount: 4 }]);
});

test('a write from an older leader epoch or state epoch is fenced; delete leaves nothing to read', () => {
  const shard = new ShareCoordinatorShard({ updatesPerSnapshot: 10 });
  const log: ShareStateRecord[] = [];
  const codes: number[] = [];
  run(shard, log, shard.initialize(0, key, 1, 0, (c) => codes.push(c)));
  run(shard, log, shard.write(0, { ...key, stateEpoch: 1, leaderEpoch: 5, startOffset: 0, stateBatches: [] }, (c) => codes.push(c)));
  run(shard, log, shard.write(0, { ...key, stateEpoch: 1, leaderEpoch: 4, startOffset: 3, stateBatches: [] }, (c) => codes.push(c)));
  run(shard, log, shard.write(0, { ...key, stateEpoch: 0, leaderEpoch: 6, startOffset: 3, stateBatches: [] }, (c) => codes.push(c)));
  assert.deepEqual(codes, [0, 0, ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.FENCED_STATE_EPOCH]);
  assert.equal(shard.read(key).startOffset, 0);
  run(shard, log, shard.delete(key, (c) => codes.push(c)));
  assert.equal(shard.read(key).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const loaded = new ShareCoordinatorShard({ updatesPerSnapshot: 10 });
  for (const r of log) loaded.replay(r);
  assert.equal(loaded.states.size, 0);
});

test("a new leader reading the state records its epoch first: the deposed leader's late write is fenced, and a load agrees", () => {
  const shard = new ShareCoordinatorShard({ updatesPerSnapshot: 10 });
  const log: ShareStateRecord[] = [];
  const codes: number[] = [];
  const reads: { errorCode: number; startOffset?: number; leaderEpoch?: number }[] = [];
  run(shard, log, shard.initialize(0, key, 0, 0, (c) => codes.push(c)));
  run(shard, log, shard.write(0, { ...key, stateEpoch: 0, leaderEpoch: 3, startOffset: 4, stateBatches: [{ firstOffset: 4, lastOffset: 9, deliveryState: 0, deliveryCount: 1 }] }, (c) => codes.push(c)));
  run(shard, log, shard.readForLeader(key, 4, (r) => reads.push(r)));
  assert.deepEqual(reads.map((r) => [r.errorCode, r.startOffset, r.leaderEpoch]), [[0, 4, 4]]);
  assert.deepEqual(shard.read(key).stateBatches, [{ firstOffset: 4, lastOffset: 9, deliveryState: 0, deliveryCount: 1 }], 'the epoch record changes no batch');
  run(shard, log, shard.write(0, { ...key, stateEpoch: 0, leaderEpoch: 3, startOffset: 9, stateBatches: [] }, (c) => codes.push(c)));
  run(shard, log, shard.readForLeader(key, 2, (r) => reads.push(r)));
  assert.deepEqual(codes, [0, 0, ErrorCode.FENCED_LEADER_EPOCH]);
  assert.equal(reads[1]!.errorCode, ErrorCode.FENCED_LEADER_EPOCH);
  assert.deepEqual(log.map((r) => r.type), ['snapshot', 'update', 'update']);
  const loaded = new ShareCoordinatorShard({ updatesPerSnapshot: 10 });
  for (const r of log) loaded.replay(r);
  assert.deepEqual(loaded.read(key), shard.read(key));
});

test('property: merging state batches equals overlaying them offset by offset', () => {
  const batch = fc.record({ firstOffset: fc.nat(30), len: fc.nat(6), deliveryState: fc.constantFrom(0, 2, 4), deliveryCount: fc.nat(5) })
    .map(({ len, ...b }) => ({ ...b, lastOffset: b.firstOffset + len }));
  fc.assert(fc.property(fc.array(batch, { maxLength: 6 }), fc.array(batch, { maxLength: 6 }), fc.nat(20), (old, next, start) => {
    const flat = (bs: StateBatch[]) => { const m = new Map<number, string>(); for (const b of bs) for (let o = b.firstOffset; o <= b.lastOffset; o++) m.set(o, `${b.deliveryState}/${b.deliveryCount}`); return m; };
    // Non-overlapping inputs, as a leader writes them.
    const disjoint = (bs: StateBatch[]) => bs.filter((b, i) => bs.every((c, j) => j >= i || c.lastOffset < b.firstOffset || c.firstOffset > b.lastOffset));
    const o = disjoint(old);
    const n = disjoint(next);
    const expected = flat(o);
    for (const [k, v] of flat(n)) expected.set(k, v);
    for (const k of [...expected.keys()]) if (k < start) expected.delete(k);
    assert.deepEqual(new Map([...flat(mergeStateBatches(o, n, start))].sort(([a], [b]) => a - b)), new Map([...expected].sort(([a], [b]) => a - b)));
  }), { numRuns: 300 });
});

test('property: a share-partition written through the coordinator after every change comes back the same after a load', () => {
  fc.assert(fc.property(fc.array(fc.tuple(fc.nat(2), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 5 })), { maxLength: 40 }), fc.integer({ min: 1, max: 5 }), (steps, perSnapshot) => {
    const config = { recordLockDurationMs: 1000, deliveryCountLimit: 4, maxInFlightRecords: 30 };
    const shard = new ShareCoordinatorShard({ updatesPerSnapshot: perSnapshot });
    const log: ShareStateRecord[] = [];
    run(shard, log, shard.initialize(0, key, 0, 0, () => {}));
    const sp = new SharePartition(config, { startOffset: 0, stateBatches: [] });
    const batches = Array.from({ length: 20 }, (_, i) => ({ baseOffset: i * 2, lastOffset: i * 2 + 1 }));
    for (const [member, type, n] of steps) {
      const got = sp.acquire(0, `m${member}`, batches.filter((b) => b.lastOffset >= sp.nextFetchOffset()), n);
      if (got.length > 0 && type !== 0) sp.acknowledge(`m${member}`, got.map((r) => ({ firstOffset: r.firstOffset, lastOffset: r.lastOffset, acknowledgeTypes: [type] })));
      const state = sp.persistentState();
      run(shard, log, shard.write(0, { ...key, stateEpoch: 0, leaderEpoch: 0, ...state }, () => {}));
    }
    const loaded = new ShareCoordinatorShard({ updatesPerSnapshot: perSnapshot });
    for (const r of log) loaded.replay(r);
    const read = loaded.read(key);
    const again = new SharePartition(config, { startOffset: read.startOffset!, stateBatches: read.stateBatches! });
    const expected = new SharePartition(config, sp.persistentState());
    assert.deepEqual(again.persistentState(), expected.persistentState());
  }), { numRuns: 200 });
});
