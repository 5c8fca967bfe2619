// AlterPartitionManager: what it sends (AlterPartition v3 with topic ids and broker epochs, the
// local broker's own epoch filled in), one request at a time, retries of top-level errors and of
// partitions answered with an error Kafka retries, and no resend of a proposal the metadata answered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AlterPartitionManager, Partition, type IsrChangeResult, type Scheduler } from '../../src/replication/index.js';
import { ErrorCode, type AlterPartitionRequest, type AlterPartitionResponse } from '../../src/protocol/index.js';
import { storageLog } from './helpers.js';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

class ManualScheduler implements Scheduler {
  private timers: { fn: () => void; cancelled: boolean }[] = [];
  schedule(_delayMs: number, fn: () => void) {
    const t = { fn, cancelled: false };
    this.timers.push(t);
    return { cancel: () => { t.cancelled = true; } };
  }
  fireAll(): void {
    const due = this.timers.filter((t) => !t.cancelled);
    this.timers = [];
    for (const t of due) t.fn();
  }
}

/** A partition led by broker 1 on [1, 2, 3], ISR [1, 2], with follower 3 caught up: it proposes [1, 2, 3]. */
function expanding() {
  const p = new Partition('t', 0, storageLog(), -1, -1, 1, 1);
  p.topicId = TOPIC_ID;
  p.makeLeader({ leader: 1, leaderEpoch: 4, partitionEpoch: 7, isr: [1, 2], replicas: [1, 2, 3] }, 0);
  p.updateFollowerFetchState(3, 300n, 0, 0, 0, 0);
  const proposal = p.maybeExpandIsr(3, () => 300n);
  assert.ok(proposal !== null);
  return { p, proposal };
}

test('a proposal goes out as AlterPartition v3: topic id, epochs, the ISR with broker epochs (the local one filled in)', async () => {
  const sent: AlterPartitionRequest[] = [];
  const scheduler = new ManualScheduler();
  const results: IsrChangeResult[] = [];
  const m = new AlterPartitionManager({
    brokerId: 1, brokerEpoch: () => 100n, scheduler, retryBackoffMs: 100,
    send: async (r) => { sent.push(r); return { throttleTimeMs: 0, errorCode: 0, topics: [{ topicName: '', topicId: TOPIC_ID, partitions: [{ partitionIndex: 0, errorCode: 0, leaderId: 1, leaderEpoch: 4, isr: [1, 2, 3], leaderRecoveryState: 0, partitionEpoch: 8 }] }] }; },
  });
  const { proposal } = expanding();
  m.submit(proposal, (r) => results.push(r));
  await new Promise((r) => setImmediate(r));
  assert.equal(sent.length, 1);
  assert.equal(sent[0]!.brokerId, 1);
  assert.equal(sent[0]!.brokerEpoch, 100n);
  const t = sent[0]!.topics[0]!;
  assert.equal(t.topicId, TOPIC_ID);
  assert.deepEqual(t.partitions[0]!.newIsrWithEpochs, [{ brokerId: 1, brokerEpoch: 100n }, { brokerId: 2, brokerEpoch: -1n }, { brokerId: 3, brokerEpoch: 300n }]);
  assert.equal(t.partitions[0]!.leaderEpoch, 4);
  assert.equal(t.partitions[0]!.partitionEpoch, 7);
  assert.deepEqual(results.map((r) => r.partitionEpoch), [8]);
});

test('NOT_CONTROLLER and a failed send are retried after the backoff; a proposal the metadata answered meanwhile is not sent again', async () => {
  const answers: (() => Promise<AlterPartitionResponse>)[] = [
    async () => ({ throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, topics: [] }),
    async () => { throw new Error('connection reset'); },
    async () => ({ throttleTimeMs: 0, errorCode: 0, topics: [{ topicName: '', topicId: TOPIC_ID, partitions: [{ partitionIndex: 0, errorCode: ErrorCode.INVALID_UPDATE_VERSION, leaderId: -1, leaderEpoch: -1, isr: [], leaderRecoveryState: 0, partitionEpoch: -1 }] }] }),
  ];
  let sent = 0;
  const scheduler = new ManualScheduler();
  const results: IsrChangeResult[] = [];
  const m = new AlterPartitionManager({ brokerId: 1, brokerEpoch: () => 100n, scheduler, retryBackoffMs: 100, send: () => answers[sent++]!() });
  const { p, proposal } = expanding();
  m.submit(proposal, (r) => results.push(r));
  await new Promise((r) => setImmediate(r));
  assert.equal(sent, 1);
  scheduler.fireAll();
  await new Promise((r) => setImmediate(r));
  assert.equal(sent, 2, 'retried after NOT_CONTROLLER');
  scheduler.fireAll();
  await new Promise((r) => setImmediate(r));
  assert.equal(sent, 3, 'retried after the failed send');
  assert.deepEqual(results.map((r) => r.errorCode), [ErrorCode.INVALID_UPDATE_VERSION], 'a partition error the partition handles');
  assert.ok(p.pendingIsrChange !== null, 'INVALID_UPDATE_VERSION waits for the metadata');

  m.close();
});

test('a proposal refused with NOT_CONTROLLER is not sent again once the metadata has answered it', async () => {
  let sent = 0;
  const scheduler = new ManualScheduler();
  const m = new AlterPartitionManager({
    brokerId: 1, brokerEpoch: () => 100n, scheduler, retryBackoffMs: 100,
    send: async () => { sent++; return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, topics: [] }; },
  });
  const { p, proposal } = expanding();
  m.submit(proposal, () => assert.fail('no answer expected'));
  await new Promise((r) => setImmediate(r));
  assert.equal(sent, 1);
  // The change was made after all (the answer was lost): the metadata shows it.
  p.makeLeader({ leader: 1, leaderEpoch: 4, partitionEpoch: 8, isr: [1, 2, 3], replicas: [1, 2, 3] }, 0);
  assert.equal(p.pendingIsrChange, null);
  assert.deepEqual(p.isr, [1, 2, 3]);
  scheduler.fireAll();
  await new Promise((r) => setImmediate(r));
  assert.equal(sent, 1);
  m.close();
});
