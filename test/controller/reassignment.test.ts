// Partition reassignment on the QuorumController (Kafka's KRaft reassignment): the replica set
// widens to target ∪ current with adding/removing replicas, completes when the ISR (through
// AlterPartition) holds every target replica, moves the leader when it is removed, and cancels
// back to the replicas before it; errors as Kafka answers them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, type AlterPartitionRequest } from '../../src/protocol/index.js';
import { Driver } from './driver.js';
import { maybeCompleteReassignment, reassignmentReplicas } from '../../src/controller/reassignment.js';
import { MetadataDelta, MetadataImage, imageToRecords } from '../../src/metadata/index.js';

function cluster(brokers = 4) {
  const d = new Driver();
  d.startBrokers(brokers);
  const created = d.createTopic('t', 2, 3);
  const p = (partition = 0) => d.controller.image.topics.getTopic('t')!.partitions.get(partition)!;
  const reassign = (targets: { partition?: number; replicas: number[] | null; topic?: string }[]) => d.run(d.controller.alterPartitionReassignments({
    timeoutMs: 1000,
    topics: [{ name: targets[0]?.topic ?? 't', partitions: targets.map((t) => ({ partitionIndex: t.partition ?? 0, replicas: t.replicas })) }],
  }));
  const list = (topics: { name: string; partitionIndexes: number[] }[] | null = null) => d.run(d.controller.listPartitionReassignments({ timeoutMs: 1000, topics }));
  /** The leader's AlterPartition proposing `isr` (v3, current epochs). */
  const alterIsr = (isr: number[], partition = 0) => {
    const cur = p(partition);
    const request: AlterPartitionRequest = {
      brokerId: cur.leader, brokerEpoch: d.controller.image.cluster.broker(cur.leader)!.epoch,
      topics: [{
        topicName: 't', topicId: created.topicId,
        partitions: [{
          partitionIndex: partition, leaderEpoch: cur.leaderEpoch, partitionEpoch: cur.partitionEpoch, leaderRecoveryState: 0, newIsr: isr,
          newIsrWithEpochs: isr.map((id) => ({ brokerId: id, brokerEpoch: d.controller.image.cluster.broker(id)!.epoch })),
        }],
      }],
    };
    return d.run(d.controller.alterPartition(request, 3)).topics[0]!.partitions[0]!;
  };
  return { d, p, reassign, list, alterIsr };
}

test('replica arithmetic: target first, then the replicas being removed', () => {
  assert.deepEqual(reassignmentReplicas([1, 2, 3], [3, 4, 5]), { merged: [3, 4, 5, 1, 2], adding: [4, 5], removing: [1, 2] });
  assert.equal(maybeCompleteReassignment([3, 4, 1], [4], [1], [1, 3]), null, 'an adding replica outside the ISR keeps it running');
  assert.deepEqual(maybeCompleteReassignment([3, 4, 1], [4], [1], [1, 3, 4]), { replicas: [3, 4], isr: [3, 4] });
});

test('a reassignment adds the new replica, lists it (and a snapshot keeps it), and completes once the new replica joins the ISR: the removed one leaves, the leader stays', () => {
  const { d, p, reassign, list, alterIsr } = cluster();
  const before = p();
  const leader = before.leader;
  const spare = [1, 2, 3, 4].find((b) => !before.replicas.includes(b))!;
  const dropped = before.replicas.find((b) => b !== leader)!;
  const target = [...before.replicas.filter((b) => b !== dropped), spare];
  const r = reassign([{ replicas: target }]);
  assert.equal(r.errorCode, ErrorCode.NONE);
  assert.equal(r.responses[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  const during = p();
  assert.deepEqual(during.replicas, [...target, dropped]);
  assert.deepEqual(during.addingReplicas, [spare]);
  assert.deepEqual(during.removingReplicas, [dropped]);
  assert.deepEqual(during.isr, before.isr, 'the new replica is not in the ISR before it catches up');
  assert.equal(during.leaderEpoch, before.leaderEpoch, 'adding a replica does not bump the leader epoch');
  assert.deepEqual(list().topics, [{ name: 't', partitions: [{ partitionIndex: 0, replicas: [...target, dropped], addingReplicas: [spare], removingReplicas: [dropped] }] }]);
  assert.deepEqual(list([{ name: 't', partitionIndexes: [1] }, { name: 'nope', partitionIndexes: [0] }]).topics, [], 'partitions not moving and unknown topics are left out');
  // A metadata snapshot keeps the reassignment (a broker or controller loading it sees it running).
  const delta = new MetadataDelta(MetadataImage.EMPTY);
  for (const r of imageToRecords(d.controller.image)) delta.replay(r);
  const loaded = delta.apply(d.controller.image.provenance).topics.getTopic('t')!.partitions.get(0)!;
  assert.deepEqual([loaded.replicas, loaded.addingReplicas, loaded.removingReplicas], [during.replicas, during.addingReplicas, during.removingReplicas]);

  // The leader adds the caught-up replica to the ISR: the same record completes the reassignment.
  const answer = alterIsr([...during.isr, spare]);
  assert.equal(answer.errorCode, ErrorCode.NONE);
  const after = p();
  assert.deepEqual(after.replicas, target);
  assert.deepEqual([...after.isr].sort(), [...target].sort());
  assert.deepEqual(after.addingReplicas, []);
  assert.deepEqual(after.removingReplicas, []);
  assert.equal(after.leader, leader);
  assert.equal(after.leaderEpoch, before.leaderEpoch + 1, 'removing a replica fences it with a new leader epoch');
  assert.equal(answer.leaderEpoch, after.leaderEpoch);
  assert.deepEqual(list().topics, []);
});

test('a reassignment that removes the leader moves leadership to a target replica when it completes', () => {
  const { p, reassign, alterIsr } = cluster();
  const before = p();
  const spare = [1, 2, 3, 4].find((b) => !before.replicas.includes(b))!;
  const target = [...before.replicas.filter((b) => b !== before.leader), spare];
  reassign([{ replicas: target }]);
  const answer = alterIsr([...p().isr, spare]);
  assert.equal(answer.errorCode, ErrorCode.NEW_LEADER_ELECTED, 'the sender is no longer the leader');
  const after = p();
  assert.deepEqual(after.replicas, target);
  assert.equal(after.leader, target[0]);
  assert.ok(!after.isr.includes(before.leader));
  assert.equal(after.leaderEpoch, before.leaderEpoch + 1);
});

test('a reassignment within the ISR (reordering or shrinking) completes at once', () => {
  const { p, reassign } = cluster();
  const before = p();
  const reversed = [...before.replicas].reverse();
  reassign([{ replicas: reversed }]);
  assert.deepEqual(p().replicas, reversed);
  assert.deepEqual(p().addingReplicas, []);
  const two = reversed.slice(0, 2);
  reassign([{ replicas: two }]);
  assert.deepEqual(p().replicas, two);
  assert.deepEqual([...p().isr].sort(), [...two].sort());
  assert.deepEqual(p().removingReplicas, []);
});

test('cancelling reverts to the replicas before the reassignment; cancelling nothing is NO_REASSIGNMENT_IN_PROGRESS', () => {
  const { p, reassign, list } = cluster();
  const before = p();
  const spare = [1, 2, 3, 4].find((b) => !before.replicas.includes(b))!;
  reassign([{ replicas: [spare, ...before.replicas.slice(1)] }]);
  assert.equal(list().topics.length, 1);
  const r = reassign([{ replicas: null }]);
  assert.equal(r.responses[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  const after = p();
  // As with Kafka, the original replicas come back in the merged list's order.
  assert.deepEqual([...after.replicas].sort(), [...before.replicas].sort());
  assert.deepEqual([...after.isr].sort(), [...before.isr].sort());
  assert.deepEqual(after.addingReplicas, []);
  assert.deepEqual(after.removingReplicas, []);
  assert.equal(after.leader, before.leader);
  assert.deepEqual(list().topics, []);
  const again = reassign([{ replicas: null }]).responses[0]!.partitions[0]!;
  assert.equal(again.errorCode, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS);
});

test('invalid targets and unknown partitions are refused per partition, and the valid ones still go ahead', () => {
  const { d, p, reassign } = cluster();
  const logged = d.log.length;
  const r = reassign([
    { replicas: [] }, { replicas: [1, 1, 2] }, { replicas: [1, 2, 9] }, { partition: 7, replicas: [1, 2, 3] }, { partition: 1, replicas: [4, 3, 2] },
  ]).responses[0]!.partitions.map((x) => x.errorCode);
  assert.deepEqual(r, [ErrorCode.INVALID_REPLICA_ASSIGNMENT, ErrorCode.INVALID_REPLICA_ASSIGNMENT, ErrorCode.INVALID_REPLICA_ASSIGNMENT, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NONE]);
  assert.equal(d.log.length, logged + 1, 'one record, for the valid partition');
  assert.deepEqual(p(1).replicas.slice(0, 3), [4, 3, 2]);
  const unknown = reassign([{ topic: 'nope', replicas: [1, 2, 3] }]).responses[0]!.partitions[0]!;
  assert.equal(unknown.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
});
