// fetch.max.bytes: the broker's cap on a consumer's Fetch, whatever max_bytes it asks for (Kafka's
// KafkaApis), with at least the first batch returned so a consumer is never stuck.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';

test('fetch.max.bytes caps what a consumer\'s Fetch returns (a batch larger than it still comes alone)', async () => {
  const server = await startServer({ config: parseBrokerConfig({ 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0', 'fetch.max.bytes': '2048' }) });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'capped', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0);
    const conn = await client.leaderFor('capped', 0);
    const produce = async (valueBytes: number) => {
      const records = await buildRecordBatch({ records: [{ value: Buffer.alloc(valueBytes, 0x61) }] });
      const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 'capped', partitionData: [{ index: 0, records }] }] });
      assert.equal(r.responses[0].partitionResponses[0].errorCode, 0);
    };
    for (let i = 0; i < 10; i++) await produce(500);
    const fetch = async (fetchOffset: bigint) => {
      const r = await conn.send(ApiKey.Fetch, 12, {
        replicaId: -1, maxWaitMs: 0, minBytes: 1 << 20, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topic: 'capped', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
        forgottenTopicsData: [], rackId: '',
      });
      return (r.responses[0].partitions[0].records as Buffer | null)?.length ?? 0;
    };
    // Ten ~570-byte batches: three fit in 2048 bytes; min_bytes of 1 MiB does not make it wait for more.
    const capped = await fetch(0n);
    assert.ok(capped > 0 && capped <= 2048, `${capped} bytes`);
    // A batch larger than fetch.max.bytes comes alone.
    await produce(5000);
    const big = await fetch(10n);
    assert.ok(big > 5000 && big < 6000, `${big} bytes`);
  } finally {
    client.close();
    await server.close();
  }
});
