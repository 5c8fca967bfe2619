// @platformatic/kafka speaks only flexible versions (Metadata 9+, Produce 9+, CreateTopics 5+);
// read back through Fetch v17 (topic ids) with our own client.
import { test } from 'node:test';
import { tempDataDir } from './process-helpers.js';
import assert from 'node:assert/strict';
import { startServer } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { iterateBatches, readRecords } from '../../src/records/index.js';

test('@platformatic/kafka creates a topic and produces; Fetch by topic id returns every record', async () => {
  const { Producer, Admin, stringSerializers } = await import('@platformatic/kafka');
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const client = new ClusterClient({ bootstrap });
  try {
    const admin = new Admin({ clientId: 'plat-admin', bootstrapBrokers: [bootstrap] });
    await admin.createTopics({ topics: ['plat'], partitions: 3, replicas: 1 });
    await admin.close();
    // Idempotence (InitProducerId) arrives with its own issue; until then the producer opts out.
    const producer = new Producer({ clientId: 'plat', bootstrapBrokers: [bootstrap], serializers: stringSerializers, idempotent: false, acks: -1 });
    await producer.send({ messages: Array.from({ length: 300 }, (_, i) => ({ topic: 'plat', key: `k${i % 17}`, value: `v${i}`, headers: { h: 'x' } })) });
    await producer.close();
    const meta = await client.topic('plat');
    const conn = await client.any();
    assert.equal(conn.version(1), 17);
    const seen: { p: number; key: string; value: string }[] = [];
    for (const p of meta.partitions) {
      const r = await conn.send(1, 17, {
        replicaState: { replicaId: -1, replicaEpoch: -1n }, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topicId: meta.topicId, partitions: [{ partition: p.partition, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
        forgottenTopicsData: [], rackId: '',
      });
      assert.equal(r.responses[0].topicId, meta.topicId);
      const part = r.responses[0].partitions[0];
      assert.equal(part.errorCode, 0);
      for (const batch of iterateBatches(part.records)) {
        for (const rec of await readRecords(batch)) {
          seen.push({ p: p.partition, key: rec.key!.toString(), value: rec.value!.toString() });
          assert.deepEqual(rec.headers.map((h) => [h.key, h.value?.toString()]), [['h', 'x']]);
        }
      }
    }
    assert.equal(seen.length, 300);
    assert.equal(new Set(seen.map((s) => s.value)).size, 300);
    // Its default partitioner is its own; what must hold is that a key stays on one partition.
    const partitionOf = new Map<string, number>();
    for (const s of seen) {
      assert.equal(partitionOf.get(s.key) ?? s.p, s.p, `${s.key} on two partitions`);
      partitionOf.set(s.key, s.p);
    }
  } finally {
    client.close();
    await server.close();
  }
});
