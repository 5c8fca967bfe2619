// The controller listener holds the same rules as the brokers (issue 20): on a 3-node cluster whose
// listeners are all mTLS, with the StandardAuthorizer on and the brokers' certificate principal
// (User:localhost) in super.users, the quorum and forwarding work; a client certificate that is
// not a super user reaching the controller listener directly is refused; forwarded changes are
// authorized at the controller with the client's principal from the Envelope (a broker cannot
// lend a client its rights); and controller_mutation_rate is one budget per user for the whole
// cluster, charged by the active controller, auto-creation through Metadata included.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runProcess } from '../broker/process-helpers.js';
import { startCluster, type ClusterHandle, type ClusterNodeHandle } from '../../src/node/index.js';
import { writeDevCerts, type DevCerts, AclOperation as Op, AclPermissionType, PatternType, ResourceType } from '../../src/security/index.js';
import { BrokerConnection } from '../../src/client/index.js';
import { ApiKey, ErrorCode, ZERO_UUID, decodeResponse, defaultMessage } from '../../src/protocol/index.js';
import { encodeHostAddress, encodePrincipal, innerRequestData } from '../../src/broker/envelope.js';
import { mtlsAuthorizedCluster } from './tls-config.js';

const hasKcat = spawnSync('kcat', ['-V']).status === 0;
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
if (process.env.CI && (!hasKcat || !hasOpenssl)) throw new Error('kcat and openssl are needed in CI');
const skip = !hasOpenssl || !hasKcat ? 'kcat or openssl is not installed' : false;

type Tls = { ca: Buffer; cert: Buffer; key: Buffer; servername: string };
let certs: DevCerts;
let cluster: ClusterHandle;
let brokerTls: Tls;
let aliceTls: Tls;
let bobTls: Tls;

/** A second client certificate (CN=bob) from the dev CA. */
function bobCertificate(dir: string): { cert: string; key: string } {
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  run(['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'bob.key', '-out', 'bob.csr', '-subj', '/O=Logline dev/CN=bob']);
  writeFileSync(join(dir, 'bob.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
  run(['x509', '-req', '-in', 'bob.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '30', '-sha256', '-out', 'bob.crt', '-extfile', 'bob.ext']);
  return { cert: join(dir, 'bob.crt'), key: join(dir, 'bob.key') };
}

before(async () => {
  if (skip) return;
  certs = writeDevCerts(join(mkdtempSync(join(tmpdir(), 'logline-controller-authz-')), 'certs'), { clientName: 'alice' });
  const bob = bobCertificate(certs.dir);
  const ca = readFileSync(certs.caCert);
  const tlsOf = (cert: string, key: string): Tls => ({ ca, cert: readFileSync(cert), key: readFileSync(key), servername: 'localhost' });
  brokerTls = tlsOf(certs.brokerCert, certs.brokerKey);
  aliceTls = tlsOf(certs.clientCert, certs.clientKey);
  bobTls = tlsOf(bob.cert, bob.key);
  cluster = await startCluster({
    nodes: 3,
    config: mtlsAuthorizedCluster(certs),
  });
});

after(async () => {
  await cluster?.close();
  if (certs) rmSync(join(certs.dir, '..'), { recursive: true, force: true });
});

/** The node whose controller is active, and the other two. */
function roles(): { controller: ClusterNodeHandle; others: ClusterNodeHandle[] } {
  const id = cluster.leaderId();
  assert.ok(id !== undefined, 'the quorum has a leader');
  return { controller: cluster.nodes.find((n) => n.nodeId === id)!, others: cluster.nodes.filter((n) => n.nodeId !== id) };
}

async function withConnection<T>(port: number, tls: Tls, clientId: string, f: (conn: BrokerConnection) => Promise<T>): Promise<T> {
  const conn = await BrokerConnection.open({ host: '127.0.0.1', port, tls, clientId });
  try {
    return await f(conn);
  } finally {
    conn.close();
  }
}

const topic = (name: string, numPartitions: number, replicationFactor = 1) => ({ name, numPartitions, replicationFactor, assignments: [] as object[], configs: [] as { name: string; value: string }[] });
const createTopics = (conn: BrokerConnection, ...topics: ReturnType<typeof topic>[]) =>
  conn.send(ApiKey.CreateTopics, 7, { topics, timeoutMs: 10_000, validateOnly: false });

test('mTLS on every listener, StandardAuthorizer on, brokers in super.users: topics are created and an RF 3 topic is produced and consumed', { skip, timeout: 60_000 }, async () => {
  const [a, b] = roles().others;
  const created = await withConnection(a!.brokerPort, brokerTls, 'admin', (c) => createTopics(c, { ...topic('orders', 1, 3), configs: [{ name: 'min.insync.replicas', value: '3' }] }));
  assert.equal(created.topics[0].errorCode, ErrorCode.NONE, created.topics[0].errorMessage);
  const kcat = (n: ClusterNodeHandle) => ['-b', `127.0.0.1:${n.brokerPort}`, '-X', 'security.protocol=SSL', '-X', `ssl.ca.location=${certs.caCert}`,
    '-X', `ssl.certificate.location=${certs.brokerCert}`, '-X', `ssl.key.location=${certs.brokerKey}`];
  const lines = Array.from({ length: 20 }, (_, i) => `v${i}`).join('\n') + '\n';
  const p = await runProcess('kcat', ['-P', ...kcat(a!), '-t', 'orders', '-X', 'acks=all', '-X', 'message.timeout.ms=30000'], lines);
  assert.equal(p.code, 0, p.stderr);
  const c = await runProcess('kcat', ['-C', ...kcat(b!), '-t', 'orders', '-o', 'beginning', '-c', '20', '-e', '-q', '-f', '%s\\n']);
  assert.deepEqual(c.stdout.trim().split('\n'), lines.trim().split('\n'), c.stderr);
});

test('a client certificate that is not a super user, straight on the controller listener: BrokerRegistration, Vote, DescribeQuorum and Envelope are refused with CLUSTER_AUTHORIZATION_FAILED; the quorum carries on', { skip, timeout: 60_000 }, async () => {
  const { controller, others } = roles();
  const leaderBefore = cluster.leaderId();
  const clusterId = cluster.clusterId;
  const answers = await withConnection(controller.controllerPort, aliceTls, 'intruder', async (c) => ({
    registration: await c.send(ApiKey.BrokerRegistration, 4, { ...defaultMessage('BrokerRegistrationRequest', 4), brokerId: 99, clusterId, incarnationId: 'AAAAAAAAAAAAAAAAAAAAYw' }),
    vote: await c.send(ApiKey.Vote, 1, { ...defaultMessage('VoteRequest', 1), clusterId }),
    describeQuorum: await c.send(ApiKey.DescribeQuorum, 2, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }),
    envelope: await c.send(ApiKey.Envelope, 0, {
      requestData: innerRequestData(ApiKey.CreateTopics, 7, 'intruder', { topics: [topic('alice-by-envelope', 1)], timeoutMs: 5000, validateOnly: false }),
      requestPrincipal: encodePrincipal('User:localhost'), clientHostAddress: encodeHostAddress('127.0.0.1'),
    }),
    heartbeat: await c.send(ApiKey.BrokerHeartbeat, 1, { ...defaultMessage('BrokerHeartbeatRequest', 1), brokerId: others[0]!.nodeId, brokerEpoch: 1n }),
  }));
  assert.equal(answers.registration.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  assert.equal(answers.vote.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  assert.equal(answers.describeQuorum.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  assert.equal(answers.envelope.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  assert.equal(answers.envelope.responseData, null);
  assert.equal(answers.heartbeat.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  // The brokers' own principal may describe the quorum there; the refused Vote changed nothing.
  const described = await withConnection(controller.controllerPort, brokerTls, 'operator', (c) =>
    c.send(ApiKey.DescribeQuorum, 2, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }));
  assert.equal(described.errorCode, ErrorCode.NONE);
  assert.equal(described.topics[0].partitions[0].leaderId, leaderBefore);
  assert.equal(cluster.leaderId(), leaderBefore);
  const created = await withConnection(others[1]!.brokerPort, brokerTls, 'admin', (c) => createTopics(c, topic('after-intruder', 1, 3)));
  assert.equal(created.topics[0].errorCode, ErrorCode.NONE, 'the cluster still makes changes');
  const md = await withConnection(others[0]!.brokerPort, brokerTls, 'admin', (c) => c.send(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }));
  assert.ok(!md.topics.some((t: { name: string }) => t.name === 'alice-by-envelope'), 'the refused envelope created nothing');
});

test('CREATE on a topic prefix: alice creates through every broker, bob is refused; the controller authorizes the principal an Envelope names, not the broker that sent it', { skip, timeout: 60_000 }, async () => {
  const { controller } = roles();
  const grant = await withConnection(controller.brokerPort, brokerTls, 'admin', (c) => c.send(ApiKey.CreateAcls, 3, { creations: [{
    resourceType: ResourceType.TOPIC, resourceName: 'alice-', resourcePatternType: PatternType.PREFIXED, principal: 'User:alice', host: '*',
    operation: Op.CREATE, permissionType: AclPermissionType.ALLOW }] }));
  assert.equal(grant.results[0].errorCode, ErrorCode.NONE);
  // ACLs reach each broker with its metadata, a little after the controller's (as in Kafka): each
  // broker lists the grant before alice uses it there (the broker checks her rights too).
  for (const n of cluster.nodes) {
    let listed = false;
    for (let i = 0; i < 200 && !listed; i++) {
      const r = await withConnection(n.brokerPort, brokerTls, 'admin', (c) => c.send(ApiKey.DescribeAcls, 3, {
        resourceTypeFilter: ResourceType.TOPIC, resourceNameFilter: 'alice-', patternTypeFilter: PatternType.PREFIXED, principalFilter: 'User:alice',
        hostFilter: null, operation: Op.CREATE, permissionType: AclPermissionType.ALLOW }));
      listed = r.errorCode === ErrorCode.NONE && r.resources.length > 0;
      if (!listed) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(listed, `node ${n.nodeId} lists alice's grant`);
  }
  for (const n of cluster.nodes) {
    const mine = await withConnection(n.brokerPort, aliceTls, 'alice-app', (c) => createTopics(c, topic(`alice-${n.nodeId}`, 1)));
    assert.equal(mine.topics[0].errorCode, ErrorCode.NONE, `alice through node ${n.nodeId}: ${mine.topics[0].errorMessage}`);
    const theirs = await withConnection(n.brokerPort, bobTls, 'bob-app', (c) => createTopics(c, topic(`alice-bob-${n.nodeId}`, 1)));
    assert.equal(theirs.topics[0].errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED, `bob through node ${n.nodeId}`);
  }
  // A broker forwarding blindly (here: a super user's Envelope) cannot lend bob its rights; alice's own rights hold.
  const forward = (principal: string, name: string) => withConnection(controller.controllerPort, brokerTls, 'blind-broker', async (c) => {
    const r = await c.send(ApiKey.Envelope, 0, {
      requestData: innerRequestData(ApiKey.CreateTopics, 7, 'client', { topics: [topic(name, 1)], timeoutMs: 5000, validateOnly: false }),
      requestPrincipal: encodePrincipal(principal), clientHostAddress: encodeHostAddress('127.0.0.1'),
    });
    assert.equal(r.errorCode, ErrorCode.NONE);
    return decodeResponse(ApiKey.CreateTopics, 7, r.responseData).body as { topics: { errorCode: number }[] };
  });
  assert.equal((await forward('User:bob', 'alice-forwarded-for-bob')).topics[0]!.errorCode, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  assert.equal((await forward('User:alice', 'alice-forwarded')).topics[0]!.errorCode, ErrorCode.NONE);
});

test('controller_mutation_rate for a user is one budget across brokers: two brokers\' creations by alice are throttled as one, on the controller\'s own broker too', { skip, timeout: 60_000 }, async () => {
  const { controller, others } = roles();
  const [x, y] = others;
  // 1 partition/s: a bucket of 1 x 11 samples x 1 s = 11 partitions for User:alice.
  const set = await withConnection(controller.brokerPort, brokerTls, 'admin', (c) => c.send(ApiKey.AlterClientQuotas, 1, {
    entries: [{ entity: [{ entityType: 'user', entityName: 'alice' }], ops: [{ key: 'controller_mutation_rate', value: 1, remove: false }] }], validateOnly: false }));
  assert.equal(set.entries[0].errorCode, ErrorCode.NONE);
  for (const n of cluster.nodes) {
    for (let i = 0; i < 100 && n.server!.controllerMutationQuotas!.image.quotas([{ entityType: 'user', entityName: 'alice' }])?.get('controller_mutation_rate') !== 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const onX = await withConnection(x!.brokerPort, aliceTls, 'app-1', (c) => createTopics(c, topic('alice-q1', 8)));
  assert.equal(onX.topics[0].errorCode, ErrorCode.NONE);
  const onY = await withConnection(y!.brokerPort, aliceTls, 'app-2', (c) => createTopics(c, topic('alice-q2', 8)));
  assert.equal(onY.topics[0].errorCode, ErrorCode.NONE, 'the bucket had 3 left: taken, and now 5 in debt');
  // Each broker alone has seen 8 partitions (under 11); the cluster has seen 16.
  const again = await withConnection(x!.brokerPort, aliceTls, 'app-1', (c) => createTopics(c, topic('alice-q3', 1)));
  assert.equal(again.topics[0].errorCode, ErrorCode.THROTTLING_QUOTA_EXCEEDED);
  assert.ok(again.throttleTimeMs > 0, `the controller's throttle reaches the client: ${again.throttleTimeMs} ms`);
  // The active controller's own broker hands changes to it directly, and charges the same budget.
  const local = await withConnection(controller.brokerPort, aliceTls, 'app-3', (c) => createTopics(c, topic('alice-q4', 1)));
  assert.equal(local.topics[0].errorCode, ErrorCode.THROTTLING_QUOTA_EXCEEDED);
  // The active controller measured alice (the Envelope's principal), not the brokers that forwarded.
  const measured = controller.server!.controllerMutationQuotas!.rates().filter((r) => r.key === 'controller_mutation_rate');
  assert.deepEqual(measured.map((r) => r.user), ['alice']);
  for (const n of others) assert.deepEqual(n.server!.controllerMutationQuotas!.rates(), [], `node ${n.nodeId} charged nothing`);
});

test('auto-creation through Metadata is the client\'s topic creation: charged to its controller_mutation_rate through any broker, and a topic over it is not created', { skip, timeout: 60_000 }, async () => {
  const { controller, others } = roles();
  const admin = <T>(f: (c: BrokerConnection) => Promise<T>) => withConnection(controller.brokerPort, brokerTls, 'admin', f);
  const grants = await admin((c) => c.send(ApiKey.CreateAcls, 3, { creations: [Op.CREATE, Op.DESCRIBE].map((operation) => ({
    resourceType: ResourceType.TOPIC, resourceName: 'alice-auto-', resourcePatternType: PatternType.PREFIXED, principal: 'User:alice', host: '*',
    operation, permissionType: AclPermissionType.ALLOW })) }));
  assert.deepEqual(grants.results.map((r: { errorCode: number }) => r.errorCode), [ErrorCode.NONE, ErrorCode.NONE]);
  // 1 partition/s for alice's app `auto-app`: a bucket of 11 partitions (1 x 11 samples x 1 s), its own (user and client id).
  const entity = [{ entityType: 'user', entityName: 'alice' }, { entityType: 'client-id', entityName: 'auto-app' }];
  const set = await admin((c) => c.send(ApiKey.AlterClientQuotas, 1, { entries: [{ entity, ops: [{ key: 'controller_mutation_rate', value: 1, remove: false }] }], validateOnly: false }));
  assert.equal(set.entries[0].errorCode, ErrorCode.NONE);
  for (const n of cluster.nodes) {
    for (let i = 0; i < 100 && n.server!.controllerMutationQuotas!.image.quotas(entity)?.get('controller_mutation_rate') !== 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const existing = async (names: string[]) => {
    const md = await admin((c) => c.send(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }));
    return names.filter((name) => md.topics.some((t: { name: string }) => t.name === name));
  };
  const autoCreate = (port: number, names: string[]) => withConnection(port, aliceTls, 'auto-app', (c) => c.send(ApiKey.Metadata, 12, {
    topics: names.map((name) => ({ topicId: ZERO_UUID, name })), allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false }));

  // Through a broker that forwards: 30 one-partition topics against a bucket of 11 (plus what refills meanwhile).
  const forwarded = Array.from({ length: 30 }, (_, i) => `alice-auto-${i}`);
  const first = await autoCreate(others[0]!.brokerPort, forwarded);
  assert.ok(first.topics.every((t: { errorCode: number }) => t.errorCode === ErrorCode.LEADER_NOT_AVAILABLE || t.errorCode === ErrorCode.NONE));
  const made = await existing(forwarded);
  assert.ok(made.length >= 11 && made.length <= 15, `created ${made.length} of 30 with a bucket of 11 partitions`);
  assert.deepEqual(made, forwarded.slice(0, made.length), 'in the order asked');
  // The active controller measured alice's app, as for her own CreateTopics.
  const measured = controller.server!.controllerMutationQuotas!.rates().filter((r) => r.key === 'controller_mutation_rate');
  assert.ok(measured.some((r) => r.user === 'alice' && r.clientId === 'auto-app'), JSON.stringify(measured));
  for (const n of others) assert.deepEqual(n.server!.controllerMutationQuotas!.rates(), [], `node ${n.nodeId} charged nothing`);

  // Through the active controller's own broker, the same bucket, now in debt: at most what refilled is created.
  const local = Array.from({ length: 10 }, (_, i) => `alice-auto-local-${i}`);
  await autoCreate(controller.brokerPort, local);
  const madeLocal = await existing(local);
  assert.ok(madeLocal.length < 10, `created ${madeLocal.length} of 10 from a bucket in debt`);
});
