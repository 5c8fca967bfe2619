// `logline group` as a user runs it against a broker with a real kafkajs consumer group: list,
// describe with committed offsets, log end offsets, lag and owners; reset-offsets plans and, with
// --execute, commits (refused while members are active); delete.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { startServer } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';

const BIN = 'bin/logline.js';

test('group list, describe (lag per partition), reset-offsets (plan, execute, refused while active) and delete', { timeout: 120_000 }, async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config: parseBrokerConfig({ 'node.id': '1', 'group.initial.rebalance.delay.ms': '0' }), dataDir: tempDataDir() });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const cli = async (...args: string[]) => {
    const r = await runProcess(process.execPath, [BIN, 'group', ...args, '--bootstrap-server', bootstrap], null, 30_000);
    return { code: r.code, out: r.stdout, err: r.stderr, json: () => JSON.parse(r.stdout) };
  };
  const kafka = new Kafka({ clientId: 'lag-test', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100 } });
  const producer = kafka.producer();
  const consumer = kafka.consumer({ groupId: 'lagging', sessionTimeout: 10_000, heartbeatInterval: 500 });
  try {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'events', numPartitions: 2 }] });
    await admin.disconnect();
    await producer.connect();
    const t0 = Date.now();
    await producer.send({ topic: 'events', messages: Array.from({ length: 20 }, (_, i) => ({ partition: i % 2, value: `v${i}` })) });
    const seen: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: 'events', fromBeginning: true });
    await consumer.run({ autoCommitInterval: 100, eachMessage: async ({ message }) => { seen.push(message.value!.toString()); } });
    for (let i = 0; i < 300 && seen.length < 20; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(seen.length, 20);
    // Wait for the auto-commit to land, then read it the way a user would.
    let described: any;
    for (let i = 0; i < 100; i++) {
      described = (await cli('describe', 'lagging', '--json')).json();
      if (described.partitions.length === 2 && described.partitions.every((p: any) => p.lag === 0)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(described.state, 'Stable');
    assert.equal(described.members, 1);
    assert.deepEqual(described.partitions.map((p: any) => [p.topic, p.partition, p.currentOffset, p.logEndOffset, p.lag]), [['events', 0, 10, 10, 0], ['events', 1, 10, 10, 0]]);
    assert.ok(described.partitions.every((p: any) => p.clientId === 'lag-test' && p.memberId && p.host), 'each partition names its owner');
    const human = await cli('describe', 'lagging');
    assert.equal(human.code, 0, human.err);
    assert.match(human.out, /TOPIC\s+PARTITION\s+CURRENTOFFSET\s+LOGENDOFFSET\s+LAG\s+MEMBERID\s+CLIENTID\s+HOST/);

    const list = (await cli('list', '--json')).json();
    assert.deepEqual(list.map((g: any) => [g.group, g.state]), [['lagging', 'Stable']]);
    const active = await cli('reset-offsets', 'lagging', '--to-earliest', '--execute');
    assert.equal(active.code, 1, 'no reset while the group has members');
    assert.match(active.err, /active member/);

    await consumer.disconnect();
    await new Promise((r) => setTimeout(r, 1000)); // so that later records get a later timestamp
    const t1 = Date.now();
    await producer.send({ topic: 'events', messages: Array.from({ length: 6 }, (_, i) => ({ partition: 0, value: `late${i}` })) });
    const lagging = (await cli('describe', 'lagging', '--json')).json();
    assert.equal(lagging.state, 'Empty');
    assert.deepEqual(lagging.partitions.map((p: any) => [p.partition, p.currentOffset, p.logEndOffset, p.lag, p.memberId]), [[0, 10, 16, 6, null], [1, 10, 10, 0, null]]);

    const plan = (await cli('reset-offsets', 'lagging', '--to-earliest', '--json')).json();
    assert.equal(plan.executed, false);
    assert.deepEqual(plan.plan.map((p: any) => [p.partition, p.currentOffset, p.newOffset]), [[0, 10, 0], [1, 10, 0]]);
    assert.equal((await cli('describe', 'lagging', '--json')).json().partitions[0].currentOffset, 10, 'a plan changes nothing');

    const shifted = (await cli('reset-offsets', 'lagging', '--topic', 'events:0', '--shift-by', '-3', '--execute', '--json')).json();
    assert.deepEqual(shifted.plan.map((p: any) => [p.partition, p.newOffset]), [[0, 7]]);
    assert.deepEqual((await cli('describe', 'lagging', '--json')).json().partitions.map((p: any) => p.lag), [9, 0]);
    const clamped = (await cli('reset-offsets', 'lagging', '--topic', 'events', '--to-offset', '1000', '--execute', '--json')).json();
    assert.deepEqual(clamped.plan.map((p: any) => p.newOffset), [16, 10], 'an offset past the end goes to the log end');
    const byTime = (await cli('reset-offsets', 'lagging', '--topic', 'events', '--to-datetime', new Date(t1 - 200).toISOString(), '--execute', '--json')).json();
    assert.deepEqual(byTime.plan.map((p: any) => p.newOffset), [10, 10], 'the first record at or after the time; none after it means the end');
    const early = (await cli('reset-offsets', 'lagging', '--topic', 'events:1', '--to-datetime', new Date(t0 - 60_000).toISOString(), '--json')).json();
    assert.deepEqual(early.plan.map((p: any) => p.newOffset), [0]);
    const latest = (await cli('reset-offsets', 'lagging', '--to-latest', '--execute'));
    assert.equal(latest.code, 0, latest.err);
    assert.match(latest.out, /NEWOFFSET/);
    assert.deepEqual((await cli('describe', 'lagging', '--json')).json().partitions.map((p: any) => p.lag), [0, 0]);

    assert.equal((await cli('reset-offsets', 'lagging')).code, 2, 'a strategy is required');
    const deleted = await cli('delete', 'lagging');
    assert.equal(deleted.code, 0, deleted.err);
    assert.deepEqual((await cli('list', '--json')).json(), []);
    assert.equal((await cli('delete', 'lagging')).code, 1, 'deleting a missing group fails');
  } finally {
    await consumer.disconnect().catch(() => {});
    await producer.disconnect().catch(() => {});
    await server.close();
  }
});
