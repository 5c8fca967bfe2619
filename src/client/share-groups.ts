// Share groups (KIP-932) through the Kafka APIs, wherever the group is coordinated and its
// partitions led: ShareGroupDescribe for the members and their assignments, DescribeShareGroupOffsets
// for each share-partition's start offset and lag. Used by `logline group --type share` and the
// admin API's group pages.
import { ApiKey } from '../protocol/index.js';
import { partitionKey } from '../util/index.js';
import { KafkaError, type ClusterClient } from './cluster.js';
import type { BrokerConnection } from './connection.js';
import { coordinatorFor, listOffsets, type PartitionRef } from './groups.js';

export interface ShareGroupMember { memberId: string; clientId: string; clientHost: string; memberEpoch: number; assignment: { topicPartitions: { topicName: string; partitions: number[] }[] } }
interface ShareOffsets { topicName: string; partitions: { partitionIndex: number; startOffset: bigint; lag: bigint; errorCode: number }[] }

export async function describeShareGroup(c: BrokerConnection, group: string): Promise<{ state: string; epoch: number; members: ShareGroupMember[] }> {
  const r = await c.send(ApiKey.ShareGroupDescribe, c.version(ApiKey.ShareGroupDescribe, 1), { groupIds: [group], includeAuthorizedOperations: false });
  const g = r.groups[0];
  if (g.errorCode !== 0) throw new KafkaError(g.errorCode, g.errorMessage ?? group);
  return { state: g.groupState, epoch: g.groupEpoch, members: g.members };
}

async function shareOffsets(c: BrokerConnection, group: string, topics: { topicName: string; partitions: number[] }[] | null = null): Promise<ShareOffsets[]> {
  const r = await c.send(ApiKey.DescribeShareGroupOffsets, c.version(ApiKey.DescribeShareGroupOffsets, 1), { groups: [{ groupId: group, topics }] });
  const g = r.groups[0];
  if (g.errorCode !== 0) throw new KafkaError(g.errorCode, g.errorMessage ?? group);
  return g.topics;
}

/**
 * The share-partitions of `group` with their start offsets (DescribeShareGroupOffsets), log end
 * offsets and lag (the share coordinator's when it knows it, else from the start offset to the log end).
 */
export async function shareGroupLag(client: ClusterClient, group: string): Promise<{ topic: string; partition: number; startOffset: number | null; logEndOffset: number; lag: number | null }[]> {
  const c = await coordinatorFor(client, group);
  const offsets = await shareOffsets(c, group);
  const refs: PartitionRef[] = offsets.flatMap((t) => t.partitions.map((p) => ({ topic: t.topicName, partition: p.partitionIndex })));
  const ends = await listOffsets(client, refs, -1n, { skipUnknown: true });
  return offsets.flatMap((t) => t.partitions.map((p) => {
    const end = Number(ends.get(partitionKey(t.topicName, p.partitionIndex)) ?? -1n);
    const start = p.startOffset >= 0n ? Number(p.startOffset) : null;
    const lag = p.lag >= 0n ? Number(p.lag) : start === null || end < 0 ? null : Math.max(0, end - start);
    return { topic: t.topicName, partition: p.partitionIndex, startOffset: start, logEndOffset: end, lag };
  })).sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
}

