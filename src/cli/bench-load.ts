// The load loops behind `logline bench`: one producer (run in a worker thread per --producers) and
// one catch-up / end-to-end consumer. Both are bounded in records and in time, allocate per batch
// (never per record), and keep their figures in a `LoadStats` that the caller samples every second.
//
// Latency is measured per record. At a target rate, record i is due at start + i / rate and its
// latency runs from that moment (so a producer that falls behind shows it as latency instead of
// hiding it: no coordinated omission); at full speed it runs from when its batch was made.
import { commandConfig } from './command-config.js';
import { ClusterClient, KafkaError, type BrokerConnection } from '../client/index.js';
import { ApiKey, ErrorCode } from '../protocol/index.js';
import {
  BatchHeaderAt, Compression, LOG_OVERHEAD_BYTES, RECORD_BATCH_HEADER_BYTES, RecordBatchView, RecordCursor, buildRecordBatchSync, compress, crc32c, crc32cZerosOperator, decompressBatchBody, iterateBatches, writeInt64,
} from '../records/index.js';
import { Histogram, Prng, assert, partitionName } from '../util/index.js';


/** Wall-clock microseconds with sub-millisecond resolution, comparable across threads and processes. */
export function nowUs(): number { return (performance.timeOrigin + performance.now()) * 1000; }

export interface LoadStats {
  records: number;
  /** Batch bytes on the wire (after compression). */
  bytes: number;
  inFlight: number;
  latencyUs: Histogram;
  /** Wall-clock milliseconds when the load loop started and ended (0 until then). */
  startedMs: number;
  endedMs: number;
  /** e2e with a warm-up: send times from here on count in the latencies (NaN until the first record is read). */
  measureFromUs: number;
}

export function newStats(): LoadStats { return { records: 0, bytes: 0, inFlight: 0, latencyUs: new Histogram(), startedMs: 0, endedMs: 0, measureFromUs: Number.NaN }; }

export function wallMs(): number { return performance.timeOrigin + performance.now(); }

/**
 * Batches of up to `batchRecords` records of `recordSize` value bytes, cut from one template. Each
 * record of the template has its own pseudo-random text, so a compressor sees what it would see in
 * log-like data (lz4 about 2:1) rather than one value repeated (or incompressible noise). A batch of the first n records is the
 * template's prefix with its header fixed up; e2e batches carry a send time (float64 microseconds,
 * little-endian) in the first 8 value bytes of each record.
 */
export class BatchFactory {
  private readonly template: Buffer;
  /** End of record k inside the template, and where its value starts. */
  private readonly recordEnds: Int32Array;
  private readonly valueStarts: Int32Array;
  private full: Buffer | null = null;
  private fullRecordsCrc: { crc: number; zeros: Uint32Array } | null = null;

  constructor(readonly recordSize: number, readonly batchRecords: number, readonly compression: Compression, seed = 1) {
    assert(batchRecords >= 1 && recordSize >= 0, 'batch shape');
    const prng = new Prng(seed);
    const values = textLike(recordSize * batchRecords, prng);
    const records = Array.from({ length: batchRecords }, (_, k) => ({ value: values.subarray(k * recordSize, (k + 1) * recordSize) }));
    this.template = buildRecordBatchSync({ records, baseTimestamp: Date.now() });
    this.recordEnds = new Int32Array(batchRecords);
    this.valueStarts = new Int32Array(batchRecords);
    const view = new RecordBatchView(this.template);
    const cursor = new RecordCursor(view, this.template.subarray(RECORD_BATCH_HEADER_BYTES));
    for (let k = 0; cursor.next(); k++) {
      this.valueStarts[k] = RECORD_BATCH_HEADER_BYTES + cursor.valueStart;
      this.recordEnds[k] = RECORD_BATCH_HEADER_BYTES + cursor.valueStart + Math.max(0, cursor.valueLength) + 1; // + the header count varint (0)
    }
    assert(this.recordEnds[batchRecords - 1] === this.template.length, 'template record positions');
  }

  /**
   * A batch of `n` records. With `stampUs` >= 0, record k carries stampUs + k * stepUs. With
   * `producer`, the batch is stamped with the producer id, epoch and base sequence. The result is
   * the caller's own buffer unless it is the shared unstamped full batch.
   */
  async make(n: number, stampUs = -1, stepUs = 0, producer: { id: number; epoch: number; sequence: number } | null = null): Promise<Buffer> {
    assert(n >= 1 && n <= this.batchRecords, 'records per batch');
    if (n === this.batchRecords && stampUs < 0) {
      this.full ??= await this.assemble(n, -1, 0);
      if (producer === null) return this.full;
      // An idempotent producer's full batch: a copy of the shared one with its own sequence, and a
      // CRC combined from the header and the records' CRC (computed once), so --idempotence costs
      // the tool a copy per batch and not a CRC over every byte the plain mode does not pay.
      const body = this.fullRecordsCrc ??= { crc: crc32c(this.full.subarray(RECORD_BATCH_HEADER_BYTES)), zeros: crc32cZerosOperator(this.full.length - RECORD_BATCH_HEADER_BYTES) };
      const batch = Buffer.allocUnsafe(this.full.length);
      this.full.copy(batch);
      new RecordBatchView(batch).setProducer(producer.id, producer.epoch, producer.sequence, body);
      return batch;
    }
    const batch = await this.assemble(n, stampUs, stepUs);
    if (producer) new RecordBatchView(batch).setProducer(producer.id, producer.epoch, producer.sequence);
    return batch;
  }

  private async assemble(n: number, stampUs: number, stepUs: number): Promise<Buffer> {
    const size = this.recordEnds[n - 1]!;
    const plain = Buffer.allocUnsafe(size);
    this.template.copy(plain, 0, 0, size);
    if (stampUs >= 0) {
      assert(this.recordSize >= 8, 'an e2e record needs at least 8 value bytes for its send time');
      for (let k = 0; k < n; k++) plain.writeDoubleLE(stampUs + k * stepUs, this.valueStarts[k]!);
    }
    plain.writeInt32BE(n - 1, BatchHeaderAt.LastOffsetDelta);
    plain.writeInt32BE(n, BatchHeaderAt.RecordCount);
    const ms = Date.now();
    for (const at of [BatchHeaderAt.BaseTimestamp, BatchHeaderAt.MaxTimestamp]) writeInt64(plain, at, ms, 'timestamp');
    let batch = plain;
    if (this.compression !== Compression.None) {
      const body = await compress(this.compression, plain.subarray(RECORD_BATCH_HEADER_BYTES));
      batch = Buffer.allocUnsafe(RECORD_BATCH_HEADER_BYTES + body.length);
      plain.copy(batch, 0, 0, RECORD_BATCH_HEADER_BYTES);
      body.copy(batch, RECORD_BATCH_HEADER_BYTES);
      batch.writeInt16BE(plain.readInt16BE(BatchHeaderAt.Attributes) | this.compression, BatchHeaderAt.Attributes);
    }
    batch.writeInt32BE(batch.length - LOG_OVERHEAD_BYTES, BatchHeaderAt.BatchLength);
    new RecordBatchView(batch).updateCrc();
    return batch;
  }
}

/** Words of 2..9 random letters from a vocabulary of 512, separated by spaces. */
function textLike(bytes: number, prng: Prng): Buffer {
  const vocabulary = Array.from({ length: 512 }, () => Buffer.from(Array.from({ length: 2 + prng.int(8) }, () => 97 + prng.int(26))));
  const out = Buffer.allocUnsafe(bytes);
  let at = 0;
  while (at < bytes) {
    at += vocabulary[prng.int(vocabulary.length)]!.copy(out, at);
    if (at < bytes) out[at++] = 32;
  }
  return out;
}

export interface ProducerSpec {
  bootstrap: string;
  /** --command-config: Kafka client properties (TLS, SASL), read where the client runs. */
  commandConfig?: string | undefined;
  topic: string;
  records: number;
  recordSize: number;
  /** Records per second; 0 or less for as fast as acknowledgements allow. */
  rate: number;
  acks: number;
  compression: Compression;
  batchRecords: number;
  lingerMs: number;
  /** Outstanding requests per broker connection (Kafka's max.in.flight.requests.per.connection). */
  inFlightMax: number;
  idempotence: boolean;
  /** Put a send time into every record (for `bench e2e`). */
  stamp: boolean;
  /** Where this producer starts its round-robin over the partitions. */
  firstPartition: number;
  /** The run fails when it has not finished by then. */
  maxSeconds: number;
  /** Stop sending after this long (then wait for what is in flight); 0: no limit but the count. */
  durationMs: number;
  /** With a rate: records due in the first this many ms are sent but left out of the latencies. */
  warmupMs?: number;
  seed: number;
}

/** Produces `spec.records` records; resolves when all are acknowledged, rejects on the first error. */
export async function runProducer(spec: ProducerSpec, stats: LoadStats, stopped: () => boolean = () => false): Promise<void> {
  const client = new ClusterClient({ bootstrap: spec.bootstrap, clientId: 'logline-bench', ...commandConfig({ 'command-config': spec.commandConfig }) });
  try {
    const meta = await client.topic(spec.topic);
    const conns = new Map<number, BrokerConnection>();
    for (const p of meta.partitions) if (!conns.has(p.leader)) conns.set(p.leader, await client.broker(p.leader));
    const inFlight = new Map<BrokerConnection, { n: number }>([...conns.values()].map((c) => [c, { n: 0 }]));
    const targets = meta.partitions.map((p) => ({ partition: p.partition, conn: conns.get(p.leader)!, inFlight: inFlight.get(conns.get(p.leader)!)!, sequence: 0 }));
    let producer: { id: number; epoch: number; sequence: number } | null = null;
    if (spec.idempotence) {
      const r = await client.admin(ApiKey.InitProducerId, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }, 4);
      if (r.errorCode !== 0) throw new KafkaError(r.errorCode);
      producer = { id: Number(r.producerId), epoch: r.producerEpoch, sequence: 0 };
    }
    const factory = new BatchFactory(spec.recordSize, spec.batchRecords, spec.compression, spec.seed);
    await factory.make(spec.batchRecords); // builds (and compresses) the shared full batch up front
    const version = targets[0]!.conn.version(ApiKey.Produce, 9);
    await produceLoop(spec, stats, stopped, factory, targets, producer, version);
  } finally {
    client.close();
  }
}

interface Target { partition: number; conn: BrokerConnection; inFlight: { n: number }; sequence: number }

function produceLoop(spec: ProducerSpec, stats: LoadStats, stopped: () => boolean, factory: BatchFactory, targets: Target[], producer: { id: number; epoch: number; sequence: number } | null, version: number): Promise<void> {
  const start = performance.now();
  stats.startedMs = wallMs();
  const msPerRecord = spec.rate > 0 ? 1000 / spec.rate : 0;
  const warmupMs = spec.warmupMs ?? 0;
  const dueAt = (i: number) => start + i * msPerRecord;
  let reserved = 0;
  let total = spec.records;
  let next = 0;
  let wake: NodeJS.Timeout | null = null;
  // Batches go to the socket in the order they were reserved (compression is asynchronous and
  // an idempotent producer's sequences must arrive in order).
  let sendChain: Promise<unknown> = Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let failed = false;
    const fail = (err: Error) => { if (!failed) { failed = true; if (wake) clearTimeout(wake); reject(err); } };
    const deadline = setTimeout(() => fail(new Error(`producer did not finish ${spec.records} records in ${spec.maxSeconds} s`)), spec.maxSeconds * 1000);
    const finish = () => { stats.endedMs = wallMs(); clearTimeout(deadline); if (wake) clearTimeout(wake); resolve(); };
    const sleepUntil = (t: number) => {
      if (wake) return;
      wake = setTimeout(() => { wake = null; pump(); }, Math.max(0, t - performance.now()));
    };
    const acked = (target: Target, first: number, n: number, sentAt: number) => {
      const now = performance.now();
      stats.inFlight--;
      target.inFlight.n--;
      stats.records += n;
      if (msPerRecord > 0) {
        for (let k = 0; k < n; k++) if ((first + k) * msPerRecord >= warmupMs) stats.latencyUs.record((now - dueAt(first + k)) * 1000);
      }
      else stats.latencyUs.record((now - sentAt) * 1000, n);
      if (stats.records >= total) finish();
      else pump();
    };
    // Round-robin over the partitions, skipping those whose leader's connection has
    // inFlightMax requests outstanding (as a Kafka producer's per-connection limit does).
    const nextTarget = (): Target | undefined => {
      for (let k = 0; k < targets.length; k++) {
        const t = targets[(spec.firstPartition + next + k) % targets.length]!;
        if (t.inFlight.n < spec.inFlightMax) {
          next += k + 1;
          return t;
        }
      }
      return undefined;
    };
    const pump = () => {
      while (!failed && reserved < total) {
        if (stopped()) return fail(new Error('stopped'));
        const now = performance.now();
        if (spec.durationMs > 0 && now - start >= spec.durationMs) {
          total = reserved;
          if (stats.records >= total) finish();
          return;
        }
        let n = Math.min(spec.batchRecords, total - reserved);
        if (msPerRecord > 0) {
          const due = Math.min(total, Math.floor((now - start) / msPerRecord) + 1);
          if (due <= reserved) return sleepUntil(dueAt(reserved));
          // Linger: send a partial batch only once its first record has waited lingerMs.
          if (due - reserved < n && now < dueAt(reserved) + spec.lingerMs) return sleepUntil(Math.min(dueAt(reserved) + spec.lingerMs, dueAt(reserved + n - 1)));
          n = Math.min(n, due - reserved);
        }
        const target = nextTarget();
        if (target === undefined) return;
        const first = reserved;
        reserved += n;
        stats.inFlight++;
        target.inFlight.n++;
        const stamp = producer ? { ...producer, sequence: target.sequence } : null;
        if (producer) target.sequence = (target.sequence + n) % 0x80000000;
        const sentAt = msPerRecord > 0 ? dueAt(first) : now;
        const batchP = factory.make(n, spec.stamp ? (performance.timeOrigin + sentAt) * 1000 : -1, msPerRecord * 1000, stamp);
        sendChain = sendChain.then(() => batchP).then((records) => {
          if (failed) return;
          stats.bytes += records.length;
          const body = { transactionalId: null, acks: spec.acks, timeoutMs: 30_000, topicData: [{ name: spec.topic, partitionData: [{ index: target.partition, records }] }] };
          if (spec.acks === 0) {
            target.conn.sendNoResponse(ApiKey.Produce, version, body);
            setImmediate(() => acked(target, first, n, sentAt));
            return;
          }
          target.conn.send(ApiKey.Produce, version, body).then((r) => {
            const code = r.responses[0].partitionResponses[0].errorCode;
            if (code !== ErrorCode.NONE) fail(new KafkaError(code, partitionName(spec.topic, target.partition)));
            else acked(target, first, n, sentAt);
          }, fail);
        }, fail);
      }
    };
    pump();
  });
}

export interface ConsumerSpec {
  bootstrap: string;
  /** --command-config: Kafka client properties (TLS, SASL), read where the client runs. */
  commandConfig?: string | undefined;
  topic: string;
  /** Commit offsets to this group (as a standalone consumer: assign + commit) and start from them. */
  group: string | null;
  /** beginning, or end (what `bench e2e` uses: start at the end offsets, read what is produced). */
  from: 'beginning' | 'end';
  /** Stop after this many records; -1: stop at the high watermarks seen at the start. */
  records: number;
  /** Read each record's send time (e2e); otherwise only batch headers are read. */
  e2e: boolean;
  fetchMaxBytes: number;
  partitionMaxBytes: number;
  maxWaitMs: number;
  maxSeconds: number;
  /** Records per second at most (a slow consumer); 0 or less: as fast as it can. */
  rate: number;
  /** Stop after this long; 0: no limit but the records. */
  durationMs: number;
  /**
   * e2e: records sent in the first this many ms (by their send times, from the first one read)
   * are counted but left out of the latencies, as the producers leave out their warm-up.
   */
  warmupMs?: number;
}

interface Cursor { partition: number; offset: number; end: number }

/** Start offsets (and, with `from: beginning`, the ends to stop at) of every partition. */
async function cursorsFor(client: ClusterClient, conn: BrokerConnection, spec: ConsumerSpec, partitions: number[]): Promise<Cursor[]> {
  const list = async (timestamp: bigint) => {
    const r = await conn.send(ApiKey.ListOffsets, conn.version(ApiKey.ListOffsets, 7), {
      replicaId: -1, isolationLevel: 0, topics: [{ name: spec.topic, partitions: partitions.map((p) => ({ partitionIndex: p, currentLeaderEpoch: -1, timestamp, maxNumOffsets: 1 })) }],
    });
    const out = new Map<number, number>();
    for (const p of r.topics[0].partitions) {
      if (p.errorCode !== 0) throw new KafkaError(p.errorCode, partitionName(spec.topic, p.partitionIndex));
      out.set(p.partitionIndex, Number(p.offset));
    }
    return out;
  };
  const ends = await list(-1n);
  const starts = spec.from === 'end' ? ends : await list(-2n);
  const committed = spec.group ? await committedOffsets(client, spec.group, spec.topic) : new Map<number, number>();
  return partitions.map((p) => ({ partition: p, offset: committed.get(p) ?? starts.get(p)!, end: ends.get(p)! }));
}

async function coordinatorFor(client: ClusterClient, group: string): Promise<BrokerConnection> {
  const any = await client.any();
  return client.retrying(async () => {
    const r = await any.send(ApiKey.FindCoordinator, any.version(ApiKey.FindCoordinator, 3), { key: group, keyType: 0, coordinatorKeys: [] });
    if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage);
    return client.broker(r.nodeId);
  });
}

async function committedOffsets(client: ClusterClient, group: string, topic: string): Promise<Map<number, number>> {
  const c = await coordinatorFor(client, group);
  const r = await c.send(ApiKey.OffsetFetch, c.version(ApiKey.OffsetFetch, 7), { groupId: group, topics: null, groups: [], requireStable: false });
  if (r.errorCode !== 0) throw new KafkaError(r.errorCode);
  const out = new Map<number, number>();
  for (const t of r.topics) {
    if (t.name !== topic) continue;
    for (const p of t.partitions) if (p.errorCode === 0 && p.committedOffset >= 0n) out.set(p.partitionIndex, Number(p.committedOffset));
  }
  return out;
}

async function commit(client: ClusterClient, group: string, topic: string, cursors: Cursor[]): Promise<void> {
  const c = await coordinatorFor(client, group);
  const r = await c.send(ApiKey.OffsetCommit, c.version(ApiKey.OffsetCommit, 8), {
    groupId: group, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1n,
    topics: [{ name: topic, partitions: cursors.map((x) => ({ partitionIndex: x.partition, committedOffset: BigInt(x.offset), committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' })) }],
  });
  for (const t of r.topics) for (const p of t.partitions) if (p.errorCode !== 0) throw new KafkaError(p.errorCode, `commit ${partitionName(t.name, p.partitionIndex)}`);
}

/**
 * Reads a topic the way a consumer does: one Fetch in flight per leader with every partition in
 * it. Counts records from batch headers; with `e2e`, also reads each record's send time. Returns
 * the committed cursors' total when a group is given.
 */
export async function runConsumer(spec: ConsumerSpec, stats: LoadStats, ready: () => void = () => {}, stopped: () => boolean = () => false): Promise<void> {
  const client = new ClusterClient({ bootstrap: spec.bootstrap, clientId: 'logline-bench-consumer', ...commandConfig({ 'command-config': spec.commandConfig }) });
  try {
    const meta = await client.topic(spec.topic);
    const byLeader = new Map<number, number[]>();
    for (const p of meta.partitions) byLeader.set(p.leader, [...(byLeader.get(p.leader) ?? []), p.partition]);
    const all: Cursor[] = [];
    const loops: { conn: BrokerConnection; cursors: Cursor[]; session: FetchSession }[] = [];
    for (const [leader, partitions] of byLeader) {
      const conn = await client.broker(leader);
      const cursors = await cursorsFor(client, conn, spec, partitions);
      loops.push({ conn, cursors, session: { id: 0, epoch: 0, disabled: false, sent: new Map() } });
      all.push(...cursors);
    }
    ready();
    const started = performance.now();
    stats.startedMs = wallMs();
    let lastCommit = started;
    const done = () => (spec.records >= 0 ? stats.records >= spec.records : all.every((c) => c.offset >= c.end));
    while (!done()) {
      if (stopped()) throw new Error('stopped');
      const elapsedMs = performance.now() - started;
      if (spec.durationMs > 0 && elapsedMs >= spec.durationMs) break;
      if (spec.rate > 0 && stats.records > (elapsedMs / 1000) * spec.rate) {
        await new Promise((r) => setTimeout(r, Math.min(1000, (stats.records / spec.rate) * 1000 - elapsedMs)));
        continue;
      }
      if (elapsedMs > spec.maxSeconds * 1000) throw new Error(`consumer read ${stats.records} records and did not finish in ${spec.maxSeconds} s`);
      await Promise.all(loops.map((l) => fetchOnce(l.conn, spec, l.cursors, stats, l.session)));
      if (spec.group && performance.now() - lastCommit > 1000) { await commit(client, spec.group, spec.topic, all); lastCommit = performance.now(); }
    }
    stats.endedMs = wallMs();
    if (spec.group) await commit(client, spec.group, spec.topic, all);
  } finally {
    client.close();
  }
}

/**
 * An incremental fetch session (KIP-227), as the Java consumer keeps one per broker: the first
 * request is full and opens it; later ones carry only the partitions whose fetch offset moved
 * (and forget finished ones). `sent` is what the broker's session holds per partition.
 */
interface FetchSession { id: number; epoch: number; disabled: boolean; sent: Map<number, number>; cursors?: Map<number, Cursor> }

async function fetchOnce(conn: BrokerConnection, spec: ConsumerSpec, cursors: Cursor[], stats: LoadStats, session: FetchSession): Promise<void> {
  const wanted = spec.records >= 0 ? cursors : cursors.filter((c) => c.offset < c.end);
  if (wanted.length === 0) return;
  const incremental = session.id !== 0 && !session.disabled;
  const changed = incremental ? wanted.filter((c) => session.sent.get(c.partition) !== c.offset) : wanted;
  // Every cursor is wanted unless some reached their end (then the session forgets those).
  let forgotten: number[] = [];
  if (incremental && wanted !== cursors) {
    const wantedSet = new Set(wanted.map((c) => c.partition));
    forgotten = [...session.sent.keys()].filter((p) => !wantedSet.has(p));
  }
  const r = await conn.send(ApiKey.Fetch, conn.version(ApiKey.Fetch, 11), {
    replicaId: -1, maxWaitMs: spec.maxWaitMs, minBytes: 1, maxBytes: spec.fetchMaxBytes, isolationLevel: 0,
    sessionId: incremental ? session.id : 0, sessionEpoch: session.disabled ? -1 : incremental ? session.epoch : 0,
    topics: changed.length ? [{ topic: spec.topic, partitions: changed.map((c) => ({ partition: c.partition, currentLeaderEpoch: -1, fetchOffset: BigInt(c.offset), logStartOffset: -1n, partitionMaxBytes: spec.partitionMaxBytes })) }] : [],
    forgottenTopicsData: forgotten.length ? [{ topic: spec.topic, partitions: forgotten }] : [], rackId: '',
  }, { reuseResponseBuffer: true }); // this response is done with before the next Fetch is sent
  const arrivedUs = nowUs();
  if (r.errorCode === ErrorCode.FETCH_SESSION_ID_NOT_FOUND || r.errorCode === ErrorCode.INVALID_FETCH_SESSION_EPOCH) {
    session.id = 0; // start over with a full fetch
    session.sent.clear();
    return;
  }
  if (r.errorCode !== 0) throw new KafkaError(r.errorCode, 'fetch');
  if (!session.disabled) {
    if (!incremental) { session.sent.clear(); session.id = r.sessionId; session.disabled = r.sessionId === 0; session.epoch = 1; }
    else session.epoch = session.epoch === 0x7fffffff ? 1 : session.epoch + 1;
    for (const c of changed) session.sent.set(c.partition, c.offset);
    for (const p of forgotten) session.sent.delete(p);
  }
  // Cursors by partition, built once per session (a Map per Fetch was a visible part of bench e2e).
  const byPartition = session.cursors ??= new Map(cursors.map((c) => [c.partition, c]));
  for (const t of r.responses) {
    for (const p of t.partitions) {
      const c = byPartition.get(p.partitionIndex);
      // Not asked for: a cursor that had reached its end when the Fetch was sent.
      if (!c || (spec.records < 0 && c.offset >= c.end)) continue;
      if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) { c.offset = Number(p.logStartOffset); continue; }
      if (p.errorCode !== 0) throw new KafkaError(p.errorCode, partitionName(spec.topic, p.partitionIndex));
      if (!p.records || p.records.length === 0) continue;
      for (const batch of iterateBatches(p.records, { allowPartialTail: true })) {
        const last = batch.lastOffset;
        if (last < c.offset) continue;
        stats.bytes += batch.sizeInBytes;
        if (batch.isControl) { c.offset = last + 1; continue; }
        // With a record limit, stop exactly at it (a group then commits exactly there); offsets
        // inside a batch are taken as contiguous, which holds for what this tool produced.
        const from = Math.max(c.offset, batch.baseOffset);
        const take = spec.records >= 0 ? Math.min(last + 1 - from, spec.records - stats.records) : last + 1 - from;
        if (take <= 0) return;
        if (spec.e2e) {
          // Uncompressed batches are read in place, without a promise per batch.
          const body = batch.compression === Compression.None ? batch.body() : await decompressBatchBody(batch);
          recordE2e(batch, body, from, take, arrivedUs, stats, (spec.warmupMs ?? 0) * 1000);
        } else stats.records += take;
        c.offset = from + take;
      }
    }
  }
}

function recordE2e(batch: RecordBatchView, body: Buffer, from: number, take: number, arrivedUs: number, stats: LoadStats, warmupUs: number): void {
  const cursor = new RecordCursor(batch, body);
  while (take > 0 && cursor.next()) {
    if (cursor.offset < from) continue;
    take--;
    stats.records++;
    if (cursor.valueLength < 8) continue;
    const sentUs = body.readDoubleLE(cursor.valueStart);
    if (Number.isNaN(stats.measureFromUs)) stats.measureFromUs = sentUs + warmupUs;
    if (sentUs >= stats.measureFromUs) stats.latencyUs.record(Math.max(0, arrivedUs - sentUs));
  }
}
