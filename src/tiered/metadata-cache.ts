// Remote log metadata as a state machine: Kafka's RemoteLogMetadataCache (one partition's segments
// and their lineage by leader epoch) and RemotePartitionMetadataStore (every partition, plus
// partition deletion). `replay(event)` is the only mutator; it checks an event whole before it
// changes anything, so a refused event (a typed error) leaves the state as it was — where Kafka
// logs and drops the event. No I/O, no clock: event timestamps come in the events.
import { RemoteLogMetadataError } from './errors.js';
import {
  RemoteLogSegmentState as S, RemotePartitionDeleteState, checkSegmentMetadata, checkTopicIdPartition, epochEndOffsetInSegment,
  isValidPartitionDeleteTransition, isValidSegmentTransition, partitionDeleteStateName, segmentStateName, topicIdPartitionKey, withUpdate,
  type RemoteLogMetadataEvent, type RemoteLogSegmentMetadata, type RemoteLogSegmentMetadataUpdate, type RemotePartitionDeleteMetadata,
  type TopicIdPartition,
} from './segment-metadata.js';

/** One leader epoch's segments (Kafka's RemoteLogLeaderEpochState). */
interface EpochState {
  /** Start offset → segment id, for COPY_SEGMENT_FINISHED segments that are the current copy of that range; ascending. */
  readonly offsetToId: Map<number, string>;
  /** Segments of this epoch not mapped above: copying, being deleted, or replaced by a later copy. */
  readonly unreferenced: Set<string>;
  /** Highest offset of this epoch ever finished copying (kept after deletions, as Kafka does). */
  highestLogOffset: number | null;
}

const newEpochState = (): EpochState => ({ offsetToId: new Map(), unreferenced: new Set(), highestLogOffset: null });

function lastEntry(m: Map<number, string>): [number, string] | undefined {
  let best: [number, string] | undefined;
  for (const e of m) if (best === undefined || e[0] > best[0]) best = e;
  return best;
}

function floorEntry(m: Map<number, string>, offset: number): string | undefined {
  let best: [number, string] | undefined;
  for (const e of m) if (e[0] <= offset && (best === undefined || e[0] > best[0])) best = e;
  return best?.[1];
}

/** The snapshot of one epoch: enough to rebuild it exactly (the segments alone would not give highestLogOffset). */
export interface EpochSnapshot {
  readonly leaderEpoch: number;
  readonly highestLogOffset: number | null;
  /** [startOffset, segmentId], ascending. */
  readonly referenced: readonly (readonly [number, string])[];
}

/** One partition's segments (Kafka's RemoteLogMetadataCache). */
export class RemoteLogMetadataCache {
  private readonly idToSegment = new Map<string, RemoteLogSegmentMetadata>();
  private readonly epochs = new Map<number, EpochState>();

  constructor(readonly topicIdPartition: TopicIdPartition) {}

  /** COPY_SEGMENT_FINISHED segment holding `offset` in `leaderEpoch`, as Kafka's cache answers it. */
  remoteLogSegmentMetadata(leaderEpoch: number, offset: number): RemoteLogSegmentMetadata | undefined {
    const state = this.epochs.get(leaderEpoch);
    if (state === undefined) return undefined;
    const id = floorEntry(state.offsetToId, offset);
    if (id === undefined) return undefined;
    const m = this.idToSegment.get(id)!;
    return offset > epochEndOffsetInSegment(m, leaderEpoch) ? undefined : m;
  }

  /** Highest offset copied for the epoch (COPY_SEGMENT_FINISHED or later), if any. */
  highestOffsetForEpoch(leaderEpoch: number): number | undefined {
    return this.epochs.get(leaderEpoch)?.highestLogOffset ?? undefined;
  }

  /** Every segment not yet DELETE_SEGMENT_FINISHED, in no defined order (Kafka's listAllRemoteLogSegments). */
  listAllRemoteLogSegments(): RemoteLogSegmentMetadata[] {
    return [...this.idToSegment.values()];
  }

  /** The epoch's segments in every live state, ascending by start offset (Kafka's listRemoteLogSegments(epoch)). */
  listRemoteLogSegments(leaderEpoch: number): RemoteLogSegmentMetadata[] {
    const state = this.epochs.get(leaderEpoch);
    if (state === undefined) return [];
    const out = [...state.offsetToId.values(), ...state.unreferenced].map((id) => this.idToSegment.get(id)!);
    return out.sort((a, b) => a.startOffset - b.startOffset);
  }

  /**
   * The remote log start offset a new leader takes (Kafka's RemoteLogManager.findLogStartOffset):
   * the first segment's start offset in the earliest of `leaderEpochs` (the local leader-epoch
   * cache's epochs, ascending) that has any segment.
   */
  remoteLogStartOffset(leaderEpochs: readonly number[]): number | undefined {
    for (const epoch of leaderEpochs) {
      const first = this.listRemoteLogSegments(epoch)[0];
      if (first !== undefined) return first.startOffset;
    }
    return undefined;
  }

  segment(id: string): RemoteLogSegmentMetadata | undefined {
    return this.idToSegment.get(id);
  }

  /** COPY_SEGMENT_STARTED: tracked for cleanup, not yet readable (Kafka's addCopyInProgressSegment). */
  addCopyInProgressSegment(m: RemoteLogSegmentMetadata): void {
    if (m.state !== S.COPY_SEGMENT_STARTED) {
      throw new RemoteLogMetadataError('INVALID_TRANSITION', `a new segment must be ${segmentStateName(S.COPY_SEGMENT_STARTED)}, not ${segmentStateName(m.state)}`);
    }
    checkSegmentMetadata(m);
    const id = m.remoteLogSegmentId.id;
    this.checkTransition(id, this.idToSegment.get(id)?.state ?? null, m.state);
    for (const e of m.segmentLeaderEpochs) this.epoch(e.leaderEpoch).unreferenced.add(id);
    this.idToSegment.set(id, m);
  }

  updateRemoteLogSegmentMetadata(u: RemoteLogSegmentMetadataUpdate): void {
    const id = u.remoteLogSegmentId.id;
    const existing = this.idToSegment.get(id);
    if (existing === undefined) throw new RemoteLogMetadataError('UNKNOWN_SEGMENT', `no remote log segment ${id} in ${this.topicIdPartition.topic}-${this.topicIdPartition.partition}`);
    this.checkTransition(id, existing.state, u.state);
    // A copy starts with the segment's own record, never an update (Kafka refuses it too).
    if (u.state === S.COPY_SEGMENT_STARTED) throw new RemoteLogMetadataError('INVALID_TRANSITION', `segment ${id}: an update cannot set ${segmentStateName(u.state)}`);
    this.applyState(withUpdate(existing, u));
  }

  private applyState(m: RemoteLogSegmentMetadata): void {
    const id = m.remoteLogSegmentId.id;
    switch (m.state) {
      case S.COPY_SEGMENT_STARTED:
        for (const e of m.segmentLeaderEpochs) this.epoch(e.leaderEpoch).unreferenced.add(id);
        this.idToSegment.set(id, m);
        return;
      case S.COPY_SEGMENT_FINISHED:
        for (const e of m.segmentLeaderEpochs) this.copyFinished(this.epoch(e.leaderEpoch), e.startOffset, id, epochEndOffsetInSegment(m, e.leaderEpoch));
        this.idToSegment.set(id, m);
        return;
      case S.DELETE_SEGMENT_STARTED:
        for (const e of m.segmentLeaderEpochs) {
          const state = this.epoch(e.leaderEpoch);
          if (state.offsetToId.get(e.startOffset) === id) state.offsetToId.delete(e.startOffset);
          state.unreferenced.add(id);
        }
        this.idToSegment.set(id, m);
        return;
      case S.DELETE_SEGMENT_FINISHED:
        for (const e of m.segmentLeaderEpochs) this.epoch(e.leaderEpoch).unreferenced.delete(id);
        this.idToSegment.delete(id);
        return;
    }
  }

  /**
   * A finished copy takes its start offset in the epoch. A new leader may copy again a range an
   * earlier leader copied (a duplicate, or overlapping segments); the later copy wins when it
   * reaches at least as far, and the copies it replaces become unreferenced so cleanup finds them.
   */
  private copyFinished(state: EpochState, startOffset: number, id: string, epochEndOffset: number): void {
    for (let last = lastEntry(state.offsetToId); last !== undefined && last[0] >= startOffset && state.highestLogOffset! <= epochEndOffset; last = lastEntry(state.offsetToId)) {
      state.offsetToId.delete(last[0]);
      state.unreferenced.add(last[1]);
    }
    state.offsetToId.set(startOffset, id);
    state.unreferenced.delete(id);
    if (state.highestLogOffset === null || epochEndOffset > state.highestLogOffset) state.highestLogOffset = epochEndOffset;
  }

  private epoch(leaderEpoch: number): EpochState {
    let state = this.epochs.get(leaderEpoch);
    if (state === undefined) this.epochs.set(leaderEpoch, state = newEpochState());
    return state;
  }

  private checkTransition(id: string, from: S | null, to: S): void {
    if (!isValidSegmentTransition(from, to)) {
      throw new RemoteLogMetadataError('INVALID_TRANSITION', `segment ${id}: ${segmentStateName(from)} cannot become ${segmentStateName(to)}`);
    }
  }

  snapshot(): { segments: RemoteLogSegmentMetadata[]; epochs: EpochSnapshot[] } {
    const segments = [...this.idToSegment.values()].sort((a, b) => a.startOffset - b.startOffset || cmp(a.remoteLogSegmentId.id, b.remoteLogSegmentId.id));
    const epochs = [...this.epochs].sort((a, b) => a[0] - b[0]).map(([leaderEpoch, s]) => ({
      leaderEpoch, highestLogOffset: s.highestLogOffset,
      referenced: [...s.offsetToId].sort((a, b) => a[0] - b[0]),
    }));
    return { segments, epochs };
  }

  /** Rebuilds the cache exactly; unreferenced sets follow from the segments not referenced. */
  static fromSnapshot(p: TopicIdPartition, segments: readonly RemoteLogSegmentMetadata[], epochs: readonly EpochSnapshot[]): RemoteLogMetadataCache {
    const cache = new RemoteLogMetadataCache(p);
    for (const m of segments) {
      if (m.state === S.DELETE_SEGMENT_FINISHED) throw new RemoteLogMetadataError('INVALID_METADATA', `snapshot holds deleted segment ${m.remoteLogSegmentId.id}`);
      checkSegmentMetadata(m);
      cache.idToSegment.set(m.remoteLogSegmentId.id, m);
    }
    for (const e of epochs) {
      const state = cache.epoch(e.leaderEpoch);
      state.highestLogOffset = e.highestLogOffset;
      for (const [offset, id] of e.referenced) {
        if (!cache.idToSegment.has(id)) throw new RemoteLogMetadataError('INVALID_METADATA', `snapshot epoch ${e.leaderEpoch} names unknown segment ${id}`);
        state.offsetToId.set(offset, id);
      }
    }
    for (const m of segments) {
      for (const e of m.segmentLeaderEpochs) {
        const state = cache.epoch(e.leaderEpoch);
        if (state.offsetToId.get(e.startOffset) !== m.remoteLogSegmentId.id) state.unreferenced.add(m.remoteLogSegmentId.id);
      }
    }
    return cache;
  }
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Everything needed to rebuild a store exactly, per partition. */
export interface RemoteLogMetadataSnapshot {
  readonly partitions: readonly {
    readonly topicIdPartition: TopicIdPartition;
    readonly deleteMetadata: RemotePartitionDeleteMetadata | null;
    readonly segments: readonly RemoteLogSegmentMetadata[];
    readonly epochs: readonly EpochSnapshot[];
  }[];
}

/** Every partition's remote log metadata (Kafka's RemotePartitionMetadataStore). */
export class RemotePartitionMetadataStore {
  private readonly caches = new Map<string, RemoteLogMetadataCache>();
  private readonly deletes = new Map<string, RemotePartitionDeleteMetadata>();

  /** The only mutator. Throws RemoteLogMetadataError, leaving the state unchanged, for an event it refuses. */
  replay(event: RemoteLogMetadataEvent): void {
    switch (event.kind) {
      case 'segment': {
        const p = event.metadata.remoteLogSegmentId.topicIdPartition;
        checkTopicIdPartition(p);
        const key = topicIdPartitionKey(p);
        const cache = this.caches.get(key) ?? new RemoteLogMetadataCache(p);
        cache.addCopyInProgressSegment(event.metadata);
        this.caches.set(key, cache);
        return;
      }
      case 'segment-update': {
        const p = event.update.remoteLogSegmentId.topicIdPartition;
        const cache = this.caches.get(topicIdPartitionKey(p));
        if (cache === undefined) throw new RemoteLogMetadataError('UNKNOWN_PARTITION', `no remote log metadata for ${p.topic}-${p.partition} (${p.topicId})`);
        cache.updateRemoteLogSegmentMetadata(event.update);
        return;
      }
      case 'partition-delete':
        this.replayPartitionDelete(event.metadata);
        return;
    }
  }

  private replayPartitionDelete(m: RemotePartitionDeleteMetadata): void {
    checkTopicIdPartition(m.topicIdPartition);
    const key = topicIdPartitionKey(m.topicIdPartition);
    const from = this.deletes.get(key)?.state ?? null;
    if (!isValidPartitionDeleteTransition(from, m.state)) {
      throw new RemoteLogMetadataError('INVALID_TRANSITION', `partition ${m.topicIdPartition.topic}-${m.topicIdPartition.partition}: ${partitionDeleteStateName(from)} cannot become ${partitionDeleteStateName(m.state)}`);
    }
    if (m.state === RemotePartitionDeleteState.DELETE_PARTITION_FINISHED) {
      // The partition is gone from the tier: forget it, as Kafka's store does.
      this.caches.delete(key);
      this.deletes.delete(key);
    } else {
      this.deletes.set(key, m);
    }
  }

  partition(p: TopicIdPartition): RemoteLogMetadataCache | undefined {
    return this.caches.get(topicIdPartitionKey(p));
  }

  partitionDeleteMetadata(p: TopicIdPartition): RemotePartitionDeleteMetadata | undefined {
    return this.deletes.get(topicIdPartitionKey(p));
  }

  remoteLogSegmentMetadata(p: TopicIdPartition, leaderEpoch: number, offset: number): RemoteLogSegmentMetadata | undefined {
    return this.partition(p)?.remoteLogSegmentMetadata(leaderEpoch, offset);
  }

  highestOffsetForEpoch(p: TopicIdPartition, leaderEpoch: number): number | undefined {
    return this.partition(p)?.highestOffsetForEpoch(leaderEpoch);
  }

  listRemoteLogSegments(p: TopicIdPartition, leaderEpoch?: number): RemoteLogSegmentMetadata[] {
    const cache = this.partition(p);
    if (cache === undefined) return [];
    return leaderEpoch === undefined ? cache.listAllRemoteLogSegments() : cache.listRemoteLogSegments(leaderEpoch);
  }

  snapshot(): RemoteLogMetadataSnapshot {
    const keys = [...new Set([...this.caches.keys(), ...this.deletes.keys()])].sort(cmp);
    return {
      partitions: keys.map((key) => {
        const cache = this.caches.get(key);
        const del = this.deletes.get(key) ?? null;
        const { segments, epochs } = cache?.snapshot() ?? { segments: [], epochs: [] };
        return { topicIdPartition: cache?.topicIdPartition ?? del!.topicIdPartition, deleteMetadata: del, segments, epochs };
      }),
    };
  }

  static fromSnapshot(snapshot: RemoteLogMetadataSnapshot): RemotePartitionMetadataStore {
    const store = new RemotePartitionMetadataStore();
    for (const p of snapshot.partitions) {
      checkTopicIdPartition(p.topicIdPartition);
      const key = topicIdPartitionKey(p.topicIdPartition);
      if (p.deleteMetadata !== null) store.deletes.set(key, p.deleteMetadata);
      if (p.segments.length > 0 || p.epochs.length > 0 || p.deleteMetadata === null) {
        store.caches.set(key, RemoteLogMetadataCache.fromSnapshot(p.topicIdPartition, p.segments, p.epochs));
      }
    }
    return store;
  }
}
