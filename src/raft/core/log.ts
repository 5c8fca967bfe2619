// The core's in-memory view of the Raft log: entries above the latest snapshot and an epoch cache
// (epoch -> start offset) answering "where does epoch E end", which Fetch validation and follower
// truncation both need. It mirrors the durable log; the driver replays the same LogOps on disk.
import { assert } from '../../util/index.js';
import type { Entry, Snapshot, SnapshotId } from './types.js';

interface EpochStart {
  readonly epoch: number;
  readonly startOffset: number;
}

export class RaftLog {
  private entries: Entry[] = [];
  private startOffsetValue = 0;
  private epochs: EpochStart[] = [];
  private snapshotValue: Snapshot | undefined;

  /** Rebuild from what the durable store loaded. */
  static load(snapshot: Snapshot | undefined, entries: readonly Entry[]): RaftLog {
    const log = new RaftLog();
    if (snapshot !== undefined) log.installSnapshot(snapshot);
    const usable = entries.filter((e) => e.offset >= log.startOffsetValue);
    if (usable.length > 0 && usable[0]!.offset === log.startOffsetValue) log.append(usable);
    return log;
  }

  get startOffset(): number { return this.startOffsetValue; }
  get endOffset(): number { return this.startOffsetValue + this.entries.length; }
  get snapshot(): Snapshot | undefined { return this.snapshotValue; }
  get snapshotId(): SnapshotId | undefined { return this.snapshotValue?.id; }

  /** Epoch of the last entry (or of the snapshot when the log above it is empty); 0 when empty. */
  get lastEpoch(): number {
    if (this.entries.length > 0) return this.entries[this.entries.length - 1]!.epoch;
    return this.snapshotValue?.id.epoch ?? 0;
  }

  entryAt(offset: number): Entry | undefined {
    return this.entries[offset - this.startOffsetValue];
  }

  /** Epoch of the entry at `offset`, including the snapshot's last entry; undefined if unknown. */
  epochAt(offset: number): number | undefined {
    if (offset === this.startOffsetValue - 1) return this.snapshotValue?.id.epoch;
    return this.entryAt(offset)?.epoch;
  }

  read(fromOffset: number, maxEntries: number): Entry[] {
    assert(fromOffset >= this.startOffsetValue, `read below log start: ${fromOffset}`);
    const from = fromOffset - this.startOffsetValue;
    return this.entries.slice(from, from + maxEntries);
  }

  append(batch: readonly Entry[]): void {
    for (const entry of batch) {
      assert(entry.offset === this.endOffset, `append at ${entry.offset}, log end is ${this.endOffset}`);
      assert(entry.epoch >= this.lastEpoch, `epoch ${entry.epoch} below last epoch ${this.lastEpoch}`);
      if (entry.epoch > this.lastEpoch || this.epochs.length === 0) {
        this.epochs.push({ epoch: entry.epoch, startOffset: entry.offset });
      }
      this.entries.push(entry);
    }
  }

  /** Delete every entry at or above `offset`. */
  truncateTo(offset: number): void {
    assert(offset >= this.startOffsetValue, `truncate to ${offset} below log start ${this.startOffsetValue}`);
    if (offset >= this.endOffset) return;
    this.entries.length = offset - this.startOffsetValue;
    while (this.epochs.length > 0 && this.epochs[this.epochs.length - 1]!.startOffset >= offset) this.epochs.pop();
  }

  /** Keep a snapshot taken at a committed offset this log holds; drop the entries below it. */
  addSnapshot(snapshot: Snapshot): void {
    const { endOffset, epoch } = snapshot.id;
    assert(endOffset > this.startOffsetValue && endOffset <= this.endOffset, `snapshot end ${endOffset} outside log`);
    assert(this.epochAt(endOffset - 1) === epoch, `snapshot epoch ${epoch} differs from the log's`);
    this.entries = this.entries.slice(endOffset - this.startOffsetValue);
    this.startOffsetValue = endOffset;
    this.snapshotValue = snapshot;
    this.epochs = this.epochs.filter((e, i) => i === this.epochs.length - 1 || this.epochs[i + 1]!.startOffset > endOffset);
    if (this.epochs.length > 0 && this.epochs[0]!.startOffset < endOffset) {
      this.epochs[0] = { epoch: this.epochs[0]!.epoch, startOffset: endOffset };
    }
    if (this.entries.length === 0) this.epochs = [];
  }

  /** Replace the whole log with a snapshot fetched from the leader. */
  installSnapshot(snapshot: Snapshot): void {
    this.entries = [];
    this.epochs = [];
    this.startOffsetValue = snapshot.id.endOffset;
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
