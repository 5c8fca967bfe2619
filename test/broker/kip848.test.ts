// librdkafka consumers speaking the KIP-848 consumer group protocol (`group.protocol=consumer`,
// ConsumerGroupHeartbeat) against the broker, through @confluentinc/kafka-javascript's KafkaJS API:
// three members split a six-partition topic (as each client reports it and as ConsumerGroupDescribe
// shows over the wire), 3,000 records are each consumed once and their offsets committed, a member
// that leaves hands its partitions to the others and a new one takes some back, and a member whose
// process is killed is removed after the session timeout, not before, and its partitions move on.
//
// The package is not a dependency (see confluent-js.test.ts): without it these tests skip, except
// in CI, where they fail.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { spawn, type ChildProcess } from 'node:child_process';
import { tempDataDir, within } from './process-helpers.js';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';

const PACKAGE = '@confluentinc/kafka-javascript';
const INSTALL = `CKJS_LINKING=dynamic npm install --no-save ${PACKAGE}@1.10.1`;
const PARTITIONS_COUNT = 6;
const RECORDS_TOTAL = 3000;
const SESSION_TIMEOUT_MS = 3000;
const HEARTBEAT_INTERVAL_MS = 250;
const WAIT_MS_MAX = 20_000;
/** Set KIP848_DEBUG=1 to see librdkafka's group and protocol debug log on stderr. */
const DEBUG = process.env.KIP848_DEBUG ? { debug: 'cgrp,protocol' } : {};

// The few parts of the client's KafkaJS-compatible API used here, typed locally so that the test
// compiles on a machine without the package.
interface Ckjs { librdkafkaVersion: string; KafkaJS: { Kafka: new (config: object) => CkjsKafka } }
interface CkjsClient { connect(): Promise<void>; disconnect(): Promise<void> }
interface CkjsKafka { admin(config?: object): CkjsAdmin; producer(config?: object): CkjsProducer; consumer(config: object): CkjsConsumer }
interface CkjsAdmin extends CkjsClient {
  createTopics(options: { topics: { topic: string; numPartitions: number; replicationFactor: number }[]; timeout?: number }): Promise<boolean>;
}
interface CkjsProducer extends CkjsClient {
  send(record: { topic: string; messages: { partition: number; value: string }[] }): Promise<{ partition: number; errorCode: number }[]>;
}
interface CkjsConsumer extends CkjsClient {
  subscribe(subscription: { topics: string[] }): Promise<void>;
  run(config: { eachMessage: (payload: { topic: string; partition: number; message: { value: Buffer | null; offset: string } }) => Promise<void> }): Promise<void>;
  assignment(): { topic: string; partition: number }[];
}

function loadClient(): { ckjs: Ckjs | null; packagePath: string; skip: string | false } {
  try {
    const require = createRequire(import.meta.url);
    return { ckjs: require(PACKAGE) as Ckjs, packagePath: require.resolve(PACKAGE), skip: false };
  } catch (err) {
    if (process.env.CI) throw new Error(`${PACKAGE} is missing in CI (${INSTALL}): ${(err as Error).message}`);
    return { ckjs: null, packagePath: '', skip: `${PACKAGE} is not installed (${INSTALL})` };
  }
}
const { ckjs, packagePath, skip } = loadClient();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns true; on timeout the error says what was awaited and what was last seen. */
async function waitFor(what: string, check: () => Promise<boolean> | boolean, describeState: () => string = () => '', timeoutMs = WAIT_MS_MAX): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; ${describeState()}`);
    await sleep(50);
  }
}

async function disconnectAll(clients: CkjsClient[]): Promise<void> {
  await Promise.allSettled(clients.map((c) => within(10_000, 'disconnect', c.disconnect())));
}

async function startBroker(): Promise<ServerHandle> {
  const config = parseBrokerConfig({
    'node.id': '1',
    'group.initial.rebalance.delay.ms': '0',
    'group.consumer.min.session.timeout.ms': '1000',
    'group.consumer.session.timeout.ms': String(SESSION_TIMEOUT_MS),
    'group.consumer.min.heartbeat.interval.ms': '100',
    'group.consumer.heartbeat.interval.ms': String(HEARTBEAT_INTERVAL_MS),
  });
  return startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config, dataDir: tempDataDir() });
}

const bootstrapOf = (server: ServerHandle) => `127.0.0.1:${server.listeners[0]!.port}`;

function kafkaFor(client: Ckjs, server: ServerHandle): CkjsKafka {
  return new client.KafkaJS.Kafka({ kafkaJS: { clientId: 'kip848-test', brokers: [bootstrapOf(server)], logLevel: 0 } });
}

/** A KIP-848 consumer: the group protocol and client id are librdkafka properties, beside the kafkaJS block. */
function consumerConfig(groupId: string, clientId: string): object {
  return { kafkaJS: { groupId, fromBeginning: true, autoCommit: true, autoCommitInterval: 200 }, 'group.protocol': 'consumer', 'client.id': clientId, ...DEBUG };
}

// ---- The group over the wire -------------------------------------------------------------------------

interface DescribedMember { memberId: string; memberEpoch: number; clientId: string; assignment: { topicPartitions: { topicName: string; partitions: number[] }[] } }
interface DescribedGroup { errorCode: number; groupState: string; groupEpoch: number; assignmentEpoch: number; assignorName: string; members: DescribedMember[] }

async function describeGroup(admin: ClusterClient, groupId: string): Promise<DescribedGroup> {
  const c = await admin.any();
  const r = await c.send<{ groups: DescribedGroup[] }>(ApiKey.ConsumerGroupDescribe, 0, { groupIds: [groupId], includeAuthorizedOperations: false });
  assert.equal(r.groups.length, 1);
  return r.groups[0]!;
}

/** client id → partitions of `topic`, as the coordinator has them assigned. */
function describedAssignments(g: DescribedGroup, topic: string): Map<string, number[]> {
  return new Map(g.members.map((m) => [m.clientId, m.assignment.topicPartitions.filter((t) => t.topicName === topic).flatMap((t) => t.partitions).sort((a, b) => a - b)]));
}

/** partition → committed offset, by OffsetFetch v7 (the group's offsets, no member epoch needed). */
async function committedOffsets(admin: ClusterClient, groupId: string, topic: string): Promise<Map<number, number>> {
  const c = await admin.any();
  const partitionIndexes = Array.from({ length: PARTITIONS_COUNT }, (_, i) => i);
  const r = await c.send<{ errorCode: number; topics: { name: string; partitions: { partitionIndex: number; committedOffset: bigint; errorCode: number }[] }[] }>(
    ApiKey.OffsetFetch, 7, { groupId, topics: [{ name: topic, partitionIndexes }], requireStable: false });
  assert.equal(r.errorCode, 0, 'OffsetFetch error');
  return new Map(r.topics.flatMap((t) => t.partitions).map((p) => [p.partitionIndex, Number(p.committedOffset)]));
}

// ---- What the clients report -------------------------------------------------------------------------

/** Each owner's partitions are disjoint from the others' and together cover every partition, each owner having `sizes`. */
function isSplit(assignments: Map<string, number[]>, owners: string[], sizes?: number[]): boolean {
  if (owners.some((o) => !assignments.has(o))) return false;
  const lists = owners.map((o) => assignments.get(o)!);
  const all = lists.flat().sort((a, b) => a - b);
  if (all.join() !== Array.from({ length: PARTITIONS_COUNT }, (_, i) => i).join()) return false;
  if (sizes && lists.map((l) => l.length).sort().join() !== [...sizes].sort().join()) return false;
  return lists.every((l) => l.length > 0);
}

const show = (m: Map<string, number[]>) => [...m].map(([k, v]) => `${k}=[${v.join(',')}]`).join(' ');

function clientAssignment(c: CkjsConsumer, topic: string): number[] {
  return c.assignment().filter((a) => a.topic === topic).map((a) => a.partition).sort((a, b) => a - b);
}

/** Records seen, value → how many times, and by which consumer. */
class Seen {
  readonly counts = new Map<string, number>();
  readonly byConsumer = new Map<string, number>();
  add(consumer: string, value: string): void {
    this.counts.set(value, (this.counts.get(value) ?? 0) + 1);
    this.byConsumer.set(consumer, (this.byConsumer.get(consumer) ?? 0) + 1);
  }
  duplicates(): string[] { return [...this.counts].filter(([, n]) => n > 1).map(([v]) => v); }
}

async function startConsumer(kafka: CkjsKafka, clients: CkjsClient[], groupId: string, name: string, topic: string, seen: Seen): Promise<CkjsConsumer> {
  const consumer = kafka.consumer(consumerConfig(groupId, name));
  clients.push(consumer);
  await within(10_000, `${name} connect`, consumer.connect());
  await within(10_000, `${name} subscribe`, consumer.subscribe({ topics: [topic] }));
  await consumer.run({ eachMessage: async ({ message }) => { seen.add(name, message.value!.toString()); } });
  return consumer;
}

async function produce(kafka: CkjsKafka, clients: CkjsClient[], topic: string, prefix: string, count: number): Promise<void> {
  const producer = kafka.producer({ kafkaJS: { acks: -1 } });
  clients.push(producer);
  await within(10_000, 'producer connect', producer.connect());
  const messages = Array.from({ length: count }, (_, i) => ({ partition: i % PARTITIONS_COUNT, value: `${prefix}-${i}` }));
  const acks = await within(20_000, 'send', producer.send({ topic, messages }));
  assert.ok(acks.every((a) => a.errorCode === 0), 'every partition acknowledged');
  await within(10_000, 'producer disconnect', producer.disconnect());
}

async function createTopic(kafka: CkjsKafka, clients: CkjsClient[], topic: string): Promise<void> {
  const admin = kafka.admin();
  clients.push(admin);
  await within(10_000, 'admin connect', admin.connect());
  await within(10_000, 'createTopics', admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS_COUNT, replicationFactor: 1 }], timeout: 5000 }));
}

/** Waits until the clients and the coordinator agree on a split of the partitions among `names`. */
async function waitForSplit(what: string, admin: ClusterClient, groupId: string, topic: string, consumers: Map<string, CkjsConsumer>, names: string[], sizes?: number[]): Promise<DescribedGroup> {
  const reported = () => new Map(names.map((n) => [n, clientAssignment(consumers.get(n)!, topic)]));
  await waitFor(`${what}: the clients' own assignments`, () => isSplit(reported(), names, sizes), () => show(reported()));
  let last: DescribedGroup | undefined;
  await waitFor(`${what}: ConsumerGroupDescribe Stable with the same split`, async () => {
    last = await describeGroup(admin, groupId);
    const described = describedAssignments(last, topic);
    return last.errorCode === 0 && last.groupState === 'Stable' && last.members.length === names.length
      && last.members.every((m) => m.memberEpoch === last!.groupEpoch)
      && names.every((n) => described.get(n)?.join() === clientAssignment(consumers.get(n)!, topic).join());
  }, () => `described ${last?.groupState} epoch ${last?.groupEpoch} ${last ? show(describedAssignments(last, topic)) : ''}; clients ${show(reported())}`);
  return last!;
}

test('KIP-848 librdkafka consumers: three split six partitions, 3,000 records consumed once and committed, a leaver\'s partitions move and a joiner takes some back', { skip, timeout: 60_000 }, async (t: TestContext) => {
  const client = ckjs!;
  t.diagnostic(`librdkafka ${client.librdkafkaVersion}`);
  const server = await startBroker();
  const heartbeatVersions = new Set<number>();
  server.router.intercept(ApiKey.ConsumerGroupHeartbeat, (header) => { heartbeatVersions.add(header.requestApiVersion); return undefined; });
  const admin = new ClusterClient({ bootstrap: bootstrapOf(server) });
  const clients: CkjsClient[] = [];
  const topic = 'kip848-orders';
  const groupId = 'kip848-group';
  try {
    const kafka = kafkaFor(client, server);
    await createTopic(kafka, clients, topic);
    const seen = new Seen();
    const consumers = new Map<string, CkjsConsumer>();
    for (const name of ['c1', 'c2', 'c3']) consumers.set(name, await startConsumer(kafka, clients, groupId, name, topic, seen));

    // (1) Three members, two partitions each, disjoint, covering all six.
    const stable = await waitForSplit('three members', admin, groupId, topic, consumers, ['c1', 'c2', 'c3'], [2, 2, 2]);
    assert.equal(stable.assignorName, 'uniform');
    t.diagnostic(`ConsumerGroupHeartbeat versions ${[...heartbeatVersions].join(',')}; group epoch ${stable.groupEpoch}: ${show(describedAssignments(stable, topic))}`);

    // (2) Every record consumed once, every partition's offset committed up to its end.
    await produce(kafka, clients, topic, 'first', RECORDS_TOTAL);
    await waitFor(`${RECORDS_TOTAL} records`, () => seen.counts.size === RECORDS_TOTAL, () => `${seen.counts.size} seen`);
    const perPartition = RECORDS_TOTAL / PARTITIONS_COUNT;
    let committed = new Map<number, number>();
    await waitFor('committed offsets at the end of every partition', async () => {
      committed = await committedOffsets(admin, groupId, topic);
      return [...committed.values()].filter((o) => o === perPartition).length === PARTITIONS_COUNT;
    }, () => `committed ${[...committed].map(([p, o]) => `${p}:${o}`).join(' ')}`);
    assert.deepEqual(seen.duplicates(), [], 'no record consumed twice');
    assert.deepEqual([...seen.byConsumer.keys()].sort(), ['c1', 'c2', 'c3'], 'each member consumed');

    // (3) c3 leaves: c1 and c2 share all six; then c4 joins and takes some back.
    const c3Partitions = clientAssignment(consumers.get('c3')!, topic);
    await within(10_000, 'c3 disconnect', consumers.get('c3')!.disconnect());
    const afterLeave = await waitForSplit('c3 left', admin, groupId, topic, consumers, ['c1', 'c2'], [3, 3]);
    assert.ok(afterLeave.members.every((m) => m.clientId !== 'c3'), 'c3 is no longer a member');
    t.diagnostic(`c3 had [${c3Partitions.join(',')}]; after it left, epoch ${afterLeave.groupEpoch}: ${show(describedAssignments(afterLeave, topic))}`);
    consumers.set('c4', await startConsumer(kafka, clients, groupId, 'c4', topic, seen));
    const afterJoin = await waitForSplit('c4 joined', admin, groupId, topic, consumers, ['c1', 'c2', 'c4'], [2, 2, 2]);
    t.diagnostic(`after c4 joined, epoch ${afterJoin.groupEpoch}: ${show(describedAssignments(afterJoin, topic))}`);

    // Records produced now reach the new split, once each: nothing committed before is read again.
    await produce(kafka, clients, topic, 'second', 600);
    await waitFor(`${RECORDS_TOTAL + 600} records`, () => seen.counts.size === RECORDS_TOTAL + 600, () => `${seen.counts.size} seen`);
    await sleep(300);
    assert.deepEqual(seen.duplicates(), [], 'no record consumed twice across the rebalances');
    assert.ok((seen.byConsumer.get('c4') ?? 0) > 0, 'c4 consumed from its partitions');
  } finally {
    await disconnectAll(clients);
    admin.close();
    await server.close();
  }
});

// A consumer in its own process, so that it can be killed without leaving the group: it prints its
// assignment (a JSON array of partitions) whenever that changes.
const CHILD_CONSUMER = `
const [pkg, bootstrap, topic, groupId, clientId, debug] = process.argv.slice(1);
const { KafkaJS } = require(pkg);
const kafka = new KafkaJS.Kafka({ kafkaJS: { brokers: [bootstrap], logLevel: 0 } });
const consumer = kafka.consumer({ kafkaJS: { groupId, fromBeginning: true }, 'group.protocol': 'consumer', 'client.id': clientId, ...(debug ? { debug } : {}) });
(async () => {
  await consumer.connect();
  await consumer.subscribe({ topics: [topic] });
  await consumer.run({ eachMessage: async () => {} });
  let last = '';
  setInterval(() => {
    const now = JSON.stringify(consumer.assignment().filter((a) => a.topic === topic).map((a) => a.partition).sort((a, b) => a - b));
    if (now !== last) { last = now; process.stdout.write(now + '\\n'); }
  }, 50);
})().catch((err) => { process.stderr.write(String(err && err.stack || err)); process.exit(1); });
`;

function spawnConsumer(server: ServerHandle, topic: string, groupId: string, clientId: string): { child: ChildProcess; assignment: () => number[]; stderr: () => string } {
  const child = spawn(process.execPath, ['-e', CHILD_CONSUMER, packagePath, bootstrapOf(server), topic, groupId, clientId, DEBUG.debug ?? ''], { stdio: ['ignore', 'pipe', 'pipe'] });
  let assignment: number[] = [];
  let buffered = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) if (/^\[[\d,]*\]$/.test(line)) assignment = JSON.parse(line) as number[]; // other lines: the client's log
  });
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); if (DEBUG.debug) process.stderr.write(d); });
  return { child, assignment: () => assignment, stderr: () => stderr };
}

test('KIP-848 librdkafka consumers: a killed member is removed after the session timeout, not before, and its partitions reassigned', { skip, timeout: 60_000 }, async (t: TestContext) => {
  const client = ckjs!;
  const server = await startBroker();
  // The session runs from the member's last heartbeat, which came up to one interval before the kill.
  let victimHeartbeatAtMs = 0;
  server.router.intercept(ApiKey.ConsumerGroupHeartbeat, (header) => { if (header.clientId === 'victim') victimHeartbeatAtMs = Date.now(); return undefined; });
  const admin = new ClusterClient({ bootstrap: bootstrapOf(server) });
  const clients: CkjsClient[] = [];
  const topic = 'kip848-killed';
  const groupId = 'kip848-killed-group';
  let victim: ReturnType<typeof spawnConsumer> | undefined;
  try {
    const kafka = kafkaFor(client, server);
    await createTopic(kafka, clients, topic);
    const seen = new Seen();
    const consumers = new Map<string, CkjsConsumer>();
    victim = spawnConsumer(server, topic, groupId, 'victim');
    for (const name of ['s1', 's2']) consumers.set(name, await startConsumer(kafka, clients, groupId, name, topic, seen));
    const v = victim;
    const all = () => new Map([['victim', v.assignment()], ...['s1', 's2'].map((n) => [n, clientAssignment(consumers.get(n)!, topic)] as [string, number[]])]);
    await waitFor('three members, one in a child process', () => isSplit(all(), ['victim', 's1', 's2'], [2, 2, 2]), () => `${show(all())}; child stderr: ${v.stderr()}`);
    await waitFor('the coordinator agrees', async () => {
      const described = describedAssignments(await describeGroup(admin, groupId), topic);
      return described.size === 3 && [...all()].every(([n, ps]) => described.get(n)?.join() === ps.join());
    });
    const victimPartitions = v.assignment();

    // SIGKILL: no leave heartbeat, the connection just drops.
    const killedAtMs = Date.now();
    v.child.kill('SIGKILL');
    await sleep(SESSION_TIMEOUT_MS / 2);
    const during = await describeGroup(admin, groupId);
    assert.ok(during.members.some((m) => m.clientId === 'victim'), `the killed member is still in the group ${SESSION_TIMEOUT_MS / 2} ms later (session timeout ${SESSION_TIMEOUT_MS} ms)`);

    const after = await waitForSplit('the killed member fenced', admin, groupId, topic, consumers, ['s1', 's2'], [3, 3]);
    const reassignedAtMs = Date.now();
    assert.ok(after.members.every((m) => m.clientId !== 'victim'), 'the killed member is gone');
    assert.ok(victimHeartbeatAtMs > 0, 'the victim heartbeated');
    const sinceHeartbeatMs = reassignedAtMs - victimHeartbeatAtMs;
    assert.ok(sinceHeartbeatMs >= SESSION_TIMEOUT_MS, `reassigned ${sinceHeartbeatMs} ms after the victim's last heartbeat, before its session timed out`);
    t.diagnostic(`victim had [${victimPartitions.join(',')}]; reassigned ${reassignedAtMs - killedAtMs} ms after the kill, ${sinceHeartbeatMs} ms after its last heartbeat: ${show(describedAssignments(after, topic))}`);

    // The survivors now read the victim's partitions too.
    await produce(kafka, clients, topic, 'after-kill', 600);
    await waitFor('600 records', () => seen.counts.size === 600, () => `${seen.counts.size} seen`);
    assert.deepEqual(seen.duplicates(), []);
  } finally {
    if (victim && victim.child.exitCode === null && victim.child.signalCode === null) victim.child.kill('SIGKILL');
    await disconnectAll(clients);
    admin.close();
    await server.close();
  }
});

test('KIP-848 librdkafka consumer with a regex subscription (^.*) is assigned user topics only, never the internal ones', { skip, timeout: 60_000 }, async () => {
  const client = ckjs!;
  const server = await startBroker();
  const admin = new ClusterClient({ bootstrap: bootstrapOf(server) });
  const clients: CkjsClient[] = [];
  const topic = 'kip848-regex';
  try {
    // Both internal topics exist: the group's, and a transaction coordinator's.
    const c = await admin.any();
    for (const keyType of [0, 1]) {
      const r = await c.send<{ coordinators: { errorCode: number }[] }>(ApiKey.FindCoordinator, 4, { key: '', keyType, coordinatorKeys: ['x'] });
      assert.equal(r.coordinators[0]!.errorCode, 0);
    }
    const kafka = kafkaFor(client, server);
    await createTopic(kafka, clients, topic);
    await produce(kafka, clients, topic, 'regex', 60);
    const seen = new Seen();
    const consumer = kafka.consumer(consumerConfig('kip848-regex-group', 'regex'));
    clients.push(consumer);
    await within(10_000, 'connect', consumer.connect());
    await within(10_000, 'subscribe', consumer.subscribe({ topics: ['^.*'] }));
    await consumer.run({ eachMessage: async ({ message }) => { seen.add('regex', message.value?.toString('latin1') ?? ''); } });
    await waitFor('60 records', () => seen.counts.size >= 60, () => `${seen.counts.size} seen`);
    const topics = new Set(consumer.assignment().map((a) => a.topic));
    assert.deepEqual([...topics], [topic]);
    const described = await describeGroup(admin, 'kip848-regex-group');
    const describedTopics = new Set(described.members.flatMap((m) => m.assignment.topicPartitions.map((t) => t.topicName)));
    assert.deepEqual([...describedTopics], [topic]);
    assert.ok([...seen.counts.keys()].every((v) => v.startsWith('regex-')), 'only user records were read');
  } finally {
    await disconnectAll(clients);
    admin.close();
    await server.close();
  }
});
