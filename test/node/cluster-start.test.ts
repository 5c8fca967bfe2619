// startCluster's own timeouts for nodes that start together (shorter elections and heartbeats than
// Kafka's defaults, which made a 3-node cluster take 3-4 s to start): every broker reports them
// through DescribeConfigs, a user's `config` overrides each, and such a cluster elects, registers
// every broker and takes an acks=all produce that a consumer reads back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, type ClusterHandle } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, isRetriable } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';
import { within } from '../broker/process-helpers.js';

const KEYS = ['controller.quorum.election.timeout.ms', 'controller.quorum.election.backoff.max.ms', 'broker.heartbeat.interval.ms',
  'controller.quorum.fetch.timeout.ms', 'broker.session.timeout.ms'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Each node's own broker configs, as DescribeConfigs (broker resource `<node id>`) reports them to a client. */
async function brokerConfigs(cluster: ClusterHandle): Promise<Record<string, string>[]> {
  return Promise.all(cluster.nodes.map(async (node) => {
    const client = new ClusterClient({ bootstrap: `127.0.0.1:${node.brokerPort}` });
    try {
      const r = await client.admin(ApiKey.DescribeConfigs, { resources: [{ resourceType: 4, resourceName: String(node.nodeId), configurationKeys: KEYS }], includeSynonyms: false, includeDocumentation: false }, 4);
      assert.equal(r.results[0].errorCode, 0, r.results[0].errorMessage);
      return Object.fromEntries(r.results[0].configs.map((c: { name: string; value: string }) => [c.name, c.value]));
    } finally {
      client.close();
    }
  }));
}

test('startCluster: shorter election and heartbeat timeouts than Kafka\'s (fetch and session timeouts unchanged); every broker is registered and an acks=all produce is read back', { timeout: 90_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3 }));
  try {
    const expected = {
      'controller.quorum.election.timeout.ms': '300', 'controller.quorum.election.backoff.max.ms': '300', 'broker.heartbeat.interval.ms': '200',
      'controller.quorum.fetch.timeout.ms': '2000', 'broker.session.timeout.ms': '9000',
    };
    assert.deepEqual(await brokerConfigs(cluster), [expected, expected, expected]);

    const client = new ClusterClient({ bootstrap: cluster.bootstrap });
    try {
      // startCluster resolved: every node is registered, unfenced and listed.
      await client.metadata([]);
      assert.deepEqual([...client.brokers.keys()].sort(), [1, 2, 3]);
      const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'first', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }, 7);
      assert.equal(created.topics[0].errorCode, 0, created.topics[0].errorMessage);
      const records = await buildRecordBatch({ records: [{ value: Buffer.from('hello') }] });
      // The leader's own metadata may not hold the new topic yet: retriable, as clients treat it.
      let code = -1;
      for (let attempt = 0; attempt < 100 && code !== 0; attempt++) {
        const conn = await client.leaderFor('first', 0);
        const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: 'first', partitionData: [{ index: 0, records }] }] });
        code = r.responses[0].partitionResponses[0].errorCode;
        assert.ok(code === 0 || isRetriable(code), `Produce: error ${code}`);
        if (code !== 0) await sleep(50);
      }
      assert.equal(code, 0, 'the produce succeeded');
      const conn = await client.leaderFor('first', 0);
      const f = await conn.send(ApiKey.Fetch, 12, {
        replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topic: 'first', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
        forgottenTopicsData: [], rackId: '',
      });
      const p = f.responses[0].partitions[0];
      assert.equal(p.errorCode, 0);
      assert.equal(p.highWatermark, 1n, 'one record, acknowledged by acks=all');
    } finally {
      client.close();
    }
  } finally {
    await cluster.close();
  }
});

test('startCluster: a user\'s config overrides the cluster\'s own timeouts', { timeout: 90_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 2, config: { 'broker.heartbeat.interval.ms': '2000', 'controller.quorum.election.timeout.ms': '1000' } }));
  try {
    for (const c of await brokerConfigs(cluster)) {
      assert.equal(c['broker.heartbeat.interval.ms'], '2000');
      assert.equal(c['controller.quorum.election.timeout.ms'], '1000');
      assert.equal(c['controller.quorum.election.backoff.max.ms'], '300');
    }
  } finally {
    await cluster.close();
  }
});
