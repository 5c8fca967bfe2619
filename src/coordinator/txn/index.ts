// The transaction coordinator's door: the shard (a deterministic state machine over one
// `__transaction_state` partition), its record serde and the transition rules, the marker channel
// and the service that routes transactional ids to shards on the coordinator runtime; see README.md.
export {
  TransactionCoordinatorShard, defaultTxnConfig, txnAppendError, fencedErrorForVersion, OFFSETS_TOPIC,
  type TxnCoordinatorConfig, type TxnEffects, type TxnReply, type MarkerWrite, type InitProducerIdParams, type InitProducerIdResult,
  type ProducerParams, type AddPartitionsParams, type AddOffsetsParams, type EndTxnParams, type EndTxnResult, type PartitionError, type ListTransactionsFilters,
} from './shard.js';
export {
  encodeTxnRecord, decodeTxnRecord, sortPartitions, TXN_STATES, TXN_LOG_KEY_TYPE, NO_PRODUCER_ID, NO_PRODUCER_EPOCH,
  type TxnRecord, type TxnRecordValue, type TxnState, type TopicPartition,
} from './records.js';
export { isEpochExhausted, isValidExpectedProducer, supportsEpochBump, VALID_PREVIOUS_STATES, PRODUCER_EPOCH_MAX, type TransactionMetadata } from './metadata.js';
export { partitionForTransactionalId, TRANSACTION_STATE_TOPIC } from './partition.js';
export { TxnMarkerChannel, type MarkerSender } from './markers.js';
export { TxnCoordinatorService, type TxnServiceDeps } from './service.js';
