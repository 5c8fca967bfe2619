// kafkajs consumer groups against the broker: three members share a six-partition topic (each
// partition to exactly one member), committed offsets are what was consumed, and a broker restart
// on the same data directory keeps them (they are records in __consumer_offsets on disk).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { startServer } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { tempDataDir } from './process-helpers.js';

const TOPIC = 'orders';
const RECORDS = 600;

async function waitFor(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('three kafkajs members split six partitions, commit what they consumed, and the offsets survive a broker restart', { timeout: 90_000 }, async () => {
  const config = parseBrokerConfig({ 'node.id': '1', 'group.initial.rebalance.delay.ms': '0' });
  const dataDir = tempDataDir();
  let server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config, dataDir });
  const consumers: Consumer[] = [];
  try {
    const kafka = new Kafka({ clientId: 'groups-test', brokers: [`127.0.0.1:${server.listeners[0]!.port}`], logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100 } });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 6 }] });
    const producer = kafka.producer();
    await producer.connect();
    for (let i = 0; i < RECORDS; i += 100) {
      await producer.send({ topic: TOPIC, messages: Array.from({ length: 100 }, (_, j) => ({ partition: (i + j) % 6, value: `v${i + j}` })) });
    }
    await producer.disconnect();

    const seen = new Map<string, number>();
    const assignments = new Map<number, number[]>();
    for (let c = 0; c < 3; c++) {
      const consumer = kafka.consumer({ groupId: 'g-orders', sessionTimeout: 10_000, heartbeatInterval: 500, rebalanceTimeout: 10_000 });
      consumers.push(consumer);
      consumer.on(consumer.events.GROUP_JOIN, (e) => { assignments.set(c, [...(e.payload.memberAssignment[TOPIC] ?? [])]); });
      await consumer.connect();
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
      await consumer.run({ autoCommitInterval: 200, eachMessage: async ({ message }) => { const v = message.value!.toString(); seen.set(v, (seen.get(v) ?? 0) + 1); } });
    }
    await waitFor('every record', () => seen.size === RECORDS);
    await waitFor('three members sharing the partitions', () => {
      const all = [...assignments.values()].flat().sort((a, b) => a - b);
      return assignments.size === 3 && [...assignments.values()].every((a) => a.length === 2) && all.join() === '0,1,2,3,4,5';
    });
    const described = await admin.describeGroups(['g-orders']);
    assert.equal(described.groups[0]!.state, 'Stable');
    assert.equal(described.groups[0]!.members.length, 3);
    await Promise.all(consumers.map((c) => c.disconnect()));
    consumers.length = 0;
    const committed = await admin.fetchOffsets({ groupId: 'g-orders', topics: [TOPIC] });
    assert.deepEqual(committed[0]!.partitions.map((p) => [p.partition, p.offset]).sort((a, b) => Number(a[0]) - Number(b[0])),
      [0, 1, 2, 3, 4, 5].map((p) => [p, String(RECORDS / 6)]));
    await admin.disconnect();

    await server.close();
    server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config, dataDir });
    const kafka2 = new Kafka({ clientId: 'groups-test', brokers: [`127.0.0.1:${server.listeners[0]!.port}`], logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100 } });
    const admin2 = kafka2.admin();
    await admin2.connect();
    const again = await admin2.fetchOffsets({ groupId: 'g-orders', topics: [TOPIC] });
    assert.deepEqual(again[0]!.partitions.map((p) => p.offset), Array(6).fill(String(RECORDS / 6)), 'offsets survive the restart');
    // A consumer that comes back resumes from the committed offsets: nothing is read again.
    const resumed: string[] = [];
    const consumer = kafka2.consumer({ groupId: 'g-orders', sessionTimeout: 10_000, heartbeatInterval: 500 });
    consumers.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    let joined = false;
    consumer.on(consumer.events.GROUP_JOIN, () => { joined = true; });
    await consumer.run({ eachMessage: async ({ message }) => { resumed.push(message.value!.toString()); } });
    await waitFor('the group to form again', () => joined);
    const producer2 = kafka2.producer();
    await producer2.connect();
    await producer2.send({ topic: TOPIC, messages: [{ partition: 0, value: 'after-restart' }] });
    await producer2.disconnect();
    await waitFor('the new record', () => resumed.includes('after-restart'));
    assert.deepEqual(resumed, ['after-restart']);
    await admin2.disconnect();
  } finally {
    await Promise.all(consumers.map((c) => c.disconnect().catch(() => {})));
    await server.close();
  }
});
