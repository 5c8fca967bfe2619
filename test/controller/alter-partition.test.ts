// AlterPartition (key 56) on the QuorumController: Kafka's validation order and errors, the
// PartitionChangeRecord a valid ISR change writes (partition epoch bumped, leader epoch kept), and
// the committed state it answers with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MetadataRecordType } from '../../src/metadata/index.js';
import { ErrorCode, type AlterPartitionRequest } from '../../src/protocol/index.js';
import { Driver } from './driver.js';

/** Three brokers and topic `t` with one partition on all three (ISR = replicas at creation). */
function cluster() {
  const d = new Driver();
  d.startBrokers(3);
  const created = d.createTopic('t', 1, 3);
  const p = () => d.controller.image.topics.getTopic('t')!.partitions.get(0)!;
  const epoch = (id: number) => d.controller.image.cluster.broker(id)!.epoch;
  /** An AlterPartition from the leader as it would send it (v3), with overrides. */
  const request = (isr: readonly number[], over: Partial<{ brokerId: number; brokerEpoch: bigint; leaderEpoch: number; partitionEpoch: number; topicId: string; partitionIndex: number; epochs: Map<number, bigint> }> = {}): AlterPartitionRequest => {
    const cur = p();
    const brokerId = over.brokerId ?? cur.leader;
    return {
      brokerId, brokerEpoch: over.brokerEpoch ?? epoch(brokerId),
      topics: [{
        topicName: 't', topicId: over.topicId ?? created.topicId,
        partitions: [{
          partitionIndex: over.partitionIndex ?? 0, leaderEpoch: over.leaderEpoch ?? cur.leaderEpoch, partitionEpoch: over.partitionEpoch ?? cur.partitionEpoch,
          leaderRecoveryState: 0, newIsr: [...isr], newIsrWithEpochs: isr.map((id) => ({ brokerId: id, brokerEpoch: over.epochs?.get(id) ?? d.controller.image.cluster.broker(id)?.epoch ?? -1n })),
        }],
      }],
    };
  };
  const alter = (r: AlterPartitionRequest, version = 3) => d.run(d.controller.alterPartition(r, version));
  return { d, p, epoch, request, alter, topicId: created.topicId };
}

test('a leader shrinking its ISR gets a PartitionChangeRecord: partition epoch bumped, leader epoch kept, the new state answered', () => {
  const { d, p, request, alter } = cluster();
  const before = p();
  const follower = before.replicas.find((id) => id !== before.leader)!;
  const isr = before.isr.filter((id) => id !== follower);
  const logged = d.log.length;
  const r = alter(request(isr));
  assert.equal(r.errorCode, ErrorCode.NONE);
  const answer = r.topics[0]!.partitions[0]!;
  assert.equal(answer.errorCode, ErrorCode.NONE);
  assert.deepEqual(answer.isr, isr);
  assert.equal(answer.leaderId, before.leader);
  assert.equal(answer.leaderEpoch, before.leaderEpoch);
  assert.equal(answer.partitionEpoch, before.partitionEpoch + 1);
  assert.equal(d.log.length, logged + 1);
  assert.equal(d.log.at(-1)!.record.type, MetadataRecordType.PartitionChangeRecord);
  assert.deepEqual(p().isr, isr);
  assert.equal(p().partitionEpoch, before.partitionEpoch + 1);

  // Expanding back writes another change.
  const back = alter(request(before.isr)).topics[0]!.partitions[0]!;
  assert.equal(back.errorCode, ErrorCode.NONE);
  assert.deepEqual([...back.isr].sort(), [...before.isr].sort());
  assert.equal(back.partitionEpoch, before.partitionEpoch + 2);
});

test('an ISR that is already the partition\'s writes nothing and is answered with the current state', () => {
  const { d, p, request, alter } = cluster();
  const logged = d.log.length;
  const answer = alter(request([...p().isr])).topics[0]!.partitions[0]!;
  assert.equal(answer.errorCode, ErrorCode.NONE);
  assert.equal(answer.partitionEpoch, p().partitionEpoch);
  assert.equal(d.log.length, logged);
});

test('validation: stale broker epoch, unknown topic or partition, epochs, sender not leader, ISR without the leader or outside the replicas', () => {
  const { d, p, epoch, request, alter } = cluster();
  const cur = p();
  const leader = cur.leader;
  const other = cur.replicas.find((id) => id !== leader)!;
  const code = (r: ReturnType<typeof alter>) => r.topics[0]!.partitions[0]!.errorCode;

  const stale = alter(request(cur.isr, { brokerEpoch: epoch(leader) - 1n }));
  assert.equal(stale.errorCode, ErrorCode.STALE_BROKER_EPOCH);
  assert.deepEqual(stale.topics, []);
  assert.equal(code(alter(request(cur.isr, { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ' }))), ErrorCode.UNKNOWN_TOPIC_ID);
  assert.equal(code(alter(request(cur.isr, { partitionIndex: 7 }))), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.equal(code(alter(request([leader], { leaderEpoch: cur.leaderEpoch - 1 }))), ErrorCode.FENCED_LEADER_EPOCH);
  assert.equal(code(alter(request([leader], { leaderEpoch: cur.leaderEpoch + 1 }))), ErrorCode.NOT_CONTROLLER, 'a leader epoch ahead of this controller');
  assert.equal(code(alter(request([leader], { brokerId: other }))), ErrorCode.INVALID_REQUEST, 'only the leader alters the ISR');
  assert.equal(code(alter(request([other]))), ErrorCode.INVALID_REQUEST, 'the ISR must hold the leader');
  assert.equal(code(alter(request([leader, 9]))), ErrorCode.INVALID_REQUEST, 'the ISR must be replicas');

  // A stale partition epoch: another change got there first.
  assert.equal(code(alter(request([leader, other]))), ErrorCode.NONE);
  assert.equal(code(alter(request([leader], { partitionEpoch: cur.partitionEpoch }))), ErrorCode.INVALID_UPDATE_VERSION);
  assert.ok(d.log.length > 0);
});

test('a fenced, shutting-down or re-registered replica may not join the ISR: INELIGIBLE_REPLICA (OPERATION_NOT_ATTEMPTED before v2)', () => {
  const { d, p, epoch, request, alter } = cluster();
  const cur = p();
  const [a, b] = cur.replicas.filter((id) => id !== cur.leader) as [number, number];
  assert.equal(alter(request([cur.leader])).topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE, 'shrunk to the leader');
  const code = (r: ReturnType<typeof alter>) => r.topics[0]!.partitions[0]!.errorCode;

  assert.equal(code(alter(request([cur.leader, a], { epochs: new Map([[a, epoch(a) + 100n]]) }))), ErrorCode.INELIGIBLE_REPLICA, 'epoch of another incarnation');
  // b misses its heartbeats and is fenced; the others keep their sessions.
  d.heartbeat(cur.leader, 20_000);
  d.heartbeat(a, 20_000);
  d.run(d.controller.maybeFenceStaleBrokers(20_000));
  assert.ok(d.controller.image.cluster.broker(b)!.fenced);
  assert.equal(p().leader, cur.leader);
  assert.equal(code(alter(request([cur.leader, b]))), ErrorCode.INELIGIBLE_REPLICA, 'fenced');
  d.heartbeat(a, 20_100, { wantShutDown: true });
  assert.ok(d.controller.image.cluster.broker(a)!.inControlledShutdown);
  assert.equal(code(alter(request([cur.leader, a]))), ErrorCode.INELIGIBLE_REPLICA, 'shutting down');
  assert.equal(code(alter(request([cur.leader, a]), 1)), ErrorCode.OPERATION_NOT_ATTEMPTED);
});

test('topics by name before v2: an unknown name is UNKNOWN_TOPIC_OR_PARTITION', () => {
  const { p, request, alter } = cluster();
  const r = request([...p().isr]);
  r.topics[0]!.topicName = 'nope';
  assert.equal(alter(r, 1).topics[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  r.topics[0]!.topicName = 't';
  assert.equal(alter(r, 1).topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
});
