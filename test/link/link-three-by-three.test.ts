// Both sides with three nodes at once (`logline server` processes): a three-node source with
// `orders` (3 partitions, replication factor 3, min.insync.replicas 2) and a three-node target
// whose mirror of it has replication factor 3, so its partitions' leaders (and link fetchers) are
// spread over the target's nodes. kafkajs writes acks=all to the source while one source broker
// and one target broker are SIGKILLed together and restarted. Then the source topic grows to 4
// partitions and changes retention.ms: the target follows. Afterwards the target holds exactly the
// source's records at the same offsets and every acknowledged one; the target nodes' /v1/links
// together cover every mirror partition; `link delete --force` stops the fetchers on every node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { ClusterClient, describeTopicConfigs } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { clusterNodeProcesses, killProcess, startClusterNodeProcess, type ClusterNodeProcess } from '../broker/process-helpers.js';
import { eventually, readAll } from '../mirror/helpers.js';
import { cli, ends, produceUntil, sleep, view } from './helpers.js';

const clusterId = () => Buffer.from(randomUUID().replace(/-/g, ''), 'hex').toString('base64url');
const bootstrapOf = (nodes: readonly ClusterNodeProcess[]) => nodes.filter((n) => n.child !== null).map((n) => `127.0.0.1:${n.brokerPort}`).join(',');
/** A node's HTTP listener as its latest start logged it. */
const httpOf = (n: ClusterNodeProcess) => [...n.log.matchAll(/http listening on (http:\/\/[^\s]+)/g)].at(-1)![1]!;
type LinksBody = { partitions: { link: string; topic: string; partition: number; sourceHighWatermark: number; logEndOffset: number }[]; links: { name: string }[] };

test('a three-node source and a three-node target at once: a broker of each SIGKILLed, the source topic grown and reconfigured, link delete on every node', { timeout: 300_000 }, async (t) => {
  const src = await clusterNodeProcesses(3, clusterId());
  const tgt = await clusterNodeProcesses(3, clusterId());
  t.after(async () => {
    if (process.env.LINK_LOG) for (const [side, n] of [...src.nodes.map((n) => ['source', n] as const), ...tgt.nodes.map((n) => ['target', n] as const)]) console.log(`--- ${side} node ${n.id}\n${n.log}`);
    for (const n of [...src.nodes, ...tgt.nodes]) if (n.child) await killProcess(n.child);
  });
  await Promise.all([...src.nodes.map((n) => startClusterNodeProcess(n, src.voters)), ...tgt.nodes.map((n) => startClusterNodeProcess(n, tgt.voters))]);
  const sourceBootstrap = bootstrapOf(src.nodes);
  const targetBootstrap = bootstrapOf(tgt.nodes);
  const source = new ClusterClient({ bootstrap: sourceBootstrap });
  const target = new ClusterClient({ bootstrap: targetBootstrap });
  t.after(() => { source.close(); target.close(); });
  await eventually('three source and three target brokers', 60_000, async () => {
    await Promise.all([source.metadata([]).catch(() => null), target.metadata([]).catch(() => null)]);
    return source.brokers.size === 3 && target.brokers.size === 3;
  });
  const created = await source.admin(ApiKey.CreateTopics, { topics: [{ name: 'orders', numPartitions: 3, replicationFactor: 3, assignments: [], configs: [{ name: 'min.insync.replicas', value: '2' }] }], timeoutMs: 30_000, validateOnly: false }, 7);
  assert.equal(created.topics[0].errorCode, 0, created.topics[0].errorMessage);
  await source.retrying(() => source.topic('orders'));

  const props = join(tgt.nodes[0]!.dir, 'link.properties');
  writeFileSync(props, 'metadata.max.age.ms=1000\ntopic.config.sync.ms=1000\n');
  await cli(['link', 'create', 'dr', '--source', sourceBootstrap, '--source-config', props, '-b', targetBootstrap]);
  await cli(['link', 'mirror', 'dr', 'orders', '--replication-factor', '3', '-b', targetBootstrap]);
  const mirror = await target.retrying(() => target.topic('orders'));
  assert.equal(new Set(mirror.partitions.map((p) => p.leader)).size, 3, 'the mirror partitions\' leaders are on three target nodes');

  let stop = false;
  const producing = produceUntil(sourceBootstrap, 'orders', 3, () => stop);
  const killedSource = src.nodes.find((n) => n.id === 2)!;
  const killedTarget = tgt.nodes.find((n) => n.id === mirror.partitions[0]!.leader)!;
  try {
    await eventually('the target to mirror some records', 60_000, async () => (await ends(targetBootstrap, 'orders', 3).catch(() => [0])).reduce((a, b) => a + b, 0) > 200);
    await Promise.all([killProcess(killedSource.child!), killProcess(killedTarget.child!)]);
    killedSource.child = null;
    killedTarget.child = null;
    const atKill = (await ends(bootstrapOf(tgt.nodes), 'orders', 3).catch(() => [0, 0, 0])).reduce((a, b) => a + b, 0);
    await eventually('the target to mirror on with a broker of each side down', 90_000, async () => (await ends(bootstrapOf(tgt.nodes), 'orders', 3).catch(() => [0])).reduce((a, b) => a + b, 0) > atKill + 200);
    await Promise.all([startClusterNodeProcess(killedSource, src.voters), startClusterNodeProcess(killedTarget, tgt.voters)]);
    const atRestart = (await ends(targetBootstrap, 'orders', 3).catch(() => [0, 0, 0])).reduce((a, b) => a + b, 0);
    await eventually('the target to mirror on after the restarts', 90_000, async () => (await ends(targetBootstrap, 'orders', 3).catch(() => [0])).reduce((a, b) => a + b, 0) > atRestart + 200);
  } finally {
    stop = true;
  }
  const acknowledged = await producing;

  // The source topic grows and changes retention.ms; the target follows.
  const grown = await source.admin(ApiKey.CreatePartitions, { topics: [{ name: 'orders', count: 4, assignments: null }], timeoutMs: 30_000, validateOnly: false }, 3);
  assert.equal(grown.results[0].errorCode, 0, grown.results[0].errorMessage);
  const altered = await source.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', configOperation: 0, value: '3600000' }] }], validateOnly: false }, 1);
  assert.equal(altered.responses[0].errorCode, 0, altered.responses[0].errorMessage);
  await eventually('the source topic with 4 partitions', 60_000, async () => (await source.metadata(['orders']).catch(() => []))[0]?.partitions.length === 4);
  // A new producer: kafkajs keeps the partition count it first saw.
  const producer = new Kafka({ brokers: sourceBootstrap.split(','), clientId: 'link-3x3', logLevel: logLevel.NOTHING }).producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    await producer.send({ topic: 'orders', acks: -1, messages: Array.from({ length: 50 }, (_, i) => ({ key: `p3-${i}`, value: `p3-v${i}`, partition: 3 })) });
  } finally {
    await producer.disconnect();
  }
  await eventually('the target to catch up on 4 partitions, with ISRs of three', 120_000, async () => {
    const [onTarget, onSource] = await Promise.all([ends(targetBootstrap, 'orders', 4).catch(() => []), ends(sourceBootstrap, 'orders', 4).catch(() => [-2])]);
    const meta = (await target.metadata(['orders']).catch(() => []))[0];
    return onSource[3] === 50 && onTarget.join() === onSource.join() && meta?.partitions.length === 4 && meta.partitions.every((p) => p.isr.length === 3);
  });
  await eventually('retention.ms on the target as on the source', 60_000, async () =>
    (await describeTopicConfigs(target, 'orders').catch(() => [])).some((c) => c.name === 'retention.ms' && c.value === '3600000' && c.source === 'DYNAMIC_TOPIC_CONFIG'));

  const [onSource, onTarget] = await Promise.all([readAll(sourceBootstrap, 'orders', 4), readAll(targetBootstrap, 'orders', 4)]);
  for (const p of [0, 1, 2, 3]) assert.deepEqual(view(onTarget.get(p)!), view(onSource.get(p)!), `partition ${p}: same offsets, timestamps, keys, values, headers`);
  const mirrored = new Set([...onTarget.values()].flat().map((r) => r.value?.toString()));
  const missing = acknowledged.filter((v) => !mirrored.has(v));
  assert.deepEqual(missing.slice(0, 10), [], `${missing.length} of ${acknowledged.length} acknowledged record(s) missing on the target`);

  // Each target node reports the partitions it leads; together they are the four.
  await eventually('the target nodes\' /v1/links to cover the four partitions, caught up', 60_000, async () => {
    const bodies = await Promise.all(tgt.nodes.map(async (n) => (await (await fetch(`${httpOf(n)}/v1/links`)).json()) as LinksBody));
    const all = bodies.flatMap((b) => b.partitions).filter((p) => p.topic === 'orders');
    return bodies.every((b) => b.links.length === 1) && all.length === 4 && new Set(all.map((p) => p.partition)).size === 4 && all.every((p) => p.sourceHighWatermark === p.logEndOffset);
  });

  // link delete --force: every target node stops its fetchers; nothing more arrives.
  assert.match(await cli(['link', 'delete', 'dr', '--force', '-b', targetBootstrap]), /deleted link dr/);
  await eventually('every target node\'s /v1/links without the link and its partitions', 60_000, async () => {
    const bodies = await Promise.all(tgt.nodes.map(async (n) => (await (await fetch(`${httpOf(n)}/v1/links`)).json()) as LinksBody));
    return bodies.every((b) => b.links.length === 0 && b.partitions.length === 0);
  });
  const atDelete = await ends(targetBootstrap, 'orders', 4);
  const after = new Kafka({ brokers: sourceBootstrap.split(','), clientId: 'link-3x3-after', logLevel: logLevel.NOTHING }).producer({ allowAutoTopicCreation: false });
  await after.connect();
  try {
    for (const partition of [0, 1, 2, 3]) await after.send({ topic: 'orders', acks: -1, messages: [{ value: 'after-delete', partition }] });
  } finally {
    await after.disconnect();
  }
  await sleep(3000);
  assert.deepEqual(await ends(targetBootstrap, 'orders', 4), atDelete, 'nothing mirrored after the link was deleted');
});
