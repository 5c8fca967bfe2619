// One log segment: <base>.log holds RecordBatch v2 bytes exactly as appended; the offset and
// time indexes point into it every index.interval.bytes; <base>.txnindex lists the aborted
// transactions whose markers it holds. Indexes are loaded on first use, so an idle segment costs
// a few numbers and no file descriptor.
import * as nodePath from 'node:path';
import { assert } from '../util/index.js';
import {
  BatchHeaderAt, LOG_OVERHEAD_BYTES, RECORD_BATCH_HEADER_BYTES, RecordBatchView, readInt64, validateBatch, RecordsError,
} from '../records/index.js';
import { StorageError } from './errors.js';
import type { FileCache, FileHandle } from './fs.js';
import { OffsetIndex, TimeIndex, TxnIndex } from './indexes.js';

export const LOG_SUFFIX = '.log';
export const INDEX_SUFFIX = '.index';
export const TIME_INDEX_SUFFIX = '.timeindex';
export const TXN_INDEX_SUFFIX = '.txnindex';
export const DELETED_SUFFIX = '.deleted';
export const CLEANED_SUFFIX = '.cleaned';
export const SWAP_SUFFIX = '.swap';

const SCAN_CHUNK_BYTES = 64 * 1024;
/** ownLogFile copies a shared log file in chunks of this size. */
const COPY_CHUNK_BYTES = 1024 * 1024;
/** A read that found a batch but may not return it (larger than the bytes left, not the first data). */
const EMPTY_READ = Buffer.alloc(0);

export function segmentFileName(baseOffset: number, suffix: string): string {
  return String(baseOffset).padStart(20, '0') + suffix;
}

/** A batch's place in a segment, read from its header alone. */
export interface BatchHeader {
  position: number;
  baseOffset: number;
  lastOffset: number;
  size: number;
  maxTimestamp: number;
  partitionLeaderEpoch: number;
}

export interface SegmentConfig { indexIntervalBytes: number; segmentIndexBytes: number }

export class LogSegment {
  size: number;
  /** Offset after the last batch (baseOffset when empty). Known once the tail has been read. */
  private nextOffsetKnown: number | null;
  private offsetIndexLoaded: OffsetIndex | null = null;
  private timeIndexLoaded: TimeIndex | null = null;
  private txnIndexLoaded: TxnIndex | null = null;
  private maxTs: { timestamp: number; offset: number } | null = null;
  private bytesSinceLastIndexEntry = 0;
  /** Max timestamp of the first batch: segment.ms counts from it. */
  rollingBasedTimestamp: number | null = null;

  constructor(
    readonly dir: string,
    readonly baseOffset: number,
    private readonly files: FileCache,
    private readonly config: SegmentConfig,
    readonly createdMs: number,
    opts: { size: number; nextOffset?: number; suffix?: string; noFiles?: boolean },
  ) {
    this.size = opts.size;
    this.logFileMissing = opts.noFiles ?? false;
    this.nextOffsetKnown = opts.size === 0 ? baseOffset : opts.nextOffset ?? null;
    this.suffix = opts.suffix ?? '';
  }

  /** '' normally; '.cleaned' while the cleaner writes a replacement. */
  suffix: string;
  /** A planned segment whose log file its first write creates. */
  private logFileMissing: boolean;
  get hasLogFile(): boolean { return !this.logFileMissing; }

  /** The log file's handle (created if the segment had none yet). */
  logFile(): FileHandle {
    const h = this.files.get(this.logPath);
    this.logFileMissing = false;
    return h;
  }

  path(kind: string): string { return nodePath.join(this.dir, segmentFileName(this.baseOffset, kind) + this.suffix); }
  /** Built once per suffix: every append and read asks for it (a path.join each was ~0.5% of the broker at 50 MB/s). */
  get logPath(): string {
    if (this.logPathSuffix !== this.suffix) {
      this.logPathCached = this.path(LOG_SUFFIX);
      this.logPathSuffix = this.suffix;
    }
    return this.logPathCached;
  }
  private logPathCached = '';
  private logPathSuffix: string | null = null;

  /** Creates the files of a new segment; the indexes are preallocated (sparse) to segment.index.bytes. */
  static create(dir: string, baseOffset: number, files: FileCache, config: SegmentConfig, nowMs: number, suffix = ''): LogSegment {
    const s = new LogSegment(dir, baseOffset, files, config, nowMs, { size: 0, suffix });
    files.get(s.logPath).truncate(0);
    files.get(s.path(INDEX_SUFFIX)).truncate(config.segmentIndexBytes - (config.segmentIndexBytes % 8));
    files.get(s.path(TIME_INDEX_SUFFIX)).truncate(config.segmentIndexBytes - (config.segmentIndexBytes % 12));
    s.offsetIndexLoaded = new OffsetIndex(s.path(INDEX_SUFFIX), baseOffset, config.segmentIndexBytes);
    s.timeIndexLoaded = new TimeIndex(s.path(TIME_INDEX_SUFFIX), baseOffset, config.segmentIndexBytes);
    s.txnIndexLoaded = new TxnIndex(s.path(TXN_INDEX_SUFFIX));
    s.maxTs = { timestamp: -1, offset: baseOffset };
    return s;
  }

  /**
   * The first segment of a partition created just now, with no file at all until its first write:
   * a partition that is never written costs its directory and partition.metadata only. A power
   * cut before that write leaves what a reopen makes again (an empty segment at the same offset).
   */
  static planned(dir: string, baseOffset: number, files: FileCache, config: SegmentConfig, nowMs: number): LogSegment {
    const s = new LogSegment(dir, baseOffset, files, config, nowMs, { size: 0, noFiles: true });
    s.offsetIndexLoaded = new OffsetIndex(s.path(INDEX_SUFFIX), baseOffset, config.segmentIndexBytes, undefined, false);
    s.timeIndexLoaded = new TimeIndex(s.path(TIME_INDEX_SUFFIX), baseOffset, config.segmentIndexBytes, undefined, false);
    s.txnIndexLoaded = new TxnIndex(s.path(TXN_INDEX_SUFFIX));
    s.maxTs = { timestamp: -1, offset: baseOffset };
    return s;
  }

  private readIndexFile(path: string): Buffer | undefined {
    const fs = this.files.fs;
    return fs.exists(path) ? fs.readFile(path) : undefined;
  }

  get offsetIndex(): OffsetIndex {
    if (!this.offsetIndexLoaded) {
      const idx = new OffsetIndex(this.path(INDEX_SUFFIX), this.baseOffset, this.config.segmentIndexBytes, this.readIndexFile(this.path(INDEX_SUFFIX)));
      this.offsetIndexLoaded = idx;
      if (!idx.isConsistent(this.size) || (idx.entries > 0 && idx.lastOffset >= this.nextOffset)) this.rebuildIndexes();
    }
    return this.offsetIndexLoaded!;
  }

  get timeIndex(): TimeIndex {
    if (!this.timeIndexLoaded) {
      const idx = new TimeIndex(this.path(TIME_INDEX_SUFFIX), this.baseOffset, this.config.segmentIndexBytes, this.readIndexFile(this.path(TIME_INDEX_SUFFIX)));
      this.timeIndexLoaded = idx;
      if (!idx.isConsistent() || (idx.entries > 0 && (idx.offsetAt(idx.entries - 1) >= Math.max(this.nextOffset, this.baseOffset + 1)))) this.rebuildIndexes();
    }
    return this.timeIndexLoaded!;
  }

  get txnIndex(): TxnIndex {
    if (!this.txnIndexLoaded) this.txnIndexLoaded = new TxnIndex(this.path(TXN_INDEX_SUFFIX), this.readIndexFile(this.path(TXN_INDEX_SUFFIX)));
    return this.txnIndexLoaded;
  }

  get nextOffset(): number {
    if (this.nextOffsetKnown === null) {
      // Start from the last indexed batch and walk the headers to the end.
      const idx = this.offsetIndexLoaded ?? new OffsetIndex(this.path(INDEX_SUFFIX), this.baseOffset, this.config.segmentIndexBytes, this.readIndexFile(this.path(INDEX_SUFFIX)));
      let from = 0;
      if (idx.isConsistent(this.size) && idx.entries > 0) from = idx.positionAt(idx.entries - 1);
      let next = this.baseOffset;
      for (const h of this.headers(from)) next = h.lastOffset + 1;
      this.nextOffsetKnown = next;
    }
    return this.nextOffsetKnown;
  }

  /** The largest timestamp in the segment and the offset of that batch; -1 when it has none. */
  get maxTimestampAndOffset(): { timestamp: number; offset: number } {
    if (!this.maxTs) {
      const idx = this.timeIndex;
      let best = idx.entries > 0 ? { timestamp: idx.lastTimestamp, offset: idx.offsetAt(idx.entries - 1) } : { timestamp: -1, offset: this.baseOffset };
      const from = idx.entries > 0 ? this.offsetIndex.lookup(idx.offsetAt(idx.entries - 1)).position : 0;
      for (const h of this.headers(from)) if (h.maxTimestamp > best.timestamp) best = { timestamp: h.maxTimestamp, offset: h.lastOffset };
      this.maxTs = best;
    }
    return this.maxTs;
  }

  /** The largest timestamp, or the file's modification time when no batch has one (retention). */
  largestTimestamp(): number {
    const t = this.maxTimestampAndOffset.timestamp;
    return t >= 0 ? t : this.logFileMissing ? this.createdMs : this.files.fs.mtimeMs(this.logPath);
  }

  get indexIsFull(): boolean { return this.offsetIndex.isFull || this.timeIndex.isFull; }

  /**
   * Appends already-validated batches (one contiguous buffer) in one write and indexes them.
   * `batches` are the views over `buf`, in order.
   */
  append(buf: Buffer, batches: readonly RecordBatchView[]): void {
    if (batches.length === 0) return;
    const first = batches[0]!;
    assert(first.baseOffset >= this.nextOffset, `append at ${first.baseOffset} below segment end ${this.nextOffset}`);
    const offsetIndex = this.offsetIndex;
    const timeIndex = this.timeIndex;
    const maxTs = this.maxTimestampAndOffset;
    const position = this.size;
    this.logFile().write(buf, position);
    for (const v of batches) {
      const ts = v.maxTimestamp;
      if (ts > maxTs.timestamp) { maxTs.timestamp = ts; maxTs.offset = v.lastOffset; }
      if (this.rollingBasedTimestamp === null) this.rollingBasedTimestamp = ts;
      if (this.bytesSinceLastIndexEntry > this.config.indexIntervalBytes) {
        offsetIndex.append(v.lastOffset, position + v.offset);
        timeIndex.maybeAppend(maxTs.timestamp, maxTs.offset);
        this.bytesSinceLastIndexEntry = 0;
      }
      this.bytesSinceLastIndexEntry += v.sizeInBytes;
    }
    this.size += buf.length;
    this.nextOffsetKnown = batches[batches.length - 1]!.lastOffset + 1;
  }

  /**
   * Batch headers from `position` (a batch boundary) to the end, read in 64 KiB chunks; the first
   * read is at most `firstReadBytes` (a caller that expects large batches asks for a header's worth).
   */
  *headers(position = 0, end = this.size, firstReadBytes = SCAN_CHUNK_BYTES): Generator<BatchHeader> {
    if (position + RECORD_BATCH_HEADER_BYTES > end) return;
    const h = this.logFile();
    // Small batches are scanned in 64 KiB chunks; after a batch at least that large, the next read
    // is of one header only (reading a large batch's neighbourhood to learn 61 bytes was most of the
    // cost of a fetch of large batches).
    const chunkBytes = Math.max(RECORD_BATCH_HEADER_BYTES, Math.min(SCAN_CHUNK_BYTES, end - position));
    // Allocated at the size of the first read, grown when a whole chunk is wanted.
    let chunk = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(RECORD_BATCH_HEADER_BYTES, firstReadBytes)));
    let chunkStart = -1;
    let chunkLen = 0;
    let lastSize = 0;
    while (position + RECORD_BATCH_HEADER_BYTES <= end) {
      if (chunkStart < 0 || position < chunkStart || position + RECORD_BATCH_HEADER_BYTES > chunkStart + chunkLen) {
        const want = chunkStart < 0 ? chunk.length : lastSize >= chunkBytes ? RECORD_BATCH_HEADER_BYTES : chunkBytes;
        if (want > chunk.length) chunk = Buffer.allocUnsafe(want);
        chunkLen = h.read(chunk, 0, Math.min(want, end - position), position);
        chunkStart = position;
        if (chunkLen < RECORD_BATCH_HEADER_BYTES) return;
      }
      const at = position - chunkStart;
      const size = chunk.readInt32BE(at + BatchHeaderAt.BatchLength) + LOG_OVERHEAD_BYTES;
      if (size < RECORD_BATCH_HEADER_BYTES || position + size > end) return;
      const baseOffset = readInt64(chunk, at + BatchHeaderAt.BaseOffset, 'baseOffset');
      yield {
        position, baseOffset, size, lastOffset: baseOffset + chunk.readInt32BE(at + BatchHeaderAt.LastOffsetDelta),
        maxTimestamp: readInt64(chunk, at + BatchHeaderAt.MaxTimestamp, 'maxTimestamp'), partitionLeaderEpoch: chunk.readInt32BE(at + BatchHeaderAt.PartitionLeaderEpoch),
      };
      position += size;
      lastSize = size;
    }
  }

  /**
   * The first batch whose last offset is >= offset, found through the index. `firstReadBytes`
   * bounds the header walk's first read (see headers()).
   */
  translateOffset(offset: number, startPosition = 0, firstReadBytes = SCAN_CHUNK_BYTES): BatchHeader | null {
    const from = Math.max(startPosition, this.offsetIndex.lookup(offset).position);
    for (const h of this.headers(from, this.size, firstReadBytes)) if (h.lastOffset >= offset) return h;
    return null;
  }

  /** Reads `length` bytes at `position` into `alloc(length)`. */
  readBytes(position: number, length: number, alloc: (bytes: number) => Buffer = Buffer.allocUnsafe): Buffer {
    const buf = alloc(length);
    const n = this.logFile().read(buf, 0, length, position);
    return n === length ? buf : buf.subarray(0, n);
  }

  /**
   * Whole batches from the one holding `offset`, at most `maxBytes`, and only batches starting
   * below `maxOffset`. With `minOneBatch` (Kafka's minOneMessage, KIP-74) the first batch comes
   * whole even when it alone is larger; without it such a batch is not read (an empty buffer).
   * Null when the segment has no batch to offer below `maxOffset`. The bytes go into `alloc(size)`.
   */
  read(offset: number, maxBytes: number, maxOffset: number, minOneBatch = true, alloc: (bytes: number) => Buffer = Buffer.allocUnsafe): Buffer | null {
    // Find the first batch by its header alone (the index entry at or below `offset` is often the
    // batch before it), then read up to maxBytes from there in one read and keep the whole batches
    // in it. Walking every header first and then reading exactly their bytes took a scan read and a
    // header read per batch besides the data read: a third of a catch-up fetch's syscalls.
    const first = this.translateOffset(offset, 0, RECORD_BATCH_HEADER_BYTES);
    if (first === null || first.baseOffset >= maxOffset) return null;
    if (first.size > maxBytes && !minOneBatch) return EMPTY_READ;
    if (first.size >= maxBytes) return this.readBytes(first.position, first.size, alloc); // KIP-74: one whole batch
    const buf = this.readBytes(first.position, Math.min(maxBytes, this.size - first.position), alloc);
    let end = 0;
    while (end + RECORD_BATCH_HEADER_BYTES <= buf.length) {
      const size = buf.readInt32BE(end + BatchHeaderAt.BatchLength) + LOG_OVERHEAD_BYTES;
      if (size < RECORD_BATCH_HEADER_BYTES || end + size > buf.length) break;
      if (end > 0 && readInt64(buf, end + BatchHeaderAt.BaseOffset, 'baseOffset') >= maxOffset) break;
      end += size;
    }
    if (end < first.size) throw new StorageError('KAFKA_STORAGE_ERROR', `short read at ${first.position} of ${this.logPath}: ${buf.length} bytes`);
    return buf.subarray(0, end);
  }

  /** Full batches (bytes and view) from `position`, each read whole; for recovery and cleaning. */
  *batches(position = 0): Generator<RecordBatchView> {
    for (const h of this.headers(position)) yield new RecordBatchView(this.readBytes(h.position, h.size));
  }

  /**
   * Recovery: re-validates every batch, rebuilds the indexes, and truncates at the first batch
   * that is torn, corrupt or out of order. `onBatch` sees each valid batch (producer state, epochs).
   * Returns the number of bytes dropped.
   */
  recover(onBatch: (view: RecordBatchView) => void): { truncatedBytes: number; validBatches: number } {
    this.resetIndexes();
    const h = this.logFile();
    const fileSize = h.size();
    let position = 0;
    let expected = this.baseOffset;
    let validBatches = 0;
    const header = Buffer.allocUnsafe(LOG_OVERHEAD_BYTES);
    while (position + RECORD_BATCH_HEADER_BYTES <= fileSize) {
      if (h.read(header, 0, LOG_OVERHEAD_BYTES, position) < LOG_OVERHEAD_BYTES) break;
      const size = header.readInt32BE(BatchHeaderAt.BatchLength) + LOG_OVERHEAD_BYTES;
      if (size < RECORD_BATCH_HEADER_BYTES || position + size > fileSize) break;
      const view = new RecordBatchView(this.readBytes(position, size));
      try {
        validateBatch(view, { compacted: true });
      } catch (e) {
        if (e instanceof RecordsError) break;
        throw e;
      }
      if (view.baseOffset < expected) break;
      this.indexRecovered(view, position);
      onBatch(view);
      expected = view.lastOffset + 1;
      position += size;
      validBatches++;
    }
    const truncatedBytes = fileSize - position;
    if (truncatedBytes > 0) {
      this.ownLogFile();
      this.logFile().truncate(position);
    }
    this.size = position;
    this.nextOffsetKnown = expected === this.baseOffset && validBatches === 0 ? this.baseOffset : expected;
    return { truncatedBytes, validBatches };
  }

  private resetIndexes(): void {
    this.offsetIndexLoaded = new OffsetIndex(this.path(INDEX_SUFFIX), this.baseOffset, this.config.segmentIndexBytes, undefined, this.offsetIndexLoaded?.fileMayExist ?? true);
    this.timeIndexLoaded = new TimeIndex(this.path(TIME_INDEX_SUFFIX), this.baseOffset, this.config.segmentIndexBytes, undefined, this.timeIndexLoaded?.fileMayExist ?? true);
    this.txnIndexLoaded ??= new TxnIndex(this.path(TXN_INDEX_SUFFIX), this.readIndexFile(this.path(TXN_INDEX_SUFFIX)));
    this.maxTs = { timestamp: -1, offset: this.baseOffset };
    this.bytesSinceLastIndexEntry = 0;
    this.rollingBasedTimestamp = null;
  }

  private indexRecovered(view: { maxTimestamp: number; lastOffset: number; sizeInBytes: number }, position: number): void {
    const maxTs = this.maxTs!;
    if (view.maxTimestamp > maxTs.timestamp) { maxTs.timestamp = view.maxTimestamp; maxTs.offset = view.lastOffset; }
    if (this.rollingBasedTimestamp === null) this.rollingBasedTimestamp = view.maxTimestamp;
    if (this.bytesSinceLastIndexEntry > this.config.indexIntervalBytes && !this.offsetIndexLoaded!.isFull) {
      this.offsetIndexLoaded!.append(view.lastOffset, position);
      this.timeIndexLoaded!.maybeAppend(maxTs.timestamp, maxTs.offset);
      this.bytesSinceLastIndexEntry = 0;
    }
    this.bytesSinceLastIndexEntry += view.sizeInBytes;
  }

  /** Rebuilds both indexes from the batch headers (no CRC check: the data was trusted). */
  rebuildIndexes(): void {
    this.resetIndexes();
    let next = this.baseOffset;
    for (const h of this.headers(0)) {
      this.indexRecovered({ maxTimestamp: h.maxTimestamp, lastOffset: h.lastOffset, sizeInBytes: h.size }, h.position);
      next = h.lastOffset + 1;
    }
    this.nextOffsetKnown = next;
  }

  /** Drops the batch holding `offset` and everything after it, as Kafka does; returns the bytes removed. */
  truncateTo(offset: number): number {
    // Whether or not bytes go, the segment is the active one afterwards and takes appends.
    this.ownLogFile();
    const h = this.translateOffset(offset);
    if (!h) return 0;
    const removed = this.size - h.position;
    this.logFile().truncate(h.position);
    this.size = h.position;
    this.txnIndex.truncateTo(offset, this.files);
    this.rebuildIndexes();
    return removed;
  }

  /**
   * Before the log file changes in place (truncated, or appended to again as the active segment):
   * a file with other names (the local-directory tier links a copied segment's log instead of
   * copying its bytes) is replaced by a copy of its own under the same name, so the other names
   * keep the bytes they were given. Rare (a truncation into a copied segment, an open whose last
   * segment was copied), so a blocking copy. A crash mid-copy leaves a .tmp file that open removes.
   */
  ownLogFile(): void {
    if (this.logFileMissing) return;
    const fs = this.files.fs;
    if (fs.linkCount(this.logPath) <= 1) return;
    const temp = this.logPath + '.tmp';
    try {
      const from = this.logFile();
      const to = fs.open(temp, { create: true });
      try {
        to.truncate(0);
        const chunk = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
        const size = from.size();
        for (let position = 0; position < size;) {
          const n = from.read(chunk, 0, Math.min(chunk.length, size - position), position);
          if (n === 0) throw new StorageError('KAFKA_STORAGE_ERROR', `short read at ${position} of ${this.logPath}: ${size} bytes expected`);
          to.write(chunk.subarray(0, n), position);
          position += n;
        }
        to.sync();
      } finally {
        to.close();
      }
      this.files.close(this.logPath);
      fs.rename(temp, this.logPath);
    } catch (e) {
      fs.remove(temp);
      throw e;
    }
    fs.syncDir(this.dir);
    assert(fs.linkCount(this.logPath) === 1, `${this.logPath} still shared after its copy`);
  }

  /** Writes index entries and fsyncs everything. */
  flush(): void {
    if (!this.logFileMissing) this.logFile().sync();
    this.offsetIndex.flush(this.files, true);
    this.timeIndex.flush(this.files, true);
    if (this.files.fs.exists(this.path(TXN_INDEX_SUFFIX))) this.files.get(this.path(TXN_INDEX_SUFFIX)).sync();
  }

  /** Writes index entries without fsync (clean shutdown still flushes). */
  flushIndexes(): void {
    this.offsetIndexLoaded?.flush(this.files, false);
    this.timeIndexLoaded?.flush(this.files, false);
  }

  closeFiles(): void {
    for (const s of [LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX]) this.files.close(this.path(s));
  }

  /** Every file of the segment that exists. */
  existingPaths(): string[] {
    return [LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX].map((s) => this.path(s)).filter((p) => this.files.fs.exists(p));
  }

  /** Renames every file with an extra suffix (".deleted", ".swap") or back ("" from a suffixed name). */
  renameTo(suffix: string): void {
    this.closeFiles();
    const fs = this.files.fs;
    for (const kind of [LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX]) {
      const from = this.path(kind);
      if (fs.exists(from)) fs.rename(from, nodePath.join(this.dir, segmentFileName(this.baseOffset, kind) + suffix));
    }
    this.suffix = suffix;
  }
}
