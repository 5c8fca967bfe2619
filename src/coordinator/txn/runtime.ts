// The runtime around a transaction coordinator shard: the only asynchronous code. Like the group
// runtime (../runtime/runtime.ts), operations on one shard run one at a time: run the operation
// (pure), append its records to the shard's `__transaction_state` partition, replay them, send the
// replies. Then the markers: once a Prepare record is committed, the MarkerSender writes the
// COMMIT/ABORT control batches and the runtime completes the transaction (retrying a failed
// completion append, as Kafka's marker channel does). Loading replays the partition from its start.
import { buildRecordBatch } from '../../records/index.js';
import type { Clock } from '../../util/index.js';
import type { Scheduler } from '../../replication/index.js';
import { ErrorCode } from '../../protocol/index.js';
import { replayPartition, type CoordinatorLog, type RuntimeLogger } from '../runtime/runtime.js';
import { decodeTxnRecord, encodeTxnRecord } from './records.js';
import type { MarkerWrite, TransactionCoordinatorShard, TxnEffects } from './shard.js';

/** Writes a transaction's markers; resolves once every partition has its control batch. */
export interface MarkerSender { writeMarkers(marker: MarkerWrite): Promise<void> }

const MARKER_RETRY_BACKOFF_MS = 100;
/** Completion errors after which the shard that asked is gone: a new coordinator redoes the markers. */
const GIVE_UP = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS]);

export class TxnShardRuntime {
  loading = true;
  closed = false;
  private queue: Promise<void> = Promise.resolve();
  private timer: { cancel(): void } | null = null;
  private timerAtMs: number | null = null;
  readonly loaded: Promise<void>;

  constructor(readonly partition: number, readonly shard: TransactionCoordinatorShard, private readonly log: CoordinatorLog,
    private readonly markers: MarkerSender, private readonly clock: Clock, private readonly scheduler: Scheduler,
    private readonly logger: RuntimeLogger) {
    this.loaded = this.enqueue(() => this.load());
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.queue.then(task, task);
    this.queue = next.catch((err) => { this.logger.warn(`transaction coordinator partition ${this.partition}: ${err instanceof Error ? err.stack : String(err)}`); });
    return next;
  }

  private async load(): Promise<void> {
    await replayPartition(this.log, this.partition, (key, value) => {
      const decoded = decodeTxnRecord(key, value);
      if (decoded) this.shard.replay(decoded);
    });
    this.loading = false;
    await this.apply(this.shard.onLoaded(this.clock.nowMs()));
  }

  /** Runs `op` in turn; resolves once its records are committed and its replies sent. */
  submit(op: (nowMs: number) => TxnEffects): Promise<void> {
    return this.enqueue(async () => {
      if (this.closed) return;
      await this.apply(op(this.clock.nowMs()));
    });
  }

  private async apply(effects: TxnEffects): Promise<void> {
    let errorCode: number = ErrorCode.NONE;
    if (effects.records.length > 0) {
      const encoded = effects.records.map((r) => encodeTxnRecord(r, this.shard.config.logValueVersion));
      // Kafka enforces uncompressed batches on this topic.
      const batch = await buildRecordBatch({ records: encoded.map((r) => ({ key: r.key, value: r.value })), baseTimestamp: this.clock.nowMs() });
      errorCode = await this.log.append(this.partition, batch).catch(() => ErrorCode.UNKNOWN_SERVER_ERROR);
    }
    if (errorCode === ErrorCode.NONE) {
      for (const r of effects.records) this.shard.replay(r);
      for (const r of effects.replies) r.send();
      for (const m of effects.markers) void this.sendMarkers(m);
    } else {
      for (const undo of effects.onAppendFailure) undo(errorCode);
      for (const r of effects.replies) r.fail(errorCode);
    }
    this.rescheduleTimer();
  }

  /** Writes the markers (retrying until they are written or this runtime closes), then completes the transaction. */
  private async sendMarkers(m: MarkerWrite): Promise<void> {
    for (;;) {
      if (this.closed) return;
      try {
        await this.markers.writeMarkers(m);
        break;
      } catch (err) {
        this.logger.warn(`markers of ${m.transactionalId}: ${err instanceof Error ? err.message : String(err)}; retrying`);
        await new Promise<void>((resolve) => this.scheduler.schedule(MARKER_RETRY_BACKOFF_MS, resolve));
      }
    }
    await this.complete(m);
  }

  /** Writes CompleteCommit/CompleteAbort; a failed append is tried again after a backoff. */
  private async complete(m: MarkerWrite): Promise<void> {
    let retry = false;
    await this.submit((now) => {
      const e = this.shard.completeTransaction(now, m);
      e.replies.push({ send: () => {}, fail: (code) => { retry = !GIVE_UP.has(code); } });
      return e;
    });
    if (retry && !this.closed) this.scheduler.schedule(MARKER_RETRY_BACKOFF_MS, () => { void this.complete(m); });
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

  /** The partition moved away: stop, and let the shard answer NOT_COORDINATOR. */
  close(): void {
    this.closed = true;
    this.shard.unload();
    this.timer?.cancel();
    this.timer = null;
  }
}
