// KIP-848 consumer groups on the shard (Kafka's GroupMetadataManager, consumer protocol):
// ConsumerGroupHeartbeat drives membership, the group epoch and the target assignment (computed by
// a server-side assignor), and each member's reconciliation towards its target: partitions still
// owned by another member are held back until that member has revoked them (revoke before
// assign). Every change is a record; replay rebuilds the groups.
import { ErrorCode, type ConsumerGroupDescribeResponseDescribedGroup, type ConsumerGroupHeartbeatRequest, type ConsumerGroupHeartbeatResponse } from '../../protocol/index.js';
import type { ClientInfo, GroupShardContext } from './context.js';
import { consumerGroupState, newConsumerGroup, type ConsumerGroup, type ConsumerMember, type TopicPartitions } from './consumer-model.js';
import type { GroupRecord } from './records.js';
import { rangeAssign, uniformAssign, type AssignorMember } from './assignors.js';

/** The topics a heartbeat is computed against: one consistent metadata snapshot, as an input. */
export interface TopicsSnapshot {
  byName(name: string): { id: string; partitions: number } | undefined;
  nameOf(id: string): string | undefined;
  names(): Iterable<string>;
}

export type HeartbeatParams = Pick<ConsumerGroupHeartbeatRequest, 'groupId' | 'memberId' | 'memberEpoch' | 'instanceId' | 'rackId' | 'rebalanceTimeoutMs'
  | 'subscribedTopicNames' | 'subscribedTopicRegex' | 'serverAssignor' | 'topicPartitions'>;

const LEAVE_EPOCH = -1;
const STATIC_LEAVE_EPOCH = -2;

function heartbeatError(errorCode: number, errorMessage: string | null = null): ConsumerGroupHeartbeatResponse {
  return { throttleTimeMs: 0, errorCode, errorMessage, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null };
}

const samePartitions = (a: TopicPartitions, b: TopicPartitions) =>
  a.size === b.size && [...a].every(([t, ps]) => { const o = b.get(t); return o !== undefined && o.length === ps.length && ps.every((p, i) => o[i] === p); });
const has = (tp: TopicPartitions, topic: string, p: number) => tp.get(topic)?.includes(p) ?? false;
function addTo(tp: TopicPartitions, topic: string, p: number): void {
  const list = tp.get(topic);
  if (list) { list.push(p); list.sort((x, y) => x - y); } else tp.set(topic, [p]);
}
function* each(tp: TopicPartitions): Generator<[string, number]> { for (const [t, ps] of tp) for (const p of ps) yield [t, p]; }
/**
 * A SubscribedTopicRegex as a matcher of whole topic names. Internal topics never match: a `.*`
 * subscriber must not be assigned the group and transaction logs (the Java consumer's
 * exclude.internal.topics does the same for client-side patterns).
 */
function regexMatcher(pattern: string | null): ((name: string) => boolean) | null {
  if (pattern === null) return null;
  try { const re = new RegExp(`^(?:${pattern})$`); return (n) => !INTERNAL_TOPICS.has(n) && re.test(n); } catch { return null; }
}
const INTERNAL_TOPICS = new Set(['__consumer_offsets', '__transaction_state']);

const toList = (tp: TopicPartitions) => [...tp].map(([topicId, partitions]) => ({ topicId, partitions }));
const fromList = (list: { topicId: string; partitions: number[] }[]): TopicPartitions =>
  new Map(list.map((x) => [x.topicId, [...x.partitions].sort((a, b) => a - b)]));

export class ConsumerGroups {
  constructor(private readonly ctx: GroupShardContext) {}

  private consumerGroup(groupId: string, create: boolean): ConsumerGroup | undefined {
    const g = this.ctx.groups.get(groupId);
    if (g?.kind === 'consumer') return g;
    if (!create) return undefined;
    const fresh = newConsumerGroup(groupId);
    this.ctx.groups.set(groupId, fresh);
    return fresh;
  }

  /** A consumer-group record (any but offsets and GroupMetadata). */
  replay(r: GroupRecord): void {
    switch (r.type) {
      case 'consumer-group': {
        if (r.value === null) {
          const g = this.consumerGroup(r.group, false);
          if (g) { g.dead = true; this.ctx.groups.delete(r.group); }
          return;
        }
        this.consumerGroup(r.group, true)!.groupEpoch = r.value.epoch;
        return;
      }
      case 'consumer-partition-metadata': {
        const g = this.consumerGroup(r.group, r.value !== null);
        if (g) g.subscriptionMetadata = new Map((r.value?.topics ?? []).map((t) => [t.topicId, { name: t.topicName, partitions: t.numPartitions }]));
        return;
      }
      case 'consumer-member': return this.replayMemberMetadata(r);
      case 'consumer-target-metadata': {
        const g = this.consumerGroup(r.group, r.value !== null);
        if (g) g.assignmentEpoch = r.value?.assignmentEpoch ?? 0;
        return;
      }
      case 'consumer-target-member': {
        const g = this.consumerGroup(r.group, r.value !== null);
        if (!g) return;
        if (r.value === null) g.targetAssignment.delete(r.memberId);
        else g.targetAssignment.set(r.memberId, fromList(r.value.topicPartitions));
        return;
      }
      case 'consumer-current-member': {
        const g = this.consumerGroup(r.group, r.value !== null);
        const m = g?.members.get(r.memberId);
        if (!m || r.value === null) return;
        m.memberEpoch = r.value.memberEpoch;
        m.previousMemberEpoch = r.value.previousMemberEpoch;
        m.state = r.value.state as 0 | 1 | 2;
        m.assigned = fromList(r.value.assignedPartitions);
        m.pendingRevocation = fromList(r.value.partitionsPendingRevocation);
        return;
      }
      default: return;
    }
  }

  private replayMemberMetadata(r: Extract<GroupRecord, { type: 'consumer-member' }>): void {
    const g = this.consumerGroup(r.group, r.value !== null);
    if (!g) return;
    if (r.value === null) { g.members.delete(r.memberId); return; }
    const v = r.value;
    const existing = g.members.get(r.memberId);
    const m: ConsumerMember = existing ?? {
      memberId: r.memberId, memberEpoch: 0, previousMemberEpoch: 0, state: 0, instanceId: null, rackId: null, clientId: '', clientHost: '',
      subscribedTopicNames: [], subscribedTopicRegex: null, rebalanceTimeoutMs: -1, serverAssignor: null, assigned: new Map(), pendingRevocation: new Map(),
    };
    m.instanceId = v.instanceId;
    m.rackId = v.rackId;
    m.clientId = v.clientId;
    m.clientHost = v.clientHost;
    m.subscribedTopicNames = v.subscribedTopicNames;
    m.subscribedTopicRegex = v.subscribedTopicRegex;
    m.rebalanceTimeoutMs = v.rebalanceTimeoutMs;
    m.serverAssignor = v.serverAssignor;
    g.members.set(r.memberId, m);
  }

  /** Kafka's deletion order: assignments first, the group epoch last. */
  emitTombstones(g: ConsumerGroup): void {
    g.dead = true;
    for (const id of g.members.keys()) this.ctx.emit({ type: 'consumer-current-member', group: g.groupId, memberId: id, value: null });
    for (const id of g.targetAssignment.keys()) this.ctx.emit({ type: 'consumer-target-member', group: g.groupId, memberId: id, value: null });
    this.ctx.emit({ type: 'consumer-target-metadata', group: g.groupId, value: null });
    for (const id of g.members.keys()) this.ctx.emit({ type: 'consumer-member', group: g.groupId, memberId: id, value: null });
    this.ctx.emit({ type: 'consumer-partition-metadata', group: g.groupId, value: null });
    this.ctx.emit({ type: 'consumer-group', group: g.groupId, value: null });
  }

  private currentAssignmentRecord(g: ConsumerGroup, m: ConsumerMember): GroupRecord {
    return {
      type: 'consumer-current-member', group: g.groupId, memberId: m.memberId,
      value: { memberEpoch: m.memberEpoch, previousMemberEpoch: m.previousMemberEpoch, state: m.state, assignedPartitions: toList(m.assigned), partitionsPendingRevocation: toList(m.pendingRevocation) },
    };
  }

  // ---- ConsumerGroupHeartbeat ----------------------------------------------------------------------

  heartbeat(p: HeartbeatParams, client: ClientInfo, topics: TopicsSnapshot, respond: (r: ConsumerGroupHeartbeatResponse) => void): void {
    const fail = (code: number, message: string | null = null) => this.ctx.respond(() => respond(heartbeatError(code, message)));
    const invalid = this.validateHeartbeat(p, client.apiVersion);
    if (invalid) return fail(invalid.code, invalid.message);
    const existing = this.ctx.groups.get(p.groupId);
    if (existing?.kind === 'classic') {
      if (existing.state !== 'Empty' && existing.state !== 'Dead') return fail(ErrorCode.GROUP_ID_NOT_FOUND, `${p.groupId} is a classic group`);
      if (p.memberEpoch !== 0) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
      // Upgrade of an empty classic group: its offsets stay, its metadata goes.
      this.ctx.emitAndApply({ type: 'group', group: p.groupId, value: null });
    }
    if (p.memberEpoch === LEAVE_EPOCH || p.memberEpoch === STATIC_LEAVE_EPOCH) return this.consumerLeave(p, respond);
    const g = this.consumerGroup(p.groupId, false);
    if (!g && p.memberEpoch !== 0) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
    const group = g ?? this.createConsumerGroup(p.groupId);
    const member = this.resolveMember(group, p, client);
    if (typeof member === 'number') return fail(member);
    this.consumerMemberHeartbeat(group, member, p, client, topics, respond);
  }

  private validateHeartbeat(p: HeartbeatParams, apiVersion: number): { code: number; message: string } | null {
    const bad = (message: string) => ({ code: ErrorCode.INVALID_REQUEST, message });
    if (!p.groupId) return { code: ErrorCode.INVALID_GROUP_ID, message: 'GroupId can\'t be empty.' };
    if (p.memberEpoch === 0) {
      if (apiVersion >= 1 && !p.memberId) return bad('MemberId can\'t be empty.');
      if (p.rebalanceTimeoutMs === -1) return bad('RebalanceTimeoutMs must be provided in first request.');
      if (p.topicPartitions === null || p.topicPartitions.length > 0) return bad('TopicPartitions must be empty when (re-)joining.');
      if (p.subscribedTopicNames === null && p.subscribedTopicRegex === null) return bad('SubscribedTopicNames or SubscribedTopicRegex must be set in first request.');
    } else if (!p.memberId) {
      return bad('MemberId can\'t be empty.');
    } else if (p.memberEpoch < STATIC_LEAVE_EPOCH) {
      return bad(`MemberEpoch is invalid: ${p.memberEpoch}`);
    }
    if (p.memberEpoch === STATIC_LEAVE_EPOCH && p.instanceId === null) return bad('InstanceId can\'t be null.');
    if (p.subscribedTopicRegex !== null && regexMatcher(p.subscribedTopicRegex) === null) return { code: ErrorCode.INVALID_REGULAR_EXPRESSION, message: `SubscribedTopicRegex ${p.subscribedTopicRegex} is not a valid regular expression.` };
    if (p.serverAssignor !== null && !this.ctx.config.consumerAssignors.includes(p.serverAssignor)) {
      return { code: ErrorCode.UNSUPPORTED_ASSIGNOR, message: `ServerAssignor ${p.serverAssignor} is not supported. Supported assignors: ${this.ctx.config.consumerAssignors.join(', ')}.` };
    }
    return null;
  }

  private createConsumerGroup(groupId: string): ConsumerGroup {
    this.ctx.emitAndApply({ type: 'consumer-group', group: groupId, value: { epoch: 0 } });
    return this.consumerGroup(groupId, false)!;
  }

  /** The member a heartbeat speaks for: a new one (epoch 0), a static member taking over its slot, or an existing one. */
  private resolveMember(g: ConsumerGroup, p: HeartbeatParams, client: ClientInfo): ConsumerMember | number {
    if (p.memberEpoch === 0) {
      // Kafka accepts the client's id from v1; before, we make one (a UUID like Kafka's).
      const memberId = p.memberId || this.ctx.uuid();
      const current = g.members.get(memberId);
      if (current) return current; // a rejoin with epoch 0 resets the member below
      if (p.instanceId !== null) {
        const previous = [...g.members.values()].find((m) => m.instanceId === p.instanceId);
        if (previous && previous.memberEpoch !== STATIC_LEAVE_EPOCH) return ErrorCode.UNRELEASED_INSTANCE_ID;
        if (previous) return this.replaceStaticMember(g, previous, memberId);
      }
      if (g.members.size >= this.ctx.config.consumerGroupMaxSize) return ErrorCode.GROUP_MAX_SIZE_REACHED;
      return {
        memberId, memberEpoch: 0, previousMemberEpoch: -1, state: 0, instanceId: p.instanceId, rackId: p.rackId, clientId: client.clientId, clientHost: client.clientHost,
        subscribedTopicNames: [], subscribedTopicRegex: null, rebalanceTimeoutMs: p.rebalanceTimeoutMs, serverAssignor: p.serverAssignor, assigned: new Map(), pendingRevocation: new Map(),
      };
    }
    const m = g.members.get(p.memberId);
    if (!m) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (p.instanceId !== null && m.instanceId !== p.instanceId) return ErrorCode.FENCED_INSTANCE_ID;
    if (p.memberEpoch !== m.memberEpoch) {
      // The member may have missed our last answer: its previous epoch with a subset of what it owns is fine.
      const owned = p.topicPartitions === null ? null : new Map(p.topicPartitions.map((t) => [t.topicId, t.partitions]));
      const subset = owned !== null && [...owned].every(([t, ps]) => ps.every((x) => has(m.assigned, t, x)));
      if (!(p.memberEpoch === m.previousMemberEpoch && subset)) return ErrorCode.FENCED_MEMBER_EPOCH;
    }
    return m;
  }

  /** The new member id inherits the static member's target, assignment and epoch: no rebalance. */
  private replaceStaticMember(g: ConsumerGroup, previous: ConsumerMember, memberId: string): ConsumerMember {
    const target = g.targetAssignment.get(previous.memberId);
    this.removeConsumerMember(g, previous.memberId, false);
    const m: ConsumerMember = { ...previous, memberId, memberEpoch: previous.previousMemberEpoch, state: 0, assigned: new Map(previous.assigned), pendingRevocation: new Map() };
    this.ctx.emitAndApply(this.memberMetadataRecord(g, m));
    if (target) this.ctx.emitAndApply({ type: 'consumer-target-member', group: g.groupId, memberId, value: { topicPartitions: [...target].map(([topicId, partitions]) => ({ topicId, partitions })) } });
    this.ctx.emitAndApply(this.currentAssignmentRecord(g, m));
    return g.members.get(memberId)!;
  }

  private consumerMemberHeartbeat(g: ConsumerGroup, member: ConsumerMember, p: HeartbeatParams, client: ClientInfo, topics: TopicsSnapshot, respond: (r: ConsumerGroupHeartbeatResponse) => void): void {
    const isNew = !g.members.has(member.memberId);
    const joining = p.memberEpoch === 0;
    const updated: ConsumerMember = {
      ...member,
      instanceId: p.instanceId ?? member.instanceId, rackId: p.rackId ?? member.rackId, clientId: client.clientId, clientHost: client.clientHost,
      subscribedTopicNames: p.subscribedTopicNames ?? member.subscribedTopicNames,
      subscribedTopicRegex: p.subscribedTopicRegex !== null ? (p.subscribedTopicRegex === '' ? null : p.subscribedTopicRegex) : member.subscribedTopicRegex,
      rebalanceTimeoutMs: p.rebalanceTimeoutMs !== -1 ? p.rebalanceTimeoutMs : member.rebalanceTimeoutMs,
      serverAssignor: p.serverAssignor ?? member.serverAssignor,
    };
    const subscriptionChanged = isNew || updated.subscribedTopicRegex !== member.subscribedTopicRegex
      || updated.subscribedTopicNames.join('\0') !== member.subscribedTopicNames.join('\0');
    const metadataChanged = subscriptionChanged || updated.rackId !== member.rackId || updated.clientId !== member.clientId
      || updated.instanceId !== member.instanceId || updated.rebalanceTimeoutMs !== member.rebalanceTimeoutMs || updated.serverAssignor !== member.serverAssignor;
    if (metadataChanged) this.ctx.emitAndApply(this.memberMetadataRecord(g, updated));
    const current = g.members.get(updated.memberId)!;
    if (joining && !isNew && current.memberEpoch > 0 && current.instanceId === null) {
      // A known dynamic member joining again has lost its partitions: it starts over.
      this.ctx.emitAndApply(this.currentAssignmentRecord(g, { ...current, memberEpoch: 0, previousMemberEpoch: current.memberEpoch, state: 0, assigned: new Map(), pendingRevocation: new Map() }));
    }
    const subscribed = this.subscriptionMetadata(g, topics);
    if (subscriptionChanged || !this.sameSubscriptionMetadata(g, subscribed)) {
      if (!this.sameSubscriptionMetadata(g, subscribed)) {
        this.ctx.emitAndApply({ type: 'consumer-partition-metadata', group: g.groupId, value: { topics: [...subscribed].map(([topicId, t]) => ({ topicId, topicName: t.name, numPartitions: t.partitions, partitionMetadata: [] })) } });
      }
      this.ctx.emitAndApply({ type: 'consumer-group', group: g.groupId, value: { epoch: g.groupEpoch + 1 } });
      this.ctx.stats.consumerRebalances++;
    }
    if (g.assignmentEpoch < g.groupEpoch) this.computeTargetAssignment(g, topics);
    const before = new Map(current.assigned);
    const owned = p.topicPartitions === null ? null : new Map(p.topicPartitions.map((t) => [t.topicId, [...t.partitions].sort((a, b) => a - b)]));
    this.reconcile(g, current, owned);
    this.scheduleConsumerSession(g, current.memberId);
    const sendAssignment = joining || !samePartitions(before, current.assigned) || (owned !== null && !samePartitions(owned, current.assigned));
    const answer: ConsumerGroupHeartbeatResponse = {
      throttleTimeMs: 0, errorCode: 0, errorMessage: null, memberId: current.memberId, memberEpoch: current.memberEpoch,
      heartbeatIntervalMs: this.ctx.config.consumerHeartbeatIntervalMs,
      assignment: sendAssignment ? { topicPartitions: [...current.assigned].map(([topicId, partitions]) => ({ topicId, partitions })) } : null,
    };
    this.ctx.respond(() => respond(answer), (code) => respond(heartbeatError(code)));
  }

  private memberMetadataRecord(g: ConsumerGroup, m: ConsumerMember): GroupRecord {
    return {
      type: 'consumer-member', group: g.groupId, memberId: m.memberId,
      value: {
        instanceId: m.instanceId, rackId: m.rackId, clientId: m.clientId, clientHost: m.clientHost, subscribedTopicNames: m.subscribedTopicNames,
        subscribedTopicRegex: m.subscribedTopicRegex, rebalanceTimeoutMs: m.rebalanceTimeoutMs, serverAssignor: m.serverAssignor, classicMemberMetadata: null,
      },
    };
  }

  /** Topics (id → name, partitions) any member subscribes to, by name or regex, that exist now. */
  private subscriptionMetadata(g: ConsumerGroup, topics: TopicsSnapshot): Map<string, { name: string; partitions: number }> {
    const names = new Set<string>();
    for (const m of g.members.values()) {
      for (const n of m.subscribedTopicNames) names.add(n);
      const match = regexMatcher(m.subscribedTopicRegex);
      if (match) for (const n of topics.names()) if (match(n)) names.add(n);
    }
    const out = new Map<string, { name: string; partitions: number }>();
    for (const n of [...names].sort()) { const t = topics.byName(n); if (t) out.set(t.id, { name: n, partitions: t.partitions }); }
    return out;
  }

  private sameSubscriptionMetadata(g: ConsumerGroup, next: Map<string, { name: string; partitions: number }>): boolean {
    const cur = g.subscriptionMetadata;
    return cur.size === next.size && [...next].every(([id, t]) => cur.get(id)?.partitions === t.partitions && cur.get(id)?.name === t.name);
  }

  /** The server-side assignor's target for the group epoch, written as target records. */
  private computeTargetAssignment(g: ConsumerGroup, topics: TopicsSnapshot): void {
    const assignorName = this.groupAssignor(g);
    const members: AssignorMember[] = [...g.members.values()].filter((m) => m.memberEpoch !== STATIC_LEAVE_EPOCH || m.instanceId !== null).map((m) => {
      const match = regexMatcher(m.subscribedTopicRegex);
      const ids = [...g.subscriptionMetadata].filter(([, t]) => m.subscribedTopicNames.includes(t.name) || (match !== null && match(t.name))).map(([id]) => id);
      return { memberId: m.memberId, subscribedTopicIds: ids, currentAssignment: g.targetAssignment.get(m.memberId) ?? new Map(), rackId: m.rackId };
    });
    const partitionCounts = new Map([...g.subscriptionMetadata].map(([id, t]) => [id, topics.byName(t.name)?.partitions ?? t.partitions]));
    const out = (assignorName === 'range' ? rangeAssign : uniformAssign)({ members, partitionCounts });
    for (const [memberId, assignment] of out) {
      if (samePartitions(g.targetAssignment.get(memberId) ?? new Map(), assignment) && g.targetAssignment.has(memberId)) continue;
      this.ctx.emitAndApply({ type: 'consumer-target-member', group: g.groupId, memberId, value: { topicPartitions: [...assignment].map(([topicId, partitions]) => ({ topicId, partitions })) } });
    }
    this.ctx.emitAndApply({ type: 'consumer-target-metadata', group: g.groupId, value: { assignmentEpoch: g.groupEpoch } });
  }

  /** The assignor most members asked for (ties: the configured order), else the default. */
  private groupAssignor(g: ConsumerGroup): string {
    const votes = new Map<string, number>();
    for (const m of g.members.values()) if (m.serverAssignor) votes.set(m.serverAssignor, (votes.get(m.serverAssignor) ?? 0) + 1);
    let best = this.ctx.config.consumerAssignors[0]!;
    for (const a of this.ctx.config.consumerAssignors) if ((votes.get(a) ?? 0) > (votes.get(best) ?? 0)) best = a;
    return best;
  }

  /**
   * Moves a member towards its target (Kafka's CurrentAssignmentBuilder): first it must revoke what
   * it owns outside the target (its epoch stays until it confirms); then it gets the target at the
   * assignment epoch, except partitions another member still holds, which come later.
   */
  private reconcile(g: ConsumerGroup, m: ConsumerMember, owned: TopicPartitions | null): void {
    const target = g.targetAssignment.get(m.memberId) ?? new Map<string, number[]>();
    const epoch = g.assignmentEpoch;
    if (m.state === 1) {
      const stillOwned = owned === null || [...each(m.pendingRevocation)].some(([t, p]) => has(owned, t, p));
      if (stillOwned) return;
      m.pendingRevocation = new Map();
      this.ctx.timers.cancel(`consumer-revocation:${g.groupId}:${m.memberId}`);
    } else if (m.memberEpoch === epoch && m.state === 0) {
      return;
    }
    const keep = new Map<string, number[]>();
    const revoke = new Map<string, number[]>();
    for (const [t, p] of each(m.assigned)) addTo(has(target, t, p) ? keep : revoke, t, p);
    let next: Pick<ConsumerMember, 'memberEpoch' | 'previousMemberEpoch' | 'state' | 'assigned' | 'pendingRevocation'>;
    if (revoke.size > 0) {
      next = { memberEpoch: m.memberEpoch, previousMemberEpoch: m.previousMemberEpoch, state: 1, assigned: keep, pendingRevocation: revoke };
      const memberId = m.memberId;
      this.ctx.timers.schedule(`consumer-revocation:${g.groupId}:${memberId}`, this.ctx.nowMs + Math.max(m.rebalanceTimeoutMs, 0), () => this.fenceConsumerMember(g.groupId, memberId));
    } else {
      const assigned = new Map([...keep].map(([t, ps]) => [t, [...ps]]));
      let unreleased = false;
      for (const [t, p] of each(target)) {
        if (has(assigned, t, p)) continue;
        if (this.heldByOther(g, m.memberId, t, p)) unreleased = true;
        else addTo(assigned, t, p);
      }
      next = { memberEpoch: epoch, previousMemberEpoch: m.memberEpoch, state: unreleased ? 2 : 0, assigned, pendingRevocation: new Map() };
    }
    const changed = next.memberEpoch !== m.memberEpoch || next.state !== m.state || !samePartitions(next.assigned, m.assigned) || !samePartitions(next.pendingRevocation, m.pendingRevocation);
    if (changed) this.ctx.emitAndApply(this.currentAssignmentRecord(g, { ...m, ...next }));
  }

  private heldByOther(g: ConsumerGroup, memberId: string, topic: string, p: number): boolean {
    for (const o of g.members.values()) {
      if (o.memberId === memberId) continue;
      if (has(o.assigned, topic, p) || has(o.pendingRevocation, topic, p)) return true;
    }
    return false;
  }

  private consumerLeave(p: HeartbeatParams, respond: (r: ConsumerGroupHeartbeatResponse) => void): void {
    const g = this.consumerGroup(p.groupId, false);
    const m = g?.members.get(p.memberId);
    if (!g || !m) return this.ctx.respond(() => respond(heartbeatError(ErrorCode.UNKNOWN_MEMBER_ID)));
    if (p.memberEpoch === STATIC_LEAVE_EPOCH) {
      // A static member that will come back keeps its partitions until its session expires.
      this.ctx.emitAndApply(this.currentAssignmentRecord(g, { ...m, memberEpoch: STATIC_LEAVE_EPOCH, previousMemberEpoch: m.memberEpoch }));
      this.scheduleConsumerSession(g, m.memberId);
    } else {
      this.removeConsumerMember(g, m.memberId, true);
    }
    const answer: ConsumerGroupHeartbeatResponse = { throttleTimeMs: 0, errorCode: 0, errorMessage: null, memberId: p.memberId, memberEpoch: p.memberEpoch, heartbeatIntervalMs: 0, assignment: null };
    this.ctx.respond(() => respond(answer));
  }

  /** Tombstones for a member; a bump of the group epoch so the others get its partitions. */
  private removeConsumerMember(g: ConsumerGroup, memberId: string, bumpEpoch: boolean): void {
    this.ctx.timers.cancel(`consumer-session:${g.groupId}:${memberId}`);
    this.ctx.timers.cancel(`consumer-revocation:${g.groupId}:${memberId}`);
    this.ctx.emitAndApply({ type: 'consumer-current-member', group: g.groupId, memberId, value: null });
    this.ctx.emitAndApply({ type: 'consumer-target-member', group: g.groupId, memberId, value: null });
    this.ctx.emitAndApply({ type: 'consumer-member', group: g.groupId, memberId, value: null });
    if (bumpEpoch) {
      this.ctx.emitAndApply({ type: 'consumer-group', group: g.groupId, value: { epoch: g.groupEpoch + 1 } });
      this.ctx.stats.consumerRebalances++;
    }
  }

  private scheduleConsumerSession(g: ConsumerGroup, memberId: string): void {
    this.ctx.timers.schedule(`consumer-session:${g.groupId}:${memberId}`, this.ctx.nowMs + this.ctx.config.consumerSessionTimeoutMs, () => this.fenceConsumerMember(g.groupId, memberId));
  }

  /** Session or revocation timeout: the member is removed and its partitions go to the others. */
  private fenceConsumerMember(groupId: string, memberId: string): void {
    const g = this.consumerGroup(groupId, false);
    if (!g || !g.members.has(memberId)) return;
    this.removeConsumerMember(g, memberId, true);
  }

  /** After loading: every member's session restarts from now. */
  onLoaded(g: ConsumerGroup): void {
    for (const m of g.members.values()) this.scheduleConsumerSession(g, m.memberId);
  }

  /** A classic JoinGroup for an empty consumer group: the group goes (its offsets stay) and becomes classic. */
  maybeDowngradeEmptyGroup(g: ConsumerGroup): boolean {
    if (g.members.size > 0) return false;
    this.emitTombstones(g);
    this.ctx.groups.delete(g.groupId);
    return true;
  }

  // ---- ConsumerGroupDescribe ----------------------------------------------------------------------

  describe(groupId: string, topics: TopicsSnapshot): Omit<ConsumerGroupDescribeResponseDescribedGroup, 'authorizedOperations'> {
    const g = this.ctx.groups.get(groupId);
    const list = (tp: TopicPartitions) => ({ topicPartitions: [...tp].map(([topicId, partitions]) => ({ topicId, topicName: topics.nameOf(topicId) ?? '', partitions })) });
    if (!g) return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${groupId} not found.`, groupId, groupState: 'Dead', groupEpoch: -1, assignmentEpoch: -1, assignorName: '', members: [] };
    if (g.kind !== 'consumer') return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${groupId} is not a consumer group.`, groupId, groupState: 'Dead', groupEpoch: -1, assignmentEpoch: -1, assignorName: '', members: [] };
    return {
      errorCode: 0, errorMessage: null, groupId, groupState: consumerGroupState(g), groupEpoch: g.groupEpoch,
      assignmentEpoch: g.assignmentEpoch, assignorName: this.groupAssignor(g),
      members: [...g.members.values()].map((m) => ({
        memberId: m.memberId, instanceId: m.instanceId, rackId: m.rackId, memberEpoch: m.memberEpoch, clientId: m.clientId, clientHost: m.clientHost,
        subscribedTopicNames: m.subscribedTopicNames, subscribedTopicRegex: m.subscribedTopicRegex,
        assignment: list(m.assigned), targetAssignment: list(g.targetAssignment.get(m.memberId) ?? new Map()),
      })),
    };
  }

  validateCommit(g: ConsumerGroup, memberId: string, memberEpoch: number): number {
    if (g.dead) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (memberEpoch < 0 && memberId === '') return g.members.size === 0 ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
    const m = g.members.get(memberId);
    if (!m) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (memberEpoch > m.memberEpoch) return ErrorCode.FENCED_MEMBER_EPOCH;
    if (memberEpoch < m.memberEpoch) return ErrorCode.STALE_MEMBER_EPOCH;
    return ErrorCode.NONE;
  }

  validateFetch(g: ConsumerGroup, memberId: string, memberEpoch: number): number {
    const m = g.members.get(memberId);
    if (!m) return ErrorCode.UNKNOWN_MEMBER_ID;
    return memberEpoch !== m.memberEpoch ? ErrorCode.STALE_MEMBER_EPOCH : ErrorCode.NONE;
  }
}
