// Transaction version 2 (KIP-890 part 2) over the wire with the project's own client, on both
// storage backends: ApiVersions finalizes transaction.version 2 and offers EndTxn v5 / Produce v12 /
// TxnOffsetCommit v5; a Produce v12 adds its partition to the transaction without AddPartitionsToTxn;
// EndTxn v5 answers the bumped epoch and the markers carry it, so a late write of the old epoch is
// refused (INVALID_PRODUCER_EPOCH, both on a partition of the ended transaction and on a new one)
// and never reaches the log; a retried EndTxn v5 is answered with the same producer; TxnOffsetCommit
// v5 adds the group's offsets partition itself; AddPartitionsToTxn v5 (the broker form) adds as
// version 2. A version 1 client on the same broker keeps its epoch (EndTxn v3).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerConnection } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatch, iterateBatches } from '../../src/records/index.js';
import { tempDataDir } from './process-helpers.js';
import { withTxnBroker } from './txn-broker.js';

type Producer = { producerId: bigint; producerEpoch: number };

const withBroker = (dataDir: string | undefined, fn: (c: BrokerConnection) => Promise<void>) => withTxnBroker('txn-v2-wire', dataDir, fn);

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retries what a client retries (coordinator loading, a transaction still completing). */
async function retrying<T extends { errorCode: number }>(send: () => Promise<T>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const r = await send();
    if (r.errorCode !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS && r.errorCode !== ErrorCode.CONCURRENT_TRANSACTIONS) return r;
    await pause(10);
  }
  throw new Error('still retriable after 200 attempts');
}

async function init(c: BrokerConnection, transactionalId: string): Promise<Producer> {
  await c.send(ApiKey.FindCoordinator, 3, { key: transactionalId, keyType: 1, coordinatorKeys: [] });
  const r = await retrying(() => c.send(ApiKey.InitProducerId, 5, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }));
  assert.equal(r.errorCode, 0);
  return { producerId: r.producerId, producerEpoch: r.producerEpoch };
}

async function produce(c: BrokerConnection, version: number, id: string, p: Producer, partition: number, values: string[], baseSequence: number): Promise<number> {
  const records = await buildRecordBatch({ records: values.map((v) => ({ value: Buffer.from(v) })), isTransactional: true, producerId: Number(p.producerId), producerEpoch: p.producerEpoch, baseSequence });
  const r = await c.send(ApiKey.Produce, version, { transactionalId: id, acks: -1, timeoutMs: 5000, topicData: [{ name: 't', partitionData: [{ index: partition, records }] }] });
  return r.responses[0].partitionResponses[0].errorCode;
}

const endTxn = (c: BrokerConnection, version: number, id: string, p: Producer, committed: boolean) =>
  c.send(ApiKey.EndTxn, version, { transactionalId: id, producerId: p.producerId, producerEpoch: p.producerEpoch, committed })
    .then((r: any) => ({ errorCode: r.errorCode as number, producerId: r.producerId as bigint, producerEpoch: r.producerEpoch as number }));

async function fetch(c: BrokerConnection, partition: number) {
  const r = await c.send(ApiKey.Fetch, 12, {
    replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 1, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic: 't', partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [], rackId: '',
  });
  return r.responses[0].partitions[0];
}

/** Waits until the markers are in (the last stable offset reaches the high watermark). */
async function settled(c: BrokerConnection, partition: number) {
  for (let i = 0; i < 200; i++) {
    const f = await fetch(c, partition);
    if (f.lastStableOffset === f.highWatermark) return f;
    await pause(10);
  }
  throw new Error(`partition ${partition} did not settle`);
}

/** [offset, control, producer epoch] of every batch read_committed returns. */
const batchesOf = (f: { records: Buffer | null }) => [...iterateBatches(f.records ?? Buffer.alloc(0))].map((b) => [b.baseOffset, b.isControl, b.producerEpoch]);

test('ApiVersions finalizes transaction.version 2 (supported 0-2, left out of v3\'s supported list) and offers the version 2 APIs', async () => {
  await withBroker(undefined, async (c) => {
    const v4 = await c.send(ApiKey.ApiVersions, 4, { clientSoftwareName: 'txn-v2-wire', clientSoftwareVersion: '1' });
    assert.deepEqual(v4.finalizedFeatures.map((f: any) => [f.name, f.minVersionLevel, f.maxVersionLevel]), [['transaction.version', 2, 2], ['share.version', 1, 1], ['eligible.leader.replicas.version', 1, 1]]);
    assert.ok(v4.finalizedFeaturesEpoch >= 0n);
    assert.deepEqual(v4.supportedFeatures.map((f: any) => [f.name, f.minVersion, f.maxVersion]), [['transaction.version', 0, 2], ['share.version', 0, 1], ['eligible.leader.replicas.version', 0, 1]]);
    const max = (key: number) => v4.apiKeys.find((k: any) => k.apiKey === key)?.maxVersion;
    assert.deepEqual([max(ApiKey.EndTxn), max(ApiKey.Produce), max(ApiKey.TxnOffsetCommit), max(ApiKey.AddPartitionsToTxn)], [5, 12, 5, 5]);
    const v3 = await c.send(ApiKey.ApiVersions, 3, { clientSoftwareName: 'txn-v2-wire', clientSoftwareVersion: '1' });
    assert.deepEqual(v3.supportedFeatures, []);
    assert.deepEqual(v3.finalizedFeatures.map((f: any) => f.name), ['transaction.version', 'share.version', 'eligible.leader.replicas.version']);
  });
});

test('a durable cluster keeps transaction.version 2 across a restart', async () => {
  const dir = tempDataDir();
  await withBroker(dir, async () => {});
  await withBroker(dir, async (c) => {
    const r = await c.send(ApiKey.ApiVersions, 4, { clientSoftwareName: 'txn-v2-wire', clientSoftwareVersion: '1' });
    assert.deepEqual(r.finalizedFeatures.map((f: any) => [f.name, f.maxVersionLevel]), [['transaction.version', 2], ['share.version', 1], ['eligible.leader.replicas.version', 1]]);
  });
});

for (const backend of ['memory', 'disk'] as const) {
  test(`${backend}: Produce v12 joins the transaction itself; EndTxn v5 bumps the epoch, its markers carry it, and a late write of the old epoch is refused`, async () => {
    await withBroker(backend === 'disk' ? tempDataDir() : undefined, async (c) => {
      const p = await init(c, 'v2');
      assert.equal(await produce(c, 12, 'v2', p, 0, ['a1', 'a2'], 0), 0, 'no AddPartitionsToTxn needed');
      const d = await c.send(ApiKey.DescribeTransactions, 0, { transactionalIds: ['v2'] });
      assert.deepEqual([d.transactionStates[0].transactionState, d.transactionStates[0].topics], ['Ongoing', [{ topic: 't', partitions: [0] }]]);
      const ended = await endTxn(c, 5, 'v2', p, true);
      assert.deepEqual(ended, { errorCode: 0, producerId: p.producerId, producerEpoch: p.producerEpoch + 1 });
      let f = await settled(c, 0);
      assert.deepEqual(batchesOf(f), [[0, false, p.producerEpoch], [2, true, p.producerEpoch + 1]], 'the COMMIT marker has the bumped epoch');

      // The zombie: the old epoch writes again, to the ended transaction's partition and to a new one.
      assert.equal(await produce(c, 12, 'v2', p, 0, ['late'], 2), ErrorCode.INVALID_PRODUCER_EPOCH);
      assert.equal(await produce(c, 12, 'v2', p, 1, ['late'], 0), ErrorCode.INVALID_PRODUCER_EPOCH);
      assert.equal((await c.send(ApiKey.DescribeTransactions, 0, { transactionalIds: ['v2'] })).transactionStates[0].transactionState, 'CompleteCommit');
      // A retried EndTxn v5 (its answer lost) gets the same producer again.
      assert.deepEqual(await endTxn(c, 5, 'v2', p, true), ended);

      // The next transaction under the new epoch, aborted; sequences restart at 0 with the epoch.
      const q = { producerId: ended.producerId, producerEpoch: ended.producerEpoch };
      assert.equal(await produce(c, 12, 'v2', q, 0, ['b1'], 0), 0);
      assert.equal(await produce(c, 12, 'v2', q, 1, ['b2'], 0), 0);
      assert.deepEqual(await retrying(() => endTxn(c, 5, 'v2', q, false)), { errorCode: 0, producerId: q.producerId, producerEpoch: q.producerEpoch + 1 });
      f = await settled(c, 0);
      assert.deepEqual(batchesOf(f), [[0, false, p.producerEpoch], [2, true, p.producerEpoch + 1], [3, false, q.producerEpoch], [4, true, q.producerEpoch + 1]]);
      assert.deepEqual(f.abortedTransactions, [{ producerId: q.producerId, firstOffset: 3n }]);
      const f1 = await settled(c, 1);
      assert.deepEqual(batchesOf(f1), [[0, false, q.producerEpoch], [1, true, q.producerEpoch + 1]], 'no late record on partition 1');
    });
  });

  test(`${backend}: TxnOffsetCommit v5 adds the group's offsets partition itself; AddPartitionsToTxn v5 adds as version 2; a v1 client keeps its epoch`, async () => {
    await withBroker(backend === 'disk' ? tempDataDir() : undefined, async (c) => {
      const p = await init(c, 'v2o');
      assert.equal((await c.send(ApiKey.FindCoordinator, 3, { key: 'grp', keyType: 0, coordinatorKeys: [] })).errorCode, 0);
      const commitOffsets = (version: number, prod: Producer) => retrying(() => c.send(ApiKey.TxnOffsetCommit, version, {
        transactionalId: 'v2o', groupId: 'grp', producerId: prod.producerId, producerEpoch: prod.producerEpoch, generationId: -1, memberId: '', groupInstanceId: null,
        topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
      }).then((r: any) => ({ errorCode: r.topics[0].partitions[0].errorCode as number })));
      // v4 only verifies: the group's partition is not in the transaction yet.
      assert.equal((await commitOffsets(4, p)).errorCode, ErrorCode.TRANSACTION_ABORTABLE);
      assert.equal((await commitOffsets(5, p)).errorCode, 0);
      const read = () => c.send(ApiKey.OffsetFetch, 7, { groupId: 'grp', topics: [{ name: 't', partitionIndexes: [0] }], groups: [], requireStable: true })
        .then((r: any) => [r.topics[0].partitions[0].committedOffset, r.topics[0].partitions[0].errorCode]);
      assert.deepEqual(await read(), [-1n, ErrorCode.UNSTABLE_OFFSET_COMMIT]);
      const ended = await endTxn(c, 5, 'v2o', p, true);
      assert.deepEqual(ended, { errorCode: 0, producerId: p.producerId, producerEpoch: p.producerEpoch + 1 });
      for (let i = 0; i < 200 && (await read())[1] !== 0; i++) await pause(10);
      assert.deepEqual(await read(), [42n, 0]);
      // The old epoch cannot commit offsets into the next transaction.
      assert.equal((await commitOffsets(5, p)).errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);

      // AddPartitionsToTxn v5, the form a leader sends for a version 2 client: adds, and marks the transaction version 2.
      const q = { producerId: ended.producerId, producerEpoch: ended.producerEpoch };
      const add = (version: number, verifyOnly: boolean) => c.send(ApiKey.AddPartitionsToTxn, version, {
        transactions: [{ transactionalId: 'v2o', producerId: q.producerId, producerEpoch: q.producerEpoch, verifyOnly, topics: [{ name: 't', partitions: [1] }] }],
        v3AndBelowTransactionalId: '', v3AndBelowProducerId: 0n, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [],
      }).then((r: any) => r.resultsByTransaction[0].topicResults[0].resultsByPartition[0].partitionErrorCode);
      assert.equal(await add(5, true), ErrorCode.TRANSACTION_ABORTABLE);
      assert.equal(await add(5, false), 0);
      assert.equal(await add(4, true), 0);
      assert.equal(await produce(c, 11, 'v2o', q, 1, ['x'], 0), 0, 'a v11 produce only verifies, and the partition is in');
      assert.deepEqual(await endTxn(c, 5, 'v2o', q, false), { errorCode: 0, producerId: q.producerId, producerEpoch: q.producerEpoch + 1 });

      // A version 1 client on the same broker: AddPartitionsToTxn v3, Produce v9, EndTxn v3 — its epoch stays.
      const v1 = await init(c, 'v1');
      const added = await c.send(ApiKey.AddPartitionsToTxn, 3, { v3AndBelowTransactionalId: 'v1', v3AndBelowProducerId: v1.producerId, v3AndBelowProducerEpoch: v1.producerEpoch, v3AndBelowTopics: [{ name: 't', partitions: [0] }], transactions: [] });
      assert.equal(added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode, 0);
      assert.equal(await produce(c, 9, 'v1', v1, 0, ['one'], 0), 0);
      assert.deepEqual(await endTxn(c, 3, 'v1', v1, true), { errorCode: 0, producerId: -1n, producerEpoch: -1 });
      const f = await settled(c, 0);
      assert.deepEqual(batchesOf(f).slice(-2).map(([, control, epoch]) => [control, epoch]), [[false, v1.producerEpoch], [true, v1.producerEpoch]], 'the v1 marker keeps the epoch');
      assert.equal(await produce(c, 9, 'v1', v1, 0, ['two'], 1), ErrorCode.INVALID_TXN_STATE, 'v1: the next transaction still needs AddPartitionsToTxn');
    });
  });
}
