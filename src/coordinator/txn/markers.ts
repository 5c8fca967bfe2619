// The transaction coordinator's marker channel (Kafka's TransactionMarkerChannelManager, its
// retrying half; the broker's MarkerSender reaches the partition leaders, here or on other
// brokers): once a Prepare record is committed, the MarkerSender writes the COMMIT/ABORT control
// batches and the channel then completes the transaction through the runtime (CompleteCommit /
// CompleteAbort). A rejected send or a failed completion append is retried after a backoff, as
// Kafka's channel retries, for as long as the shard that asked is still loaded under the marker's
// coordinator epoch; after a move the next coordinator redoes the markers when it loads.
import type { Scheduler } from '../../replication/index.js';
import { ErrorCode } from '../../protocol/index.js';
import type { CoordinatorRuntime, RuntimeLogger } from '../runtime/runtime.js';
import type { TxnRecord } from './records.js';
import type { MarkerWrite, TransactionCoordinatorShard, TxnEffects } from './shard.js';

/** Writes a transaction's markers; resolves once every partition has its control batch. */
export interface MarkerSender { writeMarkers(marker: MarkerWrite): Promise<void> }

const MARKER_RETRY_BACKOFF_MS = 100;
/** Completion errors after which the shard that asked is gone: a new coordinator redoes the markers. */
const GIVE_UP = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS]);

export class TxnMarkerChannel {
  constructor(private readonly runtime: CoordinatorRuntime<TxnRecord, TransactionCoordinatorShard, TxnEffects>, private readonly sender: MarkerSender,
    private readonly scheduler: Scheduler, private readonly logger: RuntimeLogger) {}

  /** Whether the shard that asked for `m` is still the one loaded for `partition`. */
  private stillLoaded(partition: number, m: MarkerWrite): boolean { return this.runtime.epochOf(partition) === m.coordinatorEpoch; }

  /** Writes the markers (retrying until they are written or the shard is unloaded), then completes the transaction. */
  async send(partition: number, m: MarkerWrite): Promise<void> {
    for (;;) {
      if (!this.stillLoaded(partition, m)) return;
      try {
        await this.sender.writeMarkers(m);
        break;
      } catch (err) {
        this.logger.warn(`markers of ${m.transactionalId}: ${err instanceof Error ? err.message : String(err)}; retrying`);
        await new Promise<void>((resolve) => this.scheduler.schedule(MARKER_RETRY_BACKOFF_MS, resolve));
      }
    }
    await this.complete(partition, m);
  }

  /** Writes CompleteCommit/CompleteAbort; a failed append is tried again after a backoff. */
  private async complete(partition: number, m: MarkerWrite): Promise<void> {
    let retry = false;
    const code = await this.runtime.write(partition, (shard, now) => {
      const e = shard.completeTransaction(now, m);
      e.replies.push({ send: () => {}, fail: (c) => { retry = !GIVE_UP.has(c); } });
      return e;
    });
    if (code !== ErrorCode.NONE) return;
    if (retry && this.stillLoaded(partition, m)) this.scheduler.schedule(MARKER_RETRY_BACKOFF_MS, () => { void this.complete(partition, m); });
  }
}
