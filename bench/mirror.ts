// bench/mirror: MirrorMaker 2 throughput and replication latency between two single-node clusters,
// against the single-node produce rate measured in the same run (issue 35's targets: mirror ≥ 50%
// of produce; at 20 MB/s steady, replication latency p99 ≤ 1 s).
//   npm run bench:mirror                  (one JSON object on stdout, progress on stderr)
//   LOGLINE_BENCH_RECORDS=200000          (1 KiB records over 4 partitions for the throughput part)
//   LOGLINE_BENCH_STEADY_SECONDS=20       (length of the 20 MB/s part)
//   LOGLINE_BENCH_STEADY_MBPS=20
//
// Clusters A and B are child `logline server` processes, the mirror a child `logline mirror`
// process (MirrorMaker 2's dedicated mode: its own event loop), the load generator and the reader
// of B this process. "produce": N records written to A as fast as four partitions take them
// (acks=1, 500-record batches, one request in flight per partition). "mirror": the same N records
// copied to B's A.bench, rate from the first record on B to the last. "steady": records written to
// A at a fixed rate with their send time as timestamp; a reader on B takes each record's arrival
// minus that timestamp (so the figure includes the reader's own fetch wait, an overestimate).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { BrokerConnection, Cluster, ClusterClient, fetchCommitted, listOffsets } from '../src/client/index.js';
import { ApiKey } from '../src/protocol/index.js';
import { buildRecordBatch } from '../src/records/index.js';
import { Histogram, parsePartitionKey } from '../src/util/index.js';
import { childBroker, processCpuSeconds } from './child-broker.js';

const TOPIC = 'bench';
const PARTITIONS = 4;
const RECORDS = Number(process.env.LOGLINE_BENCH_RECORDS ?? '200000');
const STEADY_SECONDS = Number(process.env.LOGLINE_BENCH_STEADY_SECONDS ?? '20');
const STEADY_MBPS = Number(process.env.LOGLINE_BENCH_STEADY_MBPS ?? '20');
const RECORD_BYTES = 1024;
const BATCH = 500;
const TIMEOUT_MS = 300_000;

const say = (m: string): void => { process.stderr.write(`bench:mirror ${m}\n`); };
const round = (n: number, digits = 1): number => Number(n.toFixed(digits));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function produce(conn: BrokerConnection, partition: number, count: number, timestamp: () => number): Promise<void> {
  const value = Buffer.alloc(RECORD_BYTES, 0x61);
  for (let sent = 0; sent < count; sent += BATCH) {
    const n = Math.min(BATCH, count - sent);
    const ts = timestamp();
    const records = await buildRecordBatch({ records: Array.from({ length: n }, () => ({ value, timestamp: ts })) });
    const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 30_000, topicData: [{ name: TOPIC, partitionData: [{ index: partition, records }] }] });
    const code = r.responses[0].partitionResponses[0].errorCode;
    if (code !== 0) throw new Error(`produce to ${TOPIC}-${partition} failed with error ${code}`);
  }
}

async function endOffsets(client: ClusterClient, topic: string): Promise<number> {
  const found = await listOffsets(client, Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition })), -1n, { skipUnknown: true });
  let n = 0;
  for (const v of found.values()) n += Number(v);
  return n;
}

function startMirror(configFile: string): { pid: number; stop(): Promise<void> } {
  const bin = fileURLToPath(new URL('../../bin/logline.js', import.meta.url));
  const child = spawn(process.execPath, [bin, 'mirror', '--config', configFile, '--status-listener', '127.0.0.1:0', '--offset-flush-interval-ms', '1000', '--log-level', 'WARN'],
    { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function main(): Promise<void> {
  const dirs = [mkdtempSync(join(tmpdir(), 'bench-mirror-a-')), mkdtempSync(join(tmpdir(), 'bench-mirror-b-'))];
  const a = await childBroker(dirs[0]!, { 'num.partitions': String(PARTITIONS) });
  const b = await childBroker(dirs[1]!, { 'num.partitions': String(PARTITIONS) });
  const aBootstrap = `127.0.0.1:${a.port}`;
  const bBootstrap = `127.0.0.1:${b.port}`;
  const aClient = new ClusterClient({ bootstrap: aBootstrap });
  const bClient = new ClusterClient({ bootstrap: bBootstrap });
  let mirror: { pid: number; stop(): Promise<void> } | null = null;
  try {
    const created = await aClient.admin(ApiKey.CreateTopics, { topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }, 7);
    if (created.topics[0].errorCode !== 0) throw new Error(`create ${TOPIC}: ${created.topics[0].errorCode}`);
    await aClient.retrying(() => aClient.topic(TOPIC));
    const conns = await Promise.all(Array.from({ length: PARTITIONS }, () => BrokerConnection.open({ host: '127.0.0.1', port: a.port, clientId: 'bench-mirror' })));

    // 1. The single-node produce rate.
    say(`produce: ${RECORDS} records of ${RECORD_BYTES} B to A`);
    const perPartition = Math.ceil(RECORDS / PARTITIONS);
    const t0 = performance.now();
    await Promise.all(conns.map((c, p) => produce(c, p, perPartition, Date.now)));
    const produceSeconds = (performance.now() - t0) / 1000;
    const total = perPartition * PARTITIONS;
    const produceRate = total / produceSeconds;

    // 2. The mirror copies them.
    const config = join(dirs[0]!, 'mm2.properties');
    writeFileSync(config, [
      'clusters = A, B', `A.bootstrap.servers = ${aBootstrap}`, `B.bootstrap.servers = ${bBootstrap}`, 'A->B.enabled = true', `A->B.topics = ${TOPIC}`,
      'replication.factor = 1', 'offset-syncs.topic.replication.factor = 1', 'heartbeats.topic.replication.factor = 1',
      'checkpoints.topic.replication.factor = 1', 'offset.storage.replication.factor = 1', 'refresh.topics.interval.seconds = 1',
      'emit.heartbeats.enabled = false', 'emit.checkpoints.enabled = false', 'sync.group.offsets.enabled = false', '',
    ].join('\n'));
    say('mirror: starting logline mirror A->B');
    const aCpu0 = processCpuSeconds(a.pid) ?? 0;
    mirror = startMirror(config);
    const mirrorPid = mirror.pid;
    const remote = `A.${TOPIC}`;
    const until = Date.now() + TIMEOUT_MS;
    let first = 0;
    let firstAt = 0;
    for (;;) {
      if (Date.now() > until) throw new Error(`the mirror did not copy ${total} records within ${TIMEOUT_MS} ms`);
      const n = await endOffsets(bClient, remote).catch(() => 0);
      if (n > 0 && firstAt === 0) { first = n; firstAt = performance.now(); }
      if (n >= total) break;
      await sleep(20);
    }
    const mirrorSeconds = (performance.now() - firstAt) / 1000;
    const mirrorRate = (total - first) / Math.max(mirrorSeconds, 1e-3);
    const mirrorCpu = processCpuSeconds(mirrorPid);
    say(`mirror: ${total} records on B; ${round(mirrorRate, 0)} records/s after the first`);

    // 3. Replication latency at a steady rate.
    const ratePerSecond = (STEADY_MBPS * 1024 * 1024) / RECORD_BYTES;
    const tickMs = 50;
    const perTick = Math.max(1, Math.round((ratePerSecond * tickMs) / 1000 / PARTITIONS));
    say(`steady: ${STEADY_MBPS} MB/s (${perTick * PARTITIONS} records every ${tickMs} ms) for ${STEADY_SECONDS} s`);
    const target = new Cluster({ bootstrap: bBootstrap, clientId: 'bench-mirror-reader' });
    const positions = new Map<number, number>();
    const ends = await listOffsets(bClient, Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: remote, partition })), -1n);
    for (const [key, v] of ends) positions.set(parsePartitionKey(key).partition, Number(v));
    const latency = new Histogram();
    let stop = false;
    let received = 0;
    const reader = (async () => {
      while (!stop) {
        const fetched = await fetchCommitted(target, new Map([[remote, positions]]), { maxWaitMs: 100, partitionMaxBytes: 1 << 20 });
        const now = Date.now();
        for (const f of fetched) {
          for (const r of f.records) latency.record(Math.max(0, now - r.timestamp));
          received += f.records.length;
          positions.set(f.partition, f.next);
        }
      }
    })();
    const steadyStart = performance.now();
    let ticks = 0;
    let late = 0;
    while (performance.now() - steadyStart < STEADY_SECONDS * 1000) {
      const due = steadyStart + ticks * tickMs;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait); else late++;
      await Promise.all(conns.map((c, p) => produce(c, p, perTick, Date.now)));
      ticks++;
    }
    const sentSteady = ticks * perTick * PARTITIONS;
    const offeredMBps = (sentSteady * RECORD_BYTES) / (1024 * 1024) / ((performance.now() - steadyStart) / 1000);
    const steadyUntil = Date.now() + 60_000;
    while (received < sentSteady && Date.now() < steadyUntil) await sleep(50);
    stop = true;
    await reader;
    target.close();

    const result = {
      bench: 'mirror',
      machine: { cpus: cpus().length, loadAverage: loadavg().map((x) => round(x, 2)) },
      recordBytes: RECORD_BYTES, partitions: PARTITIONS, records: total,
      produce: { recordsPerSecond: round(produceRate, 0), mbPerSecond: round((produceRate * RECORD_BYTES) / 1048576) },
      mirror: {
        recordsPerSecond: round(mirrorRate, 0), mbPerSecond: round((mirrorRate * RECORD_BYTES) / 1048576),
        cpuSecondsMirrorProcess: mirrorCpu === null ? null : round(mirrorCpu, 2),
        cpuSecondsSourceBroker: round((processCpuSeconds(a.pid) ?? aCpu0) - aCpu0, 2),
      },
      mirrorOverProduce: round(mirrorRate / produceRate, 3),
      steady: {
        targetMBps: STEADY_MBPS, offeredMBps: round(offeredMBps, 2), seconds: STEADY_SECONDS, sent: sentSteady, receivedOnB: received, lateTicks: late,
        replicationLatencyMs: { p50: latency.percentile(50), p99: latency.percentile(99), max: latency.percentile(100) },
      },
      targets: { mirrorOverProduce: 0.5, steadyP99Ms: 1000 },
    };
    console.log(JSON.stringify(result, null, 2));
    for (const c of conns) c.close();
  } finally {
    await mirror?.stop();
    aClient.close();
    bClient.close();
    await a.close();
    await b.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

await main();
