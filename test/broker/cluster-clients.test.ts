// Real clients against a 3-node cluster (startCluster): each creates a topic through one broker,
// produces through a second and consumes as a group through the third, as the "any broker"
// promise has it. Partitions are led by different nodes, so every client talks to all three.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import { startCluster } from '../../src/index.js';
import { runProcess, within } from './process-helpers.js';

const PYTHON = '/usr/bin/python3';
const COUNT = 300;

function pythonSkip(): string | false {
  if (spawnSync(PYTHON, ['-c', 'import confluent_kafka']).status === 0) return false;
  if (process.env.CI) throw new Error('python3-confluent-kafka is missing in CI');
  return 'python3-confluent-kafka is not installed';
}

test('kafkajs and confluent-kafka-python on a 3-node cluster: create through one broker, produce through another, consume through the third', { timeout: 180_000 }, async (t) => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3, config: { 'group.initial.rebalance.delay.ms': '0' } }));
  try {
    const [a, b, c] = cluster.nodes.map((n) => `127.0.0.1:${n.brokerPort}`) as [string, string, string];
    const kafka = (broker: string) => new Kafka({ clientId: 'cluster-clients', brokers: [broker], logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100 } });

    const admin = kafka(a).admin();
    await admin.connect();
    assert.equal(await admin.createTopics({ topics: [{ topic: 'cluster-js', numPartitions: 6 }], waitForLeaders: true }), true);
    await admin.disconnect();
    const producer = kafka(b).producer({ idempotent: true });
    await producer.connect();
    await producer.send({ topic: 'cluster-js', acks: -1, messages: Array.from({ length: COUNT }, (_, i) => ({ key: `k${i % 20}`, value: `v${i}` })) });
    await producer.disconnect();
    const consumer = kafka(c).consumer({ groupId: 'cluster-js-group' });
    const seen = new Set<string>();
    await consumer.connect();
    await consumer.subscribe({ topic: 'cluster-js', fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => { seen.add(message.value!.toString()); } });
    await within(60_000, 'kafkajs consumes everything', (async () => { while (seen.size < COUNT) await new Promise((r) => setTimeout(r, 50)); })());
    await consumer.disconnect();
    assert.equal(seen.size, COUNT);

    const skip = pythonSkip();
    if (skip) { t.diagnostic(`confluent-kafka-python part skipped: ${skip}`); return; }
    const r = await runProcess(PYTHON, ['test/broker/python/cluster_roundtrip.py', c, a, b, 'cluster-py', String(COUNT)], null, 150_000);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { failed: string[]; seen: string[] };
    assert.deepEqual(out.failed, []);
    assert.equal(new Set(out.seen).size, COUNT, `${new Set(out.seen).size} of ${COUNT} records consumed`);
  } finally {
    await cluster.close();
  }
});
