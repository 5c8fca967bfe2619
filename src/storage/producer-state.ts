// Producer state per partition: for each producer id its epoch, the sequence ranges and offsets
// of its last five batches (so a retried batch is answered with its original offsets), and its
// open transaction. Rebuilt by replaying batches; snapshotted to <offset>.snapshot on roll so
// recovery replays only what follows the newest snapshot.
//
// Snapshot format (ours; Kafka's keeps only the last batch per producer, we keep all five so
// duplicate detection survives a restart): int16 version 1, uint32 CRC32C of the rest, int32
// producer count, then per producer: int64 id, int16 epoch, int32 coordinator epoch, int64 open
// transaction's first offset (-1), int64 last timestamp, int8 batch count, and per batch int32
// first sequence, int32 last sequence, int64 first offset, int64 last offset, int64 timestamp.
import { crc32c, readInt64, writeInt64, type RecordBatchView } from '../records/index.js';
import { StorageError } from './errors.js';

export const PRODUCER_BATCHES_RETAINED = 5;
const SNAPSHOT_VERSION = 1;

export interface BatchMetadata { firstSeq: number; lastSeq: number; firstOffset: number; lastOffset: number; timestamp: number }

export interface ProducerEntry {
  producerId: number;
  epoch: number;
  coordinatorEpoch: number;
  currentTxnFirstOffset: number;
  lastTimestamp: number;
  batches: BatchMetadata[];
}

/** A finished transaction, as the log learns it from a control batch. */
export interface CompletedTxn { producerId: number; firstOffset: number; lastOffset: number; isAborted: boolean }

export type SequenceCheck =
  | { kind: 'ok' }
  | { kind: 'duplicate'; batch: BatchMetadata }
  | { kind: 'error'; error: 'INVALID_PRODUCER_EPOCH' | 'OUT_OF_ORDER_SEQUENCE_NUMBER' | 'TRANSACTION_COORDINATOR_FENCED'; message: string };

/** What a COMMIT/ABORT marker says beyond its batch header. */
export interface MarkerInfo { type: 'COMMIT' | 'ABORT'; coordinatorEpoch: number }

function lastSeqOf(view: RecordBatchView): number {
  const seq = view.baseSequence;
  if (seq < 0) return -1;
  // Sequences wrap at int32 max, like Kafka's DefaultRecordBatch.incrementSequence.
  return (seq + view.lastOffsetDelta) % 0x80000000;
}

export class ProducerStateManager {
  readonly producers = new Map<number, ProducerEntry>();
  /** The offset up to which batches have been applied. */
  mapEndOffset = 0;

  /** Open transactions' first offsets; the smallest one bounds the last stable offset. */
  firstUnstableOffset(): number | null {
    let min: number | null = null;
    for (const p of this.producers.values()) {
      if (p.currentTxnFirstOffset >= 0 && (min === null || p.currentTxnFirstOffset < min)) min = p.currentTxnFirstOffset;
    }
    return min;
  }

  /** What a leader must decide before appending an idempotent batch. */
  checkSequence(view: RecordBatchView): SequenceCheck {
    const producerId = view.producerId;
    if (producerId < 0 || view.isControl) return { kind: 'ok' };
    const entry = this.producers.get(producerId);
    const epoch = view.producerEpoch;
    const firstSeq = view.baseSequence;
    if (!entry) return { kind: 'ok' }; // unknown (new or expired) producer: any sequence starts it
    if (epoch < entry.epoch) {
      return { kind: 'error', error: 'INVALID_PRODUCER_EPOCH', message: `epoch ${epoch} of producer ${producerId} is older than ${entry.epoch}` };
    }
    if (epoch > entry.epoch) {
      if (firstSeq === 0 || entry.batches.length === 0) return { kind: 'ok' };
      return { kind: 'error', error: 'OUT_OF_ORDER_SEQUENCE_NUMBER', message: `a new epoch ${epoch} of producer ${producerId} must start at sequence 0, not ${firstSeq}` };
    }
    const lastSeq = lastSeqOf(view);
    const dup = entry.batches.find((b) => b.firstSeq === firstSeq && b.lastSeq === lastSeq);
    if (dup) return { kind: 'duplicate', batch: dup };
    const last = entry.batches.at(-1);
    if (last && firstSeq !== (last.lastSeq + 1) % 0x80000000) {
      return { kind: 'error', error: 'OUT_OF_ORDER_SEQUENCE_NUMBER', message: `producer ${producerId} sent sequence ${firstSeq}, expected ${(last.lastSeq + 1) % 0x80000000}` };
    }
    return { kind: 'ok' };
  }

  /**
   * What a leader must decide before appending a transaction marker (Kafka's checkProducerEpoch and
   * coordinator-epoch check): a marker of an older producer epoch, or from a coordinator older than
   * the one whose marker this producer last got, is refused — a zombie coordinator after a move.
   */
  checkMarker(view: RecordBatchView, marker: MarkerInfo): SequenceCheck {
    const entry = this.producers.get(view.producerId);
    if (!entry) return { kind: 'ok' };
    if (view.producerEpoch < entry.epoch) {
      return { kind: 'error', error: 'INVALID_PRODUCER_EPOCH', message: `marker epoch ${view.producerEpoch} of producer ${view.producerId} is older than ${entry.epoch}` };
    }
    if (marker.coordinatorEpoch < entry.coordinatorEpoch) {
      return { kind: 'error', error: 'TRANSACTION_COORDINATOR_FENCED', message: `marker from coordinator epoch ${marker.coordinatorEpoch}, producer ${view.producerId} already had one from ${entry.coordinatorEpoch}` };
    }
    return { kind: 'ok' };
  }

  /**
   * Applies one batch already in the log (or being appended). Returns the transaction it
   * completes when it is a COMMIT or ABORT marker; `marker` is what the caller parsed from the
   * control record (null for other control batches).
   */
  update(view: RecordBatchView, marker?: MarkerInfo | null): CompletedTxn | null {
    const producerId = view.producerId;
    const lastOffset = view.lastOffset;
    this.mapEndOffset = Math.max(this.mapEndOffset, lastOffset + 1);
    if (producerId < 0) return null;
    let entry = this.producers.get(producerId);
    const epoch = view.producerEpoch;
    if (!entry) {
      entry = { producerId, epoch, coordinatorEpoch: -1, currentTxnFirstOffset: -1, lastTimestamp: -1, batches: [] };
      this.producers.set(producerId, entry);
    }
    if (epoch > entry.epoch) {
      entry.epoch = epoch;
      entry.batches = [];
    }
    entry.lastTimestamp = Math.max(entry.lastTimestamp, view.maxTimestamp);
    if (view.isControl) {
      if (!marker) return null;
      entry.coordinatorEpoch = Math.max(entry.coordinatorEpoch, marker.coordinatorEpoch);
      const first = entry.currentTxnFirstOffset;
      entry.currentTxnFirstOffset = -1;
      if (first < 0) return null;
      return { producerId, firstOffset: first, lastOffset, isAborted: marker.type === 'ABORT' };
    }
    if (view.baseSequence >= 0) {
      entry.batches.push({ firstSeq: view.baseSequence, lastSeq: lastSeqOf(view), firstOffset: view.baseOffset, lastOffset, timestamp: view.maxTimestamp });
      if (entry.batches.length > PRODUCER_BATCHES_RETAINED) entry.batches.shift();
    }
    if (view.isTransactional && entry.currentTxnFirstOffset < 0) entry.currentTxnFirstOffset = view.baseOffset;
    return null;
  }

  /** After the log was truncated to `offset`: forget everything at or past it. */
  truncateTo(offset: number): void {
    for (const [id, p] of this.producers) {
      p.batches = p.batches.filter((b) => b.lastOffset < offset);
      if (p.currentTxnFirstOffset >= offset) p.currentTxnFirstOffset = -1;
      if (p.batches.length === 0 && p.currentTxnFirstOffset < 0) this.producers.delete(id);
    }
    this.mapEndOffset = Math.min(this.mapEndOffset, offset);
  }

  /** producer.id.expiration.ms: producers idle that long with no open transaction are dropped. */
  removeExpired(nowMs: number, expirationMs: number): void {
    for (const [id, p] of this.producers) {
      if (p.currentTxnFirstOffset < 0 && p.lastTimestamp >= 0 && nowMs - p.lastTimestamp > expirationMs) this.producers.delete(id);
    }
  }

  clear(): void { this.producers.clear(); this.mapEndOffset = 0; }

  encodeSnapshot(): Buffer {
    let size = 10;
    for (const p of this.producers.values()) size += 8 + 2 + 4 + 8 + 8 + 1 + p.batches.length * 32;
    const buf = Buffer.alloc(size);
    buf.writeInt16BE(SNAPSHOT_VERSION, 0);
    buf.writeInt32BE(this.producers.size, 6);
    let at = 10;
    for (const p of this.producers.values()) {
      writeInt64(buf, at, p.producerId, 'producerId'); at += 8;
      buf.writeInt16BE(p.epoch, at); at += 2;
      buf.writeInt32BE(p.coordinatorEpoch, at); at += 4;
      writeInt64(buf, at, p.currentTxnFirstOffset, 'txnFirstOffset'); at += 8;
      writeInt64(buf, at, p.lastTimestamp, 'lastTimestamp'); at += 8;
      buf.writeInt8(p.batches.length, at); at += 1;
      for (const b of p.batches) {
        buf.writeInt32BE(b.firstSeq, at); buf.writeInt32BE(b.lastSeq, at + 4);
        writeInt64(buf, at + 8, b.firstOffset, 'firstOffset'); writeInt64(buf, at + 16, b.lastOffset, 'lastOffset');
        writeInt64(buf, at + 24, b.timestamp, 'timestamp');
        at += 32;
      }
    }
    buf.writeUInt32BE(crc32c(buf.subarray(6)), 2);
    return buf;
  }

  /** Replaces the state with a snapshot taken at `offset`; throws CORRUPT_MESSAGE on a bad file. */
  loadSnapshot(buf: Buffer, offset: number): void {
    const bad = (why: string): never => { throw new StorageError('CORRUPT_MESSAGE', `producer snapshot at ${offset}: ${why}`); };
    if (buf.length < 10 || buf.readInt16BE(0) !== SNAPSHOT_VERSION) bad('unknown version');
    if (buf.readUInt32BE(2) !== crc32c(buf.subarray(6))) bad('CRC mismatch');
    const count = buf.readInt32BE(6);
    const producers = new Map<number, ProducerEntry>();
    let at = 10;
    for (let i = 0; i < count; i++) {
      if (at + 31 > buf.length) bad('truncated');
      const p: ProducerEntry = {
        producerId: readInt64(buf, at, 'producerId'), epoch: buf.readInt16BE(at + 8), coordinatorEpoch: buf.readInt32BE(at + 10),
        currentTxnFirstOffset: readInt64(buf, at + 14, 'txn'), lastTimestamp: readInt64(buf, at + 22, 'ts'), batches: [],
      };
      const n = buf.readInt8(at + 30);
      at += 31;
      if (n < 0 || n > PRODUCER_BATCHES_RETAINED || at + n * 32 > buf.length) bad('bad batch count');
      for (let j = 0; j < n; j++, at += 32) {
        p.batches.push({ firstSeq: buf.readInt32BE(at), lastSeq: buf.readInt32BE(at + 4), firstOffset: readInt64(buf, at + 8, 'o'), lastOffset: readInt64(buf, at + 16, 'o'), timestamp: readInt64(buf, at + 24, 't') });
      }
      producers.set(p.producerId, p);
    }
    if (at !== buf.length) bad('trailing bytes');
    this.producers.clear();
    for (const [k, v] of producers) this.producers.set(k, v);
    this.mapEndOffset = offset;
  }
}
