// The leader-epoch cache: for each leader epoch, the first offset written in it. It answers
// OffsetForLeaderEpoch (where did epoch E end?), which a returning replica uses to find and
// truncate its divergent suffix. Persisted as leader-epoch-checkpoint.
import { assert } from '../util/index.js';
import { readEpochCheckpoint, writeEpochCheckpoint, type EpochEntry } from './checkpoint.js';
import type { FileSystem } from './fs.js';

export const UNDEFINED_EPOCH = -1;
export const UNDEFINED_EPOCH_OFFSET = -1;

export class LeaderEpochCache {
  private entries: EpochEntry[];
  private dirty = false;

  constructor(private readonly fs: FileSystem, readonly path: string) {
    this.entries = readEpochCheckpoint(fs, path);
  }

  get all(): readonly EpochEntry[] { return this.entries; }
  get latestEpoch(): number { return this.entries.at(-1)?.epoch ?? UNDEFINED_EPOCH; }

  /** Records that `epoch` starts at `startOffset`; ignores epochs not newer than the latest. */
  assign(epoch: number, startOffset: number): void {
    if (epoch < 0) return;
    const last = this.entries.at(-1);
    if (last && epoch <= last.epoch) return;
    assert(!last || startOffset >= last.startOffset, `epoch ${epoch} at ${startOffset} starts before epoch ${last?.epoch} at ${last?.startOffset}`);
    this.entries.push({ epoch, startOffset });
    this.dirty = true;
  }

  /**
   * Kafka's endOffsetFor: the largest epoch <= requested, and the start offset of the next epoch
   * (or the log end offset when the requested epoch is the latest). An epoch older than every
   * one kept (its data is gone below the log start) ends where the first kept one starts, as in
   * Kafka: a follower that last fetched in it then truncates to there instead of being told its
   * offset is out of range forever.
   */
  endOffsetFor(epoch: number, logEndOffset: number): { leaderEpoch: number; endOffset: number } {
    if (this.entries.length === 0 || epoch < 0) return { leaderEpoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    if (epoch < this.entries[0]!.epoch) return { leaderEpoch: epoch, endOffset: this.entries[0]!.startOffset };
    if (epoch >= this.latestEpoch) return { leaderEpoch: this.latestEpoch, endOffset: logEndOffset };
    let i = this.entries.length - 1;
    while (this.entries[i]!.epoch > epoch) i--;
    return { leaderEpoch: this.entries[i]!.epoch, endOffset: this.entries[i + 1]!.startOffset };
  }

  /** The epoch of the batch at `offset` (the latest epoch starting at or before it), or -1 (Kafka's epochForOffset). */
  epochForOffset(offset: number): number {
    let found = UNDEFINED_EPOCH;
    for (const e of this.entries) {
      if (e.startOffset > offset) break;
      found = e.epoch;
    }
    return found;
  }

  /** Replaces every entry (a follower rebuilding its cache from the remote tier, Kafka's TierStateMachine). */
  replaceAll(entries: readonly { epoch: number; startOffset: number }[]): void {
    this.entries = entries.map((e) => ({ epoch: e.epoch, startOffset: e.startOffset }));
    this.dirty = true;
  }

  /** After truncating the log to `offset`: epochs starting at or after it are gone. */
  truncateFromEnd(offset: number): void {
    const before = this.entries.length;
    this.entries = this.entries.filter((e) => e.startOffset < offset);
    if (this.entries.length !== before) this.dirty = true;
  }

  /** After the log start moved to `offset`: the epoch covering it now starts there. */
  truncateFromStart(offset: number): void {
    let i = 0;
    while (i + 1 < this.entries.length && this.entries[i + 1]!.startOffset <= offset) i++;
    const kept = this.entries.slice(i);
    if (kept[0] && kept[0].startOffset < offset) kept[0] = { epoch: kept[0].epoch, startOffset: offset };
    if (kept.length !== this.entries.length || kept[0] !== this.entries[0]) this.dirty = true;
    this.entries = kept;
  }

  clear(): void { this.entries = []; this.dirty = true; }

  flush(): void {
    if (!this.dirty) return;
    writeEpochCheckpoint(this.fs, this.path, this.entries);
    this.dirty = false;
  }
}
