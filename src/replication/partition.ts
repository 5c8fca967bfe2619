// A partition as this broker holds it: its log, its role (leader or follower of the leader the
// metadata names), leader epoch, ISR and high watermark. The replica manager moves it between roles
// with makeLeader / makeFollower as metadata deltas arrive (Kafka's Partition). As leader it keeps
// each follower's progress from its fetches (Kafka's Replica state), takes the high watermark as the
// minimum log end offset over the ISR, and proposes ISR changes (AlterPartition) that count only
// once the metadata shows them: until then the "maximal" ISR counts for the high watermark and the
// committed one for min.insync.replicas (Kafka's PendingExpandIsr / PendingShrinkIsr).
// Pure: time comes in as arguments.
import type { RecordCursor } from '../records/index.js';
import { assert } from '../util/index.js';
import type { PartitionLog } from '../storage/index.js';
import type { SchemaValidation } from './schema-validation.js';

/** What the replica manager needs of a partition log (src/storage's PartitionLog provides it). */
export interface LocalLog {
  readonly logStartOffset: number;
  /** The first offset on local disk; below it (down to the log start offset) the data is in the remote tier. */
  readonly localLogStartOffset: number;
  readonly logEndOffset: number;
  /**
   * What of the log may count toward the high watermark: the log end offset, or less while an
   * append that flush.messages wants fsynced waits for its fsync (what a power cut could take).
   */
  readonly durableEndOffset: number;
  /**
   * Resolves once every append so far that flush.messages wants fsynced is (a follower reports
   * its log end offset to the leader only then); rejects with KAFKA_STORAGE_ERROR when it cannot be.
   */
  whenDurable(): Promise<void>;
  /** The storage engine's log, which tiered storage copies from and reads the epochs of; null where there is none. */
  readonly tieredLog: PartitionLog | null;
  /**
   * Appends batches (validated, offsets assigned); resolves when written. Only the transaction
   * coordinator ('coordinator') may write control batches (COMMIT/ABORT markers). `current` is
   * asked right before the write, after the validation's awaits: false refuses the append
   * (NOT_LEADER_OR_FOLLOWER), so a leadership lost meanwhile writes nothing into a follower's log.
   */
  appendAsLeader(records: Buffer, leaderEpoch: number, origin?: AppendOrigin, check?: ((c: RecordCursor) => string | null) | null, current?: (() => boolean) | null): Promise<AppendResult>;
  /**
   * Whole batches from the one containing `offset`, at most `maxBytes`, never past `upTo`. With
   * `minOneBatch` a first batch larger than `maxBytes` comes whole (KIP-74: the first data of a
   * fetch answer, so a consumer always progresses); without it nothing is read. The bytes go into
   * `alloc(size)` when given (a response's memory).
   */
  read(offset: number, maxBytes: number, upTo: number, minOneBatch: boolean, alloc?: (bytes: number) => Buffer): Promise<Buffer>;
  /** First offset with timestamp >= ts and its timestamp, or null. */
  offsetForTimestamp(timestampMs: number): Promise<{ offset: number; timestamp: number; leaderEpoch: number } | null>;
  /** Offset and timestamp of the record with the largest timestamp, or null when empty. */
  maxTimestampOffset(): Promise<{ offset: number; timestamp: number; leaderEpoch: number } | null>;
  /** The high watermark this log last knew (restored from the replication-offset-checkpoint on open). */
  readonly highWatermark: number;
  updateHighWatermark(offset: number): void;
  /** Moves the log start offset forward (DeleteRecords); resolves with the new log start offset. */
  deleteRecordsBefore(offset: number): Promise<number>;
  /**
   * A new leader epoch starts at `startOffset` (the log end offset when this broker became its
   * leader): recorded in the leader-epoch cache so followers can truncate to it (Kafka's
   * assignEpochStartOffset). An epoch not above the cache's latest is ignored.
   */
  assignEpochStartOffset(epoch: number, startOffset: number): void;
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
  /** Empties the log and restarts it at `offset` (this replica is behind the leader's log start), with the log start offset given (default `offset`). */
  truncateFullyAndStartAt(offset: number, logStartOffset?: number): void;
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
  /** The assigned replicas (the ISR stands in when absent). */
  readonly replicas?: readonly number[];
}

/** What the leader knows of one follower from its fetches (Kafka's ReplicaState). */
export interface FollowerState {
  readonly brokerId: number;
  /** The follower's fetch offset: its log end offset (-1 until it fetches in this leader epoch). */
  logEndOffset: number;
  logStartOffset: number;
  /** The leader's log end offset when the follower last fetched. */
  lastFetchLeaderLogEndOffset: number;
  lastFetchTimeMs: number;
  /** The last time the follower had everything the leader had (at that fetch or the one before). */
  lastCaughtUpTimeMs: number;
  /** The broker epoch the follower sent (ReplicaState.ReplicaEpoch), -1 when unknown. */
  brokerEpoch: bigint;
}

/** An ISR change proposed to the controller and not yet in the metadata. */
export interface PendingIsrChange {
  readonly kind: 'expand' | 'shrink';
  readonly proposedIsr: readonly number[];
}

/** What an AlterPartition request carries for one partition. */
export interface IsrProposal {
  readonly partition: Partition;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  /** The proposed ISR with each member's broker epoch (-1: unknown; the local broker's is filled in by the sender). */
  readonly newIsr: readonly { brokerId: number; brokerEpoch: bigint }[];
  readonly pending: PendingIsrChange;
}

/** The controller's answer for one partition of an AlterPartition. */
export interface IsrChangeResult {
  readonly errorCode: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  readonly isr: readonly number[];
}

/** The broker epoch of a broker that may join an ISR (registered, unfenced, not shutting down), else undefined. */
export type IsrEligibility = (brokerId: number) => bigint | undefined;

/** A leader id of -1: no leader (the metadata's NO_LEADER); what a stopped replica reports. */
const NO_LEADER = -1;

export class Partition {
  highWatermark = 0;
  /** The high watermark, last stable offset and log start offset as Fetch answers carry them. */
  readonly wire = { highWatermark: new BigintOffset(), lastStableOffset: new BigintOffset(), logStartOffset: new BigintOffset() };
  /** The committed ISR (the registration's, or an AlterPartition answer that changed nothing): min.insync.replicas counts it. */
  isr: number[];
  /** The assigned replicas. */
  replicas: number[];
  /** The ISR change in flight, if any (one at a time). */
  pendingIsrChange: PendingIsrChange | null = null;
  /** Where this broker's leader epoch began in its log (-1 when not leading). */
  leaderEpochStartOffset = -1;
  /** Each follower's progress, by broker id (leader only). */
  readonly followers = new Map<number, FollowerState>();
  /** The topic id (AlterPartition names topics by id). */
  topicId = '';
  /** Bytes appended since this broker opened the partition: lets a delayed fetch count new bytes exactly. */
  bytesAppended = 0;
  /** The registration's partition epoch last applied (-1 before any). */
  partitionEpoch = -1;
  /** The topic's broker-side schema validation (confluent.*.schema.validation), null when off. */
  schemaValidation: SchemaValidation | null = null;
  /** link.name: the cluster link this partition mirrors (its leader appends the source's batches, clients may not produce); '' when not a mirror. */
  linkName = '';
  /**
   * link.epoch.base: a promoted mirror topic's log holds the source cluster's epochs, which may be
   * above this cluster's; its leaders write epoch + base into batches and the leader-epoch cache
   * so epochs never go back in the log. 0 for every other topic.
   */
  epochBase = 0;

  /** The epoch this leader writes into its batches and the leader-epoch cache for leader epoch `leaderEpoch`. */
  logEpoch(leaderEpoch: number): number { return leaderEpoch + this.epochBase; }
  /**
   * KIP-966's strict min ISR, on while eligible.leader.replicas.version >= 1: the high watermark
   * stays put while the committed ISR is below min.insync.replicas, so every committed record is
   * on at least min ISR replicas, which is what lets the controller elect from the ELR.
   */
  strictMinIsr = false;

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
    this.replicas = [localBrokerId];
    // The log's, as its checkpoint restored it; never its end, which may hold an uncommitted suffix
    // this broker wrote as a leader before a crash (a new leader may have written other records there).
    this.highWatermark = log.highWatermark;
  }

  /**
   * The ISR the high watermark waits for: the committed one, plus the replica being added while an
   * expansion is in flight (a shrink counts only once committed), so it is never smaller than what
   * the controller may have recorded.
   */
  get maximalIsr(): readonly number[] {
    const pending = this.pendingIsrChange;
    return pending?.kind === 'expand' ? pending.proposedIsr : this.isr;
  }

  get isLeader(): boolean { return this.leaderId === this.localBrokerId; }

  /**
   * Kafka's Partition.makeLeader: this broker leads at the registration's leader epoch, with its
   * ISR. Returns whether the leader epoch is new here (not just an ISR change at the same epoch).
   */
  makeLeader(state: PartitionState, nowMs = 0): boolean {
    assert(state.leader === this.localBrokerId, `${this.topic}-${this.index}: makeLeader for leader ${state.leader} on broker ${this.localBrokerId}`);
    const isNewLeader = !this.isLeader;
    const isNewLeaderEpoch = isNewLeader || state.leaderEpoch > this.leaderEpoch;
    this.setState(state);
    // The registration is the committed state: whatever was proposed is answered by it.
    this.isr = [...state.isr];
    this.replicas = [...(state.replicas ?? state.isr)];
    this.pendingIsrChange = null;
    for (const id of [...this.followers.keys()]) if (!this.replicas.includes(id)) this.followers.delete(id);
    const leo = this.log.logEndOffset;
    if (isNewLeaderEpoch) {
      // Followers that wrote under a later epoch of a deposed leader must find this epoch's start
      // in the cache to truncate to (Kafka's makeLeader). A mirror partition's batches and epochs
      // are the source cluster's: an epoch of this cluster there would end the source's epoch early
      // for this cluster's followers and consumers (OffsetForLeaderEpoch), as if it had diverged.
      if (this.linkName === '') this.log.assignEpochStartOffset(this.logEpoch(state.leaderEpoch), leo);
      this.leaderEpochStartOffset = leo;
    }
    for (const id of this.replicas) {
      if (id === this.localBrokerId) continue;
      const f = this.followers.get(id);
      if (f === undefined || isNewLeader) this.followers.set(id, newFollowerState(id, nowMs, this.isr.includes(id)));
      else if (isNewLeaderEpoch) resetFollowerState(f, nowMs, leo, this.isr.includes(id));
    }
    // The leader's log end offset may be past the high watermark it had as a follower; an ISR
    // down to the leader lets it move.
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
    this.replicas = [...(state.replicas ?? [])];
    this.leaveLeadership();
    return changed;
  }

  /** The replica is gone from this broker (stop-replica): it leads nothing, so waits on it end. */
  stop(): void {
    this.leaderId = NO_LEADER;
    this.isr = [];
    this.leaveLeadership();
  }

  private leaveLeadership(): void {
    this.followers.clear();
    this.pendingIsrChange = null;
    this.leaderEpochStartOffset = -1;
  }

  private setState(state: PartitionState): void {
    // A leader epoch only grows: an older registration applied late would un-fence a deposed leader.
    assert(state.leaderEpoch >= this.leaderEpoch, `${this.topic}-${this.index}: leader epoch ${state.leaderEpoch} is below the current ${this.leaderEpoch}`);
    this.leaderEpoch = state.leaderEpoch;
    this.leaderId = state.leader;
    this.partitionEpoch = state.partitionEpoch;
  }

  /**
   * Kafka's isUnderMinIsr: the committed ISR has fewer members than min.insync.replicas, capped at
   * the replication factor (Kafka's effectiveMinIsr), so a topic with fewer replicas than the
   * cluster's min ISR is not stuck for ever.
   */
  get isUnderMinIsr(): boolean {
    return this.isr.length < Math.min(this.minInsyncReplicas, Math.max(1, this.replicas.length));
  }

  /** What read_committed consumers may read up to: the high watermark, or the oldest open transaction's start. */
  get lastStableOffset(): number {
    const u = this.log.firstUnstableOffset();
    return u === null ? this.highWatermark : Math.min(u, this.highWatermark);
  }

  /**
   * The leader's high watermark: the smallest log end offset over the maximal ISR, the leader's
   * own included (Kafka's maybeIncrementLeaderHW), where the leader's counts only as far as it is
   * fsynced when flush.messages asks for that (followers report only fsynced offsets then). A
   * follower that has not fetched in this leader epoch holds it where it is. It only moves
   * forward, and not at all under min ISR when `strictMinIsr` (KIP-966).
   */
  maybeAdvanceHighWatermark(): boolean {
    if (!this.isLeader) return false;
    if (this.strictMinIsr && this.isUnderMinIsr) return false;
    let hw = this.log.durableEndOffset;
    for (const id of this.maximalIsr) {
      if (id === this.localBrokerId) continue;
      hw = Math.min(hw, this.followers.get(id)?.logEndOffset ?? -1);
    }
    if (hw <= this.highWatermark) return false;
    assert(hw <= this.log.logEndOffset, `${this.topic}-${this.index}: high watermark ${hw} past the log end offset ${this.log.logEndOffset}`);
    this.highWatermark = hw;
    this.log.updateHighWatermark(hw);
    return true;
  }

  // ---- followers and the ISR (leader only) ---------------------------------------------------

  /**
   * Null when `replicaId` may fetch as a follower at `brokerEpoch`, else why not: it is not a
   * replica, or it sent an epoch older than its live registration's `registeredEpoch` (a fetch
   * from a previous incarnation of the broker); Kafka answers both NOT_LEADER_OR_FOLLOWER.
   */
  checkFollower(replicaId: number, brokerEpoch: bigint, registeredEpoch: bigint | undefined): 'not-a-replica' | 'stale-broker-epoch' | null {
    if (!this.followers.has(replicaId)) return 'not-a-replica';
    if (brokerEpoch !== -1n && registeredEpoch !== undefined && registeredEpoch > brokerEpoch) return 'stale-broker-epoch';
    return null;
  }

  /**
   * A follower fetched from `fetchOffset` (its log end offset) when the leader's log ended at
   * `leaderEndOffset` (Kafka's Replica.updateFetchStateOrThrow): it is caught up as of now when it
   * had everything, or as of its previous fetch when it had what the leader had then.
   */
  updateFollowerFetchState(replicaId: number, brokerEpoch: bigint, fetchOffset: number, logStartOffset: number, nowMs: number, leaderEndOffset: number): void {
    const f = this.followers.get(replicaId);
    assert(f !== undefined, `${this.topic}-${this.index}: fetch state of ${replicaId}, not a follower`);
    if (fetchOffset >= leaderEndOffset) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, nowMs);
    else if (fetchOffset >= f.lastFetchLeaderLogEndOffset) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, f.lastFetchTimeMs);
    f.logEndOffset = fetchOffset;
    f.logStartOffset = logStartOffset;
    f.lastFetchLeaderLogEndOffset = Math.max(leaderEndOffset, f.lastFetchLeaderLogEndOffset);
    f.lastFetchTimeMs = nowMs;
    f.brokerEpoch = brokerEpoch;
  }

  /**
   * Kafka's maybeExpandIsr: a follower outside the ISR that has reached the high watermark, and
   * this leader epoch's start, joins it, if it may (`eligible`) and no change is in flight.
   */
  maybeExpandIsr(replicaId: number, eligible: IsrEligibility): IsrProposal | null {
    if (!this.isLeader || this.pendingIsrChange !== null || this.isr.includes(replicaId)) return null;
    const f = this.followers.get(replicaId);
    if (f === undefined || !this.isEligible(f, eligible)) return null;
    const inSync = f.logEndOffset >= this.highWatermark && this.leaderEpochStartOffset >= 0 && f.logEndOffset >= this.leaderEpochStartOffset;
    if (!inSync) return null;
    return this.propose({ kind: 'expand', proposedIsr: [...this.isr, replicaId] });
  }

  /**
   * Kafka's maybeShrinkIsr: ISR followers that have not caught up within `maxLagMs` leave it
   * (unless one change is in flight already).
   */
  maybeShrinkIsr(nowMs: number, maxLagMs: number): IsrProposal | null {
    if (!this.isLeader || this.pendingIsrChange !== null) return null;
    const leo = this.log.logEndOffset;
    const outOfSync = this.isr.filter((id) => {
      if (id === this.localBrokerId) return false;
      const f = this.followers.get(id);
      return f === undefined || !(f.logEndOffset === leo || nowMs - f.lastCaughtUpTimeMs <= maxLagMs);
    });
    if (outOfSync.length === 0) return null;
    return this.propose({ kind: 'shrink', proposedIsr: this.isr.filter((id) => !outOfSync.includes(id)) });
  }

  /**
   * The controller answered the proposal. Returns whether the committed state changed here. A
   * change the controller made counts when the metadata shows it (makeLeader); an answer at the
   * current partition epoch (the controller had nothing to change) commits now, as Kafka does.
   * INELIGIBLE_REPLICA / OPERATION_NOT_ATTEMPTED drop the proposal; other errors leave it in
   * flight until the metadata moves on (FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, ...).
   */
  handleIsrChangeResult(pending: PendingIsrChange, r: IsrChangeResult, errors: { ineligible: readonly number[] }): boolean {
    if (this.pendingIsrChange !== pending) return false;
    if (r.errorCode !== 0) {
      if (errors.ineligible.includes(r.errorCode)) this.pendingIsrChange = null;
      return false;
    }
    if (r.leaderEpoch !== this.leaderEpoch || r.partitionEpoch !== this.partitionEpoch) return false;
    this.isr = [...r.isr];
    this.pendingIsrChange = null;
    return true;
  }

  /** Kafka's isReplicaIsrEligible: alive and unfenced, and the epoch it fetched with is its registration's. */
  private isEligible(f: FollowerState, eligible: IsrEligibility): boolean {
    const registered = eligible(f.brokerId);
    return registered !== undefined && (f.brokerEpoch === -1n || f.brokerEpoch === registered);
  }

  private propose(pending: PendingIsrChange): IsrProposal {
    this.pendingIsrChange = pending;
    const newIsr = pending.proposedIsr.map((brokerId) => ({ brokerId, brokerEpoch: this.followers.get(brokerId)?.brokerEpoch ?? -1n }));
    return { partition: this, leaderEpoch: this.leaderEpoch, partitionEpoch: this.partitionEpoch, newIsr, pending };
  }
}

/**
 * A follower's state as a new leader starts it: unknown progress; an ISR member counts as caught
 * up now, so it is not dropped before it had a chance to fetch.
 */
function newFollowerState(brokerId: number, nowMs: number, inIsr: boolean): FollowerState {
  return {
    brokerId, logEndOffset: -1, logStartOffset: -1, lastFetchLeaderLogEndOffset: -1, lastFetchTimeMs: 0,
    lastCaughtUpTimeMs: inIsr ? nowMs : 0, brokerEpoch: -1n,
  };
}

/** A new leader epoch on the same leader: progress is kept, catching up is measured from now (Kafka's resetReplicaState). */
function resetFollowerState(f: FollowerState, nowMs: number, leaderEndOffset: number, inIsr: boolean): void {
  f.lastFetchLeaderLogEndOffset = leaderEndOffset;
  f.lastFetchTimeMs = nowMs;
  f.lastCaughtUpTimeMs = inIsr ? nowMs : 0;
}
