// The coordinator runtime: the only asynchronous code around coordinator shards, generic over the
// shard (the group coordinator and the transaction coordinator both run on it; nothing here knows
// either). A shard is a deterministic state machine over one partition of an internal topic.
//
// Lifecycle per partition: `loadShard(partition, epoch)` creates a fresh shard and replays the
// partition's log into it (requests meanwhile get COORDINATOR_LOAD_IN_PROGRESS), then the shard is
// active; `unloadShard(partition, epoch)` stops it (operations not yet answered get
// NOT_COORDINATOR, its timer is cancelled). The epoch is the partition's leader epoch (Kafka's
// coordinator epoch): a load or unload older than what this partition has seen is ignored, and a
// load under a newer epoch replaces the shard with a fresh one.
//
// Operations on one shard run one at a time, in order: run the operation (pure), append its records
// to the shard's partition, replay them, then send its replies, so no response precedes the write
// it depends on. `replay` is the only code that changes a shard's state, for loading and live
// writes alike. A shard's timers are data; the runtime turns its next deadline into one scheduled
// tick.
import { buildRecordBatch, decompressBatchBody, iterateBatches, iterateRecords, parseControlRecordType } from '../../records/index.js';
import { limits, type Clock } from '../../util/index.js';
import type { Scheduler } from '../../replication/index.js';
import { ErrorCode } from '../../protocol/index.js';

/** What the runtime needs of the internal topic's partitions (the replica manager provides it). */
export interface CoordinatorLog {
  isLeader(partition: number): boolean;
  /** The partition's leader epoch as this broker knows it (the coordinator epoch); -1 when it has no replica here. */
  leaderEpoch(partition: number): number;
  /** Appends one batch; resolves with an error code (0 once committed). */
  append(partition: number, batch: Buffer): Promise<number>;
  /** Whole batches from `offset`, up to the log end (a shard loads on the leader); empty at the end. */
  read(partition: number, offset: number, maxBytes: number): Promise<{ bytes: Buffer; endOffset: number }>;
  logStartOffset(partition: number): number;
}

export interface RuntimeLogger { info(message: string): void; warn(message: string): void }

/** Something to send once an operation's records are committed (or to fail with a code if they are not). */
export interface Reply { send(): void; fail(errorCode: number): void }

/** What an operation returns: the records to append and the response, sent once they are committed. */
export interface CoordinatorResult<R> {
  records: R[];
  replies: Reply[];
  /** Undo for soft state changed ahead of the append, run when the append fails. */
  onAppendFailure: ((errorCode: number) => void)[];
  /** The records go out in this producer's transactional batch (its COMMIT/ABORT marker decides them). */
  producer?: { producerId: bigint; producerEpoch: number };
}

/** A shard as the runtime drives it. */
export interface CoordinatorShard<R, E extends CoordinatorResult<R>> {
  /** The only code that changes state. `producerId` ≥ 0: the record came in that producer's transactional batch. */
  replay(record: R, producerId: number): void;
  /** A COMMIT/ABORT marker in the partition (met while loading, or written live by the broker). */
  replayTransactionMarker?(producerId: number, commit: boolean): void;
  /** Once, after the log is replayed: timers start; what it returns is applied like an operation. */
  onLoaded(nowMs: number): E;
  /** Fires the timers due at `nowMs`. */
  tick(nowMs: number): E;
  nextDeadlineMs(): number | null;
  /** The partition moved away: answer what is parked with NOT_COORDINATOR, forget the rest. */
  unload?(): void;
}

export interface CoordinatorRuntimeDeps<R, S extends CoordinatorShard<R, E>, E extends CoordinatorResult<R>> {
  /** For log lines, e.g. "group coordinator". */
  name: string;
  log: CoordinatorLog;
  clock: Clock;
  scheduler: Scheduler;
  logger: RuntimeLogger;
  /** A fresh shard for `partition`, loaded under coordinator epoch `epoch`. */
  newShard(partition: number, epoch: number): S;
  encode(record: R): { key: Buffer; value: Buffer | null };
  /** null: a record this shard does not know (skipped, as Kafka skips unknown record types). */
  decode(key: Buffer, value: Buffer | null): R | null;
  /** After an operation's records are committed and its replies sent (the transaction coordinator writes markers here). */
  onCommitted?(partition: number, epoch: number, result: E): void;
}

const LOAD_READ_BYTES = 5 * 1024 * 1024;

/** Who wrote a batch: a transactional producer's records take effect only at its COMMIT marker. */
export interface BatchOrigin { producerId: number; isTransactional: boolean }

/**
 * Reads a coordinator partition from its start to the committed end and hands every keyed record
 * of its data batches to `replay`, and every transaction marker to `onMarker`, until `stopped()`.
 */
export async function replayPartition(log: CoordinatorLog, partition: number, replay: (key: Buffer, value: Buffer | null, origin: BatchOrigin) => void,
  onMarker: (producerId: number, commit: boolean) => void, stopped: () => boolean = () => false): Promise<void> {
  let offset = log.logStartOffset(partition);
  for (let reads = 0; reads < limits.coordinatorLoadReadsMax && !stopped(); reads++) {
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

/** One loaded (or loading) shard: its epoch, its operation queue and its scheduled tick. */
class ShardContext<S> {
  state: 'loading' | 'active' | 'closed' = 'loading';
  queue: Promise<void> = Promise.resolve();
  timer: { cancel(): void } | null = null;
  timerAtMs: number | null = null;
  loaded: Promise<void> = Promise.resolve();
  constructor(readonly partition: number, readonly epoch: number, readonly shard: S) {}
}

/** What the runtime remembers of a partition: the newest epoch seen, and the shard if one is loaded or loading. */
interface PartitionEntry<S> { epoch: number; context: ShardContext<S> | null; resigned: boolean }

/** A shard as the services see it when they look across partitions (ListGroups, ListTransactions). */
export interface ShardStatus<S> { partition: number; epoch: number; loading: boolean; shard: S }

export class CoordinatorRuntime<R, S extends CoordinatorShard<R, E>, E extends CoordinatorResult<R>> {
  private readonly partitions = new Map<number, PartitionEntry<S>>();

  constructor(private readonly deps: CoordinatorRuntimeDeps<R, S, E>) {}

  // ---- load and unload -------------------------------------------------------------------------

  /**
   * Loads `partition` under coordinator epoch `epoch`: a fresh shard replays the partition's log,
   * then serves operations. Resolves once it is active (or was replaced or unloaded meanwhile).
   * Nothing happens for an epoch older than the partition's newest, or one already loaded or
   * resigned; a newer epoch replaces the current shard with a fresh load (Kafka's group runtime only
   * raises an active shard's epoch; reloading stays right even if a resignation was missed, and the
   * transaction shard stamps its epoch on markers).
   */
  loadShard(partition: number, epoch: number): Promise<void> {
    const entry = this.partitions.get(partition);
    if (entry) {
      if (epoch < entry.epoch) return entry.context?.loaded ?? Promise.resolve();
      // Same epoch: already loading or active, or resigned from (a failed load may be tried again).
      if (epoch === entry.epoch && (entry.context !== null || entry.resigned)) return entry.context?.loaded ?? Promise.resolve();
      if (entry.context) this.stop(entry.context);
    }
    const context = new ShardContext(partition, epoch, this.deps.newShard(partition, epoch));
    this.partitions.set(partition, { epoch, context, resigned: false });
    // A failed load is logged by the queue; `loaded` resolves either way.
    context.loaded = this.enqueue(context, () => this.load(context)).catch(() => {});
    return context.loaded;
  }

  /**
   * Follows the partition's leadership as the log port reports it: loads the shard when this
   * broker leads the partition, unloads it when not (the single node's way, and what a metadata
   * delta's become-leader / become-follower will call).
   */
  followLeadership(partition: number): void {
    const epoch = this.deps.log.leaderEpoch(partition);
    if (this.deps.log.isLeader(partition)) void this.loadShard(partition, Math.max(0, epoch));
    else this.unloadShard(partition, epoch < 0 ? undefined : epoch);
  }

  /**
   * Unloads `partition` because its leadership moved to epoch `epoch` (Kafka's onResignation): only
   * a shard loaded under an older epoch is stopped. Without an epoch (the partition is gone) the
   * shard is stopped whatever its epoch.
   */
  unloadShard(partition: number, epoch?: number): void {
    const entry = this.partitions.get(partition);
    if (epoch === undefined) {
      if (entry?.context) this.stop(entry.context);
      if (entry) { entry.context = null; entry.resigned = true; }
      return;
    }
    if (!entry) { this.partitions.set(partition, { epoch, context: null, resigned: true }); return; }
    if (epoch <= entry.epoch) return;
    if (entry.context) this.stop(entry.context);
    this.partitions.set(partition, { epoch, context: null, resigned: true });
  }

  /** Replays the partition from its start, then activates the shard. */
  private async load(context: ShardContext<S>): Promise<void> {
    const { shard, partition } = context;
    const startedMs = this.deps.clock.nowMs();
    try {
      await replayPartition(this.deps.log, partition, (key, value, origin) => {
        const record = this.deps.decode(key, value);
        if (record !== null) shard.replay(record, origin.isTransactional ? origin.producerId : -1);
      }, (producerId, commit) => shard.replayTransactionMarker?.(producerId, commit), () => context.state === 'closed');
    } catch (err) {
      // Kafka's FAILED state: not the coordinator until the partition is loaded again.
      this.stop(context);
      const entry = this.partitions.get(partition);
      if (entry?.context === context) entry.context = null;
      throw err;
    }
    if (context.state === 'closed') return;
    context.state = 'active';
    this.deps.logger.info(`${this.deps.name}: loaded partition ${partition} in epoch ${context.epoch} (${this.deps.clock.nowMs() - startedMs} ms)`);
    await this.apply(context, shard.onLoaded(this.deps.clock.nowMs()));
  }

  private stop(context: ShardContext<S>): void {
    if (context.state === 'closed') return;
    if (context.state === 'active') this.deps.logger.info(`${this.deps.name}: unloaded partition ${context.partition} of epoch ${context.epoch}`);
    context.state = 'closed';
    context.timer?.cancel();
    context.timer = null;
    context.timerAtMs = null;
    context.shard.unload?.();
  }

  /** Stops every shard (the broker shuts down). */
  close(): void {
    for (const entry of this.partitions.values()) if (entry.context) this.stop(entry.context);
    this.partitions.clear();
  }

  // ---- what is loaded --------------------------------------------------------------------------

  /** NONE when `partition`'s shard is active here, COORDINATOR_LOAD_IN_PROGRESS while it loads, else NOT_COORDINATOR. */
  errorFor(partition: number): number {
    const context = this.partitions.get(partition)?.context;
    if (!context || context.state === 'closed') return ErrorCode.NOT_COORDINATOR;
    return context.state === 'loading' ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE;
  }

  /** The active shard of `partition`, for reads that write nothing; null unless active. */
  activeShard(partition: number): S | null {
    const context = this.partitions.get(partition)?.context;
    return context?.state === 'active' ? context.shard : null;
  }

  /** The epoch `partition`'s shard was loaded under; -1 when none is loaded or loading. */
  epochOf(partition: number): number {
    const context = this.partitions.get(partition)?.context;
    return context && context.state !== 'closed' ? context.epoch : -1;
  }

  /** Every shard loaded or loading here. */
  *shards(): Generator<ShardStatus<S>> {
    for (const [partition, entry] of this.partitions) {
      const c = entry.context;
      if (c && c.state !== 'closed') yield { partition, epoch: c.epoch, loading: c.state === 'loading', shard: c.shard };
    }
  }

  /** Resolves once every shard loading now has loaded. */
  async loaded(): Promise<void> {
    await Promise.all([...this.partitions.values()].map((e) => e.context?.loaded));
  }

  // ---- operations ------------------------------------------------------------------------------

  /**
   * Runs `op` on `partition`'s shard in turn. Resolves with NONE once its records are committed
   * (or their append failed) and its replies sent, or with NOT_COORDINATOR /
   * COORDINATOR_LOAD_IN_PROGRESS when the operation did not run because the shard is not active.
   */
  write(partition: number, op: (shard: S, nowMs: number) => E): Promise<number> {
    const context = this.partitions.get(partition)?.context;
    const refused = this.errorFor(partition);
    if (!context || refused !== ErrorCode.NONE) return Promise.resolve(refused);
    return this.submit(context, op);
  }

  /**
   * A COMMIT/ABORT marker was written to `partition` (by the broker, not by this runtime): the
   * shard replays it in turn with its operations. A shard still loading meets it after its load
   * (replaying a marker twice is harmless); a partition not loaded here meets it when it loads.
   */
  completeTransaction(partition: number, producerId: number, commit: boolean): Promise<void> {
    const context = this.partitions.get(partition)?.context;
    if (!context || context.state === 'closed') return Promise.resolve();
    return this.enqueue(context, async () => {
      if (context.state === 'closed') return;
      context.shard.replayTransactionMarker?.(producerId, commit);
    });
  }

  private submit(context: ShardContext<S>, op: (shard: S, nowMs: number) => E): Promise<number> {
    let code: number = ErrorCode.NONE;
    return this.enqueue(context, async () => {
      if (context.state !== 'active') { code = ErrorCode.NOT_COORDINATOR; return; }
      await this.apply(context, op(context.shard, this.deps.clock.nowMs()));
    }).then(() => code, () => ErrorCode.UNKNOWN_SERVER_ERROR);
  }

  private enqueue(context: ShardContext<S>, task: () => Promise<void>): Promise<void> {
    const next = context.queue.then(task, task);
    context.queue = next.catch((err) => {
      this.deps.logger.warn(`${this.deps.name} partition ${context.partition}: ${err instanceof Error ? err.stack : String(err)}`);
    });
    return next;
  }

  private async apply(context: ShardContext<S>, result: E): Promise<void> {
    let errorCode: number = ErrorCode.NONE;
    if (result.records.length > 0) {
      const encoded = result.records.map((r) => this.deps.encode(r));
      const producer = result.producer ? { producerId: Number(result.producer.producerId), producerEpoch: result.producer.producerEpoch, isTransactional: true } : {};
      const batch = await buildRecordBatch({ records: encoded.map((r) => ({ key: r.key, value: r.value })), baseTimestamp: this.deps.clock.nowMs(), ...producer });
      errorCode = await this.deps.log.append(context.partition, batch).catch(() => ErrorCode.UNKNOWN_SERVER_ERROR);
    }
    // Unloaded while the append was in flight: the shard is gone, the client asks the next coordinator.
    if (context.state === 'closed') errorCode = ErrorCode.NOT_COORDINATOR;
    if (errorCode === ErrorCode.NONE) {
      const producerId = result.producer ? Number(result.producer.producerId) : -1;
      for (const r of result.records) context.shard.replay(r, producerId);
      for (const r of result.replies) r.send();
      this.deps.onCommitted?.(context.partition, context.epoch, result);
    } else {
      for (const undo of result.onAppendFailure) undo(errorCode);
      for (const r of result.replies) r.fail(errorCode);
    }
    this.rescheduleTimer(context);
  }

  private rescheduleTimer(context: ShardContext<S>): void {
    if (context.state !== 'active') return;
    const next = context.shard.nextDeadlineMs();
    if (next === context.timerAtMs) return;
    context.timer?.cancel();
    context.timer = null;
    context.timerAtMs = next;
    if (next === null) return;
    context.timer = this.deps.scheduler.schedule(Math.max(0, next - this.deps.clock.nowMs()), () => {
      context.timer = null;
      context.timerAtMs = null;
      void this.submit(context, (shard, now) => shard.tick(now));
    });
  }
}
