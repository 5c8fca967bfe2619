// A mirror topic across a source leader change: the source is a three-node cluster (`logline
// server` processes), the target a single node. kafkajs writes acks=all to the source while the
// source partition's leader is SIGKILLed: the link fetcher finds the new leader, checks the
// mirror's end against it (OffsetForLeaderEpoch with the epoch of the mirror's last batch) and
// goes on. Afterwards the target holds exactly the source's records at the same offsets, and
// every acknowledged record.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { clusterNodeProcesses, killProcess, startClusterNodeProcess } from '../broker/process-helpers.js';
import { eventually, freePort, readAll } from '../mirror/helpers.js';
import { Node, cli, ends, produceUntil, view } from './helpers.js';

test('the target follows the source across a SIGKILL of the source partition\'s leader: same records at the same offsets', { timeout: 240_000 }, async (t) => {
  const { nodes, voters } = await clusterNodeProcesses(3, Buffer.from(randomUUID().replace(/-/g, ''), 'hex').toString('base64url'));
  const target = new Node(await freePort());
  t.after(async () => {
    if (process.env.LINK_LOG) console.log(`--- target\n${target.output}`);
    await target.kill();
    for (const n of nodes) if (n.child) await killProcess(n.child);
  });
  await Promise.all(nodes.map((n) => startClusterNodeProcess(n, voters)));
  await target.start();
  const sourceBootstrap = nodes.map((n) => `127.0.0.1:${n.brokerPort}`).join(',');
  const source = new ClusterClient({ bootstrap: sourceBootstrap });
  t.after(() => source.close());
  await eventually('three source brokers', 60_000, async () => { await source.metadata([]).catch(() => null); return source.brokers.size === 3; });
  const created = await source.admin(ApiKey.CreateTopics, { topics: [{ name: 'orders', numPartitions: 1, replicationFactor: 3, assignments: [], configs: [{ name: 'min.insync.replicas', value: '2' }] }], timeoutMs: 30_000, validateOnly: false }, 7);
  assert.equal(created.topics[0].errorCode, 0, created.topics[0].errorMessage);
  await source.retrying(() => source.topic('orders'));

  await cli(['link', 'create', 'dr', '--source', sourceBootstrap, '-b', target.bootstrap]);
  await cli(['link', 'mirror', 'dr', 'orders', '-b', target.bootstrap]);

  let stop = false;
  const producing = produceUntil(sourceBootstrap, 'orders', 1, () => stop);
  let killed: (typeof nodes)[number] | undefined;
  try {
    await eventually('the target to mirror some records', 60_000, async () => (await ends(target.bootstrap, 'orders', 1).catch(() => [0]))[0]! > 100);
    const before = (await source.topic('orders')).partitions[0]!;
    killed = nodes.find((n) => n.id === before.leader)!;
    await killProcess(killed.child!);
    killed.child = null;
    await eventually('a new source leader', 60_000, async () => {
      const p = (await source.metadata(['orders']).catch(() => []))[0]?.partitions[0];
      return p !== undefined && p.leader >= 0 && p.leader !== before.leader;
    });
    const atChange = (await ends(target.bootstrap, 'orders', 1))[0]!;
    await eventually('the target to mirror records written under the new leader', 60_000, async () => (await ends(target.bootstrap, 'orders', 1).catch(() => [0]))[0]! > atChange + 100);
  } finally {
    stop = true;
  }
  const acknowledged = await producing;
  await startClusterNodeProcess(killed!, voters);
  const sourceEnd = async () => (await ends(nodes.filter((n) => n.child !== null).map((n) => `127.0.0.1:${n.brokerPort}`).join(','), 'orders', 1))[0]!;
  await eventually('the target to catch up', 60_000, async () => (await ends(target.bootstrap, 'orders', 1).catch(() => [-1]))[0] === await sourceEnd().catch(() => -2));
  const onSource = (await readAll(sourceBootstrap, 'orders', 1)).get(0)!;
  const onTarget = (await readAll(target.bootstrap, 'orders', 1)).get(0)!;
  assert.deepEqual(view(onTarget), view(onSource), 'same offsets, timestamps, keys, values, headers');
  const mirrored = new Set(onTarget.map((r) => r.value?.toString()));
  const missing = acknowledged.filter((v) => !mirrored.has(v));
  assert.deepEqual(missing.slice(0, 10), [], `${missing.length} of ${acknowledged.length} acknowledged record(s) missing on the target`);
});
