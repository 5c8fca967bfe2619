import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FetchSessionCache, type SessionPartition, type PartitionResultState } from '../../src/broker/fetch-sessions.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { ManualClock } from '../../src/util/index.js';

const part = (topic: string, partition: number, fetchOffset = 0n): SessionPartition =>
  ({ topic, partition, fetchOffset, partitionMaxBytes: 1 << 20, logStartOffset: -1n, currentLeaderEpoch: -1, lastFetchedEpoch: -1 });
const result = (topic: string, partition: number, hw: bigint, bytes = 0): PartitionResultState =>
  ({ topic, partition, errorCode: 0, highWatermark: hw, lastStableOffset: hw, logStartOffset: 0n, recordsBytes: bytes });

test('a session opens with a full fetch, then incremental fetches return only partitions with news', () => {
  const cache = new FetchSessionCache(10, new ManualClock());
  const first = cache.begin(0, 0, [part('a', 0), part('a', 1), part('b', 0)], []);
  assert.equal(first.errorCode, 0);
  const id = first.context!.sessionId;
  assert.ok(id > 0);
  assert.equal(first.context!.filter([result('a', 0, 5n, 10), result('a', 1, 0n), result('b', 0, 0n)]).length, 3, 'full response lists every partition');
  // Epoch 1, nothing named: all three partitions are read, only the changed one is returned.
  const inc = cache.begin(id, 1, [], []);
  assert.equal(inc.context!.partitions.length, 3);
  const out = inc.context!.filter([result('a', 0, 5n), result('a', 1, 3n), result('b', 0, 0n)]);
  assert.deepEqual(out.map((r) => `${r.topic}-${r.partition}`), ['a-1'], 'only the moved high watermark');
  // Forgetting a partition removes it from the session.
  const inc2 = cache.begin(id, 2, [part('c', 0)], [{ topic: 'b', partition: 0 }]);
  assert.deepEqual(inc2.context!.partitions.map((p) => `${p.topic}-${p.partition}`).sort(), ['a-0', 'a-1', 'c-0']);
});

test('wrong epochs and unknown sessions get the KIP-227 errors; epoch -1 closes the session', () => {
  const cache = new FetchSessionCache(10, new ManualClock());
  const id = cache.begin(0, 0, [part('a', 0)], []).context!.sessionId;
  assert.equal(cache.begin(id, 5, [], []).errorCode, ErrorCode.INVALID_FETCH_SESSION_EPOCH);
  assert.equal(cache.begin(id + 100, 1, [], []).errorCode, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  const closed = cache.begin(id, -1, [part('a', 0)], []);
  assert.equal(closed.context!.sessionId, 0);
  assert.equal(cache.size, 0);
  assert.equal(cache.begin(id, 1, [], []).errorCode, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
});

test('a full cache evicts only sessions idle past the eviction age, otherwise serves sessionless', () => {
  const clock = new ManualClock(0);
  const cache = new FetchSessionCache(2, clock, 1000);
  const a = cache.begin(0, 0, [part('a', 0)], []).context!.sessionId;
  cache.begin(0, 0, [part('b', 0)], []);
  assert.equal(cache.begin(0, 0, [part('c', 0)], []).context!.sessionId, 0, 'no slot: sessionless');
  clock.advance(2000);
  cache.begin(a, 1, [], []); // a is used again; b is now the idle one
  const c = cache.begin(0, 0, [part('c', 0)], []).context!.sessionId;
  assert.ok(c > 0);
  assert.equal(cache.size, 2);
  assert.equal(cache.begin(a, 2, [], []).errorCode, 0, 'the recently used session survived');
});

test('an incremental fetch moves the partitions that returned records to the back of the session (no starvation)', () => {
  const cache = new FetchSessionCache(10, new ManualClock());
  const id = cache.begin(0, 0, [part('a', 0), part('a', 1), part('a', 2)], []).context!.sessionId;
  const order = (epoch: number) => cache.begin(id, epoch, [], []).context!;
  let ctx = order(1);
  assert.deepEqual(ctx.partitions.map((p) => p.partition), [0, 1, 2]);
  // Only partition 0 had room in max_bytes: it goes last, so 1 is read first next time.
  ctx.filter([result('a', 0, 9n, 900), result('a', 1, 9n), result('a', 2, 9n)]);
  ctx = order(2);
  assert.deepEqual(ctx.partitions.map((p) => p.partition), [1, 2, 0]);
  ctx.filter([result('a', 1, 9n, 900), result('a', 2, 9n), result('a', 0, 9n)]);
  ctx = order(3);
  assert.deepEqual(ctx.partitions.map((p) => p.partition), [2, 0, 1]);
  // A partition with news but no records (a moved high watermark) keeps its place.
  ctx.filter([result('a', 2, 10n), result('a', 0, 10n), result('a', 1, 10n)]);
  assert.deepEqual(order(4).partitions.map((p) => p.partition), [2, 0, 1]);
});
