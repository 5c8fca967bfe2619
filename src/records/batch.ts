// RecordBatch v2 header: a zero-copy view over the 61-byte header in place, the batch walker and
// the broker-side validation of one batch. Layout (Kafka's DefaultRecordBatch):
//
//   0 baseOffset int64 | 8 batchLength int32 | 12 partitionLeaderEpoch int32 | 16 magic int8
//   17 crc uint32 | 21 attributes int16 | 23 lastOffsetDelta int32 | 27 baseTimestamp int64
//   35 maxTimestamp int64 | 43 producerId int64 | 51 producerEpoch int16 | 53 baseSequence int32
//   57 recordCount int32 | 61 records...
//
// The CRC covers attributes..end, so baseOffset, batchLength and partitionLeaderEpoch can be
// rewritten by the broker without recomputing it.
import { limits } from '../util/index.js';
import { crc32c, crc32cCombine } from './crc32c.js';
import { RecordsError } from './errors.js';

export const RECORD_BATCH_HEADER_BYTES = 61;
/** Bytes before batchLength counts: baseOffset + batchLength itself (Kafka's LOG_OVERHEAD). */
export const LOG_OVERHEAD_BYTES = 12;
/** Smallest legal batchLength: the header minus LOG_OVERHEAD. */
export const BATCH_LENGTH_MIN = RECORD_BATCH_HEADER_BYTES - LOG_OVERHEAD_BYTES;
/** Bytes up to and including magic: enough to decide how to read the rest. */
const HEADER_BYTES_UP_TO_MAGIC = 17;

/**
 * Byte offsets of the header's fields from the start of a batch (exported from the door as
 * BatchHeaderAt, for walkers that read a field or two of many batches without a view each).
 */
export const enum Off {
  BaseOffset = 0,
  BatchLength = 8,
  PartitionLeaderEpoch = 12,
  Magic = 16,
  Crc = 17,
  Attributes = 21,
  LastOffsetDelta = 23,
  BaseTimestamp = 27,
  MaxTimestamp = 35,
  ProducerId = 43,
  ProducerEpoch = 51,
  BaseSequence = 53,
  RecordCount = 57,
}

export enum Compression { None = 0, Gzip = 1, Snappy = 2, Lz4 = 3, Zstd = 4 }
export enum TimestampType { CreateTime = 0, LogAppendTime = 1 }

export const ATTR_COMPRESSION_MASK = 0x07;
export const ATTR_TIMESTAMP_TYPE = 0x08;
export const ATTR_TRANSACTIONAL = 0x10;
export const ATTR_CONTROL = 0x20;
export const ATTR_DELETE_HORIZON = 0x40;

const TWO_32 = 0x1_0000_0000;

/** Reads an int64 as a number; throws CORRUPT_MESSAGE when it is not a safe integer. */
export function readInt64(buf: Buffer, at: number, what: string): number {
  const hi = buf.readInt32BE(at);
  const lo = buf.readUInt32BE(at + 4);
  const v = hi * TWO_32 + lo;
  if (!Number.isSafeInteger(v)) {
    throw new RecordsError('CORRUPT_MESSAGE', `${what} ${buf.readBigInt64BE(at)} is outside the safe-integer range`);
  }
  return v;
}

/** Writes a safe integer (negative allowed) as an int64. */
export function writeInt64(buf: Buffer, at: number, v: number, what: string): void {
  if (!Number.isSafeInteger(v)) throw new RangeError(`${what} ${v} is not a safe integer`);
  const hi = Math.floor(v / TWO_32);
  buf.writeInt32BE(hi, at);
  buf.writeUInt32BE(v - hi * TWO_32, at + 4);
}

/** Zero-copy view over one RecordBatch v2 at buf[offset..]. */
export class RecordBatchView {
  constructor(readonly buf: Buffer, readonly offset = 0) {
    if (offset < 0 || buf.length - offset < RECORD_BATCH_HEADER_BYTES) {
      throw new RecordsError('CORRUPT_MESSAGE',
        `a record batch header needs ${RECORD_BATCH_HEADER_BYTES} bytes, ${Math.max(0, buf.length - offset)} remain`);
    }
  }

  get baseOffset(): number { return readInt64(this.buf, this.offset + Off.BaseOffset, 'baseOffset'); }
  set baseOffset(v: number) { writeInt64(this.buf, this.offset + Off.BaseOffset, v, 'baseOffset'); }
  get batchLength(): number { return this.buf.readInt32BE(this.offset + Off.BatchLength); }
  get sizeInBytes(): number { return this.batchLength + LOG_OVERHEAD_BYTES; }
  get partitionLeaderEpoch(): number { return this.buf.readInt32BE(this.offset + Off.PartitionLeaderEpoch); }
  set partitionLeaderEpoch(v: number) { this.buf.writeInt32BE(v, this.offset + Off.PartitionLeaderEpoch); }
  get magic(): number { return this.buf.readInt8(this.offset + Off.Magic); }
  get crc(): number { return this.buf.readUInt32BE(this.offset + Off.Crc); }
  get attributes(): number { return this.buf.readInt16BE(this.offset + Off.Attributes); }
  get compression(): Compression { return (this.attributes & ATTR_COMPRESSION_MASK) as Compression; }
  get timestampType(): TimestampType {
    return this.attributes & ATTR_TIMESTAMP_TYPE ? TimestampType.LogAppendTime : TimestampType.CreateTime;
  }
  get isTransactional(): boolean { return (this.attributes & ATTR_TRANSACTIONAL) !== 0; }
  get isControl(): boolean { return (this.attributes & ATTR_CONTROL) !== 0; }
  get hasDeleteHorizon(): boolean { return (this.attributes & ATTR_DELETE_HORIZON) !== 0; }
  get lastOffsetDelta(): number { return this.buf.readInt32BE(this.offset + Off.LastOffsetDelta); }
  get lastOffset(): number { return this.baseOffset + this.lastOffsetDelta; }
  get baseTimestamp(): number { return readInt64(this.buf, this.offset + Off.BaseTimestamp, 'baseTimestamp'); }
  get maxTimestamp(): number { return readInt64(this.buf, this.offset + Off.MaxTimestamp, 'maxTimestamp'); }
  /** Writes maxTimestamp in place and recomputes the CRC (maxTimestamp is inside the CRC's range). */
  set maxTimestamp(v: number) {
    writeInt64(this.buf, this.offset + Off.MaxTimestamp, v, 'maxTimestamp');
    this.updateCrc();
  }
  get producerId(): number { return readInt64(this.buf, this.offset + Off.ProducerId, 'producerId'); }
  get producerEpoch(): number { return this.buf.readInt16BE(this.offset + Off.ProducerEpoch); }
  get baseSequence(): number { return this.buf.readInt32BE(this.offset + Off.BaseSequence); }
  get recordCount(): number { return this.buf.readInt32BE(this.offset + Off.RecordCount); }

  /** An idempotent producer's stamp on a batch it reuses: id, epoch and first sequence, then the CRC. */
  /**
   * Stamps the producer id, epoch and base sequence and updates the CRC. With `records` (the CRC32C
   * of the bytes after the header and crc32cZerosOperator of their length), the CRC is combined
   * from the header's bytes and that, without reading the records again.
   */
  setProducer(producerId: number, producerEpoch: number, baseSequence: number, records?: { crc: number; zeros: Uint32Array }): void {
    writeInt64(this.buf, this.offset + Off.ProducerId, producerId, 'producerId');
    this.buf.writeInt16BE(producerEpoch, this.offset + Off.ProducerEpoch);
    this.buf.writeInt32BE(baseSequence, this.offset + Off.BaseSequence);
    if (!records) {
      this.updateCrc();
      return;
    }
    const end = this.offset + LOG_OVERHEAD_BYTES + this.batchLength;
    const headerCrc = crc32c(this.buf.subarray(this.offset + Off.Attributes, this.offset + RECORD_BATCH_HEADER_BYTES));
    this.buf.writeUInt32BE(crc32cCombine(headerCrc, records.crc, end - this.offset - RECORD_BATCH_HEADER_BYTES, records.zeros), this.offset + Off.Crc);
  }

  /**
   * A copy of this batch as another producer sends it (a mirror passing a batch on whole): offsets
   * from 0, no leader epoch, that producer's id, epoch, first sequence and transactional bit, and a
   * fresh CRC. The records keep their bytes (compressed or not), deltas and timestamps.
   */
  copyForProducer(p: { producerId: number; producerEpoch: number; baseSequence: number; isTransactional: boolean }): RecordBatchView {
    const copy = new RecordBatchView(Buffer.from(this.bytes()));
    copy.baseOffset = 0;
    copy.partitionLeaderEpoch = -1;
    const attributes = copy.attributes & ~ATTR_TRANSACTIONAL;
    copy.buf.writeInt16BE(p.isTransactional ? attributes | ATTR_TRANSACTIONAL : attributes, Off.Attributes);
    copy.setProducer(p.producerId, p.producerEpoch, p.baseSequence);
    return copy;
  }

  /**
   * What a broker does for a topic with message.timestamp.type=LogAppendTime: set the timestamp-type
   * bit, set maxTimestamp to the append time, and recompute the CRC. Records keep their own deltas;
   * readers take every record's timestamp from maxTimestamp for such batches.
   */
  setLogAppendTime(ts: number): void {
    const at = this.offset + Off.Attributes;
    this.buf.writeInt16BE(this.buf.readInt16BE(at) | ATTR_TIMESTAMP_TYPE, at);
    this.maxTimestamp = ts;
  }

  /** CRC32C over attributes..end of batch; throws CORRUPT_MESSAGE when the batch overruns buf. */
  computeCrc(): number {
    const end = this.offset + this.sizeInBytes;
    if (this.batchLength < BATCH_LENGTH_MIN || end > this.buf.length) {
      throw new RecordsError('CORRUPT_MESSAGE', `batchLength ${this.batchLength} does not fit the ${this.buf.length - this.offset} bytes available`);
    }
    return crc32c(this.buf.subarray(this.offset + Off.Attributes, end));
  }
  verifyCrc(): boolean { return this.computeCrc() === this.crc; }
  updateCrc(): void { this.buf.writeUInt32BE(this.computeCrc(), this.offset + Off.Crc); }

  /** The records section after the header, as stored (compressed or not; a subarray, no copy). */
  body(): Buffer { return this.bytes().subarray(RECORD_BATCH_HEADER_BYTES); }

  /** The batch's own bytes (a subarray, no copy). */
  bytes(): Buffer {
    const end = this.offset + this.sizeInBytes;
    if (this.batchLength < BATCH_LENGTH_MIN || end > this.buf.length) {
      throw new RecordsError('CORRUPT_MESSAGE', `batchLength ${this.batchLength} does not fit the ${this.buf.length - this.offset} bytes available`);
    }
    return this.buf.subarray(this.offset, end);
  }
}

/**
 * The RecordBatch v2 whose header starts at buf[at..], or null when the bytes there are not one:
 * fewer than a header's bytes, or another magic. A legacy message set (magic 0/1) keeps other
 * fields at these offsets (its timestamp, key length or key where a batch has its attributes), so
 * code that reads header fields of bytes a client sent, before validation, reads them through this
 * and never at BatchHeaderAt offsets of its own.
 */
export function recordBatchAt(buf: Buffer, at = 0): RecordBatchView | null {
  if (at < 0 || buf.length - at < RECORD_BATCH_HEADER_BYTES || buf.readInt8(at + Off.Magic) !== 2) return null;
  return new RecordBatchView(buf, at);
}

/** A batch's producer stamp, as the wire has it (producer id -1: none). */
export interface BatchProducer { producerId: bigint; producerEpoch: number; isTransactional: boolean }

/**
 * The producer stamp of the first batch of produced bytes, or null when they do not start with a
 * RecordBatch v2 (a legacy message set has no producer; validation answers malformed bytes). The
 * id is read as a bigint, so an out-of-range one is left for validation to refuse.
 */
export function firstBatchProducer(records: Buffer): BatchProducer | null {
  const batch = recordBatchAt(records);
  if (batch === null) return null;
  return { producerId: records.readBigInt64BE(Off.ProducerId), producerEpoch: batch.producerEpoch, isTransactional: batch.isTransactional };
}

function checkMagic(magic: number, at: number): void {
  if (magic === 2) return;
  if (magic === 0 || magic === 1) {
    throw new RecordsError('UNSUPPORTED_MAGIC', `message format v${magic} at byte ${at} is not supported; only RecordBatch v2`);
  }
  throw new RecordsError('CORRUPT_MESSAGE', `invalid magic ${magic} at byte ${at}`);
}

/**
 * Walks concatenated batches in buf. A trailing partial batch stops the walk when
 * `allowPartialTail` (fetch responses may end mid-batch) and throws CORRUPT_MESSAGE otherwise.
 */
export function* iterateBatches(buf: Buffer, opts: { allowPartialTail?: boolean } = {}): Generator<RecordBatchView> {
  let at = 0;
  while (at < buf.length) {
    const remaining = buf.length - at;
    if (remaining < HEADER_BYTES_UP_TO_MAGIC) {
      if (opts.allowPartialTail) return;
      throw new RecordsError('CORRUPT_MESSAGE', `${remaining} trailing bytes at ${at} are not a record batch`);
    }
    // Magic first: a legacy message (magic 0/1) shorter than a v2 header is UNSUPPORTED_MAGIC too.
    checkMagic(buf.readInt8(at + Off.Magic), at);
    const batchLength = buf.readInt32BE(at + Off.BatchLength);
    if (batchLength < BATCH_LENGTH_MIN) {
      throw new RecordsError('CORRUPT_MESSAGE', `batchLength ${batchLength} at byte ${at} is below the minimum ${BATCH_LENGTH_MIN}`);
    }
    const size = batchLength + LOG_OVERHEAD_BYTES;
    if (size > remaining) {
      if (opts.allowPartialTail) return;
      throw new RecordsError('CORRUPT_MESSAGE', `batch at byte ${at} claims ${size} bytes but only ${remaining} remain`);
    }
    yield new RecordBatchView(buf, at);
    at += size;
  }
}

export interface ValidateOptions {
  /**
   * Batches from a compacted log (or a follower copying one) may hold fewer records than their
   * offset range; produce input may not.
   */
  compacted?: boolean;
  /**
   * Input from a producer (not a follower or coordinator): Kafka refuses control batches from
   * clients and requires baseOffset 0, since the broker assigns offsets.
   */
  fromClient?: boolean;
}

/**
 * Full validation of one batch as a broker must do on produce, without decoding records: magic 2,
 * batchLength, CRC, compression codec, record count against the offset range. Throws RecordsError.
 */
export function validateBatch(view: RecordBatchView, opts: ValidateOptions = {}): void {
  checkMagic(view.magic, view.offset);
  const batchLength = view.batchLength;
  if (batchLength < BATCH_LENGTH_MIN) {
    throw new RecordsError('CORRUPT_MESSAGE', `batchLength ${batchLength} is below the minimum ${BATCH_LENGTH_MIN}`);
  }
  if (view.offset + batchLength + LOG_OVERHEAD_BYTES > view.buf.length) {
    throw new RecordsError('CORRUPT_MESSAGE', `batchLength ${batchLength} overruns the ${view.buf.length - view.offset} bytes available`);
  }
  const crc = view.computeCrc();
  if (crc !== view.crc) {
    throw new RecordsError('CORRUPT_MESSAGE', `record batch CRC mismatch: stored 0x${view.crc.toString(16)}, computed 0x${crc.toString(16)}`);
  }
  const codec = view.attributes & ATTR_COMPRESSION_MASK;
  if (codec > Compression.Zstd) {
    throw new RecordsError('UNSUPPORTED_COMPRESSION_TYPE', `unknown compression codec ${codec}`);
  }
  const count = view.recordCount;
  if (count < 0 || count > limits.recordBatchRecordsMax) {
    throw new RecordsError('INVALID_RECORD', `record count ${count} is outside 0..${limits.recordBatchRecordsMax}`);
  }
  const delta = view.lastOffsetDelta;
  if (opts.compacted ? delta < count - 1 : delta !== count - 1) {
    throw new RecordsError('INVALID_RECORD', `lastOffsetDelta ${delta} is inconsistent with record count ${count}`);
  }
  if (count === 0 && !opts.compacted) {
    throw new RecordsError('INVALID_RECORD', 'a produced batch must hold at least one record');
  }
  if (count > 0 && codec === Compression.None && batchLength - BATCH_LENGTH_MIN < count * MIN_RECORD_BYTES) {
    throw new RecordsError('CORRUPT_MESSAGE', `${count} records cannot fit in ${batchLength - BATCH_LENGTH_MIN} bytes`);
  }
  if (opts.fromClient && view.isControl) {
    throw new RecordsError('INVALID_RECORD', 'clients may not write control batches');
  }
  if (opts.fromClient && view.baseOffset !== 0) {
    throw new RecordsError('INVALID_RECORD', `a produced batch must have baseOffset 0, not ${view.baseOffset}`);
  }
  // Reading these checks they are safe integers (they throw CORRUPT_MESSAGE otherwise).
  void view.baseOffset; void view.baseTimestamp; void view.maxTimestamp; void view.producerId;
}

/** The smallest possible encoded record: length, attributes, 3 varint deltas and lengths, header count. */
export const MIN_RECORD_BYTES = 7;
