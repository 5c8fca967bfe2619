// Kafka's remote log metadata values (RemoteLogSegmentMetadata, its update, partition deletion) and
// the segment and partition-deletion state enums with Kafka's allowed transitions. Plain data: the
// state machine over them is metadata-cache.ts, the record codec metadata-records.ts.
import { RemoteLogMetadataError } from './errors.js';

/** A partition named by topic id as well as name (Kafka's TopicIdPartition). */
export interface TopicIdPartition {
  /** The topic id as Kafka prints it: 16 bytes in URL-safe base64 without padding. */
  readonly topicId: string;
  readonly topic: string;
  readonly partition: number;
}

/** A segment copy: the partition plus a UUID unique to this copy, even for a retried copy of the same segment. */
export interface RemoteLogSegmentId {
  readonly topicIdPartition: TopicIdPartition;
  readonly id: string;
}

/** Kafka's RemoteLogSegmentState, with its wire ids. */
export const RemoteLogSegmentState = {
  COPY_SEGMENT_STARTED: 0,
  COPY_SEGMENT_FINISHED: 1,
  DELETE_SEGMENT_STARTED: 2,
  DELETE_SEGMENT_FINISHED: 3,
} as const;
export type RemoteLogSegmentState = (typeof RemoteLogSegmentState)[keyof typeof RemoteLogSegmentState];

/** Kafka's RemotePartitionDeleteState, with its wire ids. */
export const RemotePartitionDeleteState = {
  DELETE_PARTITION_MARKED: 0,
  DELETE_PARTITION_STARTED: 1,
  DELETE_PARTITION_FINISHED: 2,
} as const;
export type RemotePartitionDeleteState = (typeof RemotePartitionDeleteState)[keyof typeof RemotePartitionDeleteState];

const SEGMENT_STATE_NAMES = Object.keys(RemoteLogSegmentState) as readonly string[];
const PARTITION_STATE_NAMES = Object.keys(RemotePartitionDeleteState) as readonly string[];
export const segmentStateName = (s: RemoteLogSegmentState | null): string => (s === null ? 'none' : SEGMENT_STATE_NAMES[s]!);
export const partitionDeleteStateName = (s: RemotePartitionDeleteState | null): string => (s === null ? 'none' : PARTITION_STATE_NAMES[s]!);

/**
 * Kafka's RemoteLogSegmentState.isValidTransition: a new segment starts at COPY_SEGMENT_STARTED;
 * a copy may finish or be abandoned (deleted); deletion finishes; repeating the current state is
 * allowed so retries and a new leader's replays are idempotent.
 */
export function isValidSegmentTransition(from: RemoteLogSegmentState | null, to: RemoteLogSegmentState): boolean {
  if (from === null) return to === RemoteLogSegmentState.COPY_SEGMENT_STARTED;
  if (from === to) return true;
  switch (from) {
    case RemoteLogSegmentState.COPY_SEGMENT_STARTED:
      return to === RemoteLogSegmentState.COPY_SEGMENT_FINISHED || to === RemoteLogSegmentState.DELETE_SEGMENT_STARTED;
    case RemoteLogSegmentState.COPY_SEGMENT_FINISHED:
      return to === RemoteLogSegmentState.DELETE_SEGMENT_STARTED;
    case RemoteLogSegmentState.DELETE_SEGMENT_STARTED:
      return to === RemoteLogSegmentState.DELETE_SEGMENT_FINISHED;
    default:
      return false;
  }
}

/**
 * Partition deletion only moves forward (marked, started, finished; repeats allowed). Kafka's enum
 * has no transition check and stores whatever comes last; we refuse a step back so a stale
 * record replayed late cannot resurrect a partition being deleted.
 */
export function isValidPartitionDeleteTransition(from: RemotePartitionDeleteState | null, to: RemotePartitionDeleteState): boolean {
  if (from === null) return to !== RemotePartitionDeleteState.DELETE_PARTITION_FINISHED;
  return to >= from;
}

/** One leader epoch of a segment and the offset it starts at. */
export interface SegmentLeaderEpoch {
  readonly leaderEpoch: number;
  readonly startOffset: number;
}

/** Kafka's RemoteLogSegmentMetadata. Offsets are safe-integer numbers (see src/protocol/README.md). */
export interface RemoteLogSegmentMetadata {
  readonly remoteLogSegmentId: RemoteLogSegmentId;
  readonly startOffset: number;
  /** Inclusive. */
  readonly endOffset: number;
  readonly maxTimestampMs: number;
  /** The broker that wrote this event (the leader that copied the segment). */
  readonly brokerId: number;
  readonly eventTimestampMs: number;
  /** Ascending by epoch; never empty. */
  readonly segmentLeaderEpochs: readonly SegmentLeaderEpoch[];
  /** Size of the segment's log file in bytes. */
  readonly segmentSizeInBytes: number;
  /** What the RemoteStorageManager returned from the copy, if anything. */
  readonly customMetadata: Buffer | null;
  readonly state: RemoteLogSegmentState;
}

/** Kafka's RemoteLogSegmentMetadataUpdate: a state change of an existing segment. */
export interface RemoteLogSegmentMetadataUpdate {
  readonly remoteLogSegmentId: RemoteLogSegmentId;
  readonly brokerId: number;
  readonly eventTimestampMs: number;
  readonly customMetadata: Buffer | null;
  readonly state: RemoteLogSegmentState;
}

/** Kafka's RemotePartitionDeleteMetadata. */
export interface RemotePartitionDeleteMetadata {
  readonly topicIdPartition: TopicIdPartition;
  readonly brokerId: number;
  readonly eventTimestampMs: number;
  readonly state: RemotePartitionDeleteState;
}

/** The events of `__remote_log_metadata`, one per record type. */
export type RemoteLogMetadataEvent =
  | { readonly kind: 'segment'; readonly metadata: RemoteLogSegmentMetadata }
  | { readonly kind: 'segment-update'; readonly update: RemoteLogSegmentMetadataUpdate }
  | { readonly kind: 'partition-delete'; readonly metadata: RemotePartitionDeleteMetadata };

export const topicIdPartitionKey = (p: TopicIdPartition): string => `${p.topicId}:${p.partition}`;
export const segmentIdKey = (id: RemoteLogSegmentId): string => `${topicIdPartitionKey(id.topicIdPartition)}:${id.id}`;

/** The segment with an update applied (Kafka's createWithUpdates). */
export function withUpdate(m: RemoteLogSegmentMetadata, u: RemoteLogSegmentMetadataUpdate): RemoteLogSegmentMetadata {
  return { ...m, brokerId: u.brokerId, eventTimestampMs: u.eventTimestampMs, customMetadata: u.customMetadata, state: u.state };
}

/**
 * The last offset of `leaderEpoch` inside the segment: the next epoch's start minus one, or the
 * segment's end offset (Kafka's RemoteLogMetadataCache.highestOffsetForEpoch on one segment).
 */
export function epochEndOffsetInSegment(m: RemoteLogSegmentMetadata, leaderEpoch: number): number {
  const next = m.segmentLeaderEpochs.find((e) => e.leaderEpoch > leaderEpoch);
  return next === undefined ? m.endOffset : next.startOffset - 1;
}

const isInt = (n: number, min: number, max: number): boolean => Number.isSafeInteger(n) && n >= min && n <= max;
const INT32_MAX = 0x7fffffff;
/** A UUID as Kafka prints it, in canonical form (the last character's unused bits zero), so it round-trips. */
export const isUuid = (s: string): boolean => /^[A-Za-z0-9_-]{22}$/.test(s) && Buffer.from(s, 'base64url').toString('base64url') === s;

/** Checks what Kafka's constructors check, and the ranges the record fields can carry. Throws INVALID_METADATA. */
export function checkSegmentMetadata(m: RemoteLogSegmentMetadata): void {
  const bad = (why: string): never => { throw new RemoteLogMetadataError('INVALID_METADATA', `segment ${m.remoteLogSegmentId.id}: ${why}`); };
  checkTopicIdPartition(m.remoteLogSegmentId.topicIdPartition);
  if (!isUuid(m.remoteLogSegmentId.id)) bad('segment id is not a UUID');
  if (!isInt(m.startOffset, 0, Number.MAX_SAFE_INTEGER)) bad(`start offset ${m.startOffset} is not a non-negative integer`);
  if (!isInt(m.endOffset, m.startOffset, Number.MAX_SAFE_INTEGER)) bad(`end offset ${m.endOffset} is less than start offset ${m.startOffset}`);
  if (!isInt(m.segmentSizeInBytes, 0, INT32_MAX)) bad(`size ${m.segmentSizeInBytes} is not an int32 byte count`);
  if (!isInt(m.brokerId, -1, INT32_MAX)) bad(`broker id ${m.brokerId}`);
  if (m.segmentLeaderEpochs.length === 0) bad('segment leader epochs must not be empty');
  let prev: SegmentLeaderEpoch | undefined;
  for (const e of m.segmentLeaderEpochs) {
    if (!isInt(e.leaderEpoch, 0, INT32_MAX) || !isInt(e.startOffset, 0, m.endOffset)) bad(`leader epoch entry ${e.leaderEpoch}@${e.startOffset} is out of range`);
    if (prev !== undefined && (e.leaderEpoch <= prev.leaderEpoch || e.startOffset < prev.startOffset)) bad('segment leader epochs must ascend');
    prev = e;
  }
}

export function checkTopicIdPartition(p: TopicIdPartition): void {
  if (!isUuid(p.topicId) || !isInt(p.partition, 0, INT32_MAX) || !/^[A-Za-z0-9._-]{1,249}$/.test(p.topic) || p.topic === '.' || p.topic === '..') {
    throw new RemoteLogMetadataError('INVALID_METADATA', `bad topic partition ${p.topic}-${p.partition} (${p.topicId})`);
  }
}
