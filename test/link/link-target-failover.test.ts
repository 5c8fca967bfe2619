// A mirror topic replicated inside a three-node target: the source is a single `logline server`,
// the target three. The mirror topic has replication factor 3 on the target; kafkajs writes to the
// source while the target partition's leader is SIGKILLed: another target broker becomes leader,
// its link fetcher takes over from its own log end, and the restarted broker rejoins the ISR
// (its truncation by epoch works on the source's epochs). Afterwards the target holds exactly the
// source's records at the same offsets, every acknowledged record, with the ISR back to three.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { clusterNodeProcesses, killProcess, startClusterNodeProcess } from '../broker/process-helpers.js';
import { eventually, freePort, readAll } from '../mirror/helpers.js';
import { Node, cli, ends, produceUntil, view } from './helpers.js';

const SOURCE_RESTARTS = 5;

/** The latest epoch in a partition's log, as its leader answers OffsetForLeaderEpoch for the largest epoch. */
async function latestLogEpoch(bootstrap: string, topic: string): Promise<number> {
  const client = new ClusterClient({ bootstrap });
  try {
    const c = await client.leaderFor(topic, 0);
    const r = await c.send(ApiKey.OffsetForLeaderEpoch, 4, { replicaId: -1, topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0x7fffffff }] }] });
    assert.equal(r.topics[0].partitions[0].errorCode, 0);
    return r.topics[0].partitions[0].leaderEpoch;
  } finally {
    client.close();
  }
}

test('a mirror topic with three replicas in the target survives a SIGKILL of its target leader: same records at the same offsets, ISR back to three', { timeout: 240_000 }, async (t) => {
  const source = new Node(await freePort());
  const { nodes, voters } = await clusterNodeProcesses(3, Buffer.from(randomUUID().replace(/-/g, ''), 'hex').toString('base64url'));
  t.after(async () => {
    if (process.env.LINK_LOG) for (const n of nodes) console.log(`--- target node ${n.id}\n${n.log}`);
    await source.kill();
    for (const n of nodes) if (n.child) await killProcess(n.child);
  });
  await source.start();
  await Promise.all(nodes.map((n) => startClusterNodeProcess(n, voters)));
  const targetBootstrap = nodes.map((n) => `127.0.0.1:${n.brokerPort}`).join(',');
  const target = new ClusterClient({ bootstrap: targetBootstrap });
  const sourceClient = new ClusterClient({ bootstrap: source.bootstrap });
  t.after(() => { target.close(); sourceClient.close(); });
  await eventually('three target brokers', 60_000, async () => { await target.metadata([]).catch(() => null); return target.brokers.size === 3; });
  const created = await sourceClient.admin(ApiKey.CreateTopics, { topics: [{ name: 'orders', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }, 7);
  assert.equal(created.topics[0].errorCode, 0);
  await sourceClient.retrying(() => sourceClient.topic('orders'));
  // Restarts of the source take its partition's leader epoch above the target's, as a source with
  // a history of failovers has: the promoted topic must then write epochs above those.
  for (let i = 0; i < SOURCE_RESTARTS; i++) {
    await source.kill();
    await source.start();
  }
  await eventually(`the source partition at epoch ${SOURCE_RESTARTS} or more`, 60_000, async () => ((await sourceClient.metadata(['orders']).catch(() => []))[0]?.partitions[0]?.leaderEpoch ?? -1) >= SOURCE_RESTARTS);

  await cli(['link', 'create', 'dr', '--source', source.bootstrap, '-b', targetBootstrap]);
  await cli(['link', 'mirror', 'dr', 'orders', '--replication-factor', '3', '-b', targetBootstrap]);

  let stop = false;
  const producing = produceUntil(source.bootstrap, 'orders', 1, () => stop);
  let killed: (typeof nodes)[number] | undefined;
  const live = () => nodes.filter((n) => n.child !== null).map((n) => `127.0.0.1:${n.brokerPort}`).join(',');
  try {
    await eventually('the target to mirror some records', 60_000, async () => (await ends(targetBootstrap, 'orders', 1).catch(() => [0]))[0]! > 100);
    const before = (await target.topic('orders')).partitions[0]!;
    assert.equal(before.replicas.length, 3);
    killed = nodes.find((n) => n.id === before.leader)!;
    await killProcess(killed.child!);
    killed.child = null;
    const others = new ClusterClient({ bootstrap: live() });
    t.after(() => others.close());
    await eventually('a new target leader', 60_000, async () => {
      const p = (await others.metadata(['orders']).catch(() => []))[0]?.partitions[0];
      return p !== undefined && p.leader >= 0 && p.leader !== before.leader;
    });
    const atChange = (await ends(live(), 'orders', 1))[0]!;
    await eventually('the new target leader to mirror on', 60_000, async () => (await ends(live(), 'orders', 1).catch(() => [0]))[0]! > atChange + 100);
  } finally {
    stop = true;
  }
  const acknowledged = await producing;
  await startClusterNodeProcess(killed!, voters);
  await eventually('the target to catch up and its ISR to hold three', 90_000, async () => {
    const [end] = await ends(targetBootstrap, 'orders', 1).catch(() => [-1]);
    const [sourceEnd] = await ends(source.bootstrap, 'orders', 1).catch(() => [-2]);
    const p = (await target.metadata(['orders']).catch(() => []))[0]?.partitions[0];
    return end === sourceEnd && p !== undefined && p.isr.length === 3;
  });
  const onSource = (await readAll(source.bootstrap, 'orders', 1)).get(0)!;
  const onTarget = (await readAll(targetBootstrap, 'orders', 1)).get(0)!;
  assert.deepEqual(view(onTarget), view(onSource), 'same offsets, timestamps, keys, values, headers');
  const mirrored = new Set(onTarget.map((r) => r.value?.toString()));
  const missing = acknowledged.filter((v) => !mirrored.has(v));
  assert.deepEqual(missing.slice(0, 10), [], `${missing.length} of ${acknowledged.length} acknowledged record(s) missing on the target`);

  // Promoted, the topic takes acks=all writes in the target; its leader is then SIGKILLed and
  // another replica serves everything: the followers kept up (epochs never went back in the log).
  assert.match(await cli(['link', 'promote', 'orders', '-b', targetBootstrap]), /promoted orders/);
  let sends = 0;
  const written = await produceUntil(targetBootstrap, 'orders', 1, () => sends++ >= 5);
  assert.ok(written.length > 0, 'kafkajs wrote to the promoted topic');
  const sourceEpoch = await latestLogEpoch(source.bootstrap, 'orders');
  assert.ok(await latestLogEpoch(targetBootstrap, 'orders') > sourceEpoch, `the promoted topic's new batches carry an epoch above the source's ${sourceEpoch}`);
  const promotedEnd = (await ends(targetBootstrap, 'orders', 1))[0]!;
  const leader = (await target.topic('orders')).partitions[0]!.leader;
  const victim = nodes.find((n) => n.id === leader)!;
  await killProcess(victim.child!);
  victim.child = null;
  await eventually('a leader after the promoted leader\'s SIGKILL, with every acknowledged record', 60_000, async () => {
    const [end] = await ends(live(), 'orders', 1).catch(() => [-1]);
    return end !== undefined && end >= promotedEnd;
  });
  const after = (await readAll(live(), 'orders', 1)).get(0)!;
  assert.deepEqual(view(after).slice(0, onSource.length), view(onSource), 'the mirrored records are still there');
  const served = new Set(after.map((r) => r.value?.toString()));
  assert.deepEqual(written.filter((v) => !served.has(v)).slice(0, 10), [], 'every record acknowledged after promotion is served by the new leader');
});
