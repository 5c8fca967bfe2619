// The storage room's door: partition logs on Kafka's on-disk layout, the log manager for a log
// directory, its meta.properties, the cleaner, and the FileSystem port with its real and in-memory
// implementations.
export { StorageError, type StorageErrorKind } from './errors.js';
export { NodeFileSystem, FileCache, type FileSystem, type FileHandle, type VolumeSpace } from './fs.js';
export { MemoryFileSystem, type Fault, type FaultOp } from './memory-fs.js';
export { LOG_DEFAULTS, logConfig, type LogConfig } from './config.js';
export { PartitionLog, type AppendInfo, type OpenOptions, type RecordCheck, type RecoveryReport, type TimestampAndOffset } from './partition-log.js';
export { LogSegment, segmentFileName, LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX } from './segment.js';
export { LeaderEpochCache } from './epoch-cache.js';
export { ProducerStateManager, type ProducerEntry, type BatchMetadata, type SequenceCheck, type MarkerInfo } from './producer-state.js';
export { TxnIndex, type AbortedTxn } from './indexes.js';
export {
  readOffsetCheckpoint, writeOffsetCheckpoint, epochCheckpointBytes, parseEpochCheckpoint, readProperties, writeProperties, readPartitionMetadata, writePartitionMetadata,
} from './checkpoint.js';
export { cleanLog, firstUncleanableOffset, type CleanResult } from './cleaner.js';
export { LogFlushStats, LOG_FLUSH_BUCKETS_MS } from './flush-stats.js';
export { LogFlusher } from './group-flush.js';
export { LogManager, type LogManagerOptions } from './log-manager.js';
export { META_PROPERTIES, randomUuid, isUuid, readMetaProperties, writeMetaProperties, type MetaProperties } from './meta-properties.js';
export { logDirName, parseLogDirName } from './log-dir-name.js';
export { LogDirFreeSpace, stateOf as freeSpaceStateOf, type LogDirFreeSpaceOptions, type LogDirSpaceState, type LogDirSpaceView, type FreeSpaceThresholds } from './free-space.js';
