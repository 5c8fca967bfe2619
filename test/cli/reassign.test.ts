// `logline topic reassign` against a 4-broker cluster, as an operator runs
// kafka-reassign-partitions.sh: --generate proposes replicas on the listed brokers; --execute with
// --throttle sets the rates and throttled replicas and starts the move; --list and topic describe
// show it under way; the copy runs at the throttle (measured on the new replica: bytes copied over
// the time from its first byte to its last, within 20% of the setting); --verify reports it
// complete and removes the throttles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import nodePath from 'node:path';
import { startCluster } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { runProcess, within } from '../broker/process-helpers.js';

const BIN = 'bin/logline.js';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function cli(bootstrap: string, ...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const r = await runProcess(process.execPath, [BIN, ...args, '-b', bootstrap]);
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
}

async function cliJson(bootstrap: string, ...args: string[]): Promise<any> {
  const r = await cli(bootstrap, ...args, '--json');
  assert.equal(r.status, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** DescribeConfigs' ConfigSource for a per-broker dynamic config. */
const DYNAMIC_BROKER_CONFIG = 2;
const RATE = 1024 * 1024;
const BATCH_BYTES = 64 * 1024;
// 12 MiB: 12 s of copying at the throttle, so the CLI commands that look at the move in progress (each a
// node process, seconds apiece on a loaded machine) run before it ends (at 6 MiB it ended first under load).
const BATCHES = 192;

test('topic reassign: generate a plan, execute it with a throttle the copy keeps to within 20%, list it, verify it and remove the throttles', { timeout: 240_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ controllers: 1, brokers: 4 }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  const dir = mkdtempSync(nodePath.join(tmpdir(), 'logline-reassign-'));
  try {
    const [a, b, c, d] = cluster.nodes.filter((n) => n.roles.includes('broker')).map((n) => n.nodeId) as [number, number, number, number];
    const created = await client.admin(ApiKey.CreateTopics, { topics: [
      { name: 'plan', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [a, b] }, { partitionIndex: 1, brokerIds: [b, a] }], configs: [] },
      { name: 'bulk', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [a, b] }], configs: [] },
    ], timeoutMs: 10_000, validateOnly: false }, 7);
    assert.deepEqual(created.topics.map((t: { errorCode: number }) => t.errorCode), [0, 0]);

    // --generate: the current assignment, and a proposal over the listed brokers with the same replication factor.
    const gen = await cliJson(cluster.bootstrap, 'topic', 'reassign', '--generate', '--topics', 'plan', '--broker-list', `${c},${d}`);
    assert.deepEqual(gen.current.partitions.map((p: any) => [p.partition, p.replicas]), [[0, [a, b]], [1, [b, a]]]);
    assert.equal(gen.proposed.partitions.length, 2);
    for (const p of gen.proposed.partitions) assert.deepEqual([...p.replicas].sort(), [c, d].sort(), `plan-${p.partition}`);

    // 12 MiB on the leader and its follower.
    const conn = await client.leaderFor('bulk', 0);
    const value = Buffer.alloc(BATCH_BYTES - 200, 'z');
    for (let i = 0; i < BATCHES; i++) {
      const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 10_000,
        topicData: [{ name: 'bulk', partitionData: [{ index: 0, records: buildRecordBatchSync({ records: [{ key: null, value, timestamp: 1_700_000_000_000 + i }] }) }] }] });
      assert.equal(r.responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    }
    const leader = cluster.nodes.find((n) => n.nodeId === a)!.server!.broker!.replicaManager.partition('bulk', 0)!;
    const endOffset = leader.log.logEndOffset;

    // --execute with a throttle: bulk-0 moves from [a, b] to [a, c].
    const file = nodePath.join(dir, 'move.json');
    writeFileSync(file, JSON.stringify({ version: 1, partitions: [{ topic: 'bulk', partition: 0, replicas: [a, c] }] }));
    // Optional all the way: if an assertion below fails, the cluster closes while this still runs,
    // and the failure should be the assertion's, not this reading a closed node.
    const copying = () => cluster.nodes.find((n) => n.nodeId === c)?.server?.broker?.replicaManager.partition('bulk', 0);
    let firstByteMs = 0;
    let lastByteMs = 0;
    // Samples the new replica's progress every 10 ms: when its first and last bytes landed.
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const p = copying();
        const leo = p?.log.logEndOffset ?? 0;
        if (leo > 0 && firstByteMs === 0) firstByteMs = performance.now();
        if (leo >= endOffset && lastByteMs === 0) lastByteMs = performance.now();
        await sleep(10);
      }
    })();
    const executed = await cli(cluster.bootstrap, 'topic', 'reassign', '--execute', '--reassignment-json-file', file, '--throttle', String(RATE));
    assert.equal(executed.status, 0, executed.stdout + executed.stderr);
    assert.match(executed.stdout, /Successfully started partition reassignment/);
    assert.match(executed.stdout, new RegExp(`"replicas":\\[${a},${b}\\]`), 'the current assignment is printed for a rollback');

    const again = await cli(cluster.bootstrap, 'topic', 'reassign', '--execute', '--reassignment-json-file', file);
    assert.equal(again.status, 1, 'a second execute while one is in progress is refused without --additional');
    assert.match(again.stderr, /existing partition assignment/);
    const listed = await cliJson(cluster.bootstrap, 'topic', 'reassign', '--list');
    assert.deepEqual(listed, [{ partition: 'bulk-0', replicas: [a, c, b], adding: [c], removing: [b] }]);
    const described = await cliJson(cluster.bootstrap, 'topic', 'describe', 'bulk');
    assert.deepEqual(described.partitions[0].adding, [c]);
    assert.deepEqual(described.partitions[0].removing, [b]);
    const throttles = Object.fromEntries(described.configs.filter((x: any) => x.source === 'DYNAMIC_TOPIC_CONFIG').map((x: any) => [x.name, x.value]));
    assert.equal(throttles['leader.replication.throttled.replicas'], `0:${a},0:${b}`);
    assert.equal(throttles['follower.replication.throttled.replicas'], `0:${c}`);
    const pending = await cliJson(cluster.bootstrap, 'topic', 'reassign', '--verify', '--reassignment-json-file', file);
    assert.equal(pending.partitions[0].status, 'in progress');
    assert.equal(pending.throttlesRemoved, false);

    // --verify --wait returns once the move is complete (progress on stderr meanwhile).
    const waited = await within(60_000, 'the reassignment completes', cliJson(cluster.bootstrap, 'topic', 'reassign', '--verify', '--wait', '--reassignment-json-file', file));
    assert.deepEqual(waited.partitions.map((p: any) => p.status), ['complete']);
    assert.deepEqual(await cliJson(cluster.bootstrap, 'topic', 'reassign', '--list'), []);
    watching = false;
    await watcher;
    const segmentBytes = readdirSync(nodePath.join(cluster.nodes.find((n) => n.nodeId === c)!.dataDir, 'bulk-0'))
      .filter((f) => f.endsWith('.log')).reduce((sum, f) => sum + statSync(nodePath.join(cluster.nodes.find((n) => n.nodeId === c)!.dataDir, 'bulk-0', f)).size, 0);
    const seconds = (lastByteMs - firstByteMs) / 1000;
    const measured = segmentBytes / seconds;
    console.log(`throttle ${RATE} B/s: copied ${segmentBytes} bytes in ${seconds.toFixed(2)} s = ${Math.round(measured)} B/s (${(measured / RATE).toFixed(3)} of the setting)`);
    assert.ok(segmentBytes >= BATCHES * (BATCH_BYTES - 200), `${segmentBytes} bytes copied`);
    assert.ok(measured <= 1.2 * RATE, `copy rate ${Math.round(measured)} B/s above 1.2 x ${RATE}`);
    assert.ok(measured >= 0.8 * RATE, `copy rate ${Math.round(measured)} B/s below 0.8 x ${RATE}`);

    // --verify: complete, and the throttles go.
    // (The broker answering may show the new replica list a moment after the controller finished.)
    let verified = await cliJson(cluster.bootstrap, 'topic', 'reassign', '--verify', '--reassignment-json-file', file);
    for (let i = 0; i < 50 && !verified.complete; i++) {
      await sleep(100);
      verified = await cliJson(cluster.bootstrap, 'topic', 'reassign', '--verify', '--reassignment-json-file', file);
    }
    assert.deepEqual(verified.partitions.map((p: any) => [p.topic, p.partition, p.status]), [['bulk', 0, 'complete']]);
    assert.equal(verified.throttlesRemoved, true);
    const after = await cliJson(cluster.bootstrap, 'topic', 'describe', 'bulk');
    assert.deepEqual(after.partitions[0].replicas, [a, c]);
    assert.deepEqual(after.configs.filter((x: any) => x.source === 'DYNAMIC_TOPIC_CONFIG' && x.name.includes('throttled')), []);
    const brokerConfigs = await (await client.broker(a)).send(ApiKey.DescribeConfigs, 4, {
      resources: [{ resourceType: 4, resourceName: String(a), configurationKeys: ['leader.replication.throttled.rate', 'follower.replication.throttled.rate'] }], includeSynonyms: false, includeDocumentation: false,
    });
    for (const e of brokerConfigs.results[0].configs) assert.notEqual(e.configSource, DYNAMIC_BROKER_CONFIG, `${e.name} is no longer a dynamic broker config`);

    // --cancel with nothing in progress says so; a bad option is a usage error.
    const cancelled = await cliJson(cluster.bootstrap, 'topic', 'reassign', '--cancel', '--reassignment-json-file', file);
    assert.deepEqual(cancelled, [{ topic: 'bulk', partition: 0, result: 'none in progress' }]);
    assert.equal((await cli(cluster.bootstrap, 'topic', 'reassign', '--execute', '--verify')).status, 2);
  } finally {
    client.close();
    await cluster.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
