// bench/txn: what idempotence and transactions cost on one node.
//   npm run bench:txn                 (one JSON object on stdout, progress on stderr)
//   LOGLINE_BENCH_SECONDS=10          (length of each measured transaction window)
//   LOGLINE_BENCH_RECORDS=300000      (records per produce run, idempotence on/off)
// The broker is `logline server` in a child process on a fresh data directory.
// 1. Produce throughput with idempotence off and on: `logline bench produce --acks -1` (1 KiB
//    records, 6 partitions), alternating off/on three times each; the medians are compared.
// 2. Transactions: P producers (each its own transactional id and connection) loop
//    AddPartitionsToTxn → Produce (one batch of 10 records, acks=all) → EndTxn(commit), for a
//    window bounded in time and count after a warm-up. Reported: committed transactions/s, EndTxn
//    (commit) latency and whole-transaction latency percentiles. Afterwards every partition's last
//    stable offset must equal its high watermark, and the high watermarks must add up to 11
//    offsets per committed transaction (10 records + the COMMIT marker).
// The load generator and the broker share this machine's cores (`machine.cpus`).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { BrokerConnection } from '../src/client/index.js';
import { ApiKey, ErrorCode } from '../src/protocol/index.js';
import { buildRecordBatch, RecordBatchView } from '../src/records/index.js';
import { Histogram } from '../src/util/index.js';
import { childBroker } from './child-broker.js';

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

const say = (m: string) => process.stderr.write(`[bench:txn] ${m}\n`);
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One `logline bench produce` run; its JSON summary. */
function benchProduce(port: number, topic: string, idempotence: boolean): Promise<{ recordsPerSec: number; mbPerSec: number; requestLatencyMs: Record<string, number> }> {
  const bin = fileURLToPath(new URL('../../bin/logline.js', import.meta.url));
  const args = [bin, 'bench', 'produce', '--bootstrap-server', `127.0.0.1:${port}`, '--topic', topic, '--num-records', String(PRODUCE_RECORDS),
    '--record-size', '1024', '--acks', '-1', '--partitions', '6', '--json', ...(idempotence ? ['--idempotence'] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d) => { out += d; });
    child.on('exit', (code) => {
      if (code !== 0) { reject(new Error(`bench produce exited ${code}: ${out}`)); return; }
      try { resolve(JSON.parse(out.slice(out.indexOf('{')))); } catch (e) { reject(e); }
    });
  });
}

async function idempotenceCost(port: number): Promise<Record<string, unknown>> {
  const off: number[] = [];
  const on: number[] = [];
  for (let i = 0; i < 3; i++) {
    for (const idem of [false, true]) {
      const r = await benchProduce(port, `bench-idem-${idem ? 'on' : 'off'}-${i}`, idem);
      (idem ? on : off).push(r.mbPerSec);
      say(`produce acks=all idempotence ${idem ? 'on ' : 'off'}: ${r.mbPerSec} MB/s, p99 ${r.requestLatencyMs.p99} ms`);
    }
  }
  const cost = 1 - median(on) / median(off);
  return {
    recordsPerRun: PRODUCE_RECORDS, recordBytes: 1024, partitions: 6, acks: 'all', tool: 'logline bench produce (one producer, 500-record batches, 8 in flight)',
    mbPerSecOff: off, mbPerSecOn: on, medianOff: median(off), medianOn: median(on),
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
    const idempotence = await idempotenceCost(broker.port);
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
