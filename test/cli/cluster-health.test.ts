// What an operator checks when a broker dies, with the CLI against a 3-node cluster: `topic describe`
// shows the dead broker's replicas as offline, `--under-replicated-partitions` and
// `--unavailable-partitions` list exactly the partitions kafka-topics.sh would, and
// `cluster elect-leaders` runs preferred elections once the restarted broker's replicas have caught
// up and rejoined the ISR (and refuses bad arguments with exit code 2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { runProcess, within } from '../broker/process-helpers.js';

const BIN = 'bin/logline.js';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The CLI's --json output (exit code 0 asserted). */
async function cliJson(bootstrap: string, ...args: string[]): Promise<any> {
  const r = await cli(bootstrap, ...args, '--json');
  assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** The CLI as a child process, awaited (the cluster runs in this process: a synchronous spawn would stop it answering). */
async function cli(bootstrap: string, ...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const r = await runProcess(process.execPath, [BIN, ...args, '-b', bootstrap]);
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
}

test('a dead broker: topic describe shows its replicas offline, the health filters list the partitions kafka-topics.sh would, elect-leaders runs preferred elections', { timeout: 120_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3, config: { 'broker.session.timeout.ms': '2000', 'broker.heartbeat.interval.ms': '300' } }));
  try {
    const live = `127.0.0.1:${cluster.nodes[0]!.brokerPort}`;
    const client = new ClusterClient({ bootstrap: live });
    try {
      const r = await client.admin(ApiKey.CreateTopics, { topics: [
        { name: 'health', numPartitions: 3, replicationFactor: 3, assignments: [], configs: [{ name: 'min.insync.replicas', value: '3' }] },
        { name: 'solo', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [3] }], configs: [] },
      ], timeoutMs: 10_000, validateOnly: false }, 7);
      assert.deepEqual(r.topics.map((t: { errorCode: number }) => t.errorCode), [0, 0]);
    } finally {
      client.close();
    }
    assert.match((await cli(live, 'topic', 'describe', '--under-replicated-partitions')).stdout, /no under-replicated-partitions/);
    assert.equal((await cliJson(live, 'topic', 'describe', '--unavailable-partitions')).length, 0);

    await cluster.nodes[2]!.kill();
    await within(30_000, 'node 3 fenced', (async () => {
      for (;;) {
        const d = await cliJson(live, 'topic', 'describe', 'solo');
        if (d.partitions[0].leader === -1) return;
        await sleep(200);
      }
    })());
    const health = await cliJson(live, 'topic', 'describe', 'health');
    for (const p of health.partitions) {
      assert.deepEqual(p.offline, [3], `health-${p.partition}: the fenced broker's replica is offline`);
      assert.ok(!p.isr.includes(3) && p.leader !== 3, `health-${p.partition}: neither leader nor in the ISR`);
    }
    const under = await cliJson(live, 'topic', 'describe', '--under-replicated-partitions');
    // solo-0 too: with eligible leader replicas (KIP-966, on in a new cluster) its fenced only
    // replica leaves the ISR for the ELR, so the ISR is empty (kafka-topics.sh lists it the same way).
    assert.deepEqual(under.map((x: { topic: string; partition: number }) => `${x.topic}-${x.partition}`), ['health-0', 'health-1', 'health-2', 'solo-0']);
    const unavailable = await cliJson(live, 'topic', 'describe', '--unavailable-partitions');
    assert.deepEqual(unavailable.map((x: { topic: string; partition: number }) => `${x.topic}-${x.partition}`), ['solo-0']);
    const underMinIsr = await cliJson(live, 'topic', 'describe', 'health', '--under-min-isr-partitions');
    assert.equal(underMinIsr.length, 3, 'ISR 2 < min.insync.replicas 3');
    const table = await cli(live, 'topic', 'describe', '--unavailable-partitions');
    assert.match(table.stdout, /TOPIC\s+PARTITION\s+LEADER/);
    assert.match(table.stdout, /solo\s+0\s+-1/);

    await cluster.nodes[2]!.restart();
    await within(30_000, 'solo led again', (async () => {
      for (;;) {
        const d = await cliJson(live, 'topic', 'describe', 'solo');
        if (d.partitions[0].leader === 3) return;
        await sleep(200);
      }
    })());
    // Node 3's replicas of `health` fetch from their leaders and rejoin the ISR; a preferred
    // election then gives it back the partitions it leads first.
    await within(60_000, 'node 3 back in every ISR of health', (async () => {
      for (;;) {
        const d = await cliJson(live, 'topic', 'describe', 'health');
        if (d.partitions.every((p: { isr: number[] }) => p.isr.length === 3)) return;
        await sleep(200);
      }
    })());
    const all = await cli(live, 'cluster', 'elect-leaders', '--election-type', 'preferred', '--all-topic-partitions', '--json');
    assert.equal(all.status, 0, all.stderr);
    const results = JSON.parse(all.stdout) as { topic: string; partition: number; result: string }[];
    assert.ok(results.some((r) => r.topic === 'health' && r.result === 'elected'), `a partition of health moves back to node 3: ${all.stdout}`);
    assert.ok(results.every((r) => r.result === 'elected' || r.result === 'not needed'), all.stdout);
    const preferred = await cliJson(live, 'topic', 'describe', 'health');
    for (const p of preferred.partitions) assert.equal(p.leader, p.replicas[0], `health-${p.partition} led by its preferred replica`);
    const elected = await cli(live, 'cluster', 'elect-leaders', '--election-type', 'preferred', '--topic', 'solo', '--partition', '0', '--json');
    assert.equal(elected.status, 0, elected.stderr);
    assert.deepEqual(JSON.parse(elected.stdout), [{ topic: 'solo', partition: 0, result: 'not needed' }]);
    const usage = await cli(live, 'cluster', 'elect-leaders', '--election-type', 'preferred');
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /--all-topic-partitions/);
    assert.equal((await cli(live, 'cluster', 'elect-leaders', '--election-type', 'sometimes', '--all-topic-partitions')).status, 2);
  } finally {
    await cluster.close();
  }
});
