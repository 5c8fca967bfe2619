// ListOffsets (key 2), v0-10. v0 (deprecated; Kafka 4.0 dropped it) is what clients send that never
// ask ApiVersions (librdkafka with broker.version.fallback below 0.10.1, kafka-python with an old
// api_version): its answer is the offset as the one element of `old_style_offsets` when
// max_num_offsets allows one, as Kafka's last v0 answers were for earliest and latest.
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
  minVersion: 0,
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
        if (ctx.apiVersion === 0) {
          const oldStyleOffsets = result.errorCode === 0 && result.offset >= 0n && p.maxNumOffsets > 0 ? [result.offset] : [];
          return { partitionIndex: p.partitionIndex, errorCode: result.errorCode, oldStyleOffsets, timestamp: -1n, offset: -1n, leaderEpoch: -1 };
        }
        return { partitionIndex: p.partitionIndex, oldStyleOffsets: [], ...result };
      })),
    })));
    return { throttleTimeMs: 0, topics };
  },
};
