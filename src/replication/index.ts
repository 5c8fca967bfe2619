// The replication room's door: partitions, the replica manager, purgatories.
export { Purgatory, PurgatoryFullError, realScheduler, type Scheduler, type DelayedOperation } from './purgatory.js';
export { Partition, type PartitionState, type FollowerState, type PendingIsrChange, type IsrProposal, type IsrChangeResult, type IsrEligibility, type LocalLog, type AppendResult, type AppendOrigin, type ActiveProducer } from './partition.js';
export { ReplicaManager, errorCodeOf, type ReplicaManagerLimits, type ReplicaDeltaPorts, type PartitionConfig, type AppliedDelta, type ProduceEntryIn, type ProduceResultOut, type FetchPartitionIn, type FetchResultOut, type IsrOptions, type LeaderThrottle } from './replica-manager.js';
export { StorageLog } from './storage-log.js';
export { NO_REPLICA_FETCHERS, type ReplicaFetchers } from './fetchers.js';
export { AlterPartitionManager, NO_ISR_CHANGES, type IsrChangeChannel, type AlterPartitionManagerOptions } from './alter-partition-manager.js';
export {
  ReplicaFetcherManager, ReplicaFetcher, FetchSessionHandler, fetcherIdFor, offsetTruncationState, type FetchPartitionData,
  type LeaderLink, type LeaderEndpoint, type ReplicaFetcherConfig, type ReplicaFetcherPorts, type FetcherLogger,
} from './replica-fetcher.js';
export { LEADER_SELECTOR, RACK_AWARE_REPLICA_SELECTOR, replicaSelectorFor, type ReplicaSelector, type ReplicaView, type PartitionView, type ClientMetadata } from './replica-selector.js';
export { ReplicationQuota, UNTHROTTLED_RATE, parseThrottledReplicas, isThrottledReplica, type ReplicationQuotaConfig, type ThrottledReplicas } from './quota.js';
export { ReplicaManagerStats, produceRequestCounts, type ProduceRequestCount, type TopicCounters } from './stats.js';
export { schemaRecordCheck, subjectNameStrategyOf, SUBJECT_NAME_STRATEGIES, type SchemaIdLookup, type SchemaValidation, type SubjectNameStrategy } from './schema-validation.js';
