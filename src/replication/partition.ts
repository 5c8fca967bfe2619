// A partition as this broker holds it: its log, its role (leader or follower of the leader the
// metadata names), leader epoch, ISR and high watermark. The replica manager moves it between roles
// with makeLeader / makeFollower as metadata deltas arrive (Kafka's Partition). No follower fetches
// yet, so the high watermark follows the leader's log end offset; followers' progress, ISR changes
// and AlterPartition come with the replication issue and slot in here.
import { assert } from '../util/index.js';

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
  // A follower's log, as the replica fetcher keeps it in line with the leader's.
  /**
   * Appends the leader's batches with the offsets and leader epochs they carry (a partial last
   * batch is left out); they must start at the log end offset.
   */
  appendAsFollower(records: Buffer): AppendResult;
  /** Removes everything at or past `offset` (a divergent suffix). */
  truncateTo(offset: number): void;
  /** Empties the log and restarts it at `offset` (this replica is behind the leader's log start). */
  truncateFullyAndStartAt(offset: number): void;
  /** The leader epoch of the last batch (the leader-epoch cache's latest), -1 when none. */
  readonly latestEpoch: number;
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

/** What a metadata delta tells a replica about its partition (a PartitionRegistration's relevant part). */
export interface PartitionState {
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  readonly isr: readonly number[];
}

/** A leader id of -1: no leader (the metadata's NO_LEADER); what a stopped replica reports. */
const NO_LEADER = -1;

export class Partition {
  highWatermark = 0;
  /** The high watermark, last stable offset and log start offset as Fetch answers carry them. */
  readonly wire = { highWatermark: new BigintOffset(), lastStableOffset: new BigintOffset(), logStartOffset: new BigintOffset() };
  isr: number[];
  /** Bytes appended since this broker opened the partition: lets a delayed fetch count new bytes exactly. */
  bytesAppended = 0;
  /** The registration's partition epoch last applied (-1 before any). */
  partitionEpoch = -1;

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

  /**
   * Kafka's Partition.makeLeader: this broker leads at the registration's leader epoch, with its
   * ISR. Returns whether the leader epoch is new here (not just an ISR change at the same epoch).
   */
  makeLeader(state: PartitionState): boolean {
    assert(state.leader === this.localBrokerId, `${this.topic}-${this.index}: makeLeader for leader ${state.leader} on broker ${this.localBrokerId}`);
    const isNewLeaderEpoch = !this.isLeader || state.leaderEpoch > this.leaderEpoch;
    this.setState(state);
    this.isr = [...state.isr];
    // The leader's log end offset may be past the high watermark it had as a follower.
    this.maybeAdvanceHighWatermark();
    return isNewLeaderEpoch;
  }

  /**
   * Kafka's Partition.makeFollower: `state.leader` (possibly none, -1) leads; this replica serves
   * no produce or fetch. A follower keeps no ISR (only the leader tracks it). Returns whether the
   * leader or its epoch changed, i.e. whether fetching from the leader must (re)start.
   */
  makeFollower(state: PartitionState): boolean {
    assert(state.leader !== this.localBrokerId, `${this.topic}-${this.index}: makeFollower naming this broker ${state.leader} as leader`);
    const changed = state.leader !== this.leaderId || state.leaderEpoch > this.leaderEpoch;
    this.setState(state);
    this.isr = [];
    return changed;
  }

  /** The replica is gone from this broker (stop-replica): it leads nothing, so waits on it end. */
  stop(): void {
    this.leaderId = NO_LEADER;
    this.isr = [];
  }

  private setState(state: PartitionState): void {
    // A leader epoch only grows: an older registration applied late would un-fence a deposed leader.
    assert(state.leaderEpoch >= this.leaderEpoch, `${this.topic}-${this.index}: leader epoch ${state.leaderEpoch} is below the current ${this.leaderEpoch}`);
    this.leaderEpoch = state.leaderEpoch;
    this.leaderId = state.leader;
    this.partitionEpoch = state.partitionEpoch;
  }

  /** What read_committed consumers may read up to: the high watermark, or the oldest open transaction's start. */
  get lastStableOffset(): number {
    const u = this.log.firstUnstableOffset();
    return u === null ? this.highWatermark : Math.min(u, this.highWatermark);
  }

  /**
   * The leader's high watermark. It follows the leader's own log end offset: no follower fetches
   * yet, so no follower progress exists to take the minimum over (the replication issue adds it
   * here, with the ISR the registration gave makeLeader).
   */
  maybeAdvanceHighWatermark(): boolean {
    if (!this.isLeader) return false;
    const hw = this.log.logEndOffset;
    if (hw <= this.highWatermark) return false;
    this.highWatermark = hw;
    this.log.updateHighWatermark(hw);
    return true;
  }
}
