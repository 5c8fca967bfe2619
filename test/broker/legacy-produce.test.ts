// Legacy message sets (magic 0/1) on the produce path of a real server: they are up-converted
// before anything reads RecordBatch v2 header fields, so bytes that happen to sit at a v2 batch's
// attributes, producer id or epoch never make a produce transactional. Issue 30: a Produce v1 whose
// set had the transactional bit at the v2 attributes offset went to the transaction coordinator
// with a garbage producer id and was answered NOT_ENOUGH_REPLICAS until the client gave up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { tempDataDir } from './process-helpers.js';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { ClusterClient, type BrokerConnection } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { ATTR_TRANSACTIONAL, BatchHeaderAt, Compression, decompressBatchBody, iterateBatches, iterateRecords } from '../../src/records/index.js';
import { legacyMessage, legacyWrapper } from '../fixtures/legacy-encoder.js';

interface Sent { key: Buffer | null; value: Buffer | null; timestamp: number }

/** A one-node server, a connection to it, and a count of the transaction checks its produce path makes. */
async function server(): Promise<{ server: ServerHandle; client: ClusterClient; conn: BrokerConnection; txnChecks: () => number }> {
  const s = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const broker = s.broker!;
  let checks = 0;
  const check = broker.checkTxnPartitions.bind(broker);
  broker.checkTxnPartitions = (p, add) => { checks++; return check(p, add); };
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${s.listeners[0]!.port}` });
  return { server: s, client, conn: await client.any(), txnChecks: () => checks };
}

async function createTopic(client: ClusterClient, name: string): Promise<void> {
  const r = await client.admin(ApiKey.CreateTopics, {
    topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [{ name: 'message.timestamp.type', value: 'CreateTime' }] }],
    timeoutMs: 5000, validateOnly: false,
  }, 7);
  assert.equal(r.topics[0].errorCode, 0, r.topics[0].errorMessage);
}

/** One Produce of `records` to partition 0 at `version`; its error code and base offset. */
async function produce(conn: BrokerConnection, version: number, topic: string, records: Buffer, transactionalId: string | null = null): Promise<{ errorCode: number; baseOffset: bigint }> {
  const r = await conn.send(ApiKey.Produce, version, { transactionalId, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
  return r.responses[0].partitionResponses[0];
}

/** `count` records from `offset` on, read back with Fetch v12 as a modern consumer reads them. */
async function readBack(conn: BrokerConnection, topic: string, offset: bigint, count: number): Promise<Sent[]> {
  const out: Sent[] = [];
  for (let next = offset; out.length < count;) {
    const r = await conn.send(ApiKey.Fetch, 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 52428800, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: next, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1048576 }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const p = r.responses[0].partitions[0];
    assert.equal(p.errorCode, 0);
    assert.ok(p.records && p.records.length > 0, `records from offset ${next}`);
    for (const batch of iterateBatches(p.records)) {
      for (const rec of iterateRecords(batch, await decompressBatchBody(batch))) {
        if (BigInt(rec.offset) < next || out.length === count) continue;
        assert.equal(BigInt(rec.offset), next, 'offsets are contiguous');
        out.push({ key: rec.key, value: rec.value, timestamp: rec.timestamp });
        next++;
      }
    }
  }
  return out;
}

/** Whether a RecordBatch v2 reading of these bytes would see the transactional attribute. */
const looksTransactional = (records: Buffer) => (records.readInt16BE(BatchHeaderAt.Attributes) & ATTR_TRANSACTIONAL) !== 0;

test('a legacy set with the transactional bit where a v2 batch has its attributes is accepted by Produce v1 and v2 and reads back', async () => {
  const { server: s, client, conn, txnChecks } = await server();
  try {
    await createTopic(client, 'legacy-attributes');
    // Magic 0: bytes 21-22 are the key length's last byte and the key's first; 'p' is 0x70.
    const v0: Sent[] = Array.from({ length: 4 }, (_, i) => ({ key: Buffer.from(`partner-${i}`), value: Buffer.from(`value-${i}-${'x'.repeat(300)}`), timestamp: -1 }));
    const magic0 = Buffer.concat(v0.map((m, i) => legacyMessage({ magic: 0, key: m.key, value: m.value, offset: i })));
    // Magic 1: bytes 21-22 are in the timestamp (bit 28 of it is the v2 transactional bit).
    const ts = 1_700_000_000_000 + 2 ** 28;
    const v1: Sent[] = Array.from({ length: 4 }, (_, i) => ({ key: null, value: Buffer.from(`value-${i}-${'y'.repeat(300)}`), timestamp: ts + i }));
    const magic1 = Buffer.concat(v1.map((m, i) => legacyMessage({ magic: 1, key: m.key, value: m.value, timestamp: m.timestamp, offset: i })));
    assert.ok(looksTransactional(magic0) && looksTransactional(magic1), 'the sets carry the bit where a v2 batch has it');

    const first = await produce(conn, 1, 'legacy-attributes', magic0);
    assert.deepEqual([first.errorCode, first.baseOffset], [ErrorCode.NONE, 0n], 'Produce v1, magic 0');
    const second = await produce(conn, 2, 'legacy-attributes', magic1);
    assert.deepEqual([second.errorCode, second.baseOffset], [ErrorCode.NONE, 4n], 'Produce v2, magic 1');
    assert.deepEqual(await readBack(conn, 'legacy-attributes', 0n, 8), [...v0, ...v1]);
    assert.equal(txnChecks(), 0, 'no transaction check');
  } finally {
    client.close();
    await s.close();
  }
});

test('from Produce v3 a legacy set is UNSUPPORTED_FOR_MESSAGE_FORMAT, also with a transactional id and the bit where a v2 batch has its attributes', async () => {
  const { server: s, client, conn, txnChecks } = await server();
  try {
    await createTopic(client, 'legacy-v3');
    const set = legacyMessage({ magic: 0, key: Buffer.from('pay'), value: Buffer.from('v'.repeat(300)), offset: 0 });
    assert.ok(looksTransactional(set));
    for (const transactionalId of [null, 'txn-1']) {
      const r = await produce(conn, 3, 'legacy-v3', set, transactionalId);
      assert.equal(r.errorCode, ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, `transactional id ${transactionalId}`);
    }
    assert.equal(txnChecks(), 0, 'no transaction check');
  } finally {
    client.close();
    await s.close();
  }
});

const bytesArb = (maxLength: number) => fc.option(fc.uint8Array({ maxLength }).map((a) => Buffer.from(a)), { nil: null });

test('property: legacy sets of any magic, codec, size, key, value and timestamp are accepted by Produce v0-2 (or refused with a Kafka code) and read back equal, never checked as transactional', async () => {
  const { server: s, client, conn, txnChecks } = await server();
  const topic = 'legacy-property';
  let offset = 0n;
  let withBit = 0;
  try {
    await createTopic(client, topic);
    const now = Date.now();
    await fc.assert(fc.asyncProperty(
      fc.constantFrom<0 | 1>(0, 1), fc.constantFrom(Compression.None, Compression.Gzip, Compression.Snappy, Compression.Lz4),
      fc.integer({ min: 0, max: 2 }),
      fc.array(fc.record({
        key: bytesArb(40), value: bytesArb(700),
        // CreateTime up to message.timestamp.after.max.ms (1 h) ahead is kept; 2 h ahead is refused.
        timestamp: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: now }), fc.constant(now + 2 * 3_600_000)),
      }), { minLength: 1, maxLength: 12 }),
      async (magic, codec, versionPick, recs) => {
        // Magic 1 came with Produce v2 (Kafka 0.10); magic 0 with any of v0-2.
        const version = magic === 1 ? 2 : versionPick;
        const msgs = recs.map((r, i) => legacyMessage({ magic, key: r.key, value: r.value, timestamp: r.timestamp, offset: i }));
        const set = codec === Compression.None ? Buffer.concat(msgs) : await legacyWrapper(magic, codec, msgs, { timestamp: Math.max(0, ...recs.map((r) => r.timestamp)) });
        if (set.length >= 23 && looksTransactional(set)) withBit++;
        const r = await produce(conn, version, topic, set);
        if (magic === 1 && recs.some((x) => x.timestamp > now + 3_600_000)) {
          assert.equal(r.errorCode, ErrorCode.INVALID_TIMESTAMP);
          return;
        }
        assert.equal(r.errorCode, ErrorCode.NONE);
        assert.equal(r.baseOffset, offset);
        const back = await readBack(conn, topic, offset, recs.length);
        offset += BigInt(recs.length);
        assert.deepEqual(back, recs.map((x) => ({ key: x.key, value: x.value, timestamp: magic === 0 ? -1 : x.timestamp })));
      },
    ), { numRuns: 80 });
    assert.ok(withBit > 0, 'some sets carried the transactional bit where a v2 batch has it');
    assert.equal(txnChecks(), 0, 'no transaction check');
  } finally {
    client.close();
    await s.close();
  }
});
