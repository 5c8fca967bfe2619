// The schema registry's figures (issue 32's targets), JSON on stdout:
// - lookups by id (GET /schemas/ids/{id}, what a consumer does per new id) per second and their
//   p50/p99, on one node: `logline server` as a child process, driven by `--connections`
//   keep-alive sockets of a raw HTTP/1.1 client (bench/http-load.ts: one request in flight per
//   socket, each answer's bytes checked) over ids spread across `--schemas` schemas; `--rounds`
//   rounds of `--seconds`, alternating with the same load on a bare node:http server answering the
//   same bytes (the floor any node:http server has on this machine at that moment), with the CPU
//   each process used per wall second and the load average;
// - register-existing p99 (POST of a schema the subject has, what a producer does at start), same node;
// - new-version registration p99 on a 3-node cluster (three `logline server` processes), through
//   every node in turn (two of three forward to the writer), per node and the slowest five;
// - broker-side validation's cost on produce throughput at 1 KiB records: Produce requests of
//   pre-built batches (magic byte 0 and a registered id in each value), pipelined on one
//   connection, to a topic with confluent.value.schema.validation and to one without, alternating
//   rounds on the same broker (the same-run ratio; the target is >= 0.95).
//   node dist/bench/registry.js [--seconds 5] [--connections 16] [--schemas 100] [--versions 200] [--rounds 3]
//     [--parts lookups,existing,validation,cluster]
import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { childBroker, processCpuSeconds } from './child-broker.js';
import { keepAliveGetLoad, referenceServer, type LoadTarget } from './http-load.js';
import { ServerProcesses } from './server-processes.js';
import { BrokerConnection } from '../src/client/index.js';
import { ApiKey } from '../src/protocol/index.js';
import { buildRecordBatchSync } from '../src/records/index.js';
import { freePort } from '../src/util/index.js';

const args = process.argv.slice(2);
const arg = (name: string, dflt: string) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1]! : dflt; };
const seconds = Number(arg('--seconds', '5'));
const connections = Number(arg('--connections', '16'));
const schemaCount = Number(arg('--schemas', '100'));
const versionCount = Number(arg('--versions', '200'));
const rounds = Number(arg('--rounds', '3'));
/** Which parts to run (all by default): lookups, existing, validation, cluster. */
const parts = new Set(arg('--parts', 'lookups,existing,validation,cluster').split(','));
const CT = 'application/vnd.schemaregistry.v1+json';

const agent = new Agent({ keepAlive: true, maxSockets: connections });
function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any; text: string }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(`${url}${path}`, { method, agent, headers: { 'content-type': CT } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => { const t = Buffer.concat(chunks).toString(); resolve({ status: res.statusCode!, json: t ? JSON.parse(t) : null, text: t }); });
    });
    req.on('error', reject);
    req.end(text);
  });
}

function percentile(sorted: number[], p: number): number {
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!.toFixed(3));
}
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const schemaOf = (i: number) => JSON.stringify({ type: 'record', name: `R${i}`, namespace: 'bench', fields: [{ name: 'a', type: 'int' }, { name: `f${i}`, type: 'string', default: '' }] });

/** One timed run of GETs against `port`, with the CPU each side used per wall second. */
async function lookupRun(port: number, pid: number, targets: LoadTarget[]): Promise<{ perSec: number; latencies: number[]; serverCpuShare: number | null; loadGeneratorCpuShare: number }> {
  const serverCpu0 = processCpuSeconds(pid);
  const ownCpu0 = process.cpuUsage();
  const r = await keepAliveGetLoad('127.0.0.1', port, targets, connections, seconds);
  const ownCpu = process.cpuUsage(ownCpu0);
  const serverCpu1 = processCpuSeconds(pid);
  if (r.errors > 0) throw new Error(`${r.errors} lookups failed, the first: ${r.firstError}`);
  const wall = r.elapsedMs / 1000;
  return {
    perSec: Math.round(r.requests / wall), latencies: r.latenciesMs,
    serverCpuShare: serverCpu0 === null || serverCpu1 === null ? null : Number(((serverCpu1 - serverCpu0) / wall).toFixed(2)),
    loadGeneratorCpuShare: Number(((ownCpu.user + ownCpu.system) / 1e6 / wall).toFixed(2)),
  };
}

/**
 * Lookups by id on the registry, alternating rounds with the same load on a bare node:http
 * server that answers the same bytes (`referenceServer`): on a shared 2-core machine the other
 * processes move both, so the registry's figure is reported with the floor measured beside it.
 */
async function lookups(url: string, ids: number[], serverPid: number): Promise<object> {
  const port = Number(new URL(url).port);
  // Each answer is checked against the one node:http got for the id before the run.
  const targets: LoadTarget[] = [];
  for (const id of ids) {
    const r = await call(url, 'GET', `/schemas/ids/${id}`);
    if (r.status !== 200) throw new Error(`lookup ${id}: ${r.status}`);
    targets.push({ path: `/schemas/ids/${id}`, expected: Buffer.from(r.text) });
  }
  const reference = await referenceServer(new Map(targets.map((t) => [t.path, t.expected])), CT);
  const registryRuns: Awaited<ReturnType<typeof lookupRun>>[] = [];
  const referenceRuns: Awaited<ReturnType<typeof lookupRun>>[] = [];
  const load0 = loadavg()[0]!;
  try {
    for (let round = 0; round < rounds; round++) {
      registryRuns.push(await lookupRun(port, serverPid, targets));
      referenceRuns.push(await lookupRun(reference.port, reference.pid, targets));
    }
  } finally {
    await reference.close();
  }
  const summary = (runs: typeof registryRuns) => {
    const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
    const best = runs.reduce((a, b) => (b.perSec > a.perSec ? b : a));
    const bestLatencies = [...best.latencies].sort((a, b) => a - b);
    return {
      perSecBest: best.perSec, perSecPerRound: runs.map((r) => r.perSec),
      p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), p99MsOfBestRound: percentile(bestLatencies, 0.99),
      // CPU seconds per wall second: how close each side came to a core of its own.
      serverCpuSharePerRound: runs.map((r) => r.serverCpuShare), loadGeneratorCpuSharePerRound: runs.map((r) => r.loadGeneratorCpuShare),
    };
  };
  const registry = summary(registryRuns);
  const floor = summary(referenceRuns);
  return {
    ...registry, connections, rounds, secondsPerRound: seconds,
    bareNodeHttp: floor, shareOfBareNodeHttp: Number((registry.perSecBest / floor.perSecBest).toFixed(3)),
    loadAverage1mBefore: Number(load0.toFixed(2)), loadAverage1mAfter: Number(loadavg()[0]!.toFixed(2)), cores: availableParallelism(),
    targetPerSec: 20_000, targetP99Ms: 5,
  };
}

async function registerExisting(url: string): Promise<object> {
  const latencies: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const t0 = process.hrtime.bigint();
    const r = await call(url, 'POST', `/subjects/bench-${i % schemaCount}-value/versions`, { schema: schemaOf(i % schemaCount) });
    latencies.push(ms(t0));
    if (r.status !== 200) throw new Error(`register existing: ${r.status}`);
  }
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), targetP99Ms: 10 };
}

/** Produce throughput to `topic` for `seconds`: pre-built 1 KiB-record batches, 8 requests in flight. */
async function produceRate(conn: BrokerConnection, topic: string, batch: Buffer, recordsPerBatch: number): Promise<number> {
  const deadline = Date.now() + seconds * 1000;
  let sent = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (Date.now() < deadline) {
      const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 30_000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batch }] }] });
      const code = r.responses[0].partitionResponses[0].errorCode;
      if (code !== 0) throw new Error(`produce to ${topic}: error ${code}`);
      sent += recordsPerBatch;
    }
  }));
  return Math.round(sent / seconds);
}

async function validationCost(brokerPort: number, url: string): Promise<object> {
  // The validated topic's subject holds the id every value carries.
  const { id } = (await call(url, 'POST', '/subjects/bench-valid-value/versions', { schema: schemaOf(0) })).json as { id: number };
  const conn = await BrokerConnection.open({ host: '127.0.0.1', port: brokerPort });
  try {
    for (const [name, validated] of [['bench-valid', true], ['bench-plain', false]] as const) {
      const r = await conn.send(ApiKey.CreateTopics, 7, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [],
        configs: validated ? [{ name: 'confluent.value.schema.validation', value: 'true' }] : [] }], timeoutMs: 10_000, validateOnly: false });
      if (r.topics[0].errorCode !== 0) throw new Error(`create ${name}: ${r.topics[0].errorMessage}`);
    }
    const value = Buffer.alloc(1024, 97);
    value.writeUInt8(0, 0);
    value.writeInt32BE(id, 1);
    const recordsPerBatch = 100;
    const batch = buildRecordBatchSync({ records: Array.from({ length: recordsPerBatch }, () => ({ key: null, value })) });
    const runs: { validation: boolean; recordsPerSec: number }[] = [];
    for (let round = 0; round < rounds; round++) {
      runs.push({ validation: false, recordsPerSec: await produceRate(conn, 'bench-plain', batch, recordsPerBatch) });
      runs.push({ validation: true, recordsPerSec: await produceRate(conn, 'bench-valid', batch, recordsPerBatch) });
    }
    const rates = (v: boolean) => runs.filter((r) => r.validation === v).map((r) => r.recordsPerSec).sort((a, b) => a - b);
    const best = (v: boolean) => rates(v).at(-1)!;
    // Both topics' first rounds run fast (before writeback settles), so one early round decides the
    // best-of ratio; the median of the interleaved rounds is the figure to hold against the target.
    const median = (v: boolean) => rates(v)[Math.floor(rates(v).length / 2)]!;
    return {
      recordBytes: 1024, recordsPerBatch, runs, offRecordsPerSecBest: best(false), onRecordsPerSecBest: best(true), onShareOfOff: Number((best(true) / best(false)).toFixed(3)),
      offRecordsPerSecMedian: median(false), onRecordsPerSecMedian: median(true), onShareOfOffMedian: Number((median(true) / median(false)).toFixed(3)), target: 0.95,
    };
  } finally {
    conn.close();
  }
}

/**
 * New versions on three `logline server` processes (a process each, as deployed; none shares the
 * load generator's event loop), through every node in turn: two of three forward to the writer.
 */
async function newVersionsOnCluster(): Promise<object> {
  const cluster = await ServerProcesses.start(3, {});
  try {
    const urls = cluster.nodes.map((n) => {
      const m = /schema registry listening on (http:\/\/[\d.]+:\d+)/.exec(n.log);
      if (!m) throw new Error(`node ${n.id} logged no registry address`);
      return m[1]!;
    });
    if ((await call(urls[0]!, 'PUT', '/config', { compatibility: 'NONE' })).status !== 200) throw new Error('config');
    // The writer leads _schemas-0 (created by the write above); warm every node's path to it first.
    for (let i = 0; i < 6; i++) {
      const r = await call(urls[i % 3]!, 'POST', '/subjects/warm-value/versions', { schema: schemaOf(20_000 + i) });
      if (r.status !== 200) throw new Error(`register: ${r.status} ${JSON.stringify(r.json)}`);
    }
    const load0 = loadavg()[0]!;
    const byNode: number[][] = [[], [], []];
    for (let i = 0; i < versionCount; i++) {
      const t0 = process.hrtime.bigint();
      const r = await call(urls[i % 3]!, 'POST', '/subjects/evolving-value/versions', { schema: schemaOf(10_000 + i) });
      byNode[i % 3]!.push(ms(t0));
      if (r.status !== 200) throw new Error(`register: ${r.status} ${JSON.stringify(r.json)}`);
    }
    const latencies = byNode.flat().sort((a, b) => a - b);
    const perNode = byNode.map((l) => { const sorted = [...l].sort((a, b) => a - b); return { p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99) }; });
    return {
      registrations: latencies.length, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99),
      slowestMs: latencies.slice(-5).map((l) => Number(l.toFixed(1))),
      // One node is the writer (its answers need no forward); which one the election chose shows here.
      perNode, loadAverage1mBefore: Number(load0.toFixed(2)), loadAverage1mAfter: Number(loadavg()[0]!.toFixed(2)), targetP99Ms: 50,
    };
  } finally {
    await cluster.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'logline-bench-registry-'));
try {
  const registryPort = await freePort();
  const broker = await childBroker(dir, { 'schema.registry.listener': `127.0.0.1:${registryPort}` });
  const url = `http://127.0.0.1:${registryPort}`;
  let single: object;
  try {
    const ids: number[] = [];
    for (let i = 0; i < schemaCount; i++) {
      const r = await call(url, 'POST', `/subjects/bench-${i}-value/versions`, { schema: schemaOf(i) });
      if (r.status !== 200) throw new Error(`register ${i}: ${r.status} ${JSON.stringify(r.json)}`);
      ids.push(r.json.id);
    }
    single = {
      ...(parts.has('lookups') ? { lookupById: await lookups(url, ids, broker.pid) } : {}),
      ...(parts.has('existing') ? { registerExisting: await registerExisting(url) } : {}),
      ...(parts.has('validation') ? { validationProduce: await validationCost(broker.port, url) } : {}),
    };
  } finally {
    await broker.close();
  }
  const cluster = parts.has('cluster') ? { newVersionThreeNodes: await newVersionsOnCluster() } : {};
  console.log(JSON.stringify({ bench: 'registry', seconds, schemas: schemaCount, ...single, ...cluster }, null, 2));
} finally {
  agent.destroy();
  rmSync(dir, { recursive: true, force: true });
}
