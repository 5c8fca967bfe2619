// `logline bench produce | consume | e2e`: load generators in the spirit of Kafka's
// kafka-producer-perf-test and kafka-consumer-perf-test.
//   produce  --producers N worker threads (so this tool is not the bottleneck), each sending batches
//            of --batch-size records round-robin over the partitions, at --throughput / N records/s
//            or as fast as acknowledgements allow; per-record latency, histograms merged.
//   consume  catch-up reading from the beginning (or a group's committed offsets, --group) up to
//            the high watermarks seen at the start, or --num-records.
//   e2e      producers stamp each record with its send time; a consumer in this process, started
//            at the end offsets, measures send → receive latency.
// A progress line every second on stderr; a summary at the end (--json: one object on stdout).
// Exit code 1 when --throughput was not reached (at least 95% of it) or the run failed.
import { Worker } from 'node:worker_threads';
import { ClusterClient, KafkaError } from '../client/index.js';
import { ApiKey, ErrorCode } from '../protocol/index.js';
import { Compression } from '../records/index.js';
import { Histogram, type HistogramSnapshot } from '../util/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, bootstrapServers, toJson } from './output.js';
import { Progress } from './progress.js';
import { commandConfig } from './command-config.js';
import { newStats, runConsumer, type ConsumerSpec, type LoadStats, type ProducerSpec } from './bench-load.js';
import { tuneHeap } from './heap.js';

const PRODUCE_FLAGS: Record<string, FlagSpec> = {
  topic: { type: 'string', help: 'topic (created when missing; default logline-bench)' },
  'num-records': { type: 'number', help: 'records to send (default 1,000,000)' },
  'record-size': { type: 'number', help: 'value bytes per record (default 1024)' },
  throughput: { type: 'number', help: 'records/s target over all producers, -1 for as fast as possible (default -1)' },
  acks: { type: 'number', help: '-1, 0 or 1 (default 1)' },
  compression: { type: 'string', help: 'none, gzip, snappy, lz4, zstd (default none)' },
  partitions: { type: 'number', help: 'partitions when the topic is created (default 6)' },
  producers: { type: 'number', help: 'producer worker threads, each with its own connections (default 1)' },
  'batch-size': { type: 'number', help: 'records per batch (default 500)' },
  'linger-ms': { type: 'number', help: 'at a target rate, how long a partial batch waits for more records (default 5)' },
  'in-flight': { type: 'number', help: 'outstanding requests per broker connection of each producer, as max.in.flight.requests.per.connection (default 8)' },
  idempotence: { type: 'boolean', help: 'idempotent producers: a producer id each from InitProducerId, sequences per partition' },
};
const CONSUME_FLAGS: Record<string, FlagSpec> = {
  group: { type: 'string', help: 'consume: start from and commit to this group\'s offsets (assign + commit, no rebalance)' },
  'consume-throughput': { type: 'number', help: 'consume: read at most this many records/s (a slow consumer)' },
  'fetch-max-bytes': { type: 'number', help: 'Fetch max_bytes (default 52428800)' },
  'partition-max-bytes': { type: 'number', help: 'Fetch partition_max_bytes (default 1048576)' },
};
const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS, ...PRODUCE_FLAGS, ...CONSUME_FLAGS,
  seconds: { type: 'number', help: 'stop after this many seconds (or --num-records, whichever comes first)' },
  'warmup-seconds': { type: 'number', help: 'produce and e2e with --throughput: send at the target rate this long first, leaving those records out of the latencies (--num-records and --seconds count after it)' },
  'max-seconds': { type: 'number', help: 'fail when the run takes longer (default 600)' },
  quiet: { type: 'boolean', help: 'no progress lines' },
};

const CODECS: Record<string, Compression> = { none: Compression.None, gzip: Compression.Gzip, snappy: Compression.Snappy, lz4: Compression.Lz4, zstd: Compression.Zstd };
const VERBS = ['produce', 'consume', 'e2e'];

interface Options {
  bootstrap: string; commandConfig: string | undefined; topic: string; records: number; recordSize: number; throughput: number; acks: number;
  compressionName: string; compression: Compression; partitions: number; producers: number; batchRecords: number;
  lingerMs: number; inFlightMax: number; idempotence: boolean; group: string | null; fetchMaxBytes: number;
  partitionMaxBytes: number; maxSeconds: number; quiet: boolean; json: boolean; durationMs: number; consumeRate: number; warmupMs: number;
  /** --num-records was given (consume stops there instead of at the high watermarks). */
  recordsGiven: boolean;
}

function positive(flags: Record<string, unknown>, name: string, fallback: number): number {
  const v = (flags[name] as number | undefined) ?? fallback;
  if (!Number.isInteger(v) || v < 1) throw new UsageError(`--${name} must be a positive integer`);
  return v;
}

function options(flags: Record<string, unknown>): Options {
  const compressionName = (flags.compression as string) ?? 'none';
  const compression = CODECS[compressionName];
  if (compression === undefined) throw new UsageError('--compression must be none, gzip, snappy, lz4 or zstd');
  const acks = (flags.acks as number) ?? 1;
  if (![-1, 0, 1].includes(acks)) throw new UsageError('--acks must be -1, 0 or 1');
  const idempotence = Boolean(flags.idempotence);
  if (idempotence && acks !== -1) throw new UsageError('--idempotence needs --acks -1, as Kafka producers require');
  const producers = positive(flags, 'producers', 1);
  const warmupMs = ((flags['warmup-seconds'] as number | undefined) ?? 0) * 1000;
  if (!(warmupMs >= 0)) throw new UsageError('--warmup-seconds must be 0 or more');
  if (warmupMs > 0 && !(((flags.throughput as number | undefined) ?? -1) > 0)) throw new UsageError('--warmup-seconds needs --throughput (a warm-up at a target rate)');
  if (producers > 64) throw new UsageError('--producers is at most 64');
  return {
    bootstrap: bootstrapServers(flags),
    commandConfig: flags['command-config'] as string | undefined,
    topic: (flags.topic as string) ?? 'logline-bench',
    records: positive(flags, 'num-records', 1_000_000),
    recordsGiven: flags['num-records'] !== undefined,
    recordSize: (flags['record-size'] as number) ?? 1024,
    throughput: (flags.throughput as number) ?? -1,
    acks, compressionName, compression, idempotence, producers,
    partitions: positive(flags, 'partitions', 6),
    batchRecords: positive(flags, 'batch-size', 500),
    lingerMs: (flags['linger-ms'] as number) ?? 5,
    inFlightMax: positive(flags, 'in-flight', 8),
    group: (flags.group as string) ?? null,
    fetchMaxBytes: positive(flags, 'fetch-max-bytes', 52_428_800),
    partitionMaxBytes: positive(flags, 'partition-max-bytes', 1_048_576),
    maxSeconds: positive(flags, 'max-seconds', 600),
    durationMs: ((flags.seconds as number) ?? 0) * 1000,
    consumeRate: (flags['consume-throughput'] as number) ?? 0,
    warmupMs,
    quiet: Boolean(flags.quiet),
    json: Boolean(flags.json),
  };
}

export async function benchCommand(argv: string[]): Promise<number> {
  tuneHeap(); // this process's own pauses would count in the latencies it measures
  const { positionals, flags } = parseArgs(argv, FLAGS);
  const verb = positionals[0];
  if (flags.help || !verb || !VERBS.includes(verb)) {
    console.log(helpText('logline bench produce|consume|e2e [options]', 'Measure produce throughput and latency, catch-up consume throughput, or end-to-end latency.', FLAGS));
    return flags.help ? 0 : 2;
  }
  const o = options(flags);
  if (verb === 'e2e' && o.recordSize < 8) throw new UsageError('bench e2e needs --record-size of at least 8 (the send time)');
  if (verb !== 'consume') await ensureTopic(o);
  const summary = verb === 'produce' ? await benchProduce(o) : verb === 'consume' ? await benchConsume(o) : await benchE2e(o);
  console.log(o.json ? toJson(summary) : humanSummary(summary));
  if (summary.error) { console.error(`bench ${verb} failed: ${summary.error}`); return 1; }
  if (summary.targetReached === false) {
    console.error(`target of ${o.throughput} records/s was not reached: ${summary.recordsPerSec} records/s`);
    return 1;
  }
  return 0;
}

async function ensureTopic(o: Options): Promise<void> {
  const client = new ClusterClient({ bootstrap: o.bootstrap, ...commandConfig({ 'command-config': o.commandConfig }) });
  try {
    const existing = (await client.metadata([o.topic])).find((t) => t.name === o.topic && t.errorCode === 0);
    if (!existing) {
      const r = await client.admin(ApiKey.CreateTopics, { topics: [{ name: o.topic, numPartitions: o.partitions, replicationFactor: -1, assignments: [], configs: [] }], timeoutMs: 30000, validateOnly: false }, 7);
      if (r.topics[0].errorCode !== 0 && r.topics[0].errorCode !== ErrorCode.TOPIC_ALREADY_EXISTS) throw new KafkaError(r.topics[0].errorCode, r.topics[0].errorMessage);
    }
    await client.topic(o.topic); // waits until every partition has a leader
  } finally {
    client.close();
  }
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

function latencySummary(h: Histogram): Record<string, number> {
  return { avg: round(h.mean / 1000, 3), p50: h.percentile(50) / 1000, p95: h.percentile(95) / 1000, p99: h.percentile(99) / 1000, 'p99.9': h.percentile(99.9) / 1000, max: h.total ? h.max / 1000 : 0 };
}

/** What was recorded between two cumulative samples (min and max stay the cumulative bounds). */
function since(current: Histogram, previous: Histogram | null): Histogram {
  if (!previous) return current;
  const a = current.snapshot();
  const b = previous.snapshot();
  for (let i = 0; i < a.counts.length; i++) a.counts[i]! -= b.counts[i]!;
  a.total -= b.total;
  a.sum -= b.sum;
  return Histogram.fromSnapshot(a);
}

/**
 * Progress on stderr from `sample()` (cumulative totals) each second: rates since the last sample,
 * latency avg and p99 so far and in-flight requests, as a bar on a terminal and a line otherwise
 * (progress.ts). With --json each is a JSON line that also has the p99 of the last second only
 * (bench/single-node plots overload runs from it).
 */
function progress(o: Options, what: string, sample: () => { records: number; bytes: number; inFlight: number; latencyUs: Histogram | null }): () => void {
  if (o.quiet) return () => {};
  // The records asked for, unless the run is bounded by time (or, consuming, by the topic's end).
  const total = o.durationMs > 0 && !o.recordsGiven ? null : what === 'consume' && !o.recordsGiven ? null : o.records;
  // The timer below paces the lines: the helper draws each one it is given.
  const bar = o.json ? null : new Progress({ label: what, total, unit: 'records', lineIntervalMs: 0, redrawMs: 0 });
  const t0 = performance.now();
  let last = { t: t0, records: 0, bytes: 0, latencyUs: null as Histogram | null };
  const timer = setInterval(() => {
    const s = sample();
    const now = performance.now();
    const dt = (now - last.t) / 1000;
    const recordsPerSec = Math.round((s.records - last.records) / dt);
    const mbPerSec = round((s.bytes - last.bytes) / dt / 1e6, 1);
    const h = s.latencyUs && s.latencyUs.total ? s.latencyUs : null;
    if (o.json) {
      const interval = h ? since(h, last.latencyUs) : null;
      console.error(JSON.stringify({ progress: what, seconds: round((now - t0) / 1000, 1), records: s.records, recordsPerSec, wireMbPerSec: mbPerSec, inFlight: s.inFlight,
        latencyMsAvg: h ? round(h.mean / 1000, 3) : null, latencyMsP99: h ? h.percentile(99) / 1000 : null, intervalLatencyMsP99: interval && interval.total ? interval.percentile(99) / 1000 : null }));
    } else {
      const lat = h ? `, latency avg ${(h.mean / 1000).toFixed(2)} ms p99 ${(h.percentile(99) / 1000).toFixed(2)} ms` : '';
      bar!.update(s.records, `${recordsPerSec} records/s, ${mbPerSec} MB/s${lat}, in flight ${s.inFlight}`);
    }
    last = { t: now, records: s.records, bytes: s.bytes, latencyUs: h ? Histogram.fromSnapshot(h.snapshot()) : null };
  }, 1000);
  return () => {
    clearInterval(timer);
    bar?.finish(sample().records);
  };
}

interface WorkerReport { records: number; bytes: number; inFlight: number; startedMs: number; endedMs: number; latency: HistogramSnapshot; error?: string }

/** N producer workers; `sample()` merges their last reports, `done` their final ones. */
class ProducerFleet {
  private readonly reports: (WorkerReport | null)[];
  private readonly workers: Worker[] = [];
  readonly done: Promise<WorkerReport[]>;

  constructor(o: Options, stamp: boolean) {
    this.reports = new Array(o.producers).fill(null);
    const finals: Promise<WorkerReport>[] = [];
    for (let w = 0; w < o.producers; w++) {
      const rate = o.throughput > 0 ? o.throughput / o.producers : -1;
      // The warm-up's records come on top of what is measured.
      const records = Math.floor(o.records / o.producers) + (w < o.records % o.producers ? 1 : 0) + warmupRecordsPerProducer(o);
      const spec: ProducerSpec = {
        bootstrap: o.bootstrap, commandConfig: o.commandConfig, topic: o.topic, records, recordSize: o.recordSize, rate, warmupMs: o.warmupMs,
        acks: o.acks, compression: o.compression, batchRecords: o.batchRecords, lingerMs: o.lingerMs, inFlightMax: o.inFlightMax,
        idempotence: o.idempotence, stamp, firstPartition: w, maxSeconds: o.maxSeconds, durationMs: o.durationMs > 0 ? o.durationMs + o.warmupMs : 0, seed: w + 1,
      };
      const worker = new Worker(new URL('./bench-worker.js', import.meta.url), { workerData: { spec, reportMs: 500 } });
      this.workers.push(worker);
      finals.push(new Promise<WorkerReport>((resolve) => {
        worker.on('message', (m: WorkerReport & { type: string }) => { this.reports[w] = m; if (m.type === 'done') resolve(m); });
        worker.on('error', (err) => resolve({ ...this.empty(), error: err.message }));
        worker.on('exit', () => resolve(this.reports[w] ?? { ...this.empty(), error: 'worker exited without a report' }));
      }));
    }
    this.done = Promise.all(finals);
  }

  private empty(): WorkerReport { return { records: 0, bytes: 0, inFlight: 0, startedMs: 0, endedMs: 0, latency: new Histogram().snapshot() }; }

  sample(): { records: number; bytes: number; inFlight: number; latencyUs: Histogram } {
    const latencyUs = new Histogram();
    let records = 0, bytes = 0, inFlight = 0;
    for (const r of this.reports) {
      if (!r) continue;
      records += r.records; bytes += r.bytes; inFlight += r.inFlight;
      latencyUs.merge(Histogram.fromSnapshot(r.latency));
    }
    return { records, bytes, inFlight, latencyUs };
  }

  stop(): void { for (const w of this.workers) w.postMessage('stop'); }
}

/** Records each producer sends during --warmup-seconds (at its share of the target rate). */
function warmupRecordsPerProducer(o: Options): number {
  return o.warmupMs > 0 ? Math.round(o.throughput / o.producers * o.warmupMs / 1000) : 0;
}

interface Summary { mode: string; recordsPerSec: number; error?: string; targetReached?: boolean; [k: string]: unknown }

function produceSummary(o: Options, finals: WorkerReport[]): Summary {
  const latencyUs = new Histogram();
  for (const f of finals) latencyUs.merge(Histogram.fromSnapshot(f.latency));
  const records = finals.reduce((a, f) => a + f.records, 0);
  const bytes = finals.reduce((a, f) => a + f.bytes, 0);
  const started = Math.min(...finals.map((f) => f.startedMs || Infinity));
  const ended = Math.max(...finals.map((f) => f.endedMs || 0));
  const seconds = Number.isFinite(started) && ended > started ? (ended - started) / 1000 : 0;
  const recordsPerSec = seconds > 0 ? Math.round(records / seconds) : 0;
  const error = finals.find((f) => f.error)?.error;
  return {
    mode: 'produce', topic: o.topic, producers: o.producers, records, recordSize: o.recordSize, acks: o.acks, compression: o.compressionName,
    idempotence: o.idempotence, batchRecords: o.batchRecords, lingerMs: o.lingerMs, seconds: round(seconds, 3), recordsPerSec,
    mbPerSec: seconds > 0 ? round(records * o.recordSize / seconds / 1e6) : 0, wireMbPerSec: seconds > 0 ? round(bytes / seconds / 1e6) : 0,
    latencyMs: latencySummary(latencyUs), targetRecordsPerSec: o.throughput > 0 ? o.throughput : null,
    ...(o.warmupMs > 0 ? { warmupSeconds: o.warmupMs / 1000, warmupRecords: warmupRecordsPerProducer(o) * o.producers, latencyRecords: latencyUs.total } : {}),
    targetReached: o.throughput <= 0 || (!error && recordsPerSec >= o.throughput * 0.95),
    ...(error ? { error } : {}),
  };
}

async function benchProduce(o: Options): Promise<Summary> {
  const fleet = new ProducerFleet(o, false);
  const stopProgress = progress(o, 'produce', () => fleet.sample());
  const finals = await fleet.done;
  stopProgress();
  return produceSummary(o, finals);
}

function consumerSpec(o: Options, e2e: boolean): ConsumerSpec {
  return {
    bootstrap: o.bootstrap, commandConfig: o.commandConfig, topic: o.topic, group: o.group, from: e2e ? 'end' as const : 'beginning' as const,
    records: e2e ? o.records + warmupRecordsPerProducer(o) * o.producers : o.recordsGiven ? o.records : -1,
    e2e, fetchMaxBytes: o.fetchMaxBytes, partitionMaxBytes: o.partitionMaxBytes, maxWaitMs: e2e ? 100 : 500, maxSeconds: o.maxSeconds,
    rate: e2e ? 0 : o.consumeRate, durationMs: e2e ? 0 : o.durationMs, warmupMs: e2e ? o.warmupMs : 0,
  };
}

async function benchConsume(o: Options): Promise<Summary> {
  const stats = newStats();
  const stopProgress = progress(o, 'consume', () => ({ ...stats, latencyUs: null }));
  let error: string | undefined;
  try {
    await runConsumer(consumerSpec(o, false), stats);
  } catch (err) {
    error = (err as Error).message;
  } finally {
    stopProgress();
  }
  const seconds = stats.endedMs > stats.startedMs ? (stats.endedMs - stats.startedMs) / 1000 : 0;
  return {
    mode: 'consume', topic: o.topic, group: o.group, records: stats.records, bytes: stats.bytes, seconds: round(seconds, 3),
    recordsPerSec: seconds > 0 ? Math.round(stats.records / seconds) : 0, mbPerSec: seconds > 0 ? round(stats.bytes / seconds / 1e6) : 0,
    ...(error ? { error } : {}),
  };
}

async function benchE2e(o: Options): Promise<Summary> {
  const consumed: LoadStats = newStats();
  let consumerReady!: () => void;
  const ready = new Promise<void>((r) => { consumerReady = r; });
  let fleet: ProducerFleet | null = null;
  const spec = consumerSpec(o, true);
  const consumer = runConsumer(spec, consumed, consumerReady).then(() => undefined, (err: Error) => { fleet?.stop(); consumerReady(); return err.message; });
  await ready;
  fleet = new ProducerFleet(o, true);
  const stopProgress = progress(o, 'e2e', () => { const s = fleet!.sample(); return { ...s, latencyUs: consumed.latencyUs }; });
  const finals = await fleet.done;
  spec.records = finals.reduce((a, f) => a + f.records, 0); // fewer than asked when --seconds ended the run
  const consumerError = finals.some((f) => f.error) ? undefined : await consumer;
  stopProgress();
  const summary = produceSummary(o, finals);
  const error = summary.error ?? consumerError;
  return { ...summary, mode: 'e2e', consumed: consumed.records, e2eLatencyMs: latencySummary(consumed.latencyUs),
    ...(o.warmupMs > 0 ? { e2eLatencyRecords: consumed.latencyUs.total } : {}), ...(error ? { error, targetReached: false } : {}) };
}

function humanSummary(s: Summary): string {
  const lat = (name: string, l: unknown) => {
    const x = l as Record<string, number>;
    return `${name} latency avg ${x.avg} ms, p50 ${x.p50} ms, p95 ${x.p95} ms, p99 ${x.p99} ms, p99.9 ${x['p99.9']} ms, max ${x.max} ms`;
  };
  const head = `${s.records} records in ${s.seconds} s: ${s.recordsPerSec} records/s, ${s.mbPerSec} MB/s`;
  if (s.mode === 'consume') return head;
  return [head, lat('produce', s.latencyMs), ...(s.mode === 'e2e' ? [lat('end-to-end', s.e2eLatencyMs)] : [])].join('\n');
}
