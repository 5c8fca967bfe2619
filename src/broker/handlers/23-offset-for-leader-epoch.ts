// OffsetForLeaderEpoch (key 23), v0-4. Kafka 4.0's floor is v2 (KIP-896); v0-1 are kept for older
// clients: v0 answers no leader epoch, and neither sends a current leader epoch (not checked).
// For each partition, the largest epoch at or below the one asked and the offset where it ended,
// from the leader-epoch cache; a returning replica (or a consumer after a leader change, KIP-320)
// truncates to it. A current leader epoch that does not match answers FENCED_LEADER_EPOCH or
// UNKNOWN_LEADER_EPOCH.
import type { OffsetForLeaderEpochRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';

export interface OffsetForLeaderEpochServices {
  offsetForLeaderEpoch(topic: string, partition: number, currentLeaderEpoch: number, leaderEpoch: number): { errorCode: number; leaderEpoch: number; endOffset: bigint };
}

export const offsetForLeaderEpochHandler: HandlerSpec<OffsetForLeaderEpochServices, 23> = {
  apiKey: 23,
  minVersion: 0,
  maxVersion: 4,
  handle(request: OffsetForLeaderEpochRequest, ctx) {
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((p) => ({ partition: p.partition, ...ctx.services.offsetForLeaderEpoch(t.topic, p.partition, p.currentLeaderEpoch, p.leaderEpoch) })),
      })),
    };
  },
};
