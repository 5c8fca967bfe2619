// The Raft log on the storage engine: a Kafka partition log directory (Kafka names it
// __cluster_metadata-0) holding v2 record batches. Each run of consecutive entries with the same
// epoch and kind is one batch whose partitionLeaderEpoch is that epoch and whose offsets are the
// entries' offsets (appended follower-style, so the log keeps them); control entries go in control
// batches keyed LEADER_CHANGE, as on the wire (raftWire's encoder builds both). Snapshots are
// `<endOffset 20 digits>-<epoch 10 digits>.checkpoint` files in the same directory, written
// atomically; their bytes are the state machine's own for now, not Kafka's snapshot record format.
//
// The latest snapshot is the source of the log start offset: on load, entries below its end offset
// are skipped (and whole segments below it deleted), and a log that ends before it is restarted at
// it. The snapshot file is made durable before the log below it is deleted, so a crash in between
// leaves the snapshot with the old entries above it, which is what a snapshot without `replaceLog`
// leaves; entries older than the snapshot's epoch are then dropped, as they cannot follow it.
import * as nodePath from 'node:path';
import { FileCache, NodeFileSystem, PartitionLog, logConfig, type FileSystem, type LogConfig } from '../../storage/index.js';
import { iterateBatches } from '../../records/index.js';
import { systemClock, type Clock } from '../../util/index.js';
import type { Entry, LogOp, Snapshot } from '../core/types.js';
import { decodeEntries, encodeEntriesUncached } from '../net/messages.js';
import type { LoadedLog, LogStore } from './ports.js';

/** Kafka's name for the metadata log's partition directory. */
export const METADATA_LOG_DIR_NAME = '__cluster_metadata-0';
export const SNAPSHOT_FILE_SUFFIX = '.checkpoint';
/** The entries a truncation in the middle of a batch keeps, while it rewrites them (see truncate). */
export const TRUNCATION_REPAIR_FILE = 'raft-truncation-repair';
const SNAPSHOT_NAME = /^(\d{20})-(\d{10})\.checkpoint$/;
const READ_CHUNK_BYTES = 1 << 20;

export function snapshotFileName(endOffset: number, epoch: number): string {
  return `${String(endOffset).padStart(20, '0')}-${String(epoch).padStart(10, '0')}${SNAPSHOT_FILE_SUFFIX}`;
}

export interface StorageLogStoreOptions {
  /** Defaults to the real file system. */
  readonly fs?: FileSystem;
  readonly clock?: Clock;
  /** Over Kafka's defaults; segment deletes are never delayed (nothing reads a deleted segment). */
  readonly config?: Partial<LogConfig>;
}

export class StorageLogStore implements LogStore {
  private readonly fs: FileSystem;
  private readonly files: FileCache;
  private readonly clock: Clock;
  private readonly config: LogConfig;
  private log: PartitionLog | undefined;
  /** A segment was created or deleted since the last sync: the directory needs an fsync too. */
  private dirDirty = false;

  /** `dir` is the partition directory itself (for a node, `<metadata.log.dir>/__cluster_metadata-0`). */
  constructor(readonly dir: string, opts: StorageLogStoreOptions = {}) {
    this.fs = opts.fs ?? new NodeFileSystem();
    this.files = new FileCache(this.fs, 64);
    this.clock = opts.clock ?? systemClock;
    // No time or size retention: only snapshots move the log start.
    this.config = logConfig({ fileDeleteDelayMs: 0, retentionMs: -1, retentionBytes: -1, ...opts.config });
    this.fs.mkdirs(dir);
  }

  /** Reopens the log (recovery validates every batch and drops a torn tail) and reads it back. */
  load(): LoadedLog {
    this.closeLog();
    const snapshot = this.readLatestSnapshot();
    const start = snapshot?.id.endOffset ?? 0;
    const log = PartitionLog.open({
      dir: this.dir, files: this.files, config: this.config, clock: this.clock,
      recoveryPoint: 0, logStartOffset: start, hadCleanShutdown: false,
    });
    this.log = log;
    this.finishTruncation();
    if (log.logEndOffset < start || log.segments[0]!.baseOffset > start) {
      log.truncateFullyAndStartAt(start);
      this.dirDirty = true;
    } else {
      this.deleteBefore(start);
    }
    const entries = this.readEntries(start);
    // A crash between a snapshot and the deletion of a log it replaced can leave older entries above it.
    const stale = snapshot === undefined ? -1 : entries.findIndex((e) => e.epoch < snapshot.id.epoch);
    if (stale >= 0) {
      log.truncateTo(entries[stale]!.offset);
      entries.length = stale;
    }
    this.sync();
    return { snapshot, entries };
  }

  apply(ops: readonly LogOp[]): void {
    const log = this.open();
    for (const op of ops) {
      switch (op.kind) {
        case 'append':
          if (op.entries.length > 0) log.appendAsFollower(encodeEntriesUncached(op.entries));
          break;
        case 'truncate':
          this.truncate(op.offset);
          break;
        case 'snapshot':
          this.writeSnapshot(op.snapshot, op.replaceLog);
          break;
      }
    }
  }

  /** fsyncs the log's segments (and the directory after segments came or went). */
  sync(): void {
    this.open().flush();
    if (this.dirDirty) {
      this.fs.syncDir(this.dir);
      this.dirDirty = false;
    }
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
    if (this.log === undefined) return;
    this.log.close();
    this.log = undefined;
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
    const kept = offset === log.logStartOffset ? []
      : decodeEntries(firstBatch(log.read(offset, 1, log.logEndOffset)), Number.MAX_SAFE_INTEGER).filter((e) => e.offset < offset);
    this.dirDirty = true;
    if (kept.length === 0) { log.truncateTo(offset); return; }
    this.sync();
    const repair = encodeEntriesUncached(kept);
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
    this.fs.writeFileAtomic(nodePath.join(this.dir, name), Buffer.from(s.data.buffer, s.data.byteOffset, s.data.byteLength));
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
    let best: { endOffset: number; epoch: number; name: string } | undefined;
    for (const n of this.fs.list(this.dir)) {
      const m = SNAPSHOT_NAME.exec(n);
      if (m === null) continue;
      const endOffset = Number(m[1]);
      const epoch = Number(m[2]);
      if (best === undefined || endOffset > best.endOffset || (endOffset === best.endOffset && epoch > best.epoch)) best = { endOffset, epoch, name: n };
    }
    if (best === undefined) return undefined;
    const data = new Uint8Array(this.fs.readFile(nodePath.join(this.dir, best.name)));
    return { id: { endOffset: best.endOffset, epoch: best.epoch }, data };
  }

  private readEntries(start: number): Entry[] {
    const log = this.log!;
    const out: Entry[] = [];
    let next = start;
    while (next < log.logEndOffset) {
      const bytes = log.read(next, READ_CHUNK_BYTES, log.logEndOffset);
      if (bytes.length === 0) throw new Error(`raft log ${this.dir}: nothing to read at ${next} below the log end ${log.logEndOffset}`);
      for (const e of decodeEntries(bytes, Number.MAX_SAFE_INTEGER)) {
        if (e.offset < next) continue;
        if (e.offset !== next) throw new Error(`raft log ${this.dir}: entry ${e.offset} where ${next} was expected`);
        // A copy, so an entry does not pin the read buffer.
        out.push({ ...e, value: new Uint8Array(e.value) });
        next++;
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
