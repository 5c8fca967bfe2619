// Where a segment's objects live in the store: one folder per partition, one object per file,
// named as Kafka's LocalTieredStorage names them, so a listing reads like a partition directory:
//   <prefix><topic>-<partition>-<topicId>/<startOffset, 20 digits>-<segmentUuid>.log|.index|...
import { RemoteStorageError } from './errors.js';
import { checkTopicIdPartition, type RemoteLogSegmentMetadata, type TopicIdPartition } from './segment-metadata.js';
import { IndexType } from './storage-manager.js';
import { RemoteLogMetadataError } from './errors.js';

export const SEGMENT_SUFFIX = '.log';
export const INDEX_SUFFIXES: Readonly<Record<IndexType, string>> = {
  [IndexType.OFFSET]: '.index',
  [IndexType.TIMESTAMP]: '.timeindex',
  [IndexType.TRANSACTION]: '.txnindex',
  [IndexType.PRODUCER_SNAPSHOT]: '.snapshot',
  [IndexType.LEADER_EPOCH]: '.leader-epoch-checkpoint',
};
export const ALL_SUFFIXES: readonly string[] = [SEGMENT_SUFFIX, ...Object.values(INDEX_SUFFIXES)];

/** A key prefix must be empty or end with '/'-free safe characters; checked by isSafeObjectKey on use. */
export function partitionFolder(prefix: string, p: TopicIdPartition): string {
  try { checkTopicIdPartition(p); } catch (e) {
    if (e instanceof RemoteLogMetadataError) throw new RemoteStorageError(e.message, { retriable: false });
    throw e;
  }
  return `${prefix}${p.topic}-${p.partition}-${p.topicId}/`;
}

/** The key of one object of a segment, without its suffix. */
export function segmentObjectBase(prefix: string, m: RemoteLogSegmentMetadata): string {
  const id = m.remoteLogSegmentId;
  if (!/^[A-Za-z0-9_-]{22}$/.test(id.id)) throw new RemoteStorageError(`segment id ${JSON.stringify(id.id)} is not a UUID`, { retriable: false });
  return `${partitionFolder(prefix, id.topicIdPartition)}${String(m.startOffset).padStart(20, '0')}-${id.id}`;
}
