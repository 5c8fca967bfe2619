// Real clients against the broker (in-memory backend): kcat (librdkafka), kafkajs, and our client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runProcess, tempDataDir } from './process-helpers.js';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { ClusterClient, partitionForKey } from '../../src/client/index.js';
import { ApiKey, ZERO_UUID } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';

const hasKcat = spawnSync('kcat', ['-V']).status === 0;
// In CI every client must be there: a missing kcat fails instead of skipping.
if (!hasKcat && process.env.CI) throw new Error('kcat is missing in CI (apt-get install -y kcat)');

async function broker(): Promise<{ server: ServerHandle; bootstrap: string; client: ClusterClient }> {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  return { server, bootstrap, client: new ClusterClient({ bootstrap }) };
}

async function createTopic(client: ClusterClient, name: string, partitions: number): Promise<void> {
  const r = await client.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7);
  assert.equal(r.topics[0].errorCode, 0, r.topics[0].errorMessage);
}


test('kcat produces with every codec and consumes back every key, value, header and partition', { skip: hasKcat ? false : 'kcat is not installed (apt-get install kcat)' }, async () => {
  const { server, bootstrap, client } = await broker();
  try {
    for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) {
      const topic = `kcat-${codec}`;
      await createTopic(client, topic, 6);
      const lines = Array.from({ length: 2000 }, (_, i) => `key-${i % 97}:value-${i}`).join('\n') + '\n';
      const p = await runProcess('kcat', ['-P', '-b', bootstrap, '-t', topic, '-K', ':', '-H', 'h1=v1', '-z', codec, '-X', 'partitioner=murmur2_random'], lines);
      assert.equal(p.code, 0, p.stderr);
      const c = await runProcess('kcat', ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%k|%s|%p|%o|%h\\n']);
      assert.equal(c.code, 0, c.stderr);
      const rows = c.stdout.trim().split('\n').map((l) => l.split('|'));
      assert.equal(rows.length, 2000, `${codec}: ${rows.length} records`);
      const values = new Set(rows.map((r) => r[1]));
      for (let i = 0; i < 2000; i++) assert.ok(values.has(`value-${i}`), `${codec}: value-${i} missing`);
      for (const [key, value, partition, , headers] of rows) {
        assert.equal(Number(partition), partitionForKey(Buffer.from(key!), 6), `${codec}: ${key} in partition ${partition}`);
        assert.equal(key, `key-${Number(value!.slice(6)) % 97}`);
        assert.equal(headers, 'h1=v1');
      }
      // Offsets within each partition are contiguous from 0.
      const byPartition = new Map<string, number[]>();
      for (const r of rows) byPartition.set(r[2]!, [...(byPartition.get(r[2]!) ?? []), Number(r[3])]);
      for (const offsets of byPartition.values()) assert.deepEqual(offsets, offsets.map((_, i) => i));
    }
    const list = await runProcess('kcat', ['-L', '-b', bootstrap, '-J']);
    const meta = JSON.parse(list.stdout);
    assert.ok(meta.topics.some((t: any) => t.topic === 'kcat-zstd' && t.partitions.length === 6));
  } finally {
    client.close();
    await server.close();
  }
});

test('kafkajs produces keyed records with headers; offsets and partitions come back through Fetch', async () => {
  const { Kafka, logLevel } = await import('kafkajs');
  const { server, bootstrap, client } = await broker();
  try {
    await createTopic(client, 'kjs', 6);
    const kafka = new Kafka({ clientId: 'test', brokers: [bootstrap], logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    const sent = await producer.send({ topic: 'kjs', messages: Array.from({ length: 500 }, (_, i) => ({ key: `k${i % 13}`, value: `v${i}`, headers: { h: 'x' } })) });
    await producer.disconnect();
    assert.equal(sent.reduce((n, r) => n + (r.errorCode === 0 ? 1 : 0), 0), sent.length);
    const admin = kafka.admin();
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets('kjs');
    await admin.disconnect();
    const total = offsets.reduce((n, o) => n + Number(o.high), 0);
    assert.equal(total, 500);
    for (let k = 0; k < 13; k++) {
      const part = partitionForKey(Buffer.from(`k${k}`), 6);
      assert.ok(Number(offsets.find((o) => o.partition === part)!.high) > 0);
    }
  } finally {
    client.close();
    await server.close();
  }
});

// The Fetch may wait 10 s; a record produced 200 ms in must end the wait, not the 10 s timer.
test('a consumer waiting in a long poll receives a record produced afterwards long before max_wait_ms', async () => {
  const { server, client } = await broker();
  try {
    await createTopic(client, 'poll', 1);
    const conn = await client.leaderFor('poll', 0);
    const started = process.hrtime.bigint();
    let producedAt = 0n;
    const fetch = conn.send(ApiKey.Fetch, 11, {
      replicaId: -1, maxWaitMs: 10_000, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'poll', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [], rackId: '',
    }).then((r) => ({ r, at: process.hrtime.bigint() }));
    await new Promise((r) => setTimeout(r, 200));
    const other = await client.leaderFor('poll', 0);
    const batch = await buildRecordBatch({ records: [{ value: Buffer.from('late') }] });
    producedAt = process.hrtime.bigint();
    await other.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 'poll', partitionData: [{ index: 0, records: batch }] }] });
    const { r, at } = await fetch;
    const latencyMs = Number(at - producedAt) / 1e6;
    assert.ok(r.responses[0].partitions[0].records.length > 0);
    assert.ok(Number(at - started) / 1e6 >= 190, 'the fetch really waited');
    assert.ok(latencyMs < 2000, `delivered ${latencyMs.toFixed(1)} ms after the produce, with 10 s of max_wait_ms`);
    void ZERO_UUID;
  } finally {
    client.close();
    await server.close();
  }
});
