// bench/share: share-group consumption (KIP-932) against a classic consumer group on the same
// topic, in the same run, and the acknowledgement round trip.
//   npm run bench:share                     (one JSON object on stdout, progress on stderr)
//   LOGLINE_BENCH_RECORDS=200000            (1 KiB records over 4 partitions)
//
// The broker is a child `logline server` (its own event loop). The topic is written once; then
// 4 members of a classic group (kafkajs, eachBatch) read it all, and 4 share consumers (the CLI's,
// src/cli/share-consumer.ts: ShareFetch with acknowledgements piggybacked, each record accepted)
// read it all in a new share group starting at the beginning. Rates are records/s from the first
// record to the last. "ackRoundTrip": one share consumer acknowledging one record at a time
// (ShareAcknowledge, not piggybacked) at a fixed rate: the latency of each, p50/p99. The load and
// both kinds of consumer run in this process, so the ratio is the figure to read, not the rates.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Kafka, logLevel } from 'kafkajs';
import { BrokerConnection, ClusterClient } from '../src/client/index.js';
import { ApiKey } from '../src/protocol/index.js';
import { buildRecordBatch } from '../src/records/index.js';
import { Histogram } from '../src/util/index.js';
import { ACCEPT, ShareConsumer } from '../src/cli/share-consumer.js';
import { SharePartition } from '../src/coordinator/index.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { childBroker } from './child-broker.js';

const TOPIC = 'bench-share';
const PARTITIONS = 4;
const CONSUMERS = 4;
const RECORDS = Number(process.env.LOGLINE_BENCH_RECORDS ?? '200000');
const RECORD_BYTES = 1024;
const BATCH = 500;
const ACKS = Number(process.env.LOGLINE_BENCH_ACKS ?? '20000');
const ACK_RATE_PER_S = 10_000;
const TIMEOUT_MS = 300_000;

const say = (m: string): void => { process.stderr.write(`bench:share ${m}\n`); };
const round = (n: number, digits = 1): number => Number(n.toFixed(digits));

async function fill(conn: BrokerConnection): Promise<void> {
  const value = Buffer.alloc(RECORD_BYTES, 0x61);
  for (let sent = 0; sent < RECORDS; sent += BATCH * PARTITIONS) {
    const partitionData = await Promise.all(Array.from({ length: PARTITIONS }, async (_, index) => ({
      index, records: await buildRecordBatch({ records: Array.from({ length: BATCH }, () => ({ value })) }),
    })));
    const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 30_000, topicData: [{ name: TOPIC, partitionData }] });
    if (r.responses[0].partitionResponses.some((p: any) => p.errorCode !== 0)) throw new Error('produce failed');
  }
}

async function classic(bootstrap: string, total: number): Promise<number> {
  const kafka = new Kafka({ clientId: 'bench-classic', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const consumers = Array.from({ length: CONSUMERS }, () => kafka.consumer({ groupId: 'bench-classic', maxBytesPerPartition: 4 << 20 }));
  let seen = 0;
  let first = 0;
  let last = 0;
  await Promise.all(consumers.map(async (c) => {
    await c.connect();
    await c.subscribe({ topic: TOPIC, fromBeginning: true });
  }));
  const done = new Promise<void>((resolve) => {
    for (const c of consumers) {
      void c.run({
        eachBatch: async ({ batch }) => {
          if (first === 0) first = performance.now();
          seen += batch.messages.length;
          last = performance.now();
          if (seen >= total) resolve();
        },
      });
    }
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([done, new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`classic: ${seen} of ${total}`)), TIMEOUT_MS); })]);
  clearTimeout(timer);
  await Promise.all(consumers.map((c) => c.disconnect()));
  return seen / ((last - first) / 1000);
}

async function shared(bootstrap: string, total: number): Promise<number> {
  const admin = new ClusterClient({ bootstrap, clientId: 'bench-share-admin' });
  const a = await admin.any();
  await a.send(ApiKey.IncrementalAlterConfigs, 1, { resources: [{ resourceType: 32, resourceName: 'bench-share', configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' }] }], validateOnly: false });
  admin.close();
  let seen = 0;
  let first = 0;
  let last = 0;
  const deadline = performance.now() + TIMEOUT_MS;
  await Promise.all(Array.from({ length: CONSUMERS }, async (_, i) => {
    const client = new ClusterClient({ bootstrap, clientId: `bench-share-${i}` });
    const consumer = new ShareConsumer(client, 'bench-share', [TOPIC]);
    await consumer.subscribe();
    while (seen < total && performance.now() < deadline) {
      const records = await consumer.poll(200);
      if (records.length > 0 && first === 0) first = performance.now();
      for (const r of records) consumer.acknowledge(r, ACCEPT);
      seen += records.length;
      if (records.length > 0) last = performance.now();
    }
    await consumer.close();
    client.close();
  }));
  if (seen < total) throw new Error(`share: ${seen} of ${total}`);
  return seen / ((last - first) / 1000);
}

/**
 * Records acknowledged one by one at ACK_RATE_PER_S (acknowledgeNow, ShareAcknowledge rather than
 * piggybacked): the round trip of each, from the call to the leader's answer. Records are polled
 * in batches; each batch is acknowledged at the rate, without waiting for one answer before the
 * next call (the client sends what was acknowledged while a ShareAcknowledge was in flight in the
 * next one, as Kafka's consumer does with its commits), then the next poll.
 */
async function ackRoundTrip(bootstrap: string): Promise<{ p50Ms: number; p99Ms: number; maxMs: number; count: number; achievedPerSecond: number; errors: number }> {
  const client = new ClusterClient({ bootstrap, clientId: 'bench-share-ack' });
  const a = await client.any();
  await a.send(ApiKey.IncrementalAlterConfigs, 1, { resources: [{ resourceType: 32, resourceName: 'bench-ack', configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' }] }], validateOnly: false });
  const consumer = new ShareConsumer(client, 'bench-ack', [TOPIC]);
  await consumer.subscribe();
  const h = new Histogram();
  let count = 0;
  let errors = 0;
  let ackingMs = 0;
  const deadline = performance.now() + TIMEOUT_MS;
  while (count < ACKS && performance.now() < deadline) {
    const records = (await consumer.poll(200)).slice(0, ACKS - count);
    const start = performance.now();
    const answers: Promise<void>[] = [];
    for (let i = 0; i < records.length; i++) {
      const wait = start + (i * 1000) / ACK_RATE_PER_S - performance.now();
      if (wait >= 1) await new Promise((res) => setTimeout(res, wait));
      const t0 = performance.now();
      answers.push(consumer.acknowledgeNow(records[i]!, ACCEPT).then((code) => {
        h.record((performance.now() - t0) * 1000);
        if (code !== 0) errors++;
      }));
    }
    await Promise.all(answers);
    ackingMs += performance.now() - start;
    count += records.length;
  }
  await consumer.close();
  client.close();
  return {
    p50Ms: round(h.percentile(50) / 1000, 2), p99Ms: round(h.percentile(99) / 1000, 2), maxMs: round(h.percentile(100) / 1000, 2), count,
    achievedPerSecond: Math.round(count / (ackingMs / 1000)), errors,
  };
}

/**
 * Heap per acquired record in a share-partition (the production SharePartition, in this process):
 * heap used after a full GC with `partitions` share-partitions each holding `locks` acquired
 * records (share.partition.max.record.locks), minus before, per record. What a broker holds for
 * in-flight records is at most this times the limit times the share-partitions it leads.
 */
function bytesPerAcquiredRecord(partitions: number, locks: number): { bytesPerRecord: number; records: number; limitPerSharePartition: number } {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const held: SharePartition[] = [];
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < partitions; i++) {
    const sp = new SharePartition({ recordLockDurationMs: 30_000, deliveryCountLimit: 5, maxInFlightRecords: locks }, { startOffset: 0, stateBatches: [] });
    // Batches of 500 records, as the bench's topic holds them; acquired by 64 members.
    for (let o = 0; o < locks; o += 500) sp.acquire(0, `member-${(o / 500) % 64}`, [{ baseOffset: o, lastOffset: o + 499 }], 500);
    held.push(sp);
  }
  gc();
  const after = process.memoryUsage().heapUsed;
  const records = held.reduce((n, sp) => n + sp.acquiredRecords(), 0);
  return { bytesPerRecord: Math.round((after - before) / records), records, limitPerSharePartition: locks };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'logline-bench-share-'));
  const broker = await childBroker(dir, { 'num.partitions': String(PARTITIONS), 'group.consumer.heartbeat.interval.ms': '500' });
  const bootstrap = `127.0.0.1:${broker.port}`;
  try {
    const client = new ClusterClient({ bootstrap, clientId: 'bench-share-fill' });
    const c = await client.any();
    await c.send(ApiKey.CreateTopics, 5, { topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false });
    say(`writing ${RECORDS} records of ${RECORD_BYTES} bytes`);
    await fill(await client.leaderFor(TOPIC, 0));
    client.close();
    say('classic group');
    const classicRate = await classic(bootstrap, RECORDS);
    say('share group');
    const shareRate = await shared(bootstrap, RECORDS);
    say('acknowledgement round trip');
    const ack = await ackRoundTrip(bootstrap);
    console.log(JSON.stringify({
      bench: 'share', machine: { cpus: cpus().length }, records: RECORDS, recordBytes: RECORD_BYTES, partitions: PARTITIONS, consumers: CONSUMERS,
      classicRecordsPerSecond: Math.round(classicRate), shareRecordsPerSecond: Math.round(shareRate), shareToClassic: round(shareRate / classicRate, 2),
      target: { shareToClassic: 0.5, ackP99Ms: 10 }, ackRoundTrip: { ...ack, ratePerSecond: ACK_RATE_PER_S },
      inFlightMemory: bytesPerAcquiredRecord(100, 2000),
    }, null, 2));
  } finally {
    await broker.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
