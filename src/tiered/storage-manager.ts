// The RemoteStorageManager port (Kafka's interface of the same name): copy a rolled segment and its
// indexes to the remote tier, read a byte range of it back, fetch one index, delete it all. Every
// method is async and none reads a whole segment into memory at once.
import type { Readable } from 'node:stream';
import type { RemoteLogSegmentMetadata } from './segment-metadata.js';

/** The files of one rolled segment, as the local log has them (Kafka's LogSegmentData). */
export interface LogSegmentData {
  /** Path of the segment's .log file. */
  readonly logSegment: string;
  /** An index is a file's path, or its bytes (an index the log never wrote a file for is empty). */
  readonly offsetIndex: string | Buffer;
  readonly timeIndex: string | Buffer;
  /** Absent for segments without aborted transactions (Kafka makes it optional too). */
  readonly transactionIndex?: string | Buffer;
  readonly producerSnapshotIndex: string | Buffer;
  /** The leader-epoch checkpoint for the segment's range, already rendered in checkpoint format. */
  readonly leaderEpochIndex: Buffer;
}

/** Kafka's RemoteStorageManager.IndexType. */
export const IndexType = {
  OFFSET: 'OFFSET',
  TIMESTAMP: 'TIMESTAMP',
  PRODUCER_SNAPSHOT: 'PRODUCER_SNAPSHOT',
  TRANSACTION: 'TRANSACTION',
  LEADER_EPOCH: 'LEADER_EPOCH',
} as const;
export type IndexType = (typeof IndexType)[keyof typeof IndexType];

export interface RemoteStorageManager {
  /**
   * Copies the segment's files. Idempotent: a retry with the same metadata overwrites what a failed
   * attempt left. Returns custom metadata to store with the segment, or null.
   */
  copyLogSegmentData(metadata: RemoteLogSegmentMetadata, data: LogSegmentData): Promise<Buffer | null>;
  /**
   * The segment's log bytes from `startPosition` to `endPosition` (inclusive, as in Kafka), or to
   * the end of the segment. Rejects with RemoteResourceNotFoundError when the segment is not
   * there; the stream yields the bytes piece by piece, fetched as it is read.
   */
  fetchLogSegment(metadata: RemoteLogSegmentMetadata, startPosition: number, endPosition?: number): Promise<Readable>;
  /**
   * One index of the segment, whole (indexes are bounded by segment.index.bytes and are cached
   * whole, as Kafka's RemoteIndexCache does). RemoteResourceNotFoundError when absent, e.g. a
   * transaction index that was never written.
   */
  fetchIndex(metadata: RemoteLogSegmentMetadata, indexType: IndexType): Promise<Buffer>;
  /** Deletes everything of the segment. Idempotent: nothing there is success. */
  deleteLogSegmentData(metadata: RemoteLogSegmentMetadata): Promise<void>;
  close(): Promise<void>;
  /** The read caches' occupancy against their bounds (the admin API and the bench show it); absent: no caches. */
  cacheStats?(): { chunk: RemoteCacheStats | null; index: RemoteCacheStats | null };
}

/** One read cache: what it holds now, and its bound. */
export interface RemoteCacheStats { bytes: number; bytesMax: number; entries: number; hits: number; misses: number; evictions: number }
