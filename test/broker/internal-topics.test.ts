// Internal topics are marked internal, as Kafka marks them and clients act on it: Metadata and
// DescribeTopicPartitions say is_internal for __consumer_offsets and __transaction_state only, a
// KIP-848 regex subscription is never assigned them, nobody creates __cluster_metadata, and the
// CLI hides them from `topic list` and refuses to delete them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runProcess, tempDataDir } from './process-helpers.js';
import { startServer } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { BrokerConnection } from '../../src/client/index.js';
import { ApiKey, ErrorCode, ZERO_UUID } from '../../src/protocol/index.js';

const PYTHON = '/usr/bin/python3';
const INTERNAL = ['__consumer_offsets', '__transaction_state'];

function skipReason(): string | false {
  if (spawnSync(PYTHON, ['-c', 'import kafka, confluent_kafka']).status === 0) return false;
  if (process.env.CI) throw new Error('python3-kafka and python3-confluent-kafka are missing in CI');
  return 'python3-kafka or python3-confluent-kafka is not installed';
}

async function withServer(fn: (conn: BrokerConnection, bootstrap: string) => Promise<void>): Promise<void> {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir(), config: parseBrokerConfig({ 'node.id': '1', listeners: 'PLAINTEXT://127.0.0.1:0', 'group.initial.rebalance.delay.ms': '0', 'offsets.topic.num.partitions': '3', 'transaction.state.log.num.partitions': '3' }) });
  const port = server.listeners[0]!.port;
  const conn = await BrokerConnection.open({ host: '127.0.0.1', port });
  try {
    // FindCoordinator creates both internal topics, as a group member and a transactional producer do.
    for (const keyType of [0, 1]) {
      const r = await conn.send(ApiKey.FindCoordinator, 4, { key: '', keyType, coordinatorKeys: ['x'] });
      assert.equal(r.coordinators[0].errorCode, 0);
    }
    const created = await conn.send(ApiKey.CreateTopics, 7, { topics: ['user-a', 'user-b'].map((name) => ({ name, numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] })), timeoutMs: 5000, validateOnly: false });
    assert.deepEqual(created.topics.map((t: { errorCode: number }) => t.errorCode), [0, 0]);
    await fn(conn, `127.0.0.1:${port}`);
  } finally {
    conn.close();
    await server.close();
  }
}

test('Metadata (every version with the field) and DescribeTopicPartitions mark exactly the internal topics', async () => {
  await withServer(async (conn) => {
    for (const version of [1, 4, 9, 12]) {
      const r = await conn.send(ApiKey.Metadata, version, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
      const internal = r.topics.filter((t: { isInternal: boolean }) => t.isInternal).map((t: { name: string }) => t.name).sort();
      assert.deepEqual(internal, INTERNAL, `Metadata v${version}`);
      assert.equal(r.topics.length, 4);
    }
    const d = await conn.send(ApiKey.DescribeTopicPartitions, 0, { topics: [...INTERNAL, 'user-a'].map((name) => ({ name })), responsePartitionLimit: 2000, cursor: null });
    assert.deepEqual(d.topics.map((t: { name: string; isInternal: boolean }) => [t.name, t.isInternal]), [['__consumer_offsets', true], ['__transaction_state', true], ['user-a', false]]);
  });
});

test('CreateTopics refuses __cluster_metadata with INVALID_REQUEST and a message', async () => {
  await withServer(async (conn) => {
    const r = await conn.send(ApiKey.CreateTopics, 7, { topics: [{ name: '__cluster_metadata', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
    assert.equal(r.topics[0].errorCode, ErrorCode.INVALID_REQUEST);
    assert.match(r.topics[0].errorMessage, /__cluster_metadata/);
  });
});

test('a KIP-848 consumer subscribed to the regex .* is assigned user topics only', async () => {
  await withServer(async (conn) => {
    let memberId = 'member-1'; // v1+: the client makes its own member id
    let memberEpoch = 0;
    const assigned = new Set<string>();
    const ids = new Map<string, string>((await conn.send(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false })).topics.map((t: { topicId: string; name: string }) => [t.topicId, t.name]));
    for (let i = 0; i < 20 && assigned.size === 0; i++) {
      const r = await conn.send(ApiKey.ConsumerGroupHeartbeat, 1, {
        groupId: 'regex-all', memberId, memberEpoch, instanceId: null, rackId: null, rebalanceTimeoutMs: 30_000,
        subscribedTopicNames: null, subscribedTopicRegex: i === 0 ? '.*' : null, serverAssignor: null, topicPartitions: i === 0 ? [] : null,
      });
      assert.equal(r.errorCode, 0, r.errorMessage);
      memberId = r.memberId;
      memberEpoch = r.memberEpoch;
      for (const tp of r.assignment?.topicPartitions ?? []) assigned.add(ids.get(tp.topicId) ?? tp.topicId);
    }
    assert.deepEqual([...assigned].sort(), ['user-a', 'user-b']);
  });
});

test('kafka-python: the admin sees the internal topics as internal; a .* pattern consumer (classic protocol) reads user topics only', { skip: skipReason(), timeout: 120_000 }, async () => {
  await withServer(async (_conn, bootstrap) => {
    const r = await runProcess(PYTHON, ['test/broker/python/internal_topics.py', bootstrap], null, 100_000);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { listed: string[]; described: Record<string, { is_internal: boolean; error_code: number }>; assigned: string[]; values: string[] };
    assert.deepEqual(out.described, {
      __consumer_offsets: { is_internal: true, error_code: 0 }, __transaction_state: { is_internal: true, error_code: 0 },
      'user-a': { is_internal: false, error_code: 0 }, 'user-b': { is_internal: false, error_code: 0 },
    });
    assert.deepEqual(out.values, ['user-a', 'user-b']);
    assert.deepEqual(out.assigned, ['user-a', 'user-b']);
  });
});

test('logline topic list hides internal topics unless --include-internal; topic delete refuses them', async () => {
  await withServer(async (_conn, bootstrap) => {
    const cli = (...args: string[]) => runProcess(process.execPath, ['bin/logline.js', 'topic', ...args, '--bootstrap-server', bootstrap], null, 30_000);
    const plain = await cli('list', '--json');
    assert.equal(plain.code, 0, plain.stderr);
    assert.deepEqual(JSON.parse(plain.stdout).map((t: { name: string }) => t.name), ['user-a', 'user-b']);
    const all = await cli('list', '--json', '--include-internal');
    assert.deepEqual(JSON.parse(all.stdout).map((t: { name: string; internal: boolean }) => [t.name, t.internal]),
      [['__consumer_offsets', true], ['__transaction_state', true], ['user-a', false], ['user-b', false]]);
    const refused = await cli('delete', '__consumer_offsets');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /internal topic and is not allowed to be marked for deletion/);
    const still = await cli('list', '--json', '--include-internal');
    assert.ok(JSON.parse(still.stdout).some((t: { name: string }) => t.name === '__consumer_offsets'), 'still there');
    void ZERO_UUID;
  });
});
