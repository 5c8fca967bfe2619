// InitProducerId (key 22), v0-5.
// Without a transactional id (an idempotent producer) it hands out a new producer id at epoch 0,
// from a block recorded in the cluster metadata; the producerId/producerEpoch of v3+ (KIP-360) are
// ignored then, as in Kafka: a fresh id is as good as a bumped epoch for an idempotent producer.
// Transactional ids need the transaction coordinator, which is not built yet: they get
// COORDINATOR_NOT_AVAILABLE, as FindCoordinator does for them.
import { ErrorCode, type InitProducerIdRequest, type InitProducerIdResponse } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';

export const initProducerIdHandler: HandlerSpec<{ generateProducerId(): Promise<bigint> }> = {
  apiKey: 22,
  minVersion: 0,
  maxVersion: 5,
  async handle(request: InitProducerIdRequest, ctx): Promise<InitProducerIdResponse> {
    if (request.transactionalId !== null) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, producerId: -1n, producerEpoch: -1 };
    }
    const producerId = await ctx.services.generateProducerId();
    return { throttleTimeMs: 0, errorCode: 0, producerId, producerEpoch: 0 };
  },
};
