// A partition as this broker holds it: its log, its role, leader epoch, ISR and high watermark.
// This is the single-replica case the single-node broker needs (the ISR is the leader alone, so
// the high watermark follows the log end offset); followers, ISR changes and AlterPartition come
// with the replication issue and slot in here.

/** What the replica manager needs of a partition log (src/storage's PartitionLog provides it). */
export interface LocalLog {
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  /**
   * Appends batches (validated, offsets assigned); resolves when written. Only the transaction
   * coordinator ('coordinator') may write control batches (COMMIT/ABORT markers).
   */
  appendAsLeader(records: Buffer, leaderEpoch: number, origin?: AppendOrigin): Promise<AppendResult>;
  /**
   * Whole batches from the one containing `offset`, at most `maxBytes` unless the first batch is
   * larger; never past `upTo`. The bytes go into `alloc(size)` when given (a response's memory).
   */
  read(offset: number, maxBytes: number, upTo: number, alloc?: (bytes: number) => Buffer): Promise<Buffer>;
  /** First offset with timestamp >= ts and its timestamp, or null. */
  offsetForTimestamp(timestampMs: number): Promise<{ offset: number; timestamp: number; leaderEpoch: number } | null>;
  /** Offset and timestamp of the record with the largest timestamp, or null when empty. */
  maxTimestampOffset(): Promise<{ offset: number; timestamp: number; leaderEpoch: number } | null>;
  updateHighWatermark(offset: number): void;
  /** Moves the log start offset forward (DeleteRecords); resolves with the new log start offset. */
  deleteRecordsBefore(offset: number): Promise<number>;
  /** The largest epoch <= `epoch` and the end offset of that epoch (the leader-epoch cache). */
  endOffsetForEpoch(epoch: number): { leaderEpoch: number; endOffset: number } | null;
  /** The first offset of the oldest open transaction, or null when none is open. */
  firstUnstableOffset(): number | null;
  /** Aborted transactions whose data overlaps [from, upTo), oldest first (for read_committed fetches). */
  abortedTransactions(from: number, upTo: number): { producerId: number; firstOffset: number }[];
  /** Producers with state in this partition (DescribeProducers). */
  activeProducers(): ActiveProducer[];
}

export type AppendOrigin = 'client' | 'coordinator';

export interface ActiveProducer {
  producerId: number;
  producerEpoch: number;
  /** The last sequence appended, -1 when none. */
  lastSequence: number;
  lastTimestamp: number;
  coordinatorEpoch: number;
  /** First offset of the open transaction, -1 when none. */
  currentTxnStartOffset: number;
}

export interface AppendResult {
  firstOffset: number;
  lastOffset: number;
  /** -1 unless the topic uses LogAppendTime. */
  logAppendTimeMs: number;
}

/**
 * One offset as the bigint the protocol carries, converted again only when it changed. A Fetch
 * answers every partition of its session (news or not) with three of them, and BigInt() allocates.
 */
export class BigintOffset {
  private number = Number.NaN;
  private big = 0n;
  of(n: number): bigint {
    if (n !== this.number) {
      this.number = n;
      this.big = BigInt(n);
    }
    return this.big;
  }
}

export class Partition {
  highWatermark = 0;
  /** The high watermark, last stable offset and log start offset as Fetch answers carry them. */
  readonly wire = { highWatermark: new BigintOffset(), lastStableOffset: new BigintOffset(), logStartOffset: new BigintOffset() };
  isr: number[];
  /** Bytes appended since this broker opened the partition: lets a delayed fetch count new bytes exactly. */
  bytesAppended = 0;

  constructor(
    readonly topic: string,
    readonly index: number,
    readonly log: LocalLog,
    public leaderEpoch: number,
    public leaderId: number,
    readonly localBrokerId: number,
    public minInsyncReplicas: number,
    /** max.message.bytes: the largest record batch this partition accepts. */
    public maxMessageBytes = 1_048_588,
  ) {
    this.isr = [localBrokerId];
    this.highWatermark = log.logEndOffset;
  }

  get isLeader(): boolean { return this.leaderId === this.localBrokerId; }

  /** What read_committed consumers may read up to: the high watermark, or the oldest open transaction's start. */
  get lastStableOffset(): number {
    const u = this.log.firstUnstableOffset();
    return u === null ? this.highWatermark : Math.min(u, this.highWatermark);
  }

  /** With the leader alone in the ISR, everything appended is replicated to the whole ISR. */
  maybeAdvanceHighWatermark(): boolean {
    const hw = this.isr.length === 1 && this.isr[0] === this.localBrokerId ? this.log.logEndOffset : this.highWatermark;
    if (hw <= this.highWatermark) return false;
    this.highWatermark = hw;
    this.log.updateHighWatermark(hw);
    return true;
  }
}
