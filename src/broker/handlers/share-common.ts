// What ShareFetch and ShareAcknowledge share: resolving a request's topic ids to this broker's
// topics, the acknowledgement batches in the share-partition's terms, the per-partition answer.
import { ErrorCode } from '../../protocol/index.js';
import type { AcknowledgementBatch, ShareFetchPartition } from '../../coordinator/index.js';
import type { MetadataView } from '../services.js';

export type Resolved = { ok: true; p: ShareFetchPartition } | { ok: false; topicId: string; partition: number; errorCode: number };

/** `readable`: the authorizer's READ on the topic (RequestContext.readableTopic), when one is on. */
export function resolvePartition(view: MetadataView, topicId: string, partition: number, readable?: (topic: string) => boolean): Resolved {
  const t = view.topicById(topicId);
  if (!t) return { ok: false, topicId, partition, errorCode: ErrorCode.UNKNOWN_TOPIC_ID };
  if (readable && !readable(t.name)) return { ok: false, topicId, partition, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED };
  if (!t.partitions.some((x) => x.partition === partition)) return { ok: false, topicId, partition, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION };
  return { ok: true, p: { topicId, topic: t.name, partition } };
}

export const ackBatches = (batches: { firstOffset: bigint; lastOffset: bigint; acknowledgeTypes: number[] }[]): AcknowledgementBatch[] =>
  batches.map((b) => ({ firstOffset: Number(b.firstOffset), lastOffset: Number(b.lastOffset), acknowledgeTypes: b.acknowledgeTypes }));

/** Topic id → partition answers, in the order the partitions were first seen. */
export function groupByTopic<T extends { partitionIndex: number }>(entries: { topicId: string; data: T }[]): { topicId: string; partitions: T[] }[] {
  const out = new Map<string, T[]>();
  for (const e of entries) (out.get(e.topicId) ?? out.set(e.topicId, []).get(e.topicId)!).push(e.data);
  return [...out].map(([topicId, partitions]) => ({ topicId, partitions }));
}
