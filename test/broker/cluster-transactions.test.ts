// Transactions and idempotence across brokers in a 3-node cluster (startCluster, RF 3,
// min.insync.replicas 2), spoken over the wire as a client would: the transaction coordinator of
// the id is on one broker and the partitions are led by the two others, so a transactional produce
// is verified with the coordinator over the network (AddPartitionsToTxn v4 from the leader) and
// the markers go to the leaders over the network (WriteTxnMarkers). A read_committed reader (the
// Kafka consumer's rule: skip the batches of aborted transactions listed in the Fetch answer, and
// control batches) sees only what was committed. Then failovers: a partition leader killed with a
// transaction open and an idempotent producer's retry in flight; the new leader, which built its
// producer state from what it replicated, deduplicates the retry and the transaction commits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, type ClusterHandle } from '../../src/index.js';
import { ClusterClient, type BrokerConnection } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatch, iterateBatches, parseControlRecordType, readRecords } from '../../src/records/index.js';
import { within } from './process-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TOPIC = 'xt';
type Producer = { producerId: bigint; producerEpoch: number };

/** Retries `fn` while it answers one of `retriable`; resolves with the first other answer. */
async function untilNot(what: string, retriable: number[], fn: () => Promise<number>, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let code: number;
    try {
      code = await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(50);
      continue;
    }
    if (!retriable.includes(code)) return code;
    if (Date.now() > deadline) throw new Error(`${what}: still ${code} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

const COORDINATOR_RETRY = [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.CONCURRENT_TRANSACTIONS];
const PRODUCE_RETRY = [ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.REQUEST_TIMED_OUT];

async function coordinatorOf(client: ClusterClient, transactionalId: string): Promise<number> {
  let nodeId = -1;
  await untilNot('FindCoordinator', COORDINATOR_RETRY, async () => {
    const r = await (await client.any()).send(ApiKey.FindCoordinator, 1, { key: transactionalId, keyType: 1, coordinatorKeys: [] });
    nodeId = r.nodeId;
    return r.errorCode;
  }, 60_000);
  return nodeId;
}

async function initProducer(c: () => Promise<BrokerConnection>, transactionalId: string): Promise<Producer> {
  let p: Producer = { producerId: -1n, producerEpoch: -1 };
  const code = await untilNot('InitProducerId', COORDINATOR_RETRY, async () => {
    const r = await (await c()).send(ApiKey.InitProducerId, 4, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
    p = { producerId: r.producerId, producerEpoch: r.producerEpoch };
    return r.errorCode;
  });
  assert.equal(code, ErrorCode.NONE);
  return p;
}

async function addPartitions(c: () => Promise<BrokerConnection>, transactionalId: string, p: Producer, partitions: number[]): Promise<void> {
  const code = await untilNot('AddPartitionsToTxn', COORDINATOR_RETRY, async () => {
    const r = await (await c()).send(ApiKey.AddPartitionsToTxn, 3, {
      v3AndBelowTransactionalId: transactionalId, v3AndBelowProducerId: p.producerId, v3AndBelowProducerEpoch: p.producerEpoch,
      v3AndBelowTopics: [{ name: TOPIC, partitions }], transactions: [],
    });
    return Math.max(...r.resultsByTopicV3AndBelow[0].resultsByPartition.map((x: any) => x.partitionErrorCode));
  });
  assert.equal(code, ErrorCode.NONE);
}

async function endTxn(c: () => Promise<BrokerConnection>, transactionalId: string, p: Producer, commit: boolean): Promise<void> {
  const code = await untilNot('EndTxn', COORDINATOR_RETRY, async () => {
    const r = await (await c()).send(ApiKey.EndTxn, 3, { transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, committed: commit });
    return r.errorCode;
  });
  assert.equal(code, ErrorCode.NONE);
}

async function batch(p: Producer, transactional: boolean, baseSequence: number, values: string[]): Promise<Buffer> {
  return buildRecordBatch({ records: values.map((v) => ({ value: Buffer.from(v) })), isTransactional: transactional, producerId: Number(p.producerId), producerEpoch: p.producerEpoch, baseSequence });
}

/** One Produce v9 of `records` to the partition's current leader (looked up each time); the partition's answer. */
async function produceOnce(client: ClusterClient, partition: number, transactionalId: string | null, records: Buffer): Promise<{ errorCode: number; baseOffset: bigint }> {
  const conn = await client.leaderFor(TOPIC, partition);
  const r = await conn.send(ApiKey.Produce, 9, { transactionalId, acks: -1, timeoutMs: 10_000, topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }] });
  return r.responses[0].partitionResponses[0];
}

async function produce(client: ClusterClient, partition: number, transactionalId: string | null, records: Buffer): Promise<bigint> {
  let baseOffset = -1n;
  const code = await untilNot(`produce to ${TOPIC}-${partition}`, PRODUCE_RETRY, async () => {
    const r = await produceOnce(client, partition, transactionalId, records);
    baseOffset = r.baseOffset;
    return r.errorCode;
  });
  assert.equal(code, ErrorCode.NONE);
  return baseOffset;
}

interface Read { values: string[]; highWatermark: bigint; lastStableOffset: bigint; commits: number; aborts: number }

/**
 * What a read_committed consumer of the partition gets from its leader: the data records up to the
 * last stable offset, less those of aborted transactions (the Fetch answer lists where each began;
 * its ABORT marker ends it), with the markers counted.
 */
async function readCommitted(client: ClusterClient, partition: number): Promise<Read> {
  const conn = await client.leaderFor(TOPIC, partition);
  const r = await conn.send(ApiKey.Fetch, 12, {
    replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 1, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic: TOPIC, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [], rackId: '',
  });
  const pd = r.responses[0].partitions[0];
  if (pd.errorCode !== 0) throw new Error(`fetch ${TOPIC}-${partition}: error ${pd.errorCode}`);
  const aborted = [...(pd.abortedTransactions ?? [])].sort((a: any, b: any) => Number(a.firstOffset - b.firstOffset));
  const abortedNow = new Set<number>();
  const out: Read = { values: [], highWatermark: pd.highWatermark, lastStableOffset: pd.lastStableOffset, commits: 0, aborts: 0 };
  for (const v of pd.records === null ? [] : iterateBatches(pd.records)) {
    while (aborted.length > 0 && BigInt(v.lastOffset) >= aborted[0].firstOffset) abortedNow.add(Number(aborted.shift().producerId));
    const records = await readRecords(v);
    if (v.isControl) {
      const type = parseControlRecordType(records[0]!.key);
      if (type === 'ABORT') { out.aborts++; abortedNow.delete(v.producerId); }
      if (type === 'COMMIT') out.commits++;
      continue;
    }
    if (v.isTransactional && abortedNow.has(v.producerId)) continue;
    for (const rec of records) out.values.push(rec.value!.toString());
  }
  return out;
}

/**
 * Waits until the read_committed view of the partition has at least `markers` markers and nothing
 * unstable. At least: a coordinator that takes over a transaction whose completion it has not seen
 * writes its markers again, as Kafka's does.
 */
async function settledRead(client: ClusterClient, partition: number, markers: number): Promise<Read> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    let read: Read | null = null;
    try {
      read = await readCommitted(client, partition);
      if (read.commits + read.aborts >= markers && read.lastStableOffset === read.highWatermark) return read;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    if (Date.now() > deadline) throw new Error(`${TOPIC}-${partition}: not settled: ${JSON.stringify(read, (_k, x) => (typeof x === 'bigint' ? String(x) : x))}`);
    await sleep(50);
  }
}

/** The two brokers other than the coordinator, and the topic with p0 led by one and p1 by the other. */
async function setUp(cluster: ClusterHandle, client: ClusterClient, transactionalId: string): Promise<{ coordinator: number; leaders: [number, number] }> {
  const coordinator = await coordinatorOf(client, transactionalId);
  const others = cluster.nodes.map((n) => n.nodeId).filter((id) => id !== coordinator);
  assert.equal(others.length, 2);
  const [x, y] = others as [number, number];
  const created = await client.admin(ApiKey.CreateTopics, {
    topics: [{
      name: TOPIC, numPartitions: -1, replicationFactor: -1, configs: [{ name: 'min.insync.replicas', value: '2' }],
      assignments: [{ partitionIndex: 0, brokerIds: [x, y, coordinator] }, { partitionIndex: 1, brokerIds: [y, x, coordinator] }],
    }], timeoutMs: 10_000, validateOnly: false,
  }, 7);
  assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
  // Every replica in the ISR, so acks=all means three copies from here on.
  await within(30_000, 'ISR of 3', (async () => {
    for (;;) {
      const t = await client.topic(TOPIC);
      if (t.partitions.every((p) => p.isr.length === 3)) return;
      await sleep(50);
    }
  })());
  const t = await client.topic(TOPIC);
  assert.deepEqual(t.partitions.map((p) => p.leader), [x, y]);
  return { coordinator, leaders: [x, y] };
}

const CLUSTER_CONFIG = { 'transaction.state.log.num.partitions': '4', 'offsets.topic.num.partitions': '4', 'group.initial.rebalance.delay.ms': '0' };

test('a transaction over partitions led by the two brokers other than its coordinator commits and aborts; read_committed sees only what was committed', { timeout: 180_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3, config: CLUSTER_CONFIG }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    const id = 'tx-spread';
    const { coordinator } = await setUp(cluster, client, id);
    const coord = () => client.broker(coordinator);
    const p = await initProducer(coord, id);

    // The leader asks the coordinator on another broker: a partition not in the transaction is refused.
    const early = await produceOnce(client, 0, id, await batch(p, true, 0, ['early']));
    assert.equal(early.errorCode, ErrorCode.INVALID_TXN_STATE);

    // Committed: c0-a, c0-b on p0 and c1-a on p1.
    await addPartitions(coord, id, p, [0, 1]);
    await produce(client, 0, id, await batch(p, true, 0, ['c0-a', 'c0-b']));
    await produce(client, 1, id, await batch(p, true, 0, ['c1-a']));
    await endTxn(coord, id, p, true);
    // Aborted: a0 on p0, a1 on p1.
    await addPartitions(coord, id, p, [0, 1]);
    await produce(client, 0, id, await batch(p, true, 2, ['a0']));
    await produce(client, 1, id, await batch(p, true, 1, ['a1']));
    await endTxn(coord, id, p, false);
    // Committed again, on p0 only.
    await addPartitions(coord, id, p, [0]);
    await produce(client, 0, id, await batch(p, true, 3, ['c0-c']));
    await endTxn(coord, id, p, true);

    const p0 = await settledRead(client, 0, 3);
    const p1 = await settledRead(client, 1, 2);
    assert.deepEqual(p0.values, ['c0-a', 'c0-b', 'c0-c']);
    assert.deepEqual([p0.commits, p0.aborts], [2, 1], 'one marker per transaction (no coordinator moved)');
    assert.deepEqual(p1.values, ['c1-a']);
    assert.deepEqual([p1.commits, p1.aborts], [1, 1]);
    const described = await (await coord()).send(ApiKey.DescribeTransactions, 0, { transactionalIds: [id] });
    assert.equal(described.transactionStates[0].transactionState, 'CompleteCommit');
  } finally {
    client.close();
    await cluster.close();
  }
});

test('a partition leader killed with a transaction open and an idempotent retry in flight: the new leader deduplicates the retry and the transaction commits there', { timeout: 180_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3, config: CLUSTER_CONFIG }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    const id = 'tx-failover';
    const { coordinator, leaders } = await setUp(cluster, client, id);
    const coord = () => client.broker(coordinator);

    // An idempotent producer writes batch 0 to p0 with acks=all, and retries it after p0's leader died.
    const idem = await initProducer(coord, 'tx-failover-idempotent');
    const first = await batch(idem, false, 0, ['i0', 'i1']);
    const firstOffset = await produce(client, 0, null, first);

    const p = await initProducer(coord, id);
    await addPartitions(coord, id, p, [0, 1]);
    const txnOffset = await produce(client, 0, id, await batch(p, true, 0, ['t0-a', 't0-b']));
    await produce(client, 1, id, await batch(p, true, 0, ['t1-a']));

    // p0's leader dies (the two replicas left still make min.insync.replicas).
    const x = cluster.nodes.find((n) => n.nodeId === leaders[0])!;
    await x.kill();
    const moved = await within(60_000, 'p0 on a new leader', (async () => {
      for (;;) {
        const t = await client.metadata([TOPIC]).catch(() => []);
        const p0 = t[0]?.partitions[0];
        if (p0 && p0.leader >= 0 && p0.leader !== leaders[0]) return p0.leader;
        await sleep(100);
      }
    })());
    // The open transaction holds the last stable offset on the new leader (once its high watermark
    // has caught up): the idempotent records are readable, the transaction's are not yet.
    const before = await within(30_000, 'the last stable offset at the open transaction', (async () => {
      for (;;) {
        const r = await readCommitted(client, 0).catch(() => null);
        if (r && r.lastStableOffset === txnOffset) return r;
        await sleep(50);
      }
    })());
    assert.deepEqual(before.values, ['i0', 'i1']);
    // The idempotent producer's retry of batch 0 reaches the new leader: answered with its first offset, not written again.
    const retried = await produceOnce(client, 0, null, first);
    assert.deepEqual([retried.errorCode, retried.baseOffset], [ErrorCode.NONE, firstOffset]);
    // So is a replay of the transaction's batch; the next sequence continues the old leader's.
    const replay = await produceOnce(client, 0, id, await batch(p, true, 0, ['t0-a', 't0-b']));
    assert.deepEqual([replay.errorCode, replay.baseOffset], [ErrorCode.NONE, txnOffset], `the replayed transactional batch is answered with its first offset on the new leader ${moved}`);
    await produce(client, 0, id, await batch(p, true, 2, ['t0-c']));

    await endTxn(coord, id, p, true);
    const p0 = await settledRead(client, 0, 1);
    assert.deepEqual(p0.values, ['i0', 'i1', 't0-a', 't0-b', 't0-c']);
    const p1 = await settledRead(client, 1, 1);
    assert.deepEqual(p1.values, ['t1-a']);
  } finally {
    client.close();
    await cluster.close();
  }
});

test('the transaction coordinator killed between transactions: its __transaction_state partition moves, FindCoordinator names the new leader, and the producer commits there', { timeout: 180_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3, config: CLUSTER_CONFIG }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    const id = 'tx-coordinator-failover';
    const { coordinator } = await setUp(cluster, client, id);
    const p = await initProducer(() => client.broker(coordinator), id);
    await addPartitions(() => client.broker(coordinator), id, p, [0, 1]);
    await produce(client, 0, id, await batch(p, true, 0, ['before']));
    await produce(client, 1, id, await batch(p, true, 0, ['before']));
    await endTxn(() => client.broker(coordinator), id, p, true);

    await cluster.nodes.find((n) => n.nodeId === coordinator)!.kill();
    const next = await within(60_000, 'a new coordinator', (async () => {
      for (;;) {
        const c = await coordinatorOf(client, id).catch(() => -1);
        if (c >= 0 && c !== coordinator) return c;
        await sleep(100);
      }
    })());
    const coord = () => client.broker(next);
    // The new coordinator loaded the id's state: the same producer continues.
    await addPartitions(coord, id, p, [0, 1]);
    await produce(client, 0, id, await batch(p, true, 1, ['after']));
    await produce(client, 1, id, await batch(p, true, 1, ['after']));
    await endTxn(coord, id, p, true);
    assert.deepEqual((await settledRead(client, 0, 2)).values, ['before', 'after']);
    assert.deepEqual((await settledRead(client, 1, 2)).values, ['before', 'after']);
  } finally {
    client.close();
    await cluster.close();
  }
});

test('transaction version 2 with the coordinator on another broker: Produce v12 adds each partition through the leader (AddPartitionsToTxn v5 over the network), EndTxn v5 commits with the bumped epoch, a late write of the old epoch is refused', { timeout: 180_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3, config: CLUSTER_CONFIG }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    const id = 'tx-v2-spread';
    const { coordinator } = await setUp(cluster, client, id);
    const coord = () => client.broker(coordinator);
    let p: Producer = { producerId: -1n, producerEpoch: -1 };
    await untilNot('InitProducerId v5', COORDINATOR_RETRY, async () => {
      const r = await (await coord()).send(ApiKey.InitProducerId, 5, { transactionalId: id, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
      p = { producerId: r.producerId, producerEpoch: r.producerEpoch };
      return r.errorCode;
    });
    const produceV12 = async (partition: number, values: string[], baseSequence: number, producer: Producer) => {
      const records = await buildRecordBatch({ records: values.map((v) => ({ value: Buffer.from(v) })), isTransactional: true, producerId: Number(producer.producerId), producerEpoch: producer.producerEpoch, baseSequence });
      return untilNot(`produce v12 to ${TOPIC}-${partition}`, PRODUCE_RETRY, async () => {
        const conn = await client.leaderFor(TOPIC, partition);
        const r = await conn.send(ApiKey.Produce, 12, { transactionalId: id, acks: -1, timeoutMs: 10_000, topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }] });
        return r.responses[0].partitionResponses[0].errorCode;
      });
    };
    // No AddPartitionsToTxn from the client: each leader adds its partition with the coordinator.
    assert.equal(await produceV12(0, ['v2-a'], 0, p), ErrorCode.NONE);
    assert.equal(await produceV12(1, ['v2-b'], 0, p), ErrorCode.NONE);
    let ended = { errorCode: -1, producerEpoch: -1 };
    await untilNot('EndTxn v5', COORDINATOR_RETRY, async () => {
      const r = await (await coord()).send(ApiKey.EndTxn, 5, { transactionalId: id, producerId: p.producerId, producerEpoch: p.producerEpoch, committed: true });
      ended = { errorCode: r.errorCode, producerEpoch: r.producerEpoch };
      return r.errorCode;
    });
    assert.equal(ended.errorCode, ErrorCode.NONE);
    assert.equal(ended.producerEpoch, p.producerEpoch + 1, 'EndTxn v5 bumps the epoch');
    assert.deepEqual((await settledRead(client, 0, 1)).values, ['v2-a']);
    assert.deepEqual((await settledRead(client, 1, 1)).values, ['v2-b']);
    // A late write of the ended transaction's epoch cannot open another one.
    const late = await produceV12(0, ['late'], 1, p);
    assert.equal(late, ErrorCode.INVALID_PRODUCER_EPOCH);
    assert.deepEqual((await settledRead(client, 0, 1)).values, ['v2-a']);
  } finally {
    client.close();
    await cluster.close();
  }
});
