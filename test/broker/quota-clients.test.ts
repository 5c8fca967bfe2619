// Client quotas against a real client (librdkafka through confluent-kafka-python), which sends and
// fetches as fast as it can: producer_byte_rate holds the producer to within 20% of 1 MB/s over
// 20 s, measured both by what the broker stored and by what the client had acknowledged, and
// consumer_byte_rate holds a consumer likewise. Kafka's Rate lets a fresh client send
// quota × (quota.window.num − 1) windows at once, then holds it to the quota, so over 20 s the
// average is the quota; the 20% covers one batch of overshoot and the client's own timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runProcess, tempDataDir } from './process-helpers.js';
import { startServer } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';

const PYTHON = '/usr/bin/python3';
const MB = 1024 * 1024;
const VALUE_BYTES = 1000;

function skipReason(): string | false {
  if (spawnSync(PYTHON, ['-c', 'import confluent_kafka']).status === 0) return false;
  if (process.env.CI) throw new Error('python3-confluent-kafka is missing in CI (apt-get install -y python3-confluent-kafka)');
  return 'python3-confluent-kafka is not installed (apt-get install -y python3-confluent-kafka)';
}

async function setQuota(client: ClusterClient, clientId: string, key: string, value: number): Promise<void> {
  const r = await client.admin(ApiKey.AlterClientQuotas, { entries: [{ entity: [{ entityType: 'client-id', entityName: clientId }], ops: [{ key, value, remove: false }] }], validateOnly: false }, 1);
  assert.equal(r.entries[0].errorCode, 0, r.entries[0].errorMessage);
}

async function createTopic(client: ClusterClient, name: string): Promise<void> {
  const r = await client.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7);
  assert.equal(r.topics[0].errorCode, 0);
}

test('producer_byte_rate=1 MB/s holds a librdkafka producer sending as fast as it can to within 20% over 20 s (stored and acknowledged)', { skip: skipReason(), timeout: 90_000 }, async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const client = new ClusterClient({ bootstrap });
  try {
    await createTopic(client, 'quota-produce');
    await setQuota(client, 'quota-producer', 'producer_byte_rate', MB);
    const r = await runProcess(PYTHON, ['test/broker/python/quota_producer.py', bootstrap, 'quota-produce', '20', String(VALUE_BYTES), 'quota-producer'], null, 80_000);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { sent: number; acked: number; stored: number; elapsed: number };
    const storedRate = (out.stored * VALUE_BYTES) / out.elapsed;
    const ackedRate = (out.acked * VALUE_BYTES) / out.elapsed;
    const report = `stored ${(storedRate / MB).toFixed(3)} MB/s, acknowledged ${(ackedRate / MB).toFixed(3)} MB/s over ${out.elapsed.toFixed(1)} s (${out.sent} records queued)`;
    console.log(`# producer quota 1 MB/s: ${report}`);
    // Unthrottled, this producer sends tens of MB/s here: the lower bound shows it was not starved, the upper that it was held.
    assert.ok(storedRate >= 0.8 * MB && storedRate <= 1.2 * MB, report);
    assert.ok(ackedRate >= 0.8 * MB && ackedRate <= 1.2 * MB, report);
    assert.ok(out.sent * VALUE_BYTES > 1.5 * 20 * MB, `the producer must have tried to send more than the quota: ${report}`);
  } finally {
    client.close();
    await server.close();
  }
});

test('consumer_byte_rate holds a librdkafka consumer reading as fast as it can to within 20% over 12 s', { skip: skipReason(), timeout: 90_000 }, async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const client = new ClusterClient({ bootstrap });
  const quota = 256 * 1024;
  const seconds = 12;
  try {
    await createTopic(client, 'quota-fetch');
    // Twice what the quota lets through in the test, so the consumer always has more to read.
    const conn = await client.leaderFor('quota-fetch', 0);
    const batch = await buildRecordBatch({ records: Array.from({ length: 256 }, () => ({ value: Buffer.alloc(VALUE_BYTES, 7) })) });
    for (let i = 0; i < Math.ceil((2 * quota * seconds) / (256 * VALUE_BYTES)); i++) {
      const p = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: 'quota-fetch', partitionData: [{ index: 0, records: batch }] }] });
      assert.equal(p.responses[0].partitionResponses[0].errorCode, 0);
    }
    await setQuota(client, 'quota-consumer', 'consumer_byte_rate', quota);
    const r = await runProcess(PYTHON, ['test/broker/python/quota_consumer.py', bootstrap, 'quota-fetch', String(seconds), 'quota-consumer'], null, 80_000);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { bytes: number; elapsed: number };
    const rate = out.bytes / out.elapsed;
    const report = `consumed ${(rate / 1024).toFixed(1)} KB/s over ${out.elapsed.toFixed(1)} s against a quota of ${quota / 1024} KB/s`;
    console.log(`# consumer quota: ${report}`);
    assert.ok(rate >= 0.8 * quota && rate <= 1.2 * quota, report);
  } finally {
    client.close();
    await server.close();
  }
});
