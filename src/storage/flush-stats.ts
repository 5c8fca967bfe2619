// Kafka's LogFlushStats (kafka.log:type=LogFlushStats,name=LogFlushRateAndTimeMs): how long each
// fsync of a log takes, whether flush.messages/flush.ms asked for it, a roll did, or the metadata
// log's Raft driver did before acknowledging. A fixed histogram of plain increments, read by the
// HTTP room when /metrics is scraped; a flush allocates nothing here.

/** Upper bounds (ms) of the flush-time buckets; the last bucket is +Inf. */
export const LOG_FLUSH_BUCKETS_MS: readonly number[] = Object.freeze([0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000]);

export class LogFlushStats {
  /** Non-cumulative counts: LOG_FLUSH_BUCKETS_MS.length + 1 buckets. */
  readonly buckets = new Float64Array(LOG_FLUSH_BUCKETS_MS.length + 1);
  count = 0;
  sumMs = 0;
  /** Grouped fsync rounds for flush.messages (LogFlusher), and the logs fsynced in them. */
  groupRounds = 0;
  groupLogs = 0;

  record(ms: number): void {
    this.count++;
    this.sumMs += ms;
    let b = 0;
    while (b < LOG_FLUSH_BUCKETS_MS.length && ms > LOG_FLUSH_BUCKETS_MS[b]!) b++;
    this.buckets[b]!++;
  }
}
