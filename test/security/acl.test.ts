// ACLs on one broker, seen by the clients users run. The broker has a PLAINTEXT listener whose
// User:ANONYMOUS is in super.users (the admin) and an SSL listener with client certificates where
// the certificate `CN=alice` is User:alice. Alice without a grant gets the precise
// *_AUTHORIZATION_FAILED code on produce, fetch, commit, transactional produce and admin calls,
// and reads no record; after a grant it works; after the grant is deleted it stops again on the
// connection that stayed open. Metadata and ListGroups leave out what she may not describe. kcat
// and kafka-python show the errors as their users see them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { writeDevCerts, type DevCerts, AclOperation as Op, AclPermissionType, PatternType, ResourceType } from '../../src/security/index.js';
import { BrokerConnection, ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { plaintextAndSsl } from './tls-config.js';

const hasKcat = spawnSync('kcat', ['-V']).status === 0;
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const PYTHON = '/usr/bin/python3';
const hasKafkaPython = spawnSync(PYTHON, ['-c', 'import kafka']).status === 0;
const hasConfluentPython = spawnSync(PYTHON, ['-c', 'import confluent_kafka']).status === 0;
if (process.env.CI && (!hasKcat || !hasOpenssl)) throw new Error('kcat and openssl are needed in CI');
const skip = hasOpenssl ? false : 'openssl is not installed';

let certs: DevCerts;
let server: ServerHandle;
let plain: string;
let ssl: { host: string; port: number };
let admin: ClusterClient;
let adminConn: BrokerConnection;
let alice: BrokerConnection;

const E = ErrorCode;

before(async () => {
  if (!hasOpenssl) return;
  certs = writeDevCerts(join(mkdtempSync(join(tmpdir(), 'logline-acl-')), 'certs'), { clientName: 'alice' });
  const config = parseBrokerConfig({
    ...plaintextAndSsl(certs),
    'listener.name.ssl.ssl.client.auth': 'required',
    'ssl.principal.mapping.rules': 'RULE:^CN=([^,]+),O=Logline dev$/$1/L,DEFAULT',
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'super.users': 'User:ANONYMOUS',
    'num.partitions': '1',
  });
  server = await startServer({ config, dataDir: tempDataDir() });
  const port = (name: string) => server.listeners.find((l) => l.name === name)!.port;
  plain = `127.0.0.1:${port('PLAINTEXT')}`;
  ssl = { host: '127.0.0.1', port: port('SSL') };
  admin = new ClusterClient({ bootstrap: plain });
  adminConn = await admin.broker(1);
  alice = await BrokerConnection.open({ ...ssl, clientId: 'alice', tls: aliceTls() });
  for (const name of ['secret', 'public']) {
    const r = await admin.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }, 7);
    assert.equal(r.topics[0].errorCode, 0);
  }
  assert.equal(partitionCode(await produce(adminConn, 'secret', 'admin')), 0);
  // FindCoordinator makes __consumer_offsets, which commits need.
  await adminConn.send(ApiKey.FindCoordinator, 4, { keyType: 0, coordinatorKeys: ['any-group'] });
});

after(async () => {
  if (!hasOpenssl) return;
  alice?.close();
  admin?.close();
  await server?.close();
});

const aliceTls = () => ({ ca: readFileSync(certs.caCert), cert: readFileSync(certs.clientCert), key: readFileSync(certs.clientKey), servername: 'localhost' });

function produce(conn: BrokerConnection, topic: string, value: string, transactionalId: string | null = null) {
  const records = buildRecordBatchSync({ records: [{ key: null, value: Buffer.from(value), timestamp: Date.now() }] });
  return conn.send(ApiKey.Produce, 9, { transactionalId, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
}
const partitionCode = (r: any): number => r.responses[0].partitionResponses[0].errorCode;

function fetch(conn: BrokerConnection, topic: string) {
  return conn.send(ApiKey.Fetch, 12, {
    clusterId: null, replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [], rackId: '',
  });
}

/** OffsetCommit to this broker (the only one, so the coordinator), again while `__consumer_offsets` is being made. */
async function commit(conn: BrokerConnection, groupId: string, topic: string): Promise<any> {
  for (let i = 0; ; i++) {
    const r = await conn.send(ApiKey.OffsetCommit, 8, { groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null,
      topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }] });
    const code = r.topics[0].partitions[0].errorCode;
    if (i >= 100 || ![E.COORDINATOR_LOAD_IN_PROGRESS, E.COORDINATOR_NOT_AVAILABLE, E.NOT_COORDINATOR].includes(code)) return r;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const binding = (resourceType: number, resourceName: string, operation: number, patternType: number = PatternType.LITERAL) => ({
  resourceType, resourceName, resourcePatternType: patternType, principal: 'User:alice', host: '*', operation, permissionType: AclPermissionType.ALLOW,
});

async function grant(...creations: ReturnType<typeof binding>[]) {
  const r = await admin.admin(ApiKey.CreateAcls, { creations }, 3);
  assert.deepEqual(r.results.map((x: any) => x.errorCode), creations.map(() => 0));
}

async function revokeAll() {
  const r = await admin.admin(ApiKey.DeleteAcls, { filters: [{ resourceTypeFilter: ResourceType.ANY, resourceNameFilter: null, patternTypeFilter: PatternType.ANY,
    principalFilter: 'User:alice', hostFilter: null, operation: Op.ANY, permissionType: AclPermissionType.ANY }] }, 3);
  assert.equal(r.filterResults[0].errorCode, 0);
}

const metadataTopics = async (conn: BrokerConnection, topics: string[] | null) =>
  (await conn.send(ApiKey.Metadata, 12, { topics: topics?.map((name) => ({ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name })) ?? null, allowAutoTopicCreation: false,
    includeTopicAuthorizedOperations: false })).topics.map((t: any) => [t.name, t.errorCode]);

test('without a grant: produce, fetch, commit, transactional and idempotent producers and admin calls get the precise authorization error, and no record is read', { skip, timeout: 30_000 }, async () => {
  assert.equal(partitionCode(await produce(alice, 'secret', 'alice')), E.TOPIC_AUTHORIZATION_FAILED);
  const f = await fetch(alice, 'secret');
  assert.equal(f.responses[0].partitions[0].errorCode, E.TOPIC_AUTHORIZATION_FAILED);
  assert.equal(f.responses[0].partitions[0].records, null);
  const c = await commit(alice, 'alice-group', 'secret');
  assert.equal(c.topics[0].partitions[0].errorCode, E.GROUP_AUTHORIZATION_FAILED);
  const txnInit = await alice.send(ApiKey.InitProducerId, 4, { transactionalId: 'alice-tx', transactionTimeoutMs: 10_000, producerId: -1n, producerEpoch: -1 });
  assert.equal(txnInit.errorCode, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  assert.equal(partitionCode(await produce(alice, 'secret', 'tx', 'alice-tx')), E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  const idempotent = await alice.send(ApiKey.InitProducerId, 4, { transactionalId: null, transactionTimeoutMs: 10_000, producerId: -1n, producerEpoch: -1 });
  assert.equal(idempotent.errorCode, E.CLUSTER_AUTHORIZATION_FAILED);
  const created = await alice.send(ApiKey.CreateTopics, 7, { topics: [{ name: 'alice-topic', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
  assert.equal(created.topics[0].errorCode, E.TOPIC_AUTHORIZATION_FAILED);
  const deleted = await alice.send(ApiKey.DeleteTopics, 5, { topicNames: ['secret'], timeoutMs: 5000 });
  assert.equal(deleted.responses[0].errorCode, E.TOPIC_AUTHORIZATION_FAILED);
  const acl = await alice.send(ApiKey.CreateAcls, 3, { creations: [binding(ResourceType.TOPIC, 'secret', Op.ALL)] });
  assert.equal(acl.results[0].errorCode, E.CLUSTER_AUTHORIZATION_FAILED);
  assert.equal((await alice.send(ApiKey.DescribeAcls, 3, { resourceTypeFilter: ResourceType.ANY, resourceNameFilter: null, patternTypeFilter: PatternType.ANY,
    principalFilter: null, hostFilter: null, operation: Op.ANY, permissionType: AclPermissionType.ANY })).errorCode, E.CLUSTER_AUTHORIZATION_FAILED);
  const configs = await alice.send(ApiKey.IncrementalAlterConfigs, 1, { resources: [{ resourceType: 2, resourceName: 'secret', configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }] }], validateOnly: false });
  assert.equal(configs.responses[0].errorCode, E.TOPIC_AUTHORIZATION_FAILED);
  assert.equal((await alice.send(ApiKey.DescribeCluster, 0, { includeClusterAuthorizedOperations: false })).errorCode, E.CLUSTER_AUTHORIZATION_FAILED);
  // Metadata: all topics leaves both out, a named one is refused, auto-creation is refused.
  assert.deepEqual(await metadataTopics(alice, null), []);
  assert.deepEqual(await metadataTopics(alice, ['secret']), [['secret', E.TOPIC_AUTHORIZATION_FAILED]]);
  // Metadata v0's empty list and DescribeTopicPartitions' empty list both mean "every topic": still none.
  assert.deepEqual((await alice.send(ApiKey.Metadata, 0, { topics: [] })).topics, []);
  assert.deepEqual((await alice.send(ApiKey.DescribeTopicPartitions, 0, { topics: [], responsePartitionLimit: 2000, cursor: null })).topics, []);
  const auto = await alice.send(ApiKey.Metadata, 12, { topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'alice-auto' }], allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false });
  assert.equal(auto.topics[0].errorCode, E.TOPIC_AUTHORIZATION_FAILED);
  // Nothing alice tried changed anything.
  const retention = await adminConn.send(ApiKey.DescribeConfigs, 4, { resources: [{ resourceType: 2, resourceName: 'secret', configurationKeys: ['retention.ms'] }], includeSynonyms: false, includeDocumentation: false });
  assert.notEqual(retention.results[0].configs[0].value, '1000');
  const adminView = await fetch(adminConn, 'secret');
  assert.equal(adminView.responses[0].partitions[0].highWatermark, 1n);
});

test('after a grant alice produces, fetches and commits; after the grant is deleted her open connection is refused again', { skip, timeout: 30_000 }, async () => {
  await grant(binding(ResourceType.TOPIC, 'sec', Op.WRITE, PatternType.PREFIXED), binding(ResourceType.TOPIC, 'sec', Op.READ, PatternType.PREFIXED),
    binding(ResourceType.GROUP, 'alice-group', Op.READ));
  try {
    assert.equal(partitionCode(await produce(alice, 'secret', 'alice')), 0);
    const f = await fetch(alice, 'secret');
    assert.equal(f.responses[0].partitions[0].errorCode, 0);
    assert.ok(f.responses[0].partitions[0].records.length > 0);
    assert.equal(f.responses[0].partitions[0].highWatermark, 2n);
    assert.equal((await commit(alice, 'alice-group', 'secret')).topics[0].partitions[0].errorCode, 0);
    // READ on the group but not on the topic: the topic is refused.
    assert.equal((await commit(alice, 'alice-group', 'public')).topics[0].partitions[0].errorCode, E.TOPIC_AUTHORIZATION_FAILED);
    // WRITE on a topic is enough for an idempotent producer (Kafka 3+).
    const idempotent = await alice.send(ApiKey.InitProducerId, 4, { transactionalId: null, transactionTimeoutMs: 10_000, producerId: -1n, producerEpoch: -1 });
    assert.equal(idempotent.errorCode, 0);
    // Metadata shows the topic she may describe (WRITE and READ imply DESCRIBE), not the other.
    assert.deepEqual(await metadataTopics(alice, null), [['secret', 0]]);
  } finally {
    await revokeAll();
  }
  assert.equal(partitionCode(await produce(alice, 'secret', 'late')), E.TOPIC_AUTHORIZATION_FAILED);
  assert.equal((await fetch(alice, 'secret')).responses[0].partitions[0].records, null);
  assert.equal((await commit(alice, 'alice-group', 'secret')).topics[0].partitions[0].errorCode, E.GROUP_AUTHORIZATION_FAILED);
});

test('a fetch of a topic alice may read and one she may not: the refused one is not read, so its records do not end her long poll early', { skip, timeout: 30_000 }, async () => {
  await grant(binding(ResourceType.TOPIC, 'public', Op.READ));
  try {
    const publicEnd = (await adminConn.send(ApiKey.ListOffsets, 7, { replicaId: -1, isolationLevel: 0,
      topics: [{ name: 'public', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }] })).topics[0].partitions[0].offset as bigint;
    const maxWaitMs = 1500;
    const started = Date.now();
    const f = await alice.send(ApiKey.Fetch, 12, {
      clusterId: null, replicaId: -1, maxWaitMs, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [
        { topic: 'secret', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] },
        { topic: 'public', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: publicEnd, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] },
      ],
      forgottenTopicsData: [], rackId: '',
    });
    const elapsed = Date.now() - started;
    const byTopic = new Map(f.responses.map((t: any) => [t.topic, t.partitions[0]]));
    assert.equal((byTopic.get('secret') as any).errorCode, E.TOPIC_AUTHORIZATION_FAILED);
    assert.equal((byTopic.get('secret') as any).records, null);
    assert.equal((byTopic.get('public') as any).errorCode, 0);
    // `secret` holds records, `public` none past its end: as in Kafka, only `public` counts toward
    // min_bytes, so the fetch waits out max_wait_ms rather than answering at once (a consumer would spin).
    assert.ok(elapsed >= maxWaitMs - 100, `answered after ${elapsed} ms, before max_wait_ms ${maxWaitMs}`);
  } finally {
    await revokeAll();
  }
});

test('a DENY wins over a wildcard grant, and ListGroups shows only the groups alice may describe', { skip, timeout: 30_000 }, async () => {
  for (const g of ['visible-group', 'hidden-group']) assert.equal((await commit(adminConn, g, 'public')).topics[0].partitions[0].errorCode, 0);
  await grant(binding(ResourceType.TOPIC, '*', Op.ALL), binding(ResourceType.GROUP, 'visible-group', Op.DESCRIBE));
  const deny = await admin.admin(ApiKey.CreateAcls, { creations: [{ ...binding(ResourceType.TOPIC, 'secret', Op.READ), permissionType: AclPermissionType.DENY }] }, 3);
  assert.equal(deny.results[0].errorCode, 0);
  try {
    assert.equal((await fetch(alice, 'public')).responses[0].partitions[0].errorCode, 0);
    assert.equal((await fetch(alice, 'secret')).responses[0].partitions[0].errorCode, E.TOPIC_AUTHORIZATION_FAILED);
    const groups = (await alice.send(ApiKey.ListGroups, 4, { statesFilter: [] })).groups.map((g: any) => g.groupId);
    assert.deepEqual(groups, ['visible-group']);
    const all = (await adminConn.send(ApiKey.ListGroups, 4, { statesFilter: [] })).groups.map((g: any) => g.groupId);
    assert.ok(all.includes('hidden-group'));
  } finally {
    await revokeAll();
  }
});

test('kcat (librdkafka), kafka-python and a confluent-kafka-python transactional producer see the authorization errors, then succeed once granted', { skip: !hasOpenssl || !hasKcat ? 'kcat or openssl is not installed' : false, timeout: 60_000 }, async () => {
  const kcat = ['-b', `${ssl.host}:${ssl.port}`, '-X', 'security.protocol=SSL', '-X', `ssl.ca.location=${certs.caCert}`,
    '-X', `ssl.certificate.location=${certs.clientCert}`, '-X', `ssl.key.location=${certs.clientKey}`];
  const denied = await runProcess('kcat', ['-P', ...kcat, '-t', 'secret', '-X', 'message.timeout.ms=5000'], 'nope\n');
  assert.notEqual(denied.code, 0);
  assert.match(denied.stderr, /Topic authorization failed/);
  const read = await runProcess('kcat', ['-C', ...kcat, '-t', 'secret', '-o', 'beginning', '-e', '-q']);
  assert.notEqual(read.code, 0);
  assert.match(read.stderr, /Topic authorization failed/);
  assert.equal(read.stdout, '');
  // kafka-python's producer never reports an unauthorized single topic (it retries its metadata
  // until max_block_ms), so its consumer's commit shows the refusals: first the group, then the topic.
  const pyCommit = (group: string) => runProcess(PYTHON, ['-c', KAFKA_PYTHON_COMMIT, `${ssl.host}:${ssl.port}`, certs.caCert, certs.clientCert, certs.clientKey, group, 'secret'], null, 60_000);
  if (hasKafkaPython) assert.match((await pyCommit('py-group')).stdout, /^GroupAuthorizationFailedError/);
  await grant(binding(ResourceType.GROUP, 'py-group', Op.READ));
  if (hasKafkaPython) assert.match((await pyCommit('py-group')).stdout, /^TopicAuthorizationFailedError/);
  // confluent-kafka-python's transactional producer: refused at init_transactions, then allowed with WRITE on the id.
  const pyTxn = () => runProcess(PYTHON, ['-c', CONFLUENT_TXN, `${ssl.host}:${ssl.port}`, certs.caCert, certs.clientCert, certs.clientKey], null, 60_000);
  if (hasConfluentPython) assert.match((await pyTxn()).stdout, /TRANSACTIONAL_ID_AUTHORIZATION_FAILED/);
  await grant(binding(ResourceType.TOPIC, 'secret', Op.WRITE), binding(ResourceType.TOPIC, 'secret', Op.READ), binding(ResourceType.TRANSACTIONAL_ID, 'py-tx', Op.WRITE));
  try {
    if (hasConfluentPython) {
      const txn = await pyTxn();
      assert.equal(txn.stdout.trim(), 'committed', txn.stdout + txn.stderr);
    }
    const ok = await runProcess('kcat', ['-P', ...kcat, '-t', 'secret'], 'granted\n');
    assert.equal(ok.code, 0, ok.stderr);
    const rows = await runProcess('kcat', ['-C', ...kcat, '-t', 'secret', '-o', 'beginning', '-e', '-q', '-f', '%s\\n']);
    assert.equal(rows.code, 0, rows.stderr);
    assert.ok(rows.stdout.split('\n').includes('granted'), rows.stdout);
    if (hasKafkaPython) {
      const py = await pyCommit('py-group');
      assert.equal(py.stdout.trim(), 'committed', py.stderr);
    }
  } finally {
    await revokeAll();
  }
});

/** confluent-kafka-python commits one transactional record to `secret`: `committed`, or the error's name. */
const CONFLUENT_TXN = `
import sys
from confluent_kafka import Producer, KafkaException
bootstrap, ca, cert, key = sys.argv[1:5]
p = Producer({'bootstrap.servers': bootstrap, 'security.protocol': 'SSL', 'ssl.ca.location': ca, 'ssl.certificate.location': cert,
              'ssl.key.location': key, 'transactional.id': 'py-tx', 'transaction.timeout.ms': 10000})
try:
    p.init_transactions(15)
    p.begin_transaction()
    p.produce('secret', b'txn')
    p.commit_transaction(15)
    print('committed')
except KafkaException as e:
    print(e.args[0].name(), e.args[0].str())
`;

/** kafka-python commits an offset for a group: it prints the error class it raises, or `committed`. */
const KAFKA_PYTHON_COMMIT = `
import sys
from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata
bootstrap, ca, cert, key, group, topic = sys.argv[1:7]
c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, security_protocol='SSL', ssl_cafile=ca, ssl_certfile=cert, ssl_keyfile=key,
                  ssl_check_hostname=False, enable_auto_commit=False, api_version=(2, 5), request_timeout_ms=11000, session_timeout_ms=10000)
try:
    c.commit({TopicPartition(topic, 0): OffsetAndMetadata(1, '')})
    print('committed')
except Exception as e:
    print(type(e).__name__, e)
finally:
    c.close()
`;

test('logline acl create, list --json and delete with kafka-acls.sh options; refused when the broker has no authorizer', { skip, timeout: 60_000 }, async () => {
  const cli = (...argv: string[]) => runProcess(process.execPath, ['bin/logline.js', 'acl', ...argv, '-b', plain]);
  const made = await cli('create', '--allow-principal', 'User:alice', '--operation', 'Read', '--operation', 'Describe', '--group', 'cli-', '--topic', 'cli-', '--resource-pattern-type', 'prefixed');
  assert.equal(made.code, 0, made.stderr);
  const listed = await cli('list', '--principal', 'User:alice', '--json');
  assert.equal(listed.code, 0, listed.stderr);
  const rows = JSON.parse(listed.stdout).map((r: any) => `${r.resourceType} ${r.name} ${r.patternType} ${r.operation} ${r.permission}`).sort();
  assert.deepEqual(rows, ['Group cli- PREFIXED Describe ALLOW', 'Group cli- PREFIXED Read ALLOW', 'Topic cli- PREFIXED Describe ALLOW', 'Topic cli- PREFIXED Read ALLOW']);
  // Alice may now describe and read topics named cli-*, so Metadata for one she names says it does not exist rather than refusing.
  assert.deepEqual(await metadataTopics(alice, ['cli-none']), [['cli-none', E.UNKNOWN_TOPIC_OR_PARTITION]]);
  const deleted = await cli('delete', '--topic', 'cli-', '--group', 'cli-', '--resource-pattern-type', 'prefixed', '--json');
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.equal(JSON.parse(deleted.stdout).length, 4);
  assert.deepEqual(await metadataTopics(alice, ['cli-none']), [['cli-none', E.TOPIC_AUTHORIZATION_FAILED]]);
  assert.equal((await cli('create', '--topic', 'x')).code, 2);
  assert.equal((await cli('delete')).code, 2);
  // A broker without authorizer.class.name answers SECURITY_DISABLED.
  const plainServer = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'] });
  try {
    const r = await runProcess(process.execPath, ['bin/logline.js', 'acl', 'create', '--allow-principal', 'User:x', '--cluster', '-b', `127.0.0.1:${plainServer.listeners[0]!.port}`]);
    assert.equal(r.code, 1);
    assert.match(r.stdout + r.stderr, /SECURITY_DISABLED/);
  } finally {
    await plainServer.close();
  }
});
