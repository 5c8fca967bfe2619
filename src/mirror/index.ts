// The mirror room's door: MirrorMaker 2's configuration, record formats, replication policies,
// offset translation and the engine that runs the flows.
export { parseMirrorConfig, matches, MirrorConfigError, type MirrorConfig, type FlowSettings, type ClusterSettings, type TopicFilter } from './config.js';
export { policyFromConfig, originalTopic, isCycle, isInternalTopic, isHeartbeatsTopic, HEARTBEATS_TOPIC, type ReplicationPolicy } from './policy.js';
export {
  encodeOffsetSync, decodeOffsetSync, encodeCheckpoint, decodeCheckpoint, encodeHeartbeat, decodeHeartbeat, encodeSourceOffset, decodeSourceOffset,
  SOURCE_CONNECTOR, FormatError, type OffsetSync, type Checkpoint, type Heartbeat, type SourceOffset,
} from './formats.js';
export { OffsetSyncDecider, OffsetSyncStore, type Sync } from './offset-syncs.js';
export { shouldReplicateTopic, sourceOffsetsTopic, targetTopicAcls } from './source-task.js';
export type { TopicAcl } from './admin.js';
export { checkpointIsMoreRecent } from './checkpoint-task.js';
export { MirrorMetrics, type PartitionStatus, type CheckpointStatus, type FlowStatus } from './metrics.js';
export { MirrorEngine, mirrorClientOptions, type MirrorEngineOptions } from './engine.js';
