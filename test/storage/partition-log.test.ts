import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { RecordBatchView } from '../../src/records/index.js';
import { FileCache, PartitionLog, StorageError, logConfig } from '../../src/storage/index.js';
import { batch, batchOffsets, dump, openLog, setup, DIR } from './helpers.js';

test('appends get consecutive offsets, the leader epoch is stamped, and reads return whole batches', async () => {
  const { log } = setup();
  const a = await log.appendAsLeader(batch(3), 5);
  const b = await log.appendAsLeader(batch(2), 5);
  assert.deepEqual([a.firstOffset, a.lastOffset, b.firstOffset, b.lastOffset], [0, 2, 3, 4]);
  assert.equal(log.logEndOffset, 5);
  const bytes = log.read(1, 1 << 20, 5);
  assert.deepEqual(batchOffsets(bytes), [[0, 2], [3, 4]], 'the read starts with the batch holding offset 1');
  assert.equal(new RecordBatchView(bytes).partitionLeaderEpoch, 5);
  assert.ok(new RecordBatchView(bytes).verifyCrc());
  assert.deepEqual(batchOffsets(log.read(0, 1 << 20, 3)), [[0, 2]], 'nothing at or past upTo');
  assert.deepEqual(batchOffsets(log.read(0, 10, 5)), [[0, 2]], 'at least one batch even above maxBytes (KIP-74)');
  assert.equal(log.read(5, 100, 5).length, 0);
  assert.throws(() => log.read(6, 100, 6), (e: unknown) => e instanceof StorageError && e.kind === 'OFFSET_OUT_OF_RANGE');
});

test('bad batches are refused with the error a producer should see, and nothing is written', async () => {
  const { log } = setup();
  const good = batch(2);
  const corrupt = Buffer.from(good); corrupt[good.length - 1] ^= 1;
  await assert.rejects(log.appendAsLeader(corrupt, 0), (e: unknown) => e instanceof StorageError && e.kind === 'CORRUPT_MESSAGE');
  const magic1 = Buffer.from(good); magic1[16] = 1;
  await assert.rejects(log.appendAsLeader(magic1, 0), (e: unknown) => e instanceof StorageError && e.kind === 'UNSUPPORTED_FOR_MESSAGE_FORMAT');
  await assert.rejects(log.appendAsLeader(good.subarray(0, 30), 0), (e: unknown) => e instanceof StorageError && e.kind === 'CORRUPT_MESSAGE');
  assert.equal(log.logEndOffset, 0);
  assert.equal(log.size, 0);
});

test('segments roll at segment.bytes with 20-digit names and a sparse index every index.interval.bytes', async () => {
  const { fs, log } = setup({ segmentBytes: 500, indexIntervalBytes: 50 });
  for (let i = 0; i < 40; i++) await log.appendAsLeader(batch(2), 0);
  assert.ok(log.segments.length > 3, `${log.segments.length} segments`);
  const names = fs.list(DIR);
  assert.ok(names.includes('00000000000000000000.log'));
  assert.ok(names.includes('00000000000000000000.index'));
  assert.ok(names.includes('00000000000000000000.timeindex'));
  const second = log.segments[1]!;
  assert.ok(names.includes(`${String(second.baseOffset).padStart(20, '0')}.log`));
  assert.ok(names.includes(`${String(second.baseOffset).padStart(20, '0')}.snapshot`) || log.producerState.producers.size === 0);
  // A closed segment's index file is trimmed to its entries.
  const first = log.segments[0]!;
  assert.ok(first.offsetIndex.entries > 2);
  assert.equal(fs.fileSize(path.join(DIR, '00000000000000000000.index')), first.offsetIndex.entries * 8);
  // Reads in every segment agree with the offsets appended.
  for (let o = 0; o < 80; o += 7) assert.equal(batchOffsets(log.read(o, 1, 80))[0]![0], o - (o % 2));
});

test('segment.ms rolls by the batches\' timestamps, and a full index rolls too', async () => {
  const { log } = setup({ segmentMs: 1000 });
  await log.appendAsLeader(batch(1, { timestamp: 10_000 }), 0);
  await log.appendAsLeader(batch(1, { timestamp: 10_500 }), 0);
  assert.equal(log.segments.length, 1);
  await log.appendAsLeader(batch(1, { timestamp: 11_100 }), 0);
  assert.equal(log.segments.length, 2);
  const small = setup({ segmentIndexBytes: 16, indexIntervalBytes: 1 });
  for (let i = 0; i < 6; i++) await small.log.appendAsLeader(batch(1), 0);
  assert.ok(small.log.segments.length >= 2, 'a full index rolls the segment');
});

test('offsetForTimestamp finds the first record at or after a time, across segments', async () => {
  const { log } = setup({ segmentBytes: 500, indexIntervalBytes: 50 });
  for (let i = 0; i < 30; i++) await log.appendAsLeader(batch(3, { timestamp: 10_000 + i * 10 }), 0);
  // Batch i holds offsets 3i..3i+2 with timestamps 10000+10i+{0,1,2}.
  assert.deepEqual(await log.offsetForTimestamp(10_000), { offset: 0, timestamp: 10_000, leaderEpoch: 0 });
  assert.deepEqual(await log.offsetForTimestamp(10_101), { offset: 31, timestamp: 10_101, leaderEpoch: 0 });
  assert.deepEqual(await log.offsetForTimestamp(10_105), { offset: 33, timestamp: 10_110, leaderEpoch: 0 });
  assert.equal(await log.offsetForTimestamp(99_999), null);
  assert.deepEqual(await log.maxTimestampOffset(), { offset: 89, timestamp: 10_292, leaderEpoch: 0 });
});

test('LogAppendTime stamps the append time; CreateTime outside the allowed window is refused', async () => {
  const { log, clock } = setup({ messageTimestampType: 'LogAppendTime' });
  clock.advance(5);
  const r = await log.appendAsLeader(batch(2, { timestamp: 1 }), 0);
  assert.equal(r.logAppendTimeMs, 10_005);
  const v = new RecordBatchView(log.read(0, 1000, 2));
  assert.equal(v.maxTimestamp, 10_005);
  assert.ok(v.verifyCrc());
  const strict = setup({ messageTimestampBeforeMaxMs: 1000 });
  await assert.rejects(strict.log.appendAsLeader(batch(1, { timestamp: 1 }), 0), (e: unknown) => e instanceof StorageError && e.kind === 'INVALID_TIMESTAMP');
});

test('the leader-epoch cache answers where an epoch ended, and follows truncation', async () => {
  const { log } = setup();
  await log.appendAsLeader(batch(3), 1);
  await log.appendAsLeader(batch(2), 3);
  await log.appendAsLeader(batch(1), 4);
  assert.deepEqual(log.endOffsetForEpoch(1), { leaderEpoch: 1, endOffset: 3 });
  assert.deepEqual(log.endOffsetForEpoch(2), { leaderEpoch: 1, endOffset: 3 });
  assert.deepEqual(log.endOffsetForEpoch(3), { leaderEpoch: 3, endOffset: 5 });
  assert.deepEqual(log.endOffsetForEpoch(9), { leaderEpoch: 4, endOffset: 6 });
  assert.deepEqual(log.endOffsetForEpoch(0), { leaderEpoch: 0, endOffset: 0 }, 'an epoch older than all ends where the first starts (Kafka)');
  assert.equal(log.endOffsetForEpoch(-1), null);
  log.truncateTo(3);
  assert.equal(log.logEndOffset, 3);
  assert.deepEqual(log.endOffsetForEpoch(9), { leaderEpoch: 1, endOffset: 3 });
});

test('a follower with a divergent tail truncates to the leader\'s epoch end and continues with the leader\'s offsets', async () => {
  const leader = setup();
  const follower = setup();
  await leader.log.appendAsLeader(batch(3), 1);
  follower.log.appendAsFollower(leader.log.read(0, 1 << 20, 3));
  await follower.log.appendAsLeader(batch(2), 2); // written while it wrongly thought it led
  await leader.log.appendAsLeader(batch(4), 3);
  const end = leader.log.endOffsetForEpoch(follower.log.epochCache.latestEpoch === 2 ? 2 : 1)!;
  assert.deepEqual(end, { leaderEpoch: 1, endOffset: 3 });
  follower.log.truncateTo(end.endOffset);
  follower.log.appendAsFollower(leader.log.read(3, 1 << 20, 7));
  assert.deepEqual(dump(follower.log), dump(leader.log));
  assert.deepEqual(follower.log.endOffsetForEpoch(3), { leaderEpoch: 3, endOffset: 7 });
  assert.throws(() => follower.log.appendAsFollower(leader.log.read(0, 1 << 20, 3)), (e: unknown) => e instanceof StorageError && e.kind === 'NOT_CONTIGUOUS');
});

test('truncateFullyAndStartAt empties the log and starts at the new offset', async () => {
  const { log, fs } = setup({ segmentBytes: 300 });
  for (let i = 0; i < 10; i++) await log.appendAsLeader(batch(2), 0);
  log.truncateFullyAndStartAt(1000);
  assert.equal(log.logStartOffset, 1000);
  assert.equal(log.logEndOffset, 1000);
  assert.deepEqual(fs.list(DIR).filter((n) => n.endsWith('.log')), ['00000000000000001000.log']);
  const r = await log.appendAsLeader(batch(1), 0);
  assert.equal(r.firstOffset, 1000);
});

test('retention deletes whole closed segments by time and by size, never the active one, through .deleted files', async () => {
  const { log, fs, clock } = setup({ segmentBytes: 300, retentionMs: 60_000, fileDeleteDelayMs: 1000 });
  for (let i = 0; i < 12; i++) await log.appendAsLeader(batch(2, { timestamp: 10_000 + i }), 0);
  const segments = log.segments.length;
  assert.ok(segments >= 4);
  assert.equal(log.deleteOldSegments(clock.nowMs()), 0, 'nothing is old yet');
  clock.advance(120_000);
  const deleted = log.deleteOldSegments(clock.nowMs());
  assert.equal(deleted, segments, 'every closed segment, and the expired active one after a roll');
  assert.equal(log.segments.length, 1);
  assert.equal(log.logStartOffset, 24);
  assert.equal(log.logEndOffset, 24);
  assert.ok(fs.list(DIR).some((n) => n.endsWith('.log.deleted')));
  log.purgeDeletedFiles(clock.nowMs() + 1000);
  // Removed off the event loop: a fixed 10 ms pause could end before that on a loaded machine.
  for (let waitedMs = 0; waitedMs < 5000 && fs.list(DIR).some((n) => n.endsWith('.deleted')); waitedMs += 10) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.ok(!fs.list(DIR).some((n) => n.endsWith('.deleted')));

  const bySize = setup({ segmentBytes: 300, retentionBytes: 700 });
  for (let i = 0; i < 12; i++) await bySize.log.appendAsLeader(batch(2), 0);
  bySize.log.deleteOldSegments(bySize.clock.nowMs());
  assert.ok(bySize.log.size <= 700 + 300, `size ${bySize.log.size}`);
  assert.ok(bySize.log.size > 700 - 300);
  assert.equal(dump(bySize.log)[0]![0], bySize.log.logStartOffset);
});

test('deleteRecordsBefore moves the log start offset, refuses past the high watermark, and drops whole segments below it', async () => {
  const { log } = setup({ segmentBytes: 300 });
  for (let i = 0; i < 10; i++) await log.appendAsLeader(batch(2), 0);
  log.updateHighWatermark(20);
  const before = log.segments.length;
  assert.equal(log.deleteRecordsBefore(13), 13);
  assert.ok(log.segments.length < before);
  assert.equal(dump(log)[0]![0], 13);
  assert.throws(() => log.read(12, 100, 20), (e: unknown) => e instanceof StorageError && e.kind === 'OFFSET_OUT_OF_RANGE');
  assert.throws(() => log.deleteRecordsBefore(21), (e: unknown) => e instanceof StorageError && e.kind === 'OFFSET_OUT_OF_RANGE');
});

test('DeleteRecords does not fsync the epoch checkpoint; after a power cut the stale one is cut to the log start', async () => {
  const { log, fs, clock } = setup({ segmentBytes: 300 });
  for (let i = 0; i < 10; i++) await log.appendAsLeader(batch(2), i < 4 ? 1 : i < 7 ? 2 : 3);
  log.flush(); // the checkpoint on disk lists epochs 1, 2 and 3
  log.updateHighWatermark(20);
  const syncs = fs.stats.syncs;
  assert.equal(log.deleteRecordsBefore(15), 15);
  assert.equal(fs.stats.syncs, syncs, 'no fsync on the request path');
  assert.deepEqual(log.endOffsetForEpoch(2), { leaderEpoch: 2, endOffset: 15 }, 'epochs ending below the log start are gone: epoch 2 ends at the log start');
  fs.crash();
  // The log start offset comes back from its own checkpoint (log-start-offset-checkpoint).
  const again = openLog(fs, clock, { segmentBytes: 300 }, { recoveryPoint: 20, logStartOffset: 15 });
  assert.equal(again.logStartOffset, 15);
  assert.deepEqual(again.endOffsetForEpoch(2), { leaderEpoch: 2, endOffset: 15 }, 'not where the stale checkpoint ended it (14)');
  assert.deepEqual(again.endOffsetForEpoch(3), { leaderEpoch: 3, endOffset: 20 });
});

test('after a clean close without producers, reopening reads no batch to rebuild producer state', async () => {
  const { log, fs, clock } = setup();
  for (let i = 0; i < 3000; i++) await log.appendAsLeader(batch(3), 0);
  log.close();
  const readBefore = fs.stats.readBytes;
  const again = openLog(fs, clock, {}, { recoveryPoint: log.recoveryPoint, clean: true });
  assert.equal(again.logEndOffset, 9000);
  const read = fs.stats.readBytes - readBefore;
  assert.ok(read < 64 * 1024, `${read} bytes read to reopen a log of ${log.size} bytes`);
  assert.equal((await again.appendAsLeader(batch(1), 0)).firstOffset, 9000);
});

test('a clean close and reopen gives the same log without a scan', async () => {
  const { log, fs, clock } = setup({ segmentBytes: 500 });
  for (let i = 0; i < 20; i++) await log.appendAsLeader(batch(3), i % 3);
  const before = dump(log);
  log.close();
  const again = openLog(fs, clock, { segmentBytes: 500 }, { recoveryPoint: log.recoveryPoint, clean: true });
  assert.equal(again.recovery.segmentsScanned, 0);
  assert.deepEqual(dump(again), before);
  assert.equal(again.logEndOffset, 60);
  assert.deepEqual(again.endOffsetForEpoch(1), log.endOffsetForEpoch(1));
  const r = await again.appendAsLeader(batch(1), 3);
  assert.equal(r.firstOffset, 60);
});

test('recovery truncates a torn tail and a corrupt batch, and rebuilds missing indexes', async () => {
  const { log, fs, clock } = setup({ segmentBytes: 100_000, indexIntervalBytes: 100 });
  for (let i = 0; i < 20; i++) await log.appendAsLeader(batch(3), 0);
  log.flush();
  const logPath = path.join(DIR, '00000000000000000000.log');
  const size = fs.fileSize(logPath);
  // A torn tail: half of a batch.
  const h = fs.open(logPath, { create: false });
  h.write(batch(3).subarray(0, 40), size);
  h.sync();
  fs.remove(path.join(DIR, '00000000000000000000.index'));
  const a = openLog(fs, clock, { indexIntervalBytes: 100 }, { recoveryPoint: 0 });
  assert.equal(a.logEndOffset, 60);
  assert.equal(a.recovery.bytesTruncated, 40);
  assert.ok(a.segments[0]!.offsetIndex.entries > 3, 'the index was rebuilt');
  assert.deepEqual(batchOffsets(a.read(31, 1, 60)), [[30, 32]]);
  a.close();
  // Corrupt a byte inside batch 10: recovery keeps batches 0..9.
  const batchBytes = batch(3).length;
  fs.corrupt(logPath, batchBytes * 10 + 70);
  const b = openLog(fs, clock, {}, { recoveryPoint: 0 });
  assert.equal(b.logEndOffset, 30);
  assert.equal(b.recovery.bytesTruncated, batchBytes * 10);
});

test('property: a read returns whole batches from the one holding the offset, cut by maxBytes (at least one) and upTo, whatever the batch sizes and index interval', async () => {
  const fc = (await import('fast-check')).default;
  await fc.assert(fc.asyncProperty(
    fc.array(fc.record({ records: fc.integer({ min: 1, max: 20 }), valueBytes: fc.integer({ min: 0, max: 9000 }) }), { minLength: 1, maxLength: 25 }),
    fc.integer({ min: 32, max: 8192 }),
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 200_000 }), fc.nat()), { minLength: 1, maxLength: 10 }),
    async (batches, indexIntervalBytes, reads) => {
      const { log } = setup({ indexIntervalBytes });
      const appended: { base: number; last: number; bytes: number }[] = [];
      for (const b of batches) {
        const info = await log.appendAsLeader(batch(b.records, { value: () => 'x'.repeat(Math.floor(b.valueBytes / b.records)) }), 0);
        appended.push({ base: info.firstOffset, last: info.lastOffset, bytes: 0 });
      }
      const end = log.logEndOffset;
      for (const [o, maxBytes, u] of reads) {
        const offset = o % end;
        const upTo = offset + 1 + (u % (end - offset));
        const got = batchOffsets(log.read(offset, maxBytes, upTo));
        const sizes = new Map<number, number>();
        for (const v of iterateAll(log.read(0, 1 << 30, end))) sizes.set(v.baseOffset, v.sizeInBytes);
        const expected: [number, number][] = [];
        let bytes = 0;
        for (const a of appended) {
          if (a.last < offset || a.base >= upTo) continue;
          const size = sizes.get(a.base)!;
          if (expected.length > 0 && bytes + size > maxBytes) break;
          expected.push([a.base, a.last]);
          bytes += size;
        }
        assert.deepEqual(got, expected, `read(${offset}, ${maxBytes}, ${upTo}) with index interval ${indexIntervalBytes}`);
      }
    }), { numRuns: 40 });
});

function* iterateAll(buf: Buffer): Generator<RecordBatchView> {
  for (let at = 0; at < buf.length;) { const v = new RecordBatchView(buf, at); yield v; at += v.sizeInBytes; }
}

test('a read of large batches finds the first by its header and reads the rest in one read, whole batches only', async () => {
  const { fs, log } = setup();
  const big = (i: number) => 'x'.repeat(7000) + i;
  for (let i = 0; i < 10; i++) await log.appendAsLeader(batch(10, { value: big }), 0); // ~70 KiB batches, offsets 10i..10i+9
  let logReads = 0;
  const open = fs.open.bind(fs);
  fs.open = (p, o) => {
    const h = open(p, o);
    if (!p.endsWith('.log')) return h;
    const read = h.read.bind(h);
    h.read = (buf, off, len, pos) => { logReads++; return read(buf, off, len, pos); };
    return h;
  };
  log.files.closeAll();
  const size = log.read(0, 1 << 20, 100).length / 10; // every batch is the same size
  logReads = 0;
  const bytes = log.read(25, 3 * size + size / 2, 100);
  assert.deepEqual(batchOffsets(bytes), [[20, 29], [30, 39], [40, 49]], 'from the batch holding 25, three whole batches fit');
  assert.ok(logReads <= 3, `${logReads} reads of the .log file (headers to find the batch, then one for the bytes)`);
  assert.deepEqual(batchOffsets(log.read(25, 1 << 20, 41)), [[20, 29], [30, 39], [40, 49]], 'a batch starting below upTo is whole');
  assert.deepEqual(batchOffsets(log.read(25, 1 << 20, 40)), [[20, 29], [30, 39]], 'none starting at or past upTo');
  assert.deepEqual(batchOffsets(log.read(25, size - 1, 100)), [[20, 29]], 'KIP-74: one whole batch above maxBytes');
  assert.ok(bytes.equals(log.read(20, 3 * size, 100)), 'the same bytes however the read was cut');
});

test('a compacted log refuses keyless records and names each one by its index in the append (KIP-467)', async () => {
  const { log } = setup({ cleanupPolicy: ['compact'] });
  const first = batch(3, { key: (i) => (i === 1 ? null : `k${i}`) });
  const second = batch(2, { key: (i) => (i === 1 ? null : `j${i}`) });
  const err = await log.appendAsLeader(Buffer.concat([first, second]), 0).then(() => null, (e: unknown) => e);
  assert.ok(err instanceof StorageError && err.kind === 'INVALID_RECORD', String(err));
  assert.deepEqual(err.recordErrors.map((r) => r.batchIndex), [1, 4]);
  assert.match(err.recordErrors[0]!.message, /Compacted topic cannot accept message without key in topic partition orders-0/);
  assert.match(err.message, /2 record errors in total/);
  assert.equal(log.logEndOffset, 0, 'nothing of the append was written');
  await log.appendAsLeader(batch(2), 0);
  assert.equal(log.logEndOffset, 2, 'keyed records are taken');
});

test('a CreateTime append out of the allowed window names the records whose timestamps are out of range', async () => {
  const { log, clock } = setup({ messageTimestampBeforeMaxMs: 1000, messageTimestampAfterMaxMs: 1000 });
  const now = clock.nowMs();
  // Timestamps now-1003 .. now-998: only the first three are more than 1000 ms old.
  const b = batch(6, { timestamp: now - 1003 });
  const err = await log.appendAsLeader(b, 0).then(() => null, (e: unknown) => e);
  assert.ok(err instanceof StorageError && err.kind === 'INVALID_TIMESTAMP', String(err));
  assert.deepEqual(err.recordErrors.map((r) => r.batchIndex), [0, 1, 2]);
  assert.match(err.recordErrors[0]!.message, /^Timestamp \d+ of message with offset 0 is out of range/);
  assert.equal(log.logEndOffset, 0);
});

test('a log created in a new directory has no segment files until its first write, and its index files none until an entry is written; reopened without them it reads, appends and finds offsets as before', async () => {
  const { fs, clock } = setup();
  fs.removeDir(DIR);
  const log = PartitionLog.open({
    dir: DIR, files: new FileCache(fs, 64), config: logConfig({ indexIntervalBytes: 100 }), clock, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true, created: true,
  });
  const index = path.join(DIR, '00000000000000000000.index');
  const timeIndex = path.join(DIR, '00000000000000000000.timeindex');
  assert.deepEqual(fs.list(DIR), [], 'nothing but the directory');
  log.flush();
  assert.deepEqual(fs.list(DIR), [], 'flushing an empty log creates no file');
  await log.appendAsLeader(batch(3), 0);
  assert.ok(fs.exists(path.join(DIR, '00000000000000000000.log')), 'the first write creates the log file');
  log.flush();
  assert.ok(!fs.exists(index), 'one batch below index.interval.bytes: still no entry, no file');
  // A power cut and a reopen without index files.
  fs.crash();
  const a = openLog(fs, clock, { indexIntervalBytes: 100 }, { recoveryPoint: 3, clean: true });
  assert.equal(a.logEndOffset, 3);
  for (let i = 0; i < 20; i++) await a.appendAsLeader(batch(3, { timestamp: 2000 + 10 * i }), 0);
  a.flush();
  assert.ok(fs.fileSize(index) > 0 && fs.fileSize(timeIndex) > 0, 'entries written once there are some');
  assert.deepEqual(batchOffsets(a.read(31, 1, 63)), [[30, 32]]);
  assert.equal((await a.offsetForTimestamp(2100))?.offset, 33, 'the time index finds the batch');
  a.close();
  const b = openLog(fs, clock, { indexIntervalBytes: 100 }, { recoveryPoint: 63, clean: true });
  assert.equal(b.logEndOffset, 63);
  assert.ok(b.segments[0]!.offsetIndex.entries > 3, 'the index came back from its file');
  assert.deepEqual(batchOffsets(b.read(31, 1, 63)), [[30, 32]]);
  assert.equal((await b.offsetForTimestamp(2100))?.offset, 33);
});

test('truncating at the log end offset drops an epoch that started there with nothing written in it (a leader that lost its leadership before appending)', async () => {
  const { log } = setup();
  await log.appendAsLeader(batch(3), 1);
  log.epochCache.assign(2, 3); // became leader at epoch 2, appended nothing
  assert.equal(log.epochCache.latestEpoch, 2);
  log.truncateTo(3);
  assert.equal(log.logEndOffset, 3);
  assert.equal(log.epochCache.latestEpoch, 1, 'its last fetched epoch is the last one it has batches of');
  assert.deepEqual(log.endOffsetForEpoch(2), { leaderEpoch: 1, endOffset: 3 });
});

test('tiered: local retention deletes only copied segments and keeps the log start offset, also across a reopen', async () => {
  const { fs, clock, log } = setup({ segmentBytes: 500, remoteStorageEnable: true, localRetentionBytes: 0, fileDeleteDelayMs: 0 });
  for (let i = 0; i < 40; i++) await log.appendAsLeader(batch(2), 3);
  log.updateHighWatermark(log.logEndOffset);
  const bases = log.segments.map((s) => s.baseOffset);
  assert.equal(log.deleteOldSegments(clock.nowMs()), 0, 'nothing copied: nothing deleted locally');
  log.highestOffsetInRemoteStorage = bases[3]! - 1;
  log.deleteOldSegments(clock.nowMs());
  assert.deepEqual([log.logStartOffset, log.localLogStartOffset], [0, bases[3]], 'the copied segments go, the log start stays in the tier');
  assert.throws(() => log.read(0, 1000, log.highWatermark), (e: unknown) => e instanceof StorageError && e.kind === 'OFFSET_MOVED_TO_TIERED_STORAGE');
  assert.equal(log.epochCache.epochForOffset(0), 3, 'the leader-epoch cache still covers the remote offsets');
  log.updateLogStartOffsetFromRemoteTier(bases[1]!);
  assert.deepEqual([log.logStartOffset, log.localLogStartOffset], [bases[1], bases[3]]);
  log.close();
  const reopened = openLog(fs, clock, { segmentBytes: 500, remoteStorageEnable: true }, { logStartOffset: bases[1]!, recoveryPoint: log.logEndOffset, clean: true });
  assert.deepEqual([reopened.logStartOffset, reopened.localLogStartOffset], [bases[1], bases[3]], 'a checkpointed log start below the local segments is kept');
});

test('tiered: a follower restored from the remote tier starts at the leader\'s local start with its epochs and producer state', async () => {
  const { log } = setup({ remoteStorageEnable: true });
  await log.appendAsLeader(batch(3), 0);
  log.restoreFromRemoteTier(500, 100, [{ epoch: 0, startOffset: 0 }, { epoch: 2, startOffset: 300 }, { epoch: 5, startOffset: 600 }], null);
  assert.deepEqual([log.logStartOffset, log.localLogStartOffset, log.logEndOffset], [100, 500, 500]);
  assert.deepEqual(log.epochCache.all, [{ epoch: 0, startOffset: 100 }, { epoch: 2, startOffset: 300 }], 'epochs from the log start to the local start');
});
