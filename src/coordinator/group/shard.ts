// One group coordinator shard: the groups and committed offsets of one `__consumer_offsets`
// partition, as Kafka's GroupCoordinatorShard: one object owning three parts that share the
// partition's groups, timers and the operation being built (context.ts):
//   classic   (classic-groups.ts) JoinGroup, SyncGroup, Heartbeat, LeaveGroup, rebalances, sessions
//   consumer  (consumer.ts)       KIP-848 ConsumerGroupHeartbeat, epochs, assignors, reconciliation
//   offsets   (offsets.ts)        OffsetCommit/TxnOffsetCommit/OffsetFetch/OffsetDelete, expiry
//   share     (share-groups.ts)   KIP-932 ShareGroupHeartbeat, the simple assignor (shared partitions)
// and, here, what spans them: replay, the lifecycle the runtime drives (onLoaded, tick, unload) and
// group administration (describe, list, delete). A deterministic state machine: every operation
// takes the time as an input and returns Effects, the records to append and the replies to send
// once they are committed; `replay` is the only path that changes durable state, for loading and
// live writes alike. No clock, no randomness (member ids come from an injected generator), no I/O.
import { ErrorCode, type ConsumerGroupHeartbeatResponse, type JoinGroupResponse, type ShareGroupHeartbeatResponse, type SyncGroupResponse } from '../../protocol/index.js';
import { ShareGroups, shareGroupState, type ShareHeartbeatParams } from './share-groups.js';
import { ClassicGroups } from './classic-groups.js';
import { ConsumerGroups, type HeartbeatParams, type TopicsSnapshot } from './consumer.js';
import { consumerGroupState } from './consumer-model.js';
import { GroupCoordinatorStats, GroupShardContext, type ClientInfo, type Effects, type Group, type GroupCoordinatorConfig, type JoinParams, type SyncParams } from './context.js';
import { Offsets, commitAppendError, type CommitParams, type FetchedOffset, type PartitionResults, type TxnCommitParams } from './offsets.js';
import type { GroupRecord } from './records.js';

export {
  defaultGroupConfig, GroupCoordinatorStats, joinError, syncError, type GroupCoordinatorConfig, type Effects, type Reply, type ClientInfo, type JoinParams, type SyncParams,
} from './context.js';
export { commitAppendError, type CommitParams, type TxnCommitParams, type PartitionResults, type FetchedOffset } from './offsets.js';

export interface GroupDescription {
  groupId: string; errorCode: number; state: string; protocolType: string; protocolName: string; type: 'classic' | 'consumer' | 'share';
  members: { memberId: string; groupInstanceId: string | null; clientId: string; clientHost: string; metadata: Buffer; assignment: Buffer }[];
}

export class GroupCoordinatorShard {
  private readonly ctx: GroupShardContext;
  readonly classic: ClassicGroups;
  readonly consumer: ConsumerGroups;
  readonly offsets: Offsets;
  readonly share: ShareGroups;

  constructor(readonly config: GroupCoordinatorConfig, uuid: () => string, stats = new GroupCoordinatorStats(), info?: (message: string) => void) {
    this.ctx = new GroupShardContext(config, uuid, (r) => this.replay(r), stats, info);
    this.consumer = new ConsumerGroups(this.ctx);
    this.classic = new ClassicGroups(this.ctx, this.consumer);
    this.offsets = new Offsets(this.ctx, this.classic, this.consumer);
    this.share = new ShareGroups(this.ctx, () => ({ sessionTimeoutMs: config.shareSessionTimeoutMs, heartbeatIntervalMs: config.shareHeartbeatIntervalMs, maxSize: config.shareGroupMaxSize }));
  }

  /** Every group of the partition, classic and consumer (one namespace, as in Kafka). */
  get groups(): Map<string, Group> { return this.ctx.groups; }

  // ---- the runtime's side -------------------------------------------------------------------------

  /** `producerId` ≥ 0: the record came in that producer's transactional batch (TxnOffsetCommit). */
  replay(r: GroupRecord, producerId = -1): void {
    this.offsets.position++;
    if (producerId >= 0 && r.type === 'offset') return this.offsets.replayPendingOffset(producerId, r.group, r.topic, r.partition, r.value);
    switch (r.type) {
      case 'offset': return this.offsets.replayOffset(r.group, r.topic, r.partition, r.value);
      case 'group': return this.classic.replayGroupMetadata(r);
      case 'share-group': case 'share-partition-metadata': case 'share-member': case 'share-target-metadata': case 'share-target-member': case 'share-current-member': case 'share-state-metadata':
        return this.share.replay(r);
      default: return this.consumer.replay(r);
    }
  }

  /** A transaction marker in this partition: the producer's pending offsets are committed or dropped. */
  replayTransactionMarker(producerId: number, commit: boolean): void { this.offsets.replayTransactionMarker(producerId, commit); }

  /** Called once after loading: sessions restart from now, and offset expiry is scheduled. */
  onLoaded(nowMs: number): Effects {
    this.ctx.loading = false;
    return this.ctx.run(nowMs, () => {
      for (const g of this.ctx.groups.values()) {
        if (g.kind === 'classic') this.classic.onLoaded(g);
        else if (g.kind === 'share') this.share.onLoaded(g);
        else this.consumer.onLoaded(g);
      }
      this.offsets.scheduleExpiry();
    });
  }

  /** Fires every timer due at `nowMs` (session expiry, join and sync deadlines, offset expiry). */
  tick(nowMs: number): Effects { return this.ctx.run(nowMs, () => { this.ctx.timers.expire(nowMs); }); }
  nextDeadlineMs(): number | null { return this.ctx.timers.nextDeadlineMs(); }

  /** The partition moved away: timers stop, parked JoinGroup/SyncGroup answers get NOT_COORDINATOR. */
  unload(): void {
    this.ctx.timers.clear();
    for (const g of this.ctx.groups.values()) if (g.kind === 'classic') this.classic.unload(g);
  }

  // ---- classic groups --------------------------------------------------------------------------------

  classicJoin(nowMs: number, p: JoinParams, client: ClientInfo, respond: (r: JoinGroupResponse) => void): Effects {
    return this.ctx.run(nowMs, () => this.classic.join(p, client, respond));
  }

  classicSync(nowMs: number, p: SyncParams, respond: (r: SyncGroupResponse) => void): Effects {
    return this.ctx.run(nowMs, () => this.classic.sync(p, respond));
  }

  classicHeartbeat(nowMs: number, p: { groupId: string; memberId: string; groupInstanceId: string | null; generationId: number }): { effects: Effects; errorCode: number } {
    let errorCode: number = ErrorCode.NONE;
    const effects = this.ctx.run(nowMs, () => { errorCode = this.classic.heartbeat(p); });
    return { effects, errorCode };
  }

  /** LeaveGroup for a batch of members (v3+), or one member id (v0-2). Top-level error or per member. */
  classicLeave(nowMs: number, groupId: string, members: { memberId: string; groupInstanceId: string | null }[]): { effects: Effects; errorCode: number; results: number[] } {
    let out = { errorCode: ErrorCode.NONE as number, results: [] as number[] };
    const effects = this.ctx.run(nowMs, () => { out = this.classic.leave(groupId, members); });
    return { effects, ...out };
  }

  // ---- consumer groups (KIP-848) ---------------------------------------------------------------------

  consumerHeartbeat(nowMs: number, p: HeartbeatParams, client: ClientInfo, topics: TopicsSnapshot, respond: (r: ConsumerGroupHeartbeatResponse) => void): Effects {
    return this.ctx.run(nowMs, () => this.consumer.heartbeat(p, client, topics, respond));
  }

  describeConsumerGroup(groupId: string, topics: TopicsSnapshot): ReturnType<ConsumerGroups['describe']> { return this.consumer.describe(groupId, topics); }

  // ---- share groups (KIP-932) ------------------------------------------------------------------------

  shareHeartbeat(nowMs: number, p: ShareHeartbeatParams, client: ClientInfo, topics: TopicsSnapshot, respond: (r: ShareGroupHeartbeatResponse) => void): Effects {
    return this.ctx.run(nowMs, () => this.share.heartbeat(p, client, topics, respond));
  }

  describeShareGroup(groupId: string, topics: TopicsSnapshot): ReturnType<ShareGroups['describe']> { return this.share.describe(groupId, topics); }

  shareGroupTopics(groupId: string): ReturnType<ShareGroups['initializedTopics']> { return this.share.initializedTopics(groupId); }

  alterShareOffsets(nowMs: number, groupId: string, topics: Parameters<ShareGroups['alterOffsets']>[1], respond: (code: number) => void): Effects {
    return this.ctx.run(nowMs, () => this.share.alterOffsets(groupId, topics, respond));
  }

  deleteShareOffsets(nowMs: number, groupId: string, topicIds: string[], respond: Parameters<ShareGroups['deleteOffsets']>[2]): Effects {
    return this.ctx.run(nowMs, () => this.share.deleteOffsets(groupId, topicIds, respond));
  }

  // ---- offsets ---------------------------------------------------------------------------------------

  commitOffsets(nowMs: number, p: CommitParams, client: ClientInfo, respond: (r: PartitionResults) => void): Effects {
    return this.ctx.run(nowMs, () => this.offsets.commit(p, null, client, respond));
  }

  /** TxnOffsetCommit: the offsets go out in the producer's transactional batch and wait for its marker. */
  txnCommitOffsets(nowMs: number, p: TxnCommitParams, client: ClientInfo, respond: (r: PartitionResults) => void): Effects {
    const producer = { producerId: p.producerId, producerEpoch: p.producerEpoch };
    const effects = this.ctx.run(nowMs, () => this.offsets.commit({ ...p, retentionTimeMs: -1 }, producer, client, respond));
    if (effects.records.length > 0) effects.producer = producer;
    return effects;
  }

  fetchOffsets(groupId: string, topics: { name: string; partitionIndexes: number[] }[] | null, member?: { memberId: string | null; memberEpoch: number }, requireStable = false):
    { errorCode: number; topics: { name: string; partitions: FetchedOffset[] }[] } {
    return this.offsets.fetchOffsets(groupId, topics, member, requireStable);
  }

  /** Whether a transaction holds an undecided offset for this partition of the group (OffsetFetch require_stable). */
  hasPendingTxnOffset(group: string, topic: string, partition: number): boolean { return this.offsets.hasPendingTxnOffset(group, topic, partition); }

  deleteOffsets(nowMs: number, groupId: string, topics: { name: string; partitions: number[] }[], respond: (errorCode: number, r: PartitionResults) => void): Effects {
    return this.ctx.run(nowMs, () => this.offsets.deleteOffsets(groupId, topics, respond));
  }

  // ---- DeleteGroups, DescribeGroups, ListGroups --------------------------------------------------------

  deleteGroups(nowMs: number, groupIds: string[], respond: (r: { groupId: string; errorCode: number }[]) => void): Effects {
    return this.ctx.run(nowMs, () => {
      const results = groupIds.map((groupId) => ({ groupId, errorCode: this.deleteGroup(groupId) }));
      this.ctx.respond(() => respond(results), (code) => respond(results.map((r) => ({ groupId: r.groupId, errorCode: r.errorCode || commitAppendError(code) }))));
    });
  }

  private deleteGroup(groupId: string): number {
    const g = this.ctx.groups.get(groupId);
    if (!g) return ErrorCode.GROUP_ID_NOT_FOUND;
    if (g.kind === 'classic') {
      if (g.state === 'Dead') return ErrorCode.GROUP_ID_NOT_FOUND;
      if (g.state !== 'Empty') return ErrorCode.NON_EMPTY_GROUP;
    } else {
      if (g.dead) return ErrorCode.GROUP_ID_NOT_FOUND;
      if (g.members.size > 0) return ErrorCode.NON_EMPTY_GROUP;
    }
    if (g.kind === 'share') {
      this.share.emitTombstones(g);
      this.ctx.onAppendFailure(() => { g.dead = false; });
      return ErrorCode.NONE;
    }
    this.offsets.emitGroupDeletion(g);
    return ErrorCode.NONE;
  }

  describeGroup(groupId: string): GroupDescription {
    const g = this.ctx.groups.get(groupId);
    if (!g) return { groupId, errorCode: 0, state: 'Dead', protocolType: '', protocolName: '', type: 'classic', members: [] };
    if (g.kind === 'consumer') {
      return { groupId, errorCode: 0, state: consumerGroupState(g), protocolType: 'consumer', protocolName: '', type: 'consumer', members: [] };
    }
    if (g.kind === 'share') return { groupId, errorCode: 0, state: shareGroupState(g), protocolType: 'share', protocolName: '', type: 'share', members: [] };
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
    for (const g of this.ctx.groups.values()) {
      const state = g.kind === 'classic' ? g.state : g.kind === 'share' ? shareGroupState(g) : consumerGroupState(g);
      if (state === 'Dead') continue;
      if (states.size > 0 && !states.has(state.toLowerCase())) continue;
      if (types.size > 0 && !types.has(g.kind)) continue;
      out.push({ groupId: g.groupId, protocolType: g.kind === 'classic' ? g.protocolType ?? '' : g.kind, groupState: state, groupType: g.kind });
    }
    return out.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
  }
}
