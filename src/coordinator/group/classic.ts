// The classic group model (Kafka's ClassicGroup / ClassicGroupMember): members with their
// supported protocols and assignment, the state, the generation, the leader, the selected
// protocol. Plain data plus pure helpers; the state transitions live in shard.ts.
import type { JoinGroupResponse, SyncGroupResponse, ConsumerProtocolSubscription } from '../../protocol/index.js';
import { decodeVersioned } from './records.js';

export type ClassicState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

export interface ClassicMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  protocolType: string;
  protocols: { name: string; metadata: Buffer }[];
  assignment: Buffer;
  /** The pending JoinGroup response, while the member waits for the join phase to complete. */
  awaitingJoin: ((r: JoinGroupResponse) => void) | null;
  /** The pending SyncGroup response, while the member waits for the leader's assignment. */
  awaitingSync: ((r: SyncGroupResponse) => void) | null;
}

export interface ClassicGroup {
  readonly kind: 'classic';
  readonly groupId: string;
  state: ClassicState;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leaderId: string | null;
  readonly members: Map<string, ClassicMember>;
  /** group.instance.id → member id (KIP-345). */
  readonly staticMembers: Map<string, string>;
  /** Member ids handed out with MEMBER_ID_REQUIRED that have not joined yet (KIP-394). */
  readonly pendingMembers: Set<string>;
  /** Members of the current generation that have not sent SyncGroup yet. */
  readonly pendingSync: Set<string>;
  /** Set while group.initial.rebalance.delay.ms holds the first rebalance open. */
  initialDelay: { remainingMs: number; newMemberAdded: boolean } | null;
  currentStateTimestampMs: number;
}

export function newClassicGroup(groupId: string, nowMs: number): ClassicGroup {
  return {
    kind: 'classic', groupId, state: 'Empty', generationId: 0, protocolType: null, protocolName: null, leaderId: null,
    members: new Map(), staticMembers: new Map(), pendingMembers: new Set(), pendingSync: new Set(), initialDelay: null,
    currentStateTimestampMs: nowMs,
  };
}

export function transition(g: ClassicGroup, state: ClassicState, nowMs: number): void {
  g.state = state;
  g.currentStateTimestampMs = nowMs;
}

/** Whether a member asking with these protocols can be in the group (Kafka's supportsProtocols). */
export function supportsProtocols(g: ClassicGroup, protocolType: string, protocols: { name: string }[]): boolean {
  if (g.members.size === 0) return protocolType.length > 0 && protocols.length > 0;
  if (g.protocolType !== protocolType) return false;
  return protocols.some((p) => [...g.members.values()].every((m) => m.protocols.some((q) => q.name === p.name)));
}

/** The protocol every member supports that most members list first (ties: the first member's order). */
export function selectProtocol(g: ClassicGroup): string | null {
  const members = [...g.members.values()];
  if (members.length === 0) return null;
  const candidates = members[0]!.protocols.map((p) => p.name).filter((name) => members.every((m) => m.protocols.some((q) => q.name === name)));
  if (candidates.length === 0) return null;
  const votes = new Map(candidates.map((c) => [c, 0]));
  for (const m of members) {
    const vote = m.protocols.find((p) => votes.has(p.name))!;
    votes.set(vote.name, votes.get(vote.name)! + 1);
  }
  let best = candidates[0]!;
  for (const c of candidates) if (votes.get(c)! > votes.get(best)!) best = c;
  return best;
}

export function matchesProtocols(m: ClassicMember, protocols: { name: string; metadata: Buffer }[]): boolean {
  return m.protocols.length === protocols.length
    && m.protocols.every((p, i) => p.name === protocols[i]!.name && p.metadata.equals(protocols[i]!.metadata));
}

export function metadataFor(m: ClassicMember, protocolName: string | null): Buffer {
  return m.protocols.find((p) => p.name === protocolName)?.metadata ?? Buffer.alloc(0);
}

export function maxRebalanceTimeoutMs(g: ClassicGroup): number {
  let ms = 0;
  for (const m of g.members.values()) ms = Math.max(ms, m.rebalanceTimeoutMs);
  return ms;
}

export function allMembersJoined(g: ClassicGroup): boolean {
  for (const m of g.members.values()) if (m.awaitingJoin === null) return false;
  return g.pendingMembers.size === 0;
}

/**
 * Topics the members subscribe to, when the group runs the "consumer" protocol type and every
 * member's subscription can be read; null when that is not known (Kafka then assumes "subscribed").
 */
export function subscribedTopics(g: ClassicGroup): Set<string> | null {
  if (g.protocolType !== 'consumer' || g.protocolName === null) return null;
  const topics = new Set<string>();
  for (const m of g.members.values()) {
    const sub = decodeVersioned<ConsumerProtocolSubscription>('ConsumerProtocolSubscription', 3, metadataFor(m, g.protocolName));
    if (sub === null) return null;
    for (const t of sub.topics) topics.add(t);
  }
  return topics;
}
