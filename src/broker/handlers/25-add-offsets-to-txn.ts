// AddOffsetsToTxn (key 25), v0-4: puts the group's `__consumer_offsets` partition into the
// transaction, so the offsets the producer then commits with TxnOffsetCommit get the transaction's
// marker. The offsets topic is created here if it does not exist yet (a consume-transform-produce
// loop may commit before any group coordinator was found).
import { ErrorCode, type AddOffsetsToTxnRequest } from '../../protocol/index.js';
import { fencedErrorForVersion } from '../../coordinator/index.js';
import type { HandlerSpec } from '../context.js';
import type { TxnServices } from '../services.js';

export const addOffsetsToTxnHandler: HandlerSpec<TxnServices, 25> = {
  apiKey: 25,
  minVersion: 0,
  maxVersion: 4,
  async handle(request: AddOffsetsToTxnRequest, ctx) {
    if (await ctx.services.ensureOffsetsTopic() !== 0) return { throttleTimeMs: 0, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE };
    const code = await ctx.services.txn.addOffsets({
      transactionalId: request.transactionalId, producerId: request.producerId, producerEpoch: request.producerEpoch,
      groupId: request.groupId, offsetsPartition: ctx.services.groups.partitionFor(request.groupId),
    });
    return { throttleTimeMs: 0, errorCode: fencedErrorForVersion(code, 25, ctx.apiVersion) };
  },
};
