// Consumer lag per group, topic and partition, as kafka-consumer-groups --describe (and
// kafka-lag-exporter, Redpanda) compute it: the group's committed offset against the partition's
// log end offset as consumers see it (the high watermark: ListOffsets latest, read_uncommitted).
// Everything comes through the Kafka APIs (FindCoordinator, ConsumerGroupDescribe/DescribeGroups,
// OffsetFetch, ListOffsets), so it is right on a cluster whatever node coordinates the group or
// leads the partitions. Served by /v1/groups/NAME, `logline group describe` and /metrics.
import {
  committedOffsets, coordinatorFor, describeGroup, listOffsets, type ClusterClient, type GroupMember, type PartitionRef,
} from '../client/index.js';
import type { NodeHandle } from './node-handle.js';
import { limits, partitionKey } from '../util/index.js';

export interface PartitionLag {
  topic: string;
  partition: number;
  /** null: the group has not committed an offset for this (assigned) partition. */
  committedOffset: number | null;
  /** null: the partition no longer exists (offsets committed for a topic since deleted). */
  logEndOffset: number | null;
  /** logEndOffset - committedOffset; null without a committed offset. */
  lag: number | null;
  memberId: string | null;
  clientId: string | null;
  host: string | null;
}

export interface GroupLag {
  groupId: string;
  state: string;
  type: 'classic' | 'consumer';
  protocolType: string;
  /** The assignor (consumer protocol) or the classic group's protocol name. */
  protocol: string;
  members: GroupMember[];
  partitions: PartitionLag[];
  /** Sum of the partitions' lag. */
  totalLag: number;
}

/**
 * The lag rows of a group: one per partition it committed or is assigned, sorted by topic and
 * partition. Pure: the committed offsets and end offsets come in.
 */
export function lagRows(members: readonly GroupMember[], committed: ReadonlyMap<string, { ref: PartitionRef; offset: bigint }>, ends: ReadonlyMap<string, bigint>): PartitionLag[] {
  const owner = new Map<string, GroupMember>();
  const refs = new Map<string, PartitionRef>();
  for (const c of committed.values()) refs.set(partitionKey(c.ref.topic, c.ref.partition), c.ref);
  for (const m of members) {
    for (const a of m.assignment) {
      owner.set(partitionKey(a.topic, a.partition), m);
      refs.set(partitionKey(a.topic, a.partition), a);
    }
  }
  const sorted = [...refs.values()].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
  return sorted.map((ref) => {
    const k = partitionKey(ref.topic, ref.partition);
    const current = committed.get(k)?.offset;
    const end = ends.get(k);
    const m = owner.get(k);
    return {
      topic: ref.topic, partition: ref.partition,
      committedOffset: current === undefined ? null : Number(current),
      logEndOffset: end === undefined ? null : Number(end),
      lag: current === undefined || end === undefined ? null : Number(end - current),
      memberId: m?.memberId ?? null, clientId: m?.clientId ?? null, host: m?.host ?? null,
    };
  });
}

/** A group with its members and lag per partition. */
export async function groupLag(client: ClusterClient, groupId: string): Promise<GroupLag> {
  const coordinator = await coordinatorFor(client, groupId);
  const g = await describeGroup(coordinator, groupId);
  const committed = await committedOffsets(coordinator, groupId);
  const refs = new Map<string, PartitionRef>();
  for (const c of committed.values()) refs.set(partitionKey(c.ref.topic, c.ref.partition), c.ref);
  for (const m of g.members) for (const a of m.assignment) refs.set(partitionKey(a.topic, a.partition), a);
  // Offsets committed for a topic since deleted stay listed, without an end offset or lag.
  const ends = await listOffsets(client, [...refs.values()], -1n, { skipUnknown: true });
  const partitions = lagRows(g.members, committed, ends);
  return {
    groupId, state: g.state, type: g.type, protocolType: g.protocolType, protocol: g.protocol, members: g.members,
    partitions, totalLag: partitions.reduce((n, p) => n + Math.max(0, p.lag ?? 0), 0),
  };
}

/**
 * The groups this node coordinates (its loaded __consumer_offsets partitions), at most
 * httpGroupsLagMax: each node exports the lag of its own groups, so a sum over the cluster's
 * nodes counts every group once.
 */
export function groupsCoordinatedHere(node: NodeHandle): string[] {
  const groups = node.broker?.groups.list([], []).groups ?? [];
  return groups.map((g) => g.groupId).sort().slice(0, limits.httpGroupsLagMax);
}

/**
 * The lag of the groups this node coordinates, for /metrics: one computation shared by the
 * scrape's metric families (and by scrapes within a second of it).
 */
export function localGroupsLag(node: NodeHandle, client: () => ClusterClient): () => Promise<GroupLag[]> {
  let last: { atMs: number; lag: Promise<GroupLag[]> } | null = null;
  return () => {
    const now = Date.now();
    if (last === null || now - last.atMs > 1000) {
      const lag = Promise.all(groupsCoordinatedHere(node).map((g) => groupLag(client(), g).catch(() => null)))
        .then((all) => all.filter((g): g is GroupLag => g !== null));
      last = { atMs: now, lag };
    }
    return last.lag;
  };
}
