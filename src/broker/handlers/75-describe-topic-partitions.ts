// DescribeTopicPartitions (key 75), v0 (KIP-966).
// Topics sorted by name (all topics when none are named), their partitions from the cursor on,
// at most `response_partition_limit` partitions per response (capped by the broker's
// `max.request.partition.size.limit`, 2000); when the limit cuts a response, `next_cursor` names
// the first partition not returned. A cursor on a topic that was not asked for is INVALID_REQUEST.
// Each partition carries its eligible leader replicas and last known ELR (as Kafka, lists, empty
// when there are none). An unknown topic whose name Kafka
// refuses is INVALID_TOPIC_EXCEPTION, as in Kafka.
import { ErrorCode, ZERO_UUID, type DescribeTopicPartitionsRequest } from '../../protocol/index.js';
import { isInternalTopic, topicNameError } from '../../controller/index.js';
import type { HandlerSpec } from '../context.js';
import { limits } from '../../util/index.js';
import type { MetadataView } from '../services.js';

const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

export const describeTopicPartitionsHandler: HandlerSpec<{ metadata(): MetadataView }, 75> = {
  apiKey: 75,
  minVersion: 0,
  maxVersion: 0,
  handle(request: DescribeTopicPartitionsRequest, ctx) {
    const view = ctx.services.metadata();
    const names = (request.topics.length === 0 ? [...view.topics()].map((t) => t.name) : [...new Set(request.topics.map((t) => t.name))]).sort();
    const cursor = request.cursor;
    if (cursor && !names.includes(cursor.topicName)) {
      // Kafka answers this with an error for the whole request; there is no top-level code, so the
      // cursor's topic carries it.
      return { throttleTimeMs: 0, nextCursor: null, topics: [{ errorCode: ErrorCode.INVALID_REQUEST, name: cursor.topicName, topicId: ZERO_UUID, isInternal: false, partitions: [], topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED }] };
    }
    let budget = Math.max(1, Math.min(request.responsePartitionLimit, limits.describeTopicPartitionsResponsePartitionsMax));
    const topics = [];
    let nextCursor: { topicName: string; partitionIndex: number } | null = null;
    for (const name of names) {
      if (cursor && name < cursor.topicName) continue;
      const t = view.topic(name);
      if (!t) {
        const errorCode = topicNameError(name) === null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.INVALID_TOPIC_EXCEPTION;
        topics.push({ errorCode, name, topicId: ZERO_UUID, isInternal: isInternalTopic(name), partitions: [], topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED });
        continue;
      }
      const from = cursor && name === cursor.topicName ? cursor.partitionIndex : 0;
      const partitions = [];
      for (const p of [...t.partitions].sort((a, b) => a.partition - b.partition)) {
        if (p.partition < from) continue;
        if (budget === 0) { nextCursor = { topicName: name, partitionIndex: p.partition }; break; }
        budget--;
        partitions.push({
          errorCode: 0, partitionIndex: p.partition, leaderId: p.leader, leaderEpoch: p.leaderEpoch, replicaNodes: p.replicas,
          isrNodes: p.isr, eligibleLeaderReplicas: p.elr ?? [], lastKnownElr: p.lastKnownElr ?? [], offlineReplicas: p.offlineReplicas,
        });
      }
      topics.push({ errorCode: 0, name, topicId: t.id, isInternal: t.isInternal, partitions, topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED });
      if (nextCursor) break;
    }
    return { throttleTimeMs: 0, topics, nextCursor };
  },
};
