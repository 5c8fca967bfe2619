// The replica manager: the partitions this broker hosts, the produce path (validate through the
// log, append, wait for the high watermark for acks=all) and the fetch path (read whole batches
// up to the high watermark, long-poll in the fetch purgatory until min_bytes or max_wait_ms).
// Storage and records errors carry Kafka error names as codes; they become error codes here,
// per partition, and never escape as exceptions.
import { ErrorCode } from '../protocol/index.js';
import { BatchHeaderAt, buildControlBatch, convertLegacyMessageSet, LOG_OVERHEAD_BYTES, RECORD_BATCH_HEADER_BYTES } from '../records/index.js';
import { StorageError } from '../storage/index.js';
import { partitionKey as key, type Clock } from '../util/index.js';
import { Partition, type ActiveProducer, type AppendOrigin } from './partition.js';
import { Purgatory, PurgatoryFullError, type Scheduler } from './purgatory.js';

export interface ReplicaManagerLimits {
  fetchPurgatoryOperationsMax: number;
  producePurgatoryOperationsMax: number;
}

export interface ProduceEntryIn {
  topic: string; partition: number; records: Buffer;
  /** Produce v0-2 with magic 0/1 messages: converted to RecordBatch v2 before the append. */
  legacyMessageSet?: boolean;
}
export interface ProduceResultOut {
  errorCode: number; errorMessage: string | null; baseOffset: bigint; logAppendTimeMs: bigint; logStartOffset: bigint;
  recordErrors: { batchIndex: number; batchIndexErrorMessage: string | null }[];
}
export interface FetchPartitionIn { topic: string; partition: number; fetchOffset: bigint; partitionMaxBytes: number; currentLeaderEpoch: number }
export interface FetchResultOut {
  errorCode: number; highWatermark: bigint; lastStableOffset: bigint; logStartOffset: bigint;
  abortedTransactions: { producerId: bigint; firstOffset: bigint }[] | null; preferredReadReplica: number; records: Buffer | null;
}

interface FetchReadParams {
  maxBytes: number; isolationLevel: number; partitions: FetchPartitionIn[];
  /** Memory for the record bytes read (they live as long as the response); fresh buffers when absent. */
  alloc?: (bytes: number) => Buffer;
}

/** The last offset of the last whole batch in `records` (batch headers only). */
function lastOffsetIn(records: Buffer): number {
  let last = -1;
  for (let pos = 0; pos + RECORD_BATCH_HEADER_BYTES <= records.length;) {
    const len = records.readInt32BE(pos + BatchHeaderAt.BatchLength);
    if (pos + LOG_OVERHEAD_BYTES + len > records.length) break;
    last = Number(records.readBigInt64BE(pos + BatchHeaderAt.BaseOffset)) + records.readInt32BE(pos + BatchHeaderAt.LastOffsetDelta);
    pos += LOG_OVERHEAD_BYTES + len;
  }
  return last;
}

/** Size of the largest batch in `records`, from batch lengths alone (validation comes later). */
function largestBatchBytes(records: Buffer): number {
  let largest = 0;
  for (let pos = 0; pos + LOG_OVERHEAD_BYTES <= records.length;) {
    const size = records.readInt32BE(pos + BatchHeaderAt.BatchLength) + LOG_OVERHEAD_BYTES;
    if (size <= LOG_OVERHEAD_BYTES) return records.length; // malformed: let validation name the problem
    largest = Math.max(largest, size);
    pos += size;
  }
  return largest;
}

/** Maps a storage/records error (code = a Kafka error name) to its code. */
export function errorCodeOf(err: unknown): { code: number; message: string } {
  // RecordsError carries the Kafka error name as `code`, StorageError as `kind`.
  const e = err as { code?: unknown; kind?: unknown } | null;
  const name = typeof e?.kind === 'string' ? e.kind : e?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof name === 'string' && name in ErrorCode) return { code: ErrorCode[name as keyof typeof ErrorCode], message };
  return { code: ErrorCode.UNKNOWN_SERVER_ERROR, message };
}

const produceError = (code: number, message: string | null = null): ProduceResultOut =>
  ({ errorCode: code, errorMessage: message, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [] });
const fetchError = (code: number, p?: Partition): FetchResultOut => ({
  errorCode: code, highWatermark: BigInt(p?.highWatermark ?? -1), lastStableOffset: BigInt(p?.lastStableOffset ?? -1),
  logStartOffset: BigInt(p?.log.logStartOffset ?? -1), abortedTransactions: null, preferredReadReplica: -1, records: null,
});

export class ReplicaManager {
  private readonly partitions = new Map<string, Partition>();
  readonly fetchPurgatory: Purgatory<Partition>;
  readonly producePurgatory: Purgatory<Partition>;

  constructor(readonly brokerId: number, readonly clock: Clock, scheduler: Scheduler, limits: ReplicaManagerLimits) {
    this.fetchPurgatory = new Purgatory('fetch', scheduler, limits.fetchPurgatoryOperationsMax);
    this.producePurgatory = new Purgatory('produce', scheduler, limits.producePurgatoryOperationsMax);
  }

  partition(topic: string, index: number): Partition | undefined { return this.partitions.get(key(topic, index)); }
  allPartitions(): IterableIterator<Partition> { return this.partitions.values(); }
  addPartition(p: Partition): void { this.partitions.set(key(p.topic, p.index), p); }
  removePartition(topic: string, index: number): Partition | undefined {
    const p = this.partitions.get(key(topic, index));
    this.partitions.delete(key(topic, index));
    if (p) {
      // Whatever still waits on it expires at its timeout; the purgatories stop keeping its key.
      this.fetchPurgatory.forgetKey(p);
      this.producePurgatory.forgetKey(p);
    }
    return p;
  }

  private leaderPartition(topic: string, index: number): Partition | number {
    const p = this.partitions.get(key(topic, index));
    if (!p) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    if (!p.isLeader) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    return p;
  }

  /** Appends each entry; the results are keyed by partitionKey(topic, partition). */
  async produce(acks: number, timeoutMs: number, entries: ProduceEntryIn[], origin: AppendOrigin = 'client'): Promise<Map<string, ProduceResultOut>> {
    const out = new Map<string, ProduceResultOut>();
    await Promise.all(entries.map(async (e) => {
      out.set(key(e.topic, e.partition), await this.appendOne(acks, timeoutMs, e, origin));
    }));
    return out;
  }

  /**
   * WriteTxnMarkers for one partition: a COMMIT or ABORT control batch for the producer, appended
   * as the coordinator (acks=all). Resolves with an error code.
   */
  async writeTxnMarker(topic: string, index: number, m: { producerId: bigint; producerEpoch: number; coordinatorEpoch: number; commit: boolean }, timeoutMs: number): Promise<number> {
    const records = buildControlBatch({
      type: m.commit ? 'COMMIT' : 'ABORT', producerId: Number(m.producerId), producerEpoch: m.producerEpoch, coordinatorEpoch: m.coordinatorEpoch,
      timestamp: this.clock.nowMs(),
    });
    const out = await this.appendOne(-1, timeoutMs, { topic, partition: index, records }, 'coordinator');
    return out.errorCode;
  }

  /** DescribeProducers: the producers with state in a partition led here. */
  activeProducers(topic: string, index: number): { errorCode: number; producers: ActiveProducer[] } {
    const p = this.leaderPartition(topic, index);
    if (typeof p === 'number') return { errorCode: p, producers: [] };
    return { errorCode: 0, producers: p.log.activeProducers() };
  }

  private async appendOne(acks: number, timeoutMs: number, e: ProduceEntryIn, origin: AppendOrigin): Promise<ProduceResultOut> {
    const p = this.leaderPartition(e.topic, e.partition);
    if (typeof p === 'number') return produceError(p);
    if (acks === -1 && p.isr.length < p.minInsyncReplicas) {
      return produceError(ErrorCode.NOT_ENOUGH_REPLICAS, `ISR ${p.isr.length} is below min.insync.replicas ${p.minInsyncReplicas}`);
    }
    // Legacy messages have their size at the same place as a batch's length: one check for both.
    const tooLarge = largestBatchBytes(e.records);
    if (tooLarge > p.maxMessageBytes) {
      return produceError(ErrorCode.MESSAGE_TOO_LARGE, `batch of ${tooLarge} bytes exceeds max.message.bytes ${p.maxMessageBytes}`);
    }
    let records = e.records;
    if (e.legacyMessageSet) {
      const converted = await this.upConvert(p, records);
      if (!Buffer.isBuffer(converted)) return converted;
      records = converted;
    }
    let appended;
    try {
      appended = await p.log.appendAsLeader(records, p.leaderEpoch, origin);
    } catch (err) {
      const { code, message } = errorCodeOf(err);
      const failed = produceError(code, message);
      // KIP-467: which records made the batch fail, so a client can fail those and retry the rest.
      if (err instanceof StorageError) failed.recordErrors = err.recordErrors.map((r) => ({ batchIndex: r.batchIndex, batchIndexErrorMessage: r.message }));
      return failed;
    }
    p.bytesAppended += records.length;
    if (p.maybeAdvanceHighWatermark()) this.onHighWatermark(p);
    const result: ProduceResultOut = {
      errorCode: 0, errorMessage: null, baseOffset: BigInt(appended.firstOffset), logAppendTimeMs: BigInt(appended.logAppendTimeMs),
      logStartOffset: BigInt(p.log.logStartOffset), recordErrors: [],
    };
    if (acks !== -1 || p.highWatermark > appended.lastOffset) return result;
    return new Promise((resolve) => {
      const op = {
        tryComplete: () => {
          if (p.highWatermark <= appended.lastOffset) return false;
          resolve(result);
          return true;
        },
        onExpiration: () => resolve(produceError(ErrorCode.REQUEST_TIMED_OUT)),
      };
      try {
        this.producePurgatory.tryCompleteElseWatch(op, [p], timeoutMs);
      } catch (err) {
        if (!(err instanceof PurgatoryFullError)) throw err;
        resolve(produceError(ErrorCode.REQUEST_TIMED_OUT, err.message));
      }
    });
  }

  /**
   * A legacy message set as one RecordBatch v2 (Kafka's LogValidator up-conversion), or the error
   * answer. The converted batch must fit max.message.bytes too, and the partition may have lost
   * its leadership while a wrapper was inflated.
   */
  private async upConvert(p: Partition, legacy: Buffer): Promise<Buffer | ProduceResultOut> {
    let batch: Buffer;
    try {
      batch = await convertLegacyMessageSet(legacy);
    } catch (err) {
      const { code, message } = errorCodeOf(err);
      return produceError(code, message);
    }
    if (batch.length > p.maxMessageBytes) {
      return produceError(ErrorCode.MESSAGE_TOO_LARGE, `converted batch of ${batch.length} bytes exceeds max.message.bytes ${p.maxMessageBytes}`);
    }
    if (!p.isLeader) return produceError(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    return batch;
  }

  /** The high watermark moved: wake acks=all producers and fetchers of this partition. */
  onHighWatermark(p: Partition): void {
    this.producePurgatory.checkAndComplete(p);
    this.fetchPurgatory.checkAndComplete(p);
  }

  /** Reads for a Fetch; record bytes go into `params.alloc`'s memory when given (see FetchParams). */
  async fetch(params: FetchReadParams & { maxWaitMs: number; minBytes: number }): Promise<FetchResultOut[]> {
    const first = await this.readAll(params);
    let bytes = 0;
    for (const r of first) {
      if (r.errorCode !== 0) return first;
      bytes += r.records?.length ?? 0;
    }
    if (params.maxWaitMs <= 0 || bytes >= params.minBytes || params.partitions.length === 0) return first;
    // Not enough yet: wait until what was there plus the bytes appended since make up min_bytes.
    // No error above means every partition is led here.
    const watched = params.partitions.map((fp) => this.partitions.get(key(fp.topic, fp.partition))!);
    const startBytes = watched.map((p) => p.bytesAppended);
    // read_committed can only read below the LSO: appends to an open transaction do not count
    // until the LSO moves (else every such append would wake the fetch just to answer nothing).
    const committedOnly = params.isolationLevel === 1;
    const startLso = committedOnly ? watched.map((p) => p.lastStableOffset) : [];
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = () => {
        if (settled) return;
        settled = true;
        this.readAll(params).then(resolve, reject);
      };
      const op = {
        tryComplete: () => {
          let available = bytes;
          for (let i = 0; i < watched.length; i++) {
            const p = watched[i]!;
            if (!committedOnly || p.lastStableOffset > startLso[i]!) available += p.bytesAppended - startBytes[i]!;
          }
          if (available < params.minBytes) return false;
          finish();
          return true;
        },
        onExpiration: finish,
      };
      try {
        this.fetchPurgatory.tryCompleteElseWatch(op, watched, params.maxWaitMs);
      } catch (err) {
        if (!(err instanceof PurgatoryFullError)) { reject(err); return; }
        finish();
      }
    });
  }

  private async readAll(params: FetchReadParams): Promise<FetchResultOut[]> {
    let budget = params.maxBytes;
    let anyData = false;
    const results: FetchResultOut[] = new Array(params.partitions.length);
    for (let i = 0; i < params.partitions.length; i++) {
      const fp = params.partitions[i]!;
      // Most partitions of a long-lived fetch session have nothing new: answer those without a
      // promise, so an idle partition costs a few comparisons.
      const checked = this.checkFetch(fp);
      let r: FetchResultOut;
      if (checked instanceof Partition) {
        const upTo = params.isolationLevel === 1 ? checked.lastStableOffset : checked.highWatermark;
        // KIP-74: the first partition with data returns at least one whole batch, even past max_bytes.
        const maxBytes = Math.min(fp.partitionMaxBytes, Math.max(0, budget));
        const offset = Number(fp.fetchOffset);
        const wanted = offset < upTo && (maxBytes > 0 || !anyData);
        r = wanted ? await this.readOne(checked, offset, !anyData ? Math.max(1, maxBytes) : maxBytes, upTo, params.isolationLevel, params.alloc) : this.fetchAnswer(checked, null, params.isolationLevel);
      } else {
        r = checked;
      }
      if (r.records && r.records.length > 0) {
        budget -= r.records.length;
        anyData = true;
      }
      results[i] = r;
    }
    return results;
  }

  /** The partition to read, or the error answer: unknown, not the leader, a stale epoch, an offset out of range. */
  private checkFetch(fp: FetchPartitionIn): Partition | FetchResultOut {
    const p = this.leaderPartition(fp.topic, fp.partition);
    if (typeof p === 'number') return fetchError(p);
    if (fp.currentLeaderEpoch >= 0 && fp.currentLeaderEpoch !== p.leaderEpoch) {
      return fetchError(fp.currentLeaderEpoch > p.leaderEpoch ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.FENCED_LEADER_EPOCH, p);
    }
    const offset = Number(fp.fetchOffset);
    if (offset < p.log.logStartOffset || offset > p.log.logEndOffset) return fetchError(ErrorCode.OFFSET_OUT_OF_RANGE, p);
    return p;
  }

  private async readOne(p: Partition, offset: number, maxBytes: number, upTo: number, isolationLevel: number, alloc?: (bytes: number) => Buffer): Promise<FetchResultOut> {
    let records: Buffer | null = null;
    try {
      const read = await p.log.read(offset, maxBytes, upTo, alloc);
      records = read.length > 0 ? read : null;
    } catch (err) {
      return fetchError(errorCodeOf(err).code, p);
    }
    return this.fetchAnswer(p, records, isolationLevel, offset);
  }

  private fetchAnswer(p: Partition, records: Buffer | null, isolationLevel: number, offset = 0): FetchResultOut {
    // The aborted transactions overlapping what is returned, so the client can drop their records.
    let abortedTransactions: FetchResultOut['abortedTransactions'] = null;
    if (isolationLevel === 1) {
      abortedTransactions = records === null ? [] : p.log.abortedTransactions(offset, lastOffsetIn(records) + 1)
        .map((t) => ({ producerId: BigInt(t.producerId), firstOffset: BigInt(t.firstOffset) }));
    }
    return {
      errorCode: 0, highWatermark: p.wire.highWatermark.of(p.highWatermark), lastStableOffset: p.wire.lastStableOffset.of(p.lastStableOffset),
      logStartOffset: p.wire.logStartOffset.of(p.log.logStartOffset), abortedTransactions, preferredReadReplica: -1, records,
    };
  }

  async listOffsets(topic: string, index: number, timestamp: bigint, currentLeaderEpoch: number, isolationLevel = 0): Promise<{ errorCode: number; timestamp: bigint; offset: bigint; leaderEpoch: number }> {
    const p = this.leaderPartition(topic, index);
    if (typeof p === 'number') return { errorCode: p, timestamp: -1n, offset: -1n, leaderEpoch: -1 };
    if (currentLeaderEpoch >= 0 && currentLeaderEpoch !== p.leaderEpoch) {
      const code = currentLeaderEpoch > p.leaderEpoch ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.FENCED_LEADER_EPOCH;
      return { errorCode: code, timestamp: -1n, offset: -1n, leaderEpoch: -1 };
    }
    const ok = (offset: number, ts = -1, epoch = p.leaderEpoch) => ({ errorCode: 0, timestamp: BigInt(ts), offset: BigInt(offset), leaderEpoch: epoch });
    const end = isolationLevel === 1 ? p.lastStableOffset : p.highWatermark;
    switch (timestamp) {
      case -1n: return ok(end);
      case -2n: case -4n: return ok(p.log.logStartOffset);
      case -5n: return ok(-1, -1, -1); // nothing is tiered yet
      case -3n: {
        const m = await p.log.maxTimestampOffset();
        return m ? ok(m.offset, m.timestamp, m.leaderEpoch) : ok(-1, -1, -1);
      }
      default: {
        const found = await p.log.offsetForTimestamp(Number(timestamp));
        return found && found.offset < end ? ok(found.offset, found.timestamp, found.leaderEpoch) : { errorCode: 0, timestamp: -1n, offset: -1n, leaderEpoch: -1 };
      }
    }
  }

  /** DeleteRecords: -1 means "up to the high watermark"; beyond it is OFFSET_OUT_OF_RANGE. */
  async deleteRecords(topic: string, index: number, offset: bigint): Promise<{ errorCode: number; lowWatermark: bigint }> {
    const p = this.leaderPartition(topic, index);
    if (typeof p === 'number') return { errorCode: p, lowWatermark: -1n };
    const target = offset === -1n ? p.highWatermark : Number(offset);
    if (target < 0 || target > p.highWatermark) return { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, lowWatermark: BigInt(p.log.logStartOffset) };
    try {
      return { errorCode: 0, lowWatermark: BigInt(await p.log.deleteRecordsBefore(Math.max(target, p.log.logStartOffset))) };
    } catch (err) {
      return { errorCode: errorCodeOf(err).code, lowWatermark: BigInt(p.log.logStartOffset) };
    }
  }

  /** OffsetForLeaderEpoch: where `leaderEpoch` ended on this leader's log, for follower truncation. */
  offsetForLeaderEpoch(topic: string, index: number, currentLeaderEpoch: number, leaderEpoch: number): { errorCode: number; leaderEpoch: number; endOffset: bigint } {
    const p = this.leaderPartition(topic, index);
    if (typeof p === 'number') return { errorCode: p, leaderEpoch: -1, endOffset: -1n };
    if (currentLeaderEpoch >= 0 && currentLeaderEpoch !== p.leaderEpoch) {
      return { errorCode: currentLeaderEpoch > p.leaderEpoch ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.FENCED_LEADER_EPOCH, leaderEpoch: -1, endOffset: -1n };
    }
    // The current epoch ends at the log end offset; older ones where the next epoch began.
    if (leaderEpoch === p.leaderEpoch) return { errorCode: 0, leaderEpoch, endOffset: BigInt(p.log.logEndOffset) };
    const found = p.log.endOffsetForEpoch(leaderEpoch);
    return found ? { errorCode: 0, leaderEpoch: found.leaderEpoch, endOffset: BigInt(found.endOffset) } : { errorCode: 0, leaderEpoch: -1, endOffset: -1n };
  }
}
