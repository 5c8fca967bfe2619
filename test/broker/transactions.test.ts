// Transactions with real clients: what a read_committed consumer sees (committed data, never
// aborted data, nothing of an open transaction), what read_uncommitted sees (everything), the last
// stable offset, transactional offset commits, fencing of an older producer, the timeout abort,
// and a broker killed in the middle of a transaction (kafkajs and confluent-kafka-python).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { killProcess, runProcess, startServerProcess, tempDataDir, within } from './process-helpers.js';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const PYTHON = '/usr/bin/python3';

async function withServer(overrides: Record<string, string>, body: (port: number, server: ServerHandle) => Promise<void>): Promise<void> {
  const config = parseBrokerConfig({ 'node.id': '1', 'group.initial.rebalance.delay.ms': '0', ...overrides });
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir(), config });
  try {
    await body(server.listeners[0]!.port, server);
  } finally {
    await server.close();
  }
}

const kafkaFor = (port: number) => new Kafka({ brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 50 } });

/** ListOffsets latest for one partition at an isolation level: the HW (0) or the last stable offset (1). */
async function latestOffset(client: ClusterClient, topic: string, partition: number, isolationLevel: number): Promise<bigint> {
  const conn = await client.leaderFor(topic, partition);
  const r = await conn.send(ApiKey.ListOffsets, 7, {
    replicaId: -1, isolationLevel, topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp: -1n }] }],
  });
  const p = r.topics[0].partitions[0];
  assert.equal(p.errorCode, 0);
  return p.offset as bigint;
}

/** Every value a kafkajs consumer reads from the start at one isolation level, once it has been idle 1.5 s. */
async function readAll(kafka: Kafka, topic: string, group: string, readUncommitted: boolean): Promise<string[]> {
  const consumer = kafka.consumer({ groupId: group, readUncommitted, maxWaitTimeInMs: 100 });
  await consumer.connect();
  const seen: string[] = [];
  let last = Date.now();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => { seen.push(message.value!.toString()); last = Date.now(); } });
    const started = Date.now();
    while (Date.now() - last < 1500 || (seen.length === 0 && Date.now() - started < 6000)) await new Promise((r) => setTimeout(r, 100));
  } finally {
    await consumer.disconnect();
  }
  return seen.sort();
}

const values = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ key: `k${i % 7}`, value: `${prefix}-${i}` }));
const names = (prefix: string, n: number) => values(prefix, n).map((m) => m.value).sort();

test('kafkajs: read_committed sees committed transactions only, read_uncommitted sees all; the LSO holds at an open transaction', async () => {
  await withServer({}, async (port) => {
    const kafka = kafkaFor(port);
    const admin = kafka.admin();
    await admin.connect();
    const client = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
    const producer = kafka.producer({ transactionalId: 'js-txn', idempotent: true, maxInFlightRequests: 1 });
    try {
      await admin.createTopics({ topics: [{ topic: 'txn-js', numPartitions: 3 }] });
      await producer.connect();
      for (const [prefix, n, end] of [['c', 30, 'commit'], ['a', 30, 'abort'], ['d', 12, 'commit']] as const) {
        const t = await producer.transaction();
        await t.send({ topic: 'txn-js', messages: values(prefix, n) });
        await (end === 'commit' ? t.commit() : t.abort());
      }
      // An open transaction: the LSO of each partition it wrote stays at its first offset.
      const open = await producer.transaction();
      await open.send({ topic: 'txn-js', messages: [{ key: 'k0', value: 'open-0', partition: 1 }] });
      const hw = await latestOffset(client, 'txn-js', 1, 0);
      const lso = await latestOffset(client, 'txn-js', 1, 1);
      assert.equal(lso, hw - 1n, 'the open transaction holds the last stable offset back');
      const described = await client.admin(ApiKey.DescribeTransactions, { transactionalIds: ['js-txn'] }, 0);
      assert.equal(described.transactionStates[0].transactionState, 'Ongoing');
      assert.deepEqual(described.transactionStates[0].topics.map((t: { topic: string }) => t.topic), ['txn-js']);
      const producers = await (await client.leaderFor('txn-js', 1)).send(ApiKey.DescribeProducers, 0, { topics: [{ name: 'txn-js', partitionIndexes: [1] }] });
      assert.equal(producers.topics[0].partitions[0].activeProducers[0].currentTxnStartOffset, lso);

      assert.deepEqual(await readAll(kafka, 'txn-js', 'rc-1', false), [...names('c', 30), ...names('d', 12)].sort());
      assert.deepEqual(await readAll(kafka, 'txn-js', 'ru-1', true), [...names('c', 30), ...names('a', 30), ...names('d', 12), 'open-0'].sort());
      await open.commit();
      assert.equal(await latestOffset(client, 'txn-js', 1, 1), await latestOffset(client, 'txn-js', 1, 0), 'the commit releases the LSO');
      assert.deepEqual(await readAll(kafka, 'txn-js', 'rc-2', false), [...names('c', 30), ...names('d', 12), 'open-0'].sort());
      const listed = await client.admin(ApiKey.ListTransactions, { stateFilters: ['CompleteCommit'], producerIdFilters: [], durationFilter: -1n }, 1);
      assert.deepEqual(listed.transactionStates.map((t: { transactionalId: string }) => t.transactionalId), ['js-txn']);
    } finally {
      await producer.disconnect();
      await admin.disconnect();
      client.close();
    }
  });
});

test('kafkajs: offsets sent in a transaction are committed with it, and an aborted transaction commits none', async () => {
  await withServer({}, async (port) => {
    const kafka = kafkaFor(port);
    const admin = kafka.admin();
    await admin.connect();
    const producer = kafka.producer({ transactionalId: 'js-offsets', idempotent: true, maxInFlightRequests: 1 });
    try {
      await admin.createTopics({ topics: [{ topic: 'txn-in', numPartitions: 2 }, { topic: 'txn-out2', numPartitions: 1 }] });
      await producer.connect();
      const committedOffsets = async () => (await admin.fetchOffsets({ groupId: 'ctp', topics: ['txn-in'] }))[0]!.partitions
        .map((p) => `${p.partition}:${p.offset}`).sort();
      let t = await producer.transaction();
      await t.send({ topic: 'txn-out2', messages: [{ value: 'x' }] });
      await t.sendOffsets({ consumerGroupId: 'ctp', topics: [{ topic: 'txn-in', partitions: [{ partition: 0, offset: '5' }, { partition: 1, offset: '7' }] }] });
      assert.deepEqual(await committedOffsets(), ['0:-1', '1:-1'], 'not visible before the commit');
      await t.commit();
      assert.deepEqual(await committedOffsets(), ['0:5', '1:7']);
      t = await producer.transaction();
      await t.sendOffsets({ consumerGroupId: 'ctp', topics: [{ topic: 'txn-in', partitions: [{ partition: 0, offset: '50' }] }] });
      await t.abort();
      assert.deepEqual(await committedOffsets(), ['0:5', '1:7'], 'the aborted commit left the offsets as they were');
    } finally {
      await producer.disconnect();
      await admin.disconnect();
    }
  });
});

test('kafkajs: a second producer with the same transactional id fences the first, and the first one\'s open transaction is aborted', async () => {
  await withServer({}, async (port) => {
    const kafka = kafkaFor(port);
    const admin = kafka.admin();
    await admin.connect();
    const producers: Producer[] = [];
    try {
      await admin.createTopics({ topics: [{ topic: 'txn-fence', numPartitions: 1 }] });
      const first = kafka.producer({ transactionalId: 'fenced-id', idempotent: true, maxInFlightRequests: 1, retry: { retries: 1, initialRetryTime: 50 } });
      producers.push(first);
      await first.connect();
      const t1 = await first.transaction();
      await t1.send({ topic: 'txn-fence', messages: [{ value: 'zombie' }] });
      const second = kafka.producer({ transactionalId: 'fenced-id', idempotent: true, maxInFlightRequests: 1 });
      producers.push(second);
      await second.connect();
      const t2 = await second.transaction(); // bumps the epoch: the first producer's transaction is aborted
      await t2.send({ topic: 'txn-fence', messages: [{ value: 'live' }] });
      await t2.commit();
      await assert.rejects(async () => { await t1.send({ topic: 'txn-fence', messages: [{ value: 'late' }] }); await t1.commit(); },
        (e: Error & { type?: string }) => /PRODUCER_FENCED|INVALID_PRODUCER_EPOCH|INVALID_TXN_STATE/.test(`${e.type} ${e.message} ${(e as { cause?: { type?: string } }).cause?.type}`));
      assert.deepEqual(await readAll(kafka, 'txn-fence', 'rc-f', false), ['live']);
    } finally {
      for (const p of producers) await p.disconnect().catch(() => {});
      await admin.disconnect();
    }
  });
});

test('a transaction left open past its timeout is aborted by the coordinator, and the LSO moves on', async () => {
  await withServer({ 'transaction.abort.timed.out.transaction.cleanup.interval.ms': '100' }, async (port) => {
    const kafka = kafkaFor(port);
    const admin = kafka.admin();
    await admin.connect();
    const client = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
    const producer = kafka.producer({ transactionalId: 'slow', idempotent: true, maxInFlightRequests: 1, transactionTimeout: 1000 });
    try {
      await admin.createTopics({ topics: [{ topic: 'txn-timeout', numPartitions: 1 }] });
      await producer.connect();
      const t = await producer.transaction();
      await t.send({ topic: 'txn-timeout', messages: values('late', 5) });
      assert.equal(await latestOffset(client, 'txn-timeout', 0, 1), 0n);
      await within(10_000, 'the timeout abort', (async () => {
        while (await latestOffset(client, 'txn-timeout', 0, 1) === 0n) await new Promise((r) => setTimeout(r, 100));
      })());
      assert.equal(await latestOffset(client, 'txn-timeout', 0, 1), await latestOffset(client, 'txn-timeout', 0, 0));
      const d = await client.admin(ApiKey.DescribeTransactions, { transactionalIds: ['slow'] }, 0);
      assert.equal(d.transactionStates[0].transactionState, 'CompleteAbort');
      await assert.rejects(() => t.commit());
      assert.deepEqual(await readAll(kafka, 'txn-timeout', 'rc-t', false), []);
    } finally {
      await producer.disconnect().catch(() => {});
      await admin.disconnect();
      client.close();
    }
  });
});

test('SIGKILL of the broker mid-transaction: after the restart a committed transaction is visible, an open one is aborted at its timeout, and the LSO reaches the HW', async () => {
  const dataDir = tempDataDir();
  const args = ['--set', 'transaction.abort.timed.out.transaction.cleanup.interval.ms=200', '--set', 'group.initial.rebalance.delay.ms=0'];
  let server = await startServerProcess(dataDir, args);
  try {
    let kafka = kafkaFor(server.port);
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'txn-crash', numPartitions: 2 }] });
    await admin.disconnect();
    const committer = kafka.producer({ transactionalId: 'crash-commit', idempotent: true, maxInFlightRequests: 1 });
    const leaver = kafka.producer({ transactionalId: 'crash-open', idempotent: true, maxInFlightRequests: 1, transactionTimeout: 2000 });
    await committer.connect();
    await leaver.connect();
    const open = await leaver.transaction();
    await open.send({ topic: 'txn-crash', messages: values('open', 20) });
    const t = await committer.transaction();
    await t.send({ topic: 'txn-crash', messages: values('committed', 20) });
    await t.commit(); // acknowledged: PrepareCommit is in the log; the markers may or may not be
    await killProcess(server.child);
    await committer.disconnect().catch(() => {});
    await leaver.disconnect().catch(() => {});

    server = await startServerProcess(dataDir, args);
    kafka = kafkaFor(server.port);
    const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.port}` });
    try {
      // The coordinators load when a client looks for them.
      await client.admin(ApiKey.FindCoordinator, { key: '', keyType: 1, coordinatorKeys: ['crash-commit', 'crash-open'] }, 4);
      await within(20_000, 'the LSO to reach the HW on both partitions', (async () => {
        for (;;) {
          let stable = true;
          for (const p of [0, 1]) if (await latestOffset(client, 'txn-crash', p, 1) !== await latestOffset(client, 'txn-crash', p, 0)) stable = false;
          if (stable) return;
          await new Promise((r) => setTimeout(r, 200));
        }
      })());
      assert.deepEqual(await readAll(kafka, 'txn-crash', 'rc-crash', false), names('committed', 20));
      const d = await client.admin(ApiKey.DescribeTransactions, { transactionalIds: ['crash-commit', 'crash-open'] }, 0);
      assert.deepEqual(d.transactionStates.map((s: { transactionState: string }) => s.transactionState), ['CompleteCommit', 'CompleteAbort']);
    } finally {
      client.close();
    }
  } finally {
    await killProcess(server.child);
  }
});

const hasConfluent = spawnSync(PYTHON, ['-c', 'import confluent_kafka']).status === 0;
if (!hasConfluent && process.env.CI) throw new Error('python3-confluent-kafka is missing in CI');

test('confluent-kafka-python: committed visible to read_committed, aborted never, read_uncommitted sees both, an open transaction blocks nothing before it', { skip: hasConfluent ? false : 'python3-confluent-kafka is not installed' }, async () => {
  await withServer({}, async (port) => {
    const r = await runProcess(PYTHON, ['test/broker/python/confluent_txn.py', `127.0.0.1:${port}`, 'txn-py'], null, 120_000);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { committedWhileOpen: string[]; uncommitted: string[]; committedAfter: string[]; eof: boolean[] };
    const n = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
    assert.deepEqual(out.eof, [true, true, true], 'each consumer reached the end of both partitions');
    assert.deepEqual(out.committedWhileOpen.sort(), [...n('c', 100), ...n('d', 50)].sort());
    assert.deepEqual(out.uncommitted.sort(), [...n('c', 100), ...n('a', 100), ...n('d', 50), ...n('o', 20)].sort());
    assert.deepEqual(out.committedAfter.sort(), [...n('c', 100), ...n('d', 50), ...n('o', 20)].sort());
  });
});
