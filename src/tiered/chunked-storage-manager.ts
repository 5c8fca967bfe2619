// The one RemoteStorageManager: it lays a segment's files out as objects in any ObjectStore and
// reads the log through fixed-size chunks. Objects are stored as the local files are (no
// transformation), so chunk i of a log is simply bytes [i*chunk, (i+1)*chunk) and the chunk index
// is implicit in the segment size; a ranged read fetches only the chunks it covers, through the
// chunk cache, a few chunks ahead of the reader.
import { Readable } from 'node:stream';
import { limits } from '../util/index.js';
import { RemoteStorageError } from './errors.js';
import { INDEX_SUFFIXES, SEGMENT_SUFFIX, segmentObjectBase, ALL_SUFFIXES } from './object-layout.js';
import type { ObjectStore } from './object-store.js';
import { ReadCache } from './read-cache.js';
import type { RemoteLogSegmentMetadata } from './segment-metadata.js';
import { IndexType, type LogSegmentData, type RemoteCacheStats, type RemoteStorageManager } from './storage-manager.js';

export interface ChunkedStorageManagerOptions {
  readonly store: ObjectStore;
  /** Prepended to every key (an S3 prefix, or '' for a directory of its own). */
  readonly keyPrefix?: string;
  /** Bytes per chunk of a log read. */
  readonly chunkBytes: number;
  /** Cache of log chunks; none: every read goes to the store. */
  readonly chunkCache?: ReadCache;
  /** Cache of whole index objects. */
  readonly indexCache?: ReadCache;
}

export class ChunkedStorageManager implements RemoteStorageManager {
  private readonly store: ObjectStore;
  private readonly prefix: string;
  readonly chunkBytes: number;
  private readonly chunkCache: ReadCache | undefined;
  private readonly indexCache: ReadCache | undefined;
  /**
   * Chunks loaded ahead of a reader: up to 4, and with them and the one being read at most half
   * the chunk cache (so they do not evict each other before they are read); one without a cache,
   * where nothing loaded ahead outlives the stream.
   */
  readonly prefetchChunks: number;

  constructor(o: ChunkedStorageManagerOptions) {
    if (!Number.isSafeInteger(o.chunkBytes) || o.chunkBytes < 1 || o.chunkBytes > limits.remoteChunkBytesMax) {
      throw new RemoteStorageError(`chunk size ${o.chunkBytes} must be between 1 and ${limits.remoteChunkBytesMax}`, { retriable: false });
    }
    this.store = o.store;
    this.prefix = o.keyPrefix ?? '';
    this.chunkBytes = o.chunkBytes;
    this.chunkCache = o.chunkCache;
    this.indexCache = o.indexCache;
    this.prefetchChunks = this.chunkCache === undefined ? 1 : Math.max(1, Math.min(4, Math.floor(this.chunkCache.bytesMax / this.chunkBytes / 2) - 1));
  }

  async copyLogSegmentData(m: RemoteLogSegmentMetadata, data: LogSegmentData): Promise<Buffer | null> {
    const base = segmentObjectBase(this.prefix, m);
    // Indexes first and the log last: a copy cut short leaves no log object, and the segment stays
    // COPY_SEGMENT_STARTED in the metadata, so nothing reads it and deletion cleans it up.
    const source = (x: string | Buffer) => (typeof x === 'string' ? { path: x } : { bytes: x });
    // The indexes are independent of each other and small: written at once, so a segment costs two
    // round trips of the store (S3) or one folder fsync (the local directory), not six.
    const indexes = [
      { key: base + INDEX_SUFFIXES.OFFSET, source: source(data.offsetIndex) },
      { key: base + INDEX_SUFFIXES.TIMESTAMP, source: source(data.timeIndex) },
      ...(data.transactionIndex !== undefined ? [{ key: base + INDEX_SUFFIXES.TRANSACTION, source: source(data.transactionIndex) }] : []),
      { key: base + INDEX_SUFFIXES.PRODUCER_SNAPSHOT, source: source(data.producerSnapshotIndex) },
      { key: base + INDEX_SUFFIXES.LEADER_EPOCH, source: { bytes: data.leaderEpochIndex } },
    ];
    // The indexes are copied (the log rewrites them in place after a truncation); the log may be
    // linked: the local log replaces a shared file before changing it (LogSegment.ownLogFile).
    await this.store.putAll(indexes, { key: base + SEGMENT_SUFFIX, source: { path: data.logSegment, link: true } });
    // A retried copy replaced the objects; nothing cached from the earlier attempt may be served.
    this.chunkCache?.invalidatePrefix(base);
    this.indexCache?.invalidatePrefix(base);
    return null;
  }

  async fetchLogSegment(m: RemoteLogSegmentMetadata, startPosition: number, endPosition?: number): Promise<Readable> {
    const size = m.segmentSizeInBytes;
    const last = Math.min(endPosition ?? size - 1, size - 1);
    if (!Number.isSafeInteger(startPosition) || startPosition < 0 || startPosition >= size) {
      throw new RemoteStorageError(`start position ${startPosition} is outside the segment (${size} bytes)`, { retriable: false });
    }
    if (endPosition !== undefined && (!Number.isSafeInteger(endPosition) || endPosition < startPosition)) {
      throw new RemoteStorageError(`end position ${endPosition} is before start position ${startPosition}`, { retriable: false });
    }
    const key = segmentObjectBase(this.prefix, m) + SEGMENT_SUFFIX;
    const firstChunk = Math.floor(startPosition / this.chunkBytes);
    const lastChunk = Math.floor(last / this.chunkBytes);
    // The first chunk is fetched before the stream is handed out, so a missing segment rejects
    // here (as Kafka's fetchLogSegment throws) rather than as a stream error later.
    const first = await this.chunk(key, firstChunk, size);
    return Readable.from(this.chunksOf(key, size, first, firstChunk, lastChunk, startPosition, last), { objectMode: false });
  }

  private async *chunksOf(key: string, size: number, first: Buffer, firstChunk: number, lastChunk: number, start: number, last: number): AsyncGenerator<Buffer> {
    // Chunks ahead of the reader load while it consumes this one (into the cache, where the next
    // reads of the segment find them); a failure surfaces only when that chunk is awaited.
    const ahead = new Map<number, Promise<Buffer>>();
    let current: Buffer = first;
    for (let i = firstChunk; i <= lastChunk; i++) {
      for (let j = i + 1; j <= Math.min(lastChunk, i + this.prefetchChunks); j++) {
        if (ahead.has(j)) continue;
        const p = this.chunk(key, j, size);
        p.catch(() => undefined);
        ahead.set(j, p);
      }
      const chunkStart = i * this.chunkBytes;
      const from = i === firstChunk ? start - chunkStart : 0;
      const to = i === lastChunk ? last - chunkStart + 1 : current.length;
      yield current.subarray(from, to);
      if (i < lastChunk) {
        current = await ahead.get(i + 1)!;
        ahead.delete(i + 1);
      }
    }
  }

  private async chunk(key: string, index: number, size: number): Promise<Buffer> {
    const start = index * this.chunkBytes;
    const end = Math.min(start + this.chunkBytes, size);
    const load = async (): Promise<Buffer> => {
      const bytes = await this.store.getRange(key, start, end);
      if (bytes.length !== end - start) {
        throw new RemoteStorageError(`${key}: chunk ${index} has ${bytes.length} bytes, expected ${end - start} (object shorter than its metadata says)`, { retriable: false });
      }
      return bytes;
    };
    return this.chunkCache === undefined ? load() : this.chunkCache.getOrLoad(`${key}#${index}`, load);
  }

  async fetchIndex(m: RemoteLogSegmentMetadata, indexType: IndexType): Promise<Buffer> {
    const suffix = INDEX_SUFFIXES[indexType];
    if (suffix === undefined) throw new RemoteStorageError(`unknown index type ${String(indexType)}`, { retriable: false });
    const key = segmentObjectBase(this.prefix, m) + suffix;
    const load = (): Promise<Buffer> => this.store.get(key, limits.remoteIndexBytesMax);
    return this.indexCache === undefined ? load() : this.indexCache.getOrLoad(key, load);
  }

  async deleteLogSegmentData(m: RemoteLogSegmentMetadata): Promise<void> {
    const base = segmentObjectBase(this.prefix, m);
    // The log first: once it is gone the segment can no longer be read, whatever is left.
    for (const suffix of ALL_SUFFIXES) await this.store.delete(base + suffix);
    this.chunkCache?.invalidatePrefix(base);
    this.indexCache?.invalidatePrefix(base);
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  cacheStats(): { chunk: RemoteCacheStats | null; index: RemoteCacheStats | null } {
    const of = (c: ReadCache | undefined): RemoteCacheStats | null => (c === undefined ? null : { ...c.stats(), bytesMax: c.bytesMax });
    return { chunk: of(this.chunkCache), index: of(this.indexCache) };
  }
}
