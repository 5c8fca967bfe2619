import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartitionChangeBuilder } from '../../src/controller/index.js';
import {
  mergePartitionChange, partitionFromRecord, metadataRecord, LeaderRecoveryState, NO_LEADER, NO_LEADER_CHANGE,
  type PartitionRegistration,
} from '../../src/metadata/index.js';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

function partition(replicas: number[], isr: number[], leader: number, leaderEpoch = 4, partitionEpoch = 7): PartitionRegistration {
  return partitionFromRecord(metadataRecord('PartitionRecord', { partitionId: 0, topicId: TOPIC_ID, replicas, isr, leader, leaderEpoch, partitionEpoch }).data);
}

const live = (...ids: number[]) => (b: number) => ids.includes(b);

function builder(p: PartitionRegistration, acceptable: (b: number) => boolean, log?: (l: string) => void) {
  return new PartitionChangeBuilder(p, TOPIC_ID, 0, acceptable, log);
}

test('a target equal to the partition gives no record', () => {
  const p = partition([1, 2, 3], [1, 2, 3], 1);
  assert.equal(builder(p, live(1, 2, 3)).build(), null);
  assert.equal(builder(p, live(1, 2, 3)).setTargetIsr([1, 2, 3]).build(), null);
});

test('fencing the leader elects the next ISR member in replica order, shrinks the ISR and bumps both epochs', () => {
  const p = partition([1, 2, 3], [1, 2, 3], 1);
  const r = builder(p, live(2, 3)).removeFromTargetIsr(1).build()!;
  assert.deepEqual(r.data.isr, [2, 3]);
  assert.equal(r.data.leader, 2);
  const next = mergePartitionChange(p, r.data);
  assert.equal(next.leader, 2);
  assert.equal(next.leaderEpoch, 5);
  assert.equal(next.partitionEpoch, 8);
});

test('removing a follower from the ISR keeps the leader and its leader epoch', () => {
  const p = partition([1, 2, 3], [1, 2, 3], 1);
  const r = builder(p, live(1, 3)).removeFromTargetIsr(2).build()!;
  assert.equal(r.data.leader, NO_LEADER_CHANGE);
  assert.deepEqual(r.data.isr, [1, 3]);
  const next = mergePartitionChange(p, r.data);
  assert.equal(next.leaderEpoch, 4);
  assert.equal(next.partitionEpoch, 8);
});

test('the last ISR member stays in the ISR when it is fenced, and the partition goes offline', () => {
  const p = partition([1, 2], [1], 1);
  const r = builder(p, live(2)).removeFromTargetIsr(1).build()!;
  assert.equal(r.data.leader, NO_LEADER);
  assert.equal(r.data.isr, null);
  const next = mergePartitionChange(p, r.data);
  assert.deepEqual(next.isr, [1]);
  assert.equal(next.leader, NO_LEADER);
});

test('an offline partition elects its returning ISR member with a new leader epoch', () => {
  const p = partition([1, 2], [1], NO_LEADER, 5, 8);
  assert.equal(builder(p, live(2)).build(), null, 'a replica outside the ISR may not lead without unclean election');
  const r = builder(p, live(1, 2)).build()!;
  assert.equal(r.data.leader, 1);
  assert.equal(mergePartitionChange(p, r.data).leaderEpoch, 6);
});

test('unclean election picks a live replica outside the ISR, resets the ISR to it, marks it recovering and logs possible data loss', () => {
  const p = partition([1, 2, 3], [1], NO_LEADER);
  const lines: string[] = [];
  const r = builder(p, live(3), (l) => lines.push(l)).setElection('unclean').build()!;
  assert.equal(r.data.leader, 3);
  assert.deepEqual(r.data.isr, [3]);
  assert.equal(r.data.leaderRecoveryState, LeaderRecoveryState.RECOVERING);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /unclean.*may be lost/);
});

test('unclean election still prefers an ISR member when one may lead', () => {
  const p = partition([1, 2, 3], [1, 2], 1);
  const r = builder(p, live(2, 3)).setElection('unclean').removeFromTargetIsr(1).build()!;
  assert.equal(r.data.leader, 2);
  assert.deepEqual(r.data.isr, [2]);
  assert.equal(r.data.leaderRecoveryState, -1);
});

test('preferred election moves leadership back to the first replica when it is in the ISR', () => {
  const p = partition([1, 2, 3], [1, 2, 3], 2);
  const r = builder(p, live(1, 2, 3)).setElection('preferred').build()!;
  assert.equal(r.data.leader, 1);
  assert.equal(r.data.isr, null);
});

test('preferred election keeps the current leader when the preferred replica is not in the ISR', () => {
  const p = partition([1, 2, 3], [2, 3], 2);
  assert.equal(builder(p, live(1, 2, 3)).setElection('preferred').build(), null);
});

test('an online election keeps an eligible leader even when it is not the preferred replica', () => {
  const p = partition([1, 2, 3], [1, 2, 3], 3);
  assert.equal(builder(p, live(1, 2, 3)).build(), null);
});

// ---- KIP-966: eligible leader replicas ----------------------------------------------------------

/** Applies the builder's record (or nothing) to `p`. */
function step(p: PartitionRegistration, b: PartitionChangeBuilder): PartitionRegistration {
  const r = b.build();
  return r === null ? p : mergePartitionChange(p, r.data);
}

const elrBuilder = (p: PartitionRegistration, acceptable: (b: number) => boolean, minIsr = 2, log?: (l: string) => void) =>
  builder(p, acceptable, log).setEligibleLeaderReplicas(true, minIsr);

test('ELR: an ISR shrinking below min ISR puts the removed replicas in the ELR; at or above min ISR there is none', () => {
  let p = partition([1, 2, 3], [1, 2, 3], 1);
  p = step(p, elrBuilder(p, live(1, 2)).removeFromTargetIsr(3));
  assert.deepEqual([p.isr, p.elr, p.lastKnownElr], [[1, 2], [], []], 'ISR 2 = min ISR: no ELR');
  p = step(p, elrBuilder(p, live(1)).removeFromTargetIsr(2));
  assert.deepEqual([p.isr, p.elr, p.leader], [[1], [2], 1]);
  // The leader fenced: the ISR empties, it joins the ELR and is remembered as the last leader.
  p = step(p, elrBuilder(p, live()).removeFromTargetIsr(1));
  assert.deepEqual([p.isr, p.elr, p.lastKnownElr, p.leader], [[], [1, 2], [1], NO_LEADER]);
  // Broker 3 (never in the ELR) comes back: it may not lead.
  assert.equal(elrBuilder(p, live(3)).build(), null);
  // ELR member 2 comes back: it leads, alone in the ISR, and leaves the ELR; the last leader is forgotten.
  const lines: string[] = [];
  p = step(p, elrBuilder(p, live(2, 3), 2, (l) => lines.push(l)));
  assert.deepEqual([p.leader, p.isr, p.elr, p.lastKnownElr, p.leaderRecoveryState], [2, [2], [1], [], LeaderRecoveryState.RECOVERED]);
  assert.match(lines.join('\n'), /broker 2 is elected from the eligible leader replicas/);
  // Broker 1 rejoins the ISR (its leader's AlterPartition): min ISR again, so the ELR is cleared.
  p = step(p, elrBuilder(p, live(1, 2, 3)).setTargetIsr([2, 1]));
  assert.deepEqual([p.isr, p.elr], [[2, 1], []]);
});

test('ELR: a replica rejoining the ISR leaves the ELR while the ISR is still below min ISR', () => {
  let p = partition([1, 2, 3], [1], 1);
  p = { ...p, elr: [2, 3] } as PartitionRegistration;
  p = step(p, elrBuilder(p, live(1, 2, 3), 3).setTargetIsr([1, 2]));
  assert.deepEqual([p.isr, p.elr], [[1, 2], [3]]);
});

test('ELR: a replica back from an unclean shutdown leaves the ELR; with ISR and ELR empty the last known leader leads once it is back, marked recovering', () => {
  let p = partition([1, 2, 3], [1, 2], 1);
  p = step(p, elrBuilder(p, live(1)).removeFromTargetIsr(2));
  p = step(p, elrBuilder(p, live()).removeFromTargetIsr(1));
  assert.deepEqual([p.isr, p.elr, p.lastKnownElr], [[], [1, 2], [1]]);
  p = step(p, elrBuilder(p, live()).setUncleanShutdownReplicas([2]));
  assert.deepEqual([p.elr, p.lastKnownElr, p.leader], [[1], [1], NO_LEADER]);
  p = step(p, elrBuilder(p, live()).setUncleanShutdownReplicas([1]));
  assert.deepEqual([p.elr, p.lastKnownElr, p.leader], [[], [1], NO_LEADER]);
  assert.equal(elrBuilder(p, live(2, 3)).build(), null, 'not the last known leader: no election without unclean election');
  const lines: string[] = [];
  p = step(p, elrBuilder(p, live(1, 2), 2, (l) => lines.push(l)));
  assert.deepEqual([p.leader, p.isr, p.elr, p.lastKnownElr, p.leaderRecoveryState], [1, [1], [], [], LeaderRecoveryState.RECOVERING]);
  assert.match(lines.join('\n'), /last known leader 1 becomes leader/);
});

test('ELR: with ISR and ELR empty and the last known leader away, unclean election (when enabled) picks a live replica and clears the ELR fields', () => {
  let p = partition([1, 2, 3], [1], 1);
  p = step(p, elrBuilder(p, live()).removeFromTargetIsr(1).setUncleanShutdownReplicas([1]));
  assert.deepEqual([p.isr, p.elr, p.lastKnownElr], [[], [], [1]]);
  assert.equal(elrBuilder(p, live(3)).build(), null);
  p = step(p, elrBuilder(p, live(3)).setElection('unclean'));
  assert.deepEqual([p.leader, p.isr, p.elr, p.lastKnownElr, p.leaderRecoveryState], [3, [3], [], [], LeaderRecoveryState.RECOVERING]);
});

test('ELR off: the ISR never empties and no ELR is written; turned off, the next change clears what was kept', () => {
  let p = partition([1, 2, 3], [1], 1);
  p = step(p, builder(p, live()).removeFromTargetIsr(1));
  assert.deepEqual([p.isr, p.elr, p.leader], [[1], [], NO_LEADER]);
  let q: PartitionRegistration = { ...partition([1, 2, 3], [1], 1), elr: [2], lastKnownElr: [3] };
  q = step(q, builder(q, live(1)).setTargetIsr([1]));
  assert.deepEqual([q.elr, q.lastKnownElr], [[], []]);
});

test('ELR: min ISR is capped at the replica count (a single-replica partition keeps no ELR)', () => {
  let p = partition([1], [1], 1);
  p = step(p, elrBuilder(p, live(), 2).removeFromTargetIsr(1));
  assert.deepEqual([p.isr, p.elr, p.lastKnownElr], [[], [1], [1]]);
  p = step(p, elrBuilder(p, live(1), 2));
  assert.deepEqual([p.leader, p.isr, p.elr], [1, [1], []], 'ISR [1] meets the capped min ISR 1');
});
