// Broker-side partition assignors of the KIP-848 consumer group protocol: `uniform` (sticky,
// balanced) and `range` (per-topic ranges, co-partitioned across topics). Pure functions of the
// group's members, their subscriptions and current assignments, and the topics' partition counts.
// Determinism matters: every coordinator replaying the same inputs must compute the same target.
import { assert, parsePartitionKey, partitionKey } from '../../util/index.js';

export type Assignment = Map<string, number[]>; // topic id → sorted partitions

export interface AssignorMember {
  memberId: string;
  /** Topic ids the member subscribes to. */
  subscribedTopicIds: string[];
  /** What it owns now (for stickiness). */
  currentAssignment: Assignment;
  rackId?: string | null;
}

export interface AssignorInput {
  members: AssignorMember[];
  /** topic id → partition count, for every subscribed topic that exists. */
  partitionCounts: Map<string, number>;
}

export type AssignorOutput = Map<string, Assignment>; // member id → assignment

function emptyOutput(members: AssignorMember[]): AssignorOutput {
  return new Map(members.map((m) => [m.memberId, new Map()]));
}

function add(a: Assignment, topic: string, partition: number): void {
  const list = a.get(topic);
  if (list) list.push(partition);
  else a.set(topic, [partition]);
}

function sortAll(out: AssignorOutput): AssignorOutput {
  for (const a of out.values()) for (const l of a.values()) l.sort((x, y) => x - y);
  return out;
}

/**
 * Range: for each topic, the members subscribed to it (sorted by member id) get consecutive
 * ranges; the first `partitions % members` get one more. Members with the same subscriptions get
 * the same partition numbers of every topic, so co-partitioned topics are joined correctly.
 */
export function rangeAssign(input: AssignorInput): AssignorOutput {
  const out = emptyOutput(input.members);
  const topics = [...input.partitionCounts.keys()].sort();
  for (const topic of topics) {
    const count = input.partitionCounts.get(topic)!;
    const subscribers = input.members.filter((m) => m.subscribedTopicIds.includes(topic)).map((m) => m.memberId).sort();
    if (subscribers.length === 0) continue;
    const per = Math.floor(count / subscribers.length);
    const extra = count % subscribers.length;
    let next = 0;
    subscribers.forEach((id, i) => {
      const n = per + (i < extra ? 1 : 0);
      for (let k = 0; k < n; k++) add(out.get(id)!, topic, next++);
    });
    assert(next === count, 'range assignor covered every partition');
  }
  return sortAll(out);
}

/**
 * Uniform: balances the number of partitions per member (within one of each other among members
 * that can take the same partitions) while keeping as many current assignments as possible.
 * 1. Keep each member's current partitions that still exist and that it still subscribes to,
 *    up to its fair share (members are visited in id order, so ties break the same way).
 * 2. Hand the remaining partitions, in (topic, partition) order, to the eligible member with the
 *    fewest partitions (ties: smallest member id).
 */
export function uniformAssign(input: AssignorInput): AssignorOutput {
  const out = emptyOutput(input.members);
  const members = [...input.members].sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
  if (members.length === 0) return out;
  const subscribed = new Map(members.map((m) => [m.memberId, new Set(m.subscribedTopicIds)]));
  const all: [string, number][] = [];
  for (const topic of [...input.partitionCounts.keys()].sort()) {
    if (!members.some((m) => subscribed.get(m.memberId)!.has(topic))) continue;
    for (let p = 0; p < input.partitionCounts.get(topic)!; p++) all.push([topic, p]);
  }
  const owner = new Map<string, string>();
  const counts = new Map(members.map((m) => [m.memberId, 0]));
  // Fair share for stickiness: total over members, rounded up; exact balance is restored in step 2.
  const quota = Math.ceil(all.length / members.length);
  for (const m of members) {
    const mine: [string, number][] = [];
    for (const [topic, parts] of m.currentAssignment) {
      const count = input.partitionCounts.get(topic);
      if (count === undefined || !subscribed.get(m.memberId)!.has(topic)) continue;
      for (const p of parts) if (p < count) mine.push([topic, p]);
    }
    mine.sort((a, b) => (a[0] === b[0] ? a[1] - b[1] : a[0] < b[0] ? -1 : 1));
    for (const [topic, p] of mine) {
      const k = partitionKey(topic, p);
      if (owner.has(k) || counts.get(m.memberId)! >= quota) continue;
      owner.set(k, m.memberId);
      counts.set(m.memberId, counts.get(m.memberId)! + 1);
    }
  }
  for (const [topic, p] of all) {
    const k = partitionKey(topic, p);
    if (owner.has(k)) continue;
    let best: string | null = null;
    for (const m of members) {
      if (!subscribed.get(m.memberId)!.has(topic)) continue;
      if (best === null || counts.get(m.memberId)! < counts.get(best)!) best = m.memberId;
    }
    if (best === null) continue;
    owner.set(k, best);
    counts.set(best, counts.get(best)! + 1);
  }
  rebalanceHomogeneous(members, subscribed, owner, counts, all);
  for (const [k, id] of owner) {
    const { topic, partition } = parsePartitionKey(k);
    add(out.get(id)!, topic, partition);
  }
  return sortAll(out);
}

/**
 * Stickiness can leave a member over the floor while another is two below it; move partitions
 * from the fullest to the emptiest eligible member until counts differ by at most one.
 */
function rebalanceHomogeneous(members: AssignorMember[], subscribed: Map<string, Set<string>>, owner: Map<string, string>,
  counts: Map<string, number>, all: [string, number][]): void {
  for (let guard = 0; guard < all.length * 2; guard++) {
    const sorted = [...members].sort((a, b) => counts.get(a.memberId)! - counts.get(b.memberId)! || (a.memberId < b.memberId ? -1 : 1));
    let moved = false;
    for (const low of sorted) {
      for (const high of [...sorted].reverse()) {
        if (counts.get(high.memberId)! - counts.get(low.memberId)! <= 1) continue;
        const candidate = all.find(([t, p]) => owner.get(partitionKey(t, p)) === high.memberId && subscribed.get(low.memberId)!.has(t));
        if (!candidate) continue;
        owner.set(partitionKey(candidate[0], candidate[1]), low.memberId);
        counts.set(high.memberId, counts.get(high.memberId)! - 1);
        counts.set(low.memberId, counts.get(low.memberId)! + 1);
        moved = true;
        break;
      }
      if (moved) break;
    }
    if (!moved) return;
  }
}
