// The coordinator runtime: the only asynchronous code around a shard. Operations on one shard run
// one at a time, in order: run the operation (pure), append its records to the shard's partition,
// replay them, then send its replies — so no response precedes the write it depends on. Loading a
// partition replays it from the start; timers are turned into scheduled ticks.
import { buildRecordBatch, decompressBatchBody, iterateBatches, iterateRecords, parseControlRecordType } from '../../records/index.js';
import { limits, type Clock } from '../../util/index.js';
import type { Scheduler } from '../../replication/index.js';
import { ErrorCode } from '../../protocol/index.js';
import { encodeGroupRecord, decodeGroupRecord } from '../group/records.js';
import type { GroupCoordinatorShard } from '../group/coordinator-shard.js';
import type { Effects } from '../group/shard.js';

/** What the runtime needs of the internal topic's partitions (the replica manager provides it). */
export interface CoordinatorLog {
  isLeader(partition: number): boolean;
  /** Appends one batch; resolves with an error code (0 once committed). */
  append(partition: number, batch: Buffer): Promise<number>;
  /** Whole batches from `offset`, up to the committed end; empty at the end. */
  read(partition: number, offset: number, maxBytes: number): Promise<{ bytes: Buffer; endOffset: number }>;
  logStartOffset(partition: number): number;
}

export interface RuntimeLogger { warn(message: string): void }

const LOAD_READ_BYTES = 5 * 1024 * 1024;

/** Who wrote a batch: a transactional producer's records take effect only at its COMMIT marker. */
export interface BatchOrigin { producerId: number; isTransactional: boolean }

/**
 * Reads a coordinator partition from its start to the committed end and hands every keyed record
 * of its data batches to `replay`, and every transaction marker to `onMarker`. Loading a shard is this.
 */
export async function replayPartition(log: CoordinatorLog, partition: number, replay: (key: Buffer, value: Buffer | null, origin: BatchOrigin) => void,
  onMarker: (producerId: number, commit: boolean) => void = () => {}): Promise<void> {
  let offset = log.logStartOffset(partition);
  for (let reads = 0; reads < limits.coordinatorLoadReadsMax; reads++) {
    const { bytes, endOffset } = await log.read(partition, offset, LOAD_READ_BYTES);
    if (bytes.length === 0) break;
    for (const view of iterateBatches(bytes)) {
      offset = view.lastOffset + 1;
      if (view.isControl) {
        for (const rec of iterateRecords(view, view.body())) {
          const type = parseControlRecordType(rec.key);
          if (type === 'COMMIT' || type === 'ABORT') onMarker(view.producerId, type === 'COMMIT');
          break;
        }
        continue;
      }
      const origin: BatchOrigin = { producerId: view.producerId, isTransactional: view.isTransactional };
      const body = await decompressBatchBody(view);
      for (const rec of iterateRecords(view, body)) {
        if (rec.key !== null) replay(rec.key, rec.value, origin);
      }
    }
    if (offset >= endOffset) break;
  }
}

export class ShardRuntime {
  loading = true;
  closed = false;
  private queue: Promise<void> = Promise.resolve();
  private timer: { cancel(): void } | null = null;
  private timerAtMs: number | null = null;
  readonly loaded: Promise<void>;

  constructor(readonly partition: number, readonly shard: GroupCoordinatorShard, private readonly log: CoordinatorLog,
    private readonly clock: Clock, private readonly scheduler: Scheduler, private readonly logger: RuntimeLogger) {
    this.loaded = this.enqueue(() => this.load());
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.queue.then(task, task);
    this.queue = next.catch((err) => { this.logger.warn(`coordinator partition ${this.partition}: ${err instanceof Error ? err.stack : String(err)}`); });
    return next;
  }

  /** Replays the partition from its start, then activates the shard. */
  private async load(): Promise<void> {
    await replayPartition(this.log, this.partition, (key, value, origin) => {
      const decoded = decodeGroupRecord(key, value);
      if (decoded) this.shard.replay(decoded, origin.isTransactional ? origin.producerId : -1);
    }, (producerId, commit) => this.shard.replayTransactionMarker(producerId, commit));
    this.loading = false;
    await this.apply(this.shard.onLoaded(this.clock.nowMs()));
  }

  /** Runs `op` in turn; resolves once its records are committed and its replies sent. */
  submit(op: (nowMs: number) => Effects): Promise<void> {
    return this.enqueue(async () => {
      if (this.closed) return;
      await this.apply(op(this.clock.nowMs()));
    });
  }

  private async apply(effects: Effects): Promise<void> {
    let errorCode: number = ErrorCode.NONE;
    if (effects.records.length > 0) {
      const encoded = effects.records.map(encodeGroupRecord);
      // TxnOffsetCommit: the producer's transactional batch, so its COMMIT/ABORT marker decides.
      const producer = effects.producer ? { producerId: Number(effects.producer.producerId), producerEpoch: effects.producer.producerEpoch, isTransactional: true } : {};
      const batch = await buildRecordBatch({ records: encoded.map((r) => ({ key: r.key, value: r.value })), baseTimestamp: this.clock.nowMs(), ...producer });
      errorCode = await this.log.append(this.partition, batch).catch(() => ErrorCode.UNKNOWN_SERVER_ERROR);
    }
    if (errorCode === ErrorCode.NONE) {
      const producerId = effects.producer ? Number(effects.producer.producerId) : -1;
      for (const r of effects.records) this.shard.replay(r, producerId);
      for (const r of effects.replies) r.send();
    } else {
      for (const undo of effects.onAppendFailure) undo(errorCode);
      for (const r of effects.replies) r.fail(errorCode);
    }
    this.rescheduleTimer();
  }

  private rescheduleTimer(): void {
    if (this.closed) return;
    const next = this.shard.nextDeadlineMs();
    if (next === this.timerAtMs) return;
    this.timer?.cancel();
    this.timer = null;
    this.timerAtMs = next;
    if (next === null) return;
    this.timer = this.scheduler.schedule(Math.max(0, next - this.clock.nowMs()), () => {
      this.timer = null;
      this.timerAtMs = null;
      void this.submit((now) => this.shard.tick(now));
    });
  }

  close(): void {
    this.closed = true;
    this.timer?.cancel();
    this.timer = null;
  }
}
