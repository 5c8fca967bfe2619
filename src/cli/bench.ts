// `logline bench produce`: a producer load generator in the spirit of kafka-producer-perf-test.
// Batches of --batch-size records go round-robin over the partitions with up to --in-flight
// requests outstanding per partition leader; latency is measured per request (send to ack)
// in a log-linear histogram. A progress line every second, a summary at the end (--json).
// Today one producer in this process; --producers (workers) comes with the bench issue.
import { ClusterClient, KafkaError } from '../client/index.js';
import { ApiKey, ErrorCode } from '../protocol/index.js';
import { buildRecordBatch, Compression, RecordBatchView } from '../records/index.js';
import { Histogram } from '../util/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, toJson } from './output.js';

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  topic: { type: 'string', help: 'topic (created when missing; default logline-bench)' },
  'num-records': { type: 'number', help: 'records to send (default 1,000,000)' },
  'record-size': { type: 'number', help: 'value bytes per record (default 1024)' },
  throughput: { type: 'number', help: 'records/s target, -1 for as fast as possible (default -1)' },
  acks: { type: 'number', help: '-1, 0 or 1 (default 1)' },
  compression: { type: 'string', help: 'none, gzip, snappy, lz4, zstd (default none)' },
  partitions: { type: 'number', help: 'partitions when the topic is created (default 6)' },
  'batch-size': { type: 'number', help: 'records per batch (default 500)' },
  'in-flight': { type: 'number', help: 'outstanding requests (default 8)' },
  idempotence: { type: 'boolean', help: 'an idempotent producer: a producer id from InitProducerId, sequences per partition' },
};

const CODECS: Record<string, Compression> = { none: Compression.None, gzip: Compression.Gzip, snappy: Compression.Snappy, lz4: Compression.Lz4, zstd: Compression.Zstd };

export async function benchCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  if (flags.help || positionals[0] !== 'produce') {
    console.log(helpText('logline bench produce [options]', 'Measure produce throughput and latency.', FLAGS));
    return flags.help ? 0 : 2;
  }
  const topic = (flags.topic as string) ?? 'logline-bench';
  const total = (flags['num-records'] as number) ?? 1_000_000;
  const size = (flags['record-size'] as number) ?? 1024;
  const target = (flags.throughput as number) ?? -1;
  const acks = (flags.acks as number) ?? 1;
  const compression = CODECS[(flags.compression as string) ?? 'none'];
  if (compression === undefined) throw new UsageError('--compression must be none, gzip, snappy, lz4 or zstd');
  const batchSize = (flags['batch-size'] as number) ?? 500;
  const inFlightMax = (flags['in-flight'] as number) ?? 8;
  const client = new ClusterClient({ bootstrap: (flags['bootstrap-server'] as string) ?? 'localhost:9092' });
  try {
    const existing = (await client.metadata([topic])).find((t) => t.name === topic && t.errorCode === 0);
    if (!existing) {
      const r = await client.admin(ApiKey.CreateTopics, { topics: [{ name: topic, numPartitions: (flags.partitions as number) ?? 6, replicationFactor: -1, assignments: [], configs: [] }], timeoutMs: 30000, validateOnly: false }, 7);
      if (r.topics[0].errorCode !== 0 && r.topics[0].errorCode !== ErrorCode.TOPIC_ALREADY_EXISTS) throw new KafkaError(r.topics[0].errorCode, r.topics[0].errorMessage);
    }
    const meta = await client.topic(topic);
    // One template batch per partition count; values are random-ish bytes so compression is honest.
    const value = Buffer.alloc(size);
    for (let i = 0; i < size; i++) value[i] = 97 + ((i * 7919) % 26);
    const template = await buildRecordBatch({ records: Array.from({ length: batchSize }, () => ({ value })), compression });
    // Idempotence: one producer id; each partition's batches carry consecutive sequences, and
    // each request gets its own copy of the template so the stamp (and CRC) is its own.
    let producerId = -1;
    const nextSequence = new Map<number, number>();
    if (flags.idempotence) {
      if (acks !== -1) throw new UsageError('--idempotence needs --acks -1, as Kafka producers require');
      const r = await client.admin(ApiKey.InitProducerId, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }, 4);
      if (r.errorCode !== 0) throw new KafkaError(r.errorCode);
      producerId = Number(r.producerId);
    }
    const latencyUs = new Histogram();
    let sent = 0;
    let acked = 0;
    let bytes = 0;
    let inFlight = 0;
    let failed: Error | null = null;
    const started = performance.now();
    let lastReport = started;
    let lastAcked = 0;
    const report = (final: boolean) => {
      const now = performance.now();
      const seconds = (now - (final ? started : lastReport)) / 1000;
      const records = final ? acked : acked - lastAcked;
      if (!flags.json && !final) {
        console.error(`${records / seconds | 0} records/s, ${(records * size / seconds / 1e6).toFixed(1)} MB/s, latency avg ${(latencyUs.mean / 1000).toFixed(2)} ms p99 ${(latencyUs.percentile(99) / 1000).toFixed(2)} ms, in flight ${inFlight}`);
      }
      lastReport = now;
      lastAcked = acked;
    };
    const timer = setInterval(() => report(false), 1000);
    let partition = 0;
    await new Promise<void>((resolve) => {
      const pump = async () => {
        while (!failed && sent < total && inFlight < inFlightMax) {
          if (target > 0 && sent / ((performance.now() - started) / 1000) > target) { setTimeout(pump, 1); return; }
          // Reserve the records and the in-flight slot before any await: pumps run concurrently.
          const n = Math.min(batchSize, total - sent);
          sent += n;
          inFlight++;
          let records = n === batchSize ? template : await buildRecordBatch({ records: Array.from({ length: n }, () => ({ value })), compression });
          const p = meta.partitions[partition++ % meta.partitions.length]!;
          if (producerId >= 0) {
            records = Buffer.from(records);
            const seq = nextSequence.get(p.partition) ?? 0;
            new RecordBatchView(records).setProducer(producerId, 0, seq);
            nextSequence.set(p.partition, (seq + n) % 0x80000000);
          }
          const conn = await client.broker(p.leader);
          bytes += records.length;
          const t0 = performance.now();
          const body = { transactionalId: null, acks, timeoutMs: 30000, topicData: [{ name: topic, partitionData: [{ index: p.partition, records }] }] };
          const done = () => { inFlight--; acked += n; latencyUs.record((performance.now() - t0) * 1000); if (acked >= total) resolve(); else void pump(); };
          if (acks === 0) { conn.sendNoResponse(ApiKey.Produce, conn.version(ApiKey.Produce, 9), body); done(); continue; }
          conn.send(ApiKey.Produce, conn.version(ApiKey.Produce, 9), body).then((r) => {
            const code = r.responses[0].partitionResponses[0].errorCode;
            if (code !== 0) { failed = new KafkaError(code); resolve(); return; }
            done();
          }, (err: Error) => { failed = err; resolve(); });
        }
      };
      void pump();
    });
    clearInterval(timer);
    if (failed) throw failed;
    const seconds = (performance.now() - started) / 1000;
    const summary = {
      topic, records: acked, recordSize: size, acks, idempotence: producerId >= 0, compression: (flags.compression as string) ?? 'none', seconds: Math.round(seconds * 1000) / 1000,
      recordsPerSec: Math.round(acked / seconds), mbPerSec: Math.round((acked * size) / seconds / 1e4) / 100, wireMbPerSec: Math.round(bytes / seconds / 1e4) / 100,
      requestLatencyMs: Object.fromEntries([50, 95, 99, 99.9].map((q) => [`p${q}`, latencyUs.percentile(q) / 1000]).concat([['max', latencyUs.max / 1000]])),
      targetReached: target <= 0 || acked / seconds >= target * 0.95,
    };
    console.log(flags.json ? toJson(summary) : `${summary.records} records in ${summary.seconds} s: ${summary.recordsPerSec} records/s, ${summary.mbPerSec} MB/s; latency p50 ${summary.requestLatencyMs.p50} ms, p99 ${summary.requestLatencyMs.p99} ms, p99.9 ${summary.requestLatencyMs['p99.9']} ms, max ${summary.requestLatencyMs.max} ms`);
    if (!summary.targetReached) { console.error(`target of ${target} records/s was not reached`); return 1; }
    return 0;
  } finally {
    client.close();
  }
}
