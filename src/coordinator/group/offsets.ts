// Committed offsets on the shard (Kafka's OffsetMetadataManager): OffsetCommit and TxnOffsetCommit,
// OffsetFetch, OffsetDelete, expiry after offsets.retention.minutes, and the tombstones of a
// deleted group. Offsets change only in replay. Transactional commits are replayed into
// `pendingTxnOffsets` (per producer id) and become committed offsets at the producer's COMMIT
// marker; as in Kafka the log decides between a plain and a transactional commit of the same
// partition: each offset keeps its position in the replay order, which is the log order.
import { ErrorCode, type OffsetCommitValue } from '../../protocol/index.js';
import { partitionKey } from '../../util/index.js';
import { newClassicGroup, subscribedTopics, transition } from './classic.js';
import type { ClassicGroups } from './classic-groups.js';
import type { ConsumerGroups } from './consumer.js';
import type { ClientInfo, Group, GroupShardContext } from './context.js';

export interface CommitParams {
  groupId: string;
  generationIdOrMemberEpoch: number;
  memberId: string;
  groupInstanceId: string | null;
  /** -1 unless the client asked for its own retention (v2-4). */
  retentionTimeMs: number;
  topics: { name: string; partitions: { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; commitTimestamp: bigint; committedMetadata: string | null }[] }[];
}

/** TxnOffsetCommit: a commit made inside a producer's transaction. */
export interface TxnCommitParams extends Omit<CommitParams, 'retentionTimeMs'> { producerId: bigint; producerEpoch: number }

export type PartitionResults = { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[];

export interface FetchedOffset { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; metadata: string | null; errorCode: number }

/** Kafka's mapping of a failed append to the error an OffsetCommit sees. */
export function commitAppendError(code: number): number {
  switch (code) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: case ErrorCode.NOT_ENOUGH_REPLICAS: case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: case ErrorCode.REQUEST_TIMED_OUT:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER: case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.MESSAGE_TOO_LARGE: case ErrorCode.RECORD_LIST_TOO_LARGE: case ErrorCode.INVALID_FETCH_SIZE:
      return ErrorCode.INVALID_COMMIT_OFFSET_SIZE;
    default: return code;
  }
}

export interface CommittedOffset {
  offset: bigint;
  leaderEpoch: number;
  metadata: string;
  commitTimestampMs: number;
  /** -1 unless the commit asked for its own retention (OffsetCommit v1-4). */
  expireTimestampMs: number;
  /** Where its record stands in the partition's replay order (= log order). */
  logPosition: number;
}

type PartitionOffset = CommittedOffset & { topic: string; partition: number };

export class Offsets {
  /** group → "topic\0partition" → committed offset. */
  readonly committed = new Map<string, Map<string, PartitionOffset>>();
  /** Records replayed so far: the log position of the next one (the shard counts every record). */
  position = 0;

  constructor(private readonly ctx: GroupShardContext, private readonly classic: ClassicGroups, private readonly consumer: ConsumerGroups) {}

  // ---- replay ------------------------------------------------------------------------------------

  /**
   * Transactional offset commits not yet decided: producer id → group → "topic\0partition" → offset.
   * They become committed offsets when the producer's COMMIT marker is replayed, and vanish on ABORT.
   */
  readonly pendingTxnOffsets = new Map<number, Map<string, Map<string, PartitionOffset>>>();

  /** An OffsetCommit record in a producer's transactional batch (TxnOffsetCommit). */
  replayPendingOffset(producerId: number, group: string, topic: string, partition: number, v: OffsetCommitValue | null): void {
    if (v === null) return; // Kafka never writes transactional tombstones
    let groups = this.pendingTxnOffsets.get(producerId);
    if (!groups) this.pendingTxnOffsets.set(producerId, groups = new Map());
    let map = groups.get(group);
    if (!map) groups.set(group, map = new Map());
    map.set(partitionKey(topic, partition), this.committedOffset(topic, partition, v));
  }

  private committedOffset(topic: string, partition: number, v: OffsetCommitValue): PartitionOffset {
    return {
      topic, partition, offset: v.offset, leaderEpoch: v.leaderEpoch, metadata: v.metadata, commitTimestampMs: Number(v.commitTimestamp),
      expireTimestampMs: Number(v.expireTimestamp), logPosition: this.position,
    };
  }

  /** A transaction marker in this partition: the producer's pending offsets are committed or dropped. */
  replayTransactionMarker(producerId: number, commit: boolean): void {
    const groups = this.pendingTxnOffsets.get(producerId);
    if (!groups) return;
    this.pendingTxnOffsets.delete(producerId);
    if (!commit) return;
    for (const [group, offsets] of groups) {
      for (const c of offsets.values()) {
        // As Kafka: a plain commit written after the transactional one (later in the log) wins.
        const existing = this.committed.get(group)?.get(partitionKey(c.topic, c.partition));
        if (existing && existing.logPosition > c.logPosition) continue;
        if (!this.ctx.groups.has(group)) this.ctx.groups.set(group, newClassicGroup(group, c.commitTimestampMs));
        let map = this.committed.get(group);
        if (!map) this.committed.set(group, map = new Map());
        map.set(partitionKey(c.topic, c.partition), c);
      }
    }
  }

  /** Whether a transaction holds an undecided offset for this partition of the group (OffsetFetch require_stable). */
  hasPendingTxnOffset(group: string, topic: string, partition: number): boolean {
    const key = partitionKey(topic, partition);
    for (const groups of this.pendingTxnOffsets.values()) if (groups.get(group)?.has(key)) return true;
    return false;
  }

  replayOffset(group: string, topic: string, partition: number, v: OffsetCommitValue | null): void {
    const key = partitionKey(topic, partition);
    if (v === null) {
      const map = this.committed.get(group);
      map?.delete(key);
      if (map && map.size === 0) this.committed.delete(group);
      return;
    }
    if (!this.ctx.groups.has(group)) this.ctx.groups.set(group, newClassicGroup(group, Number(v.commitTimestamp)));
    let map = this.committed.get(group);
    if (!map) this.committed.set(group, map = new Map());
    map.set(key, this.committedOffset(topic, partition, v));
  }

  // ---- OffsetCommit ------------------------------------------------------------------------------

  /**
   * OffsetCommit, and TxnOffsetCommit (`txn` set): the caller puts the records in the producer's
   * transactional batch, and they stay pending (invisible to OffsetFetch) until its COMMIT marker
   * reaches this partition; ABORT drops them.
   */
  commit(p: CommitParams, txn: { producerId: bigint; producerEpoch: number } | null, client: ClientInfo, respond: (r: PartitionResults) => void): void {
    const all = (code: number): PartitionResults => p.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((x) => ({ partitionIndex: x.partitionIndex, errorCode: code })) }));
    const invalid = this.validateCommit(p, client.apiVersion, txn !== null);
    if (invalid !== ErrorCode.NONE) return this.ctx.respond(() => respond(all(invalid)));
    const results: PartitionResults = [];
    for (const t of p.topics) {
      const partitions = [];
      for (const x of t.partitions) {
        const metadata = x.committedMetadata ?? '';
        if (Buffer.byteLength(metadata) > this.ctx.config.offsetMetadataMaxBytes) {
          partitions.push({ partitionIndex: x.partitionIndex, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE });
          continue;
        }
        const commitTimestamp = x.commitTimestamp >= 0n ? x.commitTimestamp : BigInt(this.ctx.nowMs);
        const value: OffsetCommitValue = {
          offset: x.committedOffset, leaderEpoch: x.committedLeaderEpoch, metadata, commitTimestamp,
          expireTimestamp: p.retentionTimeMs >= 0 ? commitTimestamp + BigInt(p.retentionTimeMs) : -1n,
        };
        this.ctx.emit({ type: 'offset', group: p.groupId, topic: t.name, partition: x.partitionIndex, value });
        partitions.push({ partitionIndex: x.partitionIndex, errorCode: ErrorCode.NONE });
      }
      results.push({ name: t.name, partitions });
    }
    const failed = (code: number): PartitionResults => results.map((t) => ({
      name: t.name, partitions: t.partitions.map((x) => ({ partitionIndex: x.partitionIndex, errorCode: x.errorCode || commitAppendError(code) })),
    }));
    this.ctx.respond(() => respond(results), (code) => respond(failed(code)));
  }

  /** Kafka's validateOffsetCommit for both group types; creates a simple group for admin commits. */
  private validateCommit(p: CommitParams, apiVersion: number, transactional: boolean): number {
    let g = this.ctx.groups.get(p.groupId);
    if (!g) {
      if (p.generationIdOrMemberEpoch >= 0) return apiVersion >= 9 && !transactional ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.ILLEGAL_GENERATION;
      g = this.classic.createSimpleGroup(p.groupId);
    }
    if (g.kind === 'consumer') return this.consumer.validateCommit(g, p.memberId, p.generationIdOrMemberEpoch);
    // Share groups keep their progress in the share-partitions, not in committed offsets.
    if (g.kind === 'share') return ErrorCode.GROUP_ID_NOT_FOUND;
    if (g.state === 'Dead') return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (p.generationIdOrMemberEpoch < 0 && g.state === 'Empty') return ErrorCode.NONE;
    // TxnOffsetCommit before v3 carries no member: accepted as Kafka does.
    if (transactional && p.generationIdOrMemberEpoch < 0 && p.memberId === '' && p.groupInstanceId === null) return ErrorCode.NONE;
    if (p.generationIdOrMemberEpoch >= 0 || p.memberId !== '' || p.groupInstanceId !== null) {
      const invalid = this.classic.validateMember(g, p.memberId, p.groupInstanceId);
      if (invalid !== ErrorCode.NONE) return invalid;
      if (p.generationIdOrMemberEpoch !== g.generationId) return ErrorCode.ILLEGAL_GENERATION;
    } else {
      return ErrorCode.UNKNOWN_MEMBER_ID;
    }
    if (g.state === 'CompletingRebalance' && !transactional) return ErrorCode.REBALANCE_IN_PROGRESS;
    // A commit is a sign of life from the member.
    const m = g.members.get(p.memberId);
    if (m && !m.awaitingJoin && !m.awaitingSync) this.classic.scheduleSession(g, m);
    return ErrorCode.NONE;
  }

  // ---- OffsetFetch --------------------------------------------------------------------------------

  /** Committed offsets of `topics` (null: all of them). Unknown groups and partitions give offset -1. */
  fetchOffsets(groupId: string, topics: { name: string; partitionIndexes: number[] }[] | null, member?: { memberId: string | null; memberEpoch: number }, requireStable = false):
    { errorCode: number; topics: { name: string; partitions: FetchedOffset[] }[] } {
    const g = this.ctx.groups.get(groupId);
    if (g?.kind === 'consumer' && member && member.memberId !== null) {
      const invalid = this.consumer.validateFetch(g, member.memberId, member.memberEpoch);
      if (invalid !== ErrorCode.NONE) return { errorCode: invalid, topics: [] };
    }
    const committed = this.committed.get(groupId);
    const entry = (topic: string, partition: number): FetchedOffset => {
      // require_stable (v7+): an offset a transaction may still change is not answered yet.
      if (requireStable && this.hasPendingTxnOffset(groupId, topic, partition)) {
        return { partitionIndex: partition, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT };
      }
      const c = committed?.get(partitionKey(topic, partition));
      return c ? { partitionIndex: partition, committedOffset: c.offset, committedLeaderEpoch: c.leaderEpoch, metadata: c.metadata, errorCode: 0 }
        : { partitionIndex: partition, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: 0 };
    };
    if (topics !== null) return { errorCode: 0, topics: topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((i) => entry(t.name, i)) })) };
    const byTopic = new Map<string, FetchedOffset[]>();
    for (const c of committed?.values() ?? []) {
      let list = byTopic.get(c.topic);
      if (!list) byTopic.set(c.topic, list = []);
      list.push(entry(c.topic, c.partition));
    }
    return { errorCode: 0, topics: [...byTopic].map(([name, partitions]) => ({ name, partitions: partitions.sort((a, b) => a.partitionIndex - b.partitionIndex) })) };
  }

  // ---- OffsetDelete -------------------------------------------------------------------------------

  deleteOffsets(groupId: string, topics: { name: string; partitions: number[] }[], respond: (errorCode: number, r: PartitionResults) => void): void {
    const g = this.ctx.groups.get(groupId);
    const top = (code: number) => this.ctx.respond(() => respond(code, []));
    if (!g || g.kind === 'share') return top(ErrorCode.GROUP_ID_NOT_FOUND);
    let subscribed: (topic: string) => boolean;
    if (g.kind === 'consumer') {
      if (g.dead) return top(ErrorCode.GROUP_ID_NOT_FOUND);
      const names = new Set<string>();
      for (const m of g.members.values()) for (const t of m.subscribedTopicNames) names.add(t);
      subscribed = (t) => names.has(t) || [...g.members.values()].some((m) => m.subscribedTopicRegex !== null && safeRegexTest(m.subscribedTopicRegex, t));
    } else {
      if (g.state === 'Dead') return top(ErrorCode.GROUP_ID_NOT_FOUND);
      if (g.state !== 'Empty' && g.protocolType !== 'consumer') return top(ErrorCode.NON_EMPTY_GROUP);
      const names = g.state === 'Empty' ? new Set<string>() : subscribedTopics(g);
      subscribed = (t) => names === null || names.has(t);
    }
    const committed = this.committed.get(groupId);
    const results: PartitionResults = topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((partitionIndex) => {
        if (subscribed(t.name)) return { partitionIndex, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC };
        if (committed?.has(partitionKey(t.name, partitionIndex))) this.ctx.emit({ type: 'offset', group: groupId, topic: t.name, partition: partitionIndex, value: null });
        return { partitionIndex, errorCode: ErrorCode.NONE };
      }),
    }));
    this.ctx.respond(() => respond(ErrorCode.NONE, results), (code) => respond(commitAppendError(code), []));
  }

  /** Tombstones for every offset and for the group itself. */
  emitGroupDeletion(g: Exclude<Group, { kind: 'share' }>): void {
    for (const c of this.committed.get(g.groupId)?.values() ?? []) this.ctx.emit({ type: 'offset', group: g.groupId, topic: c.topic, partition: c.partition, value: null });
    if (g.kind === 'classic') {
      transition(g, 'Dead', this.ctx.nowMs);
      this.ctx.emit({ type: 'group', group: g.groupId, value: null });
    } else {
      this.consumer.emitTombstones(g);
    }
    // The group leaves the map when its tombstone is replayed.
    this.ctx.onAppendFailure(() => { if (g.kind === 'classic') g.state = 'Empty'; else g.dead = false; });
  }

  // ---- offsets.retention.minutes ----------------------------------------------------------------

  scheduleExpiry(): void {
    this.ctx.timers.schedule('expire-offsets', this.ctx.nowMs + this.ctx.config.offsetsRetentionCheckIntervalMs, () => {
      this.expireOffsets();
      this.scheduleExpiry();
    });
  }

  /** Tombstones for offsets past their retention; an empty group left with none is deleted. */
  private expireOffsets(): void {
    for (const g of [...this.ctx.groups.values()]) {
      if (g.kind === 'share') continue;
      const committed = [...this.committed.get(g.groupId)?.values() ?? []];
      const expired = this.expiredOffsets(g, committed);
      const empty = g.kind === 'classic' ? g.state === 'Empty' : g.members.size === 0 && !g.dead;
      if (empty && expired.length === committed.length) {
        this.emitGroupDeletion(g);
        continue;
      }
      for (const c of expired) this.ctx.emit({ type: 'offset', group: g.groupId, topic: c.topic, partition: c.partition, value: null });
    }
  }

  private expiredOffsets<T extends { topic: string; commitTimestampMs: number; expireTimestampMs: number }>(g: Exclude<Group, { kind: 'share' }>, list: T[]): T[] {
    const retention = this.ctx.config.offsetsRetentionMs;
    const now = this.ctx.nowMs;
    const explicit = (c: T) => c.expireTimestampMs >= 0;
    if (g.kind === 'consumer') {
      if (g.members.size > 0) return [];
      // Kafka counts a consumer group's retention from the last commit once it is empty.
      return list.filter((c) => (explicit(c) ? now >= c.expireTimestampMs : now - c.commitTimestampMs >= retention));
    }
    if (g.protocolType === null) return list.filter((c) => (explicit(c) ? now >= c.expireTimestampMs : now - c.commitTimestampMs >= retention));
    if (g.state === 'Empty') {
      return list.filter((c) => (explicit(c) ? now >= c.expireTimestampMs : now - Math.max(g.currentStateTimestampMs, 0) >= retention));
    }
    const subscribed = subscribedTopics(g);
    if (subscribed === null) return [];
    return list.filter((c) => !subscribed.has(c.topic) && (explicit(c) ? now >= c.expireTimestampMs : now - c.commitTimestampMs >= retention));
  }
}

function safeRegexTest(pattern: string, topic: string): boolean {
  try { return new RegExp(`^(?:${pattern})$`).test(topic); } catch { return false; }
}
