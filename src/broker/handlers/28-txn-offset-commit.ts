// TxnOffsetCommit (key 28), v0-5: a transactional producer commits a consumer group's offsets as
// part of its transaction (consume-transform-produce). The offsets go to the group's
// `__consumer_offsets` partition in a transactional batch of that producer and become visible to
// OffsetFetch only when the transaction's COMMIT marker lands there; ABORT drops them. The group's
// partition must have been added with AddOffsetsToTxn first (checked with the coordinator, as
// Kafka's transaction verification does: INVALID_TXN_STATE otherwise). v3+ carry the member id,
// generation and group.instance.id, checked like OffsetCommit's (v0-2 commits are accepted without).
// v5 (transaction version 2, KIP-890 part 2; v4's body) adds the group's partition to the
// transaction itself, in place of the client's AddOffsetsToTxn; coordinator trouble is answered
// COORDINATOR_NOT_AVAILABLE (retriable; Kafka's group coordinator normalizes such errors the same way).
import { ErrorCode, type TxnOffsetCommitRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { TxnServices } from '../services.js';
import { clientHostOf } from './11-join-group.js';

/** From v5 the group's offsets partition is added to the transaction here (Kafka's txnOffsetCommitRequestVersionToTransactionSupportedOperation). */
const ADD_OFFSETS_MIN_VERSION = 5;
/** Transaction coordinator answers a client of the group coordinator should retry, not act on. */
const RETRIABLE_ADD_ERRORS = new Set<number>([
  ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.NETWORK_EXCEPTION,
]);

export const txnOffsetCommitHandler: HandlerSpec<TxnServices, 28> = {
  apiKey: 28,
  minVersion: 0,
  maxVersion: 5,
  async handle(request: TxnOffsetCommitRequest, ctx) {
    const s = ctx.services;
    const v = ctx.apiVersion;
    const view = s.metadata();
    const exists = (t: string, p: number) => view.topic(t)?.partitions.some((x) => x.partition === p) ?? false;
    const answer = (code: (t: string, p: number) => number) => ({
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code(t.name, p.partitionIndex) })) })),
    });
    const coordinatorError = s.groups.coordinatorError(request.groupId);
    if (coordinatorError !== 0) return answer(() => coordinatorError);
    const txnParams = {
      transactionalId: request.transactionalId, producerId: request.producerId, producerEpoch: request.producerEpoch,
      partitions: [{ topic: '__consumer_offsets', partition: s.groups.partitionFor(request.groupId) }],
    };
    // The transaction coordinator may be on another broker (its answer then comes over the network).
    const checked = (await s.checkTxnPartitions(txnParams, v >= ADD_OFFSETS_MIN_VERSION))[0]!.errorCode;
    const verified = RETRIABLE_ADD_ERRORS.has(checked) ? ErrorCode.COORDINATOR_NOT_AVAILABLE : checked;
    if (verified !== 0) {
      const code = verified === ErrorCode.TRANSACTION_ABORTABLE ? (v >= 4 ? ErrorCode.TRANSACTION_ABORTABLE : ErrorCode.INVALID_TXN_STATE)
        : verified === ErrorCode.PRODUCER_FENCED ? ErrorCode.INVALID_PRODUCER_EPOCH : verified;
      return answer(() => code);
    }
    const topics = request.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.filter((p) => exists(t.name, p.partitionIndex)).map((p) => ({
        partitionIndex: p.partitionIndex, committedOffset: p.committedOffset, committedLeaderEpoch: v >= 2 ? p.committedLeaderEpoch : -1,
        commitTimestamp: -1n, committedMetadata: p.committedMetadata,
      })),
    })).filter((t) => t.partitions.length > 0);
    const results = topics.length === 0 ? [] : await s.groups.txnCommitOffsets({
      groupId: request.groupId, producerId: request.producerId, producerEpoch: request.producerEpoch,
      generationIdOrMemberEpoch: v >= 3 ? request.generationId : -1, memberId: v >= 3 ? request.memberId : '',
      groupInstanceId: v >= 3 ? request.groupInstanceId : null, topics,
    }, { clientId: ctx.header.clientId ?? '', clientHost: clientHostOf(ctx.clientAddress), apiVersion: v });
    return answer((t, p) => (exists(t, p)
      ? results.find((x) => x.name === t)?.partitions.find((x) => x.partitionIndex === p)?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR
      : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
  },
};
