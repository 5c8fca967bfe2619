// bench/link: mirror topics that keep offsets (a cluster link, issue 35 part 2) between two
// single-node clusters: the link's catch-up rate against the single-node produce rate measured in
// the same run, and replication latency at a steady rate (issue 35's target for mirror topics: at
// 20 MB/s steady, p99 <= 200 ms).
//   npm run bench:link                    (one JSON object on stdout, progress on stderr)
//   LOGLINE_BENCH_RECORDS=200000          (1 KiB records over 4 partitions for the throughput part)
//   LOGLINE_BENCH_STEADY_SECONDS=20       (length of the steady part)
//   LOGLINE_BENCH_STEADY_MBPS=20
//
// Clusters A (source) and B (target) are child `logline server` processes; B's partition leaders
// fetch from A (the link fetchers run inside B). "produce": N records written to A as fast as four
// partitions take them (acks=1, 500-record batches). "link": the link is created and `bench`
// mirrored only then; the rate from the first record on B to the last. "steady": records written to
// A at a fixed rate with their send time as timestamp; a reader on B takes each record's arrival
// minus that timestamp (so the figure includes the reader's own fetch wait, an overestimate).
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
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

const say = (m: string): void => { process.stderr.write(`bench:link ${m}\n`); };
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

async function main(): Promise<void> {
  const dirs = [mkdtempSync(join(tmpdir(), 'bench-link-a-')), mkdtempSync(join(tmpdir(), 'bench-link-b-'))];
  const a = await childBroker(dirs[0]!, { 'num.partitions': String(PARTITIONS) });
  const b = await childBroker(dirs[1]!, { 'num.partitions': String(PARTITIONS) });
  const aBootstrap = `127.0.0.1:${a.port}`;
  const bBootstrap = `127.0.0.1:${b.port}`;
  const aClient = new ClusterClient({ bootstrap: aBootstrap });
  const bClient = new ClusterClient({ bootstrap: bBootstrap });
  try {
    const created = await aClient.admin(ApiKey.CreateTopics, { topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }, 7);
    if (created.topics[0].errorCode !== 0) throw new Error(`create ${TOPIC}: ${created.topics[0].errorCode}`);
    await aClient.retrying(() => aClient.topic(TOPIC));
    const conns = await Promise.all(Array.from({ length: PARTITIONS }, () => BrokerConnection.open({ host: '127.0.0.1', port: a.port, clientId: 'bench-link' })));

    // 1. The single-node produce rate.
    say(`produce: ${RECORDS} records of ${RECORD_BYTES} B to A`);
    const perPartition = Math.ceil(RECORDS / PARTITIONS);
    const t0 = performance.now();
    await Promise.all(conns.map((c, p) => produce(c, p, perPartition, Date.now)));
    const produceSeconds = (performance.now() - t0) / 1000;
    const total = perPartition * PARTITIONS;
    const produceRate = total / produceSeconds;

    // 2. The link copies them: B's leader of each partition fetches from A's.
    say('link: creating link bench-link on B and mirroring bench');
    const aCpu0 = processCpuSeconds(a.pid) ?? 0;
    const bCpu0 = processCpuSeconds(b.pid) ?? 0;
    const link = await bClient.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 64, resourceName: 'bench-link', configs: [{ name: 'bootstrap.servers', configOperation: 0, value: aBootstrap }] }], validateOnly: false }, 1);
    if (link.responses[0].errorCode !== 0) throw new Error(`link create: ${link.responses[0].errorMessage}`);
    const mirrored = await bClient.admin(ApiKey.CreateTopics, { topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [{ name: 'link.name', value: 'bench-link' }] }], timeoutMs: 30_000, validateOnly: false }, 7);
    if (mirrored.topics[0].errorCode !== 0) throw new Error(`mirror ${TOPIC}: ${mirrored.topics[0].errorMessage}`);
    const remote = TOPIC;
    const until = Date.now() + TIMEOUT_MS;
    let first = 0;
    let firstAt = 0;
    for (;;) {
      if (Date.now() > until) throw new Error(`the link did not copy ${total} records within ${TIMEOUT_MS} ms`);
      const n = await endOffsets(bClient, remote).catch(() => 0);
      if (n > 0 && firstAt === 0) { first = n; firstAt = performance.now(); }
      if (n >= total) break;
      await sleep(20);
    }
    const mirrorSeconds = (performance.now() - firstAt) / 1000;
    const mirrorRate = (total - first) / Math.max(mirrorSeconds, 1e-3);
    const targetCpu = (processCpuSeconds(b.pid) ?? bCpu0) - bCpu0;
    say(`link: ${total} records on B; ${round(mirrorRate, 0)} records/s after the first`);

    // 3. Replication latency at a steady rate.
    const ratePerSecond = (STEADY_MBPS * 1024 * 1024) / RECORD_BYTES;
    const tickMs = 50;
    const perTick = Math.max(1, Math.round((ratePerSecond * tickMs) / 1000 / PARTITIONS));
    say(`steady: ${STEADY_MBPS} MB/s (${perTick * PARTITIONS} records every ${tickMs} ms) for ${STEADY_SECONDS} s`);
    const target = new Cluster({ bootstrap: bBootstrap, clientId: 'bench-link-reader' });
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
      bench: 'link',
      machine: { cpus: cpus().length, loadAverage: loadavg().map((x) => round(x, 2)) },
      recordBytes: RECORD_BYTES, partitions: PARTITIONS, records: total,
      produce: { recordsPerSecond: round(produceRate, 0), mbPerSecond: round((produceRate * RECORD_BYTES) / 1048576) },
      link: {
        recordsPerSecond: round(mirrorRate, 0), mbPerSecond: round((mirrorRate * RECORD_BYTES) / 1048576),
        cpuSecondsTargetBroker: round(targetCpu, 2),
        cpuSecondsSourceBroker: round((processCpuSeconds(a.pid) ?? aCpu0) - aCpu0, 2),
      },
      linkOverProduce: round(mirrorRate / produceRate, 3),
      steady: {
        targetMBps: STEADY_MBPS, offeredMBps: round(offeredMBps, 2), seconds: STEADY_SECONDS, sent: sentSteady, receivedOnB: received, lateTicks: late,
        replicationLatencyMs: { p50: latency.percentile(50), p99: latency.percentile(99), max: latency.percentile(100) },
      },
      targets: { steadyP99Ms: 200 },
    };
    console.log(JSON.stringify(result, null, 2));
    for (const c of conns) c.close();
  } finally {
    aClient.close();
    bClient.close();
    // The target first: its link fetchers would otherwise retry against the stopped source.
    await b.close();
    await a.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

await main();
