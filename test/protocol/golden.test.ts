// Frames captured from real clients (kcat / librdkafka 2.0 and kafkajs 2.2.4, see
// test/fixtures/capture-clients.ts) decode to what those clients sent and re-encode byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { decodeRequest, encodeRequestFrame } from '../../src/protocol/index.js';

const DIR = join(process.cwd(), 'test', 'fixtures', 'frames');
const fixtures = readdirSync(DIR).filter((f) => f.endsWith('.bin')).sort();
const load = (name: string) => decodeRequest(readFileSync(join(DIR, name)));

test('golden frames from kcat and kafkajs re-encode byte for byte', () => {
  assert.ok(fixtures.length >= 15, `${fixtures.length} fixtures`);
  for (const name of fixtures) {
    const frame = readFileSync(join(DIR, name));
    const { header, body } = decodeRequest(frame);
    const again = Buffer.concat(encodeRequestFrame(header.requestApiKey, header.requestApiVersion, header.correlationId, header.clientId, body));
    assert.ok(again.subarray(4).equals(frame), `${name} re-encodes differently`);
    const api = name.match(/-([A-Za-z]+)-v(\d+)/)!;
    assert.equal(header.requestApiVersion, Number(api[2]), name);
  }
});

test('kcat ApiVersions v3 names librdkafka in its flexible body', () => {
  const { header, body } = load('kcat-gzip-ApiVersions-v3.bin');
  assert.equal(header.clientId, 'rdkafka');
  assert.equal(body.clientSoftwareName, 'librdkafka');
  assert.match(String(body.clientSoftwareVersion), /^2\./);
});

test('kcat Produce v7: acks=all, one partition of topic kcat-<codec>, the codec in the batch attributes', () => {
  const codecs = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;
  for (const [codec, id] of Object.entries(codecs)) {
    const { body } = load(`kcat-${codec}-Produce-v7.bin`) as { body: any };
    assert.equal(body.acks, -1);
    assert.equal(body.transactionalId, null);
    assert.equal(body.topicData.length, 1);
    assert.equal(body.topicData[0].name, `kcat-${codec}`);
    const records: Buffer = body.topicData[0].partitionData[0].records;
    assert.equal(records[16], 2, 'magic 2');
    assert.equal(records.readInt16BE(21) & 7, id, `${codec} attribute`);
    assert.equal(records.readInt32BE(57), 10, 'ten records');
  }
});

test('kcat Fetch v11 and ListOffsets v2 ask for kcat-gzip partition 0', () => {
  const fetch = load('kcat-gzip-Fetch-v11.bin').body as any;
  assert.equal(fetch.replicaId, -1);
  assert.equal(fetch.topics[0].topic, 'kcat-gzip');
  assert.equal(fetch.topics[0].partitions[0].partition, 0);
  assert.equal(typeof fetch.topics[0].partitions[0].fetchOffset, 'bigint');
  const lo = load('kcat-gzip-ListOffsets-v2.bin').body as any;
  assert.equal(lo.topics[0].name, 'kcat-gzip');
  assert.equal(lo.topics[0].partitions[0].timestamp, -2n, 'earliest');
});

test('JoinGroup from kcat and kafkajs carries the consumer protocol and the group id', () => {
  for (const name of ['kcat-group-JoinGroup-v5.bin', 'kafkajs-JoinGroup-v5.bin']) {
    const body = load(name).body as any;
    assert.equal(body.groupId, 'capture-group');
    assert.equal(body.protocolType, 'consumer');
    assert.ok(body.protocols.length >= 1);
    assert.ok(Buffer.isBuffer(body.protocols[0].metadata));
  }
});

test('kafkajs Produce v7 with and without gzip; Metadata v6 names the topic', () => {
  const plain = load('kafkajs-Produce-v7.bin').body as any;
  assert.equal(load('kafkajs-Produce-v7.bin').header.clientId, 'capture');
  assert.equal(plain.topicData[0].name, 'kafkajs-none');
  assert.equal(plain.topicData[0].partitionData[0].records.readInt16BE(21) & 7, 0);
  const gz = load('kafkajs-Produce-v7-1.bin').body as any;
  assert.equal(gz.topicData[0].name, 'kafkajs-gzip');
  assert.equal(gz.topicData[0].partitionData[0].records.readInt16BE(21) & 7, 1);
  const md = load('kafkajs-Metadata-v6.bin').body as any;
  assert.deepEqual(md.topics.map((t: any) => t.name), ['kafkajs-none']);
});

test('records produced by kcat with every codec, and by kafkajs, decode to what was sent', async () => {
  const { iterateBatches, readRecords } = await import('../../src/records/index.js');
  const files = ['kcat-none', 'kcat-gzip', 'kcat-snappy', 'kcat-lz4', 'kcat-zstd'].map((l) => `${l}-Produce-v7.bin`)
    .concat(['kafkajs-Produce-v7.bin', 'kafkajs-Produce-v7-1.bin']);
  for (const name of files) {
    const body = load(name).body as any;
    const records = [];
    for (const batch of iterateBatches(body.topicData[0].partitionData[0].records)) {
      assert.ok(batch.verifyCrc(), `${name}: CRC`);
      records.push(...await readRecords(batch));
    }
    assert.equal(records.length, 10, name);
    records.forEach((r, i) => {
      assert.equal(r.key?.toString(), `key-${i}`, name);
      assert.equal(r.value?.toString(), `value-${i}-${'x'.repeat(40)}`, name);
      assert.deepEqual(r.headers.map((h) => [h.key, h.value?.toString()]), [['h1', 'v1']], name);
      assert.equal(r.offset, i, name);
      assert.ok(r.timestamp > 1_600_000_000_000, `${name}: a real create time`);
    });
  }
});
