// One group coordinator shard: the groups and committed offsets of one `__consumer_offsets`
// partition. A deterministic state machine in the style of Kafka's GroupMetadataManager and
// OffsetMetadataManager: every operation takes the time as an input and returns Effects — the
// records to append and the replies to send once they are committed. The runtime appends the
// records, `replay`s them, then sends the replies, so the response never precedes durability.
//
// Offsets and group deletion change state only through `replay`, which is also how a partition is
// loaded. Classic membership (joins, heartbeats, the rebalance phases) is soft state driven by
// requests and timers, as in Kafka; what must survive a move of the coordinator — generation,
// protocol, leader, members and assignments — is written as a GroupMetadata record when a
// generation is established (at SyncGroup, or when the group becomes empty).
import { ErrorCode, type JoinGroupResponse, type SyncGroupResponse, type OffsetCommitValue } from '../../protocol/index.js';
import { partitionKey } from '../../util/index.js';
import { Timers } from '../runtime/timers.js';
import {
  allMembersJoined, matchesProtocols, maxRebalanceTimeoutMs, metadataFor, newClassicGroup, selectProtocol, supportsProtocols,
  transition, type ClassicGroup, type ClassicMember,
} from './classic.js';
import type { GroupRecord } from './records.js';
import type { ConsumerGroup } from './consumer-model.js';

export interface GroupCoordinatorConfig {
  initialRebalanceDelayMs: number;
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  groupMaxSize: number;
  offsetsRetentionMs: number;
  offsetsRetentionCheckIntervalMs: number;
  offsetMetadataMaxBytes: number;
  consumerSessionTimeoutMs: number;
  consumerHeartbeatIntervalMs: number;
  consumerGroupMaxSize: number;
  /** Server-side assignors of the consumer protocol; the first is the default. */
  consumerAssignors: string[];
}

export const defaultGroupConfig: GroupCoordinatorConfig = {
  initialRebalanceDelayMs: 3000, minSessionTimeoutMs: 6000, maxSessionTimeoutMs: 1_800_000, groupMaxSize: 2_147_483_647,
  offsetsRetentionMs: 7 * 24 * 3600 * 1000, offsetsRetentionCheckIntervalMs: 600_000, offsetMetadataMaxBytes: 4096,
  consumerSessionTimeoutMs: 45_000, consumerHeartbeatIntervalMs: 5000, consumerGroupMaxSize: 2_147_483_647, consumerAssignors: ['uniform', 'range'],
};

/** Something to send once this operation's records are committed (or to fail with a code if they are not). */
export interface Reply { send(): void; fail(errorCode: number): void }

export interface Effects {
  records: GroupRecord[];
  replies: Reply[];
  /** Undo for state that was changed ahead of the append, run when the append fails. */
  onAppendFailure: ((errorCode: number) => void)[];
  /** Set by TxnOffsetCommit: the records go out in this producer's transactional batch. */
  producer?: { producerId: bigint; producerEpoch: number };
}

export interface ClientInfo { clientId: string; clientHost: string; apiVersion: number }

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

export type Group = ClassicGroup | ConsumerGroup;

const UNKNOWN_MEMBER = '';
const reply = (send: () => void, fail?: (code: number) => void): Reply => ({ send, fail: fail ?? (() => send()) });

export const joinError = (errorCode: number, memberId = UNKNOWN_MEMBER): JoinGroupResponse => ({
  throttleTimeMs: 0, errorCode, generationId: -1, protocolType: null, protocolName: null, leader: '', skipAssignment: false, memberId, members: [],
});
export const syncError = (errorCode: number): SyncGroupResponse => ({ throttleTimeMs: 0, errorCode, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) });

export interface JoinParams {
  groupId: string; memberId: string; groupInstanceId: string | null; sessionTimeoutMs: number; rebalanceTimeoutMs: number;
  protocolType: string; protocols: { name: string; metadata: Buffer }[]; reason: string | null;
}
export interface SyncParams {
  groupId: string; memberId: string; groupInstanceId: string | null; generationId: number; protocolType: string | null; protocolName: string | null;
  assignments: { memberId: string; assignment: Buffer }[];
}

export class ClassicGroupShard {
  readonly groups = new Map<string, Group>();
  /** group → "topic\0partition" → committed offset. */
  readonly offsets = new Map<string, Map<string, PartitionOffset>>();
  readonly timers = new Timers();
  protected effects: Effects = { records: [], replies: [], onAppendFailure: [] };
  protected nowMs = 0;
  /** True while the partition is being replayed (records are history, not live writes). */
  loading = true;

  constructor(readonly config: GroupCoordinatorConfig, protected readonly uuid: () => string) {}

  // ---- driving -------------------------------------------------------------------------------

  /** Runs one operation at `nowMs` and hands back what it produced. */
  protected run(nowMs: number, op: () => void): Effects {
    this.nowMs = Math.max(this.nowMs, nowMs);
    op();
    const out = this.effects;
    this.effects = { records: [], replies: [], onAppendFailure: [] };
    return out;
  }

  /** Fires every timer due at `nowMs` (session expiry, join and sync deadlines, offset expiry). */
  tick(nowMs: number): Effects { return this.run(nowMs, () => { this.timers.expire(nowMs); }); }
  nextDeadlineMs(): number | null { return this.timers.nextDeadlineMs(); }

  /** Called once after loading: sessions restart from now, and offset expiry is scheduled. */
  onLoaded(nowMs: number): Effects {
    this.loading = false;
    return this.run(nowMs, () => {
      for (const g of this.groups.values()) {
        if (g.kind === 'classic') for (const m of g.members.values()) this.scheduleSession(g, m);
        else this.onConsumerGroupLoaded(g);
      }
      this.scheduleOffsetExpiry();
    });
  }

  protected emit(record: GroupRecord): void { this.effects.records.push(record); }
  protected respond(send: () => void, fail?: (code: number) => void): void { this.effects.replies.push(reply(send, fail)); }

  // ---- replay: the one path for loading and for committed writes -------------------------------

  /**
   * Transactional offset commits not yet decided: producer id → group → "topic\0partition" → offset.
   * They become committed offsets when the producer's COMMIT marker is replayed, and vanish on ABORT.
   */
  readonly pendingTxnOffsets = new Map<number, Map<string, Map<string, PartitionOffset>>>();
  /** Records replayed so far: the log position of the next one. */
  private replayed = 0;

  /** `producerId` ≥ 0: the record came in that producer's transactional batch (TxnOffsetCommit). */
  replay(r: GroupRecord, producerId = -1): void {
    this.replayed++;
    if (producerId >= 0 && r.type === 'offset') return this.replayPendingOffset(producerId, r.group, r.topic, r.partition, r.value);
    switch (r.type) {
      case 'offset': return this.replayOffset(r.group, r.topic, r.partition, r.value);
      case 'group': return this.replayGroupMetadata(r);
      default: return this.replayConsumerRecord(r);
    }
  }

  private replayPendingOffset(producerId: number, group: string, topic: string, partition: number, v: OffsetCommitValue | null): void {
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
      expireTimestampMs: Number(v.expireTimestamp), logPosition: this.replayed,
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
        const existing = this.offsets.get(group)?.get(partitionKey(c.topic, c.partition));
        if (existing && existing.logPosition > c.logPosition) continue;
        if (!this.groups.has(group)) this.groups.set(group, newClassicGroup(group, c.commitTimestampMs));
        let map = this.offsets.get(group);
        if (!map) this.offsets.set(group, map = new Map());
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

  private replayOffset(group: string, topic: string, partition: number, v: OffsetCommitValue | null): void {
    const key = partitionKey(topic, partition);
    if (v === null) {
      const map = this.offsets.get(group);
      map?.delete(key);
      if (map && map.size === 0) this.offsets.delete(group);
      return;
    }
    if (!this.groups.has(group)) this.groups.set(group, newClassicGroup(group, Number(v.commitTimestamp)));
    let map = this.offsets.get(group);
    if (!map) this.offsets.set(group, map = new Map());
    map.set(key, this.committedOffset(topic, partition, v));
  }

  private replayGroupMetadata(r: Extract<GroupRecord, { type: 'group' }>): void {
    const existing = this.groups.get(r.group);
    if (r.value === null) {
      if (existing?.kind === 'classic') { existing.state = 'Dead'; this.groups.delete(r.group); }
      return;
    }
    // A live write: the in-memory group already holds what the record says (and more).
    if (!this.loading && existing?.kind === 'classic' && existing.generationId >= r.value.generation && existing.members.size > 0) return;
    const v = r.value;
    const g = existing?.kind === 'classic' ? existing : newClassicGroup(r.group, 0);
    g.generationId = v.generation;
    g.protocolType = v.protocolType;
    g.protocolName = v.protocol;
    g.leaderId = v.leader;
    g.members.clear();
    g.staticMembers.clear();
    for (const m of v.members) {
      g.members.set(m.memberId, {
        memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
        rebalanceTimeoutMs: m.rebalanceTimeout < 0 ? m.sessionTimeout : m.rebalanceTimeout, sessionTimeoutMs: m.sessionTimeout,
        protocolType: v.protocolType, protocols: [{ name: v.protocol ?? '', metadata: m.subscription }], assignment: m.assignment,
        awaitingJoin: null, awaitingSync: null,
      });
      if (m.groupInstanceId !== null) g.staticMembers.set(m.groupInstanceId, m.memberId);
    }
    g.state = g.members.size === 0 ? 'Empty' : 'Stable';
    g.currentStateTimestampMs = Number(v.currentStateTimestamp);
    this.groups.set(r.group, g);
  }

  /** Overridden by the consumer-protocol shard. */
  protected replayConsumerRecord(_r: GroupRecord): void {}
  protected onConsumerGroupLoaded(_g: ConsumerGroup): void {}
  protected scheduleOffsetExpiry(): void {}

  /** The classic group's GroupMetadata record as it stands. */
  protected groupRecord(g: ClassicGroup, assignments?: Map<string, Buffer>): GroupRecord {
    return {
      type: 'group', group: g.groupId,
      value: {
        protocolType: g.protocolType ?? '', generation: g.generationId, protocol: g.protocolName, leader: g.leaderId,
        currentStateTimestamp: BigInt(g.currentStateTimestampMs),
        members: [...g.members.values()].map((m) => ({
          memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
          rebalanceTimeout: m.rebalanceTimeoutMs, sessionTimeout: m.sessionTimeoutMs, subscription: metadataFor(m, g.protocolName),
          assignment: assignments?.get(m.memberId) ?? m.assignment,
        })),
      },
    };
  }

  // ---- classic JoinGroup -------------------------------------------------------------------------

  classicJoin(nowMs: number, p: JoinParams, client: ClientInfo, respond: (r: JoinGroupResponse) => void): Effects {
    return this.run(nowMs, () => {
      const fail = (code: number, memberId = UNKNOWN_MEMBER) => this.respond(() => respond(joinError(code, memberId)));
      if (!p.groupId) return fail(ErrorCode.INVALID_GROUP_ID);
      if (p.sessionTimeoutMs < this.config.minSessionTimeoutMs || p.sessionTimeoutMs > this.config.maxSessionTimeoutMs) return fail(ErrorCode.INVALID_SESSION_TIMEOUT);
      const unknown = p.memberId === UNKNOWN_MEMBER;
      let g = this.groups.get(p.groupId);
      if (g?.kind === 'consumer') {
        if (!this.maybeDowngradeEmptyConsumerGroup(g)) return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
        g = undefined;
      }
      if (!g) {
        if (!unknown) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
        g = newClassicGroup(p.groupId, this.nowMs);
        this.groups.set(p.groupId, g);
      }
      if (!this.acceptJoiningMember(g, p.memberId)) {
        this.removeMember(g, p.memberId);
        return fail(ErrorCode.GROUP_MAX_SIZE_REACHED);
      }
      if (g.state === 'Dead') return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      if (!supportsProtocols(g, p.protocolType, p.protocols)) return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
      if (unknown) this.joinNewMember(g, p, client, respond);
      else this.joinExistingMember(g, p, client, respond);
    });
  }

  /** Overridden by the consumer-protocol shard: an empty consumer group may become classic. */
  protected maybeDowngradeEmptyConsumerGroup(_g: ConsumerGroup): boolean { return false; }

  private acceptJoiningMember(g: ClassicGroup, memberId: string): boolean {
    const max = this.config.groupMaxSize;
    switch (g.state) {
      case 'Empty': case 'Dead': return true;
      case 'PreparingRebalance': {
        const m = g.members.get(memberId);
        let awaiting = 0;
        for (const x of g.members.values()) if (x.awaitingJoin) awaiting++;
        return (m !== undefined && m.awaitingJoin !== null) || awaiting < max;
      }
      default: return g.members.has(memberId) || g.members.size < max;
    }
  }

  private joinNewMember(g: ClassicGroup, p: JoinParams, client: ClientInfo, respond: (r: JoinGroupResponse) => void): void {
    const memberId = `${client.clientId}-${this.uuid()}`;
    if (p.groupInstanceId !== null) {
      const oldId = g.staticMembers.get(p.groupInstanceId);
      if (oldId !== undefined && g.members.has(oldId)) return this.rejoinStaticMember(g, oldId, memberId, p, client, respond);
      return this.addMemberAndRebalance(g, memberId, p, client, respond);
    }
    if (client.apiVersion >= 4) {
      // KIP-394: hand out the id first; the member joins for real with it.
      g.pendingMembers.add(memberId);
      this.timers.schedule(`session:${g.groupId}:${memberId}`, this.nowMs + p.sessionTimeoutMs, () => this.expirePendingMember(g, memberId));
      return this.respond(() => respond(joinError(ErrorCode.MEMBER_ID_REQUIRED, memberId)));
    }
    this.addMemberAndRebalance(g, memberId, p, client, respond);
  }

  private joinExistingMember(g: ClassicGroup, p: JoinParams, client: ClientInfo, respond: (r: JoinGroupResponse) => void): void {
    if (g.pendingMembers.has(p.memberId)) {
      g.pendingMembers.delete(p.memberId);
      return this.addMemberAndRebalance(g, p.memberId, p, client, respond);
    }
    const fence = this.validateMember(g, p.memberId, p.groupInstanceId);
    if (fence !== ErrorCode.NONE) return this.respond(() => respond(joinError(fence, p.memberId)));
    const m = g.members.get(p.memberId)!;
    switch (g.state) {
      case 'PreparingRebalance':
        return this.updateMemberAndRebalance(g, m, p, respond);
      case 'CompletingRebalance':
        if (matchesProtocols(m, p.protocols)) return this.respond(() => respond(this.joinResponse(g, m)));
        return this.updateMemberAndRebalance(g, m, p, respond);
      case 'Stable':
        if (g.leaderId === m.memberId || !matchesProtocols(m, p.protocols)) return this.updateMemberAndRebalance(g, m, p, respond);
        return this.respond(() => respond(this.joinResponse(g, m)));
      default:
        return this.respond(() => respond(joinError(ErrorCode.UNKNOWN_MEMBER_ID, p.memberId)));
    }
  }

  /** UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID when (memberId, instanceId) is not a member of g. */
  protected validateMember(g: ClassicGroup, memberId: string, groupInstanceId: string | null): number {
    if (groupInstanceId !== null) {
      const current = g.staticMembers.get(groupInstanceId);
      if (current === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
      if (current !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
    }
    return g.members.has(memberId) ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
  }

  private joinResponse(g: ClassicGroup, m: ClassicMember, skipAssignment = false): JoinGroupResponse {
    const isLeader = g.leaderId === m.memberId;
    return {
      throttleTimeMs: 0, errorCode: 0, generationId: g.generationId, protocolType: g.protocolType, protocolName: g.protocolName,
      leader: g.leaderId ?? '', skipAssignment, memberId: m.memberId,
      members: isLeader ? [...g.members.values()].map((x) => ({ memberId: x.memberId, groupInstanceId: x.groupInstanceId, metadata: metadataFor(x, g.protocolName) })) : [],
    };
  }

  private addMemberAndRebalance(g: ClassicGroup, memberId: string, p: JoinParams, client: ClientInfo, respond: (r: JoinGroupResponse) => void): void {
    const m: ClassicMember = {
      memberId, groupInstanceId: p.groupInstanceId, clientId: client.clientId, clientHost: client.clientHost,
      rebalanceTimeoutMs: p.rebalanceTimeoutMs, sessionTimeoutMs: p.sessionTimeoutMs, protocolType: p.protocolType, protocols: p.protocols,
      assignment: Buffer.alloc(0), awaitingJoin: respond, awaitingSync: null,
    };
    if (g.members.size === 0) g.protocolType = p.protocolType;
    g.members.set(memberId, m);
    if (g.leaderId === null) g.leaderId = memberId;
    if (p.groupInstanceId !== null) g.staticMembers.set(p.groupInstanceId, memberId);
    if (g.initialDelay) g.initialDelay.newMemberAdded = true;
    // Members waiting for the join phase are not expired; their session restarts when it completes.
    this.timers.cancel(`session:${g.groupId}:${memberId}`);
    this.maybePrepareRebalance(g);
    this.maybeCompleteJoin(g);
  }

  private updateMemberAndRebalance(g: ClassicGroup, m: ClassicMember, p: JoinParams, respond: (r: JoinGroupResponse) => void): void {
    m.protocols = p.protocols;
    m.rebalanceTimeoutMs = p.rebalanceTimeoutMs;
    m.sessionTimeoutMs = p.sessionTimeoutMs;
    if (m.awaitingJoin) { const prev = m.awaitingJoin; this.respond(() => prev(joinError(ErrorCode.REBALANCE_IN_PROGRESS, m.memberId))); }
    m.awaitingJoin = respond;
    this.timers.cancel(`session:${g.groupId}:${m.memberId}`);
    this.maybePrepareRebalance(g);
    this.maybeCompleteJoin(g);
  }

  /** KIP-345: a known group.instance.id joins with a new member id; the old one is fenced. */
  private rejoinStaticMember(g: ClassicGroup, oldId: string, newId: string, p: JoinParams, client: ClientInfo, respond: (r: JoinGroupResponse) => void): void {
    const old = g.members.get(oldId)!;
    if (old.awaitingJoin) { const cb = old.awaitingJoin; this.respond(() => cb(joinError(ErrorCode.FENCED_INSTANCE_ID, oldId))); }
    if (old.awaitingSync) { const cb = old.awaitingSync; this.respond(() => cb(syncError(ErrorCode.FENCED_INSTANCE_ID))); }
    this.timers.cancel(`session:${g.groupId}:${oldId}`);
    const m: ClassicMember = { ...old, memberId: newId, clientId: client.clientId, clientHost: client.clientHost, awaitingJoin: null, awaitingSync: null };
    const oldProtocols = old.protocols;
    g.members.delete(oldId);
    g.members.set(newId, m);
    g.staticMembers.set(p.groupInstanceId!, newId);
    const wasLeader = g.leaderId === oldId;
    if (wasLeader) g.leaderId = newId;
    if (g.pendingSync.delete(oldId)) g.pendingSync.add(newId);
    if (g.state === 'Stable') {
      m.protocols = p.protocols;
      if (selectProtocol(g) === g.protocolName) {
        // Nothing changed that needs a rebalance: persist the new member id and answer with the
        // current generation (a leader is told to skip assignment, v9).
        m.rebalanceTimeoutMs = p.rebalanceTimeoutMs;
        m.sessionTimeoutMs = p.sessionTimeoutMs;
        this.scheduleSession(g, m);
        this.emit(this.groupRecord(g));
        const undo = () => {
          g.members.delete(newId);
          g.members.set(oldId, { ...old, awaitingJoin: null, awaitingSync: null });
          g.staticMembers.set(p.groupInstanceId!, oldId);
          if (wasLeader) g.leaderId = oldId;
          this.timers.cancel(`session:${g.groupId}:${newId}`);
          this.scheduleSession(g, g.members.get(oldId)!);
        };
        this.effects.onAppendFailure.push(undo);
        const answer = this.joinResponse(g, m, wasLeader);
        return this.respond(() => respond(answer), (code) => respond(joinError(code)));
      }
      m.protocols = oldProtocols;
    }
    if (g.state === 'CompletingRebalance' || g.state === 'Stable') {
      m.protocols = p.protocols;
      m.awaitingJoin = respond;
      this.maybePrepareRebalance(g);
      return this.maybeCompleteJoin(g);
    }
    this.updateMemberAndRebalance(g, m, p, respond);
  }

  // ---- rebalance phases ---------------------------------------------------------------------------

  protected maybePrepareRebalance(g: ClassicGroup): void {
    if (g.state === 'Stable' || g.state === 'CompletingRebalance' || g.state === 'Empty') this.prepareRebalance(g);
  }

  private prepareRebalance(g: ClassicGroup): void {
    if (g.state === 'CompletingRebalance') this.resetAssignments(g, ErrorCode.REBALANCE_IN_PROGRESS);
    this.timers.cancel(`sync:${g.groupId}`);
    g.pendingSync.clear();
    const rebalanceTimeoutMs = maxRebalanceTimeoutMs(g);
    const initial = g.state === 'Empty' && this.config.initialRebalanceDelayMs > 0;
    transition(g, 'PreparingRebalance', this.nowMs);
    if (initial) {
      const delayMs = Math.min(this.config.initialRebalanceDelayMs, rebalanceTimeoutMs);
      g.initialDelay = { remainingMs: Math.max(rebalanceTimeoutMs - this.config.initialRebalanceDelayMs, 0), newMemberAdded: false };
      this.timers.schedule(`join:${g.groupId}`, this.nowMs + delayMs, () => this.onInitialDelayExpired(g));
    } else {
      g.initialDelay = null;
      this.timers.schedule(`join:${g.groupId}`, this.nowMs + rebalanceTimeoutMs, () => this.completeJoin(g));
    }
  }

  private onInitialDelayExpired(g: ClassicGroup): void {
    const d = g.initialDelay;
    if (d && d.newMemberAdded && d.remainingMs > 0) {
      const delayMs = Math.min(this.config.initialRebalanceDelayMs, d.remainingMs);
      g.initialDelay = { remainingMs: Math.max(d.remainingMs - this.config.initialRebalanceDelayMs, 0), newMemberAdded: false };
      this.timers.schedule(`join:${g.groupId}`, this.nowMs + delayMs, () => this.onInitialDelayExpired(g));
      return;
    }
    this.completeJoin(g);
  }

  protected maybeCompleteJoin(g: ClassicGroup): void {
    if (g.state === 'PreparingRebalance' && g.initialDelay === null && allMembersJoined(g)) this.completeJoin(g);
  }

  private completeJoin(g: ClassicGroup): void {
    if (g.state !== 'PreparingRebalance') return;
    this.timers.cancel(`join:${g.groupId}`);
    g.initialDelay = null;
    for (const m of [...g.members.values()]) if (m.awaitingJoin === null) this.removeMember(g, m.memberId);
    g.generationId++;
    if (g.members.size === 0) {
      g.protocolName = null;
      transition(g, 'Empty', this.nowMs);
      this.emit(this.groupRecord(g));
      return;
    }
    g.protocolName = selectProtocol(g);
    transition(g, 'CompletingRebalance', this.nowMs);
    for (const m of g.members.values()) {
      const cb = m.awaitingJoin!;
      m.awaitingJoin = null;
      const answer = this.joinResponse(g, m);
      this.respond(() => cb(answer));
      this.scheduleSession(g, m);
      g.pendingSync.add(m.memberId);
    }
    const generation = g.generationId;
    this.timers.schedule(`sync:${g.groupId}`, this.nowMs + maxRebalanceTimeoutMs(g), () => this.expirePendingSync(g, generation));
  }

  /** Members that did not send SyncGroup within the rebalance timeout leave; the rest rebalance. */
  private expirePendingSync(g: ClassicGroup, generation: number): void {
    if (g.generationId !== generation || (g.state !== 'CompletingRebalance' && g.state !== 'Stable')) return;
    if (g.pendingSync.size === 0) return;
    for (const id of [...g.pendingSync]) this.removeMember(g, id);
    g.pendingSync.clear();
    this.prepareRebalance(g);
    this.maybeCompleteJoin(g);
  }

  private resetAssignments(g: ClassicGroup, errorCode: number): void {
    for (const m of g.members.values()) {
      m.assignment = Buffer.alloc(0);
      if (m.awaitingSync) { const cb = m.awaitingSync; m.awaitingSync = null; this.respond(() => cb(syncError(errorCode))); }
    }
  }

  /** Takes a member out of the group (no rebalance by itself). */
  protected removeMember(g: ClassicGroup, memberId: string): void {
    const m = g.members.get(memberId);
    if (!m) return;
    if (m.awaitingJoin) { const cb = m.awaitingJoin; this.respond(() => cb(joinError(ErrorCode.UNKNOWN_MEMBER_ID, memberId))); }
    if (m.awaitingSync) { const cb = m.awaitingSync; this.respond(() => cb(syncError(ErrorCode.UNKNOWN_MEMBER_ID))); }
    this.timers.cancel(`session:${g.groupId}:${memberId}`);
    g.members.delete(memberId);
    g.pendingSync.delete(memberId);
    if (m.groupInstanceId !== null && g.staticMembers.get(m.groupInstanceId) === memberId) g.staticMembers.delete(m.groupInstanceId);
    if (g.leaderId === memberId) g.leaderId = g.members.keys().next().value ?? null;
  }

  protected removeMemberAndRebalance(g: ClassicGroup, memberId: string): void {
    this.removeMember(g, memberId);
    if (g.state === 'Stable' || g.state === 'CompletingRebalance') this.prepareRebalance(g);
    this.maybeCompleteJoin(g);
  }

  protected scheduleSession(g: ClassicGroup, m: ClassicMember): void {
    const memberId = m.memberId;
    this.timers.schedule(`session:${g.groupId}:${memberId}`, this.nowMs + m.sessionTimeoutMs, () => this.expireSession(g, memberId));
  }

  private expireSession(g: ClassicGroup, memberId: string): void {
    const m = g.members.get(memberId);
    if (!m || this.groups.get(g.groupId) !== g) return;
    if (m.awaitingJoin || m.awaitingSync) return this.scheduleSession(g, m);
    this.removeMemberAndRebalance(g, memberId);
  }

  private expirePendingMember(g: ClassicGroup, memberId: string): void {
    if (!g.pendingMembers.delete(memberId)) return;
    this.maybeCompleteJoin(g);
  }

  // ---- SyncGroup, Heartbeat, LeaveGroup --------------------------------------------------------------

  classicSync(nowMs: number, p: SyncParams, respond: (r: SyncGroupResponse) => void): Effects {
    return this.run(nowMs, () => {
      const fail = (code: number) => this.respond(() => respond(syncError(code)));
      const g = this.groups.get(p.groupId);
      if (!g || g.kind !== 'classic') return fail(ErrorCode.UNKNOWN_MEMBER_ID);
      if (g.state === 'Dead') return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      const invalid = this.validateMember(g, p.memberId, p.groupInstanceId);
      if (invalid !== ErrorCode.NONE) return fail(invalid);
      if (p.generationId !== g.generationId) return fail(ErrorCode.ILLEGAL_GENERATION);
      const inconsistent = (a: string | null, b: string | null) => a !== null && b !== null && a !== b;
      if (inconsistent(p.protocolType, g.protocolType) || inconsistent(p.protocolName, g.protocolName)) return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
      const m = g.members.get(p.memberId)!;
      switch (g.state) {
        case 'Empty': return fail(ErrorCode.UNKNOWN_MEMBER_ID);
        case 'PreparingRebalance': return fail(ErrorCode.REBALANCE_IN_PROGRESS);
        case 'Stable': {
          g.pendingSync.delete(m.memberId);
          this.scheduleSession(g, m);
          const assignment = m.assignment;
          return this.respond(() => respond(this.syncResponse(g, assignment)));
        }
        case 'CompletingRebalance':
          g.pendingSync.delete(m.memberId);
          m.awaitingSync = respond;
          this.scheduleSession(g, m);
          if (g.leaderId === m.memberId) this.completeSync(g, p.assignments);
      }
    });
  }

  private syncResponse(g: ClassicGroup, assignment: Buffer): SyncGroupResponse {
    return { throttleTimeMs: 0, errorCode: 0, protocolType: g.protocolType, protocolName: g.protocolName, assignment };
  }

  /** The leader's assignment: persisted with the generation, then given to every member. */
  private completeSync(g: ClassicGroup, assignments: { memberId: string; assignment: Buffer }[]): void {
    const byMember = new Map<string, Buffer>();
    for (const a of assignments) if (g.members.has(a.memberId)) byMember.set(a.memberId, a.assignment);
    for (const m of g.members.values()) {
      m.assignment = byMember.get(m.memberId) ?? Buffer.alloc(0);
    }
    transition(g, 'Stable', this.nowMs);
    this.emit(this.groupRecord(g));
    const generation = g.generationId;
    for (const m of g.members.values()) {
      if (!m.awaitingSync) continue;
      const cb = m.awaitingSync;
      m.awaitingSync = null;
      const answer = this.syncResponse(g, m.assignment);
      this.respond(() => cb(answer), (code) => cb(syncError(code)));
    }
    if (g.pendingSync.size === 0) this.timers.cancel(`sync:${g.groupId}`);
    this.effects.onAppendFailure.push(() => {
      if (g.generationId !== generation || g.state !== 'Stable') return;
      for (const m of g.members.values()) m.assignment = Buffer.alloc(0);
      this.prepareRebalance(g);
      this.maybeCompleteJoin(g);
    });
  }

  classicHeartbeat(nowMs: number, p: { groupId: string; memberId: string; groupInstanceId: string | null; generationId: number }): { effects: Effects; errorCode: number } {
    let errorCode: number = ErrorCode.NONE;
    const effects = this.run(nowMs, () => {
      const g = this.groups.get(p.groupId);
      if (!g || g.kind !== 'classic') { errorCode = ErrorCode.UNKNOWN_MEMBER_ID; return; }
      if (g.state === 'Dead') { errorCode = ErrorCode.COORDINATOR_NOT_AVAILABLE; return; }
      errorCode = this.validateMember(g, p.memberId, p.groupInstanceId);
      if (errorCode !== ErrorCode.NONE) return;
      if (p.generationId !== g.generationId) { errorCode = ErrorCode.ILLEGAL_GENERATION; return; }
      if (g.state === 'Empty') { errorCode = ErrorCode.UNKNOWN_MEMBER_ID; return; }
      this.scheduleSession(g, g.members.get(p.memberId)!);
      if (g.state === 'PreparingRebalance') errorCode = ErrorCode.REBALANCE_IN_PROGRESS;
    });
    return { effects, errorCode };
  }

  /** LeaveGroup for a batch of members (v3+), or one member id (v0-2). Top-level error or per member. */
  classicLeave(nowMs: number, groupId: string, members: { memberId: string; groupInstanceId: string | null }[]): { effects: Effects; errorCode: number; results: number[] } {
    let errorCode: number = ErrorCode.NONE;
    const results: number[] = [];
    const effects = this.run(nowMs, () => {
      const g = this.groups.get(groupId);
      if (!g || g.kind !== 'classic') { errorCode = ErrorCode.UNKNOWN_MEMBER_ID; return; }
      if (g.state === 'Dead') { errorCode = ErrorCode.COORDINATOR_NOT_AVAILABLE; return; }
      for (const who of members) results.push(this.leaveOne(g, who));
    });
    return { effects, errorCode, results };
  }

  private leaveOne(g: ClassicGroup, who: { memberId: string; groupInstanceId: string | null }): number {
    if (who.groupInstanceId !== null) {
      const current = g.staticMembers.get(who.groupInstanceId);
      if (current === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
      if (who.memberId !== UNKNOWN_MEMBER && who.memberId !== current) return ErrorCode.FENCED_INSTANCE_ID;
      this.removeMemberAndRebalance(g, current);
      return ErrorCode.NONE;
    }
    if (g.pendingMembers.delete(who.memberId)) {
      this.timers.cancel(`session:${g.groupId}:${who.memberId}`);
      this.maybeCompleteJoin(g);
      return ErrorCode.NONE;
    }
    if (!g.members.has(who.memberId)) return ErrorCode.UNKNOWN_MEMBER_ID;
    this.removeMemberAndRebalance(g, who.memberId);
    return ErrorCode.NONE;
  }
}
