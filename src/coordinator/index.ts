// The coordinator room's door: the coordinator runtime (generic over a shard: load/unload per
// partition, operations, replay, timers); the group coordinator shard (a deterministic state
// machine over one `__consumer_offsets` partition) and the service that routes groups to shards,
// the record serde, and the KIP-848 server-side assignors; the transaction coordinator.
export { rangeAssign, uniformAssign, type Assignment, type AssignorInput, type AssignorMember, type AssignorOutput } from './group/assignors.js';
export {
  GroupCoordinatorShard, commitAppendError, defaultGroupConfig, joinError, syncError, type CommitParams, type TxnCommitParams, type PartitionResults,
  type FetchedOffset, type GroupDescription, type GroupCoordinatorConfig, type Effects, type Reply, type ClientInfo, type JoinParams, type SyncParams,
} from './group/shard.js';
export { encodeGroupRecord, decodeGroupRecord, decodeVersioned, encodeVersioned, type GroupRecord } from './group/records.js';
export { Timers } from './runtime/timers.js';
export { GroupCoordinatorService, OFFSETS_TOPIC, partitionForGroup, javaStringHashCode, type GroupServiceDeps } from './group/service.js';
export {
  CoordinatorRuntime, replayPartition, type CoordinatorLog, type RuntimeLogger, type CoordinatorShard, type CoordinatorResult, type CoordinatorRuntimeDeps,
  type ShardStatus, type BatchOrigin,
} from './runtime/runtime.js';
export { replicaManagerLog } from './runtime/partition-log.js';
export { type TopicsSnapshot, type HeartbeatParams } from './group/consumer.js';
export { consumerGroupState, type ConsumerGroup, type ConsumerMember } from './group/consumer-model.js';
// Share groups' data path (KIP-932): the share-partition state machine and its manager on the
// partition leaders, and the share coordinator over `__share_group_state`.
export {
  SharePartition, RecordState, AcknowledgeType, type SharePartitionConfig, type StateBatch, type ShareState, type BatchSpan, type AcquiredRange,
  type AcknowledgementBatch,
} from './share/share-partition.js';
export {
  SharePartitionManager, ShareStats, batchSpans, DEAD_LETTER_HEADERS, type DeadLetterWriter, type ShareGroupSettings, type SharePersister, type ShareLog, type SharePartitionManagerDeps,
  type ShareFetchPartition, type ShareFetchResult,
} from './share/partition-manager.js';
export { ShareCoordinatorService, SHARE_STATE_TOPIC, type ShareCoordinatorDeps } from './share/state-service.js';
export { ShareCoordinatorShard, mergeStateBatches, type ShareCoordinatorConfig, type WriteParams, type ReadResult } from './share/state-shard.js';
export { encodeShareStateRecord, decodeShareStateRecord, shareCoordinatorKey, type SharePartitionKey, type ShareStateRecord } from './share/state-records.js';
export { simpleShareAssign, shareGroupState, type ShareGroup, type ShareMember, type ShareHeartbeatParams } from './group/share-groups.js';
// The transaction coordinator.
export {
  TransactionCoordinatorShard, defaultTxnConfig, txnAppendError, fencedErrorForVersion, encodeTxnRecord, decodeTxnRecord, sortPartitions,
  TXN_STATES, TXN_LOG_KEY_TYPE, NO_PRODUCER_ID, NO_PRODUCER_EPOCH, isEpochExhausted, isValidExpectedProducer, supportsEpochBump, VALID_PREVIOUS_STATES,
  PRODUCER_EPOCH_MAX, partitionForTransactionalId, TRANSACTION_STATE_TOPIC, TxnMarkerChannel, TxnCoordinatorService, type TxnServiceDeps, type MarkerSender,
  type TxnCoordinatorConfig, type TxnEffects, type TxnReply, type MarkerWrite, type InitProducerIdParams, type InitProducerIdResult,
  type ProducerParams, type AddPartitionsParams, type AddOffsetsParams, type EndTxnParams, type EndTxnResult, type PartitionError, type ListTransactionsFilters,
  type TxnRecord, type TxnRecordValue, type TxnState, type TopicPartition, type TransactionMetadata,
} from './txn/index.js';
