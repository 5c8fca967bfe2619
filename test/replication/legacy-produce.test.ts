// The produce path for legacy message sets: the Produce handler marks v0-2 magic 0/1 sets, the
// replica manager up-converts them before the append, with Kafka's size checks around it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ReplicaManager, Partition, realScheduler } from '../../src/replication/index.js';
import { storageLog, storedBatches } from './helpers.js';
import { produceHandler } from '../../src/broker/handlers/00-produce.js';
import { Compression, RecordBatchView, crc32, readRecords } from '../../src/records/index.js';
import { ErrorCode, decodeRequest } from '../../src/protocol/index.js';
import { partitionKey, systemClock } from '../../src/util/index.js';
import { LEGACY_FIXTURE_RECORDS, LEGACY_FIXTURE_TIMESTAMP } from '../fixtures/legacy-records.js';

const FRAMES = join(process.cwd(), 'test', 'fixtures', 'frames');
const produced = (name: string): Buffer =>
  (decodeRequest(readFileSync(join(FRAMES, name))).body as any).topicData[0].partitionData[0].records;

function setup(maxMessageBytes?: number) {
  const rm = new ReplicaManager(1, systemClock, realScheduler, { fetchPurgatoryOperationsMax: 100, producePurgatoryOperationsMax: 100 });
  const log = storageLog();
  rm.addPartition(new Partition('t', 0, log, 0, 1, 1, 1, maxMessageBytes));
  return { rm, log };
}

const str = (b: Buffer | null) => (b === null ? null : b.toString());

test('legacy sets from kcat (magic 0, lz4) and kafka-python (magic 1, gzip) are appended as v2 batches with offsets in sequence', async () => {
  const { rm, log } = setup();
  const a = await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: produced('legacy-kcat0.9.0-lz4-Produce-v1.bin'), legacyMessageSet: true }]);
  assert.equal(a.get(partitionKey('t', 0))!.errorCode, 0, a.get(partitionKey('t', 0))!.errorMessage ?? '');
  assert.equal(a.get(partitionKey('t', 0))!.baseOffset, 0n);
  const b = await rm.produce(-1, 1000, [{ topic: 't', partition: 0, records: produced('legacy-kafkapython0.10-gzip-Produce-v2.bin'), legacyMessageSet: true }]);
  assert.equal(b.get(partitionKey('t', 0))!.errorCode, 0, b.get(partitionKey('t', 0))!.errorMessage ?? '');
  assert.equal(b.get(partitionKey('t', 0))!.baseOffset, 4n);
  assert.equal(rm.partition('t', 0)!.highWatermark, 8);
  const batches = await storedBatches(log);
  assert.equal(batches.length, 2);
  const [lz4, gzip] = batches.map((bytes) => new RecordBatchView(bytes));
  assert.equal(lz4!.compression, Compression.Lz4);
  assert.equal(gzip!.compression, Compression.Gzip);
  const records = [...await readRecords(lz4!), ...await readRecords(gzip!)];
  assert.deepEqual(records.map((r) => r.offset), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(records.map((r) => ({ key: str(r.key), value: str(r.value) })), [...LEGACY_FIXTURE_RECORDS, ...LEGACY_FIXTURE_RECORDS]);
  assert.deepEqual(records.map((r) => r.timestamp), [-1, -1, -1, -1, ...[0, 1, 2, 3].map((i) => LEGACY_FIXTURE_TIMESTAMP + i)]);
});

test('a legacy set with a bad CRC gets CORRUPT_MESSAGE and nothing is appended', async () => {
  const { rm, log } = setup();
  const bad = Buffer.from(produced('legacy-kcat0.9.0-none-Produce-v1.bin'));
  bad[bad.length - 1]! ^= 0xff;
  const r = await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: bad, legacyMessageSet: true }]);
  assert.equal(r.get(partitionKey('t', 0))!.errorCode, ErrorCode.CORRUPT_MESSAGE);
  assert.equal(log.logEndOffset, 0);
});

test('max.message.bytes applies to each legacy message and again to the converted batch', async () => {
  const legacy = produced('legacy-kafkapython0.10-none-Produce-v2.bin'); // four messages of ~80 bytes
  let largestMessage = 0;
  for (let at = 0; at < legacy.length; at += 12 + legacy.readInt32BE(at + 8)) largestMessage = Math.max(largestMessage, 12 + legacy.readInt32BE(at + 8));
  const small = setup(largestMessage - 1);
  assert.equal((await small.rm.produce(1, 1000, [{ topic: 't', partition: 0, records: legacy, legacyMessageSet: true }])).get(partitionKey('t', 0))!.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
  const medium = setup(largestMessage + 1);
  const r = (await medium.rm.produce(1, 1000, [{ topic: 't', partition: 0, records: legacy, legacyMessageSet: true }])).get(partitionKey('t', 0))!;
  assert.equal(r.errorCode, ErrorCode.MESSAGE_TOO_LARGE, 'the converted batch of four records is larger than any one message');
  assert.match(r.errorMessage ?? '', /converted/);
  assert.equal(medium.log.logEndOffset, 0);
});

// ------------------------------------------------------------------------------ the handler

const ctx = (apiVersion: number, services: unknown) => ({
  header: { requestApiKey: 0, requestApiVersion: apiVersion, correlationId: 1, clientId: 'c' }, apiVersion,
  connectionId: 'c1', clientAddress: '127.0.0.1', listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', principal: 'User:ANONYMOUS', nowMs: 0, services,
}) as any;

/** A magic-0 message with key `dddd`: read as a v2 header, its byte 22 says zstd (0x64 & 7 = 4). */
function magic0LooksLikeZstd(): Buffer {
  const body = Buffer.concat([Buffer.from([0, 0, 0, 0, 0, 4]), Buffer.from('dddd'), Buffer.from([0, 0, 0, 1]), Buffer.from('v')]);
  const head = Buffer.alloc(16);
  head.writeInt32BE(4 + body.length, 8);
  head.writeUInt32BE(crc32(body), 12);
  return Buffer.concat([head, body]);
}

test('Produce v0-2 hands legacy sets to the replica manager marked for conversion; v3+ and v2 batches pass as they are', async () => {
  const seen: any[] = [];
  const services = {
    producePartitions: async (p: any) => {
      seen.push(...p.entries);
      return new Map(p.entries.map((e: any) => [partitionKey(e.topic, e.partition), { errorCode: 0, errorMessage: null, baseOffset: 3n, logAppendTimeMs: 1234n, logStartOffset: 0n, recordErrors: [] }]));
    },
  };
  const req = (records: Buffer) => ({ transactionalId: null, acks: 1, timeoutMs: 100, topicData: [{ name: 't', partitionData: [{ index: 0, records }] }] });
  const legacy = magic0LooksLikeZstd();
  const v2 = produced('kcat-none-Produce-v7.bin');
  for (const version of [0, 1, 2]) {
    const r: any = await produceHandler.handle(req(legacy), ctx(version, services));
    assert.equal(r.responses[0].partitionResponses[0].errorCode, 0, `v${version}: not mistaken for zstd`);
    assert.equal(r.responses[0].partitionResponses[0].baseOffset, 3n);
    assert.equal(r.responses[0].partitionResponses[0].logAppendTimeMs, 1234n);
    assert.equal(seen.pop().legacyMessageSet, true, `v${version}`);
    await produceHandler.handle(req(v2), ctx(version, services));
    assert.equal(seen.pop().legacyMessageSet, undefined, `v${version} with a v2 batch`);
  }
  await produceHandler.handle(req(legacy), ctx(3, services));
  assert.equal(seen.pop().legacyMessageSet, undefined, 'v3 never converts');
});
