import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildControlBatch, buildRecordBatchSync, Compression, buildRecordBatch } from '../../src/records/index.js';
import { cleanLog } from '../../src/storage/index.js';
import { batch, dump, openLog, setup } from './helpers.js';

const compact = { cleanupPolicy: ['compact'] as const, segmentBytes: 400, deleteRetentionMs: 1000, minCleanableDirtyRatio: 0.01 };

test('compaction keeps the latest value per key at its original offset, in order', async () => {
  const { log, clock } = setup(compact);
  const latest = new Map<string, [number, string]>();
  for (let i = 0; i < 60; i++) {
    const key = `key${i % 7}`;
    const r = await log.appendAsLeader(batch(1, { key: () => key, value: () => `value${i}`, timestamp: 10_000 + i }), 0);
    latest.set(key, [r.firstOffset, `value${i}`]);
  }
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  const r = await cleanLog(log, clock.nowMs());
  assert.ok(r.cleaned, r.reason);
  const got = dump(log);
  const expected = [...latest].map(([k, [o, v]]) => [o, k, v]).sort((a, b) => (a[0] as number) - (b[0] as number));
  assert.deepEqual(got, expected);
  assert.ok(r.segmentsAfter < r.segmentsBefore, 'small cleaned segments are merged');
  assert.equal(log.logEndOffset, 60, 'the log end offset does not move');
  // Fetching from an offset that was compacted away starts at the next surviving record.
  const firstKept = expected[0]![0] as number;
  assert.ok(firstKept > 0);
  assert.equal(dump(log)[0]![0], firstKept);
});

test('tombstones survive until delete.retention.ms, then go', async () => {
  const { log, clock } = setup(compact);
  await log.appendAsLeader(batch(1, { key: () => 'a', value: () => '1', timestamp: 10_000 }), 0);
  await log.appendAsLeader(batch(1, { key: () => 'b', value: () => '2', timestamp: 10_000 }), 0);
  await log.appendAsLeader(batch(1, { key: () => 'a', value: () => null, timestamp: 10_000 }), 0);
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  await cleanLog(log, clock.nowMs(), { force: true });
  assert.deepEqual(dump(log), [[1, 'b', '2'], [2, 'a', null]], 'the tombstone stays while consumers may still need it');
  clock.advance(5000);
  await log.appendAsLeader(batch(1, { key: () => 'c', value: () => '3', timestamp: 15_000 }), 0);
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  await cleanLog(log, clock.nowMs(), { force: true });
  assert.deepEqual(dump(log), [[1, 'b', '2'], [3, 'c', '3']]);
});

test('compaction leaves compressed batches readable with their headers, and refuses keyless records', async () => {
  const { log, clock } = setup(compact);
  for (let i = 0; i < 10; i++) {
    const b = await buildRecordBatch({ compression: Compression.Lz4, records: [0, 1, 2].map((j) => ({ key: Buffer.from(`k${j}`), value: Buffer.from(`v${i}`), headers: [{ key: 'h', value: Buffer.from(`${i}`) }], timestamp: 10_000 })) });
    await log.appendAsLeader(b, 0);
  }
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  const r = await cleanLog(log, clock.nowMs());
  assert.ok(r.cleaned);
  assert.equal(r.recordsKept, 3);
  const { iterateBatches, readRecords } = await import('../../src/records/index.js');
  const records = [];
  for (const v of iterateBatches(log.read(log.logStartOffset, 1 << 20, 30))) records.push(...(await readRecords(v)));
  assert.deepEqual(records.map((x) => [x.offset, x.key?.toString(), x.value?.toString(), x.headers[0]?.value?.toString()]), [[27, 'k0', 'v9', '9'], [28, 'k1', 'v9', '9'], [29, 'k2', 'v9', '9']]);
  await assert.rejects(log.appendAsLeader(batch(1, { key: () => null }), 0), /without key/);
});

test('min.compaction.lag.ms and the dirty ratio hold the cleaner back', async () => {
  const { log, clock } = setup({ ...compact, minCompactionLagMs: 60_000, minCleanableDirtyRatio: 0.5 });
  for (let i = 0; i < 20; i++) await log.appendAsLeader(batch(1, { key: () => 'same', timestamp: clock.nowMs() }), 0);
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  assert.equal((await cleanLog(log, clock.nowMs())).cleaned, false, 'too young');
  clock.advance(61_000);
  assert.ok((await cleanLog(log, clock.nowMs())).cleaned);
  assert.equal(dump(log).length, 1);
  assert.equal((await cleanLog(log, clock.nowMs())).cleaned, false, 'nothing dirty is left');
});

test('aborted transactional data is removed, committed data stays, and markers go only with their data', async () => {
  const { log, clock } = setup(compact);
  const txn = (producerId: number, key: string, value: string, seq: number) => buildRecordBatchSync({
    records: [{ key: Buffer.from(key), value: Buffer.from(value), timestamp: 10_000 }], producerId, producerEpoch: 0, baseSequence: seq, isTransactional: true,
  });
  const marker = (producerId: number, type: 'COMMIT' | 'ABORT') => buildControlBatch({ type, producerId, producerEpoch: 0, coordinatorEpoch: 1, timestamp: 10_000 });
  await log.appendAsLeader(txn(1, 'x', 'aborted', 0), 0);
  assert.equal(log.producerState.firstUnstableOffset(), 0);
  await log.appendAsLeader(marker(1, 'ABORT'), 0, 'coordinator');
  assert.deepEqual(log.abortedTransactions(0, 10).map((t) => [t.producerId, t.firstOffset, t.lastOffset]), [[1, 0, 1]]);
  await log.appendAsLeader(txn(2, 'y', 'committed', 0), 0);
  await log.appendAsLeader(marker(2, 'COMMIT'), 0, 'coordinator');
  assert.equal(log.producerState.firstUnstableOffset(), null);
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  clock.advance(5000);
  await cleanLog(log, clock.nowMs(), { force: true });
  const offsets = dump(log).map((r) => [r[0], r[2]]);
  assert.deepEqual(offsets, [[2, 'committed']]);
  const { iterateBatches } = await import('../../src/records/index.js');
  const kinds = [...iterateBatches(log.read(log.logStartOffset, 1 << 20, 10))].map((v) => [v.baseOffset, v.isControl, v.recordCount]);
  // The aborted batch stays as an empty header because it is its producer's last batch (its
  // sequence state must survive); its marker went with its data; the commit marker stays.
  assert.deepEqual(kinds, [[0, false, 0], [2, false, 1], [3, true, 1]]);
});

test('a cleaner swap interrupted by a crash is completed on open', async () => {
  const { log, fs, clock } = setup(compact);
  for (let i = 0; i < 30; i++) await log.appendAsLeader(batch(1, { key: () => `k${i % 3}`, value: () => `${i}`, timestamp: 10_000 }), 0);
  log.roll();
  log.updateHighWatermark(log.logEndOffset);
  await cleanLog(log, clock.nowMs());
  const expected = dump(log);
  log.close();
  const again = openLog(fs, clock, compact, { recoveryPoint: 30, clean: false });
  assert.deepEqual(dump(again), expected);
  assert.ok(!fs.list('/data/orders-0').some((n) => n.endsWith('.swap') || n.endsWith('.cleaned')));
});
