import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplicaManager, Partition, realScheduler } from '../../src/replication/index.js';
import { buildRecordBatchSync, iterateBatches } from '../../src/records/index.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { partitionKey, systemClock } from '../../src/util/index.js';
import { storageLog } from './helpers.js';

const batch = (n: number, ts = 1_700_000_000_000) =>
  buildRecordBatchSync({ records: Array.from({ length: n }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), timestamp: ts + i })) });

function setup(minIsr = 1) {
  const rm = new ReplicaManager(1, systemClock, realScheduler, { fetchPurgatoryOperationsMax: 100, producePurgatoryOperationsMax: 100 });
  const log = storageLog();
  rm.addPartition(new Partition('t', 0, log, 0, 1, 1, minIsr));
  return { rm, log };
}

test('produce assigns offsets, moves the high watermark, and reports unknown partitions', async () => {
  const { rm, log } = setup();
  const r1 = await rm.produce(-1, 1000, [{ topic: 't', partition: 0, records: batch(3) }, { topic: 't', partition: 9, records: batch(1) }]);
  assert.equal(r1.get(partitionKey('t', 0))!.errorCode, 0);
  assert.equal(r1.get(partitionKey('t', 0))!.baseOffset, 0n);
  assert.equal(r1.get(partitionKey('t', 9))!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const r2 = await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: batch(2) }]);
  assert.equal(r2.get(partitionKey('t', 0))!.baseOffset, 3n);
  assert.equal(rm.partition('t', 0)!.highWatermark, 5);
  assert.equal(log.log.highWatermark, 5, 'the log has the high watermark too');
});

test('a corrupt batch gets CORRUPT_MESSAGE and nothing is appended', async () => {
  const { rm, log } = setup();
  const bad = batch(2);
  bad[bad.length - 1]! ^= 0xff;
  const r = await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: bad }]);
  assert.equal(r.get(partitionKey('t', 0))!.errorCode, ErrorCode.CORRUPT_MESSAGE);
  assert.equal(log.logEndOffset, 0);
});

test('acks=all below min.insync.replicas is refused with NOT_ENOUGH_REPLICAS; acks=1 still works', async () => {
  const { rm } = setup(2);
  assert.equal((await rm.produce(-1, 1000, [{ topic: 't', partition: 0, records: batch(1) }])).get(partitionKey('t', 0))!.errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
  assert.equal((await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: batch(1) }])).get(partitionKey('t', 0))!.errorCode, 0);
});

test('fetch returns whole batches up to the high watermark; out-of-range offsets are errors', async () => {
  const { rm } = setup();
  await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: batch(3) }]);
  await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: batch(2) }]);
  const [r] = await rm.fetch({ maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, partitions: [{ topic: 't', partition: 0, fetchOffset: 4n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }] });
  assert.equal(r!.errorCode, 0);
  assert.equal(r!.highWatermark, 5n);
  const offsets = [...iterateBatches(r!.records!)].map((b) => b.baseOffset);
  assert.deepEqual(offsets, [3], 'the batch containing offset 4, which starts at 3');
  const [oor] = await rm.fetch({ maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, partitions: [{ topic: 't', partition: 0, fetchOffset: 99n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }] });
  assert.equal(oor!.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  const [fenced] = await rm.fetch({ maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, partitions: [{ topic: 't', partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: 7 }] });
  assert.equal(fenced!.errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
});

test('max_bytes smaller than a batch still returns the first batch (KIP-74)', async () => {
  const { rm } = setup();
  await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: batch(50) }]);
  const [r] = await rm.fetch({ maxWaitMs: 0, minBytes: 1, maxBytes: 10, isolationLevel: 0, partitions: [{ topic: 't', partition: 0, fetchOffset: 0n, partitionMaxBytes: 10, currentLeaderEpoch: -1 }] });
  assert.ok(r!.records!.length > 10);
});

test('a long-polling fetch is woken by an append well before max_wait_ms', async () => {
  const { rm } = setup();
  const started = Date.now();
  const pending = rm.fetch({ maxWaitMs: 10_000, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, partitions: [{ topic: 't', partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }] });
  await new Promise((r) => setTimeout(r, 30));
  await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: batch(1) }]);
  const [r] = await pending;
  const waited = Date.now() - started;
  assert.ok(r!.records && r!.records.length > 0);
  assert.ok(waited < 2000, `woke after ${waited} ms of a 10 s max_wait_ms`);
  const t0 = Date.now();
  const [empty] = await rm.fetch({ maxWaitMs: 100, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, partitions: [{ topic: 't', partition: 0, fetchOffset: 1n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }] });
  assert.equal(empty!.records, null);
  assert.ok(Date.now() - t0 >= 90, 'waited for max_wait_ms');
});

test('ListOffsets: earliest, latest, by timestamp, max timestamp', async () => {
  const { rm } = setup();
  await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: batch(3, 1000) }]);
  await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: batch(3, 5000) }]);
  assert.equal((await rm.listOffsets('t', 0, -2n, -1)).offset, 0n);
  assert.equal((await rm.listOffsets('t', 0, -1n, -1)).offset, 6n);
  assert.equal((await rm.listOffsets('t', 0, 4000n, -1)).offset, 3n);
  assert.equal((await rm.listOffsets('t', 0, 99999n, -1)).offset, -1n);
  const max = await rm.listOffsets('t', 0, -3n, -1);
  assert.equal(max.timestamp, 5002n);
});

test('DeleteRecords moves the log start offset; past the high watermark is OFFSET_OUT_OF_RANGE', async () => {
  const { rm } = setup();
  await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: batch(5) }]);
  assert.deepEqual(await rm.deleteRecords('t', 0, 3n), { errorCode: 0, lowWatermark: 3n });
  assert.equal((await rm.deleteRecords('t', 0, 9n)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  assert.deepEqual(await rm.deleteRecords('t', 0, -1n), { errorCode: 0, lowWatermark: 5n });
  assert.equal((await rm.listOffsets('t', 0, -2n, -1)).offset, 5n);
});

test('OffsetForLeaderEpoch: the current epoch ends at the log end offset; a stale current epoch is fenced', async () => {
  const { rm } = setup();
  await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: batch(4) }]);
  assert.deepEqual(rm.offsetForLeaderEpoch('t', 0, -1, 0), { errorCode: 0, leaderEpoch: 0, endOffset: 4n });
  rm.partition('t', 0)!.leaderEpoch = 2;
  assert.deepEqual(rm.offsetForLeaderEpoch('t', 0, -1, 1), { errorCode: 0, leaderEpoch: 0, endOffset: 4n });
  assert.equal(rm.offsetForLeaderEpoch('t', 0, 1, 1).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
});

test('read_committed: a parked fetch ignores appends to an open transaction and wakes on its marker; ListOffsets latest is the LSO', async () => {
  const { rm } = setup();
  const txnBatch = (n: number, seq: number) => buildRecordBatchSync({
    records: Array.from({ length: n }, (_, i) => ({ value: Buffer.from(`t${i}`) })), producerId: 7, producerEpoch: 0, baseSequence: seq, isTransactional: true,
  });
  assert.equal((await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: txnBatch(2, 0) }])).get(partitionKey('t', 0))!.errorCode, 0);
  const fp = { topic: 't', partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 };
  const started = Date.now();
  let answered = 0;
  const parked = rm.fetch({ maxWaitMs: 2000, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 1, partitions: [fp] }).then((r) => { answered = Date.now(); return r; });
  await new Promise((r) => setTimeout(r, 50));
  await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: txnBatch(3, 2) }]);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(answered, 0, 'an append to the open transaction did not wake the read_committed fetch');
  assert.equal((await rm.listOffsets('t', 0, -1n, -1, 1)).offset, 0n);
  assert.equal((await rm.listOffsets('t', 0, -1n, -1, 0)).offset, 5n);
  assert.equal(await rm.writeTxnMarker('t', 0, { producerId: 7n, producerEpoch: 0, coordinatorEpoch: 0, commit: true }, 1000), 0);
  const [r] = await parked;
  assert.ok(answered - started < 1000, 'the marker woke it');
  assert.deepEqual([r!.highWatermark, r!.lastStableOffset, r!.abortedTransactions], [6n, 6n, []]);
  assert.deepEqual([...iterateBatches(r!.records!)].map((b) => [b.baseOffset, b.isControl]), [[0, false], [2, false], [5, true]]);
});
