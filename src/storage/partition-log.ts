// The log of one partition replica (Kafka's UnifiedLog + LocalLog): an ordered list of segments
// in <log.dir>/<topic>-<partition>/, the leader-epoch cache, producer state, and the offsets that
// bound it (log start offset, recovery point, high watermark, log end offset).
//
// Appends are validated and then written in one synchronous block, so the in-memory state and
// the files never disagree between two awaits. An I/O error takes the log offline: every later
// call throws StorageError('KAFKA_STORAGE_ERROR') and nothing more is written.
import * as nodePath from 'node:path';
import { assert, type Clock } from '../util/index.js';
import {
  Compression, RecordBatchView, RecordsError, TimestampType, decompressBatchBody, iterateBatches, validateBatch, RecordCursor,
  parseControlRecordType,
} from '../records/index.js';
import { StorageError, ioErrorCode, recordValidationError, type RecordError } from './errors.js';
import type { FileCache, FileHandle } from './fs.js';
import type { LogConfig } from './config.js';
import type { LogFlushStats } from './flush-stats.js';
import { LogFlusher } from './group-flush.js';
import { LeaderEpochCache } from './epoch-cache.js';
import { ProducerStateManager, type MarkerInfo } from './producer-state.js';
import type { AbortedTxn } from './indexes.js';
import {
  LogSegment, LOG_SUFFIX, DELETED_SUFFIX, CLEANED_SUFFIX, SWAP_SUFFIX, segmentFileName,
} from './segment.js';

export const SNAPSHOT_SUFFIX = '.snapshot';
export const LEADER_EPOCH_CHECKPOINT = 'leader-epoch-checkpoint';
export const PARTITION_METADATA = 'partition.metadata';

export interface AppendInfo {
  firstOffset: number;
  lastOffset: number;
  /** -1 unless the topic uses LogAppendTime. */
  logAppendTimeMs: number;
  /** The batch was a retry of one already in the log; the offsets are the original ones. */
  duplicate: boolean;
  recordCount: number;
  bytes: number;
}

/**
 * A leader's per-record check (broker-side schema validation): null when the record may be
 * appended, else why not. It reads the key and value in place (`c.body` at `c.keyStart`,
 * `c.valueStart`); no record object is built.
 */
export type RecordCheck = (c: RecordCursor) => string | null;

export interface OpenOptions {
  dir: string;
  files: FileCache;
  config: LogConfig;
  clock: Clock;
  recoveryPoint: number;
  logStartOffset: number;
  /** The directory was closed cleanly: segments need no re-validation. */
  hadCleanShutdown: boolean;
  /** The directory does not exist yet (a partition new to this broker): nothing to list, recover or replay. */
  created?: boolean;
  log?: (message: string) => void;
}

export interface RecoveryReport { segmentsScanned: number; batchesScanned: number; bytesTruncated: number; segmentsDropped: number }

export interface TimestampAndOffset { offset: number; timestamp: number; leaderEpoch: number }

export class PartitionLog {
  segments: LogSegment[] = [];
  logStartOffset: number;
  recoveryPoint: number;
  highWatermark = 0;
  readonly epochCache: LeaderEpochCache;
  readonly producerState = new ProducerStateManager();
  offlineCause: Error | null = null;
  /** First offset the cleaner has not yet compacted (cleaner-offset-checkpoint). */
  cleanerCheckpoint = 0;
  lastFlushMs: number;
  recovery: RecoveryReport = { segmentsScanned: 0, batchesScanned: 0, bytesTruncated: 0, segmentsDropped: 0 };
  private unflushedMessages = 0;
  /**
   * flush.messages: the log end offset the last append that must be durable reached; until the
   * recovery point passes it, what lies past the recovery point is not yet acknowledged.
   */
  private durableWanted = 0;
  /** Where flush.messages appends have their grouped fsyncs (the LogManager's, one per log directory). */
  flusher: LogFlusher | null = null;
  private rolledFlushes: Promise<void> = Promise.resolve();
  /** A roll created a segment file whose directory entry flush() has not fsynced yet. */
  private dirUnsynced = false;
  /** Counts truncations, so an fsync that was running during one does not move the recovery point. */
  private truncations = 0;
  private closed = false;
  private pendingDeletes: { paths: string[]; dueMs: number }[] = [];
  onOffline: (e: Error) => void = () => {};
  /** Told after each roll: a leader's tier copy task wakes for the segment that became copyable. */
  onRoll: (() => void) | null = null;
  /** Where this log's fsync times are counted (its owner's: the LogManager's, the metadata log's store). */
  flushStats: LogFlushStats | null = null;
  /**
   * Background write-back (LogManager): once `bytes` have been appended since the last flush
   * began, `request` is told, and its owner fsyncs the log off the request path (flushAsync).
   */
  writeback: { readonly bytes: number; readonly request: (log: PartitionLog) => void } | null = null;
  /** Bytes appended since the last flush began. */
  private bytesSinceFlush = 0;
  /**
   * Tiered storage (KIP-405): the highest offset copied to the remote tier, -1 when none (Kafka's
   * highestOffsetInRemoteStorage). Set by the remote log manager; local retention deletes only
   * segments at or below it.
   */
  highestOffsetInRemoteStorage = -1;

  private constructor(readonly dir: string, readonly files: FileCache, public config: LogConfig, readonly clock: Clock, o: OpenOptions) {
    this.logStartOffset = o.logStartOffset;
    this.recoveryPoint = o.recoveryPoint;
    this.epochCache = new LeaderEpochCache(files.fs, nodePath.join(dir, LEADER_EPOCH_CHECKPOINT));
    this.lastFlushMs = clock.nowMs();
    this.log = o.log ?? (() => {});
  }
  private readonly log: (message: string) => void;

  get name(): string { return nodePath.basename(this.dir); }
  get fs() { return this.files.fs; }
  get activeSegment(): LogSegment { return this.segments[this.segments.length - 1]!; }
  get logEndOffset(): number { return this.activeSegment.nextOffset; }
  get size(): number { let n = 0; for (const s of this.segments) n += s.size; return n; }

  /**
   * The end of what may be acknowledged and count toward the high watermark: the log end offset,
   * except while an append that flush.messages says must be durable waits for its fsync, then the
   * recovery point (everything below it is fsynced).
   */
  get durableEndOffset(): number { return this.durableWanted > this.recoveryPoint ? this.recoveryPoint : this.logEndOffset; }

  /**
   * Resolves once everything below `offset` (by default: every append so far that flush.messages
   * wants durable) is fsynced, through the log directory's grouped fsync rounds. Rejects with
   * KAFKA_STORAGE_ERROR when the log went offline or was deleted first.
   */
  async whenDurable(offset = this.durableWanted): Promise<void> {
    while (this.recoveryPoint < Math.min(offset, this.durableWanted)) {
      if (this.closed) throw new StorageError('KAFKA_STORAGE_ERROR', `log ${this.name} closed before offset ${offset} was fsynced`);
      if (this.offlineCause) throw new StorageError('KAFKA_STORAGE_ERROR', `log ${this.name} is offline: ${this.offlineCause.message}`);
      await (this.flusher ??= new LogFlusher()).request(this);
    }
  }

  /**
   * The first offset held on local disk (Kafka's localLogStartOffset). Without tiering it is the log
   * start offset; with it, the log start offset may lie below it, in the remote tier.
   */
  get localLogStartOffset(): number { return Math.max(this.logStartOffset, this.segments[0]!.baseOffset); }
  /** remote.storage.enable as the topic config has it (the broker turns it off when it has no tiered storage). */
  get remoteLogEnabled(): boolean { return this.config.remoteStorageEnable; }
  /** Bytes of the local segments not yet copied to the remote tier (Kafka's onlyLocalLogSegmentsSize). */
  get onlyLocalLogSegmentsSize(): number {
    let n = 0;
    for (let i = 0; i < this.segments.length; i++) if ((this.segments[i + 1]?.baseOffset ?? Infinity) - 1 > this.highestOffsetInRemoteStorage) n += this.segments[i]!.size;
    return n;
  }

  /** min(first open transaction, high watermark): what read_committed consumers may see. */
  get lastStableOffset(): number {
    const u = this.producerState.firstUnstableOffset();
    return u === null ? this.highWatermark : Math.min(u, this.highWatermark);
  }

  static open(o: OpenOptions): PartitionLog {
    const log = new PartitionLog(o.dir, o.files, o.config, o.clock, o);
    log.guard(() => (o.created === true ? log.create() : log.load(o.hadCleanShutdown)));
    return log;
  }

  // ---------------------------------------------------------------- loading and recovery

  /**
   * A new partition: its directory, and a first segment whose files come with its first write.
   * Creating a file costs about a millisecond on a loaded disk; 10,000 new partitions paid five
   * each (directory, log, two indexes, partition.metadata) on the event loop the Raft driver shares.
   */
  private create(): void {
    this.fs.mkdirs(this.dir);
    const base = Math.max(this.logStartOffset, this.recoveryPoint, 0);
    this.segments.push(LogSegment.planned(this.dir, base, this.files, this.config, this.clock.nowMs()));
    // The segment's file, once written, is a new directory entry that a flush must make durable.
    this.dirUnsynced = true;
    this.logStartOffset = base;
    this.recoveryPoint = base;
    this.highWatermark = base;
    this.cleanerCheckpoint = base;
  }

  private load(hadCleanShutdown: boolean): void {
    const fs = this.fs;
    fs.mkdirs(this.dir);
    const names = fs.list(this.dir);
    // Leftovers of an interrupted delete or clean are removed; a finished swap is completed.
    for (const n of names) {
      if (n.endsWith(DELETED_SUFFIX) || n.endsWith(CLEANED_SUFFIX) || n.endsWith('.tmp')) fs.remove(nodePath.join(this.dir, n));
    }
    for (const n of names.filter((x) => x.endsWith(LOG_SUFFIX + SWAP_SUFFIX))) this.completeSwap(Number(n.slice(0, 20)));
    const bases = fs.list(this.dir).filter((n) => n.endsWith(LOG_SUFFIX) && /^\d{20}\.log$/.test(n)).map((n) => Number(n.slice(0, 20))).sort((a, b) => a - b);
    const now = this.clock.nowMs();
    for (const base of bases) {
      const path = nodePath.join(this.dir, segmentFileName(base, LOG_SUFFIX));
      this.segments.push(new LogSegment(this.dir, base, this.files, this.config, now, { size: fs.fileSize(path) }));
    }
    if (this.segments.length === 0) {
      this.segments.push(LogSegment.create(this.dir, Math.max(this.logStartOffset, this.recoveryPoint, 0), this.files, this.config, now));
    }
    // The last segment takes appends; it may be one the tier linked (a crash after a roll whose new
    // segment had no file yet).
    this.activeSegment.ownLogFile();
    if (!hadCleanShutdown || this.recoveryPoint > this.logEndOffsetUnchecked()) this.recoverUnflushed();
    // A tiered log's start offset may lie below its first local segment (the rest is remote).
    if (this.logStartOffset < this.segments[0]!.baseOffset && !this.remoteLogEnabled) this.logStartOffset = this.segments[0]!.baseOffset;
    if (this.logStartOffset > this.logEndOffset) this.logStartOffset = this.logEndOffset;
    this.recoveryPoint = Math.min(this.recoveryPoint, this.logEndOffset);
    this.epochCache.truncateFromEnd(this.logEndOffset);
    this.epochCache.truncateFromStart(this.logStartOffset);
    this.epochCache.flush();
    // Kafka's UnifiedLog: the high watermark starts at the log start offset and its owner restores
    // it from the replication-offset-checkpoint. Not at the recovery point: a replica flushes what it
    // wrote as leader before it was committed, and a restarted replica must not read (or replay)
    // a suffix the new leader may not have.
    this.highWatermark = this.logStartOffset;
    this.cleanerCheckpoint = this.logStartOffset;
    this.rebuildProducerState(this.logEndOffset);
  }

  private logEndOffsetUnchecked(): number { return this.activeSegment.nextOffset; }

  /** Re-validates every batch from the segment holding the recovery point; drops a bad tail. */
  private recoverUnflushed(): void {
    const start = Math.max(0, this.segments.findIndex((s, i) => (this.segments[i + 1]?.baseOffset ?? Infinity) > this.recoveryPoint));
    const report: RecoveryReport = { segmentsScanned: 0, batchesScanned: 0, bytesTruncated: 0, segmentsDropped: 0 };
    for (let i = start; i < this.segments.length; i++) {
      const seg = this.segments[i]!;
      const { truncatedBytes, validBatches } = seg.recover((v) => this.epochCache.assign(v.partitionLeaderEpoch, v.baseOffset));
      report.segmentsScanned++;
      report.batchesScanned += validBatches;
      if (truncatedBytes > 0) {
        report.bytesTruncated += truncatedBytes;
        // Everything after a torn or corrupt batch is unreachable: drop the later segments.
        const dropped = this.segments.splice(i + 1);
        for (const d of dropped) { report.bytesTruncated += d.size; for (const p of d.existingPaths()) this.fs.remove(p); }
        report.segmentsDropped = dropped.length;
        break;
      }
    }
    // An empty non-first segment after a crash carries nothing; keep the active one only.
    this.recovery = report;
    if (report.bytesTruncated > 0) {
      this.log(`${this.name}: recovery truncated ${report.bytesTruncated} bytes (${report.segmentsDropped} segments dropped) at offset ${this.logEndOffset}`);
    }
    for (const s of this.segments.slice(start)) s.flush();
    this.recoveryPoint = this.logEndOffset;
  }

  /** Finishes a cleaner swap that a crash interrupted: the .swap files replace what they cover. */
  private completeSwap(base: number): void {
    const swap = new LogSegment(this.dir, base, this.files, this.config, 0, { size: this.fs.fileSize(nodePath.join(this.dir, segmentFileName(base, LOG_SUFFIX) + SWAP_SUFFIX)), suffix: SWAP_SUFFIX });
    const end = swap.nextOffset;
    for (const n of this.fs.list(this.dir)) {
      const m = /^(\d{20})\.(log|index|timeindex|txnindex)$/.exec(n);
      if (m && Number(m[1]) >= base && Number(m[1]) < Math.max(end, base + 1)) this.fs.remove(nodePath.join(this.dir, n));
    }
    swap.renameTo('');
  }

  /** Producer state up to `upTo`: the newest snapshot at or below it, then the batches after. */
  private rebuildProducerState(upTo: number): void {
    const ps = this.producerState;
    ps.clear();
    const snapshots = this.snapshotOffsets();
    for (const off of snapshots) if (off > upTo) this.fs.remove(this.snapshotPath(off));
    const usable = snapshots.filter((o) => o <= upTo && o >= this.logStartOffset);
    let from = this.logStartOffset;
    for (let i = usable.length - 1; i >= 0; i--) {
      try {
        ps.loadSnapshot(this.fs.readFile(this.snapshotPath(usable[i]!)), usable[i]!);
        from = usable[i]!;
        break;
      } catch (e) {
        if (!(e instanceof StorageError)) throw e;
        this.log(`${this.name}: ignoring ${e.message}`);
        ps.clear();
      }
    }
    for (const seg of this.segments) {
      if (seg.nextOffset <= from) continue;
      const start = seg.translateOffset(from)?.position ?? seg.size;
      for (const v of seg.batches(start)) {
        if (v.lastOffset < from) continue;
        if (v.baseOffset >= upTo) return;
        this.applyProducerBatch(v, seg);
      }
    }
  }

  private applyProducerBatch(v: RecordBatchView, seg: LogSegment): void {
    const done = this.producerState.update(v, v.isControl ? this.marker(v) : null);
    if (done?.isAborted) {
      const lso = this.producerState.firstUnstableOffset() ?? (done.lastOffset + 1);
      const txn: AbortedTxn = { producerId: done.producerId, firstOffset: done.firstOffset, lastOffset: done.lastOffset, lastStableOffset: lso };
      if (!seg.txnIndex.aborted.some((t) => t.producerId === txn.producerId && t.firstOffset === txn.firstOffset)) seg.txnIndex.append(txn, this.files);
    }
  }

  /** A transaction marker's type and coordinator epoch: one uncompressed record, key and value; null for other control batches. */
  private marker(v: RecordBatchView): MarkerInfo | null {
    if (v.recordCount < 1 || v.compression !== Compression.None) return null;
    const c = new RecordCursor(v, v.body());
    if (!c.next()) return null;
    const key = c.keyLength < 0 ? null : c.body.subarray(c.keyStart, c.keyStart + c.keyLength);
    const type = parseControlRecordType(key);
    if (type !== 'COMMIT' && type !== 'ABORT') return null;
    const value = c.valueLength < 6 ? null : c.body.subarray(c.valueStart, c.valueStart + c.valueLength);
    return { type, coordinatorEpoch: value ? value.readInt32BE(2) : -1 };
  }

  snapshotPath(offset: number): string { return nodePath.join(this.dir, segmentFileName(offset, SNAPSHOT_SUFFIX)); }
  snapshotOffsets(): number[] {
    return this.fs.list(this.dir).filter((n) => /^\d{20}\.snapshot$/.test(n)).map((n) => Number(n.slice(0, 20))).sort((a, b) => a - b);
  }

  // ---------------------------------------------------------------- faults

  /** Runs an I/O step; an errno-style failure takes the log offline and becomes KAFKA_STORAGE_ERROR. */
  guard<T>(fn: () => T): T {
    if (this.offlineCause) throw new StorageError('KAFKA_STORAGE_ERROR', `log ${this.name} is offline: ${this.offlineCause.message}`);
    try {
      return fn();
    } catch (e) {
      if (e instanceof StorageError || e instanceof RecordsError || !ioErrorCode(e)) throw e;
      this.offlineCause = e as Error;
      this.onOffline(e as Error);
      throw new StorageError('KAFKA_STORAGE_ERROR', `I/O error in log ${this.name}: ${(e as Error).message}`, { cause: e });
    }
  }

  /**
   * guard() for a step that changes the log: refused once the log is closed or deleted. An append
   * that was still validating (a compacted topic's keys are read asynchronously) when its log
   * closed would otherwise reopen the files and write at the closed log's end, over a log opened
   * on the same directory since (a broker restarted in the same process, a topic re-created), and
   * leave bytes there that no CRC ever checked.
   */
  private mutate<T>(fn: () => T): T {
    if (this.closed) throw new StorageError('KAFKA_STORAGE_ERROR', `log ${this.name} is closed`);
    return this.guard(fn);
  }

  // ---------------------------------------------------------------- appends

  /**
   * A leader's append of client batches: validates them, assigns offsets from the log end offset
   * by rewriting each base offset in place, stamps the leader epoch (and the append time for
   * LogAppendTime), and writes them in one write.
   */
  async appendAsLeader(records: Buffer, leaderEpoch: number, origin: 'client' | 'coordinator' = 'client', check: RecordCheck | null = null,
    /**
     * Asked right before the write, after validation (which may await): false refuses the append
     * (NOT_LEADER_OR_FOLLOWER). The replica manager's "still the leader at `leaderEpoch`": Kafka
     * holds the partition's leaderIsrUpdateLock across the append for the same reason.
     */
    current: (() => boolean) | null = null): Promise<AppendInfo> {
    // Transaction coordinators write control batches (markers); clients may not.
    const views = this.parse(records, origin === 'client');
    // Records are read (and decompressed) only when a rule needs them, once for all the rules.
    const compacted = this.config.cleanupPolicy.includes('compact');
    if (compacted || check !== null) await checkRecords(views, this.name, compacted, check);
    // One reading of the clock judges the timestamps and stamps LogAppendTime.
    const now = this.clock.nowMs();
    if (this.config.messageTimestampType !== 'LogAppendTime' && this.timestampOutOfRange(views, now)) {
      throw await this.timestampRecordErrors(views, now);
    }
    const info = this.mutate(() => {
      if (current !== null && !current()) throw new StorageError('NOT_LEADER_OR_FOLLOWER', `${this.name}: no longer led at leader epoch ${leaderEpoch}`);
      return this.appendValidated(records, views, leaderEpoch, now);
    });
    // flush.messages: acknowledged only once fsynced (a retried batch too: its first append may still wait).
    if (this.recoveryPoint < Math.min(info.lastOffset + 1, this.durableWanted)) await this.whenDurable(info.lastOffset + 1);
    return info;
  }

  /**
   * A follower's append: offsets and epochs are the leader's; they must continue this log. The
   * leader-epoch cache and producer state follow each batch, so this replica can lead with them.
   * A Fetch answer may end in a partial batch (Kafka's leader cuts at max bytes); it is dropped,
   * and fetched whole next time (Kafka's trimInvalidBytes).
   */
  appendAsFollower(fetched: Buffer): AppendInfo {
    const views = this.parse(fetched, false, true);
    const last = views.at(-1);
    const records = last === undefined ? fetched.subarray(0, 0) : fetched.subarray(0, last.offset + last.sizeInBytes);
    return this.mutate(() => {
      if (views.length === 0) return this.emptyAppend();
      const first = views[0]!;
      if (first.baseOffset !== this.logEndOffset) {
        throw new StorageError('NOT_CONTIGUOUS', `follower append at ${first.baseOffset} does not continue log end offset ${this.logEndOffset}`);
      }
      for (let i = 1; i < views.length; i++) {
        if (views[i]!.baseOffset <= views[i - 1]!.lastOffset) throw new StorageError('NOT_CONTIGUOUS', `batch at ${views[i]!.baseOffset} overlaps the previous one`);
      }
      return this.write(records, views, -1, false);
    });
  }

  /** CreateTime timestamps outside message.timestamp.before/after.max.ms, judged from batch headers alone. */
  private timestampOutOfRange(views: RecordBatchView[], now: number): boolean {
    for (const v of views) {
      if (this.timestampRefused(v.baseTimestamp, now) || this.timestampRefused(v.maxTimestamp, now)) return true;
    }
    return false;
  }

  private timestampRefused(ts: number, now: number): boolean {
    return ts >= 0 && (now - ts > this.config.messageTimestampBeforeMaxMs || ts - now > this.config.messageTimestampAfterMaxMs);
  }

  /** Only once a batch header shows a bad timestamp are its records read, to say which ones (KIP-467). */
  private async timestampRecordErrors(views: RecordBatchView[], now: number): Promise<StorageError> {
    const errors: RecordError[] = [];
    const [before, after] = [this.config.messageTimestampBeforeMaxMs, this.config.messageTimestampAfterMaxMs];
    await forEachRecord(views, (c, batchIndex) => {
      if (!this.timestampRefused(c.timestamp, now)) return;
      errors.push({ batchIndex, message: `Timestamp ${c.timestamp} of message with offset ${c.offsetDelta} is out of range. The timestamp should be within [${now - before}, ${now + after}]` });
    });
    // The batch header alone was out of range (a maxTimestamp no record has): blame the whole batch.
    if (errors.length === 0) errors.push({ batchIndex: 0, message: 'the batch\'s timestamps are out of range' });
    return recordValidationError('INVALID_TIMESTAMP', errors);
  }

  private emptyAppend(): AppendInfo {
    return { firstOffset: this.logEndOffset, lastOffset: this.logEndOffset - 1, logAppendTimeMs: -1, duplicate: false, recordCount: 0, bytes: 0 };
  }

  private parse(records: Buffer, fromClient: boolean, allowPartialTail = false): RecordBatchView[] {
    try {
      const views: RecordBatchView[] = [];
      for (const v of iterateBatches(records, { allowPartialTail })) {
        validateBatch(v, { fromClient, compacted: !fromClient });
        views.push(v);
      }
      return views;
    } catch (e) {
      if (e instanceof RecordsError) throw new StorageError(e.code === 'UNSUPPORTED_MAGIC' ? 'UNSUPPORTED_FOR_MESSAGE_FORMAT' : e.code === 'UNSUPPORTED_COMPRESSION_TYPE' ? 'UNSUPPORTED_COMPRESSION_TYPE' : e.code === 'INVALID_RECORD' ? 'INVALID_RECORD' : 'CORRUPT_MESSAGE', e.message);
      throw e;
    }
  }

  private appendValidated(records: Buffer, views: RecordBatchView[], leaderEpoch: number, now: number): AppendInfo {
    if (views.length === 0) return this.emptyAppend();
    // Idempotent producers: a retried batch is answered with the offsets it got the first time.
    for (const v of views) {
      const marker = v.isControl ? this.marker(v) : null;
      const check = marker ? this.producerState.checkMarker(v, marker) : this.producerState.checkSequence(v);
      if (check.kind === 'error') throw new StorageError(check.error, check.message);
      if (check.kind === 'duplicate') {
        if (views.length !== 1) throw new StorageError('OUT_OF_ORDER_SEQUENCE_NUMBER', 'a duplicate batch arrived together with other batches');
        return { firstOffset: check.batch.firstOffset, lastOffset: check.batch.lastOffset, logAppendTimeMs: -1, duplicate: true, recordCount: 0, bytes: 0 };
      }
    }
    const logAppendTime = this.config.messageTimestampType === 'LogAppendTime';
    let next = this.logEndOffset;
    for (const v of views) {
      v.baseOffset = next;
      v.partitionLeaderEpoch = leaderEpoch;
      if (logAppendTime) v.setLogAppendTime(now);
      next = v.lastOffset + 1;
    }
    const info = this.write(records, views, leaderEpoch, true);
    info.logAppendTimeMs = logAppendTime ? now : -1;
    return info;
  }

  private write(records: Buffer, views: RecordBatchView[], leaderEpoch: number, asLeader: boolean): AppendInfo {
    const first = views[0]!;
    const last = views[views.length - 1]!;
    assert(first.baseOffset >= this.logEndOffset, `append at ${first.baseOffset} below log end offset ${this.logEndOffset}`);
    const seg = this.maybeRoll(records.length, last.maxTimestamp, last.lastOffset);
    if (asLeader) this.epochCache.assign(leaderEpoch, first.baseOffset);
    else for (const v of views) this.epochCache.assign(v.partitionLeaderEpoch, v.baseOffset);
    seg.append(records, views);
    for (const v of views) this.applyProducerBatch(v, seg);
    let count = 0;
    for (const v of views) count += v.recordCount;
    this.unflushedMessages += count;
    this.bytesSinceFlush += records.length;
    if (this.unflushedMessages >= this.config.flushMessages) {
      // Not fsynced here, on the event loop: the caller awaits whenDurable(), which joins this log
      // to the next grouped fsync round of its log directory.
      this.durableWanted = this.logEndOffset;
    } else if (this.writeback !== null && this.bytesSinceFlush >= this.writeback.bytes) this.writeback.request(this);
    return { firstOffset: first.baseOffset, lastOffset: last.lastOffset, logAppendTimeMs: -1, duplicate: false, recordCount: count, bytes: records.length };
  }

  private maybeRoll(bytes: number, maxTimestamp: number, lastOffset: number): LogSegment {
    const seg = this.activeSegment;
    if (seg.size === 0) return seg;
    const rollTs = seg.rollingBasedTimestamp;
    const waited = rollTs !== null && rollTs >= 0 ? maxTimestamp - rollTs : this.clock.nowMs() - seg.createdMs;
    const full = seg.size + bytes > this.config.segmentBytes || seg.indexIsFull || lastOffset - seg.baseOffset > 0x7fffffff;
    if (full || waited > this.config.segmentMs - this.config.segmentJitterMs) return this.roll();
    return seg;
  }

  /**
   * Closes the active segment (indexes trimmed, producer snapshot written) and starts a new one at
   * the log end offset. Nothing is fsynced here: a roll happens in the middle of a produce request,
   * and three fsyncs per roll (snapshot, its directory, the new segment's directory) blocked the
   * event loop for 7 of 20 s under sustained load with 16 MiB segments. The rolled segment, the
   * snapshot and the directory are fsynced in the background (flushRolledSegment) before the
   * recovery point passes them, as Kafka flushes a rolled segment on its scheduler. A snapshot a
   * power cut tears fails its CRC on load and an older one (or the log) is used instead; flush()
   * fsyncs the directory when a roll has not been covered yet.
   */
  roll(): LogSegment {
    const old = this.activeSegment;
    const seg = this.mutate(() => {
      const base = this.logEndOffset;
      if (old.size === 0) return old;
      this.fs.writeFileUnsynced(this.snapshotPath(base), this.producerState.encodeSnapshot());
      old.flushIndexes();
      const next = LogSegment.create(this.dir, base, this.files, this.config, this.clock.nowMs());
      this.segments.push(next);
      this.dirUnsynced = true;
      this.flushRolledSegment(old, base, [this.snapshotPath(base)]);
      return next;
    });
    if (seg !== old) this.onRoll?.();
    return seg;
  }

  /**
   * fsyncs a rolled segment (and `alsoPaths`, then the directory) off the event loop, then moves
   * the recovery point to its end. The flushes are chained so the recovery point only passes
   * segments that are all on disk.
   */
  private flushRolledSegment(seg: LogSegment, end: number, alsoPaths: string[] = []): void {
    const paths = [...seg.existingPaths(), ...alsoPaths.filter((p) => this.fs.exists(p))];
    const truncations = this.truncations;
    let startMs = 0;
    this.rolledFlushes = this.rolledFlushes
      .then(() => { startMs = performance.now(); return Promise.all(paths.map((p) => this.fs.syncFileAsync(p))); })
      .then(() => this.fs.syncDirAsync(this.dir))
      .then(
        () => { this.flushStats?.record(performance.now() - startMs); if (!this.closed && this.truncations === truncations) this.recoveryPoint = Math.max(this.recoveryPoint, end); },
        (e: unknown) => {
          // Deleted or compacted away meanwhile, or the log closed (close flushes everything).
          if (this.closed || ioErrorCode(e) === 'ENOENT') return;
          if (!ioErrorCode(e)) throw e;
          this.offlineCause ??= e as Error;
          this.onOffline(e as Error);
        },
      );
  }

  /** Resolves once every rolled segment's background fsync has finished. */
  rolledSegmentsFlushed(): Promise<void> { return this.rolledFlushes; }

  /** fsyncs everything up to the log end offset and moves the recovery point there. */
  flush(): void {
    const startMs = performance.now();
    this.guard(() => {
      if (this.dirUnsynced && this.activeSegment.hasLogFile) {
        // A segment rolled (or a new partition's first one was written) since the directory was
        // last fsynced here: its entry must be durable too.
        this.fs.syncDir(this.dir);
        this.dirUnsynced = false;
      }
      for (const s of this.segments) if (s.nextOffset > this.recoveryPoint || s === this.activeSegment) s.flush();
      this.epochCache.flush();
      this.recoveryPoint = this.logEndOffset;
      this.unflushedMessages = 0;
      this.bytesSinceFlush = 0;
      this.lastFlushMs = this.clock.nowMs();
      this.flushStats?.record(performance.now() - startMs);
    });
  }

  /**
   * flush() off the event loop: fsyncs the .log files of every segment not yet below the recovery
   * point as they are at the call, then moves the recovery point to the log end offset of the call,
   * unless the log was truncated meanwhile (it then stays where the truncation left it: too low is
   * safe, past the new end is not). The index files are not fsynced: recovery rebuilds them for
   * every segment from the one holding the recovery point, so they make nothing durable (roll()
   * and flush() still fsync them). A failed fsync takes the log offline, as in flushRolledSegment;
   * a segment deleted meanwhile only keeps the recovery point where it is.
   */
  flushAsync(): Promise<void> {
    // Closed (flushed by close()) or deleted (its files renamed away: reopening one would fail and
    // take the whole directory offline). A flush.messages append waiting for it fails in whenDurable.
    if (this.closed) return Promise.resolve();
    let start: { end: number; truncations: number; messages: number; handles: FileHandle[] };
    try {
      start = this.guard(() => {
        // Rare (a new epoch) and small; recovery trusts this file for the offsets below the recovery point.
        this.epochCache.flush();
        this.bytesSinceFlush = 0;
        return {
          end: this.logEndOffset, truncations: this.truncations, messages: this.unflushedMessages,
          handles: this.segments.filter((s) => s.nextOffset > this.recoveryPoint || s === this.activeSegment).map((s) => s.logFile()),
        };
      });
    } catch (e) {
      return Promise.reject(e as Error);
    }
    const { end, truncations, messages, handles } = start;
    const startMs = performance.now();
    const syncs = handles.map((h) => h.syncAsync());
    if (this.dirUnsynced) {
      this.dirUnsynced = false;
      syncs.push(this.fs.syncDirAsync(this.dir));
    }
    return Promise.all(syncs).then(
      () => {
        this.flushStats?.record(performance.now() - startMs);
        if (this.closed || this.truncations !== truncations) return;
        this.recoveryPoint = Math.max(this.recoveryPoint, end);
        this.unflushedMessages = Math.max(0, this.unflushedMessages - messages);
        this.lastFlushMs = this.clock.nowMs();
      },
      (e: unknown) => {
        if (this.closed || ioErrorCode(e) === 'ENOENT') return;
        if (!ioErrorCode(e)) throw e;
        this.offlineCause ??= e as Error;
        this.onOffline(e as Error);
        throw new StorageError('KAFKA_STORAGE_ERROR', `I/O error in log ${this.name}: ${(e as Error).message}`, { cause: e });
      },
    );
  }

  /** flush.ms: called periodically. */
  maybeFlushByTime(nowMs: number): void {
    if (this.unflushedMessages > 0 && nowMs - this.lastFlushMs >= this.config.flushMs) this.flush();
  }

  // ---------------------------------------------------------------- reads

  private checkOffset(offset: number): void {
    if (offset < this.logStartOffset || offset > this.logEndOffset) {
      throw new StorageError('OFFSET_OUT_OF_RANGE', `offset ${offset} is outside ${this.logStartOffset}..${this.logEndOffset} of ${this.name}`);
    }
    if (offset < this.localLogStartOffset) {
      throw new StorageError('OFFSET_MOVED_TO_TIERED_STORAGE', `offset ${offset} of ${this.name} is below the local log start offset ${this.localLogStartOffset}: it is in the remote tier`);
    }
  }

  /** Index of the segment holding `offset` (the last with baseOffset <= offset). */
  private segmentIndexFor(offset: number): number {
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.segments[mid]!.baseOffset <= offset) lo = mid; else hi = mid - 1;
    }
    return lo;
  }

  /**
   * Whole batches from the one holding `offset`, at most `maxBytes`, and none starting at or past
   * `upTo` (the high watermark or last stable offset). With `minOneBatch` (Kafka's minOneMessage,
   * KIP-74) a first batch larger than `maxBytes` comes whole; without it the read is empty. The
   * bytes are read into `alloc(size)` (fresh memory by default).
   */
  read(offset: number, maxBytes: number, upTo: number, minOneBatch = true, alloc: (bytes: number) => Buffer = Buffer.allocUnsafe): Buffer {
    return this.guard(() => {
      this.checkOffset(offset);
      const empty = Buffer.alloc(0);
      if (offset >= upTo || offset >= this.logEndOffset) return empty;
      for (let i = this.segmentIndexFor(offset); i < this.segments.length; i++) {
        const seg = this.segments[i]!;
        const data = seg.read(Math.max(offset, seg.baseOffset), maxBytes, upTo, minOneBatch, alloc);
        if (data) return data;
        if ((this.segments[i + 1]?.baseOffset ?? Infinity) >= upTo) break;
      }
      return empty;
    });
  }

  /**
   * Aborted transactions overlapping [from, upTo) for read_committed fetches. An entry lives in the
   * segment of its ABORT marker, which may lie past `upTo` (another transaction held the LSO back),
   * so the walk goes on until an entry's last stable offset passes `upTo`: every abort that could
   * overlap the range was written before that one (Kafka's collectAbortedTransactions).
   */
  abortedTransactions(from: number, upTo: number): AbortedTxn[] {
    const out: AbortedTxn[] = [];
    for (let i = this.segmentIndexFor(from); i < this.segments.length; i++) {
      const seg = this.segments[i]!;
      out.push(...seg.txnIndex.overlapping(from, upTo));
      if (seg.txnIndex.aborted.some((t) => t.lastStableOffset > upTo)) break;
    }
    return out;
  }

  /** The first record with timestamp >= ts (ListOffsets by time), or null. */
  async offsetForTimestamp(timestampMs: number): Promise<TimestampAndOffset | null> {
    const segs = this.guard(() => this.segments.filter((s) => s.nextOffset > this.logStartOffset && s.maxTimestampAndOffset.timestamp >= timestampMs));
    for (const seg of segs) {
      const start = Math.max(seg.timeIndex.lookup(timestampMs), this.logStartOffset, seg.baseOffset);
      const h = this.guard(() => seg.translateOffset(start));
      if (!h) continue;
      for (const v of this.guard(() => [...seg.batches(h.position)])) {
        if (v.maxTimestamp < timestampMs) continue;
        const found = await firstRecord(v, (offset, ts) => ts >= timestampMs && offset >= this.logStartOffset);
        if (found) return found;
      }
    }
    return null;
  }

  /** The record with the largest timestamp (ListOffsets MAX_TIMESTAMP, KIP-734), or null when empty. */
  async maxTimestampOffset(): Promise<TimestampAndOffset | null> {
    let best: { seg: LogSegment; timestamp: number; offset: number } | null = null;
    for (const seg of this.guard(() => this.segments.filter((s) => s.nextOffset > this.logStartOffset))) {
      const m = this.guard(() => seg.maxTimestampAndOffset);
      if (m.timestamp >= 0 && (!best || m.timestamp > best.timestamp)) best = { seg, ...m };
    }
    if (!best) return null;
    const b = best;
    const h = this.guard(() => b.seg.translateOffset(b.offset));
    if (!h) return null;
    const v = new RecordBatchView(this.guard(() => b.seg.readBytes(h.position, h.size)));
    return (await firstRecord(v, (_o, ts) => ts === b.timestamp)) ?? { offset: v.lastOffset, timestamp: b.timestamp, leaderEpoch: v.partitionLeaderEpoch };
  }

  endOffsetForEpoch(epoch: number): { leaderEpoch: number; endOffset: number } | null {
    const r = this.epochCache.endOffsetFor(epoch, this.logEndOffset);
    return r.leaderEpoch < 0 ? null : r;
  }

  updateHighWatermark(offset: number): void {
    this.highWatermark = Math.max(this.logStartOffset, Math.min(offset, this.logEndOffset));
  }

  // ---------------------------------------------------------------- truncation and deletion

  /**
   * Removes everything at or past `offset` (a follower dropping a divergent suffix). At or past the
   * log end offset nothing is removed but the leader-epoch cache still loses epochs starting there:
   * a broker that became leader (its epoch start recorded) and lost the leadership before appending
   * anything keeps that empty epoch as its latest otherwise, sends it as its last fetched epoch,
   * and is answered DivergingEpoch to the same offset again and again (Kafka's truncateTo does the
   * same for the same reason).
   */
  truncateTo(offset: number): void {
    this.mutate(() => {
      if (offset >= this.logEndOffset) {
        this.epochCache.truncateFromEnd(this.logEndOffset);
        this.epochCache.flush();
        return;
      }
      if (offset <= this.logStartOffset) { this.truncateFullyAndStartAt(offset); return; }
      const i = this.segmentIndexFor(offset);
      const removed = this.segments.splice(i + 1);
      for (const s of removed) this.deleteSegmentFiles(s, true);
      const seg = this.activeSegment;
      seg.truncateTo(offset);
      if (seg.size === 0 && seg.baseOffset !== offset && this.segments.length > 1) {
        this.segments.pop();
        this.deleteSegmentFiles(seg, true);
      }
      this.afterTruncation();
    });
  }

  /**
   * Empties the log and restarts it at `offset` (a follower far behind the leader's log start). A
   * tiered follower restarts at the leader's local log start with the leader's log start offset
   * below it (Kafka's TierStateMachine), so `logStartOffset` may be lower.
   */
  truncateFullyAndStartAt(offset: number, logStartOffset = offset): void {
    this.mutate(() => {
      for (const s of this.segments.splice(0)) this.deleteSegmentFiles(s, true);
      for (const o of this.snapshotOffsets()) this.fs.remove(this.snapshotPath(o));
      this.segments.push(LogSegment.create(this.dir, offset, this.files, this.config, this.clock.nowMs()));
      this.logStartOffset = Math.min(offset, logStartOffset);
      this.epochCache.clear();
      this.afterTruncation();
    });
  }

  /**
   * A follower below its leader's local log start (Kafka's TierStateMachine): empty, restarting at
   * the leader's local log start with the leader's log start offset, the leader-epoch cache and
   * producer state as the remote tier's copy of the segment before that offset has them.
   */
  restoreFromRemoteTier(localLogStartOffset: number, logStartOffset: number, epochs: readonly { epoch: number; startOffset: number }[], producerSnapshot: Buffer | null): void {
    this.truncateFullyAndStartAt(localLogStartOffset, logStartOffset);
    this.guard(() => {
      this.epochCache.replaceAll(epochs.filter((e) => e.startOffset < localLogStartOffset));
      this.epochCache.truncateFromStart(this.logStartOffset);
      this.epochCache.flush();
      if (producerSnapshot === null || producerSnapshot.length === 0) return;
      try {
        this.producerState.loadSnapshot(producerSnapshot, localLogStartOffset);
        this.fs.writeFileAtomic(this.snapshotPath(localLogStartOffset), producerSnapshot);
      } catch (e) {
        if (!(e instanceof StorageError)) throw e;
        this.producerState.clear();
        this.log(`${this.name}: ignoring the remote tier's producer snapshot: ${e.message}`);
      }
    });
  }

  private afterTruncation(): void {
    this.truncations++;
    const leo = this.logEndOffset;
    // The truncation is made durable before anything that relies on it: the epoch checkpoint written
    // below, and the next appends (a follower's new batches at these offsets, whose epochs that
    // checkpoint records). Otherwise a power cut can bring the truncated batches back under a
    // checkpoint that names the new epoch from their offset, and the next fetch, sent with that
    // epoch, no longer shows the divergence: the stale batches stay below the high watermark.
    // Truncations are rare (a leader change), so fsyncing here on the event loop costs little.
    this.activeSegment.flush();
    this.fs.syncDir(this.dir);
    this.epochCache.truncateFromEnd(leo);
    this.epochCache.flush();
    this.recoveryPoint = Math.min(this.recoveryPoint, leo);
    this.durableWanted = Math.min(this.durableWanted, leo);
    this.highWatermark = Math.min(this.highWatermark, leo);
    this.cleanerCheckpoint = Math.min(this.cleanerCheckpoint, leo);
    this.rebuildProducerState(leo);
  }

  /** DeleteRecords: moves the log start offset forward; whole segments below it are deleted. */
  deleteRecordsBefore(offset: number): number {
    return this.mutate(() => {
      if (offset > this.highWatermark) throw new StorageError('OFFSET_OUT_OF_RANGE', `cannot delete records before ${offset}: above the high watermark ${this.highWatermark}`);
      if (offset <= this.logStartOffset) return this.logStartOffset;
      this.logStartOffset = offset;
      // Not flushed here either (see deleteSegmentsWhile): load cuts a stale checkpoint to the log start.
      this.epochCache.truncateFromStart(offset);
      this.cleanerCheckpoint = Math.max(this.cleanerCheckpoint, offset);
      this.deleteSegmentsWhile((s, next) => next !== undefined && next.baseOffset <= this.logStartOffset);
      return this.logStartOffset;
    });
  }

  /**
   * Retention (cleanup.policy includes delete): whole closed segments older than retention.ms or
   * beyond retention.bytes go; an expired active segment is rolled first so it can go next time.
   * Returns the number of segments deleted.
   */
  deleteOldSegments(nowMs: number): number {
    return this.mutate(() => {
      let deleted = this.deleteSegmentsWhile((s, next) => next !== undefined && next.baseOffset <= this.logStartOffset);
      if (!this.config.cleanupPolicy.includes('delete')) return deleted;
      // Tiered (Kafka's UnifiedLog with remote storage): local retention, and only over segments
      // already copied, so the log start offset stays where the remote tier's retention puts it.
      const tiered = this.remoteLogEnabled && !this.config.remoteLogCopyDisable;
      const local = this.remoteLogEnabled;
      const retentionMs = tiered && this.config.localRetentionMs !== -2 ? this.config.localRetentionMs : this.config.retentionMs;
      const retentionBytes = tiered && this.config.localRetentionBytes !== -2 ? this.config.localRetentionBytes : this.config.retentionBytes;
      const copied = (next: LogSegment) => !tiered || next.baseOffset - 1 <= this.highestOffsetInRemoteStorage;
      if (retentionMs >= 0) {
        const expired = (s: LogSegment) => nowMs - s.largestTimestamp() > retentionMs;
        if (this.activeSegment.size > 0 && expired(this.activeSegment)) this.roll();
        deleted += this.deleteSegmentsWhile((s, next) => next !== undefined && copied(next) && expired(s), local);
      }
      if (retentionBytes >= 0) {
        let excess = this.size - retentionBytes;
        deleted += this.deleteSegmentsWhile((s, next) => {
          if (next === undefined || excess - s.size < 0 || !copied(next)) return false;
          excess -= s.size;
          return true;
        }, local);
      }
      return deleted;
    });
  }

  /**
   * The remote tier's retention moved the log start offset (Kafka's
   * updateLogStartOffsetFromRemoteTier): the leader-epoch cache follows, and local segments wholly
   * below it go too.
   */
  updateLogStartOffsetFromRemoteTier(offset: number): void {
    this.mutate(() => {
      if (offset <= this.logStartOffset) return;
      this.logStartOffset = Math.min(offset, this.highWatermark, this.logEndOffset);
      this.epochCache.truncateFromStart(this.logStartOffset);
      this.deleteSegmentsWhile((_s, next) => next !== undefined && next.baseOffset <= this.logStartOffset);
    });
  }

  /**
   * Deletes segments from the oldest while `pred` holds; never the active segment. `localOnly`
   * (local retention of a tiered log): the segments stay in the remote tier, so the log start
   * offset, the leader-epoch cache and producer snapshots below it stay as they are.
   */
  private deleteSegmentsWhile(pred: (s: LogSegment, next: LogSegment | undefined) => boolean, localOnly = false): number {
    let n = 0;
    while (this.segments.length > 1 && pred(this.segments[0]!, this.segments[1])) {
      const s = this.segments.shift()!;
      this.deleteSegmentFiles(s, false);
      n++;
    }
    // Producer snapshots below the local log start were copied with their segments.
    if (n > 0 && localOnly) for (const o of this.snapshotOffsets()) if (o < this.segments[0]!.baseOffset) this.fs.remove(this.snapshotPath(o));
    if (n > 0 && !localOnly) {
      this.logStartOffset = Math.max(this.logStartOffset, this.segments[0]!.baseOffset);
      // Not flushed here (two fsyncs on the event loop per retention pass, as Kafka found in
      // KAFKA-15046): a checkpoint that still lists older epochs is cut to the log start on load.
      this.epochCache.truncateFromStart(this.logStartOffset);
      this.cleanerCheckpoint = Math.max(this.cleanerCheckpoint, this.logStartOffset);
      for (const o of this.snapshotOffsets()) if (o < this.logStartOffset) this.fs.remove(this.snapshotPath(o));
    }
    return n;
  }

  /** Renames a segment's files to .deleted and removes them after file.delete.delay.ms (or now). */
  deleteSegmentFiles(s: LogSegment, now: boolean): void {
    if (now) {
      s.closeFiles();
      for (const p of s.existingPaths()) this.fs.remove(p);
      return;
    }
    s.renameTo(DELETED_SUFFIX);
    this.pendingDeletes.push({ paths: s.existingPaths(), dueMs: this.clock.nowMs() + this.config.fileDeleteDelayMs });
  }

  /**
   * Removes .deleted files whose delay has passed, off the event loop (as Kafka deletes them on
   * its scheduler). A failure leaves a .deleted file that the next open removes, so it is only
   * logged, never a reason to take the log offline.
   */
  purgeDeletedFiles(nowMs: number): void {
    if (this.pendingDeletes.length === 0) return;
    const due = this.pendingDeletes.filter((d) => d.dueMs <= nowMs);
    this.pendingDeletes = this.pendingDeletes.filter((d) => d.dueMs > nowMs);
    for (const d of due) {
      for (const p of d.paths) this.fs.removeAsync(p).catch((e: Error) => this.log(`${this.name}: could not remove ${p}: ${e.message}`));
    }
  }

  /** Clean close: everything fsynced, indexes trimmed, a producer snapshot at the log end. */
  close(): void {
    if (this.closed) return;
    if (this.offlineCause) { this.closed = true; for (const s of this.segments) s.closeFiles(); return; }
    try {
      this.closeCleanly();
    } finally {
      this.closed = true;
    }
  }

  /** The log's directory is being deleted (LogManager.deleteLog): its files close, and nothing may change it any more. */
  markDeleted(): void {
    this.closed = true;
    for (const s of this.segments) s.closeFiles();
  }

  private closeCleanly(): void {
    this.guard(() => {
      this.flush();
      // Always a snapshot at the log end (as Kafka takes one on close), so the next open replays
      // nothing: without one it re-read every batch of the log to rebuild producer state (1.3 s
      // for 4 GiB). An empty one needs no fsync: torn by a power cut, it fails its CRC and the
      // log is read as before.
      const snapshot = this.producerState.encodeSnapshot();
      if (this.producerState.producers.size > 0) this.fs.writeFileAtomic(this.snapshotPath(this.logEndOffset), snapshot);
      else if (this.logEndOffset > this.logStartOffset) this.fs.writeFileUnsynced(this.snapshotPath(this.logEndOffset), snapshot);
      for (const d of this.pendingDeletes) for (const p of d.paths) this.fs.remove(p);
      this.pendingDeletes = [];
      for (const s of this.segments) s.closeFiles();
    });
  }
}

/**
 * Kafka refuses records without a key on compacted topics, and a topic with schema validation
 * refuses records its check refuses; each refused record is named (KIP-467). Control batches
 * (transaction markers) carry no client records.
 */
async function checkRecords(views: RecordBatchView[], logName: string, requireKeys: boolean, check: RecordCheck | null): Promise<void> {
  const errors: RecordError[] = [];
  let index = 0;
  for (const v of views) {
    if (v.isControl) { index += v.recordCount; continue; }
    const c = new RecordCursor(v, await decompressBatchBody(v));
    for (; c.next(); index++) {
      if (requireKeys && c.keyLength < 0) { errors.push({ batchIndex: index, message: `Compacted topic cannot accept message without key in topic partition ${logName}.` }); continue; }
      const refused = check === null ? null : check(c);
      if (refused !== null) errors.push({ batchIndex: index, message: refused });
    }
  }
  if (errors.length > 0) throw recordValidationError('INVALID_RECORD', errors);
}

/** Every record of an append, with its index among all of the append's records. */
async function forEachRecord(views: RecordBatchView[], fn: (c: RecordCursor, batchIndex: number) => void): Promise<void> {
  let index = 0;
  for (const v of views) {
    const c = new RecordCursor(v, await decompressBatchBody(v));
    while (c.next()) fn(c, index++);
  }
}

/** The first record of a batch that satisfies `pred`. */
async function firstRecord(v: RecordBatchView, pred: (offset: number, timestamp: number) => boolean): Promise<TimestampAndOffset | null> {
  const body = await decompressBatchBody(v);
  const c = new RecordCursor(v, body);
  while (c.next()) {
    const ts = v.timestampType === TimestampType.LogAppendTime ? v.maxTimestamp : c.timestamp;
    if (pred(c.offset, ts)) return { offset: c.offset, timestamp: ts, leaderEpoch: v.partitionLeaderEpoch };
  }
  return null;
}
