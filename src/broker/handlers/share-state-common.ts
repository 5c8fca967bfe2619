// What the share coordinator's RPCs (83-87) share: each request names a group and, per topic id,
// partitions; each partition is one share-partition of the coordinator's state, answered with its
// own error code. The partitions of one request run concurrently (each is one operation on its
// `__share_group_state` shard, and the runtime orders operations per shard).
import type { SharePartitionKey, StateBatch } from '../../coordinator/index.js';

export interface StateRequest<P extends { partition: number }> { groupId: string; topics: { topicId: string; partitions: P[] }[] }

/** Runs `each` over every (topic, partition) of the request; the answers grouped as the request's topics were. */
export async function perSharePartition<P extends { partition: number }, R>(request: StateRequest<P>, each: (k: SharePartitionKey, p: P) => Promise<R>): Promise<{ topicId: string; partitions: R[] }[]> {
  return Promise.all(request.topics.map(async (t) => ({
    topicId: t.topicId,
    partitions: await Promise.all(t.partitions.map((p) => each({ groupId: request.groupId, topicId: t.topicId, partition: p.partition }, p))),
  })));
}

export const stateBatchesFromWire = (batches: readonly { firstOffset: bigint; lastOffset: bigint; deliveryState: number; deliveryCount: number }[]): StateBatch[] =>
  batches.map((b) => ({ firstOffset: Number(b.firstOffset), lastOffset: Number(b.lastOffset), deliveryState: b.deliveryState, deliveryCount: b.deliveryCount }));

export const stateBatchesToWire = (batches: readonly StateBatch[]) =>
  batches.map((b) => ({ firstOffset: BigInt(b.firstOffset), lastOffset: BigInt(b.lastOffset), deliveryState: b.deliveryState, deliveryCount: b.deliveryCount }));
