// Each node's HTTP listener on an in-process cluster, as an operator uses it: health and readiness,
// the brokers' registrations (epochs, fencing, liveness as the active controller sees it), the
// metadata quorum, topics with offsets, and a Prometheus scrape that finds the under-replicated,
// offline and fenced counts a user expects once a broker dies; `logline cluster status` shows the
// dead broker fenced; a restarted broker is ready only once the controller has unfenced it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { startCluster, startServer, type ClusterHandle } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { until, within } from '../broker/process-helpers.js';
import type { BrokersView, QuorumView, Readiness, TopicRow } from '../../src/http/index.js';
import { sample } from './scrape.js';

const SESSION_TIMEOUT_MS = 3000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function get(port: number, path: string): Promise<{ status: number; body: string; type: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text(), type: res.headers.get('content-type') ?? '' };
}

async function getJson<T>(port: number, path: string): Promise<T> {
  const r = await get(port, path);
  assert.equal(r.status, 200, `${path}: ${r.body}`);
  assert.match(r.type, /^application\/json/);
  return JSON.parse(r.body) as T;
}

async function scrape(port: number): Promise<string> {
  const r = await get(port, '/metrics');
  assert.equal(r.status, 200);
  assert.match(r.type, /^text\/plain/);
  return r.body;
}

async function createTopic(client: ClusterClient, name: string, replicas: number[], configs: { name: string; value: string }[] = []): Promise<void> {
  for (;;) {
    const r = await client.admin(ApiKey.CreateTopics, {
      topics: [{ name, numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: replicas }], configs }], timeoutMs: 10_000, validateOnly: false,
    }, 7);
    if (r.topics[0].errorCode !== ErrorCode.NOT_CONTROLLER) { assert.equal(r.topics[0].errorCode, ErrorCode.NONE, r.topics[0].errorMessage); return; }
    await sleep(50);
  }
}

/** `logline ARGS` as a child process (the cluster runs in this process, so not spawnSync). */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/logline.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The node whose controller is active, by asking each node's /v1/brokers. */
async function activeController(cluster: ClusterHandle): Promise<{ nodeId: number; httpPort: number }> {
  return until(20_000, 'an active controller', async () => {
    for (const n of cluster.nodes) {
      if (!n.running) continue;
      const b = await getJson<BrokersView>(n.httpPort, '/v1/brokers').catch(() => null);
      if (b?.activeController) return { nodeId: n.nodeId, httpPort: n.httpPort };
    }
    return undefined;
  });
}

test('each node serves health, readiness, brokers, quorum, topics and /metrics; a dead broker shows up fenced, under-replicated and offline; restarted, it is ready only once unfenced', { timeout: 180_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({
    nodes: 3, config: { 'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS), 'broker.heartbeat.interval.ms': '500' },
  }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    const ports = cluster.nodes.map((n) => n.httpPort);
    assert.equal(new Set(ports).size, 3, 'every node has its own HTTP port');
    for (const n of cluster.nodes) {
      assert.deepEqual(JSON.parse((await get(n.httpPort, '/v1/health')).body), { status: 'ok', nodeId: n.nodeId, roles: ['broker', 'controller'] });
      await until(20_000, `node ${n.nodeId} ready`, async () => ((await get(n.httpPort, '/v1/ready')).status === 200 ? true : undefined));
    }
    assert.equal((await get(ports[0]!, '/v1/nope')).status, 404);
    assert.equal((await fetch(`http://127.0.0.1:${ports[0]}/v1/brokers`, { method: 'POST' })).status, 405, 'read-only');

    const controller = await activeController(cluster);
    const registered = await until(20_000, 'every broker alive at the controller', async () => {
      const b = await getJson<BrokersView>(controller.httpPort, '/v1/brokers');
      return b.brokers.length === 3 && b.brokers.every((x) => x.alive === true && !x.fenced) ? b : undefined;
    });
    for (const n of cluster.nodes) {
      const row = registered.brokers.find((b) => b.id === n.nodeId)!;
      assert.deepEqual(row.endpoints.map((e) => `${e.name}://${e.host}:${e.port}`), [`PLAINTEXT://127.0.0.1:${n.brokerPort}`]);
      assert.ok(BigInt(row.brokerEpoch) >= 0n && row.incarnationId.length > 0 && row.inControlledShutdown === false);
    }
    const other = cluster.nodes.find((n) => n.nodeId !== controller.nodeId)!;
    const fromStandby = await getJson<BrokersView>(other.httpPort, '/v1/brokers');
    assert.equal(fromStandby.activeController, false);
    assert.ok(fromStandby.brokers.every((b) => b.alive === null), 'only the active controller knows sessions');

    const quorum = await until(20_000, 'the quorum from its leader', async () => {
      for (const p of ports) {
        const q = await getJson<QuorumView>(p, '/v1/quorum');
        if (q.role === 'leader' && q.voters.every((v) => v.lag === 0)) return q;
      }
      return undefined;
    });
    assert.deepEqual(quorum.voters.map((v) => v.id).sort(), [1, 2, 3]);
    assert.ok(quorum.voters.every((v) => v.logEndOffset === quorum.highWatermark));

    // The victim is not the active controller; it leads the RF 3 topic and holds the RF 1 one alone.
    const victim = other;
    const rest = cluster.nodes.filter((n) => n !== victim).map((n) => n.nodeId);
    await createTopic(client, 'rf3', [victim.nodeId, ...rest], [{ name: 'min.insync.replicas', value: '3' }]);
    await createTopic(client, 'rf1', [victim.nodeId]);
    const records = buildRecordBatchSync({ records: ['a', 'b', 'c', 'd', 'e'].map((v) => ({ key: null, value: Buffer.from(v) })) });
    await until(20_000, 'five records acknowledged by all three replicas', async () => {
      const conn = await client.leaderFor('rf3', 0);
      const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: 'rf3', partitionData: [{ index: 0, records }] }] });
      return r.responses[0].partitionResponses[0].errorCode === ErrorCode.NONE ? true : undefined;
    });
    const rf3 = await until(20_000, 'rf3 replicated', async () => {
      const t = await getJson<TopicRow>(victim.httpPort, '/v1/topics/rf3');
      return t.partitions[0]!.highWatermark === 5 ? t : undefined;
    });
    const { isr, leaderEpoch, sizeBytes, ...shown } = rf3.partitions[0]!;
    assert.deepEqual(shown, {
      partition: 0, leader: victim.nodeId, replicas: [victim.nodeId, ...rest], offlineReplicas: [], logStartOffset: 0, logEndOffset: 5, highWatermark: 5, offsetsFrom: 'leader',
      underReplicated: false, offline: false, tiered: null,
    });
    assert.equal(sizeBytes, records.length, 'the leader\'s replica holds the one batch (DescribeLogDirs)');
    assert.deepEqual([...isr].sort(), [1, 2, 3]);
    assert.ok(leaderEpoch >= 0);
    const listed = await getJson<{ topics: TopicRow[] }>(ports[0]!, '/v1/topics');
    assert.deepEqual(listed.topics.map((t) => t.name).filter((n) => !n.startsWith('__')), ['rf1', 'rf3']);
    assert.equal((await get(ports[0]!, '/v1/topics/no-such-topic')).status, 404);

    // The followers have fetched the batch: replication is not BytesOut. A consumer's fetch is.
    assert.equal(sample(await scrape(victim.httpPort), 'kafka_server_brokertopicmetrics_bytesout_total', { topic: 'rf3' }), 0);
    const consumed = await cli(['consume', '--topic', 'rf3', '--format', 'raw', '--count', '5', '-b', `127.0.0.1:${victim.brokerPort}`]);
    assert.equal(consumed.code, 0, consumed.stderr);
    assert.deepEqual(consumed.stdout.trim().split('\n'), ['a', 'b', 'c', 'd', 'e']);
    const before = await scrape(victim.httpPort);
    assert.equal(sample(before, 'kafka_server_brokertopicmetrics_bytesout_total', { topic: 'rf3' }), records.length);
    assert.equal(sample(before, 'kafka_server_brokertopicmetrics_messagesin_total', { topic: 'rf3' }), 5);
    assert.equal(sample(before, 'kafka_server_brokertopicmetrics_bytesin_total', { topic: 'rf3' }), records.length);
    assert.ok(sample(before, 'kafka_network_requestmetrics_requests_total', { request: 'Produce', version: '9' })! >= 1);
    assert.ok(sample(before, 'kafka_network_requestmetrics_errors_total', { request: 'Produce', error: 'NONE' })! >= 1);
    assert.equal(sample(before, 'kafka_network_requestmetrics_totaltimems_count', { request: 'Produce', version: '9' }),
      sample(before, 'kafka_network_requestmetrics_totaltimems_bucket', { request: 'Produce', version: '9', le: '+Inf' }));
    assert.equal(sample(before, 'kafka_server_replicamanager_partitioncount'), 2);
    assert.equal(sample(before, 'kafka_server_replicamanager_leadercount'), 2);
    assert.equal(sample(before, 'kafka_server_replicamanager_underreplicatedpartitions'), 0);
    assert.equal(sample(before, 'kafka_controller_kafkacontroller_activecontrollercount'), 0);
    assert.ok(sample(before, 'kafka_server_raft_metrics_log_end_offset')! > 0);
    assert.ok(sample(before, 'process_resident_memory_bytes')! > 0, "Node's own metrics");
    assert.ok(sample(before, 'nodejs_eventloop_lag_seconds') !== undefined);
    const onController = await scrape(controller.httpPort);
    assert.equal(sample(onController, 'kafka_controller_kafkacontroller_activecontrollercount'), 1);
    assert.equal(sample(onController, 'kafka_controller_kafkacontroller_offlinepartitionscount'), 0);
    assert.equal(sample(onController, 'kafka_controller_kafkacontroller_fencedbrokercount'), 0);

    await victim.kill();
    const epochBefore = registered.brokers.find((b) => b.id === victim.nodeId)!.brokerEpoch;
    await until(30_000, 'the dead broker fenced at the controller', async () => {
      const b = await getJson<BrokersView>(controller.httpPort, '/v1/brokers');
      const row = b.brokers.find((x) => x.id === victim.nodeId)!;
      return row.fenced && row.alive === false ? true : undefined;
    });
    // What a user scraping every live node expects: one partition without a leader (the RF 1 topic
    // on the dead broker), one under-replicated and under min.insync.replicas (the RF 3 topic, led
    // by a survivor now), one fenced broker.
    const survivors = cluster.nodes.filter((n) => n !== victim);
    const sums = await until(30_000, 'the survivors report the dead broker\'s partitions', async () => {
      const scrapes = await Promise.all(survivors.map((n) => scrape(n.httpPort)));
      const sum = (name: string) => scrapes.reduce((s, x) => s + (sample(x, name) ?? 0), 0);
      const r = {
        offline: sum('kafka_controller_kafkacontroller_offlinepartitionscount'), fenced: sum('kafka_controller_kafkacontroller_fencedbrokercount'),
        underReplicated: sum('kafka_server_replicamanager_underreplicatedpartitions'), underMinIsr: sum('kafka_server_replicamanager_underminisrpartitioncount'),
        active: sum('kafka_controller_kafkacontroller_activecontrollercount'),
      };
      return r.underReplicated === 1 && r.offline === 1 ? r : undefined;
    });
    assert.deepEqual(sums, { offline: 1, fenced: 1, underReplicated: 1, underMinIsr: 1, active: 1 });
    // The admin API (and the console) flag the same two partitions.
    const flagged = (await getJson<{ topics: TopicRow[] }>(controller.httpPort, '/v1/topics')).topics
      .flatMap((t) => t.partitions.filter((p) => p.underReplicated || p.offline).map((p) => `${t.name}-${p.partition}${p.underReplicated ? ' under-replicated' : ''}${p.offline ? ' offline' : ''}`));
    // rf1-0's only replica, fenced, left its ISR for the ELR (KIP-966): an empty ISR is under-replicated too.
    assert.deepEqual(flagged, ['rf1-0 under-replicated offline', 'rf3-0 under-replicated']);

    // `logline cluster status` names the dead broker fenced, with its broker epoch.
    const survivor = survivors[0]!;
    const status = await cli(['cluster', 'status', '--json', '-b', `127.0.0.1:${survivor.brokerPort}`, '--http', `127.0.0.1:${controller.httpPort}`]);
    assert.equal(status.code, 0, status.stderr);
    const parsed = JSON.parse(status.stdout) as { registeredBrokers: { id: number; fenced: boolean; brokerEpoch: string }[] };
    assert.deepEqual(parsed.registeredBrokers.map((b) => [b.id, b.fenced]), [1, 2, 3].map((id) => [id, id === victim.nodeId]));
    assert.equal(parsed.registeredBrokers.find((b) => b.id === victim.nodeId)!.brokerEpoch, epochBefore);
    const human = await cli(['cluster', 'status', '-b', `127.0.0.1:${survivor.brokerPort}`, '--http', `127.0.0.1:${controller.httpPort}`]);
    assert.equal(human.code, 0, human.stderr);
    const row = human.stdout.split('\n').find((l) => new RegExp(`^\\s*${victim.nodeId}\\s+127\\.0\\.0\\.1\\s+${victim.brokerPort}\\b`).test(l));
    assert.ok(row !== undefined && /\bfenced\b/.test(row) && row.includes(epochBefore), `a fenced row for broker ${victim.nodeId} in:\n${human.stdout}`);

    // Restarted: /v1/ready answers 503 until the controller has unfenced the new registration.
    const seen: { status: number; ready: Readiness }[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const r = await get(victim.httpPort, '/v1/ready').catch(() => null);
        if (r !== null) seen.push({ status: r.status, ready: JSON.parse(r.body) as Readiness });
        await sleep(10);
      }
    })();
    await victim.restart();
    await until(30_000, 'the restarted broker ready', async () => (seen.some((s) => s.status === 200) ? true : undefined));
    polling = false;
    await poller;
    assert.ok(seen.some((s) => s.status === 503), 'not ready while registering');
    const firstReady = seen.find((s) => s.status === 200)!;
    assert.ok(seen.slice(seen.indexOf(firstReady)).every((s) => s.status === 200), 'ready stays ready');
    const after = await getJson<BrokersView>(controller.httpPort, '/v1/brokers');
    const again = after.brokers.find((b) => b.id === victim.nodeId)!;
    assert.equal(again.brokerEpoch, firstReady.ready.brokerEpoch, 'ready with the epoch the controller holds');
    assert.equal(again.fenced, false);
    assert.ok(BigInt(again.brokerEpoch) > BigInt(epochBefore), 'a new registration');
  } finally {
    client.close();
    await cluster.close();
  }
});

test('http.listener: 127.0.0.1:9644 by default, none when empty, and a taken port fails the start naming it', async () => {
  assert.equal(parseBrokerConfig({}).get('http.listener'), '127.0.0.1:9644');
  const base = { 'node.id': '1', listeners: 'PLAINTEXT://127.0.0.1:0' };
  const none = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config: parseBrokerConfig({ ...base, 'http.listener': '' }) });
  try {
    assert.equal(none.http, null);
  } finally {
    await none.close();
  }
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
  const port = (taken.address() as { port: number }).port;
  try {
    await assert.rejects(startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config: parseBrokerConfig({ ...base, 'http.listener': `127.0.0.1:${port}` }) }),
      (e: NodeJS.ErrnoException) => e.code === 'EADDRINUSE' && e.message.startsWith(`http.listener 127.0.0.1:${port}:`));
    // The Kafka listener it had bound is free again: the same broker starts on a free HTTP port.
    const ok = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config: parseBrokerConfig({ ...base, 'http.listener': '127.0.0.1:0' }) });
    try {
      assert.ok(ok.http !== null && ok.http.port > 0);
      const ready = await until(20_000, 'a single node ready', async () => {
        const r = await get(ok.http!.port, '/v1/ready');
        return r.status === 200 ? JSON.parse(r.body) as Readiness : undefined;
      });
      assert.deepEqual(ready.reasons, []);
    } finally {
      await ok.close();
    }
  } finally {
    taken.close();
  }
});
