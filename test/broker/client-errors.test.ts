// Records the broker refuses, as clients see them. Keyless records sent to a compacted topic make
// their batch fail with INVALID_RECORD; Produce v8+ names each bad record (KIP-467), which the Java
// client uses to tell bad records from their batch-mates; librdkafka fails the batch at once, with
// no retries. A topic name Kafka refuses fails at once instead of at message.timeout.ms.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runProcess, tempDataDir } from './process-helpers.js';
import { startServer } from '../../src/node/index.js';
import { BrokerConnection } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';

const PYTHON = '/usr/bin/python3';

function skipReason(): string | false {
  if (spawnSync(PYTHON, ['-c', 'import confluent_kafka']).status === 0) return false;
  if (process.env.CI) throw new Error('python3-confluent-kafka is missing in CI');
  return 'python3-confluent-kafka is not installed (apt-get install -y python3-confluent-kafka)';
}

test('Produce v8+ answers INVALID_RECORD with the index and reason of each keyless record on a compacted topic', async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const conn = await BrokerConnection.open({ host: '127.0.0.1', port: server.listeners[0]!.port });
  try {
    const created = await conn.send(ApiKey.CreateTopics, 7, { topics: [{ name: 'kv', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [{ name: 'cleanup.policy', value: 'compact' }] }], timeoutMs: 5000, validateOnly: false });
    assert.equal(created.topics[0].errorCode, 0);
    const records = await buildRecordBatch({ records: ['a', null, 'c', null].map((k) => ({ key: k === null ? null : Buffer.from(k), value: Buffer.from('v') })) });
    const produce = (version: number) => conn.send(ApiKey.Produce, version, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: 'kv', partitionData: [{ index: 0, records }] }] });
    const v9 = (await produce(9)).responses[0].partitionResponses[0];
    assert.equal(v9.errorCode, ErrorCode.INVALID_RECORD);
    assert.deepEqual(v9.recordErrors.map((e: { batchIndex: number }) => e.batchIndex), [1, 3]);
    assert.match(v9.recordErrors[0].batchIndexErrorMessage, /Compacted topic cannot accept message without key in topic partition kv-0/);
    assert.match(v9.errorMessage, /2 record errors in total/);
    const v7 = (await produce(7)).responses[0].partitionResponses[0];
    assert.equal(v7.errorCode, ErrorCode.INVALID_RECORD, 'older versions get the code alone');
  } finally {
    conn.close();
    await server.close();
  }
});

test('librdkafka: a batch with a keyless record for a compacted topic fails with INVALID_RECORD and is not written; an illegal topic name fails at once', { skip: skipReason() }, async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  try {
    const r = await runProcess(PYTHON, ['test/broker/python/client_errors.py', `127.0.0.1:${server.listeners[0]!.port}`], null, 120_000);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { reports: { key: string | null; topic: string; error: string | null; reason: string | null; offset: number }[]; invalidTopicSeconds: number; written: number };
    const compacted = out.reports.filter((x) => x.topic === 'compacted');
    assert.deepEqual(compacted.map((x) => x.key), ['a', null, 'b'], JSON.stringify(out.reports));
    // Whether librdkafka puts the three in one batch depends on when it learned the topic's
    // leader: the keyless record always fails, and so does whatever shared its batch.
    assert.equal(compacted[1]!.error, 'INVALID_RECORD');
    for (const x of compacted) assert.ok(x.error === null || x.error === 'INVALID_RECORD', JSON.stringify(x));
    assert.equal(out.written, compacted.filter((x) => x.error === null).length, 'exactly the records reported written are in the log');
    const invalid = out.reports.find((x) => x.topic === 'bad$name!');
    assert.equal(invalid?.error, 'TOPIC_EXCEPTION', JSON.stringify(out.reports));
    // message.timeout.ms is 30 s: a client that kept retrying would report after it.
    assert.ok(out.invalidTopicSeconds < 15, `reported after ${out.invalidTopicSeconds} s`);
  } finally {
    await server.close();
  }
});
