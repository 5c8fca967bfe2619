// Kafka's RemoteLogManager: per partition this broker leads with remote.storage.enable, a task that
// runs every remote.log.manager.task.interval.ms and
//   - copies rolled segments wholly below the last stable offset (which is at most the high
//     watermark), in order, from the highest offset already copied in this log's leader-epoch
//     lineage: COPY_SEGMENT_STARTED, the six objects, COPY_SEGMENT_FINISHED; at most
//     remote.log.manager.copy.max.bytes.per.second; a failure retries with backoff;
//   - expires remote segments by the total retention (retention.ms / retention.bytes over both
//     tiers, and the log start offset): the log start offset moves first, then
//     DELETE_SEGMENT_STARTED, the objects, DELETE_SEGMENT_FINISHED;
//   - deletes orphans: a copy some leader started and never finished, a deletion never finished,
//     and copies a later copy of the same range replaced.
// It also serves reads below the local log start offset from the remote tier (whole batches,
// through the chunked reader) and deletes a partition's remote data when its topic is deleted.
// Time and timers come in through a Clock and a Scheduler, so tests drive the tasks by hand.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { BatchHeaderAt, LOG_OVERHEAD_BYTES, RecordBatchView, TimestampType, decompressBatchBody, iterateRecords } from '../records/index.js';
import {
  StorageError, TxnIndex, epochCheckpointBytes, parseEpochCheckpoint, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, LOG_SUFFIX,
  type AbortedTxn, type LogSegment, type PartitionLog,
} from '../storage/index.js';
import { TokenBucket, type Clock } from '../util/index.js';
import { RemoteResourceNotFoundError, RemoteStorageError } from './errors.js';
import type { RemoteLogMetadataManager } from './metadata-manager.js';
import {
  RemoteLogSegmentState as S, RemotePartitionDeleteState, topicIdPartitionKey,
  type RemoteLogSegmentMetadata, type SegmentLeaderEpoch, type TopicIdPartition,
} from './segment-metadata.js';
import { IndexType, type RemoteCacheStats, type RemoteStorageManager } from './storage-manager.js';

/** Timers (the replication room's Scheduler has the same shape). */
export interface TieredScheduler {
  schedule(delayMs: number, fn: () => void): { cancel(): void };
}

export interface TieredLogger { info(message: string): void; warn(message: string): void }

/** A partition as the replica manager hands it over on a leadership change. */
export interface TieredPartition {
  readonly topicIdPartition: TopicIdPartition;
  /** The leader epoch this broker leads at. */
  readonly leaderEpoch: number;
  readonly log: PartitionLog;
}

export interface RemoteLogManagerOptions {
  readonly brokerId: number;
  readonly rsm: RemoteStorageManager;
  readonly metadata: RemoteLogMetadataManager;
  readonly clock: Clock;
  readonly scheduler: TieredScheduler;
  /** remote.log.manager.task.interval.ms */
  readonly taskIntervalMs: number;
  /** remote.log.manager.copy.max.bytes.per.second */
  readonly copyMaxBytesPerSecond: number;
  /** remote.log.manager.fetch.max.bytes.per.second */
  readonly fetchMaxBytesPerSecond: number;
  readonly logger: TieredLogger;
  /** A new segment id (a UUID in Kafka's base64 form); tests pass a deterministic one. */
  readonly newSegmentId?: () => string;
  /** First retry delay after a failed run, doubled up to the task interval. */
  readonly retryBackoffMs?: number;
}

/** Counters /metrics reads (Kafka's BrokerTopicMetrics Remote* names), per topic. */
export interface RemoteTopicStats {
  copyBytes: number; copyRequests: number; copyErrors: number;
  fetchBytes: number; fetchRequests: number; fetchErrors: number;
  deleteRequests: number; deleteErrors: number;
}

const newStats = (): RemoteTopicStats => ({ copyBytes: 0, copyRequests: 0, copyErrors: 0, fetchBytes: 0, fetchRequests: 0, fetchErrors: 0, deleteRequests: 0, deleteErrors: 0 });

const uuid = (): string => Buffer.from(randomUUID().replace(/-/g, ''), 'hex').toString('base64url');

/** The delay before the next run of a task whose last run copied segments (see schedule). */
const BUSY_RERUN_MS = 100;

/** How far past a remote reader the following segments are loaded ahead (see readAhead). */
const READ_AHEAD_BYTES_MAX = 16 * 1024 * 1024;

/** Quota samples for the copy and fetch rates (Kafka's RLM quota managers use 11 windows of 1 s). */
const QUOTA_WINDOW = { samples: 11, windowMs: 1000 };

interface Task {
  readonly p: TieredPartition;
  /** A leader copies and expires; a follower only learns what is copied, so its local retention can follow. */
  readonly role: 'leader' | 'follower';
  timer: { cancel(): void } | null;
  running: Promise<void> | null;
  stopped: boolean;
  /** Segment ids this task is copying now (not orphans). */
  readonly copying: Set<string>;
  failures: number;
  /** The highest copied offset has been looked up in the metadata for this leadership. */
  initialized: boolean;
  /** The last run copied segments and was not held back by the copy quota, or a rolled segment waits only for the high watermark (see schedule). */
  busy: boolean;
  /** The log rolled during a run: the next run starts at once (see wake). */
  rolled: boolean;
}

export class RemoteLogManager {
  private readonly tasks = new Map<string, Task>();
  private readonly copyQuota = new TokenBucket(QUOTA_WINDOW);
  private readonly fetchQuota = new TokenBucket(QUOTA_WINDOW);
  /**
   * Remote segments copied without a transaction index (no aborted transaction in them): a
   * read_committed fetch walks the transaction indexes of every segment from its offset on, and
   * without this each absent one cost the store a failed lookup per fetch. Objects never change
   * after their copy; an id leaves with its segment.
   */
  private readonly withoutTxnIndex = new Set<string>();
  /** Per partition, the last remote segments loaded ahead of a reader (see readAhead). */
  private readonly readAheadDone = new Map<string, string[]>();
  readonly stats = new Map<string, RemoteTopicStats>();
  private readonly newSegmentId: () => string;
  private closed = false;

  constructor(private readonly o: RemoteLogManagerOptions) {
    this.newSegmentId = o.newSegmentId ?? uuid;
  }

  get metadata(): RemoteLogMetadataManager { return this.o.metadata; }
  /** For a caller's failure of something it started here (a background deletion). */
  logWarning(message: string): void { this.o.logger.warn(message); }

  topicStats(topic: string): RemoteTopicStats {
    let s = this.stats.get(topic);
    if (s === undefined) this.stats.set(topic, s = newStats());
    return s;
  }

  // ---- leadership ------------------------------------------------------------------------------

  /** This broker leads the partition at `p.leaderEpoch`: its task starts (or restarts at a new epoch). */
  onLeader(p: TieredPartition): void {
    this.startTask(p, 'leader');
  }

  /**
   * This broker follows the partition: a follower task (Kafka's RLMFollowerTask) keeps the log's
   * highest copied offset in step with the metadata, so local retention deletes what the leader copied.
   */
  onFollower(p: TieredPartition): void {
    this.startTask(p, 'follower');
  }

  private startTask(p: TieredPartition, role: Task['role']): void {
    if (this.closed) return;
    const key = topicIdPartitionKey(p.topicIdPartition);
    const existing = this.tasks.get(key);
    if (existing !== undefined && existing.role === role && existing.p.leaderEpoch === p.leaderEpoch && existing.p.log === p.log) return;
    this.stopTask(key);
    const task: Task = { p, role, timer: null, running: null, stopped: false, copying: new Set(), failures: 0, initialized: false, busy: false, rolled: false };
    this.tasks.set(key, task);
    if (role === 'leader') p.log.onRoll = () => this.wake(task);
    this.schedule(task, 0);
  }

  /**
   * A leader's log rolled: its task runs now instead of at the end of the interval, so a rolled
   * segment waits for its copy (and local retention after it) only as long as the copy takes. At
   * 50 MB/s with 4 MiB segments a roll comes every 84 ms, and a 500 ms wait meant six segments
   * over local.retention.bytes. A task backing off after a failure keeps its backoff.
   */
  private wake(task: Task): void {
    if (task.stopped || task.failures > 0) return;
    if (task.running !== null) {
      task.rolled = true;
      return;
    }
    task.timer?.cancel();
    this.schedule(task, 0);
  }

  /** The partition is no longer tiered here (gone, or tiering off): its task stops. */
  onNotLeader(p: TopicIdPartition): void {
    this.stopTask(topicIdPartitionKey(p));
  }

  /**
   * The partition's topic was deleted: its remote segments are deleted (Kafka's
   * DELETE_PARTITION_MARKED/STARTED/FINISHED around them). Every replica may do this; each step is
   * idempotent, and a replica that finds nothing left does nothing.
   */
  async onDeleted(p: TopicIdPartition): Promise<void> {
    this.stopTask(topicIdPartitionKey(p));
    await this.deleteRemotePartition(p);
  }

  /** KIP-950 remote.log.delete.on.disable: tiering turned off with deletion; the remote data goes, the local log stays. */
  async onRemoteStorageDisabled(p: TieredPartition): Promise<void> {
    this.stopTask(topicIdPartitionKey(p.topicIdPartition));
    await this.deleteRemotePartition(p.topicIdPartition);
    p.log.highestOffsetInRemoteStorage = -1;
    p.log.updateLogStartOffsetFromRemoteTier(p.log.localLogStartOffset);
  }

  private async deleteRemotePartition(p: TopicIdPartition): Promise<void> {
    const md = this.o.metadata;
    await md.catchUp(md.metadataPartition(p));
    const segments = md.store.listRemoteLogSegments(p);
    if (segments.length === 0 && md.store.partitionDeleteMetadata(p) === undefined) return;
    const event = (state: RemotePartitionDeleteState) => ({ kind: 'partition-delete' as const, metadata: { topicIdPartition: p, brokerId: this.o.brokerId, eventTimestampMs: this.o.clock.nowMs(), state } });
    await md.publish(event(RemotePartitionDeleteState.DELETE_PARTITION_MARKED));
    await md.publish(event(RemotePartitionDeleteState.DELETE_PARTITION_STARTED));
    for (const m of segments) await this.deleteSegment(m, null);
    await md.publish(event(RemotePartitionDeleteState.DELETE_PARTITION_FINISHED));
  }

  private stopTask(key: string): void {
    const task = this.tasks.get(key);
    if (task === undefined) return;
    task.stopped = true;
    if (task.role === 'leader') task.p.log.onRoll = null;
    task.timer?.cancel();
    task.timer = null;
    this.tasks.delete(key);
    this.readAheadDone.delete(key);
  }

  /**
   * Stops every task and waits for the runs in flight. The metadata manager closes first, so a run
   * waiting on `__remote_log_metadata` (a write whose acknowledgement a stopping broker never sends)
   * ends now instead of holding the shutdown.
   */
  async close(): Promise<void> {
    this.closed = true;
    const running = [...this.tasks.values()].map((t) => t.running);
    for (const key of [...this.tasks.keys()]) this.stopTask(key);
    this.o.metadata.close();
    await Promise.all(running.map((r) => r?.catch(() => undefined)));
  }

  private schedule(task: Task, delayMs: number): void {
    if (task.stopped) return;
    task.timer = this.o.scheduler.schedule(delayMs, () => {
      task.timer = null;
      task.running = this.runOnce(task).then(
        () => { task.failures = 0; },
        (e: unknown) => {
          task.failures++;
          this.o.logger.warn(`${name(task.p.topicIdPartition)}: remote log task failed (attempt ${task.failures}): ${e instanceof Error ? e.message : String(e)}`);
        },
      ).finally(() => {
        task.running = null;
        const backoff = Math.min(this.o.taskIntervalMs, (this.o.retryBackoffMs ?? 500) * 2 ** Math.max(0, task.failures - 1));
        // A partition rolling segments faster than the interval: the next run comes soon, or the
        // local log would grow by an interval's worth of segments waiting to be copied (and only
        // then deleted by local retention). Logline's choice; Kafka's RLMCopyTask waits the interval.
        this.schedule(task, task.failures > 0 ? backoff : task.rolled ? 0 : task.busy ? Math.min(this.o.taskIntervalMs, BUSY_RERUN_MS) : this.o.taskIntervalMs);
      });
    });
  }

  /** One run of the partition's task (the scheduler calls it every interval). */
  private async runOnce(t: Task): Promise<void> {
    if (t.stopped) return;
    const md = this.o.metadata;
    await md.catchUp(md.metadataPartition(t.p.topicIdPartition));
    const log = t.p.log;
    if (!log.remoteLogEnabled || t.stopped) return;
    if (t.role === 'follower') {
      log.highestOffsetInRemoteStorage = Math.max(log.highestOffsetInRemoteStorage, this.highestRemoteOffset(t.p));
      return;
    }
    if (!t.initialized) {
      log.highestOffsetInRemoteStorage = this.highestRemoteOffset(t.p);
      t.initialized = true;
    }
    // Expiry runs even when copying fails (Kafka runs RLMCopyTask and RLMExpirationTask apart), so
    // remote retention and the cleanup of failed attempts go on while the store refuses uploads.
    let copyError: unknown = null;
    t.busy = false;
    t.rolled = false;
    if (!log.config.remoteLogCopyDisable) await this.copySegments(t).catch((e: unknown) => { copyError = e; });
    if (!t.stopped) await this.expire(t);
    if (copyError !== null) throw copyError;
  }

  /** Runs the task of a partition led here once, now, after a run in flight (tests, and a topic's config change). */
  async runNow(p: TopicIdPartition): Promise<void> {
    const t = this.tasks.get(topicIdPartitionKey(p));
    if (t === undefined) return;
    await t.running?.catch(() => undefined);
    await this.runOnce(t);
  }

  // ---- copy ------------------------------------------------------------------------------------

  /**
   * Kafka's findHighestRemoteOffset: the latest epoch of this log's lineage with copied data,
   * bounded by where that epoch ends here (another leader may have copied past our divergence).
   */
  private highestRemoteOffset(p: TieredPartition): number {
    const entries = p.log.epochCache.all;
    for (let i = entries.length - 1; i >= 0; i--) {
      const highest = this.o.metadata.store.highestOffsetForEpoch(p.topicIdPartition, entries[i]!.epoch);
      if (highest === undefined) continue;
      const epochEnd = (entries[i + 1]?.startOffset ?? p.log.logEndOffset) - 1;
      return Math.min(highest, epochEnd);
    }
    return -1;
  }

  private async copySegments(t: Task): Promise<void> {
    const log = t.p.log;
    const from = Math.max(log.highestOffsetInRemoteStorage + 1, log.localLogStartOffset);
    // Rolled segments wholly below the last stable offset (itself at most the high watermark).
    for (;;) {
      // remote.log.copy.disable set while a run copies a backlog stops it after the segment in flight.
      if (t.stopped || log.config.remoteLogCopyDisable) return;
      const segs = log.segments;
      const i = segs.findIndex((s, j) => (segs[j + 1]?.baseOffset ?? Infinity) > Math.max(from, log.highestOffsetInRemoteStorage + 1));
      const seg = segs[i];
      const next = segs[i + 1];
      if (i < 0 || seg === undefined || next === undefined) return;
      if (next.baseOffset > log.lastStableOffset) {
        // Waiting for followers (the high watermark) is short: run again soon. A transaction
        // holding the last stable offset back may take long: the interval.
        if (next.baseOffset > log.highWatermark) t.busy = true;
        return;
      }
      const nowMs = this.o.clock.nowMs();
      // Over the copy rate: wait for the next run (Kafka's RLMCopyQuotaManager skips the task too).
      if (this.copyQuota.measure(this.o.copyMaxBytesPerSecond, nowMs) < 0) {
        t.busy = false;
        return;
      }
      await this.copySegment(t, seg, next.baseOffset);
      t.busy = true;
      // Local retention right after each copy made a segment eligible, not at the next
      // log.retention.check.interval.ms nor after the run's last copy: while copying catches up
      // with a backlog, the bytes copied leave the local disk one segment at a time.
      if (!t.stopped) log.deleteOldSegments(this.o.clock.nowMs());
    }
  }

  private async copySegment(t: Task, seg: LogSegment, nextBase: number): Promise<void> {
    const { topicIdPartition: tip, log } = t.p;
    const stats = this.topicStats(tip.topic);
    const endOffset = nextBase - 1;
    const epochs = segmentLeaderEpochs(log, seg.baseOffset, nextBase);
    const m: RemoteLogSegmentMetadata = {
      remoteLogSegmentId: { topicIdPartition: tip, id: this.newSegmentId() }, startOffset: seg.baseOffset, endOffset,
      maxTimestampMs: seg.maxTimestampAndOffset.timestamp, brokerId: this.o.brokerId, eventTimestampMs: this.o.clock.nowMs(),
      segmentLeaderEpochs: epochs, segmentSizeInBytes: seg.size, customMetadata: null, state: S.COPY_SEGMENT_STARTED,
    };
    const id = m.remoteLogSegmentId.id;
    t.copying.add(id);
    try {
      await this.o.metadata.publish({ kind: 'segment', metadata: m });
      const fs = log.fs;
      const file = (path: string): string | Buffer => (fs.exists(path) ? path : Buffer.alloc(0));
      const txn = seg.path(TXN_INDEX_SUFFIX);
      const snapshot = log.snapshotPath(nextBase);
      const custom = await this.o.rsm.copyLogSegmentData(m, {
        logSegment: seg.path(LOG_SUFFIX), offsetIndex: file(seg.path(INDEX_SUFFIX)), timeIndex: file(seg.path(TIME_INDEX_SUFFIX)),
        ...(fs.exists(txn) ? { transactionIndex: txn } : {}), producerSnapshotIndex: file(snapshot),
        leaderEpochIndex: epochCheckpointBytes(log.epochCache.all.filter((e) => e.startOffset < nextBase)),
      });
      // A leadership lost meanwhile: the next leader finds this copy unfinished and deletes it.
      if (t.stopped) return;
      await this.o.metadata.publish({
        kind: 'segment-update',
        update: { remoteLogSegmentId: m.remoteLogSegmentId, brokerId: this.o.brokerId, eventTimestampMs: this.o.clock.nowMs(), customMetadata: custom, state: S.COPY_SEGMENT_FINISHED },
      });
      log.highestOffsetInRemoteStorage = Math.max(log.highestOffsetInRemoteStorage, endOffset);
      stats.copyBytes += seg.size;
      stats.copyRequests++;
      this.copyQuota.record(seg.size, this.o.copyMaxBytesPerSecond, this.o.clock.nowMs());
    } catch (e) {
      stats.copyErrors++;
      throw e;
    } finally {
      t.copying.delete(id);
    }
  }

  // ---- expiry ----------------------------------------------------------------------------------

  private async expire(t: Task): Promise<void> {
    const { topicIdPartition: tip, log } = t.p;
    const store = this.o.metadata.store;
    const all = store.listRemoteLogSegments(tip).sort((a, b) => a.startOffset - b.startOffset);
    const doomed: RemoteLogSegmentMetadata[] = [];
    const live: RemoteLogSegmentMetadata[] = [];
    for (const m of all) {
      if (m.state === S.COPY_SEGMENT_STARTED ? !t.copying.has(m.remoteLogSegmentId.id) : m.state === S.DELETE_SEGMENT_STARTED) doomed.push(m);
      else if (m.state === S.COPY_SEGMENT_FINISHED && !this.isReferenced(tip, m)) doomed.push(m);
      else if (m.state === S.COPY_SEGMENT_FINISHED) live.push(m);
    }
    // Total retention over both tiers, oldest first (Kafka's RLMExpirationTask).
    const config = log.config;
    const nowMs = this.o.clock.nowMs();
    let excess = config.retentionBytes >= 0 ? live.reduce((n, m) => n + m.segmentSizeInBytes, 0) + log.onlyLocalLogSegmentsSize - config.retentionBytes : -1;
    let expiredThrough = -1;
    for (const m of live) {
      const belowStart = m.endOffset < log.logStartOffset;
      const byTime = config.retentionMs >= 0 && nowMs - m.maxTimestampMs > config.retentionMs;
      const bySize = excess >= m.segmentSizeInBytes;
      if (!belowStart && !byTime && !bySize) break;
      if (excess >= 0) excess -= m.segmentSizeInBytes;
      expiredThrough = m.endOffset;
      doomed.push(m);
    }
    // The log start offset moves before anything is deleted, so no read is sent to a deleted segment.
    if (expiredThrough >= 0) log.updateLogStartOffsetFromRemoteTier(expiredThrough + 1);
    for (const m of doomed) {
      if (t.stopped) return;
      await this.deleteSegment(m, t);
    }
  }

  /** Whether the segment is the copy the metadata serves for its range (a later copy may have replaced it). */
  private isReferenced(tip: TopicIdPartition, m: RemoteLogSegmentMetadata): boolean {
    const first = m.segmentLeaderEpochs[0]!;
    return this.o.metadata.store.remoteLogSegmentMetadata(tip, first.leaderEpoch, first.startOffset)?.remoteLogSegmentId.id === m.remoteLogSegmentId.id;
  }

  /** Metadata first, then the objects (Kafka's order): DELETE_SEGMENT_STARTED, delete, DELETE_SEGMENT_FINISHED. */
  private async deleteSegment(m: RemoteLogSegmentMetadata, t: Task | null): Promise<void> {
    const stats = this.topicStats(m.remoteLogSegmentId.topicIdPartition.topic);
    const update = (state: S) => ({
      kind: 'segment-update' as const,
      update: { remoteLogSegmentId: m.remoteLogSegmentId, brokerId: this.o.brokerId, eventTimestampMs: this.o.clock.nowMs(), customMetadata: m.customMetadata, state },
    });
    try {
      if (m.state !== S.DELETE_SEGMENT_STARTED) await this.o.metadata.publish(update(S.DELETE_SEGMENT_STARTED));
      await this.o.rsm.deleteLogSegmentData(m);
      this.withoutTxnIndex.delete(m.remoteLogSegmentId.id);
      if (t?.stopped === true) return;
      await this.o.metadata.publish(update(S.DELETE_SEGMENT_FINISHED));
      stats.deleteRequests++;
    } catch (e) {
      stats.deleteErrors++;
      throw e;
    }
  }

  // ---- reads -----------------------------------------------------------------------------------

  /** The remote segment holding `offset` in this log's lineage (Kafka's fetchRemoteLogSegmentMetadata and findNextSegmentMetadata). */
  segmentFor(tip: TopicIdPartition, log: PartitionLog, offset: number): RemoteLogSegmentMetadata | undefined {
    const store = this.o.metadata.store;
    const epoch = log.epochCache.epochForOffset(offset);
    const found = epoch >= 0 ? store.remoteLogSegmentMetadata(tip, epoch, offset) : undefined;
    if (found !== undefined) return found;
    // The epoch cache may not reach back that far (or the copy was cut at an epoch boundary): the finished copy holding the offset.
    return store.listRemoteLogSegments(tip).filter((m) => m.state === S.COPY_SEGMENT_FINISHED && m.startOffset <= offset && offset <= m.endOffset && this.isReferenced(tip, m))
      .sort((a, b) => b.eventTimestampMs - a.eventTimestampMs)[0];
  }

  /**
   * Whole batches from the one holding `offset` in the remote tier, at most `maxBytes` (a first
   * batch larger than that comes whole with `minOneBatch`, KIP-74), none starting at or past
   * `upTo`. Throws StorageError: OFFSET_OUT_OF_RANGE when no copy holds the offset,
   * KAFKA_STORAGE_ERROR (retriable) when the store fails.
   */
  async read(tip: TopicIdPartition, log: PartitionLog, offset: number, maxBytes: number, upTo: number, minOneBatch: boolean): Promise<Buffer> {
    const stats = this.topicStats(tip.topic);
    stats.fetchRequests++;
    const m = this.segmentFor(tip, log, offset);
    if (m === undefined) {
      stats.fetchErrors++;
      throw new StorageError('OFFSET_OUT_OF_RANGE', `offset ${offset} of ${name(tip)} is in no remote segment`);
    }
    // remote.log.manager.fetch.max.bytes.per.second: over it, nothing this time (the consumer asks again).
    if (this.fetchQuota.measure(this.o.fetchMaxBytesPerSecond, this.o.clock.nowMs()) < 0) return Buffer.alloc(0);
    try {
      const position = lookupPosition(await this.o.rsm.fetchIndex(m, IndexType.OFFSET), offset - m.startOffset);
      const stream = await this.o.rsm.fetchLogSegment(m, position);
      const out = await readBatches(stream, offset, maxBytes, upTo, minOneBatch);
      this.readAhead(tip, log, m, m.segmentSizeInBytes - position - out.length);
      stats.fetchBytes += out.length;
      this.fetchQuota.record(out.length, this.o.fetchMaxBytesPerSecond, this.o.clock.nowMs());
      return out;
    } catch (e) {
      stats.fetchErrors++;
      if (e instanceof RemoteStorageError) throw new StorageError('KAFKA_STORAGE_ERROR', `remote read of ${name(tip)} at ${offset}: ${e.message}`, { cause: e });
      throw e;
    }
  }

  /**
   * Read-ahead across segments: the reader is `left` bytes before the end of segment `m`; the
   * segments after it, up to READ_AHEAD_BYTES_MAX (and a quarter of the chunk cache) past the
   * reader, are loaded into the backend's caches now (offset index and log bytes), so the fetches
   * that cross into them do not each wait for the store. The chunked reader loads ahead only
   * inside one segment, and segments no larger than a chunk get nothing from it. Each segment
   * once per partition; a failure here is only a cache miss later. Without a chunk cache nothing
   * loaded would be kept, so nothing is.
   */
  private readAhead(tip: TopicIdPartition, log: PartitionLog, m: RemoteLogSegmentMetadata, left: number): void {
    const cacheBytes = this.o.rsm.cacheStats?.().chunk?.bytesMax ?? 0;
    let budget = Math.min(READ_AHEAD_BYTES_MAX, Math.floor(cacheBytes / 4)) - left;
    if (budget <= 0) return;
    const key = topicIdPartitionKey(tip);
    const done = this.readAheadDone.get(key) ?? [];
    this.readAheadDone.set(key, done);
    for (let cur = m; budget > 0 && cur.endOffset + 1 < log.localLogStartOffset;) {
      const next = this.segmentFor(tip, log, cur.endOffset + 1);
      if (next === undefined || next.startOffset <= cur.endOffset) return;
      const bytes = Math.min(next.segmentSizeInBytes, budget);
      budget -= next.segmentSizeInBytes;
      cur = next;
      if (done.includes(next.remoteLogSegmentId.id)) continue;
      done.push(next.remoteLogSegmentId.id);
      if (done.length > 16) done.shift();
      void this.o.rsm.fetchIndex(next, IndexType.OFFSET).catch(() => undefined);
      void this.o.rsm.fetchLogSegment(next, 0, bytes - 1).then(async (stream) => {
        try {
          for await (const _chunk of stream) { /* loading into the cache is the point */ }
        } finally {
          stream.destroy();
        }
      }).catch(() => undefined);
    }
  }

  /**
   * Aborted transactions overlapping [from, upTo) for a read_committed fetch served from the tier:
   * the remote transaction indexes from the segment holding `from` on, then the local log's
   * (Kafka's collectAbortedTransactions over both tiers).
   */
  async abortedTransactions(tip: TopicIdPartition, log: PartitionLog, from: number, upTo: number): Promise<AbortedTxn[]> {
    const out: AbortedTxn[] = [];
    const segments = this.o.metadata.store.listRemoteLogSegments(tip)
      .filter((m) => m.state === S.COPY_SEGMENT_FINISHED && m.endOffset >= from && this.isReferenced(tip, m))
      .sort((a, b) => a.startOffset - b.startOffset);
    for (const m of segments) {
      if (this.withoutTxnIndex.has(m.remoteLogSegmentId.id)) continue;
      let index: Buffer;
      try {
        index = await this.o.rsm.fetchIndex(m, IndexType.TRANSACTION);
      } catch (e) {
        if (e instanceof RemoteResourceNotFoundError) {
          this.withoutTxnIndex.add(m.remoteLogSegmentId.id);
          continue;
        }
        if (e instanceof RemoteStorageError) throw new StorageError('KAFKA_STORAGE_ERROR', e.message, { cause: e });
        throw e;
      }
      const aborted = new TxnIndex('', index).aborted;
      out.push(...aborted.filter((a) => a.lastOffset >= from && a.firstOffset < upTo));
      // Every abort that could overlap the range was written before one whose LSO passed it.
      if (aborted.some((a) => a.lastStableOffset > upTo)) return out;
    }
    out.push(...log.abortedTransactions(Math.max(from, log.localLogStartOffset), upTo));
    return out;
  }

  /**
   * What a follower restarting at the leader's local log start needs from the tier (Kafka's
   * buildRemoteLogAuxState): the leader-epoch checkpoint and producer snapshot copied with the
   * segment that ends just below it. Null while no finished copy of that segment is known here.
   */
  async remoteLogAuxState(tip: TopicIdPartition, localStart: number, logStart: number): Promise<{ epochs: { epoch: number; startOffset: number }[]; producerSnapshot: Buffer | null } | null> {
    const md = this.o.metadata;
    await md.catchUp(md.metadataPartition(tip));
    if (localStart <= logStart) return { epochs: [], producerSnapshot: null };
    const m = md.store.listRemoteLogSegments(tip)
      .filter((x) => x.state === S.COPY_SEGMENT_FINISHED && x.startOffset < localStart && x.endOffset >= localStart - 1 && this.isReferenced(tip, x))
      .sort((a, b) => b.eventTimestampMs - a.eventTimestampMs)[0];
    if (m === undefined) return null;
    const epochs = parseEpochCheckpoint(await this.o.rsm.fetchIndex(m, IndexType.LEADER_EPOCH), `${name(tip)} remote leader-epoch-checkpoint`);
    let producerSnapshot: Buffer | null = null;
    try {
      producerSnapshot = await this.o.rsm.fetchIndex(m, IndexType.PRODUCER_SNAPSHOT);
    } catch (e) {
      if (!(e instanceof RemoteResourceNotFoundError)) throw e;
    }
    return { epochs, producerSnapshot };
  }

  /**
   * ListOffsets by timestamp in the remote tier (Kafka's findOffsetByTimestamp): the first record at
   * or after `timestampMs` and at or above the log start offset, from the oldest copy on; null when
   * the remote tier has none (the local log is asked next).
   */
  async offsetForTimestamp(tip: TopicIdPartition, log: PartitionLog, timestampMs: number): Promise<{ offset: number; timestamp: number; leaderEpoch: number } | null> {
    const segments = this.o.metadata.store.listRemoteLogSegments(tip)
      .filter((m) => m.state === S.COPY_SEGMENT_FINISHED && m.endOffset >= log.logStartOffset && m.maxTimestampMs >= timestampMs && this.isReferenced(tip, m))
      .sort((a, b) => a.startOffset - b.startOffset);
    try {
      for (const m of segments) {
        // The time index's last entry before the timestamp says where to start reading.
        const timeIndex = await this.o.rsm.fetchIndex(m, IndexType.TIMESTAMP);
        let relative = Math.max(0, log.logStartOffset - m.startOffset);
        for (let at = 0; at + 12 <= timeIndex.length; at += 12) {
          const ts = Number(timeIndex.readBigInt64BE(at));
          if (ts >= timestampMs || (at > 0 && ts === 0)) break;
          relative = Math.max(relative, timeIndex.readInt32BE(at + 8));
        }
        const position = lookupPosition(await this.o.rsm.fetchIndex(m, IndexType.OFFSET), relative);
        for await (const bytes of batchesOf(await this.o.rsm.fetchLogSegment(m, position))) {
          const v = new RecordBatchView(bytes);
          if (v.isControl || v.maxTimestamp < timestampMs || v.lastOffset < log.logStartOffset) continue;
          const logAppendTime = v.timestampType === TimestampType.LogAppendTime;
          for (const r of iterateRecords(v, await decompressBatchBody(v))) {
            const ts = logAppendTime ? v.maxTimestamp : r.timestamp;
            if (ts >= timestampMs && r.offset >= log.logStartOffset) return { offset: r.offset, timestamp: ts, leaderEpoch: v.partitionLeaderEpoch };
          }
        }
      }
    } catch (e) {
      if (e instanceof RemoteStorageError) throw new StorageError('KAFKA_STORAGE_ERROR', `remote timestamp lookup in ${name(tip)}: ${e.message}`, { cause: e });
      throw e;
    }
    return null;
  }

  // ---- what /metrics and the admin API show ------------------------------------------------------

  /** Bytes of the partition's finished remote segments (Kafka's RemoteLogSizeBytes). */
  remoteLogSizeBytes(tip: TopicIdPartition): number {
    let n = 0;
    for (const m of this.o.metadata.store.listRemoteLogSegments(tip)) if (m.state === S.COPY_SEGMENT_FINISHED) n += m.segmentSizeInBytes;
    return n;
  }

  /**
   * What the console shows of one partition's tier, from this broker's replay of the metadata: the
   * bytes of its finished remote segments, the first offset they hold (at or above the log start
   * offset), and null when nothing is copied.
   */
  remoteLogSummary(tip: TopicIdPartition, logStartOffset: number): { sizeBytes: number; startOffset: number | null } {
    let sizeBytes = 0;
    let startOffset: number | null = null;
    for (const m of this.o.metadata.store.listRemoteLogSegments(tip)) {
      if (m.state !== S.COPY_SEGMENT_FINISHED) continue;
      sizeBytes += m.segmentSizeInBytes;
      if (m.endOffset >= logStartOffset) startOffset = Math.min(startOffset ?? Infinity, Math.max(m.startOffset, logStartOffset));
    }
    return { sizeBytes, startOffset };
  }

  /** The backend's read caches against their bounds (null parts: no such cache). */
  cacheStats(): { chunk: RemoteCacheStats | null; index: RemoteCacheStats | null } {
    return this.o.rsm.cacheStats?.() ?? { chunk: null, index: null };
  }

  /** Remote log size per topic over the partitions led here (Kafka's RemoteLogSizeBytes, reported by leaders). */
  remoteLogSizeByTopic(): Map<string, number> {
    const out = new Map<string, number>();
    for (const t of this.tasks.values()) {
      if (t.role !== 'leader') continue;
      const tip = t.p.topicIdPartition;
      out.set(tip.topic, (out.get(tip.topic) ?? 0) + this.remoteLogSizeBytes(tip));
    }
    return out;
  }

  /** Copy lag of the partitions led here: bytes and segments rolled but not yet copied (Kafka's RemoteCopyLagBytes/Segments). */
  copyLag(): Map<string, { bytes: number; segments: number }> {
    const out = new Map<string, { bytes: number; segments: number }>();
    for (const t of this.tasks.values()) {
      const log = t.p.log;
      if (!log.remoteLogEnabled || t.role !== 'leader') continue;
      const lag = out.get(t.p.topicIdPartition.topic) ?? { bytes: 0, segments: 0 };
      const segs = log.segments;
      for (let i = 0; i + 1 < segs.length; i++) {
        if (segs[i + 1]!.baseOffset - 1 <= log.highestOffsetInRemoteStorage || segs[i + 1]!.baseOffset > log.lastStableOffset) continue;
        lag.bytes += segs[i]!.size;
        lag.segments++;
      }
      out.set(t.p.topicIdPartition.topic, lag);
    }
    return out;
  }
}

const name = (p: TopicIdPartition): string => `${p.topic}-${p.partition}`;

/** The leader epochs of [base, nextBase) from the log's leader-epoch cache, the first starting at `base`. */
function segmentLeaderEpochs(log: PartitionLog, base: number, nextBase: number): SegmentLeaderEpoch[] {
  const out: SegmentLeaderEpoch[] = [];
  for (const e of log.epochCache.all) {
    if (e.startOffset >= nextBase) break;
    if (e.startOffset <= base) out.length = 0;
    out.push({ leaderEpoch: e.epoch, startOffset: Math.max(base, e.startOffset) });
  }
  if (out.length === 0) throw new StorageError('KAFKA_STORAGE_ERROR', `${log.name}: no leader epoch covers offsets ${base}..${nextBase - 1}`);
  return out;
}

/** The position of the last offset-index entry at or below `relativeOffset` (8-byte entries: relative offset, position). */
export function lookupPosition(index: Buffer, relativeOffset: number): number {
  let position = 0;
  for (let at = 0; at + 8 <= index.length; at += 8) {
    const rel = index.readInt32BE(at);
    const pos = index.readInt32BE(at + 4);
    // A preallocated index ends in zeros: an entry after the first that goes back is past the end.
    if (at > 0 && (rel === 0 && pos === 0)) break;
    if (rel > relativeOffset) break;
    position = pos;
  }
  return position;
}

/** Bytes of the batch whose header starts at `at` (its length field plus the offset and length fields). */
function batchBytesAt(b: Buffer, at: number): number {
  const size = b.readInt32BE(at + BatchHeaderAt.BatchLength) + LOG_OVERHEAD_BYTES;
  if (size <= LOG_OVERHEAD_BYTES) throw new StorageError('CORRUPT_MESSAGE', `remote segment has a batch of ${size} bytes`);
  return size;
}

/**
 * The whole batches of a segment stream, one Buffer each, in order; the stream is destroyed when
 * the caller stops. A batch inside one piece of the stream is a view of it (no copy); only a batch
 * cut by a piece's end is copied, with just its own bytes of the next piece (copying the pieces
 * whole cost a chunk's worth per chunk boundary, and made every later batch a copy's view).
 */
async function* batchesOf(stream: Readable): AsyncGenerator<Buffer> {
  // The start of a batch the previous piece cut off (a view of it, or a copy once it spans pieces).
  let carry: Buffer | null = null;
  try {
    for await (const piece of stream) {
      const chunk = piece as Buffer;
      let at = 0;
      if (carry !== null) {
        const headerMissing = Math.max(0, LOG_OVERHEAD_BYTES - carry.length);
        const size = chunk.length < headerMissing ? -1
          : batchBytesAt(headerMissing > 0 ? Buffer.concat([carry, chunk.subarray(0, headerMissing)]) : carry, 0);
        if (size < 0 || chunk.length < size - carry.length) {
          carry = Buffer.concat([carry, chunk]);
          continue;
        }
        at = size - carry.length;
        const whole = Buffer.concat([carry, chunk.subarray(0, at)], size);
        carry = null;
        yield whole;
      }
      while (chunk.length - at >= LOG_OVERHEAD_BYTES) {
        const size = batchBytesAt(chunk, at);
        if (chunk.length - at < size) break;
        yield chunk.subarray(at, at + size);
        at += size;
      }
      if (at < chunk.length) carry = chunk.subarray(at);
    }
  } finally {
    stream.destroy();
  }
}

/**
 * Reads whole batches off a segment stream as PartitionLog.read would from a local segment. Batches
 * that lie next to each other in one piece (one cached chunk) are returned as one view of it, so
 * the usual answer (within one chunk) copies no record bytes; the chunk is never written to.
 */
async function readBatches(stream: Readable, offset: number, maxBytes: number, upTo: number, minOneBatch: boolean): Promise<Buffer> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  for await (const batch of batchesOf(stream)) {
    const base = Number(batch.readBigInt64BE(BatchHeaderAt.BaseOffset));
    if (base >= upTo) break;
    if (base + batch.readInt32BE(BatchHeaderAt.LastOffsetDelta) < offset) continue;
    if (keptBytes + batch.length > maxBytes && !(keptBytes === 0 && minOneBatch)) break;
    const last = kept[kept.length - 1];
    if (last !== undefined && last.buffer === batch.buffer && last.byteOffset + last.length === batch.byteOffset) {
      kept[kept.length - 1] = Buffer.from(last.buffer, last.byteOffset, last.length + batch.length);
    } else {
      kept.push(batch);
    }
    keptBytes += batch.length;
    if (keptBytes >= maxBytes) break;
  }
  return kept.length === 1 ? kept[0]! : Buffer.concat(kept, keptBytes);
}
