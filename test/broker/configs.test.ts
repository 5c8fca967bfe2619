// Topic and broker configs through the wire: CreateTopics configs, DescribeConfigs sources,
// IncrementalAlterConfigs / AlterConfigs, validation errors, and a config the data path obeys.
import { test } from 'node:test';
import { tempDataDir } from './process-helpers.js';
import assert from 'node:assert/strict';
import { startServer } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';

async function withBroker(fn: (client: ClusterClient, bootstrap: string) => Promise<void>): Promise<void> {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const client = new ClusterClient({ bootstrap });
  try { await fn(client, bootstrap); } finally { client.close(); await server.close(); }
}

const describe = async (client: ClusterClient, type: number, name: string, keys: string[] | null) =>
  (await client.admin(ApiKey.DescribeConfigs, { resources: [{ resourceType: type, resourceName: name, configurationKeys: keys }], includeSynonyms: true, includeDocumentation: false }, 4)).results[0];
const create = async (client: ClusterClient, name: string, configs: { name: string; value: string }[]) =>
  (await client.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs }], timeoutMs: 1000, validateOnly: false }, 7)).topics[0];

test('topic configs: set at creation, described with their source, altered incrementally and wholesale', async () => {
  await withBroker(async (client) => {
    assert.equal((await create(client, 'cfg', [{ name: 'retention.ms', value: '1000' }])).errorCode, 0);
    let d = await describe(client, 2, 'cfg', ['retention.ms', 'segment.bytes']);
    assert.equal(d.errorCode, 0);
    const byName = (res: any) => new Map(res.configs.map((c: any) => [c.name, c]));
    assert.equal((byName(d).get('retention.ms') as any).value, '1000');
    assert.equal((byName(d).get('retention.ms') as any).configSource, 1, 'DYNAMIC_TOPIC_CONFIG');
    assert.equal((byName(d).get('segment.bytes') as any).value, '1073741824');
    assert.equal((byName(d).get('segment.bytes') as any).configSource, 5, 'DEFAULT_CONFIG');
    const inc = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 2, resourceName: 'cfg', configs: [
      { name: 'segment.bytes', configOperation: 0, value: '1048576' }, { name: 'retention.ms', configOperation: 1, value: null }] }], validateOnly: false }, 1);
    assert.equal(inc.responses[0].errorCode, 0, inc.responses[0].errorMessage);
    d = await describe(client, 2, 'cfg', ['retention.ms', 'segment.bytes']);
    assert.equal((byName(d).get('segment.bytes') as any).value, '1048576');
    assert.equal((byName(d).get('retention.ms') as any).value, '604800000', 'back to the broker default');
    const bad = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 2, resourceName: 'cfg', configs: [{ name: 'no.such.key', configOperation: 0, value: '1' }] }], validateOnly: false }, 1);
    assert.equal(bad.responses[0].errorCode, ErrorCode.INVALID_CONFIG);
    const wrongValue = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 2, resourceName: 'cfg', configs: [{ name: 'cleanup.policy', configOperation: 0, value: 'sometimes' }] }], validateOnly: false }, 1);
    assert.equal(wrongValue.responses[0].errorCode, ErrorCode.INVALID_CONFIG);
    const legacy = await client.admin(ApiKey.AlterConfigs, { resources: [{ resourceType: 2, resourceName: 'cfg', configs: [{ name: 'cleanup.policy', value: 'compact' }] }], validateOnly: false }, 2);
    assert.equal(legacy.responses[0].errorCode, 0);
    d = await describe(client, 2, 'cfg', ['cleanup.policy', 'segment.bytes']);
    assert.equal((byName(d).get('cleanup.policy') as any).value, 'compact');
    assert.equal((byName(d).get('segment.bytes') as any).configSource, 5, 'AlterConfigs replaced the whole set');
    assert.equal((await describe(client, 2, 'missing', null)).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });
});

test('CreateTopics refuses unknown and invalid configs with INVALID_CONFIG', async () => {
  await withBroker(async (client) => {
    const unknown = await create(client, 'x1', [{ name: 'retention.msec', value: '1' }]);
    assert.equal(unknown.errorCode, ErrorCode.INVALID_CONFIG);
    assert.match(unknown.errorMessage, /retention\.ms/, 'suggests the key it resembles');
    assert.equal((await create(client, 'x2', [{ name: 'min.insync.replicas', value: '0' }])).errorCode, ErrorCode.INVALID_CONFIG);
  });
});

test('min.insync.replicas=2 on a one-node cluster refuses acks=all with NOT_ENOUGH_REPLICAS, accepts acks=1', async () => {
  await withBroker(async (client) => {
    assert.equal((await create(client, 'isr2', [{ name: 'min.insync.replicas', value: '2' }])).errorCode, 0);
    const conn = await client.leaderFor('isr2', 0);
    const records = await buildRecordBatch({ records: [{ value: Buffer.from('x') }] });
    const send = (acks: number) => conn.send(ApiKey.Produce, 9, { transactionalId: null, acks, timeoutMs: 1000, topicData: [{ name: 'isr2', partitionData: [{ index: 0, records }] }] });
    assert.equal((await send(-1)).responses[0].partitionResponses[0].errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
    assert.equal((await send(1)).responses[0].partitionResponses[0].errorCode, 0);
  });
});

test('broker configs are described with static and default sources; kafkajs describeConfigs works', async () => {
  await withBroker(async (client, bootstrap) => {
    const d = await describe(client, 4, '1', ['num.partitions', 'log.retention.hours', 'node.id']);
    assert.equal(d.errorCode, 0);
    const names = d.configs.map((c: any) => c.name).sort();
    assert.deepEqual(names, ['log.retention.hours', 'node.id', 'num.partitions']);
    assert.equal(d.configs.find((c: any) => c.name === 'node.id').readOnly, true);
    assert.equal((await describe(client, 4, '7', null)).errorCode, ErrorCode.INVALID_REQUEST);
    const { Kafka, logLevel } = await import('kafkajs');
    const TOPIC = 2; // kafkajs' ConfigResourceTypes.TOPIC
    await create(client, 'kjs-cfg', [{ name: 'retention.ms', value: '5000' }]);
    const admin = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const r = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: TOPIC, name: 'kjs-cfg', configNames: ['retention.ms'] }] });
    await admin.disconnect();
    assert.equal(r.resources[0]!.configEntries[0]!.configValue, '5000');
  });
});

test('max.message.bytes: a larger batch gets MESSAGE_TOO_LARGE; raising it with IncrementalAlterConfigs lets it in', async () => {
  await withBroker(async (client) => {
    assert.equal((await create(client, 'small', [{ name: 'max.message.bytes', value: '1000' }])).errorCode, 0);
    const conn = await client.leaderFor('small', 0);
    const records = await buildRecordBatch({ records: [{ value: Buffer.alloc(2000, 1) }] });
    const send = () => conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 'small', partitionData: [{ index: 0, records }] }] });
    assert.equal((await send()).responses[0].partitionResponses[0].errorCode, ErrorCode.MESSAGE_TOO_LARGE);
    const inc = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 2, resourceName: 'small', configs: [{ name: 'max.message.bytes', configOperation: 0, value: '100000' }] }], validateOnly: false }, 1);
    assert.equal(inc.responses[0].errorCode, 0);
    assert.equal((await send()).responses[0].partitionResponses[0].errorCode, 0);
  });
});
