// KIP-848 consumer groups on the shard alone: joining, epochs, the server-side assignors,
// revoke-before-assign reconciliation sequences, leaving, session expiry, static members, commit
// fencing by member epoch, and replay of the written records into a fresh shard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, type ConsumerGroupHeartbeatResponse } from '../../src/protocol/index.js';
import { GroupCoordinatorShard, defaultGroupConfig, encodeGroupRecord, decodeGroupRecord, consumerGroupState, type Effects, type GroupRecord, type HeartbeatParams, type TopicsSnapshot, type ConsumerGroup } from '../../src/coordinator/index.js';

/** Topic ids are UUIDs on the wire and in the records: one per test topic name. */
const idOf = (name: string) => Buffer.alloc(16, name.charCodeAt(0)).toString('base64url');
const topics = (counts: Record<string, number>): TopicsSnapshot => ({
  byName: (n) => (n in counts ? { id: idOf(n), partitions: counts[n]! } : undefined),
  nameOf: (id) => Object.keys(counts).find((n) => idOf(n) === id),
  names: () => Object.keys(counts),
});

class Harness {
  now = 0;
  written: GroupRecord[] = [];
  topics = topics({ t: 6 });
  shard = new GroupCoordinatorShard({ ...defaultGroupConfig, consumerSessionTimeoutMs: 45_000 }, () => `uuid${this.written.length}`);
  constructor() { this.apply(this.shard.onLoaded(0)); }
  apply(e: Effects): void {
    for (const r of e.records) {
      const bytes = encodeGroupRecord(r);
      const back = decodeGroupRecord(bytes.key, bytes.value)!;
      this.written.push(back);
      this.shard.replay(back);
    }
    for (const r of e.replies) r.send();
  }
  hb(p: Partial<HeartbeatParams> & { memberId: string; memberEpoch: number }): ConsumerGroupHeartbeatResponse {
    let out: ConsumerGroupHeartbeatResponse | undefined;
    const params: HeartbeatParams = {
      groupId: 'cg', instanceId: null, rackId: null, rebalanceTimeoutMs: p.memberEpoch === 0 ? 30_000 : -1, subscribedTopicNames: p.memberEpoch === 0 ? ['t'] : null,
      subscribedTopicRegex: null, serverAssignor: null, topicPartitions: p.memberEpoch === 0 ? [] : null, ...p,
    };
    this.apply(this.shard.consumerHeartbeat(this.now, params, { clientId: 'c', clientHost: '/h', apiVersion: 1 }, this.topics, (r) => { out = r; }));
    return out!;
  }
  /** A heartbeat reporting exactly what the member owns now. */
  owning(memberId: string, memberEpoch: number, owned: number[]): ConsumerGroupHeartbeatResponse {
    return this.hb({ memberId, memberEpoch, topicPartitions: [{ topicId: idOf('t'), partitions: owned }] });
  }
  group(): ConsumerGroup { return this.shard.groups.get('cg') as ConsumerGroup; }
  advance(ms: number): void { this.now += ms; this.apply(this.shard.tick(this.now)); }
}

const partitionsOf = (r: ConsumerGroupHeartbeatResponse) => r.assignment?.topicPartitions.find((t) => t.topicId === idOf('t'))?.partitions ?? null;

test('the first member joins at epoch 1 with every partition', () => {
  const h = new Harness();
  const r = h.hb({ memberId: 'a', memberEpoch: 0 });
  assert.equal(r.errorCode, 0);
  assert.equal(r.memberId, 'a');
  assert.equal(r.memberEpoch, 1);
  assert.deepEqual(partitionsOf(r), [0, 1, 2, 3, 4, 5]);
  assert.equal(consumerGroupState(h.group()), 'Stable');
});

test('a second member: the first revokes before the second gets anything, then both reach the new epoch', () => {
  const h = new Harness();
  h.hb({ memberId: 'a', memberEpoch: 0 });
  const b1 = h.hb({ memberId: 'b', memberEpoch: 0 });
  assert.equal(b1.memberEpoch, 2, 'b is at the new group epoch');
  assert.deepEqual(b1.assignment, { topicPartitions: [] }, 'its partitions are still owned by a');
  assert.equal(consumerGroupState(h.group()), 'Reconciling');
  const a1 = h.owning('a', 1, [0, 1, 2, 3, 4, 5]);
  assert.equal(a1.memberEpoch, 1, 'a stays at epoch 1 until it has revoked');
  const kept = partitionsOf(a1)!;
  assert.equal(kept.length, 3);
  const b2 = h.owning('b', 2, []);
  assert.deepEqual(partitionsOf(b2), null, 'still nothing to give b');
  const a2 = h.owning('a', 1, kept);
  assert.equal(a2.memberEpoch, 2, 'a confirmed the revocation');
  const b3 = h.owning('b', 2, []);
  assert.deepEqual([...partitionsOf(b3)!, ...kept].sort(), [0, 1, 2, 3, 4, 5]);
  h.owning('b', 2, partitionsOf(b3)!);
  assert.equal(consumerGroupState(h.group()), 'Stable');
});

test('a member that leaves (epoch -1) hands its partitions to the others at a new epoch', () => {
  const h = new Harness();
  h.hb({ memberId: 'a', memberEpoch: 0 });
  h.hb({ memberId: 'b', memberEpoch: 0 });
  const kept = partitionsOf(h.owning('a', 1, [0, 1, 2, 3, 4, 5]))!;
  h.owning('a', 1, kept);
  const bParts = partitionsOf(h.owning('b', 2, []))!;
  h.owning('b', 2, bParts);
  const left = h.hb({ memberId: 'b', memberEpoch: -1 });
  assert.deepEqual([left.errorCode, left.memberEpoch], [0, -1]);
  const a = h.owning('a', 2, kept);
  assert.equal(a.memberEpoch, 3);
  assert.deepEqual(partitionsOf(a), [0, 1, 2, 3, 4, 5]);
});

test('a member that stops heartbeating is fenced after the session timeout; its old epoch is refused', () => {
  const h = new Harness();
  h.hb({ memberId: 'a', memberEpoch: 0 });
  h.hb({ memberId: 'b', memberEpoch: 0 });
  for (let i = 0; i < 10; i++) { h.advance(5000); h.hb({ memberId: 'b', memberEpoch: 2 }); }
  assert.equal(h.group().members.has('a'), false);
  assert.equal(h.hb({ memberId: 'a', memberEpoch: 1 }).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  const b = h.owning('b', 2, []);
  assert.deepEqual(partitionsOf(b), [0, 1, 2, 3, 4, 5]);
  assert.equal(h.hb({ memberId: 'b', memberEpoch: 99 }).errorCode, ErrorCode.FENCED_MEMBER_EPOCH);
});

test('a static member that leaves with epoch -2 and comes back under a new id keeps its partitions without a new epoch', () => {
  const h = new Harness();
  const a = h.hb({ memberId: 'a', memberEpoch: 0, instanceId: 'i-a' });
  const epoch = h.group().groupEpoch;
  assert.equal(h.hb({ memberId: 'a', memberEpoch: -2, instanceId: 'i-a' }).errorCode, 0);
  assert.equal(h.hb({ memberId: 'other', memberEpoch: 0, instanceId: 'i-a' }).errorCode === 0, true);
  assert.equal(h.group().groupEpoch, epoch, 'no rebalance');
  const again = h.group().members.get('other')!;
  assert.deepEqual(again.assigned.get(idOf('t')), partitionsOf(a));
  const dup = h.hb({ memberId: 'third', memberEpoch: 0, instanceId: 'i-a' });
  assert.equal(dup.errorCode, ErrorCode.UNRELEASED_INSTANCE_ID, 'the instance id is in use');
});

test('range and uniform assignors; an unknown assignor and bad first heartbeats are refused', () => {
  const h = new Harness();
  h.topics = topics({ t: 4, u: 4 });
  assert.equal(h.hb({ memberId: 'a', memberEpoch: 0, serverAssignor: 'sticky' }).errorCode, ErrorCode.UNSUPPORTED_ASSIGNOR);
  assert.equal(h.hb({ memberId: 'a', memberEpoch: 0, subscribedTopicNames: null }).errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(h.hb({ memberId: '', memberEpoch: 0 }).errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(h.hb({ memberId: 'a', memberEpoch: 0, subscribedTopicNames: null, subscribedTopicRegex: '(' }).errorCode, ErrorCode.INVALID_REGULAR_EXPRESSION);
  const a = h.hb({ memberId: 'a', memberEpoch: 0, subscribedTopicNames: null, subscribedTopicRegex: '[tu]', serverAssignor: 'range' });
  assert.deepEqual(a.assignment!.topicPartitions.map((t) => [t.topicId, t.partitions]).sort(), [[idOf('t'), [0, 1, 2, 3]], [idOf('u'), [0, 1, 2, 3]]]);
  const d = h.shard.describeConsumerGroup('cg', h.topics);
  assert.equal(d.assignorName, 'range');
  assert.deepEqual(d.members[0]!.assignment.topicPartitions.map((t) => t.topicName).sort(), ['t', 'u']);
});

test('offset commits from consumer-group members are fenced by member epoch', () => {
  const h = new Harness();
  h.hb({ memberId: 'a', memberEpoch: 0 });
  const commit = (memberId: string, epoch: number) => {
    let code = -1;
    h.apply(h.shard.commitOffsets(h.now, { groupId: 'cg', generationIdOrMemberEpoch: epoch, memberId, groupInstanceId: null, retentionTimeMs: -1,
      topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }] },
    { clientId: 'c', clientHost: '/h', apiVersion: 9 }, (r) => { code = r[0]!.partitions[0]!.errorCode; }));
    return code;
  };
  assert.equal(commit('a', 1), 0);
  assert.equal(commit('a', 0), ErrorCode.STALE_MEMBER_EPOCH);
  assert.equal(commit('a', 2), ErrorCode.FENCED_MEMBER_EPOCH);
  assert.equal(commit('z', 1), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(h.shard.fetchOffsets('cg', null, { memberId: 'a', memberEpoch: 0 }).errorCode, ErrorCode.STALE_MEMBER_EPOCH);
});

test('an empty classic group is upgraded on the first consumer heartbeat; a non-empty one is refused', () => {
  const h = new Harness();
  h.apply(h.shard.classicJoin(0, { groupId: 'cg', memberId: '', groupInstanceId: 'x', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }], reason: null }, { clientId: 'c', clientHost: '/h', apiVersion: 9 }, () => {}));
  assert.equal(h.hb({ memberId: 'a', memberEpoch: 0 }).errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  h.apply(h.shard.classicLeave(0, 'cg', [{ memberId: '', groupInstanceId: 'x' }]).effects);
  h.advance(5000);
  const r = h.hb({ memberId: 'a', memberEpoch: 0 });
  assert.equal(r.errorCode, 0);
  assert.equal(h.group().kind, 'consumer');
});

test('replaying the records rebuilds the consumer group: epochs, targets and assignments', () => {
  const h = new Harness();
  h.hb({ memberId: 'a', memberEpoch: 0 });
  h.hb({ memberId: 'b', memberEpoch: 0 });
  h.owning('a', 1, [0, 1, 2, 3, 4, 5]);
  const fresh = new GroupCoordinatorShard(defaultGroupConfig, () => 'x');
  for (const r of h.written) fresh.replay(r);
  fresh.onLoaded(0);
  const g = fresh.groups.get('cg') as ConsumerGroup;
  const orig = h.group();
  assert.equal(g.groupEpoch, orig.groupEpoch);
  assert.equal(g.assignmentEpoch, orig.assignmentEpoch);
  for (const id of ['a', 'b']) {
    assert.deepEqual(g.members.get(id)!.assigned, orig.members.get(id)!.assigned);
    assert.deepEqual(g.members.get(id)!.pendingRevocation, orig.members.get(id)!.pendingRevocation);
    assert.deepEqual(g.members.get(id)!.memberEpoch, orig.members.get(id)!.memberEpoch);
    assert.deepEqual(g.targetAssignment.get(id), orig.targetAssignment.get(id));
  }
  let results: { errorCode: number }[] = [];
  h.hb({ memberId: 'a', memberEpoch: -1 });
  h.hb({ memberId: 'b', memberEpoch: -1 });
  h.apply(h.shard.deleteGroups(h.now, ['cg'], (r) => { results = r; }));
  assert.equal(results[0]!.errorCode, 0);
  assert.equal(h.shard.groups.has('cg'), false);
});
