// Partition reassignment in a 4-broker cluster (startCluster, one controller): under an acks=all
// producer, a partition moves off its leader onto a new broker; every acknowledged record is
// readable at its offset afterwards, the new replicas' logs are byte-identical, the removed
// replica's log is deleted. A throttled reassignment shows in ListPartitionReassignments while it
// copies, and cancelling it restores the replicas and deletes the half-copied one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import nodePath from 'node:path';
import { startCluster } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { consumeAll } from './log-reader.js';
import { within } from './process-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Cluster = Awaited<ReturnType<typeof startCluster>>;

const batch = (values: string[]) => buildRecordBatchSync({ records: values.map((v, i) => ({ key: null, value: Buffer.from(v), timestamp: 1_700_000_000_000 + i })) });

const RETRIABLE: ReadonlySet<number> = new Set([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.REQUEST_TIMED_OUT, ErrorCode.FENCED_LEADER_EPOCH]);

/** Produces one batch with acks=all to the current leader, retrying retriable errors; returns the acknowledged base offset. */
async function produceAll(client: ClusterClient, topic: string, values: string[]): Promise<number> {
  for (let attempt = 0; attempt < 500; attempt++) {
    try {
      const conn = await client.leaderFor(topic, 0);
      const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch(values) }] }] });
      const p = r.responses[0].partitionResponses[0];
      if (p.errorCode === ErrorCode.NONE) return Number(p.baseOffset);
      assert.ok(RETRIABLE.has(p.errorCode), `produce failed with error ${p.errorCode}`);
    } catch (e) {
      if (attempt > 100) throw e;
    }
    await sleep(20);
  }
  throw new Error('produce kept failing');
}

async function createTopic(client: ClusterClient, name: string, replicas: number[], configs: { name: string; value: string }[] = []): Promise<void> {
  const r = await client.admin(ApiKey.CreateTopics, {
    topics: [{ name, numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: replicas }], configs }], timeoutMs: 10_000, validateOnly: false,
  }, 7);
  assert.equal(r.topics[0].errorCode, ErrorCode.NONE);
}

async function reassign(client: ClusterClient, topic: string, replicas: number[] | null): Promise<{ errorCode: number; errorMessage: string | null }> {
  const r = await client.admin(ApiKey.AlterPartitionReassignments, { timeoutMs: 10_000, topics: [{ name: topic, partitions: [{ partitionIndex: 0, replicas }] }] }, 0);
  assert.equal(r.errorCode, ErrorCode.NONE);
  return r.responses[0].partitions[0];
}

async function listReassignments(client: ClusterClient): Promise<{ name: string; partitions: { partitionIndex: number; replicas: number[]; addingReplicas: number[]; removingReplicas: number[] }[] }[]> {
  const r = await client.admin(ApiKey.ListPartitionReassignments, { timeoutMs: 10_000, topics: null }, 0);
  assert.equal(r.errorCode, ErrorCode.NONE);
  return r.topics;
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean): Promise<void> {
  await within(timeoutMs, what, (async () => { while (!await check()) await sleep(25); })());
}

const node = (cluster: Cluster, id: number) => cluster.nodes.find((n) => n.nodeId === id)!;
const hosted = (cluster: Cluster, id: number, topic: string) => node(cluster, id).server?.broker?.replicaManager.partition(topic, 0);

/** The partition's segment bytes on a broker's disk, all segments in offset order. */
function logBytes(cluster: Cluster, id: number, topic: string): Buffer {
  const dir = nodePath.join(node(cluster, id).dataDir, `${topic}-0`);
  return Buffer.concat(readdirSync(dir).filter((f) => f.endsWith('.log')).sort().map((f) => readFileSync(nodePath.join(dir, f))));
}

test('a reassignment under acks=all load moves a partition off its leader with every acknowledged record at its offset and byte-identical replicas', { timeout: 180_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ controllers: 1, brokers: 4 }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    const [a, b, c, d] = cluster.nodes.filter((n) => n.roles.includes('broker')).map((n) => n.nodeId) as [number, number, number, number];
    await createTopic(client, 'moving', [a, b, c], [{ name: 'min.insync.replicas', value: '2' }]);
    const acked = new Map<number, string[]>();
    let n = 0;
    const produceOne = async () => {
      const values = Array.from({ length: 20 }, () => `r${n++}-${'x'.repeat(200)}`);
      acked.set(await produceAll(client, 'moving', values), values);
    };
    // Some data before the move, so the new replica has a backlog to copy.
    for (let i = 0; i < 200; i++) await produceOne();

    let producing = true;
    const producer = (async () => { while (producing) await produceOne(); })();
    await sleep(200);
    const target = [d, b, c];
    const started = await reassign(client, 'moving', target);
    assert.equal(started.errorCode, ErrorCode.NONE, started.errorMessage ?? '');
    await until('the reassignment completes', 60_000, async () => (await listReassignments(client)).length === 0);
    const ackedBefore = acked.size;
    await until('more acknowledged writes after the move', 30_000, () => acked.size >= ackedBefore + 20);
    producing = false;
    await producer;

    // The controller said it is done; the metadata of the broker asked may be a moment behind.
    await until('the metadata shows the target replicas', 10_000, async () => (await client.topic('moving')).partitions[0]!.replicas.length === target.length);
    const info = await client.topic('moving');
    assert.deepEqual(info.partitions[0]!.replicas, target);
    assert.equal(info.partitions[0]!.leader, d, 'the removed leader handed over to the first target replica');
    await until('every replica has every record', 30_000, () => target.every((id) => {
      const p = hosted(cluster, id, 'moving');
      const leader = hosted(cluster, d, 'moving')!;
      return p !== undefined && p.log.logEndOffset === leader.log.logEndOffset && p.highWatermark === leader.log.logEndOffset;
    }));

    const values = await consumeAll(client, 'moving', 0);
    for (const [base, batchValues] of acked) {
      batchValues.forEach((v, i) => assert.equal(values[base + i], v, `acknowledged record at offset ${base + i}`));
    }
    const leaderBytes = logBytes(cluster, d, 'moving');
    for (const id of [b, c]) assert.ok(logBytes(cluster, id, 'moving').equals(leaderBytes), `broker ${id}'s log is byte-identical to the new leader's`);
    await until('the removed replica deletes its log', 30_000, () => hosted(cluster, a, 'moving') === undefined && !existsSync(nodePath.join(node(cluster, a).dataDir, 'moving-0')));
  } finally {
    client.close();
    await cluster.close();
  }
});

test('a throttled reassignment is listed while it copies, and cancelling it restores the replicas and deletes the partial copy', { timeout: 180_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ controllers: 1, brokers: 4 }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    const [a, b, c, d] = cluster.nodes.filter((n) => n.roles.includes('broker')).map((n) => n.nodeId) as [number, number, number, number];
    await createTopic(client, 'slow', [a, b, c], [{ name: 'follower.replication.throttled.replicas', value: `0:${d}` }]);
    // 64 KiB/s against 2 MiB: the copy would take about 30 s.
    const alter = await client.broker(d).then((conn) => conn.send(ApiKey.IncrementalAlterConfigs, 1, {
      resources: [{ resourceType: 4, resourceName: String(d), configs: [{ name: 'follower.replication.throttled.rate', configOperation: 0, value: String(64 * 1024) }] }], validateOnly: false,
    }));
    assert.equal(alter.responses[0].errorCode, ErrorCode.NONE);
    for (let i = 0; i < 100; i++) await produceAll(client, 'slow', Array.from({ length: 20 }, (_, j) => `s${i}-${j}-${'y'.repeat(1000)}`));
    const before = (await client.topic('slow')).partitions[0]!;

    assert.equal((await reassign(client, 'slow', [d, b, c])).errorCode, ErrorCode.NONE);
    const listed = await listReassignments(client);
    assert.deepEqual(listed, [{ name: 'slow', partitions: [{ partitionIndex: 0, replicas: [d, b, c, a], addingReplicas: [d], removingReplicas: [a] }] }]);
    await until('the new replica starts copying', 20_000, () => (hosted(cluster, d, 'slow')?.log.logEndOffset ?? 0) > 0);
    const copied = hosted(cluster, d, 'slow')!.log.logEndOffset;
    assert.ok(copied < hosted(cluster, a, 'slow')!.log.logEndOffset, 'the throttled copy is still under way');

    assert.equal((await reassign(client, 'slow', null)).errorCode, ErrorCode.NONE);
    assert.deepEqual(await listReassignments(client), []);
    await until('the metadata shows the original replicas', 10_000, async () => (await client.topic('slow')).partitions[0]!.replicas.length === before.replicas.length);
    const after = (await client.topic('slow')).partitions[0]!;
    assert.deepEqual([...after.replicas].sort(), [...before.replicas].sort());
    assert.equal(after.leader, before.leader);
    await until('the cancelled replica deletes its log', 30_000, () => hosted(cluster, d, 'slow') === undefined && !existsSync(nodePath.join(node(cluster, d).dataDir, 'slow-0')));
    assert.equal((await reassign(client, 'slow', null)).errorCode, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS);
  } finally {
    client.close();
    await cluster.close();
  }
});
