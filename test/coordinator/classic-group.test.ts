// The classic group state machine on the shard alone, with a simulated clock: joins, syncs,
// heartbeats, timeouts, leaves, static members, generation fencing, offsets and their expiry, and
// replay of the written records into a fresh shard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, type JoinGroupResponse, type SyncGroupResponse } from '../../src/protocol/index.js';
import { GroupCoordinatorShard, defaultGroupConfig, encodeGroupRecord, decodeGroupRecord, type Effects, type GroupRecord, type JoinParams } from '../../src/coordinator/index.js';

class Harness {
  now = 0;
  written: GroupRecord[] = [];
  uuids = 0;
  shard: GroupCoordinatorShard;
  constructor(config: Partial<typeof defaultGroupConfig> = {}) {
    this.shard = new GroupCoordinatorShard({ ...defaultGroupConfig, initialRebalanceDelayMs: 0, ...config }, () => `u${++this.uuids}`);
    this.apply(this.shard.onLoaded(0));
  }
  /** What the runtime does: records through the serde, replayed, then the replies. */
  apply(e: Effects): void {
    for (const r of e.records) {
      const bytes = encodeGroupRecord(r);
      const back = decodeGroupRecord(bytes.key, bytes.value)!;
      this.written.push(back);
      this.shard.replay(back);
    }
    for (const r of e.replies) r.send();
  }
  advance(ms: number): void { this.now += ms; this.apply(this.shard.tick(this.now)); }
  join(p: Partial<JoinParams> & { memberId?: string }, apiVersion = 9, clientId = 'c'): { response?: JoinGroupResponse } {
    const box: { response?: JoinGroupResponse } = {};
    const params: JoinParams = {
      groupId: 'g', memberId: '', groupInstanceId: null, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 30_000, protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.from('m') }], reason: null, ...p,
    };
    this.apply(this.shard.classicJoin(this.now, params, { clientId, clientHost: '/127.0.0.1', apiVersion }, (r) => { box.response = r; }));
    return box;
  }
  /** A dynamic member's two-step join (KIP-394). */
  joinNew(p: Partial<JoinParams> = {}): { memberId: string; box: { response?: JoinGroupResponse } } {
    const first = this.join(p).response!;
    assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
    return { memberId: first.memberId, box: this.join({ ...p, memberId: first.memberId }) };
  }
  sync(memberId: string, generationId: number, assignments: { memberId: string; assignment: Buffer }[] = [], groupInstanceId: string | null = null): { response?: SyncGroupResponse } {
    const box: { response?: SyncGroupResponse } = {};
    this.apply(this.shard.classicSync(this.now, { groupId: 'g', memberId, generationId, groupInstanceId, protocolType: null, protocolName: null, assignments }, (r) => { box.response = r; }));
    return box;
  }
  heartbeat(memberId: string, generationId: number, groupInstanceId: string | null = null): number {
    const out = this.shard.classicHeartbeat(this.now, { groupId: 'g', memberId, generationId, groupInstanceId });
    this.apply(out.effects);
    return out.errorCode;
  }
  state(): string { const g = this.shard.groups.get('g'); return g?.kind === 'classic' ? g.state : 'none'; }
  commit(memberId: string, generation: number, offset: bigint, apiVersion = 8, retentionTimeMs = -1): number {
    let code = -1;
    this.apply(this.shard.commitOffsets(this.now, {
      groupId: 'g', generationIdOrMemberEpoch: generation, memberId, groupInstanceId: null, retentionTimeMs,
      topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: 3, commitTimestamp: -1n, committedMetadata: 'meta' }] }],
    }, { clientId: 'c', clientHost: '/h', apiVersion }, (r) => { code = r[0]!.partitions[0]!.errorCode; }));
    return code;
  }
  committed(): bigint { return this.shard.fetchOffsets('g', [{ name: 't', partitionIndexes: [0] }]).topics[0]!.partitions[0]!.committedOffset; }
}

test('a new dynamic member gets MEMBER_ID_REQUIRED, then joins as leader of generation 1 and becomes Stable after its sync', () => {
  const h = new Harness();
  const a = h.joinNew();
  assert.match(a.memberId, /^c-u1$/);
  const joined = a.box.response!;
  assert.equal(joined.errorCode, 0);
  assert.equal(joined.generationId, 1);
  assert.equal(joined.leader, a.memberId);
  assert.equal(joined.protocolName, 'range');
  assert.deepEqual(joined.members.map((m) => m.memberId), [a.memberId]);
  assert.equal(h.state(), 'CompletingRebalance');
  const synced = h.sync(a.memberId, 1, [{ memberId: a.memberId, assignment: Buffer.from('A') }]).response!;
  assert.equal(synced.errorCode, 0);
  assert.equal(synced.assignment.toString(), 'A');
  assert.equal(h.state(), 'Stable');
  const record = h.written.find((r) => r.type === 'group')!;
  assert.equal(record.type === 'group' && record.value?.generation, 1);
});

test('a second member triggers a rebalance: the first learns by heartbeat, both rejoin, followers wait for the leader sync', () => {
  const h = new Harness();
  const a = h.joinNew();
  h.sync(a.memberId, 1, [{ memberId: a.memberId, assignment: Buffer.from('A') }]);
  const b = h.joinNew();
  assert.equal(b.box.response, undefined, 'the join waits for the known member');
  assert.equal(h.state(), 'PreparingRebalance');
  assert.equal(h.heartbeat(a.memberId, 1), ErrorCode.REBALANCE_IN_PROGRESS);
  const a2 = h.join({ memberId: a.memberId });
  assert.equal(a2.response!.generationId, 2);
  assert.equal(b.box.response!.generationId, 2);
  assert.equal(a2.response!.members.length, 2, 'the leader gets every member');
  assert.equal(b.box.response!.members.length, 0);
  const bSync = h.sync(b.memberId, 2);
  assert.equal(bSync.response, undefined, 'a follower waits for the leader');
  assert.equal(h.heartbeat(a.memberId, 1), ErrorCode.ILLEGAL_GENERATION);
  h.sync(a.memberId, 2, [{ memberId: a.memberId, assignment: Buffer.from('A2') }, { memberId: b.memberId, assignment: Buffer.from('B2') }]);
  assert.equal(bSync.response!.assignment.toString(), 'B2');
  assert.equal(h.heartbeat(b.memberId, 2), 0);
});

test('a member that stops heartbeating is removed after its session timeout and the rest rebalance', () => {
  const h = new Harness();
  const a = h.joinNew();
  const b = h.joinNew();
  h.join({ memberId: a.memberId });
  h.sync(a.memberId, 2, []);
  h.sync(b.memberId, 2);
  for (let i = 0; i < 3; i++) { h.advance(3000); assert.equal(h.heartbeat(a.memberId, 2), 0); }
  assert.equal(h.state(), 'Stable');
  h.advance(3000);
  assert.equal(h.state(), 'PreparingRebalance', 'b expired after 10 s without a heartbeat');
  assert.equal(h.heartbeat(a.memberId, 2), ErrorCode.REBALANCE_IN_PROGRESS);
  assert.equal(h.heartbeat(b.memberId, 2), ErrorCode.UNKNOWN_MEMBER_ID);
  const again = h.join({ memberId: a.memberId }).response!;
  assert.equal(again.generationId, 3);
  assert.deepEqual(again.members.map((m) => m.memberId), [a.memberId]);
});

test('a member that does not rejoin within the rebalance timeout is dropped from the next generation', () => {
  const h = new Harness();
  const a = h.joinNew({ rebalanceTimeoutMs: 5000 });
  h.sync(a.memberId, 1);
  const b = h.joinNew({ rebalanceTimeoutMs: 5000 });
  assert.equal(b.box.response, undefined);
  // a keeps heartbeating but never rejoins.
  h.advance(2000); h.heartbeat(a.memberId, 1);
  h.advance(3000);
  assert.equal(b.box.response!.errorCode, 0);
  assert.equal(b.box.response!.generationId, 2);
  assert.equal(b.box.response!.leader, b.memberId);
  assert.equal(h.heartbeat(a.memberId, 1), ErrorCode.UNKNOWN_MEMBER_ID);
});

test('group.initial.rebalance.delay.ms holds a new group open and extends while members keep arriving', () => {
  const h = new Harness({ initialRebalanceDelayMs: 3000 });
  const a = h.joinNew();
  h.advance(2000);
  const b = h.joinNew();
  h.advance(1000);
  assert.equal(a.box.response, undefined, 'a new member arrived within the delay: it is extended');
  h.advance(3000);
  assert.equal(a.box.response!.generationId, 1);
  assert.equal(b.box.response!.generationId, 1);
  assert.equal(a.box.response!.members.length + b.box.response!.members.length, 2);
});

test('LeaveGroup starts a rebalance; the last member leaving empties the group and writes it', () => {
  const h = new Harness();
  const a = h.joinNew();
  h.sync(a.memberId, 1);
  const out = h.shard.classicLeave(h.now, 'g', [{ memberId: a.memberId, groupInstanceId: null }, { memberId: 'nobody', groupInstanceId: null }]);
  h.apply(out.effects);
  assert.deepEqual(out.results, [0, ErrorCode.UNKNOWN_MEMBER_ID]);
  assert.equal(h.state(), 'Empty');
  const last = h.written.at(-1)!;
  assert.ok(last.type === 'group' && last.value!.members.length === 0 && last.value!.generation === 2);
});

test('static members: a restart with the same group.instance.id gets a new member id without a rebalance and fences the old id', () => {
  const h = new Harness();
  const first = h.join({ groupInstanceId: 'i1' }).response!;
  assert.equal(first.errorCode, 0, 'static members skip MEMBER_ID_REQUIRED');
  const b = h.join({ groupInstanceId: 'i2' });
  h.join({ memberId: first.memberId, groupInstanceId: 'i1' });
  h.sync(first.memberId, 2, [], 'i1');
  h.sync(b.response!.memberId, 2, [], 'i2');
  assert.equal(h.state(), 'Stable');
  const restarted = h.join({ groupInstanceId: 'i2' }, 9, 'c2').response!;
  assert.equal(restarted.errorCode, 0);
  assert.equal(restarted.generationId, 2, 'same generation: no rebalance');
  assert.notEqual(restarted.memberId, b.response!.memberId);
  assert.equal(h.state(), 'Stable');
  assert.equal(h.heartbeat(b.response!.memberId, 2, 'i2'), ErrorCode.FENCED_INSTANCE_ID);
  assert.equal(h.heartbeat(restarted.memberId, 2, 'i2'), 0);
  const leaderAgain = h.join({ groupInstanceId: 'i1' }).response!;
  assert.equal(leaderAgain.skipAssignment, true, 'the static leader is told not to reassign');
  assert.equal(leaderAgain.leader, leaderAgain.memberId);
});

test('errors where Kafka returns them: session timeout, unknown member, protocol mismatch, group size', () => {
  const h = new Harness({ groupMaxSize: 2 });
  assert.equal(h.join({ sessionTimeoutMs: 10 }).response!.errorCode, ErrorCode.INVALID_SESSION_TIMEOUT);
  assert.equal(h.join({ groupId: '' }).response!.errorCode, ErrorCode.INVALID_GROUP_ID);
  assert.equal(h.join({ memberId: 'ghost' }).response!.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  const a = h.joinNew();
  h.sync(a.memberId, 1);
  assert.equal(h.join({ protocolType: 'connect' }).response!.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  assert.equal(h.join({ protocols: [{ name: 'other', metadata: Buffer.alloc(0) }] }).response!.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  const b = h.joinNew();
  h.join({ memberId: a.memberId });
  h.sync(a.memberId, 2);
  h.sync(b.memberId, 2);
  assert.equal(h.join({ groupInstanceId: 'third' }).response!.errorCode, ErrorCode.GROUP_MAX_SIZE_REACHED);
  assert.equal(h.sync('ghost', 1).response!.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(h.sync(a.memberId, 7).response!.errorCode, ErrorCode.ILLEGAL_GENERATION);
  assert.equal(h.heartbeat(a.memberId, 2, 'not-mine'), ErrorCode.UNKNOWN_MEMBER_ID);
});

test('offset commits are fenced by generation and allowed as admin commits only while the group is empty', () => {
  const h = new Harness();
  assert.equal(h.commit('', -1, 5n), 0, 'an admin commit creates a simple group');
  assert.equal(h.committed(), 5n);
  assert.equal(h.commit('x', 1, 6n, 8), ErrorCode.UNKNOWN_MEMBER_ID);
  const a = h.joinNew();
  assert.equal(h.commit(a.memberId, 1, 7n), ErrorCode.REBALANCE_IN_PROGRESS, 'no commits before the assignment is known');
  h.sync(a.memberId, 1);
  assert.equal(h.commit(a.memberId, 0, 7n), ErrorCode.ILLEGAL_GENERATION);
  assert.equal(h.commit('', -1, 7n), ErrorCode.UNKNOWN_MEMBER_ID, 'no admin commits to an active group');
  assert.equal(h.commit(a.memberId, 1, 8n), 0);
  assert.equal(h.committed(), 8n);
  const fetched = h.shard.fetchOffsets('g', null).topics[0]!.partitions[0]!;
  assert.deepEqual([fetched.committedLeaderEpoch, fetched.metadata], [3, 'meta']);
  const unknownGroup = new Harness();
  assert.equal(unknownGroup.commit('m', 3, 1n, 9), ErrorCode.GROUP_ID_NOT_FOUND);
  assert.equal(unknownGroup.commit('m', 3, 1n, 8), ErrorCode.ILLEGAL_GENERATION);
});

test('offsets of an empty group expire offsets.retention.minutes after it became empty, then the group is deleted', () => {
  const h = new Harness({ offsetsRetentionMs: 60_000, offsetsRetentionCheckIntervalMs: 10_000 });
  const a = h.joinNew();
  h.sync(a.memberId, 1);
  assert.equal(h.commit(a.memberId, 1, 42n), 0);
  h.advance(120_000);
  h.heartbeat(a.memberId, 1);
  assert.equal(h.committed(), 42n, 'a group with members keeps its offsets');
  h.apply(h.shard.classicLeave(h.now, 'g', [{ memberId: a.memberId, groupInstanceId: null }]).effects);
  h.advance(50_000);
  assert.equal(h.committed(), 42n);
  h.advance(20_000);
  assert.equal(h.committed(), -1n);
  assert.equal(h.state(), 'none', 'the empty group without offsets is gone');
});

test('replaying the written records into a fresh shard restores offsets and the stable group', () => {
  const h = new Harness();
  const a = h.joinNew();
  h.sync(a.memberId, 1, [{ memberId: a.memberId, assignment: Buffer.from('A') }]);
  h.commit(a.memberId, 1, 9n);
  const fresh = new GroupCoordinatorShard(defaultGroupConfig, () => 'x');
  for (const r of h.written) fresh.replay(r);
  fresh.onLoaded(1000);
  const g = fresh.groups.get('g')!;
  assert.ok(g.kind === 'classic');
  assert.equal(g.state, 'Stable');
  assert.equal(g.generationId, 1);
  assert.equal(g.members.get(a.memberId)!.assignment.toString(), 'A');
  assert.equal(fresh.fetchOffsets('g', [{ name: 't', partitionIndexes: [0] }]).topics[0]!.partitions[0]!.committedOffset, 9n);
  assert.equal(fresh.classicHeartbeat(2000, { groupId: 'g', memberId: a.memberId, groupInstanceId: null, generationId: 1 }).errorCode, 0);
});

test('DeleteGroups refuses a group with members and removes an empty one with its offsets', () => {
  const h = new Harness();
  const a = h.joinNew();
  h.sync(a.memberId, 1);
  h.commit(a.memberId, 1, 3n);
  let results: { groupId: string; errorCode: number }[] = [];
  h.apply(h.shard.deleteGroups(h.now, ['g', 'missing'], (r) => { results = r; }));
  assert.deepEqual(results.map((r) => r.errorCode), [ErrorCode.NON_EMPTY_GROUP, ErrorCode.GROUP_ID_NOT_FOUND]);
  h.apply(h.shard.classicLeave(h.now, 'g', [{ memberId: a.memberId, groupInstanceId: null }]).effects);
  h.apply(h.shard.deleteGroups(h.now, ['g'], (r) => { results = r; }));
  assert.equal(results[0]!.errorCode, 0);
  assert.equal(h.state(), 'none');
  assert.equal(h.committed(), -1n);
});
