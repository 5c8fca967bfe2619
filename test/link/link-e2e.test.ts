// Mirror topics that keep offsets (issue 35, part 2), end to end: clusters A (source) and B
// (target) are single-node `logline server` processes; `logline link create/mirror` on B makes
// `orders` a mirror of A's. kafkajs (and kcat, when installed) write to A continuously; B is
// SIGKILLed mid-mirroring and restarted. Afterwards B holds every record A acknowledged at the
// same offsets with the same keys, values, headers and timestamps; produce to B's mirror is
// refused with INVALID_REQUEST and a message; a group's offsets committed on A are on B as they
// are and a kafkajs consumer there resumes at them; `logline link promote` makes the topic
// writable, continuing at the source's offsets. LOGLINE_LINK_KILL_ROUNDS: how often B is killed (1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { BrokerConnection, Cluster, ClusterClient, commitPositions, committedPositions } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';
import { eventually, hasKcat, kcatWrites, readAll } from '../mirror/helpers.js';
import { cli, sourceAndTarget, ends, produceUntil, sleep, view } from './helpers.js';

const ROUNDS = Number(process.env.LOGLINE_LINK_KILL_ROUNDS ?? '1');
const ordersEnds = (bootstrap: string) => ends(bootstrap, 'orders', 2);

test('a mirror topic holds the source\'s records at the same offsets across a SIGKILL of the target; produce refused; group offsets as they are; promote', { timeout: 240_000 }, async (t) => {
  const { a, b } = await sourceAndTarget(t);
  const aClient = new ClusterClient({ bootstrap: a.bootstrap });
  t.after(() => aClient.close());
  const created = await aClient.admin(ApiKey.CreateTopics, { topics: [
    { name: 'orders', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] },
    { name: 'audit', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] },
    { name: 'ledger', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] },
  ], timeoutMs: 30_000, validateOnly: false }, 7);
  assert.deepEqual(created.topics.map((x: { errorCode: number }) => x.errorCode), [0, 0, 0]);
  await aClient.retrying(() => aClient.topic('orders'));

  assert.match(await cli(['link', 'create', 'dr', '--source', a.bootstrap, '-b', b.bootstrap]), /created link dr/);
  const mirroring = await cli(['link', 'mirror', 'dr', 'orders', '--topics', 'audit,ledger', '-b', b.bootstrap]);
  assert.match(mirroring, /mirroring orders \(2 partition\(s\)\) from link dr/);
  assert.match(mirroring, /mirroring audit \(1 partition\(s\)\) from link dr/);
  assert.match(await cli(['link', 'list', '-b', b.bootstrap]), /audit\s+dr\s*\nledger\s+dr\s*\norders\s+dr/);

  let stop = false;
  const producing = produceUntil(a.bootstrap, 'orders', 2, () => stop);
  const kcat = hasKcat ? kcatWrites(a.bootstrap, 'orders', 300, 'rd') : Promise.resolve([]);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      await eventually('B to mirror some records', 60_000, async () => (await ordersEnds(b.bootstrap).catch(() => [0, 0])).some((e) => e > 20 * (round + 1)));
      await b.kill();
      await sleep(500);
      await b.start();
    }
    await eventually('more records mirrored after the restart', 60_000, async () => (await ordersEnds(b.bootstrap).catch(() => [0, 0])).reduce((x, y) => x + y, 0) > 100);
  } finally {
    stop = true;
  }
  const acknowledged = await producing;
  const kcatSent = await kcat;
  assert.ok(acknowledged.length > 0, 'kafkajs wrote to A');

  // Caught up: the status shows no lag once A is quiet.
  await eventually('B to catch up with A', 60_000, async () => {
    const status = JSON.parse(await cli(['link', 'status', 'orders', '--json', '-b', b.bootstrap])) as { partition: number; lag: number; sourceHighWatermark: number; targetEnd: number }[];
    return status.length === 2 && status.every((s) => s.lag === 0 && s.sourceHighWatermark === s.targetEnd);
  });
  // The target's HTTP listener shows each mirror partition it leads, and /metrics the lag.
  await eventually('/v1/links on B to show both partitions caught up', 30_000, async () => {
    const body = await (await fetch(`${b.http}/v1/links`)).json() as { partitions: { link: string; topic: string; partition: number; sourceHighWatermark: number; logEndOffset: number }[] };
    const orders = body.partitions.filter((p) => p.topic === 'orders');
    return body.partitions.length === 4 && orders.length === 2 && orders.every((p) => p.link === 'dr' && p.topic === 'orders' && p.sourceHighWatermark === p.logEndOffset && p.logEndOffset > 0);
  });
  const metrics = await (await fetch(`${b.http}/metrics`)).text();
  assert.match(metrics, /logline_link_lag_records\{link="dr",topic="orders",partition="0"\} 0/);
  const onA = await readAll(a.bootstrap, 'orders', 2);
  const onB = await readAll(b.bootstrap, 'orders', 2);
  for (const p of [0, 1]) assert.deepEqual(view(onB.get(p)!), view(onA.get(p)!), `partition ${p}: same offsets, timestamps, keys, values, headers`);
  const mirrored = new Set([...onB.values()].flat().map((r) => r.value?.toString()));
  const missing = [...acknowledged, ...kcatSent.map((s) => s.value)].filter((v) => !mirrored.has(v));
  assert.deepEqual(missing.slice(0, 10), [], `${missing.length} acknowledged record(s) missing on B`);

  // B's leader epochs moved with its restarts, but the mirror's epochs are A's: B answers
  // OffsetForLeaderEpoch for the epoch of the last batch as A does (else a consumer validating its
  // position on B, KIP-320, would see a truncation that never happened).
  const epochEnd = async (bootstrap: string, partition: number, epoch: number) => {
    const client = new ClusterClient({ bootstrap });
    try {
      const c = await client.leaderFor('orders', partition);
      const r = await c.send(ApiKey.OffsetForLeaderEpoch, 4, { replicaId: -1, topics: [{ topic: 'orders', partitions: [{ partition, currentLeaderEpoch: -1, leaderEpoch: epoch }] }] });
      const e = r.topics[0].partitions[0];
      assert.equal(e.errorCode, 0);
      return `${e.leaderEpoch}@${e.endOffset}`;
    } finally {
      client.close();
    }
  };
  for (const p of [0, 1]) {
    const epoch = (await aClient.topic('orders')).partitions[p]!.leaderEpoch;
    assert.equal(await epochEnd(b.bootstrap, p, epoch), await epochEnd(a.bootstrap, p, epoch), `partition ${p}: epoch ${epoch}'s end on B as on A`);
  }

  // Produce to the mirror: refused, with a message naming the link.
  const conn = await BrokerConnection.open({ host: '127.0.0.1', port: b.port });
  try {
    const records = await buildRecordBatch({ records: [{ key: Buffer.from('x'), value: Buffer.from('y') }] });
    const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5000, topicData: [{ name: 'orders', partitionData: [{ index: 0, records }] }] });
    const pr = r.responses[0].partitionResponses[0];
    assert.equal(pr.errorCode, ErrorCode.INVALID_REQUEST);
    assert.match(pr.errorMessage, /read-only mirror topic of cluster link dr/);
  } finally {
    conn.close();
  }
  const kafka = new Kafka({ brokers: [b.bootstrap], clientId: 'link-e2e-b', logLevel: logLevel.NOTHING, retry: { retries: 0 } });
  const refused = kafka.producer({ allowAutoTopicCreation: false });
  await refused.connect();
  await assert.rejects(refused.send({ topic: 'orders', messages: [{ value: 'no' }], acks: -1 }), (e: any) => e.type === 'INVALID_REQUEST' || /INVALID_REQUEST|Invalid request/i.test(String(e?.cause?.type ?? e?.message)));
  await refused.disconnect();

  // A group committed on A: B has the same offsets, and a consumer there starts at them.
  const aEnds = await ordersEnds(a.bootstrap);
  const committedOnA = new Map([[0, Math.floor(aEnds[0]! / 2)], [1, Math.floor(aEnds[1]! / 3)]]);
  const aCluster = new Cluster({ bootstrap: a.bootstrap });
  const bCluster = new Cluster({ bootstrap: b.bootstrap });
  t.after(() => { aCluster.close(); bCluster.close(); });
  await commitPositions(aCluster, 'billing', 'orders', committedOnA, Date.now() + 30_000);
  await eventually('the group\'s offsets on B', 60_000, async () => {
    const onBGroup = await committedPositions(bCluster, 'billing', 'orders', Date.now() + 10_000).catch(() => new Map());
    return onBGroup.get(0) === committedOnA.get(0) && onBGroup.get(1) === committedOnA.get(1);
  });
  const consumer = kafka.consumer({ groupId: 'billing' });
  const firstOffsets = new Map<number, number>();
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: 'orders', fromBeginning: true });
    await consumer.run({ eachMessage: async ({ partition, message }) => { if (!firstOffsets.has(partition)) firstOffsets.set(partition, Number(message.offset)); } });
    await eventually('the consumer on B to read both partitions', 60_000, () => firstOffsets.size === 2);
  } finally {
    await consumer.disconnect();
  }
  assert.deepEqual([...firstOffsets].sort(), [...committedOnA].sort(), 'the consumer on B resumed at the offsets committed on A');

  // Promote: caught up, link.name cleared, the topic takes writes at the source's next offsets.
  assert.match(await cli(['link', 'promote', 'orders', '-b', b.bootstrap]), /promoted orders .*caught up with the source.*writable/);
  assert.doesNotMatch(await cli(['link', 'list', '-b', b.bootstrap]), /orders/);
  const writer = kafka.producer({ allowAutoTopicCreation: false });
  await writer.connect();
  let meta;
  for (let i = 0; ; i++) {
    try {
      [meta] = await writer.send({ topic: 'orders', messages: [{ value: 'after-promote', partition: 0 }], acks: -1 });
      break;
    } catch (e) {
      if (i >= 20) throw e;
      await sleep(250); // every broker's metadata has the promotion a moment later
    }
  }
  await writer.disconnect();
  assert.equal(Number(meta!.baseOffset), aEnds[0], 'the first record written after promotion follows the source\'s last offset');
  // A's new records no longer reach B.
  const aProducer = new Kafka({ brokers: [a.bootstrap], clientId: 'link-e2e-a', logLevel: logLevel.NOTHING }).producer();
  await aProducer.connect();
  await aProducer.send({ topic: 'orders', messages: [{ value: 'after', partition: 1 }], acks: -1 });
  await aProducer.disconnect();
  await sleep(1500);
  assert.equal((await ordersEnds(b.bootstrap))[1], aEnds[1], 'mirroring stopped at promotion');

  // With the source gone, promote goes ahead at once and says so.
  await a.kill();
  assert.match(await cli(['link', 'promote', 'audit', '-b', b.bootstrap]), /promoted audit .*the source is unreachable/);
  const auditWriter = kafka.producer({ allowAutoTopicCreation: false });
  await auditWriter.connect();
  let auditMeta;
  for (let i = 0; ; i++) {
    try {
      [auditMeta] = await auditWriter.send({ topic: 'audit', messages: [{ value: 'after-failover' }], acks: -1 });
      break;
    } catch (e) {
      if (i >= 20) throw e;
      await sleep(250);
    }
  }
  await auditWriter.disconnect();
  assert.equal(Number(auditMeta!.baseOffset), 0, 'the empty promoted topic takes writes');

  // A link removed (its LINK resource deleted) leaves its mirror topics read-only until promoted.
  const bClient = new ClusterClient({ bootstrap: b.bootstrap });
  t.after(() => bClient.close());
  const removed = await bClient.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 64, resourceName: 'dr', configs: [{ name: 'bootstrap.servers', configOperation: 1, value: null }] }], validateOnly: false }, 1);
  assert.equal(removed.responses[0].errorCode, 0, removed.responses[0].errorMessage);
  assert.match(await cli(['link', 'promote', 'ledger', '-b', b.bootstrap]), /promoted ledger .*link dr no longer exists/);
});
