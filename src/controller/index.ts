// The controller room's door. It only ever emits metadata records; applying them is the metadata
// room's job once they are committed.
export { topicNameError, collisionKey, isInternalTopic, METADATA_TOPIC_NAME, TOPIC_NAME_LENGTH_MAX } from './topic-names.js';
export { placeReplicas, rackAlternated, type PlacementBroker } from './placement.js';
export {
  createTopics, deleteTopics, createPartitions, randomUuid, RecordType, CONFIG_RESOURCE_TOPIC,
  type EmittedRecord, type ControllerView, type TopicSummary, type TopicDefaults, type TopicConfigValidator,
  type CreateTopicsOutcome, type DeleteTopicsOutcome, type CreatePartitionsOutcome,
} from './topics.js';
export {
  QuorumController, BROKER_SESSION_TIMEOUT_MS_DEFAULT, type QuorumControllerOptions,
} from './quorum-controller.js';
export type { ControllerResult } from './result.js';
export { PartitionChangeBuilder, type Election, type PartitionChangeRecordOut } from './partition-change.js';
export { BrokerHeartbeatManager, type BrokerSession } from './heartbeat-manager.js';
export { ClusterControlManager, type HeartbeatTransition, type RegistrationOutcome } from './cluster-control.js';
export {
  ReplicationControlManager, UNCLEAN_LEADER_ELECTION_ENABLE, ElectionType, BALANCE_ELECTIONS_MAX, isActiveBroker, usableBrokers, imageView, toMetadataRecords,
} from './replication-control.js';
export {
  FeatureControlManager, CONTROLLER_FEATURES, KRAFT_VERSION_FEATURE, GROUP_VERSION_FEATURE,
  METADATA_VERSION_MINIMUM, METADATA_VERSION_LATEST, metadataVersionLevel, metadataVersionName, defaultFeatureLevel, type FeatureRange,
} from './features.js';
export { MIN_INSYNC_REPLICAS, topicMinIsr, effectiveMinIsr } from './min-isr.js';
export { createAcls, deleteAcls } from './acls.js';
export { ProducerIdControlManager, PRODUCER_ID_BLOCK_SIZE } from './producer-ids.js';
export { ControllerSeat, type Activation, type QuorumLeadership, type SeatChange } from './seat.js';
