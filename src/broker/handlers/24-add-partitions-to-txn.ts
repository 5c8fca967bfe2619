// AddPartitionsToTxn (key 24), v0-5. v0-3 (clients): one transaction's partitions are added before
// the producer writes to them; the answer waits for the coordinator's record. v4+ (brokers, KIP-890):
// several transactions at once, each may be verifyOnly — a code per partition saying whether it is
// already in the transaction (TRANSACTION_ABORTABLE when not), nothing written. v5 is what a leader
// sends for a transaction version 2 client (Produce v12, TxnOffsetCommit v5): without verifyOnly
// it adds the partitions and marks the transaction as version 2, as Kafka reads the version
// (v4 adds as version 1). A partition leader sends v4/v5 when the transaction's coordinator is on
// another broker (src/broker/txn-verification.ts); when it is on the same broker it calls the
// coordinator directly. A partition of an
// unknown topic fails the whole transaction's request: UNKNOWN_TOPIC_OR_PARTITION for it and
// OPERATION_NOT_ATTEMPTED for the others, as Kafka answers. A request may name at most
// limits.partitionsPerRequestMax partitions.
import { ErrorCode, type AddPartitionsToTxnRequest, type AddPartitionsToTxnRequestAddPartitionsToTxnTopic } from '../../protocol/index.js';
import { fencedErrorForVersion, type PartitionError } from '../../coordinator/index.js';
import { limits } from '../../util/index.js';
import type { HandlerSpec } from '../context.js';
import type { TxnServices } from '../services.js';

/** From this version an add (not verifyOnly) is for a transaction version 2 client (Kafka's transactionVersionForAddPartitionsToTxn). */
const ADD_PARTITIONS_TV2_VERSION = 5;

type TopicResult = { name: string; resultsByPartition: { partitionIndex: number; partitionErrorCode: number }[] };

function byTopic(errors: PartitionError[]): TopicResult[] {
  const out = new Map<string, TopicResult>();
  for (const e of errors) {
    let t = out.get(e.topic);
    if (!t) out.set(e.topic, t = { name: e.topic, resultsByPartition: [] });
    t.resultsByPartition.push({ partitionIndex: e.partition, partitionErrorCode: e.errorCode });
  }
  return [...out.values()];
}

async function addOne(s: TxnServices, apiVersion: number, transactionalId: string, producerId: bigint, producerEpoch: number,
  topics: AddPartitionsToTxnRequestAddPartitionsToTxnTopic[], verifyOnly: boolean): Promise<TopicResult[]> {
  const clientTransactionVersion = apiVersion >= ADD_PARTITIONS_TV2_VERSION ? 2 : 0;
  const view = s.metadata();
  const partitions = topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.name, partition })));
  const known = (topic: string, partition: number) => view.topic(topic)?.partitions.some((p) => p.partition === partition) ?? false;
  if (partitions.some((p) => !known(p.topic, p.partition))) {
    return byTopic(partitions.map((p) => ({ ...p, errorCode: known(p.topic, p.partition) ? ErrorCode.OPERATION_NOT_ATTEMPTED : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION })));
  }
  const params = { transactionalId, producerId, producerEpoch, partitions, clientTransactionVersion };
  const errors = verifyOnly
    ? s.txn.verifyPartitions(params)
    : await s.txn.addPartitions(params).then((code) => partitions.map((p) => ({ ...p, errorCode: fencedErrorForVersion(code, 24, apiVersion) })));
  return byTopic(errors);
}

export const addPartitionsToTxnHandler: HandlerSpec<TxnServices, 24> = {
  apiKey: 24,
  minVersion: 0,
  maxVersion: 5,
  async handle(request: AddPartitionsToTxnRequest, ctx) {
    const v = ctx.apiVersion;
    const count = v < 4 ? request.v3AndBelowTopics.reduce((n, t) => n + t.partitions.length, 0)
      : request.transactions.reduce((n, x) => n + x.topics.reduce((m, t) => m + t.partitions.length, 0), 0);
    if (v < 4) {
      const all = (code: number) => request.v3AndBelowTopics.map((t) => ({ name: t.name, resultsByPartition: t.partitions.map((p) => ({ partitionIndex: p, partitionErrorCode: code })) }));
      const results = count > limits.partitionsPerRequestMax ? all(ErrorCode.INVALID_REQUEST)
        : await addOne(ctx.services, v, request.v3AndBelowTransactionalId, request.v3AndBelowProducerId, request.v3AndBelowProducerEpoch, request.v3AndBelowTopics, false);
      return { throttleTimeMs: 0, errorCode: 0, resultsByTransaction: [], resultsByTopicV3AndBelow: results };
    }
    if (count > limits.partitionsPerRequestMax) return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, resultsByTransaction: [], resultsByTopicV3AndBelow: [] };
    const resultsByTransaction = await Promise.all(request.transactions.map(async (x) => ({
      transactionalId: x.transactionalId,
      topicResults: await addOne(ctx.services, v, x.transactionalId, x.producerId, x.producerEpoch, x.topics, x.verifyOnly),
    })));
    return { throttleTimeMs: 0, errorCode: 0, resultsByTransaction, resultsByTopicV3AndBelow: [] };
  },
};
