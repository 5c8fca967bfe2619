// Grouped fsync for flush.messages (issue 33): one LogFlusher per log directory. An append that
// must be durable before it is acknowledged (flush.messages reached; 1 is every append) registers
// its log here and awaits the next round. A round starts once the current tick's appends have
// registered (and the previous round is done), and fsyncs every registered log's dirty .log files
// at once, off the event loop (PartitionLog.flushAsync: one fdatasync per file, concurrently). So
// many partitions' appends in one tick, and every append arriving while a round runs, share one
// round of fsyncs instead of paying one each, as Kafka's flush on every message would.
import { LogFlushStats } from './flush-stats.js';

/** What a round flushes: a partition log (PartitionLog.flushAsync), named here so this file imports none. */
export interface FlushableLog {
  /** fsyncs the log's dirty files as they are at the call, off the event loop, and moves its recovery point. */
  flushAsync(): Promise<void>;
}

interface Round {
  readonly logs: Set<FlushableLog>;
  /** Resolves, when the round starts, to each registered log's flush. */
  readonly started: Promise<Map<FlushableLog, Promise<void>>>;
  start(flushes: Map<FlushableLog, Promise<void>>): void;
}

export class LogFlusher {
  private next: Round | null = null;
  private running: Promise<void> = Promise.resolve();

  /** `stats` counts the rounds and the logs flushed in them (the LogManager's, read by /metrics). */
  constructor(readonly stats: LogFlushStats = new LogFlushStats()) {}

  /** Rounds started so far. */
  get rounds(): number { return this.stats.groupRounds; }

  /**
   * Resolves once `log`'s bytes as they are at the start of the next round are fsynced (and its
   * recovery point has moved past them, unless a truncation or close came meanwhile); rejects with
   * the log's StorageError when the fsync failed (the log is offline then).
   */
  request(log: FlushableLog): Promise<void> {
    let round = this.next;
    if (round === null) round = this.next = this.schedule();
    round.logs.add(log);
    return round.started.then((flushes) => flushes.get(log));
  }

  private schedule(): Round {
    let start!: (flushes: Map<FlushableLog, Promise<void>>) => void;
    const round: Round = { logs: new Set(), started: new Promise((resolve) => { start = resolve; }), start: (f) => start(f) };
    const previous = this.running;
    this.running = previous
      // After the appends of this tick (setImmediate runs after the I/O callbacks that carried them).
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(async () => {
        // From here on, a new request belongs to the round after this one.
        if (this.next === round) this.next = null;
        this.stats.groupRounds++;
        const flushes = new Map<FlushableLog, Promise<void>>();
        for (const log of round.logs) {
          flushes.set(log, log.flushAsync());
          this.stats.groupLogs++;
        }
        round.start(flushes);
        await Promise.allSettled(flushes.values());
      });
    return round;
  }
}
