// Consumer lag per group, topic and partition, as kafka-consumer-groups --describe (and
// kafka-lag-exporter, Redpanda) compute it: the group's committed offset against the partition's
// log end offset as consumers see it (the high watermark: ListOffsets latest, read_uncommitted).
// Everything comes through the Kafka APIs (FindCoordinator, ConsumerGroupDescribe/DescribeGroups,
// OffsetFetch, ListOffsets), so it is right on a cluster whatever node coordinates the group or
// leads the partitions. Served by /v1/groups/NAME, `logline group describe` and /metrics.
import {
  committedOffsets, coordinatorFor, describeGroup, describeShareGroup, KafkaError, listOffsets, shareGroupLag, type ClusterClient, type GroupMember, type PartitionRef,
} from '../client/index.js';
import { ErrorCode } from '../protocol/index.js';
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

/** A share-partition's row (KIP-932): where the group's delivery starts, what is in flight, and the lag. */
export interface SharePartitionRow {
  topic: string;
  partition: number;
  /** The share-partition start offset; null before the group has state for it. */
  startOffset: number | null;
  logEndOffset: number | null;
  /** Records from the start offset up to the log end not yet acknowledged or archived. */
  lag: number | null;
  /**
   * Records between the start offset and the end offset, and of those the ones a consumer holds
   * now: known to the partition's leader only, so null unless this node leads the partition.
   */
  inFlight: number | null;
  acquired: number | null;
  /** Client ids of the members assigned the partition (several members may share one). */
  clientIds: string[];
}

export interface ShareGroupLag {
  groupId: string;
  state: string;
  type: 'share';
  protocolType: 'share';
  protocol: string;
  members: GroupMember[];
  partitions: SharePartitionRow[];
  totalLag: number;
}

/** Start offsets, in-flight records and lag per share-partition (pure: the figures come in). */
export function sharePartitionRows(
  members: readonly GroupMember[], offsets: readonly { topic: string; partition: number; startOffset: number | null; logEndOffset: number; lag: number | null }[],
  local: ReadonlyMap<string, { inFlight: number; acquired: number }>,
): SharePartitionRow[] {
  const refs = new Map<string, PartitionRef>();
  for (const o of offsets) refs.set(partitionKey(o.topic, o.partition), o);
  for (const m of members) for (const a of m.assignment) refs.set(partitionKey(a.topic, a.partition), a);
  const byKey = new Map(offsets.map((o) => [partitionKey(o.topic, o.partition), o]));
  return [...refs.values()].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition)).map((ref) => {
    const k = partitionKey(ref.topic, ref.partition);
    const o = byKey.get(k);
    const here = local.get(k);
    return {
      topic: ref.topic, partition: ref.partition, startOffset: o?.startOffset ?? null, logEndOffset: o && o.logEndOffset >= 0 ? o.logEndOffset : null, lag: o?.lag ?? null,
      inFlight: here?.inFlight ?? null, acquired: here?.acquired ?? null,
      clientIds: members.filter((m) => m.assignment.some((a) => a.topic === ref.topic && a.partition === ref.partition)).map((m) => m.clientId),
    };
  });
}

/** A share group's members, assignments, and per share-partition start offset, in-flight records and lag; null when `groupId` is not a share group. */
export async function shareGroupView(client: ClusterClient, groupId: string, node: NodeHandle | null): Promise<ShareGroupLag | null> {
  const coordinator = await coordinatorFor(client, groupId);
  let g;
  try {
    g = await describeShareGroup(coordinator, groupId);
  } catch (e) {
    if (e instanceof KafkaError && e.errorCode === ErrorCode.GROUP_ID_NOT_FOUND) return null;
    throw e;
  }
  const members: GroupMember[] = g.members.map((m) => ({
    memberId: m.memberId, instanceId: null, clientId: m.clientId, host: m.clientHost,
    assignment: m.assignment.topicPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topicName, partition }))),
  }));
  const offsets = await shareGroupLag(client, groupId);
  const local = new Map<string, { inFlight: number; acquired: number }>();
  for (const r of node?.broker?.share.manager.partitionStats(() => null) ?? []) {
    if (r.groupId === groupId) local.set(partitionKey(r.topic, r.partition), { inFlight: r.inFlight, acquired: r.acquired });
  }
  const partitions = sharePartitionRows(members, offsets, local);
  return { groupId, state: g.state, type: 'share', protocolType: 'share', protocol: 'simple', members, partitions, totalLag: partitions.reduce((n, p) => n + Math.max(0, p.lag ?? 0), 0) };
}

/** A group with its members and lag per partition: a consumer or classic group's, or a share group's. */
export async function anyGroupLag(client: ClusterClient, groupId: string, node: NodeHandle | null): Promise<GroupLag | ShareGroupLag> {
  return (await shareGroupView(client, groupId, node)) ?? groupLag(client, groupId);
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
