// The tiered room's door: the RemoteStorageManager port and its backends (a local directory, S3)
// behind one chunking layer, the read caches, and remote log metadata as a state machine over
// Kafka's `__remote_log_metadata` records, the metadata manager over that topic, and the
// RemoteLogManager's per-partition copy and expiry tasks and remote reads.
export { RemoteStorageError, RemoteResourceNotFoundError, RemoteLogMetadataError, RemoteLogMetadataWaitError, type RemoteLogMetadataErrorCode } from './errors.js';
export {
  RemoteLogSegmentState, RemotePartitionDeleteState, isValidSegmentTransition, isValidPartitionDeleteTransition,
  segmentStateName, partitionDeleteStateName, checkSegmentMetadata, epochEndOffsetInSegment,
  type TopicIdPartition, type RemoteLogSegmentId, type RemoteLogSegmentMetadata, type RemoteLogSegmentMetadataUpdate,
  type RemotePartitionDeleteMetadata, type RemoteLogMetadataEvent, type SegmentLeaderEpoch,
} from './segment-metadata.js';
export { IndexType, type RemoteStorageManager, type RemoteCacheStats, type LogSegmentData } from './storage-manager.js';
export { isSafeObjectKey, type ObjectStore, type ObjectSource, type ObjectPut } from './object-store.js';
export { partitionFolder, segmentObjectBase, SEGMENT_SUFFIX, INDEX_SUFFIXES } from './object-layout.js';
export { LocalObjectStore } from './local-object-store.js';
export { ChunkedStorageManager, type ChunkedStorageManagerOptions } from './chunked-storage-manager.js';
export { ReadCache, type ReadCacheStats } from './read-cache.js';
export { S3ObjectStore, S3_PART_BYTES_MIN, type S3ObjectStoreOptions } from './s3-object-store.js';
export {
  RemoteLogMetadataCache, RemotePartitionMetadataStore, type RemoteLogMetadataSnapshot, type EpochSnapshot,
} from './metadata-cache.js';
export {
  encodeRemoteLogMetadata, decodeRemoteLogMetadata, encodeSegmentSnapshotRecord, decodeSegmentSnapshotRecord, RemoteLogMetadataRecordType,
} from './metadata-records.js';
export {
  remoteStorageSettings, openRemoteStorageManager, validateTieredTopicConfig, REMOTE_STORAGE_DEFAULTS,
  type RemoteStorageSettings, type RemoteBackendSettings, type TieredTopicSettings,
} from './config.js';
export {
  RemoteLogMetadataManager, metadataPartitionFor, REMOTE_LOG_METADATA_TOPIC, REMOTE_LOG_METADATA_TOPIC_DEFAULTS,
  type RemoteLogMetadataTopic, type MetadataManagerLogger,
} from './metadata-manager.js';
export {
  RemoteLogManager, lookupPosition, type RemoteLogManagerOptions, type TieredPartition, type TieredScheduler, type TieredLogger, type RemoteTopicStats,
} from './remote-log-manager.js';
