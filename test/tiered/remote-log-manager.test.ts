// The RemoteLogManager driven by hand: a manual clock and scheduler, a real partition log on disk,
// the local directory backend, and `__remote_log_metadata` as an in-memory topic.
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mkdtempSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRecordBatchSync, iterateBatches, iterateRecords } from '../../src/records/index.js';
import { FileCache, NodeFileSystem, PartitionLog, logConfig, type LogConfig } from '../../src/storage/index.js';
import { ManualClock } from '../../src/util/index.js';
import {
  ChunkedStorageManager, LocalObjectStore, ReadCache, RemoteLogManager, RemoteLogMetadataManager, RemoteLogMetadataWaitError, RemoteLogSegmentState, RemotePartitionDeleteState,
  type RemoteLogMetadataTopic, type RemoteStorageManager, type TieredScheduler, type TopicIdPartition,
} from '../../src/tiered/index.js';

const TIP: TopicIdPartition = { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', topic: 'orders', partition: 0 };

/** `__remote_log_metadata` in memory: one batch per record, offsets in order. */
class MemoryTopic implements RemoteLogMetadataTopic {
  readonly partitions = new Map<number, Buffer[]>();
  async append(partition: number, value: Buffer): Promise<number> {
    const list = this.partitions.get(partition) ?? [];
    this.partitions.set(partition, list);
    list.push(buildRecordBatchSync({ records: [{ key: null, value, timestamp: 0 }], baseOffset: list.length }));
    return list.length - 1;
  }
  async read(partition: number, offset: number): Promise<{ records: Buffer; endOffset: number } | null> {
    const list = this.partitions.get(partition) ?? [];
    return { records: Buffer.concat(list.slice(offset)), endOffset: list.length };
  }
}

/** Timers run only when the test says so. */
class ManualScheduler implements TieredScheduler {
  timers: { delayMs: number; fn: () => void; cancelled: boolean }[] = [];
  schedule(delayMs: number, fn: () => void) {
    const t = { delayMs, fn, cancelled: false };
    this.timers.push(t);
    return { cancel: () => { t.cancelled = true; } };
  }
  pending() { return this.timers.filter((t) => !t.cancelled); }
}

function batch(i: number): Buffer {
  return buildRecordBatchSync({ records: [{ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`.padEnd(100, '.')), timestamp: 1_000 + i, headers: [{ key: 'h', value: Buffer.from(String(i)) }] }], baseOffset: 0 });
}

/** [offset, key, value, timestamp, header] of every record in `bytes`. */
function records(bytes: Buffer): [number, string, string, number, string][] {
  const out: [number, string, string, number, string][] = [];
  for (const v of iterateBatches(bytes)) {
    for (const r of iterateRecords(v, v.bytes().subarray(61))) out.push([r.offset, r.key!.toString(), r.value!.toString(), r.timestamp, r.headers[0]!.value!.toString()]);
  }
  return out;
}

let root: string;
let clock: ManualClock;
let scheduler: ManualScheduler;
let topic: MemoryTopic;

function openLog(config: Partial<LogConfig>): PartitionLog {
  return PartitionLog.open({
    dir: join(root, 'orders-0'), files: new FileCache(new NodeFileSystem(), 64), clock, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false,
    config: logConfig({ segmentBytes: 600, indexIntervalBytes: 100, remoteStorageEnable: true, retentionMs: -1, localRetentionBytes: 0, fileDeleteDelayMs: 0, ...config }),
  });
}

async function manager(o: { brokerId?: number; rsm?: RemoteStorageManager; copyRate?: number } = {}) {
  const rsm = o.rsm ?? new ChunkedStorageManager({ store: await LocalObjectStore.open(join(root, 'remote')), chunkBytes: 256 });
  const metadata = new RemoteLogMetadataManager(topic, 50, { warn: () => {} });
  let n = 0;
  const rlm = new RemoteLogManager({
    brokerId: o.brokerId ?? 1, rsm, metadata, clock, scheduler, taskIntervalMs: 30_000, copyMaxBytesPerSecond: o.copyRate ?? Number.MAX_SAFE_INTEGER,
    fetchMaxBytesPerSecond: Number.MAX_SAFE_INTEGER, logger: { info: () => {}, warn: () => {} }, retryBackoffMs: 500,
    newSegmentId: () => Buffer.from(`segment-${o.brokerId ?? 1}-${String(n++).padStart(6, '0')}`).subarray(0, 16).toString('base64url'),
  });
  return { rsm, metadata, rlm };
}

async function fill(log: PartitionLog, count: number, epoch = 0): Promise<void> {
  for (let i = log.logEndOffset; i < count; i++) await log.appendAsLeader(batch(i), epoch);
}

/** Runs the task's pending timer by hand; the delay of the next one it schedules. */
async function runScheduled(): Promise<number> {
  const t = scheduler.pending().at(-1)!;
  t.cancelled = true;
  t.fn();
  for (let i = 0; i < 400 && scheduler.pending().length === 0; i++) await new Promise((r) => setTimeout(r, 5));
  return scheduler.pending().at(-1)!.delayMs;
}

/** Reads every offset from the log start as a consumer would: the tier below the local log start, then the disk. */
async function readAll(rlm: RemoteLogManager, log: PartitionLog): Promise<[number, string, string, number, string][]> {
  const out: [number, string, string, number, string][] = [];
  let offset = log.logStartOffset;
  while (offset < log.highWatermark) {
    const bytes = offset < log.localLogStartOffset ? await rlm.read(TIP, log, offset, 250, log.highWatermark, true) : log.read(offset, 250, log.highWatermark);
    assert.ok(bytes.length > 0, `a read at ${offset} returned nothing`);
    for (const r of records(bytes)) if (r[0] >= offset) out.push(r);
    offset = out.at(-1)![0] + 1;
  }
  return out;
}

describe('RemoteLogManager', () => {
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'logline-rlm-'));
    clock = new ManualClock(1_000_000);
    scheduler = new ManualScheduler();
    topic = new MemoryTopic();
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('copies rolled segments below the high watermark in order; local retention then deletes only copied ones; every offset reads back', async () => {
    const log = openLog({});
    await fill(log, 40);
    const expected = await readAll({} as RemoteLogManager, Object.assign(log, { highWatermark: log.logEndOffset }));
    log.updateHighWatermark(20);
    const { rlm, metadata } = await manager();
    rlm.onLeader({ topicIdPartition: TIP, leaderEpoch: 0, log });
    assert.deepEqual(scheduler.pending().map((t) => t.delayMs), [0], 'the first run is scheduled at once');
    await rlm.runNow(TIP);
    const copied = metadata.store.listRemoteLogSegments(TIP).sort((a, b) => a.startOffset - b.startOffset);
    assert.ok(copied.length >= 2, `${copied.length} segments copied`);
    assert.ok(copied.every((m) => m.state === RemoteLogSegmentState.COPY_SEGMENT_FINISHED));
    for (let i = 1; i < copied.length; i++) assert.equal(copied[i]!.startOffset, copied[i - 1]!.endOffset + 1, 'copied in order, without gaps');
    assert.equal(copied[0]!.startOffset, 0);
    assert.ok(copied.at(-1)!.endOffset < 20, 'nothing at or above the high watermark is copied');
    assert.equal(log.highestOffsetInRemoteStorage, copied.at(-1)!.endOffset);

    log.updateHighWatermark(40);
    log.deleteOldSegments(clock.nowMs());
    assert.equal(log.logStartOffset, 0, 'local retention does not move the log start offset');
    assert.equal(log.localLogStartOffset, copied.at(-1)!.endOffset + 1, 'local retention deleted exactly the copied segments');
    await rlm.runNow(TIP);
    log.deleteOldSegments(clock.nowMs());
    assert.equal(log.localLogStartOffset, log.activeSegment.baseOffset, 'once copied, only the active segment stays local');
    assert.deepEqual(await readAll(rlm, log), expected, 'every offset, key, value, timestamp and header as written');
    await rlm.close();
  });

  it('property: a read from the tier returns the same bytes as the same read from local disk, for every offset, size and chunk size', async () => {
    // Chunks down to 5 bytes (less than a batch's offset and length fields): batches straddle chunk
    // boundaries, span several chunks, and several fit in one (the reader hands out views of a
    // chunk and copies only batches that straddle).
    const runs = Number(process.env['LOGLINE_TIER_READ_RUNS'] ?? 8);
    await fc.assert(fc.asyncProperty(
      fc.array(fc.record({ records: fc.integer({ min: 1, max: 3 }), valueBytes: fc.integer({ min: 0, max: 700 }) }), { minLength: 8, maxLength: 30 }),
      fc.oneof(fc.integer({ min: 5, max: 40 }), fc.integer({ min: 41, max: 3000 })), fc.integer({ min: 300, max: 2500 }),
      fc.option(fc.integer({ min: 0, max: 12_000 }), { nil: undefined }),
      async (shape, chunkBytes, segmentBytes, cacheBytes) => {
        rmSync(root, { recursive: true, force: true });
        topic = new MemoryTopic();
        const log = openLog({ segmentBytes });
        for (const [i, b] of shape.entries()) {
          const recs = Array.from({ length: b.records }, (_x, j) => ({ key: Buffer.from(`k${i}.${j}`), value: Buffer.alloc(b.valueBytes, 97 + ((i + j) % 26)), timestamp: 1_000 + i }));
          await log.appendAsLeader(buildRecordBatchSync({ records: recs, baseOffset: 0 }), 0);
        }
        log.updateHighWatermark(log.logEndOffset);
        const sizes = [1, 900, 4000];
        const expected = new Map<string, Buffer>();
        for (let o = 0; o < log.activeSegment.baseOffset; o++) for (const n of sizes) expected.set(`${o}/${n}`, log.read(o, n, log.highWatermark, true));
        // With a chunk cache, chunks load ahead of the reader, also from the segments after its own.
        const chunkCache = cacheBytes === undefined ? undefined : new ReadCache(cacheBytes);
        const rsm = new ChunkedStorageManager({ store: await LocalObjectStore.open(join(root, 'remote')), chunkBytes, ...(chunkCache ? { chunkCache } : {}) });
        const { rlm } = await manager({ rsm });
        rlm.onLeader({ topicIdPartition: TIP, leaderEpoch: 0, log });
        await rlm.runNow(TIP);
        log.deleteOldSegments(clock.nowMs());
        assert.equal(log.localLogStartOffset, log.activeSegment.baseOffset, 'every rolled segment is read from the tier');
        for (const [k, want] of expected) {
          const [o, n] = k.split('/').map(Number) as [number, number];
          const got = await rlm.read(TIP, log, o, n, log.highWatermark, true);
          assert.ok(got.equals(want), `offset ${o}, max ${n} bytes, chunk ${chunkBytes}: ${got.length} bytes from the tier, ${want.length} from disk`);
          if (chunkCache) assert.ok(chunkCache.stats().bytes <= chunkCache.bytesMax, 'the chunk cache stays within its bound');
        }
        await rlm.close();
        log.close();
      }), { numRuns: runs, includeErrorInReport: true });
  });

  it('a read from the tier loads the following segments ahead of the reader, within a quarter of the chunk cache', async () => {
    const log = openLog({});
    await fill(log, 40);
    log.updateHighWatermark(40);
    // Chunks as large as a segment: the chunked reader alone would load nothing ahead.
    const chunkCache = new ReadCache(4 * 4096);
    const rsm = new ChunkedStorageManager({ store: await LocalObjectStore.open(join(root, 'remote')), chunkBytes: 4096, chunkCache });
    const { rlm, metadata } = await manager({ rsm });
    rlm.onLeader({ topicIdPartition: TIP, leaderEpoch: 0, log });
    await rlm.runNow(TIP);
    log.deleteOldSegments(clock.nowMs());
    const segments = metadata.store.listRemoteLogSegments(TIP).sort((a, b) => a.startOffset - b.startOffset);
    assert.ok(segments.length >= 4, `${segments.length} remote segments`);
    await rlm.read(TIP, log, 0, 100, log.highWatermark, true);
    const loaded = () => chunkCache.stats().entries;
    for (let i = 0; i < 200 && loaded() < 3; i++) await new Promise((r) => setTimeout(r, 5));
    // A quarter of the cache (4 KiB) past the reader: the rest of the first segment and the next ones' first bytes.
    const hitsBefore = chunkCache.stats().hits;
    assert.ok(loaded() >= 2, `${loaded()} chunks cached after one read`);
    const second = segments[1]!;
    const bytes = await rlm.read(TIP, log, second.startOffset, 100, log.highWatermark, true);
    assert.equal(records(bytes)[0]![0], second.startOffset);
    // (Its own read-ahead then loads further segments: misses, but not this read's.)
    assert.ok(chunkCache.stats().hits > hitsBefore, 'the read that crossed into the next segment found its chunk loaded');
    assert.ok(chunkCache.stats().bytes <= chunkCache.bytesMax);
    await rlm.close();
  });

  it('a run that copied deletes the copied segments locally at once and runs again soon; an idle one waits the interval', async () => {
    const log = openLog({ localRetentionBytes: 0 });
    await fill(log, 40);
    log.updateHighWatermark(40);
    const { rlm } = await manager();
    rlm.onLeader({ topicIdPartition: TIP, leaderEpoch: 0, log });
    assert.equal(await runScheduled(), 100, 'segments were copied: the next run is soon, not 30 s later');
    // No retention pass of the log manager ran: the run itself applied local retention.
    assert.equal(log.localLogStartOffset, log.activeSegment.baseOffset, 'only the active segment is left on local disk');
    assert.equal(log.logStartOffset, 0);
    assert.equal(await runScheduled(), 30_000, 'nothing new to copy: the task interval');
    await rlm.close();
  });

  it('a roll wakes an idle leader task at once; a rolled segment waiting for the high watermark is looked at again soon', async () => {
    const log = openLog({ localRetentionBytes: 0 });
    await fill(log, 40);
    log.updateHighWatermark(40);
    const { rlm } = await manager();
    rlm.onLeader({ topicIdPartition: TIP, leaderEpoch: 0, log });
    await runScheduled();
    assert.equal(await runScheduled(), 30_000, 'idle: the task interval');
    const base = log.activeSegment.baseOffset;
    await fill(log, log.logEndOffset + 1);
    for (let i = 0; log.activeSegment.baseOffset === base; i++) await fill(log, log.logEndOffset + 1);
    assert.deepEqual(scheduler.pending().map((t) => t.delayMs), [0], 'the roll replaced the 30 s wait with a run now');
    // Followers have not fetched the rolled segment yet (the high watermark is below its end).
    assert.equal(await runScheduled(), 100, 'a rolled segment above the high watermark: again soon');
    log.updateHighWatermark(log.logEndOffset);
    assert.equal(await runScheduled(), 100, 'copied');
    assert.equal(log.localLogStartOffset, log.activeSegment.baseOffset);
    assert.equal(await runScheduled(), 30_000, 'nothing left: the interval again');
    await rlm.close();
    await fill(log, log.logEndOffset + 20);
    assert.equal(scheduler.pending().length, 0, 'a stopped task is not woken by later rolls');
  });

  it('a backlog of rolled segments leaves the local disk one copied segment at a time, not after the run\'s last copy', async () => {
    const log = openLog({ localRetentionBytes: 0 });
    await fill(log, 60);
    log.updateHighWatermark(60);
    const real = new ChunkedStorageManager({ store: await LocalObjectStore.open(join(root, 'remote')), chunkBytes: 256 });
    // What the local log holds when each copy starts (the copy task is one run over the backlog).
    const atCopy: { start: number; localLogStart: number }[] = [];
    const watching: RemoteStorageManager = {
      copyLogSegmentData: (m, d) => { atCopy.push({ start: m.startOffset, localLogStart: log.localLogStartOffset }); return real.copyLogSegmentData(m, d); },
      fetchLogSegment: (m, s, e) => real.fetchLogSegment(m, s, e), fetchIndex: (m, t) => real.fetchIndex(m, t),
      deleteLogSegmentData: (m) => real.deleteLogSegmentData(m), close: () => real.close(),
    };
    const { rlm } = await manager({ rsm: watching });
    rlm.onLeader({ topicIdPartition: TIP, leaderEpoch: 0, log });
    await rlm.runNow(TIP);
    assert.ok(atCopy.length >= 4, `${atCopy.length} segments copied in one run`);
    // local.retention.bytes 0: every segment copied before this one is already gone from local disk.
    for (const c of atCopy) assert.equal(c.localLogStart, c.start, `when the copy of ${c.start} started, the local log began at ${c.localLogStart}`);
    assert.equal(log.localLogStartOffset, log.activeSegment.baseOffset);
    await rlm.close();
  });

  it('read_committed from the tier: a segment copied without a transaction index is asked for it once, not on every fetch', async () => {
    const log = openLog({});
    await fill(log, 40);
    log.updateHighWatermark(40);
    const real = new ChunkedStorageManager({ store: await LocalObjectStore.open(join(root, 'remote')), chunkBytes: 256 });
    let txnLookups = 0;
    const counting: RemoteStorageManager = {
      copyLogSegmentData: (m, d) => real.copyLogSegmentData(m, d), fetchLogSegment: (m, s, e) => real.fetchLogSegment(m, s, e),
      fetchIndex: (m, t) => { if (t === 'TRANSACTION') txnLookups++; return real.fetchIndex(m, t); },
      deleteLogSegmentData: (m) => real.deleteLogSegmentData(m), close: () => real.close(),
    };
    const { rlm, metadata } = await manager({ rsm: counting });
    rlm.onLeader({ topicIdPartition: TIP, leaderEpoch: 0, log });
    await rlm.runNow(TIP);
    const remote = metadata.store.listRemoteLogSegments(TIP).length;
    assert.ok(remote >= 3, `${remote} remote segments`);
    assert.deepEqual(await rlm.abortedTransactions(TIP, log, 0, 40), []);
    assert.equal(txnLookups, remote, 'the first walk asks for every remote transaction index');
    for (let i = 0; i < 5; i++) assert.deepEqual(await rlm.abortedTransactions(TIP, log, i, 40), []);
    assert.equal(txnLookups, remote, 'later walks remember which segments have none');
    await rlm.close();
  });

  it('a copy another leader started and never finished is deleted by the next leader, which continues from what was copied', async () => {
    const log = openLog({});
    await fill(log, 30);
    log.updateHighWatermark(30);
    // The old leader: copies, then starts a copy it never finishes (its objects half there).
    const old = await manager({ brokerId: 1 });
    old.rlm.onLeader({ topicIdPartition: TIP, leaderEpoch: 0, log });
    await old.rlm.runNow(TIP);
    const finished = old.metadata.store.listRemoteLogSegments(TIP).length;
    await log.appendAsLeader(batch(30), 1);
    await fill(log, 45, 1);
    log.updateHighWatermark(45);
    const seg = log.segments.find((s) => s.baseOffset === log.highestOffsetInRemoteStorage + 1)!;
    const orphan = {
      remoteLogSegmentId: { topicIdPartition: TIP, id: 'b3JwaGFuLXNlZ21lbnQtMQ' }, startOffset: seg.baseOffset, endOffset: seg.nextOffset - 1, maxTimestampMs: 0,
      brokerId: 1, eventTimestampMs: 0, segmentLeaderEpochs: [{ leaderEpoch: 0, startOffset: seg.baseOffset }], segmentSizeInBytes: seg.size, customMetadata: null,
      state: RemoteLogSegmentState.COPY_SEGMENT_STARTED,
    };
    await old.metadata.publish({ kind: 'segment', metadata: orphan });
    await old.rsm.copyLogSegmentData(orphan, { logSegment: seg.path('.log'), offsetIndex: Buffer.alloc(0), timeIndex: Buffer.alloc(0), producerSnapshotIndex: Buffer.alloc(0), leaderEpochIndex: Buffer.alloc(0) });
    old.rlm.onNotLeader(TIP);

    // The new leader (a new broker process: its own metadata replay from the topic).
    log.highestOffsetInRemoteStorage = -1;
    const next = await manager({ brokerId: 2, rsm: old.rsm });
    next.rlm.onLeader({ topicIdPartition: TIP, leaderEpoch: 1, log });
    await next.rlm.runNow(TIP);
    const segments = next.metadata.store.listRemoteLogSegments(TIP).sort((a, b) => a.startOffset - b.startOffset);
    assert.equal(segments.some((m) => m.remoteLogSegmentId.id === orphan.remoteLogSegmentId.id), false, 'the orphan is gone from the metadata');
    const folder = readdirSync(join(root, 'remote', `orders-0-${TIP.topicId}`));
    assert.equal(folder.some((f) => f.includes(orphan.remoteLogSegmentId.id)), false, 'and its objects are deleted');
    assert.ok(segments.length > finished, 'the new leader copied on');
    assert.equal(segments.slice(0, finished).every((m) => m.brokerId === 1), true, 'what the old leader copied is not copied again');
    for (let i = 1; i < segments.length; i++) assert.equal(segments[i]!.startOffset, segments[i - 1]!.endOffset + 1, 'no offset missing, none twice');
    await next.rlm.close();
  });

  it('total retention over both tiers deletes remote segments, metadata first, and moves the log start offset', async () => {
    const log = openLog({});
    await fill(log, 40);
    log.updateHighWatermark(40);
    const { rlm, metadata } = await manager();
    rlm.onLeader({ topicIdPartition: TIP, leaderEpoch: 0, log });
    await rlm.runNow(TIP);
    log.deleteOldSegments(clock.nowMs());
    const before = metadata.store.listRemoteLogSegments(TIP).sort((a, b) => a.startOffset - b.startOffset);
    const remoteBytes = before.reduce((n, m) => n + m.segmentSizeInBytes, 0);
    // Keep about half the remote bytes plus what is only local.
    log.config = { ...log.config, retentionBytes: Math.floor(remoteBytes / 2) + log.onlyLocalLogSegmentsSize };
    await rlm.runNow(TIP);
    const after = metadata.store.listRemoteLogSegments(TIP).sort((a, b) => a.startOffset - b.startOffset);
    assert.ok(after.length < before.length && after.length > 0, `${before.length} → ${after.length} remote segments`);
    assert.equal(log.logStartOffset, after[0]!.startOffset, 'the log start offset is the first remaining remote segment');
    const objects = readdirSync(join(root, 'remote', `orders-0-${TIP.topicId}`));
    for (const m of before.slice(0, before.length - after.length)) assert.equal(objects.some((f) => f.includes(m.remoteLogSegmentId.id)), false);
    await assert.rejects(rlm.read(TIP, log, 0, 1000, 40, true), /OFFSET_OUT_OF_RANGE|in no remote segment/);
    // Topic deletion: everything remote goes.
    await rlm.onDeleted(TIP);
    assert.equal(metadata.store.listRemoteLogSegments(TIP).length, 0);
    assert.equal(existsSync(join(root, 'remote', `orders-0-${TIP.topicId}`)), false, 'the partition folder is empty and gone');
    await rlm.close();
  });

  it('while every copy fails, remote retention still deletes expired segments and the run still reports the copy failure', async () => {
    const log = openLog({});
    await fill(log, 40);
    log.updateHighWatermark(20);
    const real = new ChunkedStorageManager({ store: await LocalObjectStore.open(join(root, 'remote')), chunkBytes: 256 });
    let failing = false;
    const store: RemoteStorageManager = {
      copyLogSegmentData: (m, d) => (failing ? Promise.reject(new Error('store refuses uploads')) : real.copyLogSegmentData(m, d)),
      fetchLogSegment: (m, s, e) => real.fetchLogSegment(m, s, e), fetchIndex: (m, t) => real.fetchIndex(m, t),
      deleteLogSegmentData: (m) => real.deleteLogSegmentData(m), close: () => real.close(),
    };
    const { rlm, metadata } = await manager({ rsm: store });
    rlm.onLeader({ topicIdPartition: TIP, leaderEpoch: 0, log });
    await rlm.runNow(TIP);
    const finished = () => metadata.store.listRemoteLogSegments(TIP).filter((m) => m.state === RemoteLogSegmentState.COPY_SEGMENT_FINISHED);
    const copied = finished().length;
    assert.ok(copied >= 2, `${copied} segments copied before the store fails`);
    // The store now refuses uploads; more segments wait to be copied; the copied ones expire by time.
    failing = true;
    log.updateHighWatermark(40);
    clock.advance(60_000);
    log.config = { ...log.config, retentionMs: 30_000 };
    await assert.rejects(rlm.runNow(TIP), /store refuses uploads/, 'the run still fails on the copy');
    assert.equal(finished().length, 0, 'the expired remote segments were deleted although copying failed');
    assert.ok(log.logStartOffset > 0, 'the log start offset moved past them');
    assert.equal(metadata.store.listRemoteLogSegments(TIP).filter((m) => m.state === RemoteLogSegmentState.COPY_SEGMENT_STARTED).length, 0,
      'the attempt that just failed was cleaned up by the same run\'s expiry');
    await rlm.close();
  });

  it('a failed copy is retried with backoff, and the copy rate spreads segments over runs', async () => {
    const log = openLog({});
    await fill(log, 40);
    log.updateHighWatermark(40);
    const real = new ChunkedStorageManager({ store: await LocalObjectStore.open(join(root, 'remote')), chunkBytes: 256 });
    let failures = 2;
    const flaky: RemoteStorageManager = {
      copyLogSegmentData: (m, d) => (failures-- > 0 ? Promise.reject(new Error('store unavailable')) : real.copyLogSegmentData(m, d)),
      fetchLogSegment: (m, s, e) => real.fetchLogSegment(m, s, e), fetchIndex: (m, t) => real.fetchIndex(m, t),
      deleteLogSegmentData: (m) => real.deleteLogSegmentData(m), close: () => real.close(),
    };
    const { rlm, metadata } = await manager({ rsm: flaky, copyRate: 60 });
    rlm.onLeader({ topicIdPartition: TIP, leaderEpoch: 0, log });
    const runScheduled = async () => {
      const t = scheduler.pending().at(-1)!;
      t.cancelled = true;
      t.fn();
      // Let the run and its rescheduling finish.
      for (let i = 0; i < 50 && scheduler.pending().length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    };
    await runScheduled();
    await runScheduled();
    assert.deepEqual(scheduler.pending().map((t) => t.delayMs), [1000], 'backoff doubles: 500 ms, then 1 s');
    await runScheduled();
    const finished = () => metadata.store.listRemoteLogSegments(TIP).filter((m) => m.state === RemoteLogSegmentState.COPY_SEGMENT_FINISHED).length;
    assert.equal(scheduler.pending()[0]!.delayMs, 30_000, 'a successful run waits the task interval');
    // 60 B/s with 11 s of burst: 660 bytes, one ~600-byte segment and a little debt per run.
    const first = finished();
    assert.ok(first >= 1 && first < 4, `${first} segments copied under the rate`);
    clock.advance(20_000);
    await runScheduled();
    assert.ok(finished() > first, 'the next run copies more once the rate allows');
    assert.equal(metadata.store.listRemoteLogSegments(TIP).filter((m) => m.state === RemoteLogSegmentState.COPY_SEGMENT_STARTED).length, 0,
      'the failed attempts\' unfinished copies were cleaned up');
    await rlm.close();
  });

  it('a run waiting on a metadata write that is never acknowledged ends when the manager closes (a broker going down)', { timeout: 30_000 }, async () => {
    const log = openLog({});
    await fill(log, 40);
    log.updateHighWatermark(40);
    let appends = 0;
    // The write a stopping broker never acknowledges: its purgatory and followers are gone.
    topic.append = () => { appends++; return new Promise<number>(() => {}); };
    const { rlm } = await manager();
    rlm.onLeader({ topicIdPartition: TIP, leaderEpoch: 0, log });
    scheduler.pending()[0]!.fn();
    for (let i = 0; i < 100 && appends === 0; i++) await new Promise((r) => setImmediate(r));
    assert.equal(appends, 1, 'the run is waiting on its first metadata write');
    await rlm.close();
    assert.equal(appends, 1);
  });

  it('a publish whose event is not replayed within remote.log.metadata.consume.wait.ms fails, and the next one may succeed', async () => {
    const read = topic.read.bind(topic);
    let replay = false;
    topic.read = async (partition, offset) => (replay ? read(partition, offset) : { records: Buffer.alloc(0), endOffset: 0 });
    const metadata = new RemoteLogMetadataManager(topic, 50, { warn: () => {} }, 50);
    const event = { kind: 'partition-delete' as const, metadata: { topicIdPartition: TIP, brokerId: 1, eventTimestampMs: 1, state: RemotePartitionDeleteState.DELETE_PARTITION_MARKED } };
    await assert.rejects(metadata.publish(event), (e: unknown) => e instanceof RemoteLogMetadataWaitError && e.reason === 'timeout' && /consume\.wait\.ms/.test(e.message));
    replay = true;
    await metadata.publish({ ...event, metadata: { ...event.metadata, state: RemotePartitionDeleteState.DELETE_PARTITION_STARTED } });
    assert.equal(metadata.nextOffset(metadata.metadataPartition(TIP)), 2, 'both events replayed once the replica has them');
    metadata.close();
    await assert.rejects(metadata.publish(event), (e: unknown) => e instanceof RemoteLogMetadataWaitError && e.reason === 'closed');
  });
});
