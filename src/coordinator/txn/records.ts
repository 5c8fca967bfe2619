// The records a transaction coordinator writes to its `__transaction_state` partition, with Kafka's
// own schemas (TransactionLogKey and TransactionLogValue, generated into src/protocol from Kafka's
// JSON message schemas, which are kept outside this repository; see scripts/generate-protocol.mjs).
// The key is an int16 record type (0, the TransactionLogKey's only version) and the transactional
// id; the value is an int16 value version and the TransactionLogValue fields; a null value is the
// tombstone written when the transactional id expires. Kafka's tools can read our topic and we can
// read theirs.
//
// What the log does not hold, Kafka does not hold either: the last producer epoch is never written
// (a reloaded id has -1 there); the previous and next producer ids (tagged fields) and the client's
// transaction version exist from value version 1 only (a version 0 record reads as -1, -1, 0).
import { Reader, Writer, decodeMessage, encodeMessage, ProtocolError, type TransactionLogValue } from '../../protocol/index.js';
import { assert } from '../../util/index.js';

export type TxnState =
  | 'Empty' | 'Ongoing' | 'PrepareCommit' | 'PrepareAbort' | 'CompleteCommit' | 'CompleteAbort' | 'Dead' | 'PrepareEpochFence';

/** The state ids of TransactionLogValue.TransactionStatus, in Kafka's order. */
export const TXN_STATES: readonly TxnState[] = [
  'Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence',
];

export const TXN_LOG_KEY_TYPE = 0;
export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;

export interface TopicPartition { topic: string; partition: number }

/** One transactional id's metadata as a record carries it (times in ms). */
export interface TxnRecordValue {
  producerId: bigint;
  lastProducerId: bigint;
  /**
   * Transaction version 2: the producer id the transaction continues under once it completes, set
   * in the Prepare record when ending it used up the epochs of `producerId`; -1 otherwise.
   */
  nextProducerId: bigint;
  producerEpoch: number;
  /** Kept in memory only: written records lose it, as in Kafka. */
  lastProducerEpoch: number;
  txnTimeoutMs: number;
  state: TxnState;
  /** Sorted by topic, then partition. Empty in Empty and the Complete states. */
  topicPartitions: TopicPartition[];
  txnStartTimestampMs: number;
  txnLastUpdateTimestampMs: number;
  clientTransactionVersion: number;
}

export interface TxnRecord { transactionalId: string; value: TxnRecordValue | null }
export interface RecordBytes { key: Buffer; value: Buffer | null }

function groupByTopic(tps: TopicPartition[]): { topic: string; partitionIds: number[] }[] {
  const out: { topic: string; partitionIds: number[] }[] = [];
  for (const tp of tps) {
    const last = out[out.length - 1];
    if (last && last.topic === tp.topic) last.partitionIds.push(tp.partition);
    else out.push({ topic: tp.topic, partitionIds: [tp.partition] });
  }
  return out;
}

/**
 * `valueVersion` 1 is flexible and carries the previous and next producer ids and the client's
 * transaction version. A transaction version 2 value is always written as version 1: version 0
 * would lose the next producer id and the version, and with them how a retried EndTxn is judged.
 */
export function encodeTxnRecord(r: TxnRecord, valueVersion: 0 | 1 = 1): RecordBytes {
  const kw = new Writer();
  kw.int16(TXN_LOG_KEY_TYPE);
  encodeMessage('TransactionLogKey', 0, { transactionalId: r.transactionalId }, kw);
  if (r.value === null) return { key: kw.toBuffer(), value: null };
  const v = r.value;
  assert(v.state !== 'Dead' && v.state !== 'PrepareEpochFence', `a ${v.state} state is never written`);
  assert(v.state !== 'Empty' || v.topicPartitions.length === 0, 'an Empty transaction has no partitions');
  const value: TransactionLogValue = {
    producerId: v.producerId, previousProducerId: v.lastProducerId, nextProducerId: v.nextProducerId, producerEpoch: v.producerEpoch,
    transactionTimeoutMs: v.txnTimeoutMs, transactionStatus: TXN_STATES.indexOf(v.state),
    // Kafka writes no partition list (null) for an Empty transaction.
    transactionPartitions: v.state === 'Empty' ? null : groupByTopic(v.topicPartitions),
    transactionLastUpdateTimestampMs: BigInt(v.txnLastUpdateTimestampMs), transactionStartTimestampMs: BigInt(v.txnStartTimestampMs),
    clientTransactionVersion: v.clientTransactionVersion,
  };
  const vw = new Writer();
  const version = v.clientTransactionVersion >= 2 ? 1 : valueVersion;
  vw.int16(version);
  encodeMessage('TransactionLogValue', version, value, vw);
  return { key: kw.toBuffer(), value: vw.toBuffer() };
}

export function sortPartitions(tps: Iterable<TopicPartition>): TopicPartition[] {
  return [...tps].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
}

/** Decodes one record of the transaction state topic; an unknown key type (a newer Kafka's) gives null. */
export function decodeTxnRecord(key: Buffer, value: Buffer | null): TxnRecord | null {
  const kr = new Reader(key);
  const type = kr.int16();
  if (type !== TXN_LOG_KEY_TYPE) return null;
  const { transactionalId } = decodeMessage<{ transactionalId: string }>('TransactionLogKey', 0, kr);
  if (value === null) return { transactionalId, value: null };
  const vr = new Reader(value);
  const version = vr.int16();
  if (version < 0 || version > 1) throw new ProtocolError(`TransactionLogValue: unsupported version ${version}`);
  const v = decodeMessage<TransactionLogValue>('TransactionLogValue', version, vr);
  const state = TXN_STATES[v.transactionStatus];
  if (state === undefined) throw new ProtocolError(`TransactionLogValue: unknown transaction status ${v.transactionStatus}`);
  const tps: TopicPartition[] = [];
  if (state !== 'Empty') for (const t of v.transactionPartitions ?? []) for (const p of t.partitionIds) tps.push({ topic: t.topic, partition: p });
  return {
    transactionalId,
    value: {
      producerId: v.producerId, lastProducerId: version >= 1 ? v.previousProducerId : NO_PRODUCER_ID,
      nextProducerId: version >= 1 ? v.nextProducerId : NO_PRODUCER_ID, producerEpoch: v.producerEpoch,
      lastProducerEpoch: NO_PRODUCER_EPOCH, txnTimeoutMs: v.transactionTimeoutMs, state, topicPartitions: sortPartitions(tps),
      txnStartTimestampMs: Number(v.transactionStartTimestampMs), txnLastUpdateTimestampMs: Number(v.transactionLastUpdateTimestampMs),
      clientTransactionVersion: version >= 1 ? v.clientTransactionVersion : 0,
    },
  };
}
