// The Raft log on the storage engine: a Kafka partition log directory (Kafka names it
// __cluster_metadata-0) holding v2 record batches. Each entry batch of the core is one record batch
// (a follower writes the bytes it fetched) whose partitionLeaderEpoch is its epoch and whose offsets are the
// entries' offsets (appended follower-style, so the log keeps them); control entries go in control
// batches keyed LEADER_CHANGE, as on the wire (raftWire's encoder builds both). Snapshots are
// `<endOffset 20 digits>-<epoch 10 digits>.checkpoint` files in the same directory, written
// atomically; their bytes are the state machine's own, or, with `snapshotFormat: 'records'`, Kafka's
// snapshot record format (header, the state machine's record batches, footer; snapshot-file.ts).
// A new directory may hold Kafka's bootstrap snapshot (0-0: no records, the initial voter set of a
// dynamic quorum, written by `logline storage format`); it loads like any other.
//
// The latest snapshot is the source of the log start offset: on load, entries below its end offset
// are skipped (and whole segments below it deleted), and a log that ends before it is restarted at
// it. The snapshot file is made durable before the log below it is deleted, so a crash in between
// leaves the snapshot with the old entries above it, which is what a snapshot without `replaceLog`
// leaves; entries older than the snapshot's epoch are then dropped, as they cannot follow it.
//
// The recovery point (below it every byte is fsynced) is kept in `raft-recovery-point-checkpoint`,
// in Kafka's offset checkpoint format, written at close and at most every
// `recoveryCheckpointIntervalMs` after a flush, so a restart re-validates only the segment holding
// it. It is never written above what is fsynced, and it is rewritten at once when a truncation
// lowers the recovery point below it (Kafka's LogManager.truncateTo does the same): a stale value
// is safe, a high one would let recovery trust unsynced bytes.
import * as nodePath from 'node:path';
import {
  FileCache, NodeFileSystem, PartitionLog, StorageError, logConfig, readOffsetCheckpoint, writeOffsetCheckpoint, type FileSystem, type LogConfig, type LogFlushStats,
} from '../../storage/index.js';
import { iterateBatches } from '../../records/index.js';
import { systemClock, type Clock } from '../../util/index.js';
import { copyBatch, endOffsetOf, sliceBatch } from '../core/batch.js';
import type { EntryBatch, LogOp, Snapshot } from '../core/types.js';
import { decodeEntries, encodeBatch } from '../net/messages.js';
import type { LoadedLog, LogStore } from './ports.js';
import { decodeSnapshotFile, encodeSnapshotFile } from './snapshot-file.js';
import { unwrapSnapshotData, wrapSnapshotData, type VoterSet } from '../core/voters.js';

/** Kafka's name for the metadata log's partition directory. */
export const METADATA_LOG_DIR_NAME = '__cluster_metadata-0';
export const SNAPSHOT_FILE_SUFFIX = '.checkpoint';
/** The entries a truncation in the middle of a batch keeps, while it rewrites them (see truncate). */
export const TRUNCATION_REPAIR_FILE = 'raft-truncation-repair';
/** The log's recovery point, as one line of a Kafka offset checkpoint. */
export const RECOVERY_POINT_FILE = 'raft-recovery-point-checkpoint';
const CHECKPOINT_TOPIC = '__cluster_metadata';
const CHECKPOINT_KEY = `${CHECKPOINT_TOPIC}-0`;
const SNAPSHOT_NAME = /^(\d{20})-(\d{10})\.checkpoint$/;
const READ_CHUNK_BYTES = 1 << 20;

export function snapshotFileName(endOffset: number, epoch: number): string {
  return `${String(endOffset).padStart(20, '0')}-${String(epoch).padStart(10, '0')}${SNAPSHOT_FILE_SUFFIX}`;
}

/** The name of the latest `.checkpoint` in `dir` (highest end offset, then epoch), if any. */
function latestSnapshotName(fs: FileSystem, dir: string): { endOffset: number; epoch: number; name: string } | undefined {
  let best: { endOffset: number; epoch: number; name: string } | undefined;
  if (!fs.isDirectory(dir)) return undefined;
  for (const n of fs.list(dir)) {
    const m = SNAPSHOT_NAME.exec(n);
    if (m === null) continue;
    const endOffset = Number(m[1]);
    const epoch = Number(m[2]);
    if (best === undefined || endOffset > best.endOffset || (endOffset === best.endOffset && epoch > best.epoch)) best = { endOffset, epoch, name: n };
  }
  return best;
}

/**
 * Kafka's bootstrap snapshot (Snapshots.BOOTSTRAP_SNAPSHOT_ID, end offset 0, epoch 0) in a new
 * metadata log directory `dir` (`<log dir>/__cluster_metadata-0`): the initial voter set of a
 * KIP-853 dynamic quorum, as `kafka-storage format --standalone` or `--initial-controllers` write
 * it. A store opening the directory loads it as its latest snapshot, so the voters come from it
 * (before any VotersRecord of the log) and the state machine starts empty at offset 0.
 */
export function writeBootstrapSnapshot(fs: FileSystem, dir: string, voters: VoterSet): void {
  fs.mkdirs(dir);
  const bytes = encodeSnapshotFile({ id: { endOffset: 0, epoch: 0 }, data: wrapSnapshotData(voters, new Uint8Array(0)) });
  fs.writeFileAtomic(nodePath.join(dir, snapshotFileName(0, 0)), bytes);
}

/** The voter set recorded in the latest snapshot of a metadata log directory written in Kafka's format, if there is one. */
export function latestSnapshotVoters(fs: FileSystem, dir: string): VoterSet | undefined {
  const best = latestSnapshotName(fs, dir);
  if (best === undefined) return undefined;
  const id = { endOffset: best.endOffset, epoch: best.epoch };
  return unwrapSnapshotData(decodeSnapshotFile(id, fs.readFile(nodePath.join(dir, best.name)))).voters;
}

export interface StorageLogStoreOptions {
  /** Defaults to the real file system. */
  readonly fs?: FileSystem;
  readonly clock?: Clock;
  /** Over Kafka's defaults; segment deletes are never delayed (nothing reads a deleted segment). */
  readonly config?: Partial<LogConfig>;
  /** How often a flush may rewrite the recovery point file (Kafka's log.flush.offset.checkpoint.interval.ms). */
  readonly recoveryCheckpointIntervalMs?: number;
  /** Where the log's fsync times are counted (a node's LogManager's, so /metrics shows them). */
  readonly flushStats?: LogFlushStats;
  /**
   * `records`: the state machine's snapshot bytes are v2 record batches, and snapshot files are
   * written in Kafka's format around them (snapshot-file.ts; the cluster metadata). `raw` (the
   * default): the core's bytes as they are.
   */
  readonly snapshotFormat?: 'raw' | 'records';
}

export class StorageLogStore implements LogStore {
  private readonly fs: FileSystem;
  private readonly files: FileCache;
  private readonly clock: Clock;
  private readonly config: LogConfig;
  private log: PartitionLog | undefined;
  /** A segment was created or deleted since the last sync: the directory needs an fsync too. */
  private dirDirty = false;
  private readonly recoveryCheckpointIntervalMs: number;
  /** What the recovery point file holds (0 when there is none). */
  private checkpointedRecoveryPoint = 0;
  private lastCheckpointMs = 0;
  /** The last syncAsync's completion: each `done` runs after the previous one. */
  private syncTail: Promise<void> = Promise.resolve();
  private readonly snapshotFormat: 'raw' | 'records';
  private readonly flushStats: LogFlushStats | null;

  /** `dir` is the partition directory itself (for a node, `<metadata.log.dir>/__cluster_metadata-0`). */
  constructor(readonly dir: string, opts: StorageLogStoreOptions = {}) {
    this.fs = opts.fs ?? new NodeFileSystem();
    this.files = new FileCache(this.fs, 64);
    this.clock = opts.clock ?? systemClock;
    // No time or size retention: only snapshots move the log start.
    this.config = logConfig({ fileDeleteDelayMs: 0, retentionMs: -1, retentionBytes: -1, ...opts.config });
    this.recoveryCheckpointIntervalMs = opts.recoveryCheckpointIntervalMs ?? 60_000;
    this.snapshotFormat = opts.snapshotFormat ?? 'raw';
    this.flushStats = opts.flushStats ?? null;
    this.fs.mkdirs(dir);
  }

  /** Reopens the log (recovery validates every batch and drops a torn tail) and reads it back. */
  load(): LoadedLog {
    this.closeLog();
    const snapshot = this.readLatestSnapshot();
    const start = snapshot?.id.endOffset ?? 0;
    this.checkpointedRecoveryPoint = this.readRecoveryPoint();
    this.lastCheckpointMs = this.clock.nowMs();
    const log = PartitionLog.open({
      dir: this.dir, files: this.files, config: this.config, clock: this.clock,
      recoveryPoint: this.checkpointedRecoveryPoint, logStartOffset: start, hadCleanShutdown: false,
    });
    log.flushStats = this.flushStats;
    this.log = log;
    this.finishTruncation();
    if (log.logEndOffset < start || log.segments[0]!.baseOffset > start) {
      log.truncateFullyAndStartAt(start);
      this.dirDirty = true;
    } else {
      this.deleteBefore(start);
    }
    const batches = this.readBatches(start);
    // A crash between a snapshot and the deletion of a log it replaced can leave older entries above it.
    const stale = snapshot === undefined ? -1 : batches.findIndex((b) => b.epoch < snapshot.id.epoch);
    if (stale >= 0) {
      log.truncateTo(batches[stale]!.baseOffset);
      batches.length = stale;
    }
    this.sync();
    this.lowerRecoveryCheckpoint();
    return { snapshot, batches };
  }

  apply(ops: readonly LogOp[]): void {
    const log = this.open();
    for (const op of ops) {
      switch (op.kind) {
        case 'append':
          // One record batch per entry batch: a follower's as received, a leader's encoded once.
          if (op.batches.length === 1) log.appendAsFollower(encodeBatch(op.batches[0]!));
          else if (op.batches.length > 1) log.appendAsFollower(Buffer.concat(op.batches.map(encodeBatch)));
          break;
        case 'truncate':
          this.truncate(op.offset);
          this.lowerRecoveryCheckpoint();
          break;
        case 'snapshot':
          this.writeSnapshot(op.snapshot, op.replaceLog);
          this.lowerRecoveryCheckpoint();
          break;
      }
    }
  }

  /** fsyncs the log's segments (and the directory after segments came or went). */
  sync(): void {
    this.open().flush();
    this.syncDirIfDirty();
    this.maybeCheckpointRecoveryPoint();
  }

  /**
   * The segment files are fsynced off the event loop (PartitionLog.flushAsync); the directory, when
   * segments came or went, is fsynced at the call (rare: a roll, a truncation, a snapshot). Each
   * `done` runs after the previous call's, so completions come in call order as the driver expects.
   */
  syncAsync(done: (err: Error | null) => void): void {
    let flushed: Promise<void>;
    try {
      const log = this.open();
      this.syncDirIfDirty();
      flushed = log.flushAsync();
    } catch (e) {
      flushed = Promise.reject(e as Error);
    }
    const result = flushed.then(() => null, (e: unknown) => (e instanceof Error ? e : new Error(String(e))));
    this.syncTail = this.syncTail.then(() => result).then((err) => {
      if (err === null) {
        try { this.maybeCheckpointRecoveryPoint(); } catch (e) { err = e as Error; }
      }
      done(err);
    }).catch((e: unknown) => {
      // `done` threw: a bug in the caller; report it as uncaught rather than lose it in the chain.
      setImmediate(() => { throw e; });
    });
  }

  close(): void {
    this.closeLog();
    this.files.closeAll();
  }

  /** The partition log underneath, for tests and tools. */
  get partitionLog(): PartitionLog { return this.open(); }

  private open(): PartitionLog {
    if (this.log === undefined) this.load();
    return this.log!;
  }

  private closeLog(): void {
    const log = this.log;
    if (log === undefined) return;
    this.log = undefined;
    log.close();
    // close() fsynced the log up to its end, unless it is offline.
    if (log.offlineCause === null) this.writeRecoveryPoint(log.recoveryPoint);
  }

  private syncDirIfDirty(): void {
    if (!this.dirDirty) return;
    this.fs.syncDir(this.dir);
    this.dirDirty = false;
  }

  private readRecoveryPoint(): number {
    const path = nodePath.join(this.dir, RECOVERY_POINT_FILE);
    try {
      return readOffsetCheckpoint(this.fs, path).get(CHECKPOINT_KEY) ?? 0;
    } catch (e) {
      // A malformed file costs only a full re-validation.
      if (e instanceof StorageError) return 0;
      throw e;
    }
  }

  /** Durable (written atomically); `offset` must be at most what is fsynced. */
  private writeRecoveryPoint(offset: number): void {
    writeOffsetCheckpoint(this.fs, nodePath.join(this.dir, RECOVERY_POINT_FILE), [{ topic: CHECKPOINT_TOPIC, partition: 0, offset }]);
    this.checkpointedRecoveryPoint = offset;
    this.lastCheckpointMs = this.clock.nowMs();
  }

  /** After a flush: at most once per interval (the write is two fsyncs on the event loop). */
  private maybeCheckpointRecoveryPoint(): void {
    const log = this.log;
    if (log === undefined || log.recoveryPoint <= this.checkpointedRecoveryPoint) return;
    if (this.clock.nowMs() - this.lastCheckpointMs < this.recoveryCheckpointIntervalMs) return;
    this.writeRecoveryPoint(log.recoveryPoint);
  }

  /** A truncation lowered the recovery point below the file's: the file follows before anything is appended. */
  private lowerRecoveryCheckpoint(): void {
    const log = this.log;
    if (log !== undefined && log.recoveryPoint < this.checkpointedRecoveryPoint) this.writeRecoveryPoint(log.recoveryPoint);
  }

  /**
   * The partition log truncates whole batches, so a cut inside one drops its entries below the cut
   * too, and those may be committed (the core truncates to the leader's end offset of an epoch,
   * which need not be where a local batch ends). They are written first to a repair file, then
   * appended again after the truncation and fsynced; a crash in between is finished on load.
   */
  private truncate(requested: number): void {
    const log = this.log!;
    if (requested >= log.logEndOffset) return;
    const offset = Math.max(requested, log.logStartOffset);
    const first = offset === log.logStartOffset ? undefined
      : decodeEntries(firstBatch(log.read(offset, 1, log.logEndOffset)), Number.MAX_SAFE_INTEGER)[0];
    this.dirDirty = true;
    if (first === undefined || first.baseOffset >= offset) { log.truncateTo(offset); return; }
    this.sync();
    const repair = encodeBatch(sliceBatch(first, first.baseOffset, offset));
    const repairPath = nodePath.join(this.dir, TRUNCATION_REPAIR_FILE);
    this.fs.writeFileAtomic(repairPath, repair);
    log.truncateTo(offset);
    log.appendAsFollower(repair);
    this.sync();
    this.fs.remove(repairPath);
  }

  /** Completes a truncation a crash interrupted (see truncate). */
  private finishTruncation(): void {
    const repairPath = nodePath.join(this.dir, TRUNCATION_REPAIR_FILE);
    if (!this.fs.exists(repairPath)) return;
    const log = this.log!;
    const repair = this.fs.readFile(repairPath);
    const batches = [...iterateBatches(repair)];
    const first = batches[0]!.baseOffset;
    const end = batches[batches.length - 1]!.lastOffset + 1;
    log.truncateTo(end);
    if (log.logEndOffset === first) log.appendAsFollower(repair);
    if (log.logEndOffset !== end) throw new Error(`raft log ${this.dir}: cannot finish a truncation to ${end}: the log ends at ${log.logEndOffset}`);
    this.dirDirty = true;
    this.sync();
    this.fs.remove(repairPath);
  }

  private writeSnapshot(s: Snapshot, replaceLog: boolean): void {
    const log = this.open();
    const name = snapshotFileName(s.id.endOffset, s.id.epoch);
    // What came before is made durable first, so a crash leaves a prefix of the ops; and the
    // snapshot is durable before any of the log below it goes.
    this.sync();
    const bytes = this.snapshotFormat === 'records' ? encodeSnapshotFile(s) : Buffer.from(s.data.buffer, s.data.byteOffset, s.data.byteLength);
    this.fs.writeFileAtomic(nodePath.join(this.dir, name), bytes);
    if (replaceLog || s.id.endOffset > log.logEndOffset) {
      log.truncateFullyAndStartAt(s.id.endOffset);
      this.dirDirty = true;
    } else {
      this.deleteBefore(s.id.endOffset);
    }
    for (const n of this.fs.list(this.dir)) {
      if (n !== name && SNAPSHOT_NAME.test(n)) this.fs.remove(nodePath.join(this.dir, n));
    }
  }

  /** Moves the log start offset to `offset` (at most the log end); whole segments below it are deleted. */
  private deleteBefore(offset: number): void {
    const log = this.log!;
    // The Raft core decides what is committed; the partition log's high watermark only guards DeleteRecords.
    log.updateHighWatermark(log.logEndOffset);
    const before = log.segments.length;
    log.deleteRecordsBefore(offset);
    // Segments wholly below the log start (left by a crash right after a snapshot, say).
    log.deleteOldSegments(this.clock.nowMs());
    log.purgeDeletedFiles(this.clock.nowMs());
    if (log.segments.length !== before) this.dirDirty = true;
  }

  private readLatestSnapshot(): Snapshot | undefined {
    const best = latestSnapshotName(this.fs, this.dir);
    if (best === undefined) return undefined;
    const id = { endOffset: best.endOffset, epoch: best.epoch };
    const bytes = this.fs.readFile(nodePath.join(this.dir, best.name));
    const data = this.snapshotFormat === 'records' ? decodeSnapshotFile(id, bytes) : new Uint8Array(bytes);
    return { id, data };
  }

  private readBatches(start: number): EntryBatch[] {
    const log = this.log!;
    const out: EntryBatch[] = [];
    let next = start;
    while (next < log.logEndOffset) {
      const bytes = log.read(next, READ_CHUNK_BYTES, log.logEndOffset);
      if (bytes.length === 0) throw new Error(`raft log ${this.dir}: nothing to read at ${next} below the log end ${log.logEndOffset}`);
      for (const b of decodeEntries(bytes, Number.MAX_SAFE_INTEGER)) {
        if (endOffsetOf(b) <= next) continue;
        if (b.baseOffset > next) throw new Error(`raft log ${this.dir}: entry ${b.baseOffset} where ${next} was expected`);
        // A copy, so a batch does not pin the read buffer.
        out.push(copyBatch(b.baseOffset < next ? sliceBatch(b, next, endOffsetOf(b)) : b));
        next = endOffsetOf(b);
      }
    }
    return out;
  }
}

/** The first batch of `records` (a read returns whole batches from the one holding the offset). */
function firstBatch(records: Buffer): Buffer {
  for (const v of iterateBatches(records)) return records.subarray(0, v.bytes().length);
  return records.subarray(0, 0);
}
