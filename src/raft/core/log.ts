// The core's in-memory view of the Raft log: entry batches above the latest snapshot (one object
// per appended batch, see batch.ts) and an epoch cache
// (epoch -> start offset) answering "where does epoch E end", which Fetch validation and follower
// truncation both need. It mirrors the durable log; the driver replays the same LogOps on disk.
import { assert } from '../../util/index.js';
import { batchEntry, endOffsetOf, sliceBatch } from './batch.js';
import type { Entry, EntryBatch, Snapshot, SnapshotId } from './types.js';

interface EpochStart {
  readonly epoch: number;
  readonly startOffset: number;
}

export class RaftLog {
  /** Batches above the snapshot, contiguous, the first starting at startOffsetValue. */
  private batches: EntryBatch[] = [];
  private startOffsetValue = 0;
  private endOffsetValue = 0;
  private epochs: EpochStart[] = [];
  private snapshotValue: Snapshot | undefined;

  /** Rebuild from what the durable store loaded. */
  static load(snapshot: Snapshot | undefined, batches: readonly EntryBatch[]): RaftLog {
    const log = new RaftLog();
    if (snapshot !== undefined) log.installSnapshot(snapshot);
    const start = log.startOffsetValue;
    const usable: EntryBatch[] = [];
    for (const b of batches) if (endOffsetOf(b) > start) usable.push(b.baseOffset >= start ? b : sliceBatch(b, start, endOffsetOf(b)));
    if (usable.length > 0 && usable[0]!.baseOffset === start) log.append(usable);
    return log;
  }

  get startOffset(): number { return this.startOffsetValue; }
  get endOffset(): number { return this.endOffsetValue; }
  get snapshot(): Snapshot | undefined { return this.snapshotValue; }
  get snapshotId(): SnapshotId | undefined { return this.snapshotValue?.id; }

  /** Epoch of the last entry (or of the snapshot when the log above it is empty); 0 when empty. */
  get lastEpoch(): number {
    if (this.batches.length > 0) return this.batches[this.batches.length - 1]!.epoch;
    return this.snapshotValue?.id.epoch ?? 0;
  }

  /** Index of the batch holding `offset`, or -1. */
  private batchIndex(offset: number): number {
    if (offset < this.startOffsetValue || offset >= this.endOffsetValue) return -1;
    let lo = 0;
    let hi = this.batches.length - 1;
    // Most lookups are near the end (fetches of recent entries).
    if (this.batches[hi]!.baseOffset <= offset) return hi;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.batches[mid]!.baseOffset <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  entryAt(offset: number): Entry | undefined {
    const i = this.batchIndex(offset);
    if (i < 0) return undefined;
    const b = this.batches[i]!;
    return batchEntry(b, offset - b.baseOffset);
  }

  /** Epoch of the entry at `offset`, including the snapshot's last entry; undefined if unknown. */
  epochAt(offset: number): number | undefined {
    if (offset === this.startOffsetValue - 1) return this.snapshotValue?.id.epoch;
    const i = this.batchIndex(offset);
    return i < 0 ? undefined : this.batches[i]!.epoch;
  }

  /**
   * Entries from `fromOffset`: whole batches (the first cut at `fromOffset`) while they add up to
   * at most `maxEntries`, but always at least one batch (as Kafka returns at least one batch).
   */
  read(fromOffset: number, maxEntries: number): EntryBatch[] {
    assert(fromOffset >= this.startOffsetValue, `read below log start: ${fromOffset}`);
    const out: EntryBatch[] = [];
    let i = this.batchIndex(fromOffset);
    if (i < 0) return out;
    let n = 0;
    for (; i < this.batches.length; i++) {
      const b = this.batches[i]!;
      const part = b.baseOffset >= fromOffset ? b : sliceBatch(b, fromOffset, endOffsetOf(b));
      if (out.length > 0 && n + part.count > maxEntries) break;
      out.push(part);
      n += part.count;
    }
    return out;
  }

  /** Entries [from, to) exactly, as batches (cut at both ends). */
  readRange(from: number, to: number): EntryBatch[] {
    assert(from >= this.startOffsetValue && to <= this.endOffsetValue, `range [${from}, ${to}) outside the log`);
    const out: EntryBatch[] = [];
    if (from >= to) return out;
    for (let i = this.batchIndex(from); i < this.batches.length; i++) {
      const b = this.batches[i]!;
      if (b.baseOffset >= to) break;
      out.push(sliceBatch(b, from, to));
    }
    return out;
  }

  append(batches: readonly EntryBatch[]): void {
    for (const b of batches) {
      assert(b.count > 0, 'empty batch');
      assert(b.baseOffset === this.endOffsetValue, `append at ${b.baseOffset}, log end is ${this.endOffsetValue}`);
      assert(b.epoch >= this.lastEpoch, `epoch ${b.epoch} below last epoch ${this.lastEpoch}`);
      if (b.epoch > this.lastEpoch || this.epochs.length === 0) {
        this.epochs.push({ epoch: b.epoch, startOffset: b.baseOffset });
      }
      this.batches.push(b);
      this.endOffsetValue += b.count;
    }
  }

  /** Delete every entry at or above `offset`. */
  truncateTo(offset: number): void {
    assert(offset >= this.startOffsetValue, `truncate to ${offset} below log start ${this.startOffsetValue}`);
    if (offset >= this.endOffsetValue) return;
    const i = this.batchIndex(offset);
    const b = this.batches[i]!;
    this.batches.length = i;
    if (b.baseOffset < offset) this.batches.push(sliceBatch(b, b.baseOffset, offset));
    this.endOffsetValue = offset;
    while (this.epochs.length > 0 && this.epochs[this.epochs.length - 1]!.startOffset >= offset) this.epochs.pop();
  }

  /** Keep a snapshot taken at a committed offset this log holds; drop the entries below it. */
  addSnapshot(snapshot: Snapshot): void {
    const { endOffset, epoch } = snapshot.id;
    assert(endOffset > this.startOffsetValue && endOffset <= this.endOffset, `snapshot end ${endOffset} outside log`);
    assert(this.epochAt(endOffset - 1) === epoch, `snapshot epoch ${epoch} differs from the log's`);
    const i = endOffset === this.endOffsetValue ? this.batches.length : this.batchIndex(endOffset);
    const rest = this.batches.slice(i);
    if (rest.length > 0 && rest[0]!.baseOffset < endOffset) rest[0] = sliceBatch(rest[0]!, endOffset, endOffsetOf(rest[0]!));
    this.batches = rest;
    this.startOffsetValue = endOffset;
    this.snapshotValue = snapshot;
    this.epochs = this.epochs.filter((e, i) => i === this.epochs.length - 1 || this.epochs[i + 1]!.startOffset > endOffset);
    if (this.epochs.length > 0 && this.epochs[0]!.startOffset < endOffset) {
      this.epochs[0] = { epoch: this.epochs[0]!.epoch, startOffset: endOffset };
    }
    if (this.batches.length === 0) this.epochs = [];
  }

  /** Replace the whole log with a snapshot fetched from the leader. */
  installSnapshot(snapshot: Snapshot): void {
    this.batches = [];
    this.epochs = [];
    this.startOffsetValue = snapshot.id.endOffset;
    this.endOffsetValue = snapshot.id.endOffset;
    this.snapshotValue = snapshot;
  }

  /**
   * The largest epoch <= `epoch` that this log knows and the offset where it ends (the start of the
   * next epoch, or the log end). Undefined when `epoch` predates everything the log still has.
   */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: number } | undefined {
    for (let i = this.epochs.length - 1; i >= 0; i--) {
      const e = this.epochs[i]!;
      if (e.epoch <= epoch) {
        const end = i + 1 < this.epochs.length ? this.epochs[i + 1]!.startOffset : this.endOffset;
        return { epoch: e.epoch, endOffset: end };
      }
    }
    const snap = this.snapshotValue?.id;
    if (snap !== undefined && snap.epoch <= epoch) {
      const end = this.epochs.length > 0 ? this.epochs[0]!.startOffset : this.endOffset;
      return { epoch: snap.epoch, endOffset: end };
    }
    if (snap === undefined && epoch >= 0) {
      return { epoch: 0, endOffset: this.epochs.length > 0 ? this.epochs[0]!.startOffset : this.endOffset };
    }
    return undefined;
  }
}
