// Classic groups on the shard (Kafka's GroupMetadataManager, classic protocol): JoinGroup,
// SyncGroup, Heartbeat and LeaveGroup, the rebalance phases, sessions and static members (KIP-345).
// Membership is soft state, as in Kafka: requests and timers change the in-memory group directly,
// and what must survive a move of the coordinator (generation, protocol, leader, members and
// assignments) is written as a GroupMetadata record when a generation is established (at
// SyncGroup, or when the group becomes empty). The model and its pure helpers are in classic.ts.
import { ErrorCode, type JoinGroupResponse, type SyncGroupResponse } from '../../protocol/index.js';
import {
  allMembersJoined, matchesProtocols, maxRebalanceTimeoutMs, metadataFor, newClassicGroup, selectProtocol, supportsProtocols,
  transition, type ClassicGroup, type ClassicMember,
} from './classic.js';
import { UNKNOWN_MEMBER, joinError, syncError, type ClientInfo, type GroupShardContext, type JoinParams, type SyncParams } from './context.js';
import type { ConsumerGroups } from './consumer.js';
import type { GroupRecord } from './records.js';

export class ClassicGroups {
  constructor(private readonly ctx: GroupShardContext, private readonly consumer: ConsumerGroups) {}

  // ---- replay ------------------------------------------------------------------------------------

  /** A GroupMetadata record (null: the group's tombstone). */
  replayGroupMetadata(r: Extract<GroupRecord, { type: 'group' }>): void {
    const existing = this.ctx.groups.get(r.group);
    if (r.value === null) {
      if (existing?.kind === 'classic') { existing.state = 'Dead'; this.ctx.groups.delete(r.group); }
      return;
    }
    // A live write: the in-memory group already holds what the record says (and more).
    if (!this.ctx.loading && existing?.kind === 'classic' && existing.generationId >= r.value.generation && existing.members.size > 0) return;
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
    this.ctx.groups.set(r.group, g);
  }

  /** The classic group's GroupMetadata record as it stands. */
  groupRecord(g: ClassicGroup, assignments?: Map<string, Buffer>): GroupRecord {
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

  // ---- JoinGroup -------------------------------------------------------------------------------

  join(p: JoinParams, client: ClientInfo, respond: (r: JoinGroupResponse) => void): void {
    const fail = (code: number, memberId = UNKNOWN_MEMBER) => this.ctx.respond(() => respond(joinError(code, memberId)));
    if (!p.groupId) return fail(ErrorCode.INVALID_GROUP_ID);
    if (p.sessionTimeoutMs < this.ctx.config.minSessionTimeoutMs || p.sessionTimeoutMs > this.ctx.config.maxSessionTimeoutMs) return fail(ErrorCode.INVALID_SESSION_TIMEOUT);
    const unknown = p.memberId === UNKNOWN_MEMBER;
    let g = this.ctx.groups.get(p.groupId);
    if (g?.kind === 'consumer') {
      if (!this.consumer.maybeDowngradeEmptyGroup(g)) return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
      g = undefined;
    }
    // A share group's id is taken: no classic member may join it (Kafka answers the same).
    if (g?.kind === 'share') return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    if (!g) {
      if (!unknown) return fail(ErrorCode.UNKNOWN_MEMBER_ID);
      g = newClassicGroup(p.groupId, this.ctx.nowMs);
      this.ctx.groups.set(p.groupId, g);
    }
    if (!this.acceptJoiningMember(g, p.memberId)) {
      this.removeMember(g, p.memberId);
      return fail(ErrorCode.GROUP_MAX_SIZE_REACHED);
    }
    if (g.state === 'Dead') return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (!supportsProtocols(g, p.protocolType, p.protocols)) return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    if (unknown) this.joinNewMember(g, p, client, respond);
    else this.joinExistingMember(g, p, client, respond);
  }

  private acceptJoiningMember(g: ClassicGroup, memberId: string): boolean {
    const max = this.ctx.config.groupMaxSize;
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
    const memberId = `${client.clientId}-${this.ctx.uuid()}`;
    if (p.groupInstanceId !== null) {
      const oldId = g.staticMembers.get(p.groupInstanceId);
      if (oldId !== undefined && g.members.has(oldId)) return this.rejoinStaticMember(g, oldId, memberId, p, client, respond);
      return this.addMemberAndRebalance(g, memberId, p, client, respond);
    }
    if (client.apiVersion >= 4) {
      // KIP-394: hand out the id first; the member joins for real with it.
      g.pendingMembers.add(memberId);
      this.ctx.timers.schedule(`session:${g.groupId}:${memberId}`, this.ctx.nowMs + p.sessionTimeoutMs, () => this.expirePendingMember(g, memberId));
      return this.ctx.respond(() => respond(joinError(ErrorCode.MEMBER_ID_REQUIRED, memberId)));
    }
    this.addMemberAndRebalance(g, memberId, p, client, respond);
  }

  private joinExistingMember(g: ClassicGroup, p: JoinParams, client: ClientInfo, respond: (r: JoinGroupResponse) => void): void {
    if (g.pendingMembers.has(p.memberId)) {
      g.pendingMembers.delete(p.memberId);
      return this.addMemberAndRebalance(g, p.memberId, p, client, respond);
    }
    const fence = this.validateMember(g, p.memberId, p.groupInstanceId);
    if (fence !== ErrorCode.NONE) return this.ctx.respond(() => respond(joinError(fence, p.memberId)));
    const m = g.members.get(p.memberId)!;
    switch (g.state) {
      case 'PreparingRebalance':
        return this.updateMemberAndRebalance(g, m, p, respond);
      case 'CompletingRebalance':
        if (matchesProtocols(m, p.protocols)) return this.ctx.respond(() => respond(this.joinResponse(g, m)));
        return this.updateMemberAndRebalance(g, m, p, respond);
      case 'Stable':
        if (g.leaderId === m.memberId || !matchesProtocols(m, p.protocols)) return this.updateMemberAndRebalance(g, m, p, respond);
        return this.ctx.respond(() => respond(this.joinResponse(g, m)));
      default:
        return this.ctx.respond(() => respond(joinError(ErrorCode.UNKNOWN_MEMBER_ID, p.memberId)));
    }
  }

  /** UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID when (memberId, instanceId) is not a member of g. */
  validateMember(g: ClassicGroup, memberId: string, groupInstanceId: string | null): number {
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
    this.ctx.timers.cancel(`session:${g.groupId}:${memberId}`);
    this.maybePrepareRebalance(g, `adding new member ${memberId} with group instance id ${p.groupInstanceId ?? 'null'}${p.reason ? `; client reason: ${p.reason}` : ''}`);
    this.maybeCompleteJoin(g);
  }

  private updateMemberAndRebalance(g: ClassicGroup, m: ClassicMember, p: JoinParams, respond: (r: JoinGroupResponse) => void): void {
    m.protocols = p.protocols;
    m.rebalanceTimeoutMs = p.rebalanceTimeoutMs;
    m.sessionTimeoutMs = p.sessionTimeoutMs;
    if (m.awaitingJoin) { const prev = m.awaitingJoin; this.ctx.respond(() => prev(joinError(ErrorCode.REBALANCE_IN_PROGRESS, m.memberId))); }
    m.awaitingJoin = respond;
    this.ctx.timers.cancel(`session:${g.groupId}:${m.memberId}`);
    this.maybePrepareRebalance(g, `updating metadata for member ${m.memberId}${p.reason ? `; client reason: ${p.reason}` : ''}`);
    this.maybeCompleteJoin(g);
  }

  /** KIP-345: a known group.instance.id joins with a new member id; the old one is fenced. */
  private rejoinStaticMember(g: ClassicGroup, oldId: string, newId: string, p: JoinParams, client: ClientInfo, respond: (r: JoinGroupResponse) => void): void {
    const old = g.members.get(oldId)!;
    if (old.awaitingJoin) { const cb = old.awaitingJoin; this.ctx.respond(() => cb(joinError(ErrorCode.FENCED_INSTANCE_ID, oldId))); }
    if (old.awaitingSync) { const cb = old.awaitingSync; this.ctx.respond(() => cb(syncError(ErrorCode.FENCED_INSTANCE_ID))); }
    this.ctx.timers.cancel(`session:${g.groupId}:${oldId}`);
    const m: ClassicMember = { ...old, memberId: newId, clientId: client.clientId, clientHost: client.clientHost, awaitingJoin: null, awaitingSync: null };
    const oldProtocols = old.protocols;
    g.members.delete(oldId);
    g.members.set(newId, m);
    g.staticMembers.set(p.groupInstanceId!, newId);
    const wasLeader = g.leaderId === oldId;
    if (wasLeader) g.leaderId = newId;
    this.ctx.info(`static member ${p.groupInstanceId} of group ${g.groupId} rejoins in state ${g.state}: member id ${oldId} replaced by ${newId}${wasLeader ? ' (the leader)' : ''}`);
    if (g.pendingSync.delete(oldId)) g.pendingSync.add(newId);
    if (g.state === 'Stable') {
      m.protocols = p.protocols;
      if (selectProtocol(g) === g.protocolName) {
        // Nothing changed that needs a rebalance: persist the new member id and answer with the
        // current generation (a leader is told to skip assignment, v9).
        m.rebalanceTimeoutMs = p.rebalanceTimeoutMs;
        m.sessionTimeoutMs = p.sessionTimeoutMs;
        this.scheduleSession(g, m);
        this.ctx.emit(this.groupRecord(g));
        const undo = () => {
          g.members.delete(newId);
          g.members.set(oldId, { ...old, awaitingJoin: null, awaitingSync: null });
          g.staticMembers.set(p.groupInstanceId!, oldId);
          if (wasLeader) g.leaderId = oldId;
          this.ctx.timers.cancel(`session:${g.groupId}:${newId}`);
          this.scheduleSession(g, g.members.get(oldId)!);
        };
        this.ctx.onAppendFailure(undo);
        const answer = this.joinResponse(g, m, wasLeader);
        return this.ctx.respond(() => respond(answer), (code) => respond(joinError(code)));
      }
      m.protocols = oldProtocols;
    }
    if (g.state === 'CompletingRebalance' || g.state === 'Stable') {
      m.protocols = p.protocols;
      m.awaitingJoin = respond;
      this.maybePrepareRebalance(g, `static member ${p.groupInstanceId} rejoined as ${newId} in state ${g.state}`);
      return this.maybeCompleteJoin(g);
    }
    this.updateMemberAndRebalance(g, m, p, respond);
  }

  // ---- rebalance phases ---------------------------------------------------------------------------

  maybePrepareRebalance(g: ClassicGroup, reason: string): void {
    if (g.state === 'Stable' || g.state === 'CompletingRebalance' || g.state === 'Empty') this.prepareRebalance(g, reason);
  }

  private prepareRebalance(g: ClassicGroup, reason: string): void {
    this.ctx.info(`preparing to rebalance group ${g.groupId} in state ${g.state} with old generation ${g.generationId} (reason: ${reason})`);
    if (g.state === 'CompletingRebalance') this.resetAssignments(g, ErrorCode.REBALANCE_IN_PROGRESS);
    this.ctx.timers.cancel(`sync:${g.groupId}`);
    g.pendingSync.clear();
    const rebalanceTimeoutMs = maxRebalanceTimeoutMs(g);
    const initial = g.state === 'Empty' && this.ctx.config.initialRebalanceDelayMs > 0;
    transition(g, 'PreparingRebalance', this.ctx.nowMs);
    if (initial) {
      const delayMs = Math.min(this.ctx.config.initialRebalanceDelayMs, rebalanceTimeoutMs);
      g.initialDelay = { remainingMs: Math.max(rebalanceTimeoutMs - this.ctx.config.initialRebalanceDelayMs, 0), newMemberAdded: false };
      this.ctx.timers.schedule(`join:${g.groupId}`, this.ctx.nowMs + delayMs, () => this.onInitialDelayExpired(g));
    } else {
      g.initialDelay = null;
      this.ctx.timers.schedule(`join:${g.groupId}`, this.ctx.nowMs + rebalanceTimeoutMs, () => this.completeJoin(g));
    }
  }

  private onInitialDelayExpired(g: ClassicGroup): void {
    const d = g.initialDelay;
    if (d && d.newMemberAdded && d.remainingMs > 0) {
      const delayMs = Math.min(this.ctx.config.initialRebalanceDelayMs, d.remainingMs);
      g.initialDelay = { remainingMs: Math.max(d.remainingMs - this.ctx.config.initialRebalanceDelayMs, 0), newMemberAdded: false };
      this.ctx.timers.schedule(`join:${g.groupId}`, this.ctx.nowMs + delayMs, () => this.onInitialDelayExpired(g));
      return;
    }
    this.completeJoin(g);
  }

  maybeCompleteJoin(g: ClassicGroup): void {
    if (g.state === 'PreparingRebalance' && g.initialDelay === null && allMembersJoined(g)) this.completeJoin(g);
  }

  private completeJoin(g: ClassicGroup): void {
    if (g.state !== 'PreparingRebalance') return;
    this.ctx.timers.cancel(`join:${g.groupId}`);
    g.initialDelay = null;
    const absent = [...g.members.values()].filter((m) => m.awaitingJoin === null).map((m) => m.memberId);
    for (const id of absent) this.removeMember(g, id);
    if (absent.length > 0) this.ctx.info(`group ${g.groupId}: members ${absent.join(', ')} did not rejoin in time; removed`);
    g.generationId++;
    if (g.members.size === 0) {
      g.protocolName = null;
      this.ctx.info(`group ${g.groupId} with generation ${g.generationId} is now empty`);
      transition(g, 'Empty', this.ctx.nowMs);
      this.ctx.emit(this.groupRecord(g));
      return;
    }
    g.protocolName = selectProtocol(g);
    this.ctx.info(`group ${g.groupId}: generation ${g.generationId} (protocol ${g.protocolName}) with ${g.members.size} member(s), leader ${g.leaderId}; awaiting the leader's assignment`);
    transition(g, 'CompletingRebalance', this.ctx.nowMs);
    this.ctx.stats.classicRebalances++;
    for (const m of g.members.values()) {
      const cb = m.awaitingJoin!;
      m.awaitingJoin = null;
      const answer = this.joinResponse(g, m);
      this.ctx.respond(() => cb(answer));
      this.scheduleSession(g, m);
      g.pendingSync.add(m.memberId);
    }
    const generation = g.generationId;
    this.ctx.timers.schedule(`sync:${g.groupId}`, this.ctx.nowMs + maxRebalanceTimeoutMs(g), () => this.expirePendingSync(g, generation));
  }

  /** Members that did not send SyncGroup within the rebalance timeout leave; the rest rebalance. */
  private expirePendingSync(g: ClassicGroup, generation: number): void {
    if (g.generationId !== generation || (g.state !== 'CompletingRebalance' && g.state !== 'Stable')) return;
    if (g.pendingSync.size === 0) return;
    const late = [...g.pendingSync];
    for (const id of late) this.removeMember(g, id);
    g.pendingSync.clear();
    this.prepareRebalance(g, `members ${late.join(', ')} did not send SyncGroup in generation ${generation} within the rebalance timeout; removed`);
    this.maybeCompleteJoin(g);
  }

  private resetAssignments(g: ClassicGroup, errorCode: number): void {
    for (const m of g.members.values()) {
      m.assignment = Buffer.alloc(0);
      if (m.awaitingSync) { const cb = m.awaitingSync; m.awaitingSync = null; this.ctx.respond(() => cb(syncError(errorCode))); }
    }
  }

  /** Takes a member out of the group (no rebalance by itself). */
  removeMember(g: ClassicGroup, memberId: string): void {
    const m = g.members.get(memberId);
    if (!m) return;
    if (m.awaitingJoin) { const cb = m.awaitingJoin; this.ctx.respond(() => cb(joinError(ErrorCode.UNKNOWN_MEMBER_ID, memberId))); }
    if (m.awaitingSync) { const cb = m.awaitingSync; this.ctx.respond(() => cb(syncError(ErrorCode.UNKNOWN_MEMBER_ID))); }
    this.ctx.timers.cancel(`session:${g.groupId}:${memberId}`);
    g.members.delete(memberId);
    g.pendingSync.delete(memberId);
    if (m.groupInstanceId !== null && g.staticMembers.get(m.groupInstanceId) === memberId) g.staticMembers.delete(m.groupInstanceId);
    if (g.leaderId === memberId) g.leaderId = g.members.keys().next().value ?? null;
  }

  removeMemberAndRebalance(g: ClassicGroup, memberId: string, reason: string): void {
    this.removeMember(g, memberId);
    if (g.state === 'Stable' || g.state === 'CompletingRebalance') this.prepareRebalance(g, `removing member ${memberId}: ${reason}`);
    else this.ctx.info(`removed member ${memberId} from group ${g.groupId} in state ${g.state}: ${reason}`);
    this.maybeCompleteJoin(g);
  }

  scheduleSession(g: ClassicGroup, m: ClassicMember): void {
    const memberId = m.memberId;
    this.ctx.timers.schedule(`session:${g.groupId}:${memberId}`, this.ctx.nowMs + m.sessionTimeoutMs, () => this.expireSession(g, memberId));
  }

  private expireSession(g: ClassicGroup, memberId: string): void {
    const m = g.members.get(memberId);
    if (!m || this.ctx.groups.get(g.groupId) !== g) return;
    if (m.awaitingJoin || m.awaitingSync) return this.scheduleSession(g, m);
    this.removeMemberAndRebalance(g, memberId, `no heartbeat within its session timeout (${m.sessionTimeoutMs} ms)`);
  }

  private expirePendingMember(g: ClassicGroup, memberId: string): void {
    if (!g.pendingMembers.delete(memberId)) return;
    this.maybeCompleteJoin(g);
  }

  // ---- SyncGroup, Heartbeat, LeaveGroup --------------------------------------------------------------

  sync(p: SyncParams, respond: (r: SyncGroupResponse) => void): void {
    const fail = (code: number) => this.ctx.respond(() => respond(syncError(code)));
    const g = this.ctx.groups.get(p.groupId);
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
        return this.ctx.respond(() => respond(this.syncResponse(g, assignment)));
      }
      case 'CompletingRebalance':
        g.pendingSync.delete(m.memberId);
        m.awaitingSync = respond;
        this.scheduleSession(g, m);
        if (g.leaderId === m.memberId) this.completeSync(g, p.assignments);
    }
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
    this.ctx.info(`stabilized group ${g.groupId} generation ${g.generationId} with ${g.members.size} member(s); assignment received from leader ${g.leaderId} (${[...g.members.values()].map((m) => `${m.memberId}: ${m.assignment.length} bytes`).join(', ')})`);
    transition(g, 'Stable', this.ctx.nowMs);
    this.ctx.emit(this.groupRecord(g));
    const generation = g.generationId;
    for (const m of g.members.values()) {
      if (!m.awaitingSync) continue;
      const cb = m.awaitingSync;
      m.awaitingSync = null;
      const answer = this.syncResponse(g, m.assignment);
      this.ctx.respond(() => cb(answer), (code) => cb(syncError(code)));
    }
    if (g.pendingSync.size === 0) this.ctx.timers.cancel(`sync:${g.groupId}`);
    this.ctx.onAppendFailure(() => {
      if (g.generationId !== generation || g.state !== 'Stable') return;
      for (const m of g.members.values()) m.assignment = Buffer.alloc(0);
      this.prepareRebalance(g, `the assignment of generation ${generation} could not be written`);
      this.maybeCompleteJoin(g);
    });
  }

  heartbeat(p: { groupId: string; memberId: string; groupInstanceId: string | null; generationId: number }): number {
    const g = this.ctx.groups.get(p.groupId);
    if (!g || g.kind !== 'classic') return ErrorCode.UNKNOWN_MEMBER_ID;
    if (g.state === 'Dead') return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const invalid = this.validateMember(g, p.memberId, p.groupInstanceId);
    if (invalid !== ErrorCode.NONE) return invalid;
    if (p.generationId !== g.generationId) return ErrorCode.ILLEGAL_GENERATION;
    if (g.state === 'Empty') return ErrorCode.UNKNOWN_MEMBER_ID;
    this.scheduleSession(g, g.members.get(p.memberId)!);
    return g.state === 'PreparingRebalance' ? ErrorCode.REBALANCE_IN_PROGRESS : ErrorCode.NONE;
  }

  /** LeaveGroup for a batch of members (v3+), or one member id (v0-2). Top-level error or per member. */
  leave(groupId: string, members: { memberId: string; groupInstanceId: string | null }[]): { errorCode: number; results: number[] } {
    const g = this.ctx.groups.get(groupId);
    if (!g || g.kind !== 'classic') return { errorCode: ErrorCode.UNKNOWN_MEMBER_ID, results: [] };
    if (g.state === 'Dead') return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, results: [] };
    return { errorCode: ErrorCode.NONE, results: members.map((who) => this.leaveOne(g, who)) };
  }

  private leaveOne(g: ClassicGroup, who: { memberId: string; groupInstanceId: string | null }): number {
    if (who.groupInstanceId !== null) {
      const current = g.staticMembers.get(who.groupInstanceId);
      if (current === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
      if (who.memberId !== UNKNOWN_MEMBER && who.memberId !== current) return ErrorCode.FENCED_INSTANCE_ID;
      this.removeMemberAndRebalance(g, current, `static member ${who.groupInstanceId} left the group`);
      return ErrorCode.NONE;
    }
    if (g.pendingMembers.delete(who.memberId)) {
      this.ctx.timers.cancel(`session:${g.groupId}:${who.memberId}`);
      this.maybeCompleteJoin(g);
      return ErrorCode.NONE;
    }
    if (!g.members.has(who.memberId)) return ErrorCode.UNKNOWN_MEMBER_ID;
    this.removeMemberAndRebalance(g, who.memberId, 'the member left the group');
    return ErrorCode.NONE;
  }
  /** A group without members, for offsets committed outside group management (admin commits). */
  createSimpleGroup(groupId: string): ClassicGroup {
    const g = newClassicGroup(groupId, this.ctx.nowMs);
    this.ctx.groups.set(groupId, g);
    return g;
  }

  /** After loading: every member's session restarts from now. */
  onLoaded(g: ClassicGroup): void {
    for (const m of g.members.values()) this.scheduleSession(g, m);
  }

  /** The partition moved away: members waiting in JoinGroup or SyncGroup are told NOT_COORDINATOR, as Kafka does. */
  unload(g: ClassicGroup): void {
    for (const m of g.members.values()) {
      const join = m.awaitingJoin;
      const sync = m.awaitingSync;
      m.awaitingJoin = null;
      m.awaitingSync = null;
      join?.(joinError(ErrorCode.NOT_COORDINATOR, m.memberId));
      sync?.(syncError(ErrorCode.NOT_COORDINATOR));
    }
  }
}
