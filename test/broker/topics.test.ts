// Topic lifecycle through the wire: create, grow, delete, re-create; the data path follows.
import { test } from 'node:test';
import { tempDataDir } from './process-helpers.js';
import assert from 'node:assert/strict';
import { startServer } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode, ZERO_UUID } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';

test('CreatePartitions adds writable partitions; DeleteTopics removes the topic and its data; re-creating starts empty', async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    const createTopic = () => client.admin(ApiKey.CreateTopics, { topics: [{ name: 'life', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false }, 7);
    assert.equal((await createTopic()).topics[0].errorCode, 0);
    assert.equal((await createTopic()).topics[0].errorCode, ErrorCode.TOPIC_ALREADY_EXISTS);
    const grown = await client.admin(ApiKey.CreatePartitions, { topics: [{ name: 'life', count: 4, assignments: null }], timeoutMs: 1000, validateOnly: false }, 3);
    assert.equal(grown.results[0].errorCode, 0);
    const meta = await client.topic('life');
    assert.deepEqual(meta.partitions.map((p) => p.partition), [0, 1, 2, 3]);
    const records = await buildRecordBatch({ records: [{ value: Buffer.from('p3') }] });
    const conn = await client.leaderFor('life', 3);
    const produce = () => conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 'life', partitionData: [{ index: 3, records }] }] });
    assert.equal((await produce()).responses[0].partitionResponses[0].errorCode, 0);
    const deleted = await client.admin(ApiKey.DeleteTopics, { topics: [{ name: null, topicId: meta.topicId }], topicNames: [], timeoutMs: 1000 }, 6);
    assert.equal(deleted.responses[0].errorCode, 0);
    assert.equal(deleted.responses[0].name, 'life');
    const [gone] = await client.metadata(['life']);
    assert.equal(gone!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal((await produce()).responses[0].partitionResponses[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const again = await client.admin(ApiKey.DeleteTopics, { topics: [{ name: 'life', topicId: ZERO_UUID }], topicNames: [], timeoutMs: 1000 }, 6);
    assert.equal(again.responses[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal((await createTopic()).topics[0].errorCode, 0);
    const fresh = await client.topic('life');
    assert.notEqual(fresh.topicId, meta.topicId, 'a new topic id');
    const lo = await conn.send(ApiKey.ListOffsets, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'life', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] });
    assert.equal(lo.topics[0].partitions[0].offset, 0n, 'the re-created topic is empty');
  } finally {
    client.close();
    await server.close();
  }
});

test('delete.topic.enable=false: DeleteTopics answers TOPIC_DELETION_DISABLED (INVALID_REQUEST before v3) and the topic stays', async () => {
  const { parseBrokerConfig } = await import('../../src/config/index.js');
  const server = await startServer({ config: parseBrokerConfig({ 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0', 'delete.topic.enable': 'false' }), dataDir: tempDataDir() });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'kept', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0);
    const v6 = await client.admin(ApiKey.DeleteTopics, { topics: [{ name: 'kept', topicId: ZERO_UUID }], topicNames: [], timeoutMs: 1000 }, 6);
    assert.equal(v6.responses[0].errorCode, ErrorCode.TOPIC_DELETION_DISABLED);
    const v2 = await client.admin(ApiKey.DeleteTopics, { topics: [], topicNames: ['kept'], timeoutMs: 1000 }, 2);
    assert.equal(v2.responses[0].errorCode, ErrorCode.INVALID_REQUEST);
    const [still] = await client.metadata(['kept']);
    assert.equal(still!.errorCode, 0, 'the topic is still there');
  } finally {
    client.close();
    await server.close();
  }
});
