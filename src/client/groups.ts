// Consumer-group operations on top of the Kafka APIs, as kafka-consumer-groups does them: find the
// coordinator, describe a group (KIP-848 or classic), its committed offsets, and partitions'
// offsets by time. Used by `logline group`, `logline doctor` and the HTTP admin API.
import { ApiKey, ErrorCode } from '../protocol/index.js';
import { partitionKey, partitionName } from '../util/index.js';
import { ClusterClient, KafkaError } from './cluster.js';
import type { BrokerConnection } from './connection.js';

export interface PartitionRef { topic: string; partition: number }
const key = partitionKey;

/** ConsumerProtocolAssignment (classic groups): version, [topic, [partition]], user data. */
export function decodeAssignment(buf: Buffer | null): PartitionRef[] {
  if (!buf || buf.length < 6) return [];
  const out: PartitionRef[] = [];
  try {
    let pos = 2;
    const topics = buf.readInt32BE(pos); pos += 4;
    // Bounded by the bytes: every step moves forward, and a count larger than what remains stops there.
    for (let t = 0; t < topics && pos + 6 <= buf.length; t++) {
      const len = buf.readInt16BE(pos); pos += 2;
      if (len < 0) break;
      const topic = buf.toString('utf8', pos, pos + len); pos += len;
      const n = buf.readInt32BE(pos); pos += 4;
      for (let i = 0; i < n && pos + 4 <= buf.length; i++) { out.push({ topic, partition: buf.readInt32BE(pos) }); pos += 4; }
    }
  } catch {
    return out; // a non-consumer protocol's bytes: show what could be read
  }
  return out;
}

export async function coordinatorFor(client: ClusterClient, group: string): Promise<BrokerConnection> {
  const any = await client.any();
  const r = await any.send(ApiKey.FindCoordinator, any.version(ApiKey.FindCoordinator, 3), { key: group, keyType: 0, coordinatorKeys: [] });
  if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage);
  return client.broker(r.nodeId);
}

export interface GroupMember { memberId: string; clientId: string; host: string; instanceId: string | null; assignment: PartitionRef[] }
export interface GroupDescription { groupId: string; state: string; protocolType: string; protocol: string; type: 'classic' | 'consumer'; members: GroupMember[] }

/** A KIP-848 group through ConsumerGroupDescribe (it answers GROUP_ID_NOT_FOUND for a classic one), else DescribeGroups. */
export async function describeGroup(coordinator: BrokerConnection, group: string): Promise<GroupDescription> {
  if (coordinator.versions.has(ApiKey.ConsumerGroupDescribe)) {
    const c = await coordinator.send(ApiKey.ConsumerGroupDescribe, 0, { groupIds: [group], includeAuthorizedOperations: false });
    const cg = c.groups[0];
    if (cg && cg.errorCode === 0) {
      return {
        groupId: group, state: cg.groupState, protocolType: 'consumer', protocol: cg.assignorName, type: 'consumer',
        members: cg.members.map((m: any) => ({
          memberId: m.memberId, clientId: m.clientId, host: m.clientHost, instanceId: m.instanceId,
          assignment: m.assignment.topicPartitions.flatMap((tp: any) => tp.partitions.map((p: number) => ({ topic: tp.topicName, partition: p }))),
        })),
      };
    }
  }
  const r = await coordinator.send(ApiKey.DescribeGroups, coordinator.version(ApiKey.DescribeGroups, 5), { groups: [group], includeAuthorizedOperations: false });
  const g = r.groups[0];
  if (g.errorCode !== 0) throw new KafkaError(g.errorCode, g.errorMessage);
  return {
    groupId: group, state: g.groupState, protocolType: g.protocolType, protocol: g.protocolData, type: 'classic',
    members: g.members.map((m: any) => ({
      memberId: m.memberId, clientId: m.clientId, host: m.clientHost, instanceId: m.groupInstanceId ?? null,
      assignment: g.protocolType === 'consumer' ? decodeAssignment(m.memberAssignment) : [],
    })),
  };
}

/** A group's committed offsets with their metadata strings, by partitionKey. */
export async function committedOffsets(coordinator: BrokerConnection, group: string): Promise<Map<string, { ref: PartitionRef; offset: bigint; metadata: string }>> {
  const r = await coordinator.send(ApiKey.OffsetFetch, coordinator.version(ApiKey.OffsetFetch, 7), { groupId: group, topics: null, groups: [], requireStable: false });
  if (r.errorCode !== 0) throw new KafkaError(r.errorCode);
  const out = new Map<string, { ref: PartitionRef; offset: bigint; metadata: string }>();
  for (const t of r.topics) {
    for (const p of t.partitions) {
      if (p.errorCode === 0 && p.committedOffset >= 0n) out.set(key(t.name, p.partitionIndex), { ref: { topic: t.name, partition: p.partitionIndex }, offset: p.committedOffset, metadata: p.metadata ?? '' });
    }
  }
  return out;
}

/**
 * ListOffsets for each partition at `timestamp` (-1 latest, -2 earliest, or a time in ms).
 * `skipUnknown`: a partition that no longer exists (its topic deleted) is left out instead of failing the call.
 */
export async function listOffsets(client: ClusterClient, refs: PartitionRef[], timestamp: bigint, options: { skipUnknown?: boolean } = {}): Promise<Map<string, bigint>> {
  if (refs.length === 0) return new Map();
  // One Metadata for every topic, then one ListOffsets per leader (not a round trip per partition:
  // /metrics computes every group's lag this way on each scrape).
  return client.retrying(async () => {
    const topics = await client.metadata([...new Set(refs.map((r) => r.topic))]);
    const byLeader = new Map<number, Map<string, number[]>>();
    for (const ref of refs) {
      const p = topics.find((t) => t.name === ref.topic)?.partitions.find((x) => x.partition === ref.partition);
      if (p === undefined) {
        if (options.skipUnknown === true) continue;
        throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, partitionName(ref.topic, ref.partition));
      }
      if (p.leader < 0) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, partitionName(ref.topic, ref.partition));
      const forLeader = byLeader.get(p.leader) ?? new Map<string, number[]>();
      forLeader.set(ref.topic, [...(forLeader.get(ref.topic) ?? []), ref.partition]);
      byLeader.set(p.leader, forLeader);
    }
    const out = new Map<string, bigint>();
    await Promise.all([...byLeader].map(async ([leader, wanted]) => {
      const conn = await client.broker(leader);
      // EARLIEST_LOCAL (-4) needs v8 and LATEST_TIERED (-5) v9 (KIP-405, KIP-1005).
      const r = await conn.send(ApiKey.ListOffsets, conn.version(ApiKey.ListOffsets, timestamp === -5n ? 9 : timestamp === -4n ? 8 : 7), {
        replicaId: -1, isolationLevel: 0,
        topics: [...wanted].map(([name, partitions]) => ({ name, partitions: partitions.map((partitionIndex) => ({ partitionIndex, currentLeaderEpoch: -1, timestamp })) })),
      });
      for (const t of r.topics) {
        for (const p of t.partitions) {
          if (p.errorCode !== 0) throw new KafkaError(p.errorCode, partitionName(t.name, p.partitionIndex));
          out.set(key(t.name, p.partitionIndex), p.offset);
        }
      }
    }));
    return out;
  });
}

