// What bench:mirror and bench:link share: two single-node clusters A and B (child `logline server`
// processes) with topic `bench` on A, the single-node produce rate, the catch-up rate of a copy to
// B, and replication latency at a steady rate.
//   LOGLINE_BENCH_RECORDS=200000          (1 KiB records over 4 partitions for the throughput part)
//   LOGLINE_BENCH_STEADY_SECONDS=20       (length of the steady part)
//   LOGLINE_BENCH_STEADY_MBPS=20
// "produce": N records written to A as fast as four partitions take them (acks=1, 500-record
// batches, one request in flight per partition). "copy": the rate from the first record on B to the
// last. "steady": records written to A at a fixed rate with their send time as timestamp; a reader
// on B takes each record's arrival minus that timestamp (so the figure includes the reader's own
// fetch wait, an overestimate).
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BrokerConnection, Cluster, ClusterClient, fetchCommitted, listOffsets } from '../src/client/index.js';
import { ApiKey } from '../src/protocol/index.js';
import { buildRecordBatch } from '../src/records/index.js';
import { Histogram, parsePartitionKey } from '../src/util/index.js';
import { childBroker } from './child-broker.js';

export const TOPIC = 'bench';
export const PARTITIONS = 4;
export const RECORDS = Number(process.env.LOGLINE_BENCH_RECORDS ?? '200000');
export const STEADY_SECONDS = Number(process.env.LOGLINE_BENCH_STEADY_SECONDS ?? '20');
export const STEADY_MBPS = Number(process.env.LOGLINE_BENCH_STEADY_MBPS ?? '20');
export const RECORD_BYTES = 1024;
const BATCH = 500;
const TIMEOUT_MS = 300_000;

export const round = (n: number, digits = 1): number => Number(n.toFixed(digits));
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const machineNow = () => ({ cpus: cpus().length, loadAverage: loadavg().map((x) => round(x, 2)) });

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

export interface TwoClusters {
  a: { port: number; pid: number }; b: { port: number; pid: number };
  aBootstrap: string; bBootstrap: string; aClient: ClusterClient; bClient: ClusterClient;
  /** One connection to A per partition, for the load. */
  conns: BrokerConnection[];
  /** A scratch directory removed at the end. */
  dir: string;
  say(m: string): void;
}

/** A and B started, `bench` created on A; everything stopped and removed after `fn` (B first when `targetFirst`). */
export async function withTwoClusters(name: string, fn: (c: TwoClusters) => Promise<void>, options: { targetFirst?: boolean } = {}): Promise<void> {
  const dirs = [mkdtempSync(join(tmpdir(), `bench-${name}-a-`)), mkdtempSync(join(tmpdir(), `bench-${name}-b-`))];
  const a = await childBroker(dirs[0]!, { 'num.partitions': String(PARTITIONS) });
  const b = await childBroker(dirs[1]!, { 'num.partitions': String(PARTITIONS) });
  const aBootstrap = `127.0.0.1:${a.port}`;
  const bBootstrap = `127.0.0.1:${b.port}`;
  const aClient = new ClusterClient({ bootstrap: aBootstrap });
  const bClient = new ClusterClient({ bootstrap: bBootstrap });
  let conns: BrokerConnection[] = [];
  try {
    const created = await aClient.admin(ApiKey.CreateTopics, { topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }, 7);
    if (created.topics[0].errorCode !== 0) throw new Error(`create ${TOPIC}: ${created.topics[0].errorCode}`);
    await aClient.retrying(() => aClient.topic(TOPIC));
    conns = await Promise.all(Array.from({ length: PARTITIONS }, () => BrokerConnection.open({ host: '127.0.0.1', port: a.port, clientId: `bench-${name}` })));
    await fn({ a, b, aBootstrap, bBootstrap, aClient, bClient, conns, dir: dirs[0]!, say: (m) => { process.stderr.write(`bench:${name} ${m}\n`); } });
  } finally {
    for (const c of conns) c.close();
    aClient.close();
    bClient.close();
    // The target first when it copies by fetching: its fetchers would otherwise retry against the stopped source.
    for (const s of options.targetFirst ? [b, a] : [a, b]) await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

/** N records written to A as fast as its partitions take them: how many, and the rate. */
export async function measureProduce(c: TwoClusters): Promise<{ total: number; recordsPerSecond: number }> {
  c.say(`produce: ${RECORDS} records of ${RECORD_BYTES} B to A`);
  const perPartition = Math.ceil(RECORDS / PARTITIONS);
  const t0 = performance.now();
  await Promise.all(c.conns.map((conn, p) => produce(conn, p, perPartition, Date.now)));
  const total = perPartition * PARTITIONS;
  return { total, recordsPerSecond: total / ((performance.now() - t0) / 1000) };
}

/** Waits until B's `remote` holds `total` records; the rate from the first record on B to the last. */
export async function measureCopy(c: TwoClusters, remote: string, total: number, what: string): Promise<number> {
  const until = Date.now() + TIMEOUT_MS;
  let first = 0;
  let firstAt = 0;
  for (;;) {
    if (Date.now() > until) throw new Error(`the ${what} did not copy ${total} records within ${TIMEOUT_MS} ms`);
    const n = await endOffsets(c.bClient, remote).catch(() => 0);
    if (n > 0 && firstAt === 0) { first = n; firstAt = performance.now(); }
    if (n >= total) break;
    await sleep(20);
  }
  const rate = (total - first) / Math.max((performance.now() - firstAt) / 1000, 1e-3);
  c.say(`${what}: ${total} records on B; ${round(rate, 0)} records/s after the first`);
  return rate;
}

/** Records written to A at STEADY_MBPS for STEADY_SECONDS, each one's latency to a reader of B's `remote`. */
export async function measureSteady(c: TwoClusters, remote: string) {
  const ratePerSecond = (STEADY_MBPS * 1024 * 1024) / RECORD_BYTES;
  const tickMs = 50;
  const perTick = Math.max(1, Math.round((ratePerSecond * tickMs) / 1000 / PARTITIONS));
  c.say(`steady: ${STEADY_MBPS} MB/s (${perTick * PARTITIONS} records every ${tickMs} ms) for ${STEADY_SECONDS} s`);
  const target = new Cluster({ bootstrap: c.bBootstrap, clientId: 'bench-reader' });
  const positions = new Map<number, number>();
  const ends = await listOffsets(c.bClient, Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: remote, partition })), -1n);
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
    await Promise.all(c.conns.map((conn, p) => produce(conn, p, perTick, Date.now)));
    ticks++;
  }
  const sent = ticks * perTick * PARTITIONS;
  const offeredMBps = (sent * RECORD_BYTES) / (1024 * 1024) / ((performance.now() - steadyStart) / 1000);
  const steadyUntil = Date.now() + 60_000;
  while (received < sent && Date.now() < steadyUntil) await sleep(50);
  stop = true;
  await reader;
  target.close();
  return {
    targetMBps: STEADY_MBPS, offeredMBps: round(offeredMBps, 2), seconds: STEADY_SECONDS, sent, receivedOnB: received, lateTicks: late,
    replicationLatencyMs: { p50: latency.percentile(50), p99: latency.percentile(99), max: latency.percentile(100) },
  };
}
