// `logline transactions` as a user runs it to find and clear a hanging transaction: list and
// describe show the open transaction, describe-producers shows where it starts, abort writes the
// ABORT marker and the partition's last stable offset catches up with its high watermark.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { startServer } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

test('transactions list, describe, describe-producers and abort of a hanging transaction', { timeout: 120_000 }, async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config: parseBrokerConfig({ 'node.id': '1' }), dataDir: tempDataDir() });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const cli = async (...args: string[]) => {
    const r = await runProcess(process.execPath, ['bin/logline.js', 'transactions', ...args, '--bootstrap-server', bootstrap], null, 30_000);
    return { code: r.code, out: r.stdout, err: r.stderr, json: () => JSON.parse(r.stdout) };
  };
  const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ transactionalId: 'hanging', idempotent: true, maxInFlightRequests: 1, transactionTimeout: 600_000 });
  const client = new ClusterClient({ bootstrap });
  const lastStable = async (isolationLevel: number) => {
    const r = await (await client.leaderFor('orders', 0)).send(ApiKey.ListOffsets, 7, { replicaId: -1, isolationLevel, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] });
    return r.topics[0].partitions[0].offset as bigint;
  };
  try {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 1 }] });
    await admin.disconnect();
    await producer.connect();
    const t = await producer.transaction();
    await t.send({ topic: 'orders', messages: [{ value: 'held' }, { value: 'back' }] });

    const list = await cli('list', '--json');
    assert.equal(list.code, 0, list.err);
    assert.deepEqual(list.json().map((x: { transactionalId: string; state: string }) => [x.transactionalId, x.state]), [['hanging', 'Ongoing']]);
    const described = await cli('describe', 'hanging', '--json');
    assert.equal(described.code, 0, described.err);
    assert.deepEqual(described.json()[0].partitions, ['orders-0']);
    const producers = await cli('describe-producers', '--topic', 'orders', '--json');
    assert.equal(producers.code, 0, producers.err);
    const open = producers.json().find((p: { currentTransactionStartOffset: number | null }) => p.currentTransactionStartOffset !== null);
    assert.equal(open.currentTransactionStartOffset, 0);
    assert.equal(await lastStable(1), 0n, 'the hanging transaction holds the LSO');

    assert.equal((await cli('abort', '--topic', 'orders', '--partition', '0', '--start-offset', '7')).code, 1, 'no transaction starts there');
    const aborted = await cli('abort', '--topic', 'orders', '--partition', '0', '--start-offset', '0');
    assert.equal(aborted.code, 0, aborted.err);
    assert.match(aborted.out, /aborted the transaction of producer \d+ starting at orders-0@0/);
    assert.equal(await lastStable(1), await lastStable(0), 'the LSO caught up with the HW');
    assert.equal((await cli('abort', '--topic', 'orders')).code, 2, 'usage error without --partition and --start-offset');
  } finally {
    await producer.disconnect().catch(() => {});
    client.close();
    await server.close();
  }
});
