// Broker-side schema validation (confluent.value.schema.validation, confluent.key.schema.validation
// and the subject name strategies): a record whose value or key does not carry a schema id
// registered under the topic's subject is refused with INVALID_RECORD, each refused record named
// with its index (KIP-467), compressed batches included; a registered id is accepted. Through
// kafkajs, librdkafka (kcat) and raw Produce requests.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, CompressionTypes } from 'kafkajs';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { BrokerConnection } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatch, Compression } from '../../src/records/index.js';

let server: ServerHandle;
let url: string;
let bootstrap: string;
let conn: BrokerConnection;

before(async () => {
  const config = parseBrokerConfig({ 'node.id': '1', 'schema.registry.listener': '127.0.0.1:0', 'http.listener': '' });
  server = await startServer({ config, listeners: ['PLAINTEXT://127.0.0.1:0'], schemaRegistry: true });
  url = server.schemaRegistryUrl!;
  const l = server.listeners[0]!;
  bootstrap = `${l.host}:${l.port}`;
  conn = await BrokerConnection.open({ host: l.host, port: l.port });
});
after(async () => { conn.close(); await server.close(); });

async function register(subject: string, schema: unknown, schemaType?: string): Promise<number> {
  const res = await fetch(`${url}/subjects/${encodeURIComponent(subject)}/versions`, {
    method: 'POST', headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
    body: JSON.stringify({ schema: typeof schema === 'string' ? schema : JSON.stringify(schema), ...(schemaType ? { schemaType } : {}) }),
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { id: number }).id;
}

async function createTopic(name: string, configs: Record<string, string>): Promise<void> {
  const r = await conn.send(ApiKey.CreateTopics, 7, {
    topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })) }],
    timeoutMs: 5000, validateOnly: false,
  });
  assert.equal(r.topics[0].errorCode, 0, r.topics[0].errorMessage);
}

/** Confluent's wire format: magic byte 0, the schema id, then the payload. */
function framed(id: number, payload = 'payload'): Buffer {
  const b = Buffer.alloc(5 + payload.length);
  b.writeUInt8(0, 0);
  b.writeInt32BE(id, 1);
  b.write(payload, 5);
  return b;
}

async function produceRaw(topic: string, records: { key?: Buffer | null; value: Buffer | null }[], compression = Compression.None) {
  const batch = await buildRecordBatch({ records: records.map((r) => ({ key: r.key ?? null, value: r.value })), compression });
  const res = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] });
  return res.responses[0].partitionResponses[0] as { errorCode: number; errorMessage: string | null; baseOffset: bigint; recordErrors: { batchIndex: number; batchIndexErrorMessage: string | null }[] };
}

const AVRO_ORDER = { type: 'record', name: 'Order', namespace: 'shop', fields: [{ name: 'id', type: 'long' }] };
const AVRO_OTHER = { type: 'record', name: 'Other', namespace: 'shop', fields: [{ name: 'x', type: 'string' }] };

test('a value with a registered id is appended; an unknown id, an id of another subject and an unframed value are refused, each named (KIP-467), compressed or not', async () => {
  const good = await register('orders-value', AVRO_ORDER);
  const other = await register('elsewhere-value', AVRO_OTHER);
  await createTopic('orders', { 'confluent.value.schema.validation': 'true' });
  const ok = await produceRaw('orders', [{ value: framed(good) }, { value: null }]);
  assert.equal(ok.errorCode, 0);
  for (const compression of [Compression.None, Compression.Gzip, Compression.Zstd]) {
    const r = await produceRaw('orders', [{ value: framed(good) }, { value: framed(9999) }, { value: framed(other) }, { value: Buffer.from('plain text') }, { value: framed(good) }], compression);
    assert.equal(r.errorCode, ErrorCode.INVALID_RECORD, `compression ${compression}`);
    assert.deepEqual(r.recordErrors.map((e) => e.batchIndex), [1, 2, 3]);
    assert.match(r.recordErrors[0]!.batchIndexErrorMessage!, /schema id 9999: no schema has this id/);
    assert.match(r.recordErrors[1]!.batchIndexErrorMessage!, new RegExp(`schema id ${other}: it is not registered under subject orders-value`));
    assert.match(r.recordErrors[2]!.batchIndexErrorMessage!, /does not start with the magic byte 0 and a 4-byte schema id/);
    assert.match(r.errorMessage!, /One or more records have been rejected/);
  }
  // Nothing of the refused batches was written: the next append follows the first one.
  assert.equal((await produceRaw('orders', [{ value: framed(good) }])).baseOffset, 2n);
});

test('key validation uses the key subject; a topic without validation takes anything', async () => {
  const keyId = await register('keyed-key', { type: 'string' });
  const valueId = await register('keyed-value', AVRO_ORDER);
  await createTopic('keyed', { 'confluent.key.schema.validation': 'true' });
  assert.equal((await produceRaw('keyed', [{ key: framed(keyId), value: Buffer.from('anything') }, { key: null, value: Buffer.from('x') }])).errorCode, 0);
  const refused = await produceRaw('keyed', [{ key: framed(valueId), value: framed(valueId) }]);
  assert.equal(refused.errorCode, ErrorCode.INVALID_RECORD);
  assert.match(refused.recordErrors[0]!.batchIndexErrorMessage!, /key has schema id \d+: it is not registered under subject keyed-key/);
  await createTopic('free', {});
  assert.equal((await produceRaw('free', [{ value: Buffer.from('anything') }])).errorCode, 0);
});

test('RecordNameStrategy and TopicRecordNameStrategy name the subject after the schema\'s record', async () => {
  const byRecord = await register('shop.Order', AVRO_ORDER);
  await createTopic('by-record', { 'confluent.value.schema.validation': 'true', 'confluent.value.subject.name.strategy': 'io.confluent.kafka.serializers.subject.RecordNameStrategy' });
  assert.equal((await produceRaw('by-record', [{ value: framed(byRecord) }])).errorCode, 0);
  await createTopic('by-topic-record', { 'confluent.value.schema.validation': 'true', 'confluent.value.subject.name.strategy': 'io.confluent.kafka.serializers.subject.TopicRecordNameStrategy' });
  const refused = await produceRaw('by-topic-record', [{ value: framed(byRecord) }]);
  assert.match(refused.recordErrors[0]!.batchIndexErrorMessage!, /not registered under subject by-topic-record-shop\.Order/);
  await register('by-topic-record-shop.Order', AVRO_ORDER);
  assert.equal((await produceRaw('by-topic-record', [{ value: framed(byRecord) }])).errorCode, 0);
});

test('a subject name strategy Confluent does not have is refused when the topic is created', async () => {
  const r = await conn.send(ApiKey.CreateTopics, 7, {
    topics: [{ name: 'bad-strategy', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [{ name: 'confluent.value.subject.name.strategy', value: 'com.example.Mine' }] }],
    timeoutMs: 5000, validateOnly: false,
  });
  assert.equal(r.topics[0].errorCode, ErrorCode.INVALID_CONFIG);
});

test('kafkajs: a registered id is accepted, an unknown one refused with INVALID_RECORD (gzip batches too)', async () => {
  const id = await register('kjs-value', AVRO_ORDER);
  await createTopic('kjs', { 'confluent.value.schema.validation': 'true' });
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'validation-test', logLevel: logLevel.NOTHING, retry: { retries: 0 } });
  const producer = kafka.producer({ retry: { retries: 0 } });
  await producer.connect();
  try {
    for (const compression of [CompressionTypes.None, CompressionTypes.GZIP]) {
      const sent = await producer.send({ topic: 'kjs', compression, messages: [{ value: framed(id) }] });
      assert.equal(sent[0]!.errorCode, 0);
      await assert.rejects(producer.send({ topic: 'kjs', compression, messages: [{ value: framed(id) }, { value: framed(4242) }] }),
        (e: { type?: string; name?: string }) => e.type === 'INVALID_RECORD' || /INVALID_RECORD|Invalid record/i.test(String((e as Error).message)));
    }
  } finally {
    await producer.disconnect();
  }
});

/** kcat, run without blocking the event loop (the broker under test is in this process). */
function kcat(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('kcat', args, { timeout: 20_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

function kcatSkip(): string | false {
  if (spawnSync('kcat', ['-V']).status === 0) return false;
  if (process.env.CI) throw new Error('kcat is missing in CI');
  return 'kcat is not installed (apt-get install -y kcat)';
}

test('librdkafka (kcat): a registered id is delivered, an unknown one fails with INVALID_RECORD', { skip: kcatSkip() }, async () => {
  const id = await register('rdk-value', AVRO_ORDER);
  await createTopic('rdk', { 'confluent.value.schema.validation': 'true' });
  const dir = mkdtempSync(join(tmpdir(), 'kcat-'));
  const produce = (file: string, bytes: Buffer) => {
    writeFileSync(join(dir, file), bytes);
    // Each file is one message, in a snappy batch (decompressed by the broker to be checked).
    return kcat(['-P', '-b', bootstrap, '-t', 'rdk', '-X', 'message.send.max.retries=0', '-X', 'compression.codec=snappy', join(dir, file)]);
  };
  const ok = await produce('ok.bin', framed(id));
  assert.equal(ok.status, 0, ok.stderr);
  const bad = await produce('bad.bin', framed(31337));
  assert.notEqual(bad.status, 0);
  // librdkafka's text for INVALID_RECORD.
  assert.match(bad.stderr, /Broker failed to validate record/);
  const consumed = await kcat(['-C', '-b', bootstrap, '-t', 'rdk', '-e', '-f', '%S\n']);
  assert.deepEqual(consumed.stdout.trim().split('\n'), [String(framed(id).length)]);
});
