// The group coordinator shard as the runtime sees it: classic groups (shard.ts), consumer groups
// (consumer.ts) and, here, what is common to both — committed offsets (commit, fetch, delete,
// expiry after offsets.retention.minutes) and group administration (describe, list, delete).
import { ErrorCode, type OffsetCommitValue } from '../../protocol/index.js';
import { partitionKey } from '../../util/index.js';
import { subscribedTopics, transition, type ClassicGroup } from './classic.js';
import { consumerGroupState, type ConsumerGroup } from './consumer-model.js';
import { ConsumerGroupShard } from './consumer.js';
import type { ClientInfo, Effects, Group } from './shard.js';

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

export interface GroupDescription {
  groupId: string; errorCode: number; state: string; protocolType: string; protocolName: string; type: 'classic' | 'consumer';
  members: { memberId: string; groupInstanceId: string | null; clientId: string; clientHost: string; metadata: Buffer; assignment: Buffer }[];
}

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

export class GroupCoordinatorShard extends ConsumerGroupShard {
  // ---- OffsetCommit ------------------------------------------------------------------------------

  commitOffsets(nowMs: number, p: CommitParams, client: ClientInfo, respond: (r: PartitionResults) => void): Effects {
    return this.commit(nowMs, p, null, client, respond);
  }

  /**
   * TxnOffsetCommit: the offsets are written in the producer's transactional batch and stay pending
   * (invisible to OffsetFetch) until its COMMIT marker reaches this partition; ABORT drops them.
   */
  txnCommitOffsets(nowMs: number, p: TxnCommitParams, client: ClientInfo, respond: (r: PartitionResults) => void): Effects {
    const effects = this.commit(nowMs, { ...p, retentionTimeMs: -1 }, { producerId: p.producerId, producerEpoch: p.producerEpoch }, client, respond);
    if (effects.records.length > 0) effects.producer = { producerId: p.producerId, producerEpoch: p.producerEpoch };
    return effects;
  }

  private commit(nowMs: number, p: CommitParams, txn: { producerId: bigint; producerEpoch: number } | null, client: ClientInfo, respond: (r: PartitionResults) => void): Effects {
    return this.run(nowMs, () => {
      const all = (code: number): PartitionResults => p.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((x) => ({ partitionIndex: x.partitionIndex, errorCode: code })) }));
      const invalid = this.validateCommit(p, client.apiVersion, txn !== null);
      if (invalid !== ErrorCode.NONE) return this.respond(() => respond(all(invalid)));
      const results: PartitionResults = [];
      for (const t of p.topics) {
        const partitions = [];
        for (const x of t.partitions) {
          const metadata = x.committedMetadata ?? '';
          if (Buffer.byteLength(metadata) > this.config.offsetMetadataMaxBytes) {
            partitions.push({ partitionIndex: x.partitionIndex, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE });
            continue;
          }
          const commitTimestamp = x.commitTimestamp >= 0n ? x.commitTimestamp : BigInt(this.nowMs);
          const value: OffsetCommitValue = {
            offset: x.committedOffset, leaderEpoch: x.committedLeaderEpoch, metadata, commitTimestamp,
            expireTimestamp: p.retentionTimeMs >= 0 ? commitTimestamp + BigInt(p.retentionTimeMs) : -1n,
          };
          this.emit({ type: 'offset', group: p.groupId, topic: t.name, partition: x.partitionIndex, value });
          partitions.push({ partitionIndex: x.partitionIndex, errorCode: ErrorCode.NONE });
        }
        results.push({ name: t.name, partitions });
      }
      const failed = (code: number): PartitionResults => results.map((t) => ({
        name: t.name, partitions: t.partitions.map((x) => ({ partitionIndex: x.partitionIndex, errorCode: x.errorCode || commitAppendError(code) })),
      }));
      this.respond(() => respond(results), (code) => respond(failed(code)));
    });
  }

  /** Kafka's validateOffsetCommit for both group types; creates a simple group for admin commits. */
  private validateCommit(p: CommitParams, apiVersion: number, transactional: boolean): number {
    let g = this.groups.get(p.groupId);
    if (!g) {
      if (p.generationIdOrMemberEpoch >= 0) return apiVersion >= 9 && !transactional ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.ILLEGAL_GENERATION;
      g = this.createSimpleGroup(p.groupId);
    }
    if (g.kind === 'consumer') return this.validateConsumerCommit(g, p.memberId, p.generationIdOrMemberEpoch);
    if (g.state === 'Dead') return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (p.generationIdOrMemberEpoch < 0 && g.state === 'Empty') return ErrorCode.NONE;
    // TxnOffsetCommit before v3 carries no member: accepted as Kafka does.
    if (transactional && p.generationIdOrMemberEpoch < 0 && p.memberId === '' && p.groupInstanceId === null) return ErrorCode.NONE;
    if (p.generationIdOrMemberEpoch >= 0 || p.memberId !== '' || p.groupInstanceId !== null) {
      const invalid = this.validateMember(g, p.memberId, p.groupInstanceId);
      if (invalid !== ErrorCode.NONE) return invalid;
      if (p.generationIdOrMemberEpoch !== g.generationId) return ErrorCode.ILLEGAL_GENERATION;
    } else {
      return ErrorCode.UNKNOWN_MEMBER_ID;
    }
    if (g.state === 'CompletingRebalance' && !transactional) return ErrorCode.REBALANCE_IN_PROGRESS;
    // A commit is a sign of life from the member.
    const m = g.members.get(p.memberId);
    if (m && !m.awaitingJoin && !m.awaitingSync) this.scheduleSession(g, m);
    return ErrorCode.NONE;
  }

  private createSimpleGroup(groupId: string): ClassicGroup {
    const g: ClassicGroup = {
      kind: 'classic', groupId, state: 'Empty', generationId: 0, protocolType: null, protocolName: null, leaderId: null, members: new Map(),
      staticMembers: new Map(), pendingMembers: new Set(), pendingSync: new Set(), initialDelay: null, currentStateTimestampMs: this.nowMs,
    };
    this.groups.set(groupId, g);
    return g;
  }

  // ---- OffsetFetch --------------------------------------------------------------------------------

  /** Committed offsets of `topics` (null: all of them). Unknown groups and partitions give offset -1. */
  fetchOffsets(groupId: string, topics: { name: string; partitionIndexes: number[] }[] | null, member?: { memberId: string | null; memberEpoch: number }, requireStable = false):
    { errorCode: number; topics: { name: string; partitions: FetchedOffset[] }[] } {
    const g = this.groups.get(groupId);
    if (g?.kind === 'consumer' && member && member.memberId !== null) {
      const invalid = this.validateConsumerFetch(g, member.memberId, member.memberEpoch);
      if (invalid !== ErrorCode.NONE) return { errorCode: invalid, topics: [] };
    }
    const committed = this.offsets.get(groupId);
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

  deleteOffsets(nowMs: number, groupId: string, topics: { name: string; partitions: number[] }[], respond: (errorCode: number, r: PartitionResults) => void): Effects {
    return this.run(nowMs, () => {
      const g = this.groups.get(groupId);
      const top = (code: number) => this.respond(() => respond(code, []));
      if (!g) return top(ErrorCode.GROUP_ID_NOT_FOUND);
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
      const committed = this.offsets.get(groupId);
      const results: PartitionResults = topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((partitionIndex) => {
          if (subscribed(t.name)) return { partitionIndex, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC };
          if (committed?.has(partitionKey(t.name, partitionIndex))) this.emit({ type: 'offset', group: groupId, topic: t.name, partition: partitionIndex, value: null });
          return { partitionIndex, errorCode: ErrorCode.NONE };
        }),
      }));
      this.respond(() => respond(ErrorCode.NONE, results), (code) => respond(commitAppendError(code), []));
    });
  }

  // ---- DeleteGroups, DescribeGroups, ListGroups ----------------------------------------------------------

  deleteGroups(nowMs: number, groupIds: string[], respond: (r: { groupId: string; errorCode: number }[]) => void): Effects {
    return this.run(nowMs, () => {
      const results = groupIds.map((groupId) => ({ groupId, errorCode: this.deleteGroup(groupId) }));
      this.respond(() => respond(results), (code) => respond(results.map((r) => ({ groupId: r.groupId, errorCode: r.errorCode || commitAppendError(code) }))));
    });
  }

  private deleteGroup(groupId: string): number {
    const g = this.groups.get(groupId);
    if (!g) return ErrorCode.GROUP_ID_NOT_FOUND;
    if (g.kind === 'classic') {
      if (g.state === 'Dead') return ErrorCode.GROUP_ID_NOT_FOUND;
      if (g.state !== 'Empty') return ErrorCode.NON_EMPTY_GROUP;
    } else {
      if (g.dead) return ErrorCode.GROUP_ID_NOT_FOUND;
      if (g.members.size > 0) return ErrorCode.NON_EMPTY_GROUP;
    }
    this.emitGroupDeletion(g);
    return ErrorCode.NONE;
  }

  /** Tombstones for every offset and for the group itself. */
  protected emitGroupDeletion(g: Group): void {
    for (const c of this.offsets.get(g.groupId)?.values() ?? []) this.emit({ type: 'offset', group: g.groupId, topic: c.topic, partition: c.partition, value: null });
    if (g.kind === 'classic') {
      transition(g, 'Dead', this.nowMs);
      this.emit({ type: 'group', group: g.groupId, value: null });
    } else {
      this.emitConsumerGroupTombstones(g);
    }
    // The group leaves the map when its tombstone is replayed.
    this.effects.onAppendFailure.push(() => { if (g.kind === 'classic') g.state = 'Empty'; else g.dead = false; });
  }

  describeGroup(groupId: string): GroupDescription {
    const g = this.groups.get(groupId);
    if (!g) return { groupId, errorCode: 0, state: 'Dead', protocolType: '', protocolName: '', type: 'classic', members: [] };
    if (g.kind === 'consumer') {
      return { groupId, errorCode: 0, state: consumerGroupState(g), protocolType: 'consumer', protocolName: '', type: 'consumer', members: [] };
    }
    const stable = g.state === 'Stable';
    return {
      groupId, errorCode: 0, state: g.state, protocolType: g.protocolType ?? '', protocolName: stable ? g.protocolName ?? '' : '', type: 'classic',
      members: [...g.members.values()].map((m) => ({
        memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
        metadata: stable ? m.protocols.find((x) => x.name === g.protocolName)?.metadata ?? Buffer.alloc(0) : Buffer.alloc(0),
        assignment: stable ? m.assignment : Buffer.alloc(0),
      })),
    };
  }

  listGroups(statesFilter: string[], typesFilter: string[]): { groupId: string; protocolType: string; groupState: string; groupType: string }[] {
    const states = new Set(statesFilter.map((s) => s.toLowerCase()));
    const types = new Set(typesFilter.map((s) => s.toLowerCase()));
    const out = [];
    for (const g of this.groups.values()) {
      const state = g.kind === 'classic' ? g.state : consumerGroupState(g);
      if (state === 'Dead') continue;
      if (states.size > 0 && !states.has(state.toLowerCase())) continue;
      if (types.size > 0 && !types.has(g.kind)) continue;
      out.push({ groupId: g.groupId, protocolType: g.kind === 'classic' ? g.protocolType ?? '' : 'consumer', groupState: state, groupType: g.kind });
    }
    return out.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
  }

  // ---- offsets.retention.minutes ----------------------------------------------------------------

  protected override scheduleOffsetExpiry(): void {
    this.timers.schedule('expire-offsets', this.nowMs + this.config.offsetsRetentionCheckIntervalMs, () => {
      this.expireOffsets();
      this.scheduleOffsetExpiry();
    });
  }

  /** Tombstones for offsets past their retention; an empty group left with none is deleted. */
  expireOffsets(): void {
    for (const g of [...this.groups.values()]) {
      const committed = [...this.offsets.get(g.groupId)?.values() ?? []];
      const expired = this.expiredOffsets(g, committed);
      const empty = g.kind === 'classic' ? g.state === 'Empty' : g.members.size === 0 && !g.dead;
      if (empty && expired.length === committed.length) {
        this.emitGroupDeletion(g);
        continue;
      }
      for (const c of expired) this.emit({ type: 'offset', group: g.groupId, topic: c.topic, partition: c.partition, value: null });
    }
  }

  private expiredOffsets<T extends { topic: string; commitTimestampMs: number; expireTimestampMs: number }>(g: Group, list: T[]): T[] {
    const retention = this.config.offsetsRetentionMs;
    const now = this.nowMs;
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
