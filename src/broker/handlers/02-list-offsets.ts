// ListOffsets (key 2), v1-10 (v0 is gone in Kafka 4.0).
// Earliest (-2), latest (-1, the high watermark or, for read_committed, the last stable offset),
// max timestamp (-3, v7+), earliest local (-4, v8+), latest tiered (-5, v9+), or the first offset
// whose timestamp is at or after the one asked. A timestamp with no such record answers offset -1
// and timestamp -1, as Kafka does.
import { ErrorCode, type ListOffsetsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import { ListOffsetsTimestamp, type ListOffsetsParams, type ListOffsetsResult } from '../services.js';

export interface ListOffsetsServices {
  listOffsets(params: ListOffsetsParams): Promise<ListOffsetsResult>;
}

/** The oldest request version that may use each sentinel. */
const SENTINEL_MIN_VERSION = new Map<bigint, number>([
  [ListOffsetsTimestamp.MaxTimestamp, 7], [ListOffsetsTimestamp.EarliestLocal, 8], [ListOffsetsTimestamp.LatestTiered, 9],
]);

export const listOffsetsHandler: HandlerSpec<ListOffsetsServices, 2> = {
  apiKey: 2,
  minVersion: 1,
  maxVersion: 10,
  async handle(request: ListOffsetsRequest, ctx) {
    const topics = await Promise.all(request.topics.map(async (t) => ({
      name: t.name,
      partitions: await Promise.all(t.partitions.map(async (p) => {
        const minVersion = SENTINEL_MIN_VERSION.get(p.timestamp);
        const result: ListOffsetsResult = minVersion !== undefined && ctx.apiVersion < minVersion
          ? { errorCode: ErrorCode.UNSUPPORTED_VERSION, timestamp: -1n, offset: -1n, leaderEpoch: -1 }
          : await ctx.services.listOffsets({
            topic: t.name, partition: p.partitionIndex, currentLeaderEpoch: p.currentLeaderEpoch, timestamp: p.timestamp,
            isolationLevel: ctx.apiVersion >= 2 ? request.isolationLevel : 0, replicaId: request.replicaId,
          });
        return { partitionIndex: p.partitionIndex, oldStyleOffsets: [], ...result };
      })),
    })));
    return { throttleTimeMs: 0, topics };
  },
};
