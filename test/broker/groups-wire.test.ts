// The group APIs over the wire at their versions: FindCoordinator v0-6 (single and batched keys,
// the offsets topic created on first use), OffsetCommit v0-9 read back through OffsetFetch v0-9
// (multi-group v8+), the per-partition errors, ListGroups filters, DescribeGroups, OffsetDelete,
// DeleteGroups, and the JoinGroup/Heartbeat/LeaveGroup versions that differ in shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../src/node/index.js';
import { BrokerConnection } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { partitionForGroup } from '../../src/coordinator/index.js';

async function withBroker(fn: (c: BrokerConnection, port: number) => Promise<void>): Promise<void> {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config: parseBrokerConfig({ 'node.id': '1', 'group.initial.rebalance.delay.ms': '0' }) });
  const port = server.listeners[0]!.port;
  const c = await BrokerConnection.open({ host: '127.0.0.1', port, clientId: 'wire', requestTimeoutMs: 10_000 });
  try {
    await c.send(ApiKey.CreateTopics, 7, { topics: [{ name: 't', numPartitions: 3, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
    await fn(c, port);
  } finally {
    c.close();
    await server.close();
  }
}

const commitBody = (groupId: string, offset: bigint, topic = 't', metadata: string | null = 'm') => ({
  groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1n,
  topics: [{ name: topic, partitions: [{ partitionIndex: 1, committedOffset: offset, committedLeaderEpoch: 4, commitTimestamp: -1n, committedMetadata: metadata }] }],
});

test('FindCoordinator at every version names this broker; the offsets and transaction state topics are created with 50 compacted partitions', async () => {
  await withBroker(async (c, port) => {
    for (let v = 0; v <= 3; v++) {
      const r = await c.send(ApiKey.FindCoordinator, v, { key: 'g1', keyType: 0, coordinatorKeys: [] });
      assert.deepEqual([r.errorCode, r.nodeId, r.host, r.port], [0, 1, '127.0.0.1', port], `v${v}`);
    }
    for (let v = 4; v <= 6; v++) {
      const r = await c.send(ApiKey.FindCoordinator, v, { key: '', keyType: 0, coordinatorKeys: ['a', 'b'] });
      assert.deepEqual(r.coordinators.map((x: any) => [x.key, x.errorCode, x.nodeId, x.port]), [['a', 0, 1, port], ['b', 0, 1, port]], `v${v}`);
    }
    const txn = await c.send(ApiKey.FindCoordinator, 3, { key: 'tx', keyType: 1, coordinatorKeys: [] });
    assert.deepEqual([txn.errorCode, txn.nodeId, txn.port], [0, 1, port]);
    const emptyTxnId = await c.send(ApiKey.FindCoordinator, 3, { key: '', keyType: 1, coordinatorKeys: [] });
    assert.equal(emptyTxnId.errorCode, ErrorCode.INVALID_REQUEST);
    for (const topic of ['__consumer_offsets', '__transaction_state']) {
      const meta = await c.send(ApiKey.Metadata, 12, { topics: [{ name: topic, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
      assert.equal(meta.topics[0].partitions.length, 50, topic);
      const configs = await c.send(ApiKey.DescribeConfigs, 4, { resources: [{ resourceType: 2, resourceName: topic, configurationKeys: ['cleanup.policy'] }], includeSynonyms: false, includeDocumentation: false });
      assert.equal(configs.results[0].configs[0].value, 'compact', topic);
    }
  });
});

test('OffsetCommit v0-9 round-trips through OffsetFetch v1-9, with leader epoch from v5 and several groups at once from v8', async () => {
  await withBroker(async (c) => {
    await c.send(ApiKey.FindCoordinator, 0, { key: 'x', keyType: 0, coordinatorKeys: [] });
    for (let v = 0; v <= 9; v++) {
      const r = await c.send(ApiKey.OffsetCommit, v, commitBody(`g${v}`, BigInt(100 + v)));
      assert.equal(r.topics[0].partitions[0].errorCode, 0, `commit v${v}`);
    }
    for (let v = 1; v <= 7; v++) {
      const r = await c.send(ApiKey.OffsetFetch, v, { groupId: `g${v}`, topics: [{ name: 't', partitionIndexes: [1, 2] }], groups: [], requireStable: false });
      const [p1, p2] = r.topics[0].partitions;
      assert.equal(p1.committedOffset, BigInt(100 + v), `fetch v${v}`);
      assert.equal(p1.metadata, 'm');
      assert.equal(p1.committedLeaderEpoch, v >= 5 ? (v >= 6 ? 4 : -1) : -1, `leader epoch at v${v}`);
      assert.equal(p2.committedOffset, -1n, 'nothing committed there');
    }
    const all = await c.send(ApiKey.OffsetFetch, 7, { groupId: 'g9', topics: null, groups: [], requireStable: true });
    assert.deepEqual(all.topics.map((t: any) => [t.name, t.partitions.map((p: any) => p.committedOffset)]), [['t', [109n]]]);
    const multi = await c.send(ApiKey.OffsetFetch, 8, {
      groupId: '', topics: null, requireStable: false,
      groups: [{ groupId: 'g8', memberId: null, memberEpoch: -1, topics: null }, { groupId: 'g7', memberId: null, memberEpoch: -1, topics: [{ name: 't', partitionIndexes: [1] }] }, { groupId: 'nobody', memberId: null, memberEpoch: -1, topics: null }],
    });
    assert.deepEqual(multi.groups.map((g: any) => [g.groupId, g.errorCode, g.topics.map((t: any) => t.partitions[0].committedOffset)]), [['g8', 0, [108n]], ['g7', 0, [107n]], ['nobody', 0, []]]);
  });
});

test('OffsetCommit refuses unknown topics and oversized metadata per partition, and member commits to unknown groups', async () => {
  await withBroker(async (c) => {
    await c.send(ApiKey.FindCoordinator, 0, { key: 'x', keyType: 0, coordinatorKeys: [] });
    const unknown = await c.send(ApiKey.OffsetCommit, 8, commitBody('g', 1n, 'missing'));
    assert.equal(unknown.topics[0].partitions[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const big = await c.send(ApiKey.OffsetCommit, 8, commitBody('g', 1n, 't', 'x'.repeat(5000)));
    assert.equal(big.topics[0].partitions[0].errorCode, ErrorCode.OFFSET_METADATA_TOO_LARGE);
    const member = await c.send(ApiKey.OffsetCommit, 9, { ...commitBody('no-such-group', 1n), generationIdOrMemberEpoch: 3, memberId: 'm' });
    assert.equal(member.topics[0].partitions[0].errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
    const old = await c.send(ApiKey.OffsetCommit, 8, { ...commitBody('no-such-group', 1n), generationIdOrMemberEpoch: 3, memberId: 'm' });
    assert.equal(old.topics[0].partitions[0].errorCode, ErrorCode.ILLEGAL_GENERATION);
  });
});

test('JoinGroup v0 joins at once, v4+ asks for the member id; Heartbeat and LeaveGroup v0 and v3 batches answer in their shapes', async () => {
  await withBroker(async (c) => {
    await c.send(ApiKey.FindCoordinator, 0, { key: 'x', keyType: 0, coordinatorKeys: [] });
    const protocols = [{ name: 'range', metadata: Buffer.from([0, 0, 0, 0, 0, 0, 0, 0]) }];
    const join0 = await c.send(ApiKey.JoinGroup, 0, { groupId: 'j0', sessionTimeoutMs: 10_000, memberId: '', protocolType: 'consumer', protocols });
    assert.deepEqual([join0.errorCode, join0.generationId, join0.leader === join0.memberId], [0, 1, true]);
    const sync0 = await c.send(ApiKey.SyncGroup, 0, { groupId: 'j0', generationId: 1, memberId: join0.memberId, assignments: [{ memberId: join0.memberId, assignment: Buffer.from('a') }] });
    assert.equal(sync0.assignment.toString(), 'a');
    assert.equal((await c.send(ApiKey.Heartbeat, 0, { groupId: 'j0', generationId: 1, memberId: join0.memberId })).errorCode, 0);
    assert.equal((await c.send(ApiKey.Heartbeat, 0, { groupId: 'j0', generationId: 0, memberId: join0.memberId })).errorCode, ErrorCode.ILLEGAL_GENERATION);
    const described = await c.send(ApiKey.DescribeGroups, 5, { groups: ['j0', 'missing'], includeAuthorizedOperations: false });
    assert.deepEqual(described.groups.map((g: any) => [g.groupId, g.groupState, g.protocolData, g.members.length]), [['j0', 'Stable', 'range', 1], ['missing', 'Dead', '', 0]]);
    assert.equal(described.groups[0].members[0].clientId, 'wire');
    assert.equal(described.groups[0].members[0].clientHost, '/127.0.0.1');
    const listed = await c.send(ApiKey.ListGroups, 5, { statesFilter: ['stable'], typesFilter: ['classic'] });
    assert.deepEqual(listed.groups.map((g: any) => [g.groupId, g.groupState, g.groupType, g.protocolType]), [['j0', 'Stable', 'classic', 'consumer']]);
    assert.equal((await c.send(ApiKey.ListGroups, 4, { statesFilter: ['Empty'], typesFilter: [] })).groups.length, 0);
    const leave0 = await c.send(ApiKey.LeaveGroup, 0, { groupId: 'j0', memberId: join0.memberId });
    assert.equal(leave0.errorCode, 0);
    const join5 = await c.send(ApiKey.JoinGroup, 5, { groupId: 'j5', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols });
    assert.equal(join5.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
    const again = await c.send(ApiKey.JoinGroup, 5, { groupId: 'j5', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: join5.memberId, groupInstanceId: null, protocolType: 'consumer', protocols });
    assert.equal(again.errorCode, 0);
    const leave3 = await c.send(ApiKey.LeaveGroup, 3, { groupId: 'j5', members: [{ memberId: join5.memberId, groupInstanceId: null }, { memberId: 'ghost', groupInstanceId: null }] });
    assert.deepEqual(leave3.members.map((m: any) => m.errorCode), [0, ErrorCode.UNKNOWN_MEMBER_ID]);
    const deleted = await c.send(ApiKey.DeleteGroups, 2, { groupsNames: ['j0', 'j5', 'missing'] });
    assert.deepEqual(deleted.results.map((r: any) => r.errorCode), [0, 0, ErrorCode.GROUP_ID_NOT_FOUND]);
  });
});

test('OffsetDelete removes offsets of an empty group; unknown groups and partitions are reported', async () => {
  await withBroker(async (c) => {
    await c.send(ApiKey.FindCoordinator, 0, { key: 'x', keyType: 0, coordinatorKeys: [] });
    await c.send(ApiKey.OffsetCommit, 8, commitBody('od', 5n));
    const r = await c.send(ApiKey.OffsetDelete, 0, { groupId: 'od', topics: [{ name: 't', partitions: [{ partitionIndex: 1 }, { partitionIndex: 9 }] }] });
    assert.deepEqual([r.errorCode, r.topics[0].partitions.map((p: any) => p.errorCode)], [0, [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
    const after = await c.send(ApiKey.OffsetFetch, 7, { groupId: 'od', topics: [{ name: 't', partitionIndexes: [1] }], groups: [], requireStable: false });
    assert.equal(after.topics[0].partitions[0].committedOffset, -1n);
    const missing = await c.send(ApiKey.OffsetDelete, 0, { groupId: 'never', topics: [{ name: 't', partitions: [{ partitionIndex: 1 }] }] });
    assert.equal(missing.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  });
});

test('group ids map to partitions as Kafka computes them (abs(String.hashCode) % 50)', () => {
  assert.equal(partitionForGroup('hello', 50), 99162322 % 50);
  // "polygenelubricants".hashCode() is Integer.MIN_VALUE, which Kafka's Utils.abs maps to 0.
  assert.equal(partitionForGroup('polygenelubricants', 50), 0);
  assert.equal(partitionForGroup('', 50), 0);
});
