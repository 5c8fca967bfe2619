// Every version Kafka 3.9 served, for every API the broker serves, so that any client since Kafka
// 0.10 works (Kafka 4.0 dropped the oldest ones, KIP-896, and broke clients that still send them).
// A sweep generated from the schemas sends each API at its lowest version and expects an answer,
// so a new handler cannot forget its old versions; kafka-python's own protocol classes send the
// restored ones (CreateTopics v0-1, DeleteTopics v0, DescribeConfigs v0, the ACL APIs v0) over a
// raw connection; OffsetForLeaderEpoch v0-1 (which kafka-python has no class for) goes through
// our client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runProcess } from './process-helpers.js';
import { startServer } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode, apiInfo, defaultMessage } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';

test('every API the broker serves answers at the lowest version of its schema', async () => {
  const server = await startServer({ config: parseBrokerConfig({ 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0' }) });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    const conn = await client.any();
    const failures: string[] = [];
    for (const { apiKey, minVersion } of server.router.supportedVersions()) {
      const api = apiInfo(apiKey)!;
      const lowest = api.validVersions[0];
      if (minVersion !== lowest) failures.push(`${api.name}: served from v${minVersion}, the schema from v${lowest}`);
      const body = defaultMessage<Record<string, unknown>>(api.request.name, lowest);
      if (apiKey === ApiKey.Produce) body.acks = 1; // acks=0 is answered with nothing, as it should be
      try {
        await conn.send(apiKey, lowest, body);
      } catch (err) {
        failures.push(`${api.name} v${lowest}: ${(err as Error).message}`);
      }
    }
    assert.deepEqual(failures, []);
  } finally {
    client.close();
    await server.close();
  }
});

const PYTHON = '/usr/bin/python3'; // Debian's python3-kafka is seen by the system python.
const hasKafkaPython = spawnSync(PYTHON, ['-c', 'import kafka']).status === 0;
if (!hasKafkaPython && process.env.CI) throw new Error('python3-kafka is missing in CI (apt-get install -y python3-kafka)');

test('kafka-python\'s protocol classes: CreateTopics v0-1, DescribeConfigs v0, the ACL APIs v0 and DeleteTopics v0 are answered', { skip: hasKafkaPython ? false : 'python3-kafka is not installed (apt-get install python3-kafka)' }, async () => {
  const server = await startServer({ config: parseBrokerConfig({
    'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0',
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:ANONYMOUS',
  }) });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const client = new ClusterClient({ bootstrap });
  try {
    const r = await runProcess(PYTHON, ['test/broker/python/old_admin_versions.py', bootstrap], null, 60_000);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.createV0, [['old-v0', ErrorCode.NONE]]);
    assert.deepEqual(out.createV1ValidateOnly, [['old-v1', ErrorCode.NONE, null]]);
    assert.equal(out.createV1Exists[0][1], ErrorCode.TOPIC_ALREADY_EXISTS);
    const [[errorCode, , resourceType, resourceName, entries]] = out.describeConfigsV0;
    assert.deepEqual([errorCode, resourceType, resourceName], [ErrorCode.NONE, 2, 'old-v0']);
    // v0's entries: name, value, read_only, is_default, is_sensitive.
    assert.deepEqual(entries.find((e: unknown[]) => e[0] === 'cleanup.policy'), ['cleanup.policy', 'compact', false, false, false]);
    assert.deepEqual(entries.find((e: unknown[]) => e[0] === 'retention.ms'), ['retention.ms', '604800000', false, true, false]);
    assert.deepEqual(out.createAclsV0, [[ErrorCode.NONE, null]]);
    assert.deepEqual(out.describeAclsV0, [ErrorCode.NONE, [[2, 'old-v0', [['User:alice', '*', 3, 3]]]]]);
    assert.deepEqual(out.deleteAclsV0, [[ErrorCode.NONE, null, [[ErrorCode.NONE, null, 2, 'old-v0', 'User:alice', '*', 3, 3]]]]);
    assert.deepEqual(out.deleteV0, [['old-v0', ErrorCode.NONE], ['never-was', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
    const left = await client.metadata(null);
    assert.deepEqual(left.map((t) => t.name).filter((n) => n.startsWith('old-')), [], 'validate_only created nothing; v0 deleted old-v0');
  } finally {
    client.close();
    await server.close();
  }
});

test('OffsetForLeaderEpoch v0 and v1 answer the end offset of the epoch (v1 with the epoch)', async () => {
  const server = await startServer({ config: parseBrokerConfig({ 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0' }) });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'epochs', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 0);
    assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
    const conn = await client.leaderFor('epochs', 0);
    const records = await buildRecordBatch({ records: [{ value: Buffer.from('a') }, { value: Buffer.from('b') }] });
    const produced = await conn.send(ApiKey.Produce, 3, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: 'epochs', partitionData: [{ index: 0, records }] }] });
    assert.equal(produced.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    for (const version of [0, 1]) {
      const r = await conn.send(ApiKey.OffsetForLeaderEpoch, version, { replicaId: -2, topics: [{ topic: 'epochs', partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }] });
      const p = r.topics[0].partitions[0];
      assert.equal(p.errorCode, ErrorCode.NONE, `v${version}`);
      assert.equal(p.endOffset, 2n, `v${version}`);
      if (version === 1) assert.equal(p.leaderEpoch, 0);
    }
  } finally {
    client.close();
    await server.close();
  }
});

const hasKcat = spawnSync('kcat', ['-V']).status === 0;
if (!hasKcat && process.env.CI) throw new Error('kcat is missing in CI (apt-get install -y kcat)');
const FALLBACKS = ['0.9.0', '0.9.1', '0.9.2', '0.10.0', '0.10.1', '0.10.2', '0.11.0', '1.0.0', '1.1.0', '2.0.0'];

test('kcat with api.version.request=false and each broker.version.fallback from 0.9.0 to 2.0.0 produces and consumes', { skip: hasKcat ? false : 'kcat is not installed (apt-get install kcat)' }, async () => {
  const server = await startServer({ config: parseBrokerConfig({ 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0' }) });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const client = new ClusterClient({ bootstrap });
  try {
    for (const fallback of FALLBACKS) {
      const topic = `fallback-${fallback.replace(/\./g, '-')}`;
      const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: topic, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7);
      assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
      const old = ['-b', bootstrap, '-X', 'api.version.request=false', '-X', `broker.version.fallback=${fallback}`, '-t', topic];
      const values = Array.from({ length: 5 }, (_, i) => `${fallback}-value-${i}`);
      const produced = await runProcess('kcat', [...old, '-P'], `${values.join('\n')}\n`, 30_000);
      assert.equal(produced.code, 0, `produce with fallback ${fallback}: ${produced.stderr}`);
      const consumed = await runProcess('kcat', [...old, '-C', '-o', 'beginning', '-e', '-f', '%o %s\n'], null, 30_000);
      assert.equal(consumed.code, 0, `consume with fallback ${fallback}: ${consumed.stderr}`);
      assert.deepEqual(consumed.stdout.trim().split('\n'), values.map((v, i) => `${i} ${v}`), `fallback ${fallback}`);
    }
  } finally {
    client.close();
    await server.close();
  }
});
