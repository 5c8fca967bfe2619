// InitProducerId (key 22), v0-5.
// Without a transactional id (an idempotent producer) it hands out a new producer id at epoch 0,
// from a block recorded in the cluster metadata; the producerId/producerEpoch of v3+ (KIP-360) are
// ignored then, as in Kafka: a fresh id is as good as a bumped epoch for an idempotent producer.
// With a transactional id it goes to that id's transaction coordinator: a new id gets a producer id
// at epoch 0, a known one its epoch bumped (fencing the older producer; an Ongoing transaction is
// aborted first and the client told CONCURRENT_TRANSACTIONS to retry), an exhausted epoch a new
// producer id. PRODUCER_FENCED (v4+) is INVALID_PRODUCER_EPOCH for older clients (KIP-588).
import { ErrorCode, type InitProducerIdRequest, type InitProducerIdResponse } from '../../protocol/index.js';
import { fencedErrorForVersion } from '../../coordinator/index.js';
import { ProducerIdError } from '../producer-ids.js';
import type { HandlerSpec } from '../context.js';
import type { TxnServices } from '../services.js';

export const initProducerIdHandler: HandlerSpec<Pick<TxnServices, 'txn' | 'ensureTransactionTopic'> & { generateProducerId(): Promise<bigint> }, 22> = {
  apiKey: 22,
  minVersion: 0,
  maxVersion: 5,
  async handle(request: InitProducerIdRequest, ctx): Promise<InitProducerIdResponse> {
    if (request.transactionalId !== null) {
      const topicError = await ctx.services.ensureTransactionTopic();
      if (topicError !== 0) return { throttleTimeMs: 0, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, producerId: -1n, producerEpoch: -1 };
      const r = await ctx.services.txn.initProducerId({
        transactionalId: request.transactionalId, transactionTimeoutMs: request.transactionTimeoutMs,
        producerId: ctx.apiVersion >= 3 ? request.producerId : -1n, producerEpoch: ctx.apiVersion >= 3 ? request.producerEpoch : -1,
      });
      return { throttleTimeMs: 0, errorCode: fencedErrorForVersion(r.errorCode, 22, ctx.apiVersion), producerId: r.producerId, producerEpoch: r.producerEpoch };
    }
    try {
      const producerId = await ctx.services.generateProducerId();
      return { throttleTimeMs: 0, errorCode: 0, producerId, producerEpoch: 0 };
    } catch (e) {
      // No block from the controller yet (not registered, no active controller): retriable, as Kafka answers.
      if (!(e instanceof ProducerIdError)) throw e;
      return { throttleTimeMs: 0, errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, producerId: -1n, producerEpoch: -1 };
    }
  },
};
