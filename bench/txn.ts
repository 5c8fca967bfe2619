// bench/txn: what idempotence and transactions cost on one node.
//   npm run bench:txn                 (one JSON object on stdout, progress on stderr)
//   LOGLINE_BENCH_SECONDS=10          (length of each measured transaction window)
//   LOGLINE_BENCH_RECORDS=300000      (records per produce run, idempotence on/off)
// The broker is `logline server` in a child process on a fresh data directory.
// 1. Produce throughput with idempotence off and on: 1 KiB records in 500-record batches over 6
//    partitions, acks=all, 8 requests in flight, every batch stamped and CRC'd by the client in
//    both modes; six runs each in ABBA order; the medians are compared, with the broker's CPU
//    seconds per GB appended.
// 2. Transactions: P producers (each its own transactional id and connection) loop
//    AddPartitionsToTxn → Produce (one batch of 10 records, acks=all) → EndTxn(commit), for a
//    window bounded in time and count after a warm-up. Reported: committed transactions/s, EndTxn
//    (commit) latency and whole-transaction latency percentiles. Afterwards every partition's last
//    stable offset must equal its high watermark, and the high watermarks must add up to 11
//    offsets per committed transaction (10 records + the COMMIT marker).
// The load generator and the broker share this machine's cores (`machine.cpus`).
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { BrokerConnection } from '../src/client/index.js';
import { ApiKey, ErrorCode } from '../src/protocol/index.js';
import { buildRecordBatch, RecordBatchView } from '../src/records/index.js';
import { Histogram } from '../src/util/index.js';
import { childBroker, processCpuSeconds } from './child-broker.js';

const WINDOW_MS = Number(process.env.LOGLINE_BENCH_SECONDS ?? '10') * 1000;
const WARMUP_MS = 1000;
const PRODUCE_RECORDS = Number(process.env.LOGLINE_BENCH_RECORDS ?? '300000');
const TXN_PARTITIONS = 12;
const RECORDS_PER_TXN = 10;
const PRODUCER_COUNTS = [1, 16, 64];
/** A transaction loop stops after this many, whatever the clock says. */
const TXNS_PER_PRODUCER_MAX = 1_000_000;
const TARGET_TXN_PER_S = 1000;
const TARGET_IDEMPOTENCE_COST = 0.05;
const IDEMPOTENCE_RUNS = 6;
const PRODUCE_PARTITIONS = 6;
const PRODUCE_BATCH_RECORDS = 500;
const PRODUCE_IN_FLIGHT = 8;

const say = (m: string) => process.stderr.write(`[bench:txn] ${m}\n`);
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * One produce run: 500-record batches of 1 KiB records round-robin over the partitions, 8 requests
 * in flight, acks=all. Each request gets its own copy of the batch, stamped with the producer id,
 * epoch and sequence (or none) and its CRC recomputed, so both modes do the same client work (a
 * real producer builds every batch) and what differs is the broker's.
 */
async function produceRun(port: number, brokerPid: number, topic: string, idempotent: boolean): Promise<{ mbPerSec: number; p99Ms: number; brokerCpuSecondsPerGB: number }> {
  const conn = await BrokerConnection.open({ host: '127.0.0.1', port, clientId: 'bench-idem', requestTimeoutMs: 30_000 });
  try {
    await conn.send(ApiKey.CreateTopics, 7, { topics: [{ name: topic, numPartitions: PRODUCE_PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false });
    let producerId = -1;
    if (idempotent) {
      const r = await conn.send(ApiKey.InitProducerId, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
      producerId = Number(r.producerId);
    }
    const value = Buffer.alloc(1024);
    for (let i = 0; i < value.length; i++) value[i] = 97 + ((i * 7919) % 26);
    const template = await buildRecordBatch({ records: Array.from({ length: PRODUCE_BATCH_RECORDS }, () => ({ value })) });
    const sequence = new Array<number>(PRODUCE_PARTITIONS).fill(0);
    const latencyUs = new Histogram();
    const requests = Math.ceil(PRODUCE_RECORDS / PRODUCE_BATCH_RECORDS);
    let next = 0;
    const cpu0 = processCpuSeconds(brokerPid) ?? 0;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: PRODUCE_IN_FLIGHT }, async () => {
      while (next < requests) {
        const partition = next++ % PRODUCE_PARTITIONS;
        const records = Buffer.from(template);
        new RecordBatchView(records).setProducer(producerId, idempotent ? 0 : -1, idempotent ? sequence[partition]! : -1);
        if (idempotent) sequence[partition]! += PRODUCE_BATCH_RECORDS;
        const start = performance.now();
        const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] });
        const code = r.responses[0].partitionResponses[0].errorCode;
        if (code !== 0) throw new Error(`Produce: error ${code}`);
        latencyUs.record(Math.round((performance.now() - start) * 1000));
      }
    }));
    const seconds = (performance.now() - t0) / 1000;
    const bytes = requests * PRODUCE_BATCH_RECORDS * 1024;
    const cpu = (processCpuSeconds(brokerPid) ?? 0) - cpu0;
    return { mbPerSec: round(bytes / seconds / 1e6, 1), p99Ms: round(latencyUs.percentile(99) / 1000), brokerCpuSecondsPerGB: round(cpu / (bytes / 1e9), 3) };
  } finally {
    conn.close();
  }
}

async function idempotenceCost(port: number, brokerPid: number): Promise<Record<string, unknown>> {
  const runs: { idempotent: boolean; mbPerSec: number; p99Ms: number; brokerCpuSecondsPerGB: number }[] = [];
  // ABBA order (off, on, on, off, ...) so a drift of the machine over the runs (page cache, disk,
  // other load) falls on both sides alike.
  for (let i = 0; i < IDEMPOTENCE_RUNS; i++) {
    for (const idem of i % 2 === 0 ? [false, true] : [true, false]) {
      const r = await produceRun(port, brokerPid, `bench-idem-${idem ? 'on' : 'off'}-${i}`, idem);
      runs.push({ idempotent: idem, ...r });
      say(`produce acks=all idempotence ${idem ? 'on ' : 'off'}: ${r.mbPerSec} MB/s, p99 ${r.p99Ms} ms, broker ${r.brokerCpuSecondsPerGB} CPU s/GB`);
    }
  }
  const pick = (idem: boolean, k: 'mbPerSec' | 'brokerCpuSecondsPerGB') => runs.filter((r) => r.idempotent === idem).map((r) => r[k]);
  const cost = 1 - median(pick(true, 'mbPerSec')) / median(pick(false, 'mbPerSec'));
  return {
    recordsPerRun: PRODUCE_RECORDS, recordBytes: 1024, batchRecords: PRODUCE_BATCH_RECORDS, partitions: PRODUCE_PARTITIONS, inFlight: PRODUCE_IN_FLIGHT, acks: 'all',
    runs, medianMbPerSecOff: median(pick(false, 'mbPerSec')), medianMbPerSecOn: median(pick(true, 'mbPerSec')),
    medianBrokerCpuSecondsPerGBOff: median(pick(false, 'brokerCpuSecondsPerGB')), medianBrokerCpuSecondsPerGBOn: median(pick(true, 'brokerCpuSecondsPerGB')),
    slowdown: round(cost, 3), targetSlowdownMax: TARGET_IDEMPOTENCE_COST, met: cost <= TARGET_IDEMPOTENCE_COST,
  };
}

async function retrying<T extends { errorCode: number }>(what: string, send: () => Promise<T>): Promise<T> {
  const retriable = new Set<number>([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR, ErrorCode.CONCURRENT_TRANSACTIONS]);
  for (let attempt = 0; attempt < 200; attempt++) {
    const r = await send();
    if (r.errorCode === 0) return r;
    if (!retriable.has(r.errorCode)) throw new Error(`${what}: error ${r.errorCode}`);
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`${what}: still failing after 200 attempts`);
}

interface TxnRun { producers: number; committed: number; seconds: number; txnPerSec: number; recordsPerSec: number; commitLatencyMs: Record<string, number>; txnLatencyMs: Record<string, number> }

async function transactions(port: number, topic: string, producers: number): Promise<TxnRun> {
  const template = await buildRecordBatch({
    records: Array.from({ length: RECORDS_PER_TXN }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.alloc(100, 97 + i) })),
    isTransactional: true, producerId: 0, producerEpoch: 0, baseSequence: 0,
  });
  const commitUs = new Histogram();
  const txnUs = new Histogram();
  let committed = 0;
  let measuring = false;
  const start = performance.now();
  const measureFrom = start + WARMUP_MS;
  const stopAt = measureFrom + WINDOW_MS;
  await Promise.all(Array.from({ length: producers }, async (_, i) => {
    const conn = await BrokerConnection.open({ host: '127.0.0.1', port, clientId: `bench-txn-${i}`, requestTimeoutMs: 30_000 });
    try {
      const transactionalId = `bench-txn-${producers}-${i}`;
      await retrying('FindCoordinator', async () => conn.send(ApiKey.FindCoordinator, 3, { key: transactionalId, keyType: 1, coordinatorKeys: [] }));
      const init = await retrying('InitProducerId', async () => conn.send(ApiKey.InitProducerId, 4, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }));
      const producerId = init.producerId as bigint;
      const producerEpoch = init.producerEpoch as number;
      const sequence = new Array<number>(TXN_PARTITIONS).fill(0);
      for (let n = 0; n < TXNS_PER_PRODUCER_MAX; n++) {
        const t0 = performance.now();
        if (t0 >= stopAt) break;
        const partition = (i + n) % TXN_PARTITIONS;
        const added = await conn.send(ApiKey.AddPartitionsToTxn, 3, {
          v3AndBelowTransactionalId: transactionalId, v3AndBelowProducerId: producerId, v3AndBelowProducerEpoch: producerEpoch,
          v3AndBelowTopics: [{ name: topic, partitions: [partition] }], transactions: [],
        });
        const addCode = added.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode;
        if (addCode !== 0) throw new Error(`AddPartitionsToTxn: error ${addCode}`);
        const records = Buffer.from(template);
        new RecordBatchView(records).setProducer(Number(producerId), producerEpoch, sequence[partition]!);
        sequence[partition]! += RECORDS_PER_TXN;
        const produced = await conn.send(ApiKey.Produce, 9, { transactionalId, acks: -1, timeoutMs: 30_000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] });
        const produceCode = produced.responses[0].partitionResponses[0].errorCode;
        if (produceCode !== 0) throw new Error(`Produce: error ${produceCode}`);
        const t1 = performance.now();
        const ended = await conn.send(ApiKey.EndTxn, 3, { transactionalId, producerId, producerEpoch, committed: true });
        if (ended.errorCode !== 0) throw new Error(`EndTxn: error ${ended.errorCode}`);
        const t2 = performance.now();
        if (t0 >= measureFrom) {
          measuring = true;
          committed++;
          commitUs.record(Math.round((t2 - t1) * 1000));
          txnUs.record(Math.round((t2 - t0) * 1000));
        }
      }
    } finally {
      conn.close();
    }
  }));
  if (!measuring) throw new Error('no transaction fell inside the measured window');
  const seconds = WINDOW_MS / 1000;
  const pct = (h: Histogram) => ({ p50: round(h.percentile(50) / 1000), p99: round(h.percentile(99) / 1000), p999: round(h.percentile(99.9) / 1000), max: round(h.max / 1000) });
  return {
    producers, committed, seconds, txnPerSec: Math.round(committed / seconds), recordsPerSec: Math.round((committed * RECORDS_PER_TXN) / seconds),
    commitLatencyMs: pct(commitUs), txnLatencyMs: pct(txnUs),
  };
}

/** Every partition settled (LSO = HW) and 11 offsets per committed transaction, warm-up included. */
async function verify(port: number, topic: string): Promise<{ lsoEqualsHw: boolean; offsets: number }> {
  const conn = await BrokerConnection.open({ host: '127.0.0.1', port, clientId: 'bench-txn-verify', requestTimeoutMs: 30_000 });
  try {
    const list = async (isolationLevel: number) => {
      const r = await conn.send(ApiKey.ListOffsets, 7, {
        replicaId: -1, isolationLevel,
        topics: [{ name: topic, partitions: Array.from({ length: TXN_PARTITIONS }, (_, p) => ({ partitionIndex: p, currentLeaderEpoch: -1, timestamp: -1n })) }],
      });
      return r.topics[0].partitions.map((p: { offset: bigint }) => Number(p.offset)) as number[];
    };
    const deadline = performance.now() + 10_000;
    for (;;) {
      const [hw, lso] = [await list(0), await list(1)];
      const settled = hw.every((h, i) => h === lso[i]);
      if (settled || performance.now() > deadline) return { lsoEqualsHw: settled, offsets: hw.reduce((a, b) => a + b, 0) };
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    conn.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const dataDir = mkdtempSync(join(tmpdir(), 'logline-bench-txn-'));
  const broker = await childBroker(dataDir);
  try {
    say(`broker pid ${broker.pid} on port ${broker.port}, data in ${dataDir}`);
    const idempotence = await idempotenceCost(broker.port, broker.pid);
    const runs: (TxnRun & { verified: { lsoEqualsHw: boolean; offsets: number; offsetsPerTxnOk: boolean } })[] = [];
    for (const producers of PRODUCER_COUNTS) {
      const topic = `bench-txn-${producers}`;
      const conn = await BrokerConnection.open({ host: '127.0.0.1', port: broker.port, clientId: 'bench-txn-admin', requestTimeoutMs: 30_000 });
      await conn.send(ApiKey.CreateTopics, 7, { topics: [{ name: topic, numPartitions: TXN_PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false });
      conn.close();
      const run = await transactions(broker.port, topic, producers);
      const v = await verify(broker.port, topic);
      // Warm-up transactions committed too: at least the measured ones, each 11 offsets.
      runs.push({ ...run, verified: { ...v, offsetsPerTxnOk: v.offsets % (RECORDS_PER_TXN + 1) === 0 && v.offsets / (RECORDS_PER_TXN + 1) >= run.committed } });
      say(`${producers} producers: ${run.txnPerSec} txn/s, commit p50 ${run.commitLatencyMs.p50} ms p99 ${run.commitLatencyMs.p99} ms; LSO = HW: ${v.lsoEqualsHw}`);
    }
    const best = Math.max(...runs.map((r) => r.txnPerSec));
    console.log(JSON.stringify({
      bench: 'txn', node: process.version, date: new Date().toISOString(),
      machine: { cpus: cpus().length, loadavg1m: round(loadavg()[0]!, 2), note: 'broker (child process) and load generator share this machine' },
      idempotence,
      transactions: { recordsPerTxn: RECORDS_PER_TXN, recordBytes: 100, partitions: TXN_PARTITIONS, windowSeconds: WINDOW_MS / 1000, runs },
      targets: { txnPerSec: TARGET_TXN_PER_S, bestTxnPerSec: best, txnPerSecOverTarget: round(best / TARGET_TXN_PER_S, 2), idempotenceSlowdownMax: TARGET_IDEMPOTENCE_COST },
    }, null, 2));
  } finally {
    await broker.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
