// One share-partition (KIP-932): the delivery state of a topic partition's records for one share
// group, kept by the partition's leader (Kafka's SharePartition). Records between the
// share-partition start offset (SPSO) and the end offset (SPEO, exclusive here: the first offset
// never fetched) are in flight, each in one state:
//   available     may be acquired by the next ShareFetch of any member
//   acquired      locked to one member until it acknowledges or the lock expires
//   acknowledged  accepted by a consumer: never delivered again
//   archived      rejected, past the delivery count limit, an aborted transaction's, or a gap
// Acquiring counts a delivery; a released or expired record whose delivery count reached
// `share.delivery.count.limit` is archived instead of made available. The SPSO moves past the
// done (acknowledged or archived) prefix. A deterministic state machine: time is an input, the
// lock deadlines are data (`nextLockDeadlineMs`), nothing here reads a clock or does I/O.
import { ErrorCode } from '../../protocol/index.js';
import { assert } from '../../util/index.js';

/** Kafka's RecordState ids; the persisted ones (ShareSnapshot/ShareUpdate DeliveryState) are 0, 2 and 4. */
export const RecordState = { AVAILABLE: 0, ACQUIRED: 1, ACKNOWLEDGED: 2, ARCHIVED: 4 } as const;
export type RecordStateId = (typeof RecordState)[keyof typeof RecordState];

/** ShareFetch/ShareAcknowledge AcknowledgeTypes. */
export const AcknowledgeType = { GAP: 0, ACCEPT: 1, RELEASE: 2, REJECT: 3 } as const;

export interface SharePartitionConfig {
  /** share.record.lock.duration.ms */
  recordLockDurationMs: number;
  /** share.delivery.count.limit */
  deliveryCountLimit: number;
  /** share.partition.max.record.locks: no new records are acquired while this many are in flight. */
  maxInFlightRecords: number;
}

/** A persisted run of offsets in one state (ShareSnapshot/ShareUpdate StateBatches). */
export interface StateBatch { firstOffset: number; lastOffset: number; deliveryState: number; deliveryCount: number }

/** What a share-partition is rebuilt from: the share coordinator's state, or a fresh start. */
export interface ShareState { startOffset: number; stateBatches: StateBatch[] }

/** A record batch of the log, as much of it as acquisition needs (offsets only, no records). */
export interface BatchSpan { baseOffset: number; lastOffset: number }

/** A ShareFetch AcquiredRecords entry: consecutive offsets with one delivery count. */
export interface AcquiredRange { firstOffset: number; lastOffset: number; deliveryCount: number }

/**
 * A record archived because a consumer rejected it or it reached the delivery count limit: what
 * goes to the group's dead-letter topic (KIP-1191), when it has one.
 */
export interface DeadLetter { offset: number; reason: 'rejected' | 'delivery_limit'; deliveryCount: number }

/** A ShareAcknowledge / ShareFetch AcknowledgementBatch. */
export interface AcknowledgementBatch { firstOffset: number; lastOffset: number; acknowledgeTypes: number[] }

interface InFlight { state: RecordStateId; deliveryCount: number; memberId: string | null; lockExpiresMs: number }

const DONE = (s: RecordStateId) => s === RecordState.ACKNOWLEDGED || s === RecordState.ARCHIVED;

export class SharePartition {
  /** The share-partition start offset: every offset below it is done. */
  startOffset: number;
  /** The first offset never fetched for this group; records in [startOffset, endOffset) are in flight. */
  endOffset: number;
  private readonly records = new Map<number, InFlight>();
  /** Archived by a reject or the delivery limit since the last takeDeadLetters(), in order. */
  private deadLetters: DeadLetter[] = [];

  constructor(readonly config: SharePartitionConfig, state: ShareState) {
    assert(state.startOffset >= 0, `share-partition start offset ${state.startOffset}`);
    this.startOffset = state.startOffset;
    this.endOffset = state.startOffset;
    for (const b of [...state.stateBatches].sort((a, c) => a.firstOffset - c.firstOffset)) {
      for (let o = Math.max(b.firstOffset, this.startOffset); o <= b.lastOffset; o++) {
        // Whatever was acquired when the state was written is available again, its deliveries
        // kept; one whose last delivery reached the limit ended like a lock expiry: archived.
        const done = b.deliveryState === RecordState.ACKNOWLEDGED || b.deliveryState === RecordState.ARCHIVED;
        const s = done ? b.deliveryState : b.deliveryCount >= config.deliveryCountLimit ? RecordState.ARCHIVED : RecordState.AVAILABLE;
        if (!done && s === RecordState.ARCHIVED) this.deadLetters.push({ offset: o, reason: 'delivery_limit', deliveryCount: b.deliveryCount });
        this.fillGapTo(o);
        this.records.set(o, { state: s as RecordStateId, deliveryCount: b.deliveryCount, memberId: null, lockExpiresMs: 0 });
        this.endOffset = o + 1;
      }
    }
    this.maybeAdvanceStartOffset();
  }

  /** Records in flight (Kafka's in-flight messages: SPEO - SPSO). */
  get inFlightRecords(): number { return this.endOffset - this.startOffset; }

  /** Where the next read from the log starts: the first available record, else the end offset. */
  nextFetchOffset(): number {
    for (let o = this.startOffset; o < this.endOffset; o++) if (this.records.get(o)!.state === RecordState.AVAILABLE) return o;
    return this.endOffset;
  }

  /** Whether a fetch may acquire anything: an available record in flight, or room for new ones. */
  canAcquire(): boolean { return this.nextFetchOffset() < this.endOffset || this.inFlightRecords < this.config.maxInFlightRecords; }

  stateOf(offset: number): { state: RecordStateId; deliveryCount: number; memberId: string | null } | undefined {
    const r = this.records.get(offset);
    return r && { state: r.state, deliveryCount: r.deliveryCount, memberId: r.memberId };
  }

  /**
   * Acquires for `memberId` the records of the batches read from the log (from nextFetchOffset),
   * up to `maxRecords` (rounded up to the end of a batch, as Kafka aligns to batch boundaries),
   * and no new records past the in-flight limit. Offsets in `archive` (an aborted transaction's
   * records under read_committed) are archived rather than delivered. Offsets the log skipped
   * between batches (compaction, retention) are archived as gaps.
   */
  acquire(nowMs: number, memberId: string, batches: readonly BatchSpan[], maxRecords: number, archive: readonly BatchSpan[] = []): AcquiredRange[] {
    const out: AcquiredRange[] = [];
    let count = 0;
    const aborted = (o: number) => archive.some((a) => o >= a.baseOffset && o <= a.lastOffset);
    for (const b of batches) {
      if (count >= maxRecords) break;
      for (let o = Math.max(b.baseOffset, this.startOffset); o <= b.lastOffset; o++) {
        let r = this.records.get(o);
        if (r === undefined) {
          // The limit bounds what is held per offset, gaps the log skipped (compaction) included:
          // a gap with nothing in flight before it is passed over (the start offset moves past
          // it); one that would not fit under the limit waits for the in-flight prefix to finish.
          if (this.inFlightRecords === 0 && o > this.endOffset) this.startOffset = this.endOffset = o;
          if (this.inFlightRecords + (o - this.endOffset) + 1 > this.config.maxInFlightRecords) break;
          this.fillGapTo(o);
          r = { state: RecordState.AVAILABLE, deliveryCount: 0, memberId: null, lockExpiresMs: 0 };
          this.records.set(o, r);
          this.endOffset = o + 1;
        }
        if (r.state !== RecordState.AVAILABLE) continue;
        // Aborted records, and any at the limit (the group's limit may have been lowered), are never delivered.
        if (aborted(o)) { r.state = RecordState.ARCHIVED; continue; }
        if (r.deliveryCount >= this.config.deliveryCountLimit) {
          r.state = RecordState.ARCHIVED;
          this.deadLetters.push({ offset: o, reason: 'delivery_limit', deliveryCount: r.deliveryCount });
          continue;
        }
        r.state = RecordState.ACQUIRED;
        r.deliveryCount++;
        r.memberId = memberId;
        r.lockExpiresMs = nowMs + this.config.recordLockDurationMs;
        count++;
        const last = out[out.length - 1];
        if (last && last.lastOffset === o - 1 && last.deliveryCount === r.deliveryCount) last.lastOffset = o;
        else out.push({ firstOffset: o, lastOffset: o, deliveryCount: r.deliveryCount });
      }
    }
    this.maybeAdvanceStartOffset();
    return out;
  }

  /**
   * Applies a member's acknowledgements, all or none: every offset must be acquired by that
   * member (INVALID_RECORD_STATE otherwise, as Kafka answers), the batches well formed
   * (INVALID_REQUEST). Accept acknowledges, release makes available (archived at the delivery
   * limit), reject and gap archive.
   */
  acknowledge(memberId: string, batches: readonly AcknowledgementBatch[]): number {
    for (const b of batches) {
      const n = b.lastOffset - b.firstOffset + 1;
      if (n < 1 || (b.acknowledgeTypes.length !== 1 && b.acknowledgeTypes.length !== n)) return ErrorCode.INVALID_REQUEST;
      if (b.acknowledgeTypes.some((t) => t < AcknowledgeType.GAP || t > AcknowledgeType.REJECT)) return ErrorCode.INVALID_REQUEST;
      for (let o = b.firstOffset; o <= b.lastOffset; o++) {
        const r = this.records.get(o);
        if (r === undefined || r.state !== RecordState.ACQUIRED || r.memberId !== memberId) return ErrorCode.INVALID_RECORD_STATE;
      }
    }
    for (const b of batches) {
      for (let o = b.firstOffset; o <= b.lastOffset; o++) {
        const type = b.acknowledgeTypes.length === 1 ? b.acknowledgeTypes[0]! : b.acknowledgeTypes[o - b.firstOffset]!;
        const r = this.records.get(o)!;
        if (type === AcknowledgeType.ACCEPT) this.settle(r, RecordState.ACKNOWLEDGED);
        else if (type === AcknowledgeType.RELEASE) this.release(r, o);
        else {
          if (type === AcknowledgeType.REJECT) this.deadLetters.push({ offset: o, reason: 'rejected', deliveryCount: r.deliveryCount });
          this.settle(r, RecordState.ARCHIVED);
        }
      }
    }
    this.maybeAdvanceStartOffset();
    return ErrorCode.NONE;
  }

  /** A member's session closed or it left the group: what it holds is released. The count released. */
  releaseMember(memberId: string): number {
    let n = 0;
    for (const [o, r] of this.records) if (r.state === RecordState.ACQUIRED && r.memberId === memberId) { this.release(r, o); n++; }
    this.maybeAdvanceStartOffset();
    return n;
  }

  /** The records rejected or archived at the delivery limit since the last call, in the order it happened. */
  takeDeadLetters(): DeadLetter[] {
    const out = this.deadLetters;
    this.deadLetters = [];
    return out;
  }

  /** Acquisition locks that ran out by `nowMs` release their records. The count released. */
  expireLocks(nowMs: number): number {
    let n = 0;
    for (const [o, r] of this.records) if (r.state === RecordState.ACQUIRED && r.lockExpiresMs <= nowMs) { this.release(r, o); n++; }
    this.maybeAdvanceStartOffset();
    return n;
  }

  /** The earliest lock deadline of an acquired record, or null when none is acquired. */
  nextLockDeadlineMs(): number | null {
    let min: number | null = null;
    for (const r of this.records.values()) if (r.state === RecordState.ACQUIRED && (min === null || r.lockExpiresMs < min)) min = r.lockExpiresMs;
    return min;
  }

  /** Records in flight already acknowledged or archived (waiting for the start offset to pass them; for the lag). */
  doneRecords(): number {
    let n = 0;
    for (const r of this.records.values()) if (DONE(r.state)) n++;
    return n;
  }

  /** Records acquired now (for metrics). */
  acquiredRecords(): number {
    let n = 0;
    for (const r of this.records.values()) if (r.state === RecordState.ACQUIRED) n++;
    return n;
  }

  /** The log start offset moved past the SPSO (retention, DeleteRecords): what it removed is archived. */
  maybeMoveToLogStart(logStartOffset: number): void {
    if (logStartOffset <= this.startOffset) return;
    for (let o = this.startOffset; o < Math.min(logStartOffset, this.endOffset); o++) this.records.delete(o);
    this.startOffset = logStartOffset;
    this.endOffset = Math.max(this.endOffset, logStartOffset);
    this.maybeAdvanceStartOffset();
  }

  /**
   * The state to persist: the SPSO and runs of equal (state, delivery count) over what is in
   * flight, an acquired record written as available with its delivery count, so a new leader
   * redelivers only what was in flight and counts the delivery it already made.
   */
  persistentState(): ShareState {
    const stateBatches: StateBatch[] = [];
    for (let o = this.startOffset; o < this.endOffset; o++) {
      const r = this.records.get(o)!;
      const s = r.state === RecordState.ACQUIRED ? RecordState.AVAILABLE : r.state;
      const last = stateBatches[stateBatches.length - 1];
      if (last && last.deliveryState === s && last.deliveryCount === r.deliveryCount) last.lastOffset = o;
      else stateBatches.push({ firstOffset: o, lastOffset: o, deliveryState: s, deliveryCount: r.deliveryCount });
    }
    return { startOffset: this.startOffset, stateBatches };
  }

  /** Invariants the property tests check after every step. */
  checkInvariants(nowMs?: number): void {
    assert(this.startOffset <= this.endOffset, `SPSO ${this.startOffset} past SPEO ${this.endOffset}`);
    assert(this.records.size === this.endOffset - this.startOffset, `in-flight map holds ${this.records.size} records for [${this.startOffset}, ${this.endOffset})`);
    if (this.startOffset < this.endOffset) assert(!DONE(this.records.get(this.startOffset)!.state), `SPSO ${this.startOffset} is done but did not move`);
    for (const [o, r] of this.records) {
      assert(o >= this.startOffset && o < this.endOffset, `offset ${o} outside the in-flight range`);
      assert((r.state === RecordState.ACQUIRED) === (r.memberId !== null), `offset ${o}: owner ${r.memberId} in state ${r.state}`);
      assert(r.deliveryCount <= this.config.deliveryCountLimit, `offset ${o} delivered ${r.deliveryCount} times, past the limit`);
      if (nowMs !== undefined && r.state === RecordState.ACQUIRED) assert(r.lockExpiresMs > nowMs, `offset ${o} acquired past its lock`);
    }
  }

  private release(r: InFlight, offset: number): void {
    if (r.deliveryCount < this.config.deliveryCountLimit) { this.settle(r, RecordState.AVAILABLE); return; }
    this.deadLetters.push({ offset, reason: 'delivery_limit', deliveryCount: r.deliveryCount });
    this.settle(r, RecordState.ARCHIVED);
  }

  private settle(r: InFlight, state: RecordStateId): void {
    r.state = state;
    r.memberId = null;
    r.lockExpiresMs = 0;
  }

  /** Offsets the log does not hold between the end offset and `offset` are archived as gaps. */
  private fillGapTo(offset: number): void {
    for (let o = this.endOffset; o < offset; o++) this.records.set(o, { state: RecordState.ARCHIVED, deliveryCount: 0, memberId: null, lockExpiresMs: 0 });
    if (offset > this.endOffset) this.endOffset = offset;
  }

  private maybeAdvanceStartOffset(): void {
    while (this.startOffset < this.endOffset && DONE(this.records.get(this.startOffset)!.state)) {
      this.records.delete(this.startOffset);
      this.startOffset++;
    }
  }
}
