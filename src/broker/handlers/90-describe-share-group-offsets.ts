// DescribeShareGroupOffsets (key 90), v0-1 (KIP-932; v1 is Kafka 4.2's, with Lag, KIP-1226): per
// share group, the share-partition start offset of each partition asked for (Topics null: every
// share-partition the group has state for), read from the share coordinator wherever it is led.
// A partition without state answers StartOffset -1. Lag is the records from the start offset to
// the high watermark not yet acknowledged or archived, where this broker leads the partition;
// elsewhere -1 ("not available"). Group errors: NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
// GROUP_ID_NOT_FOUND.
import { ErrorCode, ZERO_UUID, type DescribeShareGroupOffsetsRequest, type DescribeShareGroupOffsetsResponseDescribeShareGroupOffsetsResponsePartition as DescribeShareGroupOffsetsResponsePartition } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { ShareAdminServices } from '../services.js';
import { RecordState, type SharePartitionKey } from '../../coordinator/index.js';

const NO_LAG = -1n;

export const describeShareGroupOffsetsHandler: HandlerSpec<ShareAdminServices, 90> = {
  apiKey: 90,
  minVersion: 0,
  maxVersion: 1,
  feature: 'share.version',
  async handle(request: DescribeShareGroupOffsetsRequest, ctx) {
    const s = ctx.services;
    const view = s.metadata();
    const groups = await Promise.all(request.groups.map(async (g) => {
      const known = s.groups.shareGroupTopics(g.groupId);
      if (known.errorCode !== ErrorCode.NONE) return { groupId: g.groupId, topics: [], errorCode: known.errorCode, errorMessage: null };
      const asked = g.topics === null
        ? known.topics.map((t) => ({ name: t.name, topicId: t.topicId, partitions: t.partitions }))
        : g.topics.map((t) => ({ name: t.topicName, topicId: view.topic(t.topicName)?.id ?? null, partitions: t.partitions }));
      const topics = await Promise.all(asked.map(async (t) => ({
        topicName: t.name, topicId: t.topicId ?? ZERO_UUID,
        partitions: await Promise.all(t.partitions.map((p) => t.topicId === null
          ? failed(p, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
          : describe(s, { groupId: g.groupId, topicId: t.topicId, partition: p }, t.name))),
      })));
      return { groupId: g.groupId, topics, errorCode: 0, errorMessage: null };
    }));
    return { throttleTimeMs: 0, groups };
  },
};

const failed = (partitionIndex: number, errorCode: number): DescribeShareGroupOffsetsResponsePartition =>
  ({ partitionIndex, startOffset: -1n, leaderEpoch: -1, lag: NO_LAG, errorCode, errorMessage: null });

async function describe(s: ShareAdminServices, k: SharePartitionKey, topic: string): Promise<DescribeShareGroupOffsetsResponsePartition> {
  const r = await s.sharePersister.read(k, -1);
  if (r.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) return failed(k.partition, 0);
  if (r.errorCode !== ErrorCode.NONE) return failed(k.partition, r.errorCode);
  const startOffset = r.startOffset ?? -1;
  const hw = s.highWatermark(topic, k.partition);
  const done = (r.stateBatches ?? []).filter((b) => b.deliveryState === RecordState.ACKNOWLEDGED || b.deliveryState === RecordState.ARCHIVED)
    .reduce((n, b) => n + b.lastOffset - Math.max(b.firstOffset, startOffset) + 1, 0);
  const lag = hw === null || startOffset < 0 || r.stateBatches === undefined ? NO_LAG : BigInt(Math.max(0, hw - startOffset - done));
  return { partitionIndex: k.partition, startOffset: BigInt(startOffset), leaderEpoch: r.leaderEpoch ?? -1, lag, errorCode: 0, errorMessage: null };
}
