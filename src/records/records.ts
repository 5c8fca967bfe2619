// Lazy, bounds-checked iteration over the records of one batch body. The core is `RecordCursor`,
// a reusable cursor that parses one record per `next()` without allocating: key and value are
// positions into the body until asked for. `forEachRecord` and the `iterateRecords` generator sit on
// top of it. Every length is checked against the bytes of its record before use, so a malformed body
// gives RecordsError('CORRUPT_MESSAGE'), never an out-of-bounds read or a large allocation.
import { RecordsError } from './errors.js';
import { RecordBatchView, TimestampType, MIN_RECORD_BYTES } from './batch.js';
import { readVarlongTail } from './varint.js';

export interface RecordHeader { key: string; value: Buffer | null }

export interface Record {
  offsetDelta: number;
  timestampDelta: number;
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
  attributes: number;
}

/** Shared by every record without headers, so the common case allocates no array. Frozen. */
const NO_HEADERS: RecordHeader[] = Object.freeze([]) as unknown as RecordHeader[];

function corrupt(message: string): never {
  throw new RecordsError('CORRUPT_MESSAGE', message);
}

export class RecordCursor {
  /** Records parsed so far. */
  index = 0;
  attributes = 0;
  timestampDelta = 0;
  offsetDelta = 0;
  offset = 0;
  timestamp = 0;
  /** Position of the key in `body`, and its length (-1 for a null key). */
  keyStart = 0;
  keyLength = -1;
  valueStart = 0;
  valueLength = -1;
  headersStart = 0;
  headerCount = 0;

  private pos = 0;
  private limit: number;
  private readonly count: number;
  private readonly baseOffset: number;
  private readonly baseTimestamp: number;
  private readonly logAppendTime: number;
  private readonly tail = { pos: 0 };

  constructor(view: RecordBatchView, readonly body: Buffer) {
    this.count = view.recordCount;
    if (this.count < 0) corrupt(`negative record count ${this.count}`);
    if (this.count > 0 && body.length < this.count * MIN_RECORD_BYTES) {
      corrupt(`${this.count} records cannot fit in a ${body.length}-byte body`);
    }
    this.baseOffset = view.baseOffset;
    this.baseTimestamp = view.baseTimestamp;
    this.logAppendTime = view.timestampType === TimestampType.LogAppendTime ? view.maxTimestamp : NaN;
    this.limit = body.length;
  }

  private varint(): number {
    const buf = this.body;
    let pos = this.pos;
    const limit = this.limit;
    let raw = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (pos >= limit) corrupt(`truncated varint in record ${this.index}`);
      const b = buf[pos++]!;
      raw |= (b & 0x7f) << shift;
      if (b < 0x80) {
        this.pos = pos;
        return (raw >>> 1) ^ -(raw & 1);
      }
    }
    return corrupt(`varint longer than 5 bytes in record ${this.index}`);
  }

  private varlong(): number {
    const buf = this.body;
    let pos = this.pos;
    const limit = this.limit;
    let raw = 0;
    for (let shift = 0; shift < 28; shift += 7) {
      if (pos >= limit) corrupt(`truncated varlong in record ${this.index}`);
      const b = buf[pos++]!;
      raw |= (b & 0x7f) << shift;
      if (b < 0x80) {
        this.pos = pos;
        return (raw >>> 1) ^ -(raw & 1);
      }
    }
    const v = readVarlongTail(buf, pos, limit, raw >>> 0, this.tail);
    if (Number.isNaN(v)) corrupt(`malformed or out-of-range varlong in record ${this.index}`);
    this.pos = this.tail.pos;
    return v;
  }

  /** A length field: -1 (null) when `nullable`, else 0..bytes left in the record. */
  private length(nullable: boolean, what: string): number {
    const n = this.varint();
    if (n < (nullable ? -1 : 0) || n > this.limit - this.pos) {
      corrupt(`invalid ${what} length ${n} in record ${this.index} (${this.limit - this.pos} bytes left)`);
    }
    return n;
  }

  /**
   * Parses the next record into this cursor; false once `recordCount` records are read and the body
   * is exactly consumed. Throws CORRUPT_MESSAGE otherwise.
   */
  next(): boolean {
    if (this.index === this.count) {
      if (this.pos !== this.body.length) {
        corrupt(`${this.body.length - this.pos} bytes remain after the batch's ${this.count} records`);
      }
      return false;
    }
    this.limit = this.body.length;
    if (this.pos >= this.limit) corrupt(`body ends after ${this.index} of ${this.count} records`);
    const size = this.varint();
    if (size < MIN_RECORD_BYTES - 1 || size > this.limit - this.pos) {
      corrupt(`invalid record size ${size} for record ${this.index} (${this.limit - this.pos} bytes left)`);
    }
    const end = this.pos + size;
    this.limit = end;
    this.attributes = this.body[this.pos++]!;
    this.timestampDelta = this.varlong();
    this.offsetDelta = this.varint();
    const keyLength = this.length(true, 'key');
    this.keyStart = this.pos;
    this.keyLength = keyLength;
    if (keyLength > 0) this.pos += keyLength;
    const valueLength = this.length(true, 'value');
    this.valueStart = this.pos;
    this.valueLength = valueLength;
    if (valueLength > 0) this.pos += valueLength;
    const headerCount = this.varint();
    if (headerCount < 0 || headerCount * 2 > end - this.pos) corrupt(`invalid header count ${headerCount} in record ${this.index}`);
    this.headerCount = headerCount;
    this.headersStart = this.pos;
    for (let i = 0; i < headerCount; i++) {
      const k = this.length(false, 'header key');
      this.pos += k;
      const v = this.length(true, 'header value');
      if (v > 0) this.pos += v;
    }
    if (this.pos !== end) corrupt(`record ${this.index} declares ${size} bytes but its fields use ${size - (end - this.pos)}`);
    this.offset = this.baseOffset + this.offsetDelta;
    const ts = Number.isNaN(this.logAppendTime) ? this.baseTimestamp + this.timestampDelta : this.logAppendTime;
    if (!Number.isSafeInteger(ts)) corrupt(`timestamp of record ${this.index} is outside the safe-integer range`);
    this.timestamp = ts;
    this.index++;
    return true;
  }

  /** The current key as a subarray of the body (no copy), or null. */
  key(): Buffer | null {
    return this.keyLength < 0 ? null : this.body.subarray(this.keyStart, this.keyStart + this.keyLength);
  }
  value(): Buffer | null {
    return this.valueLength < 0 ? null : this.body.subarray(this.valueStart, this.valueStart + this.valueLength);
  }
  /** The current headers; keys are decoded as UTF-8, values are subarrays. Already bounds-checked. */
  headers(): RecordHeader[] {
    if (this.headerCount === 0) return NO_HEADERS;
    const saved = this.pos;
    this.pos = this.headersStart;
    const out: RecordHeader[] = new Array(this.headerCount);
    for (let i = 0; i < this.headerCount; i++) {
      const k = this.varint();
      const key = this.body.toString('utf8', this.pos, this.pos + k);
      this.pos += k;
      const v = this.varint();
      out[i] = { key, value: v < 0 ? null : this.body.subarray(this.pos, this.pos + v) };
      if (v > 0) this.pos += v;
    }
    this.pos = saved;
    return out;
  }
  /** The current record as a plain object. Records without headers share one frozen empty array. */
  toRecord(): Record {
    return {
      offsetDelta: this.offsetDelta,
      timestampDelta: this.timestampDelta,
      offset: this.offset,
      timestamp: this.timestamp,
      key: this.key(),
      value: this.value(),
      headers: this.headers(),
      attributes: this.attributes,
    };
  }
}

/** Calls `fn` with the same cursor once per record: the allocation-free path. */
export function forEachRecord(view: RecordBatchView, body: Buffer, fn: (cursor: RecordCursor) => void): void {
  const cursor = new RecordCursor(view, body);
  while (cursor.next()) fn(cursor);
}

/** Lazily yields each record of a (decompressed) body. Key and value are subarrays of `body`. */
export function* iterateRecords(view: RecordBatchView, body: Buffer): Generator<Record> {
  const cursor = new RecordCursor(view, body);
  while (cursor.next()) yield cursor.toRecord();
}
