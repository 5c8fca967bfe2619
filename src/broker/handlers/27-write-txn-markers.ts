// WriteTxnMarkers (key 27), v0-1: a transaction coordinator asks the leader of each partition to
// append a COMMIT or ABORT control batch for a producer. Sent broker to broker
// (src/broker/txn-marker-sender.ts); markers for partitions led by the coordinator's own broker
// are written through the same code without the round trip. A marker on a
// `__consumer_offsets` partition also settles the producer's pending transactional offsets there.
import type { WriteTxnMarkersRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { TxnServices } from '../services.js';

export const writeTxnMarkersHandler: HandlerSpec<TxnServices, 27> = {
  apiKey: 27,
  minVersion: 0,
  maxVersion: 1,
  async handle(request: WriteTxnMarkersRequest, ctx) {
    const markers = await Promise.all(request.markers.map(async (m) => {
      const results = await ctx.services.writeTxnMarkers({
        producerId: m.producerId, producerEpoch: m.producerEpoch, coordinatorEpoch: m.coordinatorEpoch, commit: m.transactionResult,
        partitions: m.topics.flatMap((t) => t.partitionIndexes.map((partition) => ({ topic: t.name, partition }))),
      });
      const topics = m.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, errorCode: results.find((r) => r.topic === t.name && r.partition === p)?.errorCode ?? 0 })),
      }));
      return { producerId: m.producerId, topics };
    }));
    return { markers };
  },
};
