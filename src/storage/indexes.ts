// Sparse segment indexes, kept in memory and written to their files on flush (Kafka memory-maps
// them; here the Buffer plays the mapping). Entries are appended in increasing order; a lookup
// is a binary search for the last entry at or below the target.
//   .index      (offset - baseOffset: int32, file position: int32), 8 bytes an entry
//   .timeindex  (timestamp: int64, offset - baseOffset: int32), 12 bytes an entry
//   .txnindex   aborted transactions: (version int16, producerId int64, firstOffset int64,
//               lastOffset int64, lastStableOffset int64), 34 bytes an entry
// Whatever the file held past the flushed entries is rebuilt by recovery from the log itself.
import { assert } from '../util/index.js';
import { readInt64, writeInt64 } from '../records/index.js';
import type { FileCache } from './fs.js';

abstract class SparseIndex {
  protected buf: Buffer;
  entries = 0;
  private flushedEntries = 0;
  readonly maxEntries: number;
  /**
   * The file may exist. A new partition's first segment (LogSegment.planned) has no index files
   * until they have an entry to write: creating files was most of the cost of creating a
   * partition, and a missing index reads as empty.
   */
  private onDisk: boolean;
  get fileMayExist(): boolean { return this.onDisk; }

  constructor(readonly path: string, readonly baseOffset: number, readonly entryBytes: number, maxIndexBytes: number, initial?: Buffer, onDisk = true) {
    this.onDisk = onDisk;
    this.maxEntries = Math.max(1, Math.floor(maxIndexBytes / entryBytes));
    const count = initial ? Math.floor(initial.length / entryBytes) : 0;
    this.buf = Buffer.alloc(Math.min(this.maxEntries, Math.max(64, count * 2)) * entryBytes);
    if (initial && count > 0) {
      initial.copy(this.buf, 0, 0, count * entryBytes);
      this.entries = count;
      this.flushedEntries = count;
    }
  }

  get isFull(): boolean { return this.entries >= this.maxEntries; }
  get sizeInBytes(): number { return this.entries * this.entryBytes; }

  protected slot(): number {
    assert(!this.isFull, `index ${this.path} is full`);
    const at = this.entries * this.entryBytes;
    if (at + this.entryBytes > this.buf.length) {
      const next = Buffer.alloc(Math.min(this.maxEntries * this.entryBytes, this.buf.length * 2));
      this.buf.copy(next);
      this.buf = next;
    }
    this.entries++;
    return at;
  }

  /** Index of the last entry whose key is <= target, or -1. */
  protected floor(target: number, keyAt: (i: number) => number): number {
    let lo = 0;
    let hi = this.entries - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (keyAt(mid) <= target) { found = mid; lo = mid + 1; } else hi = mid - 1;
    }
    return found;
  }

  /** Drops entries from `i` on. */
  protected cut(i: number): void {
    this.entries = Math.min(this.entries, Math.max(0, i));
    this.flushedEntries = Math.min(this.flushedEntries, this.entries);
  }

  reset(): void { this.cut(0); }

  /** Writes unflushed entries; `trim` makes the file exactly the entries (on roll and close). */
  flush(files: FileCache, sync: boolean): void {
    if (!this.onDisk && this.entries === 0) return;
    const h = files.get(this.path);
    this.onDisk = true;
    if (this.entries > this.flushedEntries) {
      h.write(this.buf.subarray(this.flushedEntries * this.entryBytes, this.entries * this.entryBytes), this.flushedEntries * this.entryBytes);
      this.flushedEntries = this.entries;
    }
    if (h.size() !== this.sizeInBytes) h.truncate(this.sizeInBytes);
    if (sync) h.sync();
  }
}

export class OffsetIndex extends SparseIndex {
  constructor(path: string, baseOffset: number, maxIndexBytes: number, initial?: Buffer, onDisk = true) {
    super(path, baseOffset, 8, maxIndexBytes, initial, onDisk);
  }
  offsetAt(i: number): number { return this.baseOffset + this.buf.readInt32BE(i * 8); }
  positionAt(i: number): number { return this.buf.readInt32BE(i * 8 + 4); }
  get lastOffset(): number { return this.entries === 0 ? this.baseOffset : this.offsetAt(this.entries - 1); }

  append(offset: number, position: number): void {
    assert(this.entries === 0 || offset > this.lastOffset, `offset index entry ${offset} must follow ${this.lastOffset}`);
    const at = this.slot();
    this.buf.writeInt32BE(offset - this.baseOffset, at);
    this.buf.writeInt32BE(position, at + 4);
  }

  /** Position of the last indexed batch whose last offset is <= target (0 when none). */
  lookup(target: number): { offset: number; position: number } {
    const i = this.floor(target, (j) => this.offsetAt(j));
    return i < 0 ? { offset: this.baseOffset, position: 0 } : { offset: this.offsetAt(i), position: this.positionAt(i) };
  }

  truncateTo(offset: number): void { this.cut(this.floor(offset - 1, (j) => this.offsetAt(j)) + 1); }

  /** Entries strictly increasing and inside the segment: what recovery checks on a clean open. */
  isConsistent(logBytes: number): boolean {
    for (let i = 0; i < this.entries; i++) {
      if (this.positionAt(i) < 0 || this.positionAt(i) >= Math.max(logBytes, 1)) return false;
      if (i > 0 && (this.offsetAt(i) <= this.offsetAt(i - 1) || this.positionAt(i) <= this.positionAt(i - 1))) return false;
    }
    return true;
  }
}

export class TimeIndex extends SparseIndex {
  constructor(path: string, baseOffset: number, maxIndexBytes: number, initial?: Buffer, onDisk = true) {
    super(path, baseOffset, 12, maxIndexBytes, initial, onDisk);
  }
  timestampAt(i: number): number { return readInt64(this.buf, i * 12, 'timestamp'); }
  offsetAt(i: number): number { return this.baseOffset + this.buf.readInt32BE(i * 12 + 8); }
  get lastTimestamp(): number { return this.entries === 0 ? -1 : this.timestampAt(this.entries - 1); }

  /** Appends when the timestamp grew (Kafka's maybeAppend). */
  maybeAppend(timestamp: number, offset: number): void {
    if (this.entries > 0 && timestamp <= this.lastTimestamp) return;
    if (this.isFull) return;
    const at = this.slot();
    writeInt64(this.buf, at, timestamp, 'timestamp');
    this.buf.writeInt32BE(offset - this.baseOffset, at + 8);
  }

  /** The offset to start scanning from for the first record with timestamp >= target. */
  lookup(target: number): number {
    const i = this.floor(target - 1, (j) => this.timestampAt(j));
    return i < 0 ? this.baseOffset : this.offsetAt(i);
  }

  truncateTo(offset: number): void {
    let keep = this.entries;
    while (keep > 0 && this.offsetAt(keep - 1) >= offset) keep--;
    this.cut(keep);
  }

  isConsistent(): boolean {
    for (let i = 1; i < this.entries; i++) {
      if (this.timestampAt(i) <= this.timestampAt(i - 1) || this.offsetAt(i) < this.offsetAt(i - 1)) return false;
    }
    return true;
  }
}

export interface AbortedTxn { producerId: number; firstOffset: number; lastOffset: number; lastStableOffset: number }

const TXN_ENTRY_BYTES = 34;

export class TxnIndex {
  readonly aborted: AbortedTxn[] = [];
  constructor(readonly path: string, initial?: Buffer) {
    if (!initial) return;
    for (let at = 0; at + TXN_ENTRY_BYTES <= initial.length; at += TXN_ENTRY_BYTES) {
      this.aborted.push({
        producerId: readInt64(initial, at + 2, 'producerId'), firstOffset: readInt64(initial, at + 10, 'firstOffset'),
        lastOffset: readInt64(initial, at + 18, 'lastOffset'), lastStableOffset: readInt64(initial, at + 26, 'lastStableOffset'),
      });
    }
  }

  static encode(t: AbortedTxn): Buffer {
    const b = Buffer.alloc(TXN_ENTRY_BYTES);
    b.writeInt16BE(0, 0);
    writeInt64(b, 2, t.producerId, 'producerId');
    writeInt64(b, 10, t.firstOffset, 'firstOffset');
    writeInt64(b, 18, t.lastOffset, 'lastOffset');
    writeInt64(b, 26, t.lastStableOffset, 'lastStableOffset');
    return b;
  }

  append(t: AbortedTxn, files: FileCache): void {
    files.get(this.path).write(TxnIndex.encode(t), this.aborted.length * TXN_ENTRY_BYTES);
    this.aborted.push(t);
  }

  truncateTo(offset: number, files: FileCache | null): void {
    let keep = this.aborted.length;
    while (keep > 0 && this.aborted[keep - 1]!.lastOffset >= offset) keep--;
    if (keep === this.aborted.length) return;
    this.aborted.length = keep;
    files?.get(this.path).truncate(keep * TXN_ENTRY_BYTES);
  }

  reset(files: FileCache | null): void { this.truncateTo(-1, files); }

  /** Aborted transactions overlapping [from, upTo). */
  overlapping(from: number, upTo: number): AbortedTxn[] {
    return this.aborted.filter((t) => t.lastOffset >= from && t.firstOffset < upTo);
  }
}
