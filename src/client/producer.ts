// A producer and a read_committed fetch on src/client's connections, kept small enough that every
// outcome is known (first written for `logline verify`'s workload, now shared with the mirror).
// A send is one batch of an idempotent (or transactional) producer to one partition, retried with
// the same sequence until its deadline; its outcome is `ok` with the acknowledged base offset, or an
// `Outcome` that says whether the batch certainly was not written (definite) or may have been. A
// fetch is read_committed and drops the records of aborted transactions as the Java consumer does
// (the broker lists them).
import { ApiKey, ErrorCode, errorName, isRetriable } from '../protocol/index.js';
import {
  buildRecordBatchSync, decompressBatchBody, iterateBatches, iterateRecords, parseControlRecordType, TimestampType,
  type RecordBatchView, type RecordHeader, type RecordInput,
} from '../records/index.js';
import { partitionKey, partitionName } from '../util/index.js';
import { ClusterClient, KafkaError, type ClusterClientOptions } from './cluster.js';
import { ClientError, type BrokerConnection } from './connection.js';
import { coordinatorFor } from './groups.js';

/** Why an operation did not complete `ok`; `definite`: it certainly did not take effect. */
export class Outcome extends Error {
  override name = 'Outcome';
  constructor(message: string, readonly definite: boolean, readonly reinit = false) { super(message); }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Lost connections and timeouts: the request may or may not have been carried out. */
function ambiguous(err: unknown): boolean {
  return err instanceof ClientError && (err.code === 'CONNECTION' || err.code === 'TIMEOUT');
}

/** Errors after which the producer's id, epoch or sequences are no longer usable: it starts over with InitProducerId. */
const FATAL_FOR_PRODUCER = new Set<number>([
  ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, ErrorCode.UNKNOWN_PRODUCER_ID, ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.PRODUCER_FENCED,
]);

/** Coordinator answers that mean: ask again (after finding the coordinator again). */
const COORDINATOR_RETRY = new Set<number>([
  ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.CONCURRENT_TRANSACTIONS,
]);

/** A cluster connection with a cache of partition leaders, refreshed when a leader is wrong or gone. */
export class Cluster {
  readonly client: ClusterClient;
  /** topic → partition → leader id. */
  private leaders = new Map<string, Map<number, number>>();

  constructor(options: ClusterClientOptions) {
    this.client = new ClusterClient(options);
  }

  async leader(topic: string, partition: number): Promise<BrokerConnection> {
    let id = this.leaders.get(topic)?.get(partition);
    if (id === undefined || id < 0) {
      await this.refresh(topic);
      id = this.leaders.get(topic)?.get(partition);
      if (id === undefined || id < 0) throw new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, partitionName(topic, partition));
    }
    return this.client.broker(id);
  }

  async refresh(topic: string): Promise<void> {
    const [t] = await this.client.metadata([topic]);
    if (!t || t.errorCode !== 0) throw new KafkaError(t?.errorCode ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, topic);
    this.leaders.set(topic, new Map(t.partitions.map((p) => [p.partition, p.leader])));
  }

  forget(): void { this.leaders.clear(); }

  /** A coordinator (keyType 0: group, 1: transactional id), asked again until `deadline`. */
  async coordinator(key: string, keyType: 0 | 1, deadline: number): Promise<BrokerConnection> {
    for (let backoff = 50; ; backoff = Math.min(backoff * 2, 500)) {
      try {
        if (keyType === 0) return await coordinatorFor(this.client, key);
        const any = await this.client.any();
        const r = await any.send(ApiKey.FindCoordinator, any.version(ApiKey.FindCoordinator, 3), { key, keyType, coordinatorKeys: [] });
        if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage);
        return await this.client.broker(r.nodeId);
      } catch (err) {
        if (Date.now() + backoff > deadline) throw err;
        await sleep(backoff);
      }
    }
  }

  close(): void { this.client.close(); }
}

/**
 * Sends `request` to the coordinator of `key` until it answers something other than "ask again"
 * or `deadline` passes; `code` reads the answer's error. Returns the last answer's code, or throws
 * the last connection error (`ambiguous` then says whether the request may have been carried out).
 */
export async function toCoordinator(cluster: Cluster, key: string, keyType: 0 | 1, deadline: number, request: (c: BrokerConnection) => Promise<number>): Promise<{ code: number; ambiguous: boolean }> {
  let wasAmbiguous = false;
  for (let backoff = 50; ; backoff = Math.min(backoff * 2, 500)) {
    let code: number;
    try {
      code = await request(await cluster.coordinator(key, keyType, deadline));
    } catch (err) {
      if (!(err instanceof ClientError || (err instanceof KafkaError && err.retriable))) throw err;
      wasAmbiguous ||= ambiguous(err);
      if (Date.now() + backoff > deadline) throw new Outcome(`${err.message}`, !wasAmbiguous);
      await sleep(backoff);
      continue;
    }
    if (!COORDINATOR_RETRY.has(code) || Date.now() + backoff > deadline) return { code, ambiguous: wasAmbiguous };
    await sleep(backoff);
  }
}

export interface ProducerOptions { transactionalId: string | null; transactionTimeoutMs: number; deliveryTimeoutMs: number }

/** A topic and its partitions, as AddPartitionsToTxn and TxnOffsetCommit name them. */
export type TopicPartitions = ReadonlyMap<string, readonly number[]>;

/** An idempotent producer, transactional with a `transactionalId`: one batch per send. */
export class Producer {
  private id = -1n;
  private epoch = -1;
  /** Next sequence per partition key ("topic-partition"). */
  private readonly sequences = new Map<string, number>();
  /** Partitions already added to the open transaction. */
  private readonly inTxn = new Set<string>();

  constructor(private readonly cluster: Cluster, private readonly o: ProducerOptions) {}

  get ready(): boolean { return this.id >= 0n; }

  /** InitProducerId: a new id (idempotent) or the next epoch, which aborts an open transaction (transactional). */
  async init(deadline: number): Promise<void> {
    this.id = -1n;
    this.sequences.clear();
    this.inTxn.clear();
    const body = { transactionalId: this.o.transactionalId, transactionTimeoutMs: this.o.transactionTimeoutMs, producerId: -1n, producerEpoch: -1 };
    let answer: { errorCode: number; producerId: bigint; producerEpoch: number } | undefined;
    const send = async (c: BrokerConnection) => { answer = await c.send(ApiKey.InitProducerId, c.version(ApiKey.InitProducerId, 4), body); return answer!.errorCode; };
    const { code } = this.o.transactionalId === null
      ? await retryAny(this.cluster, deadline, send)
      : await toCoordinator(this.cluster, this.o.transactionalId, 1, deadline, send);
    if (code !== 0) throw new Outcome(`InitProducerId: ${errorName(code)}`, true);
    this.id = answer!.producerId;
    this.epoch = answer!.producerEpoch;
  }

  /** AddPartitionsToTxn (v3, the client's form) for the partitions not yet in the transaction. */
  async addPartitions(partitions: TopicPartitions, deadline: number): Promise<void> {
    const id = this.o.transactionalId!;
    const missing = new Map<string, number[]>();
    for (const [topic, ps] of partitions) {
      const todo = [...new Set(ps)].filter((p) => !this.inTxn.has(partitionKey(topic, p)));
      if (todo.length > 0) missing.set(topic, todo);
    }
    if (missing.size === 0) return;
    let errors: number[] = [];
    const { code } = await toCoordinator(this.cluster, id, 1, deadline, async (c) => {
      const r = await c.send(ApiKey.AddPartitionsToTxn, 3, {
        v3AndBelowTransactionalId: id, v3AndBelowProducerId: this.id, v3AndBelowProducerEpoch: this.epoch,
        v3AndBelowTopics: [...missing].map(([name, ps]) => ({ name, partitions: ps })), transactions: [],
      });
      errors = r.resultsByTopicV3AndBelow.flatMap((t: any) => t.resultsByPartition.map((p: any) => p.partitionErrorCode)).filter((e: number) => e !== 0);
      return errors.find((e) => COORDINATOR_RETRY.has(e)) ?? errors[0] ?? 0;
    });
    if (code !== 0) throw new Outcome(`AddPartitionsToTxn: ${errorName(code)}`, true, FATAL_FOR_PRODUCER.has(code));
    for (const [topic, ps] of missing) for (const p of ps) this.inTxn.add(partitionKey(topic, p));
  }

  /**
   * Sends `records` as one batch; resolves with the offset of its first record (null: acknowledged
   * as a duplicate, offset unknown).
   */
  async send(topic: string, partition: number, records: RecordInput[], deadline: number): Promise<number | null> {
    const sequence = this.sequences.get(partitionKey(topic, partition)) ?? 0;
    const batch = buildRecordBatchSync({
      records, producerId: Number(this.id), producerEpoch: this.epoch, baseSequence: sequence, isTransactional: this.o.transactionalId !== null,
    });
    return this.produce(topic, partition, batch, records.length, sequence, deadline);
  }

  /**
   * Sends another producer's batch whole (a mirror passing it on): the records keep their bytes,
   * the batch takes this producer's stamp. Resolves as `send`.
   */
  async sendBatch(topic: string, partition: number, view: RecordBatchView, deadline: number): Promise<number | null> {
    const sequence = this.sequences.get(partitionKey(topic, partition)) ?? 0;
    const batch = view.copyForProducer({ producerId: Number(this.id), producerEpoch: this.epoch, baseSequence: sequence, isTransactional: this.o.transactionalId !== null });
    return this.produce(topic, partition, batch.buf, view.recordCount, sequence, deadline);
  }

  private async produce(topic: string, partition: number, batch: Buffer, count: number, sequence: number, deadline: number): Promise<number | null> {
    const name = partitionKey(topic, partition);
    const body = { transactionalId: this.o.transactionalId, acks: -1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: partition, records: batch }] }] };
    let wasAmbiguous = false;
    for (let backoff = 50; ; backoff = Math.min(backoff * 2, 500)) {
      let code: number;
      let offset = -1n;
      try {
        const conn = await this.cluster.leader(topic, partition);
        const r = await conn.send(ApiKey.Produce, conn.version(ApiKey.Produce, 9), body);
        const p = r.responses[0].partitionResponses[0];
        code = p.errorCode;
        offset = p.baseOffset;
      } catch (err) {
        if (!(err instanceof ClientError || (err instanceof KafkaError && err.retriable))) throw err;
        wasAmbiguous ||= ambiguous(err);
        code = err instanceof KafkaError ? err.errorCode : -1;
      }
      if (code === 0 || code === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
        this.sequences.set(name, (sequence + count) % 0x80000000);
        return code === 0 && offset >= 0n ? Number(offset) : null;
      }
      if (code !== -1 && !isRetriable(code)) {
        // A definite refusal of this attempt; earlier attempts that timed out may still have written it.
        throw new Outcome(`Produce: ${errorName(code)}`, !wasAmbiguous, FATAL_FOR_PRODUCER.has(code) || wasAmbiguous);
      }
      this.cluster.forget();
      if (Date.now() + backoff > deadline) {
        // The sequence may or may not have been taken: only a new producer id starts clean.
        throw new Outcome(`Produce: no acknowledgement in time (last: ${code === -1 ? 'connection' : errorName(code)})`, !wasAmbiguous, true);
      }
      await sleep(backoff);
    }
  }

  /** AddOffsetsToTxn and TxnOffsetCommit: the consumer's positions commit (or abort) with the transaction. */
  async sendOffsets(group: string, topic: string, positions: ReadonlyMap<number, number>, deadline: number): Promise<void> {
    const id = this.o.transactionalId!;
    const added = await toCoordinator(this.cluster, id, 1, deadline, async (c) =>
      (await c.send(ApiKey.AddOffsetsToTxn, c.version(ApiKey.AddOffsetsToTxn, 3), { transactionalId: id, producerId: this.id, producerEpoch: this.epoch, groupId: group })).errorCode);
    if (added.code !== 0) throw new Outcome(`AddOffsetsToTxn: ${errorName(added.code)}`, true, FATAL_FOR_PRODUCER.has(added.code));
    const committed = await toCoordinator(this.cluster, group, 0, deadline, async (c) => {
      const r = await c.send(ApiKey.TxnOffsetCommit, c.version(ApiKey.TxnOffsetCommit, 3), {
        transactionalId: id, groupId: group, producerId: this.id, producerEpoch: this.epoch, generationId: -1, memberId: '', groupInstanceId: null,
        topics: [{ name: topic, partitions: [...positions].map(([partitionIndex, offset]) => ({ partitionIndex, committedOffset: BigInt(offset), committedLeaderEpoch: -1, committedMetadata: '' })) }],
      });
      return r.topics.flatMap((t: any) => t.partitions.map((p: any) => p.errorCode)).find((e: number) => e !== 0) ?? 0;
    });
    if (committed.code !== 0) throw new Outcome(`TxnOffsetCommit: ${errorName(committed.code)}`, true, FATAL_FOR_PRODUCER.has(committed.code));
  }

  /** EndTxn. A commit whose answer was lost and that no retry settled is ambiguous (info). */
  async end(commit: boolean, deadline: number): Promise<void> {
    const id = this.o.transactionalId!;
    this.inTxn.clear();
    const r = await toCoordinator(this.cluster, id, 1, deadline, async (c) =>
      (await c.send(ApiKey.EndTxn, c.version(ApiKey.EndTxn, 3), { transactionalId: id, producerId: this.id, producerEpoch: this.epoch, committed: commit })).errorCode);
    if (r.code !== 0) throw new Outcome(`EndTxn(${commit ? 'commit' : 'abort'}): ${errorName(r.code)}`, !commit || !r.ambiguous, true);
  }
}

/** `request` to any broker, again on connection errors until `deadline`. */
async function retryAny(cluster: Cluster, deadline: number, request: (c: BrokerConnection) => Promise<number>): Promise<{ code: number }> {
  for (let backoff = 50; ; backoff = Math.min(backoff * 2, 500)) {
    try {
      const code = await request(await cluster.client.any());
      if (!isRetriable(code) || Date.now() + backoff > deadline) return { code };
    } catch (err) {
      if (!(err instanceof ClientError) || Date.now() + backoff > deadline) throw err;
    }
    await sleep(backoff);
  }
}

/** One record as a consumer sees it. */
export interface FetchedRecord { offset: number; timestamp: number; key: Buffer | null; value: Buffer | null; headers: RecordHeader[] }

/**
 * Part of a partition's committed data, in offset order: a batch kept whole (every offset from its
 * base to its last offset, contiguous, CreateTime) or records read out of batches.
 */
export type FetchedRun = { batch: RecordBatchView; records?: undefined } | { records: FetchedRecord[]; batch?: undefined };

/**
 * What one fetch returned for a partition: its records and where the next fetch starts. With
 * FetchOptions.wholeBatches, `runs` holds the data instead (and `records` is empty).
 */
export interface FetchedPartition {
  topic: string; partition: number; records: FetchedRecord[]; runs?: FetchedRun[]; next: number; lastStableOffset: number; highWatermark: number;
}

export interface FetchOptions {
  maxWaitMs: number;
  /** Bytes per partition in one fetch (Kafka's max.partition.fetch.bytes); 256 KiB by default. */
  partitionMaxBytes?: number;
  /**
   * Keep batches of this many bytes or more (up to `max`) whole, for a caller that passes them on
   * as they are; smaller ones, and any that cannot be passed on as they are, are read into records.
   */
  wholeBatches?: { min: number; max: number };
}

/**
 * One read_committed Fetch per leader for the partitions at `positions` (topic → partition →
 * offset; without a session: a fresh full fetch each time is simplest to reason about).
 * Partitions whose leader moved or did not answer are left out (the caller fetches them again).
 * Control batches and the records of aborted transactions are dropped; records below a position
 * are too (a batch starts where it starts).
 */
export async function fetchCommitted(cluster: Cluster, positions: ReadonlyMap<string, ReadonlyMap<number, number>>, options: FetchOptions): Promise<FetchedPartition[]> {
  const byLeader = new Map<BrokerConnection, Map<string, number[]>>();
  for (const [topic, partitions] of positions) {
    for (const partition of partitions.keys()) {
      try {
        const conn = await cluster.leader(topic, partition);
        const forLeader = byLeader.get(conn) ?? new Map<string, number[]>();
        forLeader.set(topic, [...(forLeader.get(topic) ?? []), partition]);
        byLeader.set(conn, forLeader);
      } catch {
        cluster.forget();
      }
    }
  }
  const partitionMaxBytes = options.partitionMaxBytes ?? 256 * 1024;
  const out: FetchedPartition[] = [];
  await Promise.all([...byLeader].map(async ([conn, topics]) => {
    let r;
    try {
      r = await conn.send(ApiKey.Fetch, conn.version(ApiKey.Fetch, 11), {
        replicaId: -1, maxWaitMs: options.maxWaitMs, minBytes: 1, maxBytes: 4 << 20, isolationLevel: 1, sessionId: 0, sessionEpoch: -1,
        topics: [...topics].map(([topic, ps]) => ({ topic, partitions: ps.map((p) => ({ partition: p, currentLeaderEpoch: -1, fetchOffset: BigInt(positions.get(topic)!.get(p)!), logStartOffset: -1n, partitionMaxBytes })) })),
        forgottenTopicsData: [], rackId: '',
      });
    } catch (err) {
      if (!(err instanceof ClientError)) throw err;
      cluster.forget();
      return;
    }
    for (const t of r.responses) {
      for (const p of t.partitions) {
        const position = positions.get(t.topic)!.get(p.partitionIndex)!;
        if (p.errorCode !== 0) {
          if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) throw new KafkaError(p.errorCode, `${partitionName(t.topic, p.partitionIndex)} at ${position}`);
          cluster.forget();
          continue;
        }
        out.push(await committedRecords(t.topic, p, position, options.wholeBatches ?? null));
      }
    }
  }));
  return out.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
}

/** Whether a batch can be passed on as it is: whole above `position`, offsets contiguous, its own timestamps. */
function passesWhole(batch: RecordBatchView, position: number, whole: { min: number; max: number }): boolean {
  const size = batch.sizeInBytes;
  return size >= whole.min && size <= whole.max && batch.baseOffset >= position && batch.recordCount > 0
    && batch.recordCount === batch.lastOffsetDelta + 1 && batch.timestampType === TimestampType.CreateTime && !batch.hasDeleteHorizon;
}

async function committedRecords(topic: string, p: any, position: number, whole: { min: number; max: number } | null): Promise<FetchedPartition> {
  // The aborted transactions in this range, by first offset; a producer's records count as aborted
  // from its first offset until its ABORT marker (what the Java consumer's fetcher does).
  const aborted = ((p.abortedTransactions ?? []) as { producerId: bigint; firstOffset: bigint }[])
    .map((a) => ({ producerId: Number(a.producerId), firstOffset: Number(a.firstOffset) })).sort((a, b) => a.firstOffset - b.firstOffset);
  const abortedNow = new Set<number>();
  const records: FetchedRecord[] = [];
  const runs: FetchedRun[] = [];
  let next = position;
  if (p.records && p.records.length > 0) {
    for (const batch of iterateBatches(p.records, { allowPartialTail: true })) {
      while (aborted.length > 0 && aborted[0]!.firstOffset <= batch.lastOffset) abortedNow.add(aborted.shift()!.producerId);
      if (batch.lastOffset < position) continue;
      next = batch.lastOffset + 1;
      if (batch.isControl) {
        const body = await decompressBatchBody(batch);
        for (const rec of iterateRecords(batch, body)) if (parseControlRecordType(rec.key) === 'ABORT') abortedNow.delete(batch.producerId);
        continue;
      }
      if (batch.isTransactional && abortedNow.has(batch.producerId)) continue;
      if (whole !== null && passesWhole(batch, position, whole)) { runs.push({ batch }); continue; }
      let into = records;
      if (whole !== null) {
        const last = runs[runs.length - 1];
        if (last?.records !== undefined) into = last.records;
        else { into = []; runs.push({ records: into }); }
      }
      for (const rec of iterateRecords(batch, await decompressBatchBody(batch))) {
        if (rec.offset >= position) into.push({ offset: rec.offset, timestamp: rec.timestamp, key: rec.key, value: rec.value, headers: rec.headers });
      }
    }
  }
  return {
    topic, partition: p.partitionIndex, records, ...(whole !== null ? { runs } : {}), next,
    lastStableOffset: Number(p.lastStableOffset), highWatermark: Number(p.highWatermark),
  };
}

/** OffsetFetch with require_stable (KIP-447): waits out pending transactional commits. Only `topic`'s partitions; none: none committed. */
export async function committedPositions(cluster: Cluster, group: string, topic: string, deadline: number): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  const { code } = await toCoordinator(cluster, group, 0, deadline, async (c) => {
    const r = await c.send(ApiKey.OffsetFetch, c.version(ApiKey.OffsetFetch, 7), { groupId: group, topics: null, groups: [], requireStable: true });
    if (r.errorCode !== 0) return r.errorCode === ErrorCode.UNSTABLE_OFFSET_COMMIT ? ErrorCode.CONCURRENT_TRANSACTIONS : r.errorCode;
    out.clear();
    for (const t of r.topics) {
      if (t.name !== topic) continue;
      for (const p of t.partitions) {
        if (p.errorCode === ErrorCode.UNSTABLE_OFFSET_COMMIT) return ErrorCode.CONCURRENT_TRANSACTIONS; // ask again, like the coordinator's own retry codes
        if (p.errorCode !== 0) return p.errorCode;
        if (p.committedOffset >= 0n) out.set(p.partitionIndex, Number(p.committedOffset));
      }
    }
    return 0;
  });
  if (code !== 0) throw new Outcome(`OffsetFetch: ${errorName(code)}`, true);
  return out;
}

/**
 * OffsetCommit outside any group generation (Kafka's simple consumer groups: assign, then commit;
 * also what kafka-consumer-groups --reset-offsets and Admin.alterConsumerGroupOffsets send, which a
 * group with members refuses).
 */
export async function commitPositions(cluster: Cluster, group: string, topic: string, positions: ReadonlyMap<number, number>, deadline: number, metadata = ''): Promise<void> {
  const { code } = await toCoordinator(cluster, group, 0, deadline, async (c) => {
    const r = await c.send(ApiKey.OffsetCommit, c.version(ApiKey.OffsetCommit, 8), {
      groupId: group, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1n,
      topics: [{ name: topic, partitions: [...positions].map(([partitionIndex, offset]) => ({ partitionIndex, committedOffset: BigInt(offset), committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: metadata })) }],
    });
    return r.topics.flatMap((t: any) => t.partitions.map((p: any) => p.errorCode)).find((e: number) => e !== 0) ?? 0;
  });
  if (code !== 0) throw new Outcome(`OffsetCommit: ${errorName(code)}`, true);
}
