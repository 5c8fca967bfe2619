// Consumer groups with kafka-python and confluent-kafka-python (librdkafka) members, each its own
// process: three members split six partitions disjointly; a member killed with SIGKILL is replaced
// within its session timeout; with commit-after-processing every record is seen at least once
// across the rebalance and the committed offsets end at the log end. With librdkafka,
// cooperative-sticky keeps unaffected partitions through a rebalance, and a static member
// (group.instance.id) restarting within its session timeout causes no rebalance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { tempDataDir } from './process-helpers.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = 'test/broker/python/groups_member.py';
const hasModule = (m: string) => spawnSync(PYTHON, ['-c', `import ${m}`]).status === 0;
function skipReason(module: string, pkg: string): string | false {
  if (hasModule(module)) return false;
  if (process.env.CI) throw new Error(`${pkg} is missing in CI (apt-get install -y ${pkg})`);
  return `${pkg} is not installed (apt-get install -y ${pkg})`;
}

interface Member {
  child: ChildProcess;
  assignment: number[];
  assignments: number[][];
  revoked: number[][];
  seen: [number, number][];
  closed: boolean;
  stderr: string;
}

function startMember(client: string, bootstrap: string, topic: string, group: string, assignor = '-', instanceId?: string): Member {
  const args = [SCRIPT, client, bootstrap, topic, group, '100', assignor, ...(instanceId ? [instanceId] : [])];
  const child = spawn(PYTHON, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const m: Member = { child, assignment: [], assignments: [], revoked: [], seen: [], closed: false, stderr: '' };
  let buffered = '';
  child.stdout!.on('data', (d) => {
    buffered += d;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const e = JSON.parse(line);
      if (e.e === 'assignment') { m.assignment = e.partitions; m.assignments.push(e.partitions); }
      else if (e.e === 'revoked') m.revoked.push(e.partitions);
      else if (e.e === 'records') m.seen.push(...e.items);
      else if (e.e === 'closed') m.closed = true;
    }
  });
  child.stderr!.on('data', (d) => { m.stderr += d; });
  return m;
}

async function waitFor(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const covers = (members: Member[], partitions: number) => {
  const all = members.flatMap((m) => m.assignment).sort((a, b) => a - b);
  return all.length === partitions && all.every((p, i) => p === i) && members.every((m) => m.assignment.length > 0);
};

async function withBroker(fn: (server: ServerHandle, kafka: Kafka, bootstrap: string) => Promise<void>): Promise<void> {
  const config = parseBrokerConfig({ 'node.id': '1', 'group.initial.rebalance.delay.ms': '0' });
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config, dataDir: tempDataDir() });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const kafka = new Kafka({ clientId: 'groups-py-test', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  try {
    await fn(server, kafka, bootstrap);
  } finally {
    await server.close();
  }
}

async function produce(kafka: Kafka, topic: string, partitions: number, count: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }] });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  for (let i = 0; i < count; i += 5000) {
    await producer.send({ topic, messages: Array.from({ length: Math.min(5000, count - i) }, (_, j) => ({ partition: (i + j) % partitions, value: 'x' })) });
  }
  await producer.disconnect();
}

async function stopAll(members: Member[]): Promise<void> {
  for (const m of members) if (m.child.exitCode === null && m.child.signalCode === null) m.child.stdin!.end();
  await waitFor('members to close', () => members.every((m) => m.child.exitCode !== null || m.child.signalCode !== null), 30_000).catch(() => {});
  for (const m of members) if (m.child.exitCode === null && m.child.signalCode === null) m.child.kill('SIGKILL');
}

for (const [name, client, module, pkg, records] of [
  ['confluent-kafka-python', 'confluent', 'confluent_kafka', 'python3-confluent-kafka', 100_002],
  ['kafka-python', 'kafka-python', 'kafka', 'python3-kafka', 30_000],
] as const) {
  test(`${name}: three members split six partitions; a killed member is replaced; every record is processed and committed`, { skip: skipReason(module, pkg), timeout: 180_000 }, async () => {
    await withBroker(async (_server, kafka, bootstrap) => {
      const topic = `py-${client}`;
      const group = `g-${client}`;
      await produce(kafka, topic, 6, records);
      const members = [0, 1, 2].map(() => startMember(client, bootstrap, topic, group));
      try {
        await waitFor('three members sharing six partitions', () => covers(members, 6), 60_000);
        assert.ok(members.every((m) => m.assignment.length === 2), `assignments ${members.map((m) => m.assignment.join(','))}`);
        await waitFor('some progress', () => members.reduce((n, m) => n + m.seen.length, 0) > 0);
        const victim = members[2]!;
        const killedAt = Date.now();
        victim.child.kill('SIGKILL');
        const survivors = members.slice(0, 2);
        await waitFor('the survivors to take over every partition', () => covers(survivors, 6), 30_000);
        const replacedInMs = Date.now() - killedAt;
        assert.ok(replacedInMs < 6000 + 10_000, `replaced in ${replacedInMs} ms`);
        const processed = () => {
          const per = new Map<number, Set<number>>();
          for (const m of members) for (const [p, o] of m.seen) { let s = per.get(p); if (!s) per.set(p, s = new Set()); s.add(o); }
          return per;
        };
        const perPartition = records / 6;
        await waitFor('every record processed', () => [...processed().values()].reduce((n, s) => n + s.size, 0) === records && processed().size === 6, 120_000);
        for (const [p, offsets] of processed()) assert.equal(offsets.size, perPartition, `partition ${p}`);
        await stopAll(survivors);
        const admin = kafka.admin();
        await admin.connect();
        const committed = await admin.fetchOffsets({ groupId: group, topics: [topic] });
        await admin.disconnect();
        assert.deepEqual(committed[0]!.partitions.map((p) => Number(p.offset)), Array(6).fill(perPartition), 'committed offsets end at the log end');
      } finally {
        await stopAll(members);
      }
    });
  });
}

test('confluent-kafka-python cooperative-sticky: a joining member takes partitions without the others losing theirs', { skip: skipReason('confluent_kafka', 'python3-confluent-kafka'), timeout: 120_000 }, async () => {
  await withBroker(async (_server, kafka, bootstrap) => {
    await produce(kafka, 'coop', 6, 600);
    const a = startMember('confluent', bootstrap, 'coop', 'g-coop', 'cooperative-sticky');
    const members = [a];
    try {
      await waitFor('a to own all six', () => a.assignment.length === 6);
      const b = startMember('confluent', bootstrap, 'coop', 'g-coop', 'cooperative-sticky');
      members.push(b);
      await waitFor('a balanced split', () => covers(members, 6) && a.assignment.length === 3 && b.assignment.length === 3, 60_000);
      // Incremental: a only ever gave up the three partitions b took; it never lost the others.
      assert.deepEqual(a.revoked.flat().sort(), [...b.assignment].sort());
      assert.ok(a.assignment.every((p) => a.assignments.every((seen) => seen.includes(p))), 'a kept its remaining partitions throughout');
    } finally {
      await stopAll(members);
    }
  });
});

test('confluent-kafka-python static member: a restart with the same group.instance.id does not rebalance the group', { skip: skipReason('confluent_kafka', 'python3-confluent-kafka'), timeout: 120_000 }, async () => {
  await withBroker(async (server, kafka, bootstrap) => {
    await produce(kafka, 'static', 4, 400);
    const a = startMember('confluent', bootstrap, 'static', 'g-static', '-', 'member-a');
    let b = startMember('confluent', bootstrap, 'static', 'g-static', '-', 'member-b');
    const members = [a, b];
    try {
      await waitFor('two members sharing four partitions', () => covers([a, b], 4), 60_000);
      const generation = () => (server.broker!.groups.shardFor('g-static')!.groups.get('g-static') as { generationId: number }).generationId;
      const before = generation();
      const revokedBefore = a.revoked.length;
      const assignmentOfB = [...b.assignment];
      // librdkafka does not leave the group on close when it is a static member.
      b.child.stdin!.end();
      await waitFor('b to close', () => b.child.exitCode !== null);
      b = startMember('confluent', bootstrap, 'static', 'g-static', '-', 'member-b');
      members.push(b);
      await waitFor('b to be back', () => b.assignment.length > 0, 30_000);
      assert.deepEqual(b.assignment, assignmentOfB, 'same partitions');
      assert.equal(generation(), before, 'no new generation');
      assert.equal(a.revoked.length, revokedBefore, 'a never lost its partitions');
    } finally {
      await stopAll(members);
    }
  });
});
