// Offset syncs, both ends, as pure state: the source task's decision when to write a sync
// (MirrorMaker 2's OffsetSyncWriter), and the checkpoint task's store of syncs that translates a
// consumer group's upstream offset into a downstream one (its OffsetSyncStore).
//
// Translation never skips a record: a group at upstream offset g resumes downstream at the sync
// s with the largest s.upstream <= g: at s.downstream when g is s.upstream, else one past it
// (records after s may have been dropped or reordered by compaction and transactions, so nothing
// further can be assumed). The group then re-reads at most the records mirrored since s.

/** What the source task remembers per partition to decide when the next sync is due. */
export class OffsetSyncDecider {
  private previousUpstream = -1;
  private previousDownstream = -1;
  private lastSyncDownstream = -1;

  constructor(private readonly offsetLagMax: number) {}

  /**
   * A record mirrored from `upstream` to `downstream`: true when a sync must go out now. That is
   * the first record of this process's life, a gap upstream (compaction, transaction markers), a
   * target that went backwards (a recreated topic), or a translation that would be `offset.lag.max`
   * or more records stale.
   */
  mirrored(upstream: number, downstream: number): boolean {
    const first = this.lastSyncDownstream === -1;
    // A translation lands one past the last sync, hence the + 1.
    const stale = downstream - (this.lastSyncDownstream + 1) >= this.offsetLagMax;
    const gap = upstream - this.previousUpstream !== 1;
    const rewound = downstream < this.previousDownstream;
    this.previousUpstream = upstream;
    this.previousDownstream = downstream;
    if (first || stale || gap || rewound) {
      this.lastSyncDownstream = downstream;
      return true;
    }
    return false;
  }
}

export interface Sync { upstream: number; downstream: number }

/** Syncs kept per partition: slot i keeps one within 2^i upstream offsets of the newest. */
const SLOTS = 64;

/** True when a and b fall in different aligned blocks of 2^i offsets (their bits above i - 1 differ). */
function differAbove(a: number, b: number, i: number): boolean {
  const block = 2 ** i;
  return Math.floor(a / block) !== Math.floor(b / block);
}

/**
 * The syncs of each source partition, in exponentially spaced slots so translation is exact near
 * the live end of the topic and still possible far behind it, in bounded memory (64 per
 * partition). Slot 0 is the newest sync; slot i holds a sync from the same aligned block of 2^i
 * upstream offsets as the newest, or the oldest one kept.
 */
export class OffsetSyncStore {
  private readonly syncs = new Map<string, Sync[]>();
  /** Until the syncs topic was read to its end once, nothing is translated (old syncs would give stale offsets). */
  private loaded = false;

  /** key: the source topic-partition ("orders-0"). */
  add(key: string, sync: Sync): void {
    const slots = this.syncs.get(key);
    // Before the first read to the end, and after the upstream went backwards, older syncs say nothing true.
    if (slots === undefined || !this.loaded || slots[0]!.upstream > sync.upstream) {
      this.syncs.set(key, new Array<Sync>(SLOTS).fill(sync));
      return;
    }
    const next = slots.slice();
    next[0] = sync;
    for (let i = 1; i < SLOTS; i++) {
      if (!differAbove(next[i]!.upstream, sync.upstream, i)) break;
      next[i] = sync;
    }
    this.syncs.set(key, next);
  }

  markLoaded(): void { this.loaded = true; }
  get isLoaded(): boolean { return this.loaded; }

  /** Partitions with syncs. */
  partitions(): string[] { return [...this.syncs.keys()]; }

  /** The newest sync of a partition. */
  latest(key: string): Sync | undefined { return this.syncs.get(key)?.[0]; }

  /**
   * The downstream offset for a group at `upstream`: null when it cannot be known (not loaded, no
   * sync), -1 when every sync kept is ahead of it (too far back to translate accurately).
   */
  translate(key: string, upstream: number): number | null {
    if (!this.loaded) return null;
    const slots = this.syncs.get(key);
    if (slots === undefined) return null;
    const sync = slots.find((s) => s.upstream <= upstream);
    if (sync === undefined) return -1;
    return sync.downstream + (upstream === sync.upstream ? 0 : 1);
  }
}
