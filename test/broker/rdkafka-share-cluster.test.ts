// Share groups across brokers (KIP-932) with librdkafka 2.15.1's share consumer, in a 3-node
// cluster (startCluster, RF 3): the share group's state lives in a `__share_group_state`
// partition led by a broker other than the share-partition leader, so every state write goes
// over the wire (WriteShareGroupState) and a new leader reads it back (ReadShareGroupState). Then
// the share-partition leader's broker is killed with records in flight: what was accepted is
// never delivered again, and what was in flight comes back at once from the new leader with its
// delivery count kept (not after the lock, which is longer than the test waits).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { startCluster, type ClusterHandle } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { RecordState, type SharePartitionKey } from '../../src/coordinator/index.js';
import { until, within } from './process-helpers.js';
import { ShareConsumer, skip, type Delivery } from './rdkafka-share-helpers.js';

const TOPIC = 'queue';
/** Longer than the test waits for the redelivery: only the failover can bring held records back. */
const LOCK_MS = 120_000;
const CONFIG = {
  'share.coordinator.state.topic.num.partitions': '3', 'share.coordinator.state.topic.replication.factor': '3', 'offsets.topic.num.partitions': '3',
  'group.share.record.lock.duration.ms': String(LOCK_MS),
  'group.share.heartbeat.interval.ms': '500', 'group.share.min.heartbeat.interval.ms': '100', 'group.share.session.timeout.ms': '20000',
  'min.insync.replicas': '2',
};

const leaderOf = async (client: ClusterClient, topic: string, partition = 0) =>
  (await client.metadata([topic])).find((t) => t.name === topic)!.partitions.find((p) => p.partition === partition)?.leader ?? -1;

async function produce(cluster: ClusterHandle, values: string[]): Promise<void> {
  const kafka = new Kafka({ clientId: 'share-cluster-test', brokers: cluster.bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 200 } });
  const producer = kafka.producer();
  await producer.connect();
  // Batches of five: a share-partition acquires whole batches, so one batch of all would go to one consumer.
  for (let i = 0; i < values.length; i += 5) await producer.send({ topic: TOPIC, acks: -1, messages: values.slice(i, i + 5).map((value) => ({ value })) });
  await producer.disconnect();
}

/** The share-partition's state as its share coordinator on node `nodeId` holds it (read without fencing anyone). */
async function stateOf(cluster: ClusterHandle, nodeId: number, k: SharePartitionKey) {
  const r = await cluster.nodes[nodeId - 1]!.server!.broker!.share.coordinator.read(k, -1);
  assert.equal(r.errorCode, 0);
  const count = (state: number) => (r.stateBatches ?? []).filter((b) => b.deliveryState === state).reduce((n, b) => n + b.lastOffset - b.firstOffset + 1, 0);
  return { startOffset: r.startOffset!, acknowledged: count(RecordState.ACKNOWLEDGED), available: count(RecordState.AVAILABLE) };
}

const values = (from: number, n: number) => Array.from({ length: n }, (_, i) => `v${from + i}`);

test('the share-partition leader killed: accepted records never come back, in-flight ones come back from the new leader with their delivery count', { skip, timeout: 240_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3, config: CONFIG }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap, clientId: 'share-cluster-admin' });
  const consumers: ShareConsumer[] = [];
  try {
    const c = await client.any();
    const created = await c.send(ApiKey.CreateTopics, 5, { topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 3, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false });
    assert.equal(created.topics[0].errorCode, 0);
    const leader = await until(30_000, 'a leader for the topic', async () => { const l = await leaderOf(client, TOPIC); return l > 0 ? l : undefined; });
    const topicId = (await client.metadata([TOPIC]))[0]!.topicId;
    const anyBroker = cluster.nodes[0]!.server!.broker!;
    assert.equal(await anyBroker.ensureShareStateTopic(), 0);
    // A group whose state partition another broker leads: every state call goes over the wire.
    let group = '';
    let stateLeader = -1;
    for (let i = 0; stateLeader < 0 || stateLeader === leader; i++) {
      group = `workers-${i}`;
      const partition = anyBroker.share.coordinator.partitionFor({ groupId: group, topicId, partition: 0 });
      stateLeader = await until(30_000, 'a leader for the state partition', async () => { const l = await leaderOf(client, '__share_group_state', partition); return l > 0 ? l : undefined; });
    }
    const key = { groupId: group, topicId, partition: 0 };
    const set = await c.send(ApiKey.IncrementalAlterConfigs, 1, {
      resources: [{ resourceType: 32, resourceName: group, configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' }] }], validateOnly: false,
    });
    assert.equal(set.responses[0].errorCode, 0);
    await produce(cluster, values(0, 100));

    // One consumer takes ten records and holds them; two others split and accept the rest.
    const holder = new ShareConsumer(cluster.bootstrap, group, TOPIC, ['action=hold', 'max=10', 'rd.max.poll.records=10']);
    consumers.push(holder);
    await holder.waitFor('the holder to hold ten records', () => holder.lines.some((l) => l.startsWith('HELD')), 60_000);
    const workers = [0, 1].map(() => new ShareConsumer(cluster.bootstrap, group, TOPIC, ['seconds=200', 'rd.max.poll.records=10']));
    consumers.push(...workers);
    const delivered = () => workers.flatMap((w) => w.records);
    await holder.waitFor('the workers to accept the other ninety', async () => delivered().length >= 90 && (await stateOf(cluster, stateLeader, key)).acknowledged >= 90, 60_000);
    const before = await stateOf(cluster, stateLeader, key);
    assert.deepEqual([before.acknowledged, before.available], [90, holder.records.length], 'the held records are written as available (in flight), the rest as acknowledged');
    // How the ninety split between the two workers is the consumers' timing (under load the first
    // to join can take them all before the second is assigned); only that each came once matters.
    assert.equal(new Set(delivered().map((r) => r.offset)).size, delivered().length, `each of the ninety delivered once (${workers.map((w) => w.records.length)})`);

    const killedAt = Date.now();
    await cluster.nodes[leader - 1]!.kill();
    const newLeader = await until(60_000, 'a new leader', async () => { const l = await leaderOf(client, TOPIC); return l > 0 && l !== leader ? l : undefined; });
    assert.notEqual(newLeader, leader);
    await produce(cluster, values(100, 20));
    const held = new Set(holder.records.map((r) => r.offset));
    await holder.waitFor('the held records and the new ones to be delivered', () => {
      const got = new Set(delivered().map((r) => r.offset));
      return [...held].every((o) => got.has(o)) && values(100, 20).every((_, i) => got.has(100 + i));
    }, 90_000);
    assert.ok(Date.now() - killedAt < LOCK_MS, 'redelivered by the new leader, not by a lock running out');

    const all: Delivery[] = delivered();
    const byOffset = new Map<number, Delivery[]>();
    for (const r of all) byOffset.set(r.offset, [...byOffset.get(r.offset) ?? [], r]);
    for (const [offset, ds] of byOffset) {
      if (held.has(offset)) assert.deepEqual(ds.map((d) => d.deliveryCount), [2], `held offset ${offset}: delivered once more, its count kept`);
      else assert.deepEqual(ds.map((d) => d.deliveryCount), [1], `offset ${offset}: accepted once, never redelivered`);
    }
    assert.equal(byOffset.size, 120);
    await holder.waitFor('every record accepted', async () => (await stateOf(cluster, stateLeader, key)).startOffset === 120, 30_000);
  } finally {
    for (const x of consumers) x.kill();
    client.close();
    await cluster.close();
  }
});
