// One log directory (log.dirs): meta.properties, the three offset checkpoints, the cleaner
// checkpoint, the clean-shutdown marker and a PartitionLog per <topic>-<partition> directory.
// Periodic work (flush.ms, retention, file deletion, cleaning, checkpoints) runs from tick(now),
// which the server calls from a timer and tests call with a simulated clock.
//
// An I/O error in any log takes the whole directory offline (Kafka's behaviour with one
// directory): every log in it refuses further calls with KAFKA_STORAGE_ERROR, and `offline`
// says why. The process keeps running.
import * as nodePath from 'node:path';
import { randomBytes } from 'node:crypto';
import { limits, type Clock } from '../util/index.js';
import { StorageError } from './errors.js';
import { FileCache, type FileSystem } from './fs.js';
import type { LogConfig } from './config.js';
import { PartitionLog } from './partition-log.js';
import { LogFlushStats } from './flush-stats.js';
import { LogFlusher } from './group-flush.js';
import { cleanLog } from './cleaner.js';
import { logDirName, parseLogDirName } from './log-dir-name.js';
import { randomUuid, readMetaProperties, writeMetaProperties, type MetaProperties } from './meta-properties.js';
import {
  readOffsetCheckpoint, writeOffsetCheckpoint, writeOffsetCheckpointByDirName, offsetCheckpointBytesByDirName, readPartitionMetadata, writePartitionMetadata, partitionMetadataBytes,
} from './checkpoint.js';

export const RECOVERY_POINT_CHECKPOINT = 'recovery-point-offset-checkpoint';
export const LOG_START_OFFSET_CHECKPOINT = 'log-start-offset-checkpoint';
export const REPLICATION_OFFSET_CHECKPOINT = 'replication-offset-checkpoint';
export const CLEANER_OFFSET_CHECKPOINT = 'cleaner-offset-checkpoint';
export const CLEAN_SHUTDOWN_FILE = '.kafka_cleanshutdown';

export interface LogManagerOptions {
  dir: string;
  fs: FileSystem;
  clock: Clock;
  /** Resolved config of a topic (topic overrides over broker defaults). */
  configFor: (topic: string) => LogConfig;
  /** Open file descriptors at most (segment files are opened lazily). */
  openFilesMax?: number;
  retentionCheckIntervalMs?: number;
  checkpointIntervalMs?: number;
  cleanerEnable?: boolean;
  /** producer.id.expiration.ms: idle idempotent producers' state is dropped after this long. */
  producerIdExpirationMs?: number;
  /** producer.id.expiration.check.interval.ms */
  producerIdExpirationCheckIntervalMs?: number;
  cleanerBackoffMs?: number;
  /**
   * log.writeback.bytes: a partition log that has had this many bytes appended since its last
   * flush is fsynced in the background, one log at a time (0 or absent: never; the OS decides).
   */
  writebackBytes?: number;
  log?: (message: string) => void;
  /**
   * The directory went offline after an I/O error (Kafka's LogDirFailureChannel): called once, with
   * the error. The broker decides what that means for it (with its only directory gone, it halts).
   */
  onOffline?: (cause: Error) => void;
}

export class LogManager {
  readonly files: FileCache;
  readonly logs = new Map<string, PartitionLog>();
  /** Every partition log's fsync times (Kafka's LogFlushStats); the metadata log's store counts here too. */
  readonly flushStats = new LogFlushStats();
  /** The directory's grouped fsync rounds for flush.messages (one for all its logs). */
  readonly flusher = new LogFlusher(this.flushStats);
  offline: Error | null = null;
  readonly hadCleanShutdown: boolean;
  /**
   * The broker epoch the clean-shutdown marker recorded (Kafka's CleanShutdownFileHandler), -1 after
   * an unclean shutdown or without one: the broker registers with it as its previousBrokerEpoch,
   * which tells the controller whether it may stay an eligible leader replica (KIP-966).
   */
  readonly cleanShutdownBrokerEpoch: bigint;
  private readonly recoveryPoints: Map<string, number>;
  private readonly logStartOffsets: Map<string, number>;
  private readonly highWatermarks: Map<string, number>;
  private readonly cleanerOffsets: Map<string, number>;
  private lastRetentionMs: number;
  private lastCheckpointMs: number;
  private lastCleanMs: number;
  private lastProducerExpiryMs: number;
  private cleaning = false;
  private closed = false;
  private readonly removals = new Set<Promise<void>>();
  /** New partitions whose partition.metadata is still to be written, in creation order, and those being written. */
  private readonly metadataToWrite = new Map<string, { log: PartitionLog; topicId: string }>();
  private readonly metadataWriting = new Set<{ key: string; log: PartitionLog; topicId: string }>();
  private metadataWriteSeq = 0;
  /** The log directory's fsync that the next new partitions share (one covers every entry made before it starts). */
  private logDirSync: Promise<void> | null = null;
  private readonly say: (m: string) => void;

  constructor(readonly o: LogManagerOptions) {
    const fs = o.fs;
    this.say = o.log ?? (() => {});
    fs.mkdirs(o.dir);
    this.files = new FileCache(fs, o.openFilesMax ?? limits.openFilesMax);
    const marker = nodePath.join(o.dir, CLEAN_SHUTDOWN_FILE);
    this.hadCleanShutdown = fs.exists(marker);
    this.cleanShutdownBrokerEpoch = this.hadCleanShutdown ? markerBrokerEpoch(fs.readFile(marker)) : -1n;
    this.recoveryPoints = readOffsetCheckpoint(fs, this.path(RECOVERY_POINT_CHECKPOINT));
    this.logStartOffsets = readOffsetCheckpoint(fs, this.path(LOG_START_OFFSET_CHECKPOINT));
    this.highWatermarks = readOffsetCheckpoint(fs, this.path(REPLICATION_OFFSET_CHECKPOINT));
    this.cleanerOffsets = readOffsetCheckpoint(fs, this.path(CLEANER_OFFSET_CHECKPOINT));
    // From here on a crash is an unclean shutdown.
    if (this.hadCleanShutdown) { fs.remove(marker); fs.syncDir(o.dir); }
    for (const name of fs.list(o.dir)) {
      if (name.endsWith('-delete') && fs.isDirectory(nodePath.join(o.dir, name))) fs.removeDir(nodePath.join(o.dir, name));
    }
    const now = o.clock.nowMs();
    this.lastRetentionMs = now;
    this.lastCheckpointMs = now;
    this.lastCleanMs = now;
    this.lastProducerExpiryMs = now;
  }

  private path(name: string): string { return nodePath.join(this.o.dir, name); }

  /**
   * meta.properties binds the directory to a cluster and a node. A directory of another cluster
   * or node is refused; a new one is stamped.
   */
  ensureMetaProperties(nodeId: number, clusterId: string): MetaProperties {
    const stored = readMetaProperties(this.o.fs, this.o.dir);
    if (stored !== null) {
      if (stored.clusterId !== clusterId) {
        throw new StorageError('KAFKA_STORAGE_ERROR', `${this.o.dir} belongs to cluster ${stored.clusterId}, not ${clusterId}`);
      }
      if (stored.nodeId !== nodeId) throw new StorageError('KAFKA_STORAGE_ERROR', `${this.o.dir} belongs to node ${stored.nodeId}, not ${nodeId}`);
      return stored;
    }
    const meta = { nodeId, clusterId, directoryId: randomUuid() };
    writeMetaProperties(this.o.fs, this.o.dir, meta);
    return meta;
  }

  /** The cluster id stamped in meta.properties, if the directory has one. */
  storedClusterId(): string | null {
    return readMetaProperties(this.o.fs, this.o.dir)?.clusterId ?? null;
  }

  /** <topic>-<partition> directories present on disk. */
  partitionDirs(): { topic: string; partition: number }[] {
    const out: { topic: string; partition: number }[] = [];
    for (const name of this.o.fs.list(this.o.dir)) {
      const tp = parseLogDirName(name);
      if (tp && this.o.fs.isDirectory(this.path(name))) out.push(tp);
    }
    return out;
  }

  private checkOnline(): void {
    if (this.offline) throw new StorageError('KAFKA_STORAGE_ERROR', `log directory ${this.o.dir} is offline: ${this.offline.message}`);
  }

  get(topic: string, partition: number): PartitionLog | undefined { return this.logs.get(logDirName(topic, partition)); }

  /** Opens (recovering if needed) or creates the log of a partition. */
  getOrCreateLog(topic: string, partition: number, topicId: string | null): PartitionLog {
    this.checkOnline();
    const key = logDirName(topic, partition);
    const existing = this.logs.get(key);
    if (existing) return existing;
    const dir = this.path(key);
    const fs = this.o.fs;
    const metaPath = nodePath.join(dir, 'partition.metadata');
    if (topicId && fs.exists(dir)) {
      const stored = readPartitionMetadata(fs, metaPath);
      if (stored && stored !== topicId) {
        // A log left by a deleted topic of the same name: it is not this topic's data.
        this.say(`${key}: topic id ${stored} on disk is not ${topicId}; removing the stale log`);
        fs.removeDir(dir);
      }
    }
    const start = Date.now();
    // A partition created now has nothing to recover, and nothing in it to fsync: creating 10,000
    // partitions spent 10 ms each on fsyncs of empty files on the event loop, stalling the metadata
    // quorum that shares it. Its partition.metadata is written in the background (below): until
    // then a power cut or a restart finds none, and this method writes it again.
    const created = !fs.exists(dir);
    const log = PartitionLog.open({
      dir, files: this.files, config: this.o.configFor(topic), clock: this.o.clock,
      recoveryPoint: this.recoveryPoints.get(key) ?? 0, logStartOffset: this.logStartOffsets.get(key) ?? 0,
      hadCleanShutdown: created || (this.hadCleanShutdown && this.recoveryPoints.has(key)), created, log: this.say,
    });
    const hw = this.highWatermarks.get(key);
    if (hw !== undefined) log.updateHighWatermark(hw);
    log.cleanerCheckpoint = Math.max(log.logStartOffset, this.cleanerOffsets.get(key) ?? 0);
    log.onOffline = (e) => this.takeOffline(e);
    log.flushStats = this.flushStats;
    log.flusher = this.flusher;
    if ((this.o.writebackBytes ?? 0) > 0) log.writeback = { bytes: this.o.writebackBytes!, request: (l) => this.requestWriteback(l) };
    if (topicId && created) {
      this.metadataToWrite.set(key, { log, topicId });
      this.writeMetadataInBackground();
    } else if (topicId && readPartitionMetadata(fs, metaPath) !== topicId) writePartitionMetadata(fs, metaPath, topicId);
    if (log.recovery.segmentsScanned > 0 && log.recovery.bytesTruncated > 0) {
      this.say(`${key}: recovered in ${Date.now() - start} ms`);
    }
    this.logs.set(key, log);
    return log;
  }

  private takeOffline(e: Error): void {
    if (this.offline) return;
    this.offline = e;
    this.say(`log directory ${this.o.dir} is offline after an I/O error: ${e.message}`);
    for (const l of this.logs.values()) l.offlineCause ??= e;
    this.o.onOffline?.(e);
  }

  /** Deletes a partition's log (topic deleted or replica moved away). */
  deleteLog(topic: string, partition: number): void {
    const key = logDirName(topic, partition);
    const log = this.logs.get(key);
    this.logs.delete(key);
    this.recoveryPoints.delete(key);
    this.logStartOffsets.delete(key);
    this.highWatermarks.delete(key);
    this.cleanerOffsets.delete(key);
    // An append still in flight must not recreate the files (or write into a re-created topic's).
    log?.markDeleted();
    const dir = this.path(key);
    if (!this.o.fs.exists(dir)) return;
    // Rename first so a crash mid-delete leaves a "-delete" directory that startup removes. The
    // files go off the event loop: removing a partition's gigabytes (and their page cache) took
    // hundreds of milliseconds from every request in flight, as Kafka's async log deletion avoids.
    const doomed = this.path(`${key}.${randomBytes(8).toString('hex')}-delete`);
    this.o.fs.rename(dir, doomed);
    const removal: Promise<void> = this.o.fs.removeDirAsync(doomed)
      .catch((e: Error) => this.say(`could not remove ${doomed} (startup will): ${e.message}`))
      .finally(() => this.removals.delete(removal));
    this.removals.add(removal);
  }

  /**
   * Writes new partitions' partition.metadata off the event loop, a few at a time: a temporary
   * file written and fsynced in the thread pool, renamed into place only if the log is still the
   * one it was written for (the topic may have been deleted, and re-created under the same name,
   * meanwhile), then the partition's directory and the log directory fsynced.
   */
  private writeMetadataInBackground(): void {
    while (this.metadataWriting.size < limits.partitionMetadataWritesInFlightMax && this.metadataToWrite.size > 0 && !this.closed) {
      const [key, { log, topicId }] = this.metadataToWrite.entries().next().value as [string, { log: PartitionLog; topicId: string }];
      this.metadataToWrite.delete(key);
      const job = { key, log, topicId };
      const fs = this.o.fs;
      const dir = this.path(key);
      const metaPath = nodePath.join(dir, 'partition.metadata');
      // A name of its own: a write for a deleted log may land in a re-created directory.
      const tmp = `${metaPath}.${++this.metadataWriteSeq}.tmp`;
      const current = (): boolean => this.logs.get(key) === log && !this.closed && this.offline === null;
      this.metadataWriting.add(job);
      fs.writeAndSyncFileAsync(tmp, partitionMetadataBytes(topicId))
        .then(async () => {
          if (!current()) { await fs.removeAsync(tmp); return; }
          fs.rename(tmp, metaPath);
          await fs.syncDirAsync(dir);
          await this.syncLogDir();
        })
        .catch((e: unknown) => { if (current()) this.takeOffline(e instanceof Error ? e : new Error(String(e))); })
        .finally(() => { this.metadataWriting.delete(job); this.writeMetadataInBackground(); });
    }
  }

  /** An fsync of the log directory that covers every entry made before the call. */
  private syncLogDir(): Promise<void> {
    // A sync not yet started covers this caller too; one already running may not.
    if (this.logDirSync !== null) return this.logDirSync;
    const sync = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      if (this.logDirSync === sync) this.logDirSync = null;
      return this.o.fs.syncDirAsync(this.o.dir);
    });
    this.logDirSync = sync;
    return sync;
  }

  /** Resolves once every deleted log's directory is gone (the server waits for it at shutdown). */
  async removalsDone(): Promise<void> {
    while (this.removals.size > 0) await Promise.all(this.removals);
  }

  /** Writes the checkpoint files from the open logs (and what was read for logs not opened). */
  checkpoint(): void {
    if (this.offline) return;
    for (const [name, offsets] of this.checkpointOffsets()) writeOffsetCheckpointByDirName(this.o.fs, this.path(name), offsets);
  }

  /**
   * checkpoint() with the writes and fsyncs off the event loop (the periodic one: eight fsyncs
   * on the event loop once a minute were a 10-200 ms stall in the produce path under load).
   * Each file is written to `<name>.next` and fsynced in the background, then renamed into place
   * on the event loop — unless close() or an I/O error came meanwhile, so an older checkpoint can
   * never replace the one close() wrote — and the directory is fsynced last.
   */
  async checkpointAsync(): Promise<void> {
    if (this.offline || this.closed) return;
    const fs = this.o.fs;
    const files = [...this.checkpointOffsets()].map(([name, offsets]) => ({ path: this.path(name), bytes: offsetCheckpointBytesByDirName(offsets) }));
    await Promise.all(files.map((f) => fs.writeAndSyncFileAsync(`${f.path}.next`, f.bytes)));
    if (this.offline || this.closed) return;
    for (const f of files) fs.rename(`${f.path}.next`, f.path);
    await fs.syncDirAsync(this.o.dir);
  }

  private checkpointOffsets(): [string, ReadonlyMap<string, number>][] {
    for (const [key, log] of this.logs) {
      this.recoveryPoints.set(key, log.recoveryPoint);
      this.logStartOffsets.set(key, log.logStartOffset);
      this.highWatermarks.set(key, log.highWatermark);
      this.cleanerOffsets.set(key, log.cleanerCheckpoint);
    }
    return [
      [RECOVERY_POINT_CHECKPOINT, this.recoveryPoints], [LOG_START_OFFSET_CHECKPOINT, this.logStartOffsets],
      [REPLICATION_OFFSET_CHECKPOINT, this.highWatermarks], [CLEANER_OFFSET_CHECKPOINT, this.cleanerOffsets],
    ];
  }

  /** Periodic work; call every few hundred ms. Returns when the cleaner (if started) is done. */
  async tick(nowMs: number): Promise<void> {
    if (this.offline) return;
    try {
      for (const log of this.logs.values()) {
        log.maybeFlushByTime(nowMs);
        log.purgeDeletedFiles(nowMs);
      }
      if (nowMs - this.lastRetentionMs >= (this.o.retentionCheckIntervalMs ?? 300_000)) {
        this.lastRetentionMs = nowMs;
        for (const log of this.logs.values()) log.deleteOldSegments(nowMs);
      }
      if (nowMs - this.lastProducerExpiryMs >= (this.o.producerIdExpirationCheckIntervalMs ?? 600_000)) {
        this.lastProducerExpiryMs = nowMs;
        for (const log of this.logs.values()) log.producerState.removeExpired(nowMs, this.o.producerIdExpirationMs ?? 86_400_000);
      }
      if (nowMs - this.lastCheckpointMs >= (this.o.checkpointIntervalMs ?? 60_000)) {
        this.lastCheckpointMs = nowMs;
        await this.checkpointAsync();
      }
      if ((this.o.cleanerEnable ?? true) && !this.cleaning && nowMs - this.lastCleanMs >= (this.o.cleanerBackoffMs ?? 15_000)) {
        this.lastCleanMs = nowMs;
        this.cleaning = true;
        try {
          for (const log of [...this.logs.values()]) if (log.config.cleanupPolicy.includes('compact')) await cleanLog(log, nowMs);
        } finally {
          this.cleaning = false;
        }
      }
    } catch (e) {
      // An offline log already said why; anything else is a bug worth a line in the log.
      if (!(e instanceof StorageError)) this.say(`log manager tick failed: ${(e as Error).stack}`);
    }
  }

  /**
   * Background write-back. Left to itself, Linux writes a file's dirty pages back once they are 30 s
   * old (vm.dirty_expire_centisecs): at 60 MB/s of appends that is ~2 GB at once, and appends
   * stalled behind it for up to 2 s (bench/cluster, 20 MB/s acks=all on three brokers sharing a disk:
   * produce p99 1.8 s in the 40 s run that crossed it). Flushing each log after
   * log.writeback.bytes keeps what the page cache holds unwritten small and the disk busy evenly
   * (p99 5.8 ms in the same run); it also moves the recovery point along, so a crash recovers less.
   * One flush at a time: the thread pool also runs the metadata log's fsyncs.
   */
  private requestWriteback(log: PartitionLog): void {
    this.writebackDue.add(log);
    if (!this.writingBack) void this.drainWriteback();
  }

  private readonly writebackDue = new Set<PartitionLog>();
  private writingBack = false;

  private async drainWriteback(): Promise<void> {
    this.writingBack = true;
    try {
      for (let log = first(this.writebackDue); log !== undefined && !this.closed && !this.offline; log = first(this.writebackDue)) {
        this.writebackDue.delete(log);
        // A log deleted or closed meanwhile is skipped; a failed fsync takes it offline (flushAsync says why).
        if (this.logs.get(log.name) !== log) continue;
        await log.flushAsync().catch(() => {});
      }
    } finally {
      this.writingBack = false;
    }
  }

  /** Clean shutdown: every log flushed and closed, checkpoints written, the marker left (with `brokerEpoch` when known). */
  close(brokerEpoch = -1n): void {
    this.closed = true;
    // New partitions whose partition.metadata the background has not written yet.
    for (const { key, log, topicId } of [...this.metadataWriting, ...[...this.metadataToWrite].map(([key, v]) => ({ key, ...v }))]) {
      if (this.logs.get(key) === log && !this.offline) writePartitionMetadata(this.o.fs, nodePath.join(this.path(key), 'partition.metadata'), topicId);
    }
    this.metadataToWrite.clear();
    for (const log of this.logs.values()) {
      try { log.close(); } catch (e) { if (!(e instanceof StorageError)) throw e; }
    }
    if (this.offline) { this.files.closeAll(); return; }
    this.checkpoint();
    this.files.closeAll();
    this.o.fs.writeFileAtomic(this.path(CLEAN_SHUTDOWN_FILE), Buffer.from(JSON.stringify({ version: 0, brokerEpoch: Number(brokerEpoch) })));
  }
}

/** The broker epoch in a clean-shutdown marker (`{"version":0,"brokerEpoch":N}`); -1 when empty or unreadable. */
function markerBrokerEpoch(bytes: Buffer): bigint {
  try {
    const epoch = (JSON.parse(bytes.toString('utf8')) as { brokerEpoch?: unknown }).brokerEpoch;
    return typeof epoch === 'number' && Number.isSafeInteger(epoch) && epoch >= 0 ? BigInt(epoch) : -1n;
  } catch {
    return -1n;
  }
}

function first<T>(set: ReadonlySet<T>): T | undefined {
  for (const x of set) return x;
  return undefined;
}
