// The transaction APIs over the wire, on both storage backends (in memory and on disk):
// AddPartitionsToTxn in its client (v0-3) and broker (v4+ verifyOnly, batched) forms with the
// unknown-topic answer, a transactional produce refused for a partition not in the transaction,
// the read_committed Fetch (stops at the last stable offset, lists the aborted transactions, which
// a client uses to drop their records), WriteTxnMarkers from outside, TxnOffsetCommit and
// OffsetFetch require_stable, and EndTxn retried.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerConnection } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatch, iterateBatches } from '../../src/records/index.js';
import { tempDataDir } from './process-helpers.js';
import { withTxnBroker } from './txn-broker.js';

const withBroker = (dataDir: string | undefined, fn: (c: BrokerConnection) => Promise<void>) => withTxnBroker('txn-wire', dataDir, fn);

async function init(c: BrokerConnection, transactionalId: string): Promise<{ producerId: bigint; producerEpoch: number }> {
  await c.send(ApiKey.FindCoordinator, 3, { key: transactionalId, keyType: 1, coordinatorKeys: [] });
  for (let i = 0; i < 100; i++) {
    const r = await c.send(ApiKey.InitProducerId, 4, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    if (r.errorCode === 0) return { producerId: r.producerId, producerEpoch: r.producerEpoch };
    assert.ok([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.CONCURRENT_TRANSACTIONS].includes(r.errorCode), `InitProducerId: ${r.errorCode}`);
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error('InitProducerId did not succeed');
}

const addV3 = (c: BrokerConnection, id: string, p: { producerId: bigint; producerEpoch: number }, topics: { name: string; partitions: number[] }[]) =>
  c.send(ApiKey.AddPartitionsToTxn, 3, { v3AndBelowTransactionalId: id, v3AndBelowProducerId: p.producerId, v3AndBelowProducerEpoch: p.producerEpoch, v3AndBelowTopics: topics, transactions: [] });

async function produceTxn(c: BrokerConnection, id: string, p: { producerId: bigint; producerEpoch: number }, partition: number, values: string[], baseSequence: number): Promise<number> {
  const records = await buildRecordBatch({ records: values.map((v) => ({ value: Buffer.from(v) })), isTransactional: true, producerId: Number(p.producerId), producerEpoch: p.producerEpoch, baseSequence });
  const r = await c.send(ApiKey.Produce, 9, { transactionalId: id, acks: -1, timeoutMs: 5000, topicData: [{ name: 't', partitionData: [{ index: partition, records }] }] });
  return r.responses[0].partitionResponses[0].errorCode;
}

async function fetch(c: BrokerConnection, partition: number, isolationLevel: number) {
  const r = await c.send(ApiKey.Fetch, 12, {
    replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic: 't', partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [], rackId: '',
  });
  return r.responses[0].partitions[0];
}

for (const backend of ['memory', 'disk'] as const) {
  test(`${backend}: AddPartitionsToTxn client and verifyOnly forms, a produce outside the transaction refused, read_committed Fetch with the LSO and aborted transactions`, async () => {
    await withBroker(backend === 'disk' ? tempDataDir() : undefined, async (c) => {
      const p = await init(c, 'w1');
      const unknown = await addV3(c, 'w1', p, [{ name: 't', partitions: [0] }, { name: 'nope', partitions: [0] }]);
      assert.deepEqual(unknown.resultsByTopicV3AndBelow.map((t: any) => [t.name, t.resultsByPartition[0].partitionErrorCode]),
        [['t', ErrorCode.OPERATION_NOT_ATTEMPTED], ['nope', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
      assert.equal(await produceTxn(c, 'w1', p, 0, ['early'], 0), ErrorCode.INVALID_TXN_STATE, 'not yet in the transaction');
      const added = await addV3(c, 'w1', p, [{ name: 't', partitions: [0] }]);
      assert.equal(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, 0);
      const verify = await c.send(ApiKey.AddPartitionsToTxn, 4, {
        transactions: [{ transactionalId: 'w1', producerId: p.producerId, producerEpoch: p.producerEpoch, verifyOnly: true, topics: [{ name: 't', partitions: [0, 1] }] }],
        v3AndBelowTransactionalId: '', v3AndBelowProducerId: 0n, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [],
      });
      assert.deepEqual(verify.resultsByTransaction[0].topicResults[0].resultsByPartition.map((x: any) => x.partitionErrorCode), [0, ErrorCode.TRANSACTION_ABORTABLE]);

      // Abort one transaction, then commit another: read_committed sees the aborted one listed.
      assert.equal(await produceTxn(c, 'w1', p, 0, ['a1', 'a2'], 0), 0);
      let f = await fetch(c, 0, 1);
      assert.deepEqual([f.highWatermark, f.lastStableOffset, f.records?.length ?? 0], [2n, 0n, 0], 'nothing past the LSO');
      assert.equal((await c.send(ApiKey.EndTxn, 3, { transactionalId: 'w1', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: false })).errorCode, 0);
      const settled = async () => { for (let i = 0; i < 100 && (await fetch(c, 0, 1)).lastStableOffset !== (await fetch(c, 0, 1)).highWatermark; i++) await new Promise((r) => setTimeout(r, 10)); };
      await settled();
      assert.equal(await addV3(c, 'w1', p, [{ name: 't', partitions: [0] }]).then((r: any) => r.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode), 0);
      assert.equal(await produceTxn(c, 'w1', p, 0, ['c1'], 2), 0);
      assert.equal((await c.send(ApiKey.EndTxn, 3, { transactionalId: 'w1', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: true })).errorCode, 0);
      await settled();
      f = await fetch(c, 0, 1);
      assert.deepEqual([f.highWatermark, f.lastStableOffset], [5n, 5n], 'two records, ABORT, one record, COMMIT');
      assert.deepEqual(f.abortedTransactions, [{ producerId: p.producerId, firstOffset: 0n }]);
      const batches = [...iterateBatches(f.records!)].map((b) => [b.baseOffset, b.isControl, b.isTransactional]);
      assert.deepEqual(batches, [[0, false, true], [2, true, true], [3, false, true], [4, true, true]]);
      const uncommitted = await fetch(c, 0, 0);
      assert.equal(uncommitted.abortedTransactions, null, 'read_uncommitted gets no aborted list');
      // A retried EndTxn of a completed commit is answered as done.
      assert.equal((await c.send(ApiKey.EndTxn, 3, { transactionalId: 'w1', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: true })).errorCode, 0);
      assert.equal((await c.send(ApiKey.EndTxn, 3, { transactionalId: 'w1', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: false })).errorCode, ErrorCode.INVALID_TXN_STATE);
    });
  });

  test(`${backend}: WriteTxnMarkers from outside closes an open transaction; a TxnOffsetCommit stays pending (require_stable) until its marker`, async () => {
    await withBroker(backend === 'disk' ? tempDataDir() : undefined, async (c) => {
      const p = await init(c, 'w2');
      await addV3(c, 'w2', p, [{ name: 't', partitions: [1] }]);
      assert.equal(await produceTxn(c, 'w2', p, 1, ['x'], 0), 0);
      const m = await c.send(ApiKey.WriteTxnMarkers, 1, { markers: [{ producerId: p.producerId, producerEpoch: p.producerEpoch, transactionResult: false, coordinatorEpoch: 0, topics: [{ name: 't', partitionIndexes: [1] }, { name: 'gone', partitionIndexes: [0] }] }] });
      assert.deepEqual(m.markers[0].topics.map((t: any) => [t.name, t.partitions[0].errorCode]), [['t', 0], ['gone', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
      const f = await fetch(c, 1, 1);
      assert.deepEqual([f.highWatermark, f.lastStableOffset, f.abortedTransactions], [2n, 2n, [{ producerId: p.producerId, firstOffset: 0n }]]);

      const q = await init(c, 'w3');
      assert.equal((await c.send(ApiKey.FindCoordinator, 3, { key: 'grp', keyType: 0, coordinatorKeys: [] })).errorCode, 0);
      const offsets = await c.send(ApiKey.AddOffsetsToTxn, 3, { transactionalId: 'w3', producerId: q.producerId, producerEpoch: q.producerEpoch, groupId: 'grp' });
      assert.equal(offsets.errorCode, 0);
      const commit = await c.send(ApiKey.TxnOffsetCommit, 3, {
        transactionalId: 'w3', groupId: 'grp', producerId: q.producerId, producerEpoch: q.producerEpoch, generationId: -1, memberId: '', groupInstanceId: null,
        topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
      });
      assert.equal(commit.topics[0].partitions[0].errorCode, 0);
      const read = (requireStable: boolean) => c.send(ApiKey.OffsetFetch, 7, { groupId: 'grp', topics: [{ name: 't', partitionIndexes: [0] }], groups: [], requireStable })
        .then((r: any) => [r.topics[0].partitions[0].committedOffset, r.topics[0].partitions[0].errorCode]);
      assert.deepEqual(await read(true), [-1n, ErrorCode.UNSTABLE_OFFSET_COMMIT]);
      assert.deepEqual(await read(false), [-1n, 0]);
      assert.equal((await c.send(ApiKey.EndTxn, 3, { transactionalId: 'w3', producerId: q.producerId, producerEpoch: q.producerEpoch, committed: true })).errorCode, 0);
      for (let i = 0; i < 100 && (await read(true))[1] !== 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(await read(true), [42n, 0]);
      const d = await c.send(ApiKey.DescribeTransactions, 0, { transactionalIds: ['w3', 'unknown-id'] });
      assert.deepEqual(d.transactionStates.map((s: any) => [s.transactionalId, s.errorCode]), [['w3', 0], ['unknown-id', ErrorCode.TRANSACTIONAL_ID_NOT_FOUND]]);
    });
  });
}

test('a transactional produce for a partition outside the transaction: TRANSACTION_ABORTABLE from Produce v11 (KIP-890), INVALID_TXN_STATE for v3-v10', async () => {
  await withBroker(undefined, async (c) => {
    const p = await init(c, 'w4');
    const produceAt = async (version: number, partition: number) => {
      const records = await buildRecordBatch({ records: [{ value: Buffer.from(`v${version}`) }], isTransactional: true, producerId: Number(p.producerId), producerEpoch: p.producerEpoch, baseSequence: 0 });
      const r = await c.send(ApiKey.Produce, version, { transactionalId: 'w4', acks: -1, timeoutMs: 5000, topicData: [{ name: 't', partitionData: [{ index: partition, records }] }] });
      return r.responses[0].partitionResponses[0].errorCode as number;
    };
    assert.deepEqual([await produceAt(3, 0), await produceAt(9, 0), await produceAt(10, 0), await produceAt(11, 0)],
      [ErrorCode.INVALID_TXN_STATE, ErrorCode.INVALID_TXN_STATE, ErrorCode.INVALID_TXN_STATE, ErrorCode.TRANSACTION_ABORTABLE]);
    assert.equal((await fetch(c, 0, 0)).highWatermark, 0n, 'nothing was written');
    // In the transaction, the same v11 produce is written.
    assert.equal((await addV3(c, 'w4', p, [{ name: 't', partitions: [0] }])).resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, 0);
    assert.equal(await produceAt(11, 0), 0);
  });
});
