// DescribeClientQuotas / AlterClientQuotas over the wire: Kafka's validation errors, strict and
// non-strict filters, validate_only, removal, quotas that survive a restart and are the same on
// every broker of a 3-node cluster, and controller_mutation_rate on CreateTopics (KIP-599).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tempDataDir, within } from './process-helpers.js';
import { startServer, startCluster } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode, ZERO_UUID } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';
import { nodeMetrics } from '../../src/http/metrics.js';

type Entity = { entityType: string; entityName: string | null }[];
type Op = { key: string; value: number; remove: boolean };

const user = (name: string | null) => ({ entityType: 'user', entityName: name });
const clientId = (name: string | null) => ({ entityType: 'client-id', entityName: name });
const set = (key: string, value: number): Op => ({ key, value, remove: false });

async function alter(client: ClusterClient, entries: { entity: Entity; ops: Op[] }[], validateOnly = false): Promise<{ errorCode: number; errorMessage: string | null }[]> {
  return (await client.admin(ApiKey.AlterClientQuotas, { entries, validateOnly }, 1)).entries;
}

async function describe(client: ClusterClient, components: { entityType: string; matchType: number; match: string | null }[], strict = false) {
  return client.admin(ApiKey.DescribeClientQuotas, { components, strict }, 1);
}

/** Entries as sorted `type=name,...: key=value,...` lines, for comparing whole answers. */
function lines(entries: { entity: Entity; values: { key: string; value: number }[] }[] | null): string[] {
  return (entries ?? []).map((e) => `${e.entity.map((p) => `${p.entityType}=${p.entityName ?? '<default>'}`).sort().join(',')}: ${
    e.values.map((v) => `${v.key}=${v.value}`).sort().join(',')}`).sort();
}

test('AlterClientQuotas validates as Kafka does and DescribeClientQuotas filters strictly and not; validate_only and removal', async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    const ok = await alter(client, [
      { entity: [user('alice')], ops: [set('producer_byte_rate', 1048576), set('request_percentage', 12.5)] },
      { entity: [user('alice'), clientId('app')], ops: [set('consumer_byte_rate', 2048)] },
      { entity: [clientId(null)], ops: [set('consumer_byte_rate', 4096)] },
      { entity: [user(null)], ops: [set('controller_mutation_rate', 10)] },
      { entity: [{ entityType: 'ip', entityName: '10.0.0.1' }], ops: [set('connection_creation_rate', 5)] },
    ]);
    assert.deepEqual(ok.map((e) => e.errorCode), [0, 0, 0, 0, 0]);

    const refused = await alter(client, [
      { entity: [user('bob')], ops: [set('no_such_quota', 1)] },
      { entity: [user('bob2')], ops: [set('producer_byte_rate', 1.5)] },
      { entity: [], ops: [set('producer_byte_rate', 1)] },
      { entity: [{ entityType: 'group', entityName: 'g' }], ops: [set('producer_byte_rate', 1)] },
      { entity: [{ entityType: 'ip', entityName: '10.0.0.2' }], ops: [set('producer_byte_rate', 1)] },
      { entity: [{ entityType: 'ip', entityName: 'not an address' }], ops: [set('connection_creation_rate', 1)] },
      { entity: [user('')], ops: [set('producer_byte_rate', 1)] },
      { entity: [clientId('x')], ops: [set('producer_byte_rate', 1), set('producer_byte_rate', 2)] },
    ]);
    assert.deepEqual(refused.map((e) => e.errorCode), Array(8).fill(ErrorCode.INVALID_REQUEST));
    assert.match(refused[0]!.errorMessage!, /Invalid configuration key no_such_quota/);
    assert.match(refused[1]!.errorMessage!, /producer_byte_rate must be a Long value/);
    assert.match(refused[3]!.errorMessage!, /Unhandled client quota entity type: group/);
    assert.match(refused[7]!.errorMessage!, /Duplicate quota key producer_byte_rate/);
    const dup = await alter(client, [{ entity: [user('carol')], ops: [set('producer_byte_rate', 1)] }, { entity: [user('carol')], ops: [set('producer_byte_rate', 2)] }]);
    assert.deepEqual(dup.map((e) => e.errorCode), [0, ErrorCode.INVALID_REQUEST]);
    assert.deepEqual((await alter(client, [{ entity: [user('dave')], ops: [set('producer_byte_rate', 7)] }], true)).map((e) => e.errorCode), [0]);

    const all = await describe(client, []);
    assert.equal(all.errorCode, 0);
    assert.deepEqual(lines(all.entries), [
      'client-id=<default>: consumer_byte_rate=4096',
      'client-id=app,user=alice: consumer_byte_rate=2048',
      'ip=10.0.0.1: connection_creation_rate=5',
      'user=<default>: controller_mutation_rate=10',
      'user=alice: producer_byte_rate=1048576,request_percentage=12.5',
      'user=carol: producer_byte_rate=1',
    ], 'everything valid and not validate_only, nothing refused');
    // Non-strict: every entity naming alice; strict: only the one that names just her.
    assert.deepEqual(lines((await describe(client, [{ entityType: 'user', matchType: 0, match: 'alice' }])).entries),
      ['client-id=app,user=alice: consumer_byte_rate=2048', 'user=alice: producer_byte_rate=1048576,request_percentage=12.5']);
    assert.deepEqual(lines((await describe(client, [{ entityType: 'user', matchType: 0, match: 'alice' }], true)).entries),
      ['user=alice: producer_byte_rate=1048576,request_percentage=12.5']);
    assert.deepEqual(lines((await describe(client, [{ entityType: 'client-id', matchType: 1, match: null }])).entries), ['client-id=<default>: consumer_byte_rate=4096']);
    assert.deepEqual(lines((await describe(client, [{ entityType: 'user', matchType: 2, match: null }, { entityType: 'client-id', matchType: 2, match: null }], true)).entries),
      ['client-id=app,user=alice: consumer_byte_rate=2048']);
    assert.deepEqual((await describe(client, [], true)).entries, []);

    const bad = async (components: { entityType: string; matchType: number; match: string | null }[]) => {
      const r = await describe(client, components);
      return [r.errorCode, r.entries];
    };
    assert.deepEqual(await bad([{ entityType: 'user', matchType: 0, match: null }]), [ErrorCode.INVALID_REQUEST, null]);
    assert.deepEqual(await bad([{ entityType: 'user', matchType: 1, match: 'x' }]), [ErrorCode.INVALID_REQUEST, null]);
    assert.deepEqual(await bad([{ entityType: 'user', matchType: 2, match: null }, { entityType: 'user', matchType: 0, match: 'a' }]), [ErrorCode.INVALID_REQUEST, null]);
    assert.deepEqual(await bad([{ entityType: 'ip', matchType: 2, match: null }, { entityType: 'user', matchType: 2, match: null }]), [ErrorCode.INVALID_REQUEST, null]);
    assert.deepEqual(await bad([{ entityType: 'group', matchType: 2, match: null }]), [ErrorCode.UNSUPPORTED_VERSION, null]);
    assert.deepEqual(await bad([{ entityType: 'user', matchType: 7, match: null }]), [ErrorCode.INVALID_REQUEST, null]);

    // Removing the last key removes the entity; removing an absent key is not an error.
    assert.deepEqual((await alter(client, [{ entity: [user('carol')], ops: [{ key: 'producer_byte_rate', value: 0, remove: true }, { key: 'consumer_byte_rate', value: 0, remove: true }] }])).map((e) => e.errorCode), [0]);
    assert.deepEqual(lines((await describe(client, [{ entityType: 'user', matchType: 0, match: 'carol' }])).entries), []);
  } finally {
    client.close();
    await server.close();
  }
});

test('client quotas survive a restart', async () => {
  const dataDir = tempDataDir();
  let server = await startServer({ dataDir, listeners: ['PLAINTEXT://127.0.0.1:0'] });
  let client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    assert.deepEqual((await alter(client, [{ entity: [user('alice'), clientId(null)], ops: [set('producer_byte_rate', 1000)] }])).map((e) => e.errorCode), [0]);
  } finally {
    client.close();
    await server.close();
  }
  server = await startServer({ dataDir, listeners: ['PLAINTEXT://127.0.0.1:0'] });
  client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    assert.deepEqual(lines((await describe(client, [])).entries), ['client-id=<default>,user=alice: producer_byte_rate=1000']);
  } finally {
    client.close();
    await server.close();
  }
});

test('a quota altered through one broker of a 3-node cluster is described the same by every broker', { timeout: 120_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3 }));
  const clients = cluster.nodes.map((n) => new ClusterClient({ bootstrap: `127.0.0.1:${n.brokerPort}` }));
  try {
    // Through each broker in turn, so at least two of them forward to the active controller.
    for (const [i, c] of clients.entries()) {
      assert.deepEqual((await alter(c, [{ entity: [clientId(`app-${i}`)], ops: [set('consumer_byte_rate', 1000 + i)] }])).map((e) => e.errorCode), [0]);
    }
    const expected = ['client-id=app-0: consumer_byte_rate=1000', 'client-id=app-1: consumer_byte_rate=1001', 'client-id=app-2: consumer_byte_rate=1002'];
    for (const c of clients) {
      // Each alteration was answered once the broker it went through had it; the others follow the log.
      const deadline = Date.now() + 10_000;
      let got: string[] = [];
      while (Date.now() < deadline) {
        got = lines((await describe(c, [])).entries);
        if (got.length === expected.length) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.deepEqual(got, expected);
    }
  } finally {
    for (const c of clients) c.close();
    await cluster.close();
  }
});

test('controller_mutation_rate: CreateTopics v7 refuses topics once the bucket is in debt (THROTTLING_QUOTA_EXCEEDED); v5 creates and throttles', async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}`, clientId: 'mutator' });
  try {
    // 1 partition/s: a burst of 1 x 11 samples x 1 s = 11 partitions.
    assert.deepEqual((await alter(client, [{ entity: [clientId('mutator')], ops: [set('controller_mutation_rate', 1)] }])).map((e) => e.errorCode), [0]);
    const topic = (name: string, numPartitions: number) => ({ name, numPartitions, replicationFactor: 1, assignments: [], configs: [] });
    const r = await client.admin(ApiKey.CreateTopics, { topics: [topic('q-a', 8), topic('q-b', 8), topic('q-c', 1)], timeoutMs: 5000, validateOnly: false }, 7);
    assert.deepEqual(r.topics.map((t: { name: string; errorCode: number }) => [t.name, t.errorCode]),
      [['q-a', 0], ['q-b', 0], ['q-c', ErrorCode.THROTTLING_QUOTA_EXCEEDED]], 'q-b takes the bucket to -5, q-c is refused');
    assert.ok(r.throttleTimeMs >= 4000 && r.throttleTimeMs <= 5000, `throttled until the debt of 5 is repaid: ${r.throttleTimeMs}`);
    const md = await client.admin(ApiKey.Metadata, { topics: [{ name: 'q-c', topicId: ZERO_UUID }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 12);
    assert.equal(md.topics[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'the refused topic was not created');
    // Before KIP-599 (v5) the client cannot be told no: the topic is created and the response throttled.
    const old = await client.admin(ApiKey.CreateTopics, { topics: [topic('q-d', 2)], timeoutMs: 5000, validateOnly: false }, 5);
    assert.equal(old.topics[0].errorCode, 0);
    assert.ok(old.throttleTimeMs > 0);
  } finally {
    client.close();
    await server.close();
  }
});

test('a produce over producer_byte_rate is answered at once with throttle_time_ms, and the connection reads nothing more for that long (KIP-219)', async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}`, clientId: 'fast-producer' });
  try {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'muted', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0);
    assert.deepEqual((await alter(client, [{ entity: [clientId('fast-producer')], ops: [set('producer_byte_rate', 100_000)] }])).map((e) => e.errorCode), [0]);
    const conn = await client.leaderFor('muted', 0);
    const records = await buildRecordBatch({ records: [{ value: Buffer.alloc(200_000, 1) }] });
    const produced = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: 'muted', partitionData: [{ index: 0, records }] }] });
    assert.equal(produced.responses[0].partitionResponses[0].errorCode, 0, 'the records are taken: the throttle comes after');
    // 200 kB in the one-second minimum window is twice the quota: one window of throttle.
    assert.ok(produced.throttleTimeMs >= 900 && produced.throttleTimeMs <= 1100, `throttle ${produced.throttleTimeMs} ms`);
    const sentAt = Date.now();
    await conn.send(ApiKey.ApiVersions, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    const waitedMs = Date.now() - sentAt;
    assert.ok(waitedMs >= produced.throttleTimeMs - 100, `the next request waited ${waitedMs} ms of a ${produced.throttleTimeMs} ms throttle`);
    const metrics = await nodeMetrics(server).metrics();
    assert.match(metrics, /kafka_server_produce_throttled_responses_total 1\n/);
    assert.match(metrics, /kafka_server_produce_byte_rate\{user="",client_id="fast-producer"\} \d+/);
  } finally {
    client.close();
    await server.close();
  }
});

test('request_percentage throttles any API, at most one window; controller_mutation_rate refuses DeleteTopics v5+ past the bucket', async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const admin = new ClusterClient({ bootstrap });
  const busy = new ClusterClient({ bootstrap, clientId: 'busy' });
  const deleter = new ClusterClient({ bootstrap, clientId: 'deleter' });
  try {
    assert.deepEqual((await alter(admin, [
      { entity: [clientId('busy')], ops: [set('request_percentage', 0.0001)] },
      { entity: [clientId('deleter')], ops: [set('controller_mutation_rate', 1)] },
    ])).map((e) => e.errorCode), [0, 0]);
    // Any handling time at all is more than a millionth of a thread.
    const md = await busy.admin(ApiKey.Metadata, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 12);
    assert.ok(md.throttleTimeMs > 0 && md.throttleTimeMs <= 1000, `Metadata throttled ${md.throttleTimeMs} ms, capped at one window`);
    const other = await admin.admin(ApiKey.Metadata, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 12);
    assert.equal(other.throttleTimeMs, 0, 'a client without a quota is not throttled');

    const topic = (name: string, numPartitions: number) => ({ name, numPartitions, replicationFactor: 1, assignments: [], configs: [] });
    const created = await admin.admin(ApiKey.CreateTopics, { topics: [topic('del-a', 12), topic('del-b', 1)], timeoutMs: 5000, validateOnly: false }, 7);
    assert.deepEqual(created.topics.map((t: { errorCode: number }) => t.errorCode), [0, 0]);
    // 12 partitions take the deleter's bucket of 11 to -1: del-b is refused.
    const deleted = await deleter.admin(ApiKey.DeleteTopics, { topics: [], topicNames: ['del-a', 'del-b'], timeoutMs: 5000 }, 5);
    assert.deepEqual(deleted.responses.map((t: { name: string; errorCode: number }) => [t.name, t.errorCode]).sort(),
      [['del-a', 0], ['del-b', ErrorCode.THROTTLING_QUOTA_EXCEEDED]]);
    assert.ok(deleted.throttleTimeMs > 0);
  } finally {
    for (const c of [admin, busy, deleter]) c.close();
    await server.close();
  }
});
