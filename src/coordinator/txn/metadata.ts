// Transaction metadata of one transactional id and the rules its transitions follow (Kafka's
// TransactionMetadata): which states may follow which, when a producer's epochs are used up, and
// how a producer id and epoch in a request are checked against the current ones.
import { partitionKey } from '../../util/index.js';
import { NO_PRODUCER_EPOCH, NO_PRODUCER_ID, type TopicPartition, type TxnRecordValue, type TxnState } from './records.js';

export interface TransactionMetadata extends TxnRecordValue { readonly transactionalId: string }

/**
 * The states each state may be entered from, as Kafka's coordinator. PrepareAbort from Empty or a
 * Complete state is transaction version 2 only: such a client may abort without knowing whether
 * its transaction began (the broker adds partitions for it).
 */
export const VALID_PREVIOUS_STATES: Record<TxnState, readonly TxnState[]> = {
  Empty: ['Empty', 'CompleteCommit', 'CompleteAbort'],
  Ongoing: ['Ongoing', 'Empty', 'CompleteCommit', 'CompleteAbort'],
  PrepareCommit: ['Ongoing'],
  PrepareAbort: ['Ongoing', 'PrepareEpochFence', 'Empty', 'CompleteCommit', 'CompleteAbort'],
  CompleteCommit: ['PrepareCommit'],
  CompleteAbort: ['PrepareAbort'],
  Dead: ['Empty', 'CompleteCommit', 'CompleteAbort'],
  PrepareEpochFence: ['Ongoing'],
};

/** States in which an idle transactional id may expire. */
export const EXPIRATION_ALLOWED: ReadonlySet<TxnState> = new Set(['Empty', 'CompleteCommit', 'CompleteAbort']);

export const PRODUCER_EPOCH_MAX = 32767;

/**
 * A client never gets Short.MaxValue as its epoch, so the coordinator can always fence it: from
 * Short.MaxValue - 1 on, the next InitProducerId rotates to a new producer id.
 */
export const isEpochExhausted = (epoch: number): boolean => epoch >= PRODUCER_EPOCH_MAX - 1;

/**
 * Transaction version 2 (KIP-890 part 2): every EndTxn bumps the producer epoch and the markers
 * carry the bumped one. Kafka's TransactionVersion.supportsEpochBump.
 */
export const supportsEpochBump = (clientTransactionVersion: number): boolean => clientTransactionVersion >= 2;

/**
 * KIP-360: an InitProducerId carrying a producer id and epoch is allowed when the id was just
 * created (no epoch yet), names the current producer id, or names the previous one with an
 * exhausted epoch (the retry of a rotation whose answer was lost).
 */
export function isValidExpectedProducer(m: TransactionMetadata, producerId: bigint, epoch: number): boolean {
  return m.producerEpoch === NO_PRODUCER_EPOCH || producerId === m.producerId || (producerId === m.lastProducerId && isEpochExhausted(epoch));
}

/**
 * The next value of `m`, as Kafka's prepareTransitionTo: the previous producer id becomes the
 * current one, and the next producer id is cleared unless the change sets it.
 */
export function transit(m: TransactionMetadata, changes: Partial<TxnRecordValue>): TxnRecordValue {
  return {
    producerId: m.producerId, lastProducerId: m.producerId, nextProducerId: NO_PRODUCER_ID, producerEpoch: m.producerEpoch, lastProducerEpoch: m.lastProducerEpoch,
    txnTimeoutMs: m.txnTimeoutMs, state: m.state, topicPartitions: m.topicPartitions, txnStartTimestampMs: m.txnStartTimestampMs,
    txnLastUpdateTimestampMs: m.txnLastUpdateTimestampMs, clientTransactionVersion: m.clientTransactionVersion, ...changes,
  };
}

export const tpKey = (tp: TopicPartition): string => partitionKey(tp.topic, tp.partition);
