// DescribeProducers (key 61), v0: the producers with state in each partition led here — id, epoch,
// last sequence and timestamp, and the start offset of an open transaction (what
// `kafka-transactions.sh describe-producers` shows to find a hanging transaction).
import type { DescribeProducersRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { TxnServices } from '../services.js';

export const describeProducersHandler: HandlerSpec<TxnServices, 61> = {
  apiKey: 61,
  minVersion: 0,
  maxVersion: 0,
  handle(request: DescribeProducersRequest, ctx) {
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((partitionIndex) => {
          const r = ctx.services.activeProducers(t.name, partitionIndex);
          return {
            partitionIndex, errorCode: r.errorCode, errorMessage: null,
            activeProducers: r.producers.map((p) => ({
              producerId: BigInt(p.producerId), producerEpoch: p.producerEpoch, lastSequence: p.lastSequence, lastTimestamp: BigInt(p.lastTimestamp),
              coordinatorEpoch: p.coordinatorEpoch, currentTxnStartOffset: BigInt(p.currentTxnStartOffset),
            })),
          };
        }),
      })),
    };
  },
};
