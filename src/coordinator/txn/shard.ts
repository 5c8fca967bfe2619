// One transaction coordinator shard: the transactional ids of one `__transaction_state` partition.
// A deterministic state machine in the style of Kafka's TransactionCoordinator and
// TransactionStateManager, transaction versions 1 and 2 (KIP-890 part 2: an EndTxn of a version 2
// client bumps the producer epoch, see endTxnV2): every operation takes the time as an input and
// returns Effects — the records to append, the replies to send once they are committed, and the
// transaction markers to write after that. The caller writes a COMMIT/ABORT control batch to each
// partition a marker names, then calls `completeTransaction`, which writes CompleteCommit or
// CompleteAbort.
//
// Durable state changes only in `replay(record)`, which is also how a partition is loaded. A
// transactional id with a record in flight is "pending" (Kafka's pendingState): other operations on
// it answer CONCURRENT_TRANSACTIONS until the record is replayed or its append fails. Timers are
// data; `tick(now)` aborts timed-out transactions (with an epoch bump, fencing the producer) and
// expires idle transactional ids (a tombstone). No clock, no randomness (producer ids come from an
// injected synchronous generator), no I/O.
import { ErrorCode, type DescribeTransactionsResponseTransactionState, type ListTransactionsResponse } from '../../protocol/index.js';
import { assert, limits } from '../../util/index.js';
import { Timers } from '../runtime/timers.js';
import { NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TXN_STATES, sortPartitions, type TopicPartition, type TxnRecord, type TxnRecordValue, type TxnState } from './records.js';
import {
  EXPIRATION_ALLOWED, PRODUCER_EPOCH_MAX, VALID_PREVIOUS_STATES, isEpochExhausted, isValidExpectedProducer, supportsEpochBump, tpKey, transit,
  type TransactionMetadata,
} from './metadata.js';

export const OFFSETS_TOPIC = '__consumer_offsets';

export interface TxnCoordinatorConfig {
  /** transaction.max.timeout.ms */
  transactionMaxTimeoutMs: number;
  /** transactional.id.expiration.ms */
  transactionalIdExpirationMs: number;
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms */
  abortTimedOutTransactionsIntervalMs: number;
  /** transaction.remove.expired.transaction.cleanup.interval.ms */
  removeExpiredTransactionalIdsIntervalMs: number;
  /** TransactionLogValue version written: 1 (flexible, Kafka 4 with transaction.version 2) keeps the previous producer id. */
  logValueVersion: 0 | 1;
  /** Timed-out transactions aborted per tick; the rest wait for the next one (soon after). */
  abortsPerTickMax: number;
  /** Transactional ids expired per tick. */
  expirationsPerTickMax: number;
}

export const defaultTxnConfig: TxnCoordinatorConfig = {
  transactionMaxTimeoutMs: 900_000, transactionalIdExpirationMs: 7 * 24 * 3600 * 1000, abortTimedOutTransactionsIntervalMs: 10_000,
  removeExpiredTransactionalIdsIntervalMs: 3600_000, logValueVersion: 1, abortsPerTickMax: limits.txnAbortsPerTickMax, expirationsPerTickMax: limits.txnExpirationsPerTickMax,
};

/** Something to send once this operation's records are committed (or to fail with a code if they are not). */
export interface TxnReply { send(): void; fail(errorCode: number): void }

/** COMMIT or ABORT control batches to write, once the Prepare record is committed. */
export interface MarkerWrite {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  result: 'commit' | 'abort';
  coordinatorEpoch: number;
  partitions: TopicPartition[];
}

export interface TxnEffects {
  records: TxnRecord[];
  replies: TxnReply[];
  /** Undo for soft state set ahead of the append, run when the append fails. */
  onAppendFailure: ((errorCode: number) => void)[];
  /** Markers to write after the records are committed (never when the append fails). */
  markers: MarkerWrite[];
}

export interface InitProducerIdParams {
  transactionalId: string;
  transactionTimeoutMs: number;
  /** -1 unless the client (v3+, KIP-360) names the producer it was. */
  producerId: bigint;
  producerEpoch: number;
}
export interface InitProducerIdResult { errorCode: number; producerId: bigint; producerEpoch: number }

export interface ProducerParams { transactionalId: string; producerId: bigint; producerEpoch: number }
export interface AddPartitionsParams extends ProducerParams {
  partitions: TopicPartition[];
  /** 2 when the partitions are added for a version 2 client (AddPartitionsToTxn v5+: Produce v12+, TxnOffsetCommit v5+); 0 otherwise. */
  clientTransactionVersion?: number;
}
export interface AddOffsetsParams extends ProducerParams { groupId: string; offsetsPartition: number }
export interface EndTxnParams extends ProducerParams {
  commit: boolean;
  /** 2 for EndTxn v5+ (an epoch bump on every transaction); 0 before. */
  clientTransactionVersion?: number;
}
/** What EndTxn answers; a version 2 client continues with this producer id and epoch (-1 on an error). */
export interface EndTxnResult { errorCode: number; producerId: bigint; producerEpoch: number }
export interface PartitionError extends TopicPartition { errorCode: number }

export interface ListTransactionsFilters {
  stateFilters: string[];
  producerIdFilters: bigint[];
  /** Only transactions running longer than this (ListTransactions v1); -1 for all. */
  durationFilterMs: number;
  /** ListTransactions v2's TransactionalIdPattern, compiled by the caller; null for all. */
  transactionalIdPattern: RegExp | null;
}

const emptyEffects = (): TxnEffects => ({ records: [], replies: [], onAppendFailure: [], markers: [] });
const initError = (errorCode: number): InitProducerIdResult => ({ errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });

/** What an append error means to a client (Kafka's TransactionStateManager.appendTransactionToLog). */
export function txnAppendError(errorCode: number): number {
  switch (errorCode) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: case ErrorCode.NOT_ENOUGH_REPLICAS: case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ErrorCode.REQUEST_TIMED_OUT:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER: case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.MESSAGE_TOO_LARGE: case ErrorCode.RECORD_LIST_TOO_LARGE:
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    default:
      return errorCode;
  }
}

/** KIP-588: requests older than these versions learn of fencing as INVALID_PRODUCER_EPOCH. */
export function fencedErrorForVersion(errorCode: number, apiKey: number, apiVersion: number): number {
  if (errorCode !== ErrorCode.PRODUCER_FENCED) return errorCode;
  const firstFencedVersion = ({ 22: 4, 24: 2, 25: 2, 26: 2 } as Record<number, number>)[apiKey] ?? 0;
  return apiVersion < firstFencedVersion ? ErrorCode.INVALID_PRODUCER_EPOCH : errorCode;
}

export class TransactionCoordinatorShard {
  readonly txns = new Map<string, TransactionMetadata>();
  /** Transactional ids with a record in flight, and the state it moves them to. */
  private readonly pending = new Map<string, TxnState>();
  readonly timers = new Timers();
  private effects: TxnEffects = emptyEffects();
  private nowMs = 0;
  /** True while the partition is being replayed (records are history, not live writes). */
  loading = true;
  /** True once the partition has moved away: every request gets NOT_COORDINATOR. */
  unloaded = false;

  constructor(readonly config: TxnCoordinatorConfig, readonly coordinatorEpoch: number, private readonly generateProducerId: () => bigint) {}

  // ---- driving -------------------------------------------------------------------------------

  private run(nowMs: number, op: () => void): TxnEffects {
    this.nowMs = Math.max(this.nowMs, nowMs);
    op();
    const out = this.effects;
    this.effects = emptyEffects();
    return out;
  }

  tick(nowMs: number): TxnEffects { return this.run(nowMs, () => { this.timers.expire(nowMs); }); }
  nextDeadlineMs(): number | null { return this.timers.nextDeadlineMs(); }

  /**
   * Called once the partition is replayed: a transaction found in PrepareCommit or PrepareAbort had
   * its markers interrupted by the coordinator move, so they are written again and the transaction
   * completed. The periodic scans start.
   */
  onLoaded(nowMs: number): TxnEffects {
    this.loading = false;
    return this.run(nowMs, () => {
      for (const m of this.txns.values()) {
        if (m.state === 'PrepareCommit' || m.state === 'PrepareAbort') this.effects.markers.push(this.markerFor(m));
      }
      this.scheduleAbortScan();
      this.scheduleExpirationScan();
    });
  }

  /** The partition moved away (Kafka's onResignation): forget everything, answer NOT_COORDINATOR. */
  unload(): void {
    this.unloaded = true;
    this.txns.clear();
    this.pending.clear();
    for (const key of ['abort-timed-out', 'expire-ids']) this.timers.cancel(key);
  }

  private coordinatorError(): number {
    if (this.unloaded) return ErrorCode.NOT_COORDINATOR;
    if (this.loading) return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    return ErrorCode.NONE;
  }

  private respond(send: () => void, fail?: (errorCode: number) => void): void {
    this.effects.replies.push({ send, fail: fail ?? (() => send()) });
  }

  /** Emits the next value of a transactional id (null: its tombstone) and marks it pending until it is replayed. */
  private write(transactionalId: string, value: TxnRecordValue | null, pendingState: TxnState): void {
    assert(!this.pending.has(transactionalId), `${transactionalId} already has a write in flight`);
    this.pending.set(transactionalId, pendingState);
    this.effects.records.push({ transactionalId, value });
    this.effects.onAppendFailure.push(() => { this.pending.delete(transactionalId); });
  }

  // ---- replay: the one path for loading and for committed writes -------------------------------

  replay(r: TxnRecord): void {
    this.pending.delete(r.transactionalId);
    if (r.value === null) { this.txns.delete(r.transactionalId); return; }
    const before = this.txns.get(r.transactionalId);
    if (!this.loading && before) assertTransition(before, r.value);
    this.txns.set(r.transactionalId, { transactionalId: r.transactionalId, ...r.value });
  }

  // ---- InitProducerId --------------------------------------------------------------------------

  initProducerId(nowMs: number, p: InitProducerIdParams, done: (r: InitProducerIdResult) => void): TxnEffects {
    return this.run(nowMs, () => {
      const fail = (code: number): void => this.respond(() => done(initError(code)));
      const id = p.transactionalId;
      if (id === '') return fail(ErrorCode.INVALID_REQUEST);
      // KafkaApis: a producer id without an epoch (or the reverse) is malformed.
      if ((p.producerId === NO_PRODUCER_ID) !== (p.producerEpoch === NO_PRODUCER_EPOCH)) return fail(ErrorCode.INVALID_REQUEST);
      if (p.transactionTimeoutMs <= 0 || p.transactionTimeoutMs > this.config.transactionMaxTimeoutMs) return fail(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
      const coord = this.coordinatorError();
      if (coord !== ErrorCode.NONE) return fail(coord);
      if (this.pending.has(id)) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
      const m = this.txns.get(id) ?? this.newMetadata(id, p.transactionTimeoutMs);
      const expected = p.producerId === NO_PRODUCER_ID ? null : { producerId: p.producerId, epoch: p.producerEpoch };
      if (expected && !isValidExpectedProducer(m, expected.producerId, expected.epoch)) return fail(ErrorCode.PRODUCER_FENCED);
      switch (m.state) {
        case 'PrepareCommit': case 'PrepareAbort':
          return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
        case 'Ongoing':
          // Abort the open transaction under a bumped epoch (fencing its producer), and have this
          // client retry: once the abort completes, its retry bumps the epoch again.
          this.fenceAndAbort(m);
          this.respond(() => done(initError(ErrorCode.CONCURRENT_TRANSACTIONS)), (code) => done(initError(txnAppendError(code))));
          return;
        case 'Empty': case 'CompleteCommit': case 'CompleteAbort': {
          const next = this.nextProducerEpoch(m, p.transactionTimeoutMs, expected?.epoch ?? null);
          if (typeof next === 'number') return fail(next);
          this.write(id, next, 'Empty');
          this.respond(() => done({ errorCode: ErrorCode.NONE, producerId: next.producerId, producerEpoch: next.producerEpoch }),
            (code) => done(initError(txnAppendError(code))));
          return;
        }
        default:
          assert(false, `${id} is in ${m.state}, which is never stored`);
      }
    });
  }

  /** A transactional id seen for the first time: a new producer id, no epoch yet (written only with its first epoch). */
  private newMetadata(transactionalId: string, txnTimeoutMs: number): TransactionMetadata {
    return {
      transactionalId, producerId: this.generateProducerId(), lastProducerId: NO_PRODUCER_ID, nextProducerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH,
      lastProducerEpoch: NO_PRODUCER_EPOCH, txnTimeoutMs, state: 'Empty', topicPartitions: [], txnStartTimestampMs: -1,
      txnLastUpdateTimestampMs: this.nowMs, clientTransactionVersion: 0,
    };
  }

  /** Kafka's prepareIncrementProducerEpoch / prepareProducerIdRotation: the next epoch, or an error code. */
  private nextProducerEpoch(m: TransactionMetadata, txnTimeoutMs: number, expectedEpoch: number | null): TxnRecordValue | number {
    const reset = { state: 'Empty' as const, topicPartitions: [], txnStartTimestampMs: -1, txnLastUpdateTimestampMs: this.nowMs, txnTimeoutMs };
    if (isEpochExhausted(m.producerEpoch) && (expectedEpoch === null || expectedEpoch === m.producerEpoch)) {
      return transit(m, { ...reset, producerId: this.generateProducerId(), producerEpoch: 0, lastProducerEpoch: expectedEpoch === null ? NO_PRODUCER_EPOCH : m.producerEpoch });
    }
    if (expectedEpoch === null) return transit(m, { ...reset, producerEpoch: m.producerEpoch + 1, lastProducerEpoch: NO_PRODUCER_EPOCH });
    // The producer continues after an error, and nobody else has initialized since: bump, remember the last epoch.
    if (m.producerEpoch === NO_PRODUCER_EPOCH || expectedEpoch === m.producerEpoch) {
      return transit(m, { ...reset, producerEpoch: m.producerEpoch + 1, lastProducerEpoch: m.producerEpoch });
    }
    // The retry of a bump whose answer was lost: hand back the current epoch again.
    if (expectedEpoch === m.lastProducerEpoch) return transit(m, { ...reset, producerEpoch: m.producerEpoch, lastProducerEpoch: m.lastProducerEpoch });
    return ErrorCode.PRODUCER_FENCED;
  }

  /**
   * Kafka's prepareFenceProducerEpoch followed by an abort from the coordinator: PrepareAbort under
   * epoch + 1, so the old producer's epoch is fenced; the markers carry the new epoch. If the append
   * fails nothing changed here, and the next attempt bumps to the same epoch (Kafka keeps a
   * hasFailedEpochFence flag for the same effect, since it bumps its in-memory epoch first).
   * A version 2 transaction's abort bumps once more, as every TV2 end does (epoch + 2): the fenced
   * client's EndTxn at its old epoch is then no retry but PRODUCER_FENCED. Kafka would pass the top
   * epoch there; the bump stops at it instead (an EndTxn never sees the top epoch as a retry).
   */
  private fenceAndAbort(m: TransactionMetadata): void {
    assert(m.state === 'Ongoing', 'only an ongoing transaction is fenced');
    assert(m.producerEpoch < PRODUCER_EPOCH_MAX, `cannot fence ${m.transactionalId} beyond epoch ${PRODUCER_EPOCH_MAX}`);
    const v2 = supportsEpochBump(m.clientTransactionVersion);
    const producerEpoch = Math.min(m.producerEpoch + (v2 ? 2 : 1), PRODUCER_EPOCH_MAX);
    const next = transit(m, {
      producerEpoch, lastProducerEpoch: v2 ? producerEpoch - 1 : NO_PRODUCER_EPOCH, state: 'PrepareAbort', txnLastUpdateTimestampMs: this.nowMs,
    });
    this.write(m.transactionalId, next, 'PrepareAbort');
    this.effects.markers.push(this.markerFor({ transactionalId: m.transactionalId, ...next }));
  }

  private markerFor(m: TransactionMetadata): MarkerWrite {
    assert(m.state === 'PrepareCommit' || m.state === 'PrepareAbort', 'markers follow a Prepare state');
    return {
      transactionalId: m.transactionalId, producerId: m.producerId, producerEpoch: m.producerEpoch, result: m.state === 'PrepareCommit' ? 'commit' : 'abort',
      coordinatorEpoch: this.coordinatorEpoch, partitions: m.topicPartitions,
    };
  }

  // ---- AddPartitionsToTxn / AddOffsetsToTxn ----------------------------------------------------

  /** The checks shared by the requests of a producer that holds an epoch; NONE when they pass. */
  private producerError(p: ProducerParams): number {
    if (p.transactionalId === '') return ErrorCode.INVALID_REQUEST;
    const coord = this.coordinatorError();
    if (coord !== ErrorCode.NONE) return coord;
    const m = this.txns.get(p.transactionalId);
    if (!m || m.producerId !== p.producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (m.producerEpoch !== p.producerEpoch) return ErrorCode.PRODUCER_FENCED;
    return ErrorCode.NONE;
  }

  addPartitionsToTxn(nowMs: number, p: AddPartitionsParams, done: (errorCode: number) => void): TxnEffects {
    return this.run(nowMs, () => {
      const fail = (code: number): void => this.respond(() => done(code));
      const error = this.producerError(p);
      if (error !== ErrorCode.NONE) return fail(error);
      if (this.pending.has(p.transactionalId)) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
      const m = this.txns.get(p.transactionalId)!;
      if (m.state === 'PrepareCommit' || m.state === 'PrepareAbort') return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
      const have = new Set(m.topicPartitions.map(tpKey));
      // Already part of the transaction: answer at once, nothing to write.
      if (m.state === 'Ongoing' && p.partitions.every((tp) => have.has(tpKey(tp)))) return fail(ErrorCode.NONE);
      assert(VALID_PREVIOUS_STATES.Ongoing.includes(m.state), `${m.state} cannot become Ongoing`);
      const merged = new Map(m.topicPartitions.map((tp) => [tpKey(tp), tp]));
      for (const tp of p.partitions) merged.set(tpKey(tp), { topic: tp.topic, partition: tp.partition });
      const starting = m.state !== 'Ongoing';
      this.write(p.transactionalId, transit(m, {
        state: 'Ongoing', topicPartitions: sortPartitions(merged.values()), txnStartTimestampMs: starting ? this.nowMs : m.txnStartTimestampMs,
        txnLastUpdateTimestampMs: this.nowMs, clientTransactionVersion: p.clientTransactionVersion ?? 0,
      }), 'Ongoing');
      this.respond(() => done(ErrorCode.NONE), (code) => done(txnAppendError(code)));
    });
  }

  /** AddPartitionsToTxn v4+ with verifyOnly (a broker checking a produce, KIP-890): a code per partition, nothing written. */
  verifyPartitionsInTxn(p: AddPartitionsParams): PartitionError[] {
    const all = (errorCode: number): PartitionError[] => p.partitions.map((tp) => ({ topic: tp.topic, partition: tp.partition, errorCode }));
    const error = this.producerError(p);
    if (error !== ErrorCode.NONE) return all(error);
    const m = this.txns.get(p.transactionalId)!;
    if (m.state === 'PrepareCommit' || m.state === 'PrepareAbort') return all(ErrorCode.CONCURRENT_TRANSACTIONS);
    const have = new Set(m.topicPartitions.map(tpKey));
    return p.partitions.map((tp) => ({ topic: tp.topic, partition: tp.partition, errorCode: have.has(tpKey(tp)) ? ErrorCode.NONE : ErrorCode.TRANSACTION_ABORTABLE }));
  }

  /** Adds the group's `__consumer_offsets` partition (the caller knows its index) to the transaction. */
  addOffsetsToTxn(nowMs: number, p: AddOffsetsParams, done: (errorCode: number) => void): TxnEffects {
    return this.addPartitionsToTxn(nowMs, { ...p, partitions: [{ topic: OFFSETS_TOPIC, partition: p.offsetsPartition }] }, done);
  }

  // ---- EndTxn and the markers ------------------------------------------------------------------

  /**
   * EndTxn. `done` gets the error code and, for a version 2 client, the producer id and epoch it
   * continues with (the bumped epoch, or epoch 0 of a new producer id once the epochs ran out).
   */
  endTxn(nowMs: number, p: EndTxnParams, done: (errorCode: number, producerId: bigint, producerEpoch: number) => void): TxnEffects {
    return this.run(nowMs, () => {
      const answer = (r: EndTxnResult) => done(r.errorCode, r.producerId, r.producerEpoch);
      if (supportsEpochBump(p.clientTransactionVersion ?? 0)) this.endTxnV2(p, answer);
      else this.endTxnV1(p, (code) => done(code, NO_PRODUCER_ID, NO_PRODUCER_EPOCH));
    });
  }

  private endTxnV1(p: EndTxnParams, done: (errorCode: number) => void): void {
    const fail = (code: number): void => this.respond(() => done(code));
    const error = this.producerError(p);
    if (error !== ErrorCode.NONE) return fail(error);
    if (this.pending.has(p.transactionalId)) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    const m = this.txns.get(p.transactionalId)!;
    const same = (p.commit ? 'Commit' : 'Abort');
    switch (m.state) {
      case 'Ongoing': {
        const state = p.commit ? 'PrepareCommit' : 'PrepareAbort';
        const next = transit(m, { state, txnLastUpdateTimestampMs: this.nowMs, clientTransactionVersion: p.clientTransactionVersion ?? 0 });
        this.write(p.transactionalId, next, state);
        this.effects.markers.push(this.markerFor({ transactionalId: p.transactionalId, ...next }));
        this.respond(() => done(ErrorCode.NONE), (code) => done(txnAppendError(code)));
        return;
      }
      // A retry of an EndTxn that already completed (or is completing) the same way.
      case 'CompleteCommit': case 'CompleteAbort':
        return fail(m.state === `Complete${same}` ? ErrorCode.NONE : ErrorCode.INVALID_TXN_STATE);
      case 'PrepareCommit': case 'PrepareAbort':
        return fail(m.state === `Prepare${same}` ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE);
      case 'Empty':
        return fail(ErrorCode.INVALID_TXN_STATE);
      default:
        assert(false, `${p.transactionalId} is in ${m.state}, which is never stored`);
    }
  }

  /**
   * Transaction version 2 (Kafka's endTransaction for TV2, KIP-890 part 2). The Prepare record
   * carries epoch + 1 and the markers are written with it, so a late write of the old epoch is
   * refused by every partition of the transaction (and by the coordinator, for a partition not yet
   * in it); a producer whose epochs ran out continues under a new producer id (nextProducerId in
   * the Prepare record, made current by the Complete one). Since the epoch moves on every
   * transaction, a retry is recognised by its epoch, not by the state alone: one below the current
   * epoch (or the last epoch of the previous producer id, after a rotation) is the retry of an
   * EndTxn that went through. An abort with no transaction open (Empty or Complete) is allowed and
   * also bumps: the client may not know whether the broker began one for it.
   */
  private endTxnV2(p: EndTxnParams, done: (r: EndTxnResult) => void): void {
    const fail = (code: number): void => this.respond(() => done({ errorCode: code, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH }));
    if (p.transactionalId === '') return fail(ErrorCode.INVALID_REQUEST);
    const coord = this.coordinatorError();
    if (coord !== ErrorCode.NONE) return fail(coord);
    const m = this.txns.get(p.transactionalId);
    if (!m) return fail(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    const retryOnOverflow = m.lastProducerId === p.producerId && p.producerEpoch === PRODUCER_EPOCH_MAX - 1 && m.producerEpoch === 0;
    // A Complete state at the top epoch comes from fencing, never from an EndTxn: no retry to recognise.
    const retryOnEpochBump = m.producerEpoch === p.producerEpoch + 1 && !(m.state.startsWith('Complete') && m.producerEpoch === PRODUCER_EPOCH_MAX);
    const current = p.producerEpoch === m.producerEpoch && p.producerEpoch < PRODUCER_EPOCH_MAX;
    const isRetry = retryOnEpochBump || retryOnOverflow;
    if (m.producerId !== p.producerId && !retryOnOverflow) return fail(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    const validEpoch = m.state === 'PrepareCommit' || m.state === 'PrepareAbort' ? retryOnEpochBump
      : m.state === 'CompleteCommit' || m.state === 'CompleteAbort' ? isRetry || current : current;
    if (!validEpoch) return fail(ErrorCode.PRODUCER_FENCED);
    if (this.pending.has(p.transactionalId)) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    const already = (): void => this.respond(() => done({ errorCode: ErrorCode.NONE, producerId: m.producerId, producerEpoch: m.producerEpoch }));
    switch (m.state) {
      case 'Ongoing':
        return this.prepareEndV2(m, p.commit ? 'PrepareCommit' : 'PrepareAbort', false, done);
      case 'CompleteCommit':
        if (p.commit) return isRetry ? already() : fail(ErrorCode.INVALID_TXN_STATE);
        return isRetry ? fail(ErrorCode.INVALID_TXN_STATE) : this.prepareEndV2(m, 'PrepareAbort', true, done);
      case 'CompleteAbort':
        if (p.commit) return fail(ErrorCode.INVALID_TXN_STATE);
        return isRetry ? already() : this.prepareEndV2(m, 'PrepareAbort', true, done);
      case 'PrepareCommit': case 'PrepareAbort':
        return fail(m.state === (p.commit ? 'PrepareCommit' : 'PrepareAbort') ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE);
      case 'Empty':
        return p.commit ? fail(ErrorCode.INVALID_TXN_STATE) : this.prepareEndV2(m, 'PrepareAbort', true, done);
      default:
        assert(false, `${p.transactionalId} is in ${m.state}, which is never stored`);
    }
  }

  /** Kafka's prepareAbortOrCommit for TV2: the Prepare record under epoch + 1 (and the next producer id when the epochs ran out). */
  private prepareEndV2(m: TransactionMetadata, state: 'PrepareCommit' | 'PrepareAbort', noPartitionAdded: boolean, done: (r: EndTxnResult) => void): void {
    assert(m.producerEpoch < PRODUCER_EPOCH_MAX, `${m.transactionalId}: no epoch above ${m.producerEpoch}`);
    const nextProducerId = isEpochExhausted(m.producerEpoch) ? this.generateProducerId() : NO_PRODUCER_ID;
    const next = transit(m, {
      state, producerEpoch: m.producerEpoch + 1, lastProducerEpoch: m.producerEpoch, nextProducerId, clientTransactionVersion: 2,
      // An abort with nothing begun has no start time; the update time stands in for it (as Kafka).
      txnStartTimestampMs: noPartitionAdded ? this.nowMs : m.txnStartTimestampMs, txnLastUpdateTimestampMs: this.nowMs,
    });
    this.write(m.transactionalId, next, state);
    this.effects.markers.push(this.markerFor({ transactionalId: m.transactionalId, ...next }));
    // The client continues with what the Complete record will hold.
    const continued = nextProducerId === NO_PRODUCER_ID ? { producerId: next.producerId, producerEpoch: next.producerEpoch } : { producerId: nextProducerId, producerEpoch: 0 };
    this.respond(() => done({ errorCode: ErrorCode.NONE, ...continued }),
      (code) => done({ errorCode: txnAppendError(code), producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH }));
  }

  /**
   * The caller wrote every marker of `marker`: write CompleteCommit/CompleteAbort. `done` gets NONE
   * once that is committed, or why nothing was written (the transaction moved on, or this shard is
   * not the one that asked for the markers: NOT_COORDINATOR).
   */
  completeTransaction(nowMs: number, marker: MarkerWrite, done: (errorCode: number) => void = () => {}): TxnEffects {
    return this.run(nowMs, () => {
      const fail = (code: number): void => this.respond(() => done(code));
      const coord = this.coordinatorError();
      if (coord !== ErrorCode.NONE) return fail(coord);
      if (marker.coordinatorEpoch !== this.coordinatorEpoch) return fail(ErrorCode.NOT_COORDINATOR);
      const m = this.txns.get(marker.transactionalId);
      if (!m || m.producerId !== marker.producerId) return fail(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
      if (m.producerEpoch !== marker.producerEpoch) return fail(ErrorCode.PRODUCER_FENCED);
      if (this.pending.has(marker.transactionalId)) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
      const expected = marker.result === 'commit' ? 'PrepareCommit' : 'PrepareAbort';
      if (m.state !== expected) return fail(ErrorCode.INVALID_TXN_STATE);
      const state = marker.result === 'commit' ? 'CompleteCommit' : 'CompleteAbort';
      // TV2 after the epochs ran out: the transaction completes under the next producer id, epoch 0.
      const rotate = supportsEpochBump(m.clientTransactionVersion) && m.nextProducerId !== NO_PRODUCER_ID ? { producerId: m.nextProducerId, producerEpoch: 0 } : {};
      this.write(m.transactionalId, transit(m, { state, topicPartitions: [], txnLastUpdateTimestampMs: this.nowMs, ...rotate }), state);
      this.respond(() => done(ErrorCode.NONE), (code) => done(txnAppendError(code)));
    });
  }

  // ---- timers ----------------------------------------------------------------------------------

  private scheduleAbortScan(atMs = this.nowMs + this.config.abortTimedOutTransactionsIntervalMs): void {
    this.timers.schedule('abort-timed-out', atMs, () => this.abortTimedOutTransactions());
  }

  private scheduleExpirationScan(atMs = this.nowMs + this.config.removeExpiredTransactionalIdsIntervalMs): void {
    this.timers.schedule('expire-ids', atMs, () => this.expireTransactionalIds());
  }

  /** Kafka's abortTimedOutTransactions: an Ongoing transaction older than its timeout is aborted, its producer fenced. */
  private abortTimedOutTransactions(): void {
    let aborted = 0;
    for (const m of this.txns.values()) {
      if (this.pending.has(m.transactionalId) || m.state !== 'Ongoing') continue;
      if (m.txnStartTimestampMs + m.txnTimeoutMs >= this.nowMs) continue;
      // The rest go in the next tick, a millisecond on (a deadline of now would fire again in this one).
      if (aborted === this.config.abortsPerTickMax) return this.scheduleAbortScan(this.nowMs + 1);
      this.fenceAndAbort(m);
      aborted++;
    }
    this.scheduleAbortScan();
  }

  /** Kafka's transactionalId expiration: an idle id (no open transaction) untouched for the expiration time gets a tombstone. */
  private expireTransactionalIds(): void {
    let expired = 0;
    for (const m of this.txns.values()) {
      if (this.pending.has(m.transactionalId) || !EXPIRATION_ALLOWED.has(m.state)) continue;
      if (m.txnLastUpdateTimestampMs > this.nowMs - this.config.transactionalIdExpirationMs) continue;
      if (expired === this.config.expirationsPerTickMax) return this.scheduleExpirationScan(this.nowMs + 1);
      this.write(m.transactionalId, null, 'Dead');
      expired++;
    }
    this.scheduleExpirationScan();
  }

  // ---- DescribeTransactions / ListTransactions -------------------------------------------------

  describeTransaction(transactionalId: string): DescribeTransactionsResponseTransactionState {
    const out: DescribeTransactionsResponseTransactionState = {
      errorCode: ErrorCode.NONE, transactionalId, transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1n,
      producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH, topics: [],
    };
    const coord = this.coordinatorError();
    if (coord !== ErrorCode.NONE) return { ...out, errorCode: coord };
    if (transactionalId === '') return { ...out, errorCode: ErrorCode.INVALID_REQUEST };
    const m = this.txns.get(transactionalId);
    // An id whose tombstone is in flight is as good as gone (Kafka's Dead).
    if (!m || this.pending.get(transactionalId) === 'Dead') return { ...out, errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND };
    const topics: { topic: string; partitions: number[] }[] = [];
    for (const tp of m.topicPartitions) {
      const last = topics[topics.length - 1];
      if (last && last.topic === tp.topic) last.partitions.push(tp.partition);
      else topics.push({ topic: tp.topic, partitions: [tp.partition] });
    }
    return {
      ...out, transactionState: m.state, transactionTimeoutMs: m.txnTimeoutMs, transactionStartTimeMs: BigInt(m.txnStartTimestampMs),
      producerId: m.producerId, producerEpoch: m.producerEpoch, topics,
    };
  }

  /** This shard's part of a ListTransactions answer (the caller merges the shards' lists). */
  listTransactions(nowMs: number, f: ListTransactionsFilters): Pick<ListTransactionsResponse, 'errorCode' | 'unknownStateFilters' | 'transactionStates'> {
    const coord = this.coordinatorError();
    const states = new Set<TxnState>();
    const unknownStateFilters: string[] = [];
    for (const s of f.stateFilters) {
      if ((TXN_STATES as readonly string[]).includes(s)) states.add(s as TxnState);
      else unknownStateFilters.push(s);
    }
    if (coord !== ErrorCode.NONE) return { errorCode: coord, unknownStateFilters, transactionStates: [] };
    const producerIds = new Set(f.producerIdFilters);
    const transactionStates: ListTransactionsResponse['transactionStates'] = [];
    for (const m of this.txns.values()) {
      if (this.pending.get(m.transactionalId) === 'Dead') continue;
      if (producerIds.size > 0 && !producerIds.has(m.producerId)) continue;
      if (f.stateFilters.length > 0 && !states.has(m.state)) continue;
      if (f.durationFilterMs >= 0 && (m.txnStartTimestampMs < 0 || nowMs - m.txnStartTimestampMs <= f.durationFilterMs)) continue;
      if (f.transactionalIdPattern && !f.transactionalIdPattern.test(m.transactionalId)) continue;
      transactionStates.push({ transactionalId: m.transactionalId, producerId: m.producerId, transactionState: m.state });
    }
    return { errorCode: ErrorCode.NONE, unknownStateFilters, transactionStates };
  }
}

/** What Kafka's completeTransitionTo checks of a live write: a valid state change, epochs that never go back. */
function assertTransition(before: TransactionMetadata, after: TxnRecordValue): void {
  assert(VALID_PREVIOUS_STATES[after.state].includes(before.state),
    `${before.transactionalId}: ${before.state} → ${after.state} is not a transition`);
  if (after.producerId === before.producerId) {
    // A TV2 fence bumps twice (fenceAndAbort).
    const stepMax = after.state === 'PrepareAbort' && supportsEpochBump(after.clientTransactionVersion) ? 2 : 1;
    assert(after.producerEpoch >= before.producerEpoch && after.producerEpoch <= before.producerEpoch + stepMax,
      `${before.transactionalId}: epoch ${before.producerEpoch} → ${after.producerEpoch}`);
  } else {
    assert(after.producerEpoch === 0, `${before.transactionalId}: a new producer id starts at epoch 0`);
  }
  assert(after.txnLastUpdateTimestampMs >= before.txnLastUpdateTimestampMs, `${before.transactionalId}: update time went back`);
}
