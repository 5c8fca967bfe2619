// Share groups' administration and the share-partition leader's wake-ups, spoken over the wire
// with the share APIs as a share consumer would (ShareGroupHeartbeat, ShareFetch,
// ShareAcknowledge): DescribeShareGroupOffsets (start offsets and lag), AlterShareGroupOffsets and
// DeleteShareGroupOffsets on an empty group, DeleteGroups deleting the share-partitions' state, a
// member closing its share session giving its records back at once (leaving the group alone does not), a waiting ShareFetch woken by a release, and
// share.auto.offset.reset=by_duration, and the dead-letter topic (KIP-1191).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { tempDataDir, within } from './process-helpers.js';
import { ACCEPT, Member, REJECT, RELEASE, offsetsOf } from './share-member.js';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ClusterClient, type BrokerConnection } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { iterateBatches, readRecords } from '../../src/records/index.js';
import { nodeMetrics } from '../../src/http/index.js';

const bootstrapOf = (server: ServerHandle) => `127.0.0.1:${server.listeners[0]!.port}`;

async function withBroker(fn: (server: ServerHandle, c: BrokerConnection, client: ClusterClient) => Promise<void>): Promise<void> {
  const config = parseBrokerConfig({ 'node.id': '1', 'share.coordinator.state.topic.num.partitions': '2', 'offsets.topic.num.partitions': '2' });
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config, dataDir: tempDataDir() });
  const client = new ClusterClient({ bootstrap: bootstrapOf(server), clientId: 'share-admin-test' });
  try {
    await fn(server, await client.any(), client);
  } finally {
    client.close();
    await server.close();
  }
}

async function produce(server: ServerHandle, topic: string, messages: { value: string; timestamp?: string }[], configEntries: { name: string; value: string }[] = []): Promise<void> {
  const kafka = new Kafka({ clientId: 'share-admin-test', brokers: [bootstrapOf(server)], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1, configEntries }] }).catch(() => false);
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  for (const m of messages) await producer.send({ topic, messages: [m] });
  await producer.disconnect();
}

async function setGroupConfig(c: BrokerConnection, group: string, name: string, value: string): Promise<void> {
  const r = await c.send(ApiKey.IncrementalAlterConfigs, 1, { resources: [{ resourceType: 32, resourceName: group, configs: [{ name, configOperation: 0, value }] }], validateOnly: false });
  assert.equal(r.responses[0].errorCode, 0);
}

async function describeOffsets(c: BrokerConnection, group: string, topics: { topicName: string; partitions: number[] }[] | null = null) {
  const r = await c.send(ApiKey.DescribeShareGroupOffsets, 1, { groups: [{ groupId: group, topics }] });
  return r.groups[0];
}

async function topicIdOf(client: ClusterClient, topic: string): Promise<string> {
  return (await client.metadata([topic]))[0]!.topicId;
}

test('DescribeShareGroupOffsets: start offset and lag; a closing member\'s records are released at once; offsets altered on the empty group, then deleted, then the group', { timeout: 60_000 }, async () => {
  await withBroker(async (server, c, client) => {
    const group = 'admin-g';
    await setGroupConfig(c, group, 'share.auto.offset.reset', 'earliest');
    await produce(server, 'admin-t', Array.from({ length: 10 }, (_, i) => ({ value: `v${i}` })));
    const topicId = await topicIdOf(client, 'admin-t');
    const a = new Member(c, group, 'admin-t', topicId);
    await a.join();
    assert.deepEqual(offsetsOf(await a.fetchSome()), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(await a.acknowledge(0, 3, ACCEPT), 0);
    const scraped = await nodeMetrics(server).metrics();
    assert.match(scraped, /kafka_sharegroup_lag\{group="admin-g",topic="admin-t",partition="0"\} 6\n/);
    assert.match(scraped, /kafka_server_share_partition_metrics_acquired_records\{group="admin-g",topic="admin-t",partition="0"\} 6\n/);

    const described = await describeOffsets(c, group);
    assert.equal(described.errorCode, 0);
    assert.deepEqual(described.topics.map((t: any) => [t.topicName, t.partitions.map((p: any) => [p.partitionIndex, Number(p.startOffset), Number(p.lag)])]), [['admin-t', [[0, 4, 6]]]]);
    const refused = await c.send(ApiKey.AlterShareGroupOffsets, 0, { groupId: group, topics: [{ topicName: 'admin-t', partitions: [{ partitionIndex: 0, startOffset: 8n }] }] });
    assert.equal(refused.errorCode, ErrorCode.NON_EMPTY_GROUP, 'a group with members keeps its offsets');

    // Leaving the group alone gives nothing back (the consumer's final acknowledgements may still be
    // on their way); closing the share session gives the six records back now, long before their
    // 30 s lock would run out.
    await a.leave();
    const b = new Member(c, group, 'admin-t', topicId);
    await b.join();
    assert.deepEqual(await b.fetch(0), [], 'still held by the member that left');
    await a.close();
    const again = await b.fetchSome();
    assert.deepEqual(offsetsOf(again), [4, 5, 6, 7, 8, 9]);
    assert.ok(again.every((r) => r.deliveryCount === 2));
    await b.close();
    await b.leave();

    const altered = await c.send(ApiKey.AlterShareGroupOffsets, 0, { groupId: group, topics: [{ topicName: 'admin-t', partitions: [{ partitionIndex: 0, startOffset: 8n }] }] });
    assert.equal(altered.errorCode, 0);
    assert.deepEqual(altered.responses.map((t: any) => [t.topicName, t.partitions.map((p: any) => p.errorCode)]), [['admin-t', [0]]]);
    assert.equal(Number((await describeOffsets(c, group)).topics[0].partitions[0].startOffset), 8);
    const d = new Member(c, group, 'admin-t', topicId);
    await d.join();
    const fresh = await d.fetchSome();
    assert.deepEqual(offsetsOf(fresh), [8, 9], 'the reset start offset, over what the leader held before');
    assert.ok(fresh.every((r) => r.deliveryCount === 1));
    await d.close();
    await d.leave();

    const deleted = await c.send(ApiKey.DeleteShareGroupOffsets, 0, { groupId: group, topics: [{ topicName: 'admin-t' }, { topicName: 'nope' }] });
    assert.equal(deleted.errorCode, 0);
    assert.deepEqual(deleted.responses.map((t: any) => [t.topicName, t.errorCode]), [['admin-t', 0], ['nope', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
    assert.deepEqual((await describeOffsets(c, group)).topics, [], 'the group has no share-partitions left');
    const key = { groupId: group, topicId, partition: 0 };
    assert.equal((await server.broker!.share.persister.read(key, -1)).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);

    // A member brings the topic back; deleting the group deletes its state again.
    const e = new Member(c, group, 'admin-t', topicId);
    await e.join();
    assert.ok((await e.fetchSome()).length > 0);
    await e.close();
    await e.leave();
    assert.equal((await server.broker!.share.persister.read(key, -1)).errorCode, 0);
    const gone = await c.send(ApiKey.DeleteGroups, 2, { groupsNames: [group] });
    assert.deepEqual(gone.results.map((r: any) => r.errorCode), [0]);
    assert.equal((await server.broker!.share.persister.read(key, -1)).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal((await describeOffsets(c, group)).errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  });
});

test('a ShareFetch waiting for records wakes when another member releases some, not at its MaxWaitMs', { timeout: 60_000 }, async () => {
  await withBroker(async (server, c, client) => {
    const group = 'wake-g';
    await setGroupConfig(c, group, 'share.auto.offset.reset', 'earliest');
    await produce(server, 'wake-t', [{ value: 'only' }]);
    const topicId = await topicIdOf(client, 'wake-t');
    const holder = new Member(c, group, 'wake-t', topicId);
    const own = new ClusterClient({ bootstrap: bootstrapOf(server), clientId: 'waiter' });
    try {
      const waiter = new Member(await own.any(), group, 'wake-t', topicId);
      await holder.join();
      await waiter.join();
      assert.deepEqual(offsetsOf(await holder.fetchSome()), [0]);
      assert.deepEqual(await waiter.fetch(0), [], 'the waiter opens its session with nothing to take');
      // MaxWaitMs far above any delay a loaded machine adds: answered well before it, the waiter was woken.
      const maxWaitMs = 40_000;
      const started = Date.now();
      const waiting = waiter.fetch(maxWaitMs);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await holder.acknowledge(0, 0, RELEASE), 0);
      const got = await within(maxWaitMs / 2, `the waiting ShareFetch (MaxWaitMs ${maxWaitMs}) to be woken by the release`, waiting);
      assert.deepEqual(got, [{ firstOffset: 0, lastOffset: 0, deliveryCount: 2 }]);
      assert.ok(Date.now() - started < maxWaitMs / 2, `woken after ${Date.now() - started} ms`);
    } finally {
      own.close();
    }
  });
});

test('share.auto.offset.reset=by_duration:PT1H starts a share-partition at the first record of the last hour', { timeout: 60_000 }, async () => {
  await withBroker(async (server, c, client) => {
    const group = 'duration-g';
    await setGroupConfig(c, group, 'share.auto.offset.reset', 'by_duration:PT1H');
    const old = String(Date.now() - 3 * 3600_000);
    await produce(server, 'duration-t', [...['a', 'b', 'c'].map((value) => ({ value, timestamp: old })), { value: 'd' }, { value: 'e' }]);
    const m = new Member(c, group, 'duration-t', await topicIdOf(client, 'duration-t'));
    await m.join();
    assert.deepEqual(offsetsOf(await m.fetchSome()), [3, 4]);
  });
});

/** Every record of partition 0 of `topic` on this node, with its headers as text. */
async function readAll(server: ServerHandle, topic: string) {
  const [r] = await server.broker!.replicaManager.fetch({ maxBytes: 1 << 20, isolationLevel: 0, maxWaitMs: 0, minBytes: 0, partitions: [{ topic, partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }] });
  const out: { key: string | null; value: string | null; headers: Record<string, string> }[] = [];
  for (const b of iterateBatches(r!.records ?? Buffer.alloc(0))) {
    for (const x of await readRecords(b)) {
      out.push({ key: x.key?.toString() ?? null, value: x.value?.toString() ?? null, headers: Object.fromEntries(x.headers.map((h) => [h.key, h.value?.toString() ?? ''])) });
    }
  }
  return out;
}

test('the dead-letter topic gets a rejected record and one archived at the delivery limit, with headers naming the group, where it was, why and how often it was delivered', { timeout: 60_000 }, async () => {
  await withBroker(async (server, c, client) => {
    const group = 'dlq-g';
    for (const [name, value] of [['share.auto.offset.reset', 'earliest'], ['share.delivery.count.limit', '2'], ['errors.deadletterqueue.topic.name', 'dlq.work'],
      ['errors.deadletterqueue.copy.record.enable', 'true']]) await setGroupConfig(c, group, name!, value!);
    // KIP-1191: the dead-letter topic opts in, and is named with errors.deadletterqueue.topic.name.prefix (dlq.).
    await produce(server, 'dlq.work', [], [{ name: 'errors.deadletterqueue.group.enable', value: 'true' }]);
    await produce(server, 'work', [{ value: 'good' }, { value: 'bad' }, { value: 'flaky' }]);
    const m = new Member(c, group, 'work', await topicIdOf(client, 'work'));
    await m.join();
    assert.deepEqual(offsetsOf(await m.fetchSome()), [0, 1, 2]);
    assert.equal(await m.acknowledge(0, 0, ACCEPT), 0);
    assert.equal(await m.acknowledge(1, 1, REJECT), 0);
    assert.equal(await m.acknowledge(2, 2, RELEASE), 0);
    assert.deepEqual(await m.fetchSome(), [{ firstOffset: 2, lastOffset: 2, deliveryCount: 2 }]);
    assert.equal(await m.acknowledge(2, 2, RELEASE), 0, 'released at its last delivery: archived');
    const letters = await readAll(server, 'dlq.work');
    assert.deepEqual(letters.map((l) => [l.value, l.headers['__dlq.errors.group.id'], l.headers['__dlq.errors.topic'], l.headers['__dlq.errors.partition'],
      l.headers['__dlq.errors.offset'], l.headers['__dlq.errors.reason'], l.headers['__dlq.errors.delivery.count']]), [
      ['bad', group, 'work', '0', '1', 'rejected', '1'],
      ['flaky', group, 'work', '0', '2', 'delivery_limit', '2'],
    ]);
    const metrics = await nodeMetrics(server).metrics();
    assert.match(metrics, /logline_share_dead_letters_written_total 2\n/);
    assert.match(metrics, /kafka_server_share_partition_metrics_records_archived_total 2\n/);
    assert.match(metrics, /kafka_server_share_group_metrics_records_acquired_total 4\n/);
    assert.match(metrics, /kafka_sharegroup_lag\{group="dlq-g",topic="work",partition="0"\} 0\n/);
    assert.match(metrics, /kafka_sharegroup_start_offset\{group="dlq-g",topic="work",partition="0"\} 3\n/);
  });
});

test('KIP-1191: no dead letters go to a topic that has not opted in with errors.deadletterqueue.group.enable, or whose name lacks errors.deadletterqueue.topic.name.prefix; the record is archived all the same', { timeout: 60_000 }, async () => {
  await withBroker(async (server, c, client) => {
    await produce(server, 'dlq.closed', []);
    await produce(server, 'orders-critical', [], [{ name: 'errors.deadletterqueue.group.enable', value: 'true' }]);
    await produce(server, 'jobs', [{ value: 'poison' }]);
    const topicId = await topicIdOf(client, 'jobs');
    for (const [group, dlq] of [['g-closed', 'dlq.closed'], ['g-unprefixed', 'orders-critical']] as const) {
      for (const [name, value] of [['share.auto.offset.reset', 'earliest'], ['errors.deadletterqueue.topic.name', dlq]]) await setGroupConfig(c, group, name!, value!);
      const m = new Member(c, group, 'jobs', topicId);
      await m.join();
      assert.deepEqual(offsetsOf(await m.fetchSome()), [0]);
      assert.equal(await m.acknowledge(0, 0, REJECT), 0, `${group}: the reject is applied`);
      assert.deepEqual(await m.fetch(0), [], `${group}: the rejected record is archived, not redelivered`);
    }
    assert.deepEqual(await readAll(server, 'dlq.closed'), [], 'a topic without the opt-in gets nothing');
    assert.deepEqual(await readAll(server, 'orders-critical'), [], 'a topic named without the prefix gets nothing, even opted in');
    const metrics = await nodeMetrics(server).metrics();
    assert.match(metrics, /logline_share_dead_letters_failed_total 2\n/);
    assert.match(metrics, /logline_share_dead_letters_written_total 0\n/);
  });
});
