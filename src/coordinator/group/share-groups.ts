// Share groups (KIP-932) on the group shard, as Kafka's GroupMetadataManager keeps them: in the
// same namespace as classic and consumer groups (a group id is one kind of group), with
// KIP-848-style heartbeats. ShareGroupHeartbeat joins (epoch 0), heartbeats and leaves (-1); the
// group epoch bumps when membership, subscriptions or the subscribed topics' partitions change;
// the target assignment is computed at that epoch by the simple assignor, where several members
// may share a partition. A member takes its target at once: there is nothing to revoke first,
// since the share-partition leaders keep the records of a shared partition apart. Every change is
// a record in `__consumer_offsets` (Kafka's ShareGroup* records); replay rebuilds the groups.
import { ErrorCode, type ShareGroupDescribeResponseDescribedGroup, type ShareGroupHeartbeatRequest, type ShareGroupHeartbeatResponse } from '../../protocol/index.js';
import type { ClientInfo, GroupShardContext } from './context.js';
import type { TopicPartitions } from './consumer-model.js';
import { shareGroupState, type ShareGroup, type ShareMember } from './share-model.js';

export { shareGroupState, type ShareGroup, type ShareMember, type ShareGroupState } from './share-model.js';
import type { TopicsSnapshot } from './consumer.js';
import type { GroupRecord } from './records.js';

export type ShareHeartbeatParams = Pick<ShareGroupHeartbeatRequest, 'groupId' | 'memberId' | 'memberEpoch' | 'rackId' | 'subscribedTopicNames'> & {
  /** The group's share.session.timeout.ms and share.heartbeat.interval.ms, when set (group configs over the broker's group.share.* keys). */
  overrides?: { sessionTimeoutMs?: number; heartbeatIntervalMs?: number };
};

const LEAVE_EPOCH = -1;
export const SHARE_ASSIGNOR = 'simple';

/**
 * Kafka's simple assignor for share groups, per topic: with no more subscribers than partitions
 * each partition goes to one member, round robin over the sorted member ids; with more, every
 * member gets one partition and the partitions are shared as evenly as they go round.
 */
export function simpleShareAssign(members: { memberId: string; topicIds: string[] }[], partitionCounts: ReadonlyMap<string, number>): Map<string, TopicPartitions> {
  const out = new Map<string, TopicPartitions>(members.map((m) => [m.memberId, new Map()]));
  for (const [topicId, count] of [...partitionCounts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const subs = members.filter((m) => m.topicIds.includes(topicId)).map((m) => m.memberId).sort();
    if (subs.length === 0 || count === 0) continue;
    const give = (memberId: string, p: number) => {
      const tp = out.get(memberId)!;
      const list = tp.get(topicId) ?? [];
      if (!list.includes(p)) list.push(p);
      tp.set(topicId, list.sort((a, b) => a - b));
    };
    if (subs.length <= count) for (let p = 0; p < count; p++) give(subs[p % subs.length]!, p);
    else subs.forEach((m, i) => give(m, i % count));
  }
  return out;
}

const samePartitions = (a: TopicPartitions, b: TopicPartitions) =>
  a.size === b.size && [...a].every(([t, ps]) => { const o = b.get(t); return o !== undefined && o.length === ps.length && ps.every((p, i) => o[i] === p); });
const toList = (tp: TopicPartitions) => [...tp].map(([topicId, partitions]) => ({ topicId, partitions }));
const fromList = (list: { topicId: string; partitions: number[] }[]): TopicPartitions => new Map(list.map((x) => [x.topicId, [...x.partitions].sort((a, b) => a - b)]));

function heartbeatError(errorCode: number, errorMessage: string | null = null): ShareGroupHeartbeatResponse {
  return { throttleTimeMs: 0, errorCode, errorMessage, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null };
}

export interface ShareGroupConfig { sessionTimeoutMs: number; heartbeatIntervalMs: number; maxSize: number }

export class ShareGroups {
  constructor(private readonly ctx: GroupShardContext, private readonly config: () => ShareGroupConfig) {}

  private shareGroup(groupId: string, create: boolean): ShareGroup | undefined {
    const g = this.ctx.groups.get(groupId);
    if (g?.kind === 'share') return g;
    if (!create || g !== undefined) return undefined;
    const fresh: ShareGroup = { kind: 'share', groupId, groupEpoch: 0, assignmentEpoch: 0, members: new Map(), targetAssignment: new Map(), subscriptionMetadata: new Map(), initializedTopics: new Map(), dead: false };
    this.ctx.groups.set(groupId, fresh);
    return fresh;
  }

  replay(r: GroupRecord): void {
    switch (r.type) {
      case 'share-group': {
        if (r.value === null) {
          const g = this.shareGroup(r.group, false);
          if (g) { g.dead = true; this.ctx.groups.delete(r.group); }
          return;
        }
        const g = this.shareGroup(r.group, true);
        if (g) g.groupEpoch = r.value.epoch;
        return;
      }
      case 'share-partition-metadata': {
        const g = this.shareGroup(r.group, false);
        if (g) g.subscriptionMetadata = new Map((r.value?.topics ?? []).map((t) => [t.topicId, { name: t.topicName, partitions: t.numPartitions }]));
        return;
      }
      case 'share-member': {
        const g = this.shareGroup(r.group, false);
        if (!g) return;
        if (r.value === null) { g.members.delete(r.memberId); return; }
        const m = g.members.get(r.memberId) ?? { memberId: r.memberId, memberEpoch: 0, previousMemberEpoch: -1, rackId: null, clientId: '', clientHost: '', subscribedTopicNames: [], assigned: new Map() };
        m.rackId = r.value.rackId;
        m.clientId = r.value.clientId;
        m.clientHost = r.value.clientHost;
        m.subscribedTopicNames = r.value.subscribedTopicNames;
        g.members.set(r.memberId, m);
        return;
      }
      case 'share-target-metadata': {
        const g = this.shareGroup(r.group, false);
        if (g) g.assignmentEpoch = r.value?.assignmentEpoch ?? 0;
        return;
      }
      case 'share-target-member': {
        const g = this.shareGroup(r.group, false);
        if (!g) return;
        if (r.value === null) g.targetAssignment.delete(r.memberId);
        else g.targetAssignment.set(r.memberId, fromList(r.value.topicPartitions));
        return;
      }
      case 'share-state-metadata': {
        const g = this.shareGroup(r.group, false);
        if (g) g.initializedTopics = new Map((r.value?.initializedTopics ?? []).map((t) => [t.topicId, { name: t.topicName, partitions: [...t.partitions].sort((a, b) => a - b) }]));
        return;
      }
      case 'share-current-member': {
        const m = this.shareGroup(r.group, false)?.members.get(r.memberId);
        if (!m || r.value === null) return;
        m.memberEpoch = r.value.memberEpoch;
        m.previousMemberEpoch = r.value.previousMemberEpoch;
        m.assigned = fromList(r.value.assignedPartitions);
        return;
      }
      default: return;
    }
  }

  heartbeat(p: ShareHeartbeatParams, client: ClientInfo, topics: TopicsSnapshot, respond: (r: ShareGroupHeartbeatResponse) => void): void {
    const fail = (code: number, message: string | null = null) => this.ctx.respond(() => respond(heartbeatError(code, message)));
    if (!p.groupId) return fail(ErrorCode.INVALID_GROUP_ID, 'GroupId can\'t be empty.');
    if (!p.memberId) return fail(ErrorCode.INVALID_REQUEST, 'MemberId can\'t be empty.');
    if (p.memberEpoch < LEAVE_EPOCH) return fail(ErrorCode.INVALID_REQUEST, `MemberEpoch is invalid: ${p.memberEpoch}`);
    if (p.memberEpoch === 0 && (p.subscribedTopicNames === null || p.subscribedTopicNames.length === 0)) return fail(ErrorCode.INVALID_REQUEST, 'SubscribedTopicNames must be set in first request.');
    const existing = this.ctx.groups.get(p.groupId);
    if (existing !== undefined && existing.kind !== 'share') return fail(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${p.groupId} is not a share group.`);
    if (p.memberEpoch === LEAVE_EPOCH) return this.leave(p, respond);
    let g = this.shareGroup(p.groupId, false);
    if (!g && p.memberEpoch !== 0) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
    if (!g) {
      this.ctx.emitAndApply({ type: 'share-group', group: p.groupId, value: { epoch: 0 } });
      g = this.shareGroup(p.groupId, false)!;
    }
    const current = g.members.get(p.memberId);
    if (!current && p.memberEpoch !== 0) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
    if (current && p.memberEpoch !== 0 && p.memberEpoch !== current.memberEpoch) return fail(ErrorCode.FENCED_MEMBER_EPOCH);
    if (!current && g.members.size >= this.config().maxSize) return fail(ErrorCode.GROUP_MAX_SIZE_REACHED, `The share group has reached its maximum size of ${this.config().maxSize}.`);
    this.memberHeartbeat(g, current, p, client, topics, respond);
  }

  private memberHeartbeat(g: ShareGroup, current: ShareMember | undefined, p: ShareHeartbeatParams, client: ClientInfo, topics: TopicsSnapshot, respond: (r: ShareGroupHeartbeatResponse) => void): void {
    const member: ShareMember = current ?? { memberId: p.memberId, memberEpoch: 0, previousMemberEpoch: -1, rackId: null, clientId: '', clientHost: '', subscribedTopicNames: [], assigned: new Map() };
    const subscribed = p.subscribedTopicNames ?? member.subscribedTopicNames;
    const subscriptionChanged = !current || subscribed.join('\0') !== member.subscribedTopicNames.join('\0');
    const rackId = p.rackId ?? member.rackId;
    if (subscriptionChanged || rackId !== member.rackId || client.clientId !== member.clientId || client.clientHost !== member.clientHost) {
      this.ctx.emitAndApply({ type: 'share-member', group: g.groupId, memberId: member.memberId, value: { rackId, clientId: client.clientId, clientHost: client.clientHost, subscribedTopicNames: subscribed } });
    }
    const metadata = this.subscriptionMetadata(g, topics);
    const metadataChanged = !this.sameMetadata(g, metadata);
    if (metadataChanged) {
      this.ctx.emitAndApply({ type: 'share-partition-metadata', group: g.groupId, value: { topics: [...metadata].map(([topicId, t]) => ({ topicId, topicName: t.name, numPartitions: t.partitions, partitionMetadata: [] })) } });
    }
    if (subscriptionChanged || metadataChanged) this.bumpEpoch(g);
    // Every heartbeat: a topic whose offsets were deleted comes back while members subscribe to it.
    this.maybeInitializeTopics(g, [...metadata].map(([topicId, t]) => ({ topicId, name: t.name, partitions: Array.from({ length: t.partitions }, (_, i) => i) })));
    if (g.assignmentEpoch < g.groupEpoch) this.computeTargetAssignment(g);
    const m = g.members.get(member.memberId)!;
    const joining = p.memberEpoch === 0;
    const target = g.targetAssignment.get(m.memberId) ?? new Map();
    const sendAssignment = joining || m.memberEpoch !== g.assignmentEpoch || !samePartitions(target, m.assigned);
    if (m.memberEpoch !== g.assignmentEpoch || !samePartitions(target, m.assigned)) {
      this.ctx.emitAndApply({
        type: 'share-current-member', group: g.groupId, memberId: m.memberId,
        value: { memberEpoch: g.assignmentEpoch, previousMemberEpoch: m.memberEpoch, state: 0, assignedPartitions: toList(target) },
      });
    }
    this.scheduleSession(g.groupId, m.memberId, p.overrides?.sessionTimeoutMs);
    const answer: ShareGroupHeartbeatResponse = {
      throttleTimeMs: 0, errorCode: 0, errorMessage: null, memberId: m.memberId, memberEpoch: m.memberEpoch, heartbeatIntervalMs: p.overrides?.heartbeatIntervalMs ?? this.config().heartbeatIntervalMs,
      assignment: sendAssignment ? { topicPartitions: toList(m.assigned) } : null,
    };
    this.ctx.respond(() => respond(answer), (code) => respond(heartbeatError(code)));
  }

  private bumpEpoch(g: ShareGroup): void {
    this.ctx.emitAndApply({ type: 'share-group', group: g.groupId, value: { epoch: g.groupEpoch + 1 } });
    this.ctx.stats.consumerRebalances++;
  }

  private subscriptionMetadata(g: ShareGroup, topics: TopicsSnapshot): Map<string, { name: string; partitions: number }> {
    const names = new Set<string>();
    for (const m of g.members.values()) for (const n of m.subscribedTopicNames) names.add(n);
    const out = new Map<string, { name: string; partitions: number }>();
    for (const n of [...names].sort()) { const t = topics.byName(n); if (t) out.set(t.id, { name: n, partitions: t.partitions }); }
    return out;
  }

  private sameMetadata(g: ShareGroup, next: Map<string, { name: string; partitions: number }>): boolean {
    const cur = g.subscriptionMetadata;
    return cur.size === next.size && [...next].every(([id, t]) => cur.get(id)?.partitions === t.partitions && cur.get(id)?.name === t.name);
  }

  private computeTargetAssignment(g: ShareGroup): void {
    const members = [...g.members.values()].map((m) => ({
      memberId: m.memberId, topicIds: [...g.subscriptionMetadata].filter(([, t]) => m.subscribedTopicNames.includes(t.name)).map(([id]) => id),
    }));
    const out = simpleShareAssign(members, new Map([...g.subscriptionMetadata].map(([id, t]) => [id, t.partitions])));
    for (const [memberId, assignment] of out) {
      if (g.targetAssignment.has(memberId) && samePartitions(g.targetAssignment.get(memberId)!, assignment)) continue;
      this.ctx.emitAndApply({ type: 'share-target-member', group: g.groupId, memberId, value: { topicPartitions: toList(assignment) } });
    }
    this.ctx.emitAndApply({ type: 'share-target-metadata', group: g.groupId, value: { assignmentEpoch: g.groupEpoch } });
  }

  private leave(p: ShareHeartbeatParams, respond: (r: ShareGroupHeartbeatResponse) => void): void {
    const g = this.shareGroup(p.groupId, false);
    if (!g || !g.members.has(p.memberId)) return this.ctx.respond(() => respond(heartbeatError(ErrorCode.UNKNOWN_MEMBER_ID)));
    this.removeMember(g, p.memberId);
    const answer: ShareGroupHeartbeatResponse = { throttleTimeMs: 0, errorCode: 0, errorMessage: null, memberId: p.memberId, memberEpoch: LEAVE_EPOCH, heartbeatIntervalMs: 0, assignment: null };
    this.ctx.respond(() => respond(answer));
  }

  /** Tombstones for the member and an epoch bump, so the others get its partitions. */
  private removeMember(g: ShareGroup, memberId: string): void {
    this.ctx.timers.cancel(`share-session:${g.groupId}:${memberId}`);
    this.ctx.emitAndApply({ type: 'share-current-member', group: g.groupId, memberId, value: null });
    this.ctx.emitAndApply({ type: 'share-target-member', group: g.groupId, memberId, value: null });
    this.ctx.emitAndApply({ type: 'share-member', group: g.groupId, memberId, value: null });
    this.bumpEpoch(g);
    this.ctx.info(`share group ${g.groupId}: member ${memberId} left at epoch ${g.groupEpoch}`);
  }

  private scheduleSession(groupId: string, memberId: string, sessionTimeoutMs = this.config().sessionTimeoutMs): void {
    this.ctx.timers.schedule(`share-session:${groupId}:${memberId}`, this.ctx.nowMs + sessionTimeoutMs, () => {
      const g = this.shareGroup(groupId, false);
      if (g?.members.has(memberId)) this.removeMember(g, memberId);
    });
  }

  onLoaded(g: ShareGroup): void { for (const m of g.members.values()) this.scheduleSession(g.groupId, m.memberId); }

  /** Kafka's deletion order: assignments first, the group epoch last. */
  emitTombstones(g: ShareGroup): void {
    g.dead = true;
    for (const id of g.members.keys()) this.ctx.emit({ type: 'share-current-member', group: g.groupId, memberId: id, value: null });
    for (const id of g.targetAssignment.keys()) this.ctx.emit({ type: 'share-target-member', group: g.groupId, memberId: id, value: null });
    this.ctx.emit({ type: 'share-target-metadata', group: g.groupId, value: null });
    for (const id of g.members.keys()) this.ctx.emit({ type: 'share-member', group: g.groupId, memberId: id, value: null });
    this.ctx.emit({ type: 'share-partition-metadata', group: g.groupId, value: null });
    if (g.initializedTopics.size > 0) this.ctx.emit({ type: 'share-state-metadata', group: g.groupId, value: null });
    this.ctx.emit({ type: 'share-group', group: g.groupId, value: null });
  }

  /** Records topics' partitions as the group's share-partitions, when some are new. */
  private maybeInitializeTopics(g: ShareGroup, topics: { topicId: string; name: string; partitions: number[] }[]): void {
    const next = new Map([...g.initializedTopics].map(([id, t]) => [id, { name: t.name, partitions: [...t.partitions] }]));
    let changed = false;
    for (const t of topics) {
      const cur = next.get(t.topicId) ?? { name: t.name, partitions: [] };
      const added = t.partitions.filter((p) => !cur.partitions.includes(p));
      if (added.length === 0 && next.has(t.topicId)) continue;
      next.set(t.topicId, { name: t.name, partitions: [...cur.partitions, ...added].sort((a, b) => a - b) });
      changed = true;
    }
    if (changed) this.writeInitializedTopics(g, next);
  }

  private writeInitializedTopics(g: ShareGroup, topics: Map<string, { name: string; partitions: number[] }>): void {
    this.ctx.emitAndApply({
      type: 'share-state-metadata', group: g.groupId,
      value: { initializedTopics: [...topics].map(([topicId, t]) => ({ topicId, topicName: t.name, partitions: t.partitions })), deletingTopics: [] },
    });
  }

  /** A share group's share-partitions (DescribeShareGroupOffsets, deleting the group's state). */
  initializedTopics(groupId: string): { errorCode: number; topics: { topicId: string; name: string; partitions: number[] }[] } {
    const g = this.ctx.groups.get(groupId);
    if (!g || g.kind !== 'share' || g.dead) return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, topics: [] };
    return { errorCode: 0, topics: [...g.initializedTopics].map(([topicId, t]) => ({ topicId, name: t.name, partitions: [...t.partitions] })) };
  }

  /**
   * AlterShareGroupOffsets, the group's part: only an empty share group (NON_EMPTY_GROUP), created
   * when it does not exist (as Kafka, so offsets can be set before the first member joins); the
   * partitions join its share-partitions. The share coordinator's state is set by the caller.
   */
  alterOffsets(groupId: string, topics: { topicId: string; name: string; partitions: number[] }[], respond: (code: number) => void): void {
    const existing = this.ctx.groups.get(groupId);
    const refuse = (code: number) => this.ctx.respond(() => respond(code));
    if (existing !== undefined && (existing.kind !== 'share' || existing.dead)) return refuse(ErrorCode.GROUP_ID_NOT_FOUND);
    if (existing?.kind === 'share' && existing.members.size > 0) return refuse(ErrorCode.NON_EMPTY_GROUP);
    let g = this.shareGroup(groupId, false);
    if (!g) {
      this.ctx.emitAndApply({ type: 'share-group', group: groupId, value: { epoch: 0 } });
      g = this.shareGroup(groupId, false)!;
    }
    this.maybeInitializeTopics(g, topics);
    this.ctx.respond(() => respond(ErrorCode.NONE), respond);
  }

  /**
   * DeleteShareGroupOffsets, the group's part: only an empty share group; the topics leave its
   * share-partitions. The answer names the partitions whose state the caller deletes.
   */
  deleteOffsets(groupId: string, topicIds: string[], respond: (code: number, deleted: { topicId: string; name: string; partitions: number[] }[]) => void): void {
    const g = this.ctx.groups.get(groupId);
    if (!g || g.kind !== 'share' || g.dead) return this.ctx.respond(() => respond(ErrorCode.GROUP_ID_NOT_FOUND, []));
    if (g.members.size > 0) return this.ctx.respond(() => respond(ErrorCode.NON_EMPTY_GROUP, []));
    const deleted = topicIds.flatMap((id) => { const t = g.initializedTopics.get(id); return t ? [{ topicId: id, name: t.name, partitions: [...t.partitions] }] : []; });
    if (deleted.length > 0) this.writeInitializedTopics(g, new Map([...g.initializedTopics].filter(([id]) => !topicIds.includes(id))));
    this.ctx.respond(() => respond(ErrorCode.NONE, deleted), (code) => respond(code, []));
  }

  /** The partitions a share group's members are assigned now (topic id → partitions), for the share-partition leaders. */
  subscribedPartitions(groupId: string): TopicPartitions {
    const g = this.shareGroup(groupId, false);
    const out: TopicPartitions = new Map();
    for (const m of g?.members.values() ?? []) for (const [t, ps] of m.assigned) out.set(t, [...new Set([...(out.get(t) ?? []), ...ps])].sort((a, b) => a - b));
    return out;
  }

  describe(groupId: string, topics: TopicsSnapshot): Omit<ShareGroupDescribeResponseDescribedGroup, 'authorizedOperations'> {
    const g = this.ctx.groups.get(groupId);
    const missing = (message: string) => ({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: message, groupId, groupState: 'Dead', groupEpoch: -1, assignmentEpoch: -1, assignorName: '', members: [] });
    if (!g) return missing(`Group ${groupId} not found.`);
    if (g.kind !== 'share') return missing(`Group ${groupId} is not a share group.`);
    return {
      errorCode: 0, errorMessage: null, groupId, groupState: shareGroupState(g), groupEpoch: g.groupEpoch, assignmentEpoch: g.assignmentEpoch, assignorName: SHARE_ASSIGNOR,
      members: [...g.members.values()].map((m) => ({
        memberId: m.memberId, rackId: m.rackId, memberEpoch: m.memberEpoch, clientId: m.clientId, clientHost: m.clientHost, subscribedTopicNames: m.subscribedTopicNames,
        assignment: { topicPartitions: [...m.assigned].map(([topicId, partitions]) => ({ topicId, topicName: topics.nameOf(topicId) ?? '', partitions })) },
      })),
    };
  }
}
