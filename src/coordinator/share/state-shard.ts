// One share coordinator shard (Kafka's ShareCoordinatorShard): the durable delivery state of the
// share-partitions whose key hashes to one `__share_group_state` partition. The share-partition
// leaders write it (WriteShareGroupState) and read it when they take a partition over
// (ReadShareGroupState); the group coordinator initializes and deletes it. Each write is a
// ShareUpdate record on top of the latest ShareSnapshot; every
// `share.coordinator.snapshot.update.records.per.snapshot` updates the merged state is written as
// a new snapshot instead. `replay` is the only mutator, so loading and live writes share one path.
// Deterministic: no clock (write timestamps come with the operation), no I/O.
import { ErrorCode } from '../../protocol/index.js';
import type { CoordinatorResult, Reply } from '../runtime/runtime.js';
import type { StateBatch } from './share-partition.js';
import { shareCoordinatorKey, type SharePartitionKey, type ShareStateRecord } from './state-records.js';

export type ShareStateEffects = CoordinatorResult<ShareStateRecord>;

export interface ShareCoordinatorConfig {
  /** share.coordinator.snapshot.update.records.per.snapshot */
  updatesPerSnapshot: number;
}

/** The merged state of one share-partition. */
export interface ShareGroupState {
  stateEpoch: number;
  leaderEpoch: number;
  startOffset: number;
  stateBatches: StateBatch[];
  snapshotEpoch: number;
  updatesSinceSnapshot: number;
  createTimestamp: number;
}

export interface WriteParams extends SharePartitionKey { stateEpoch: number; leaderEpoch: number; startOffset: number; stateBatches: StateBatch[] }

export type ReadResult = { errorCode: number; errorMessage: string | null } & Partial<Pick<ShareGroupState, 'stateEpoch' | 'startOffset' | 'stateBatches' | 'leaderEpoch'>>;

/** `next` overlays `old` (a write carries whole runs), and nothing below `startOffset` is kept. */
export function mergeStateBatches(old: readonly StateBatch[], next: readonly StateBatch[], startOffset: number): StateBatch[] {
  const out: StateBatch[] = [];
  for (const b of old) {
    let pieces: StateBatch[] = [{ ...b }];
    for (const n of next) {
      pieces = pieces.flatMap((p) => {
        if (n.lastOffset < p.firstOffset || n.firstOffset > p.lastOffset) return [p];
        const left = n.firstOffset > p.firstOffset ? [{ ...p, lastOffset: n.firstOffset - 1 }] : [];
        const right = n.lastOffset < p.lastOffset ? [{ ...p, firstOffset: n.lastOffset + 1 }] : [];
        return [...left, ...right];
      });
    }
    out.push(...pieces);
  }
  out.push(...next.map((b) => ({ ...b })));
  return out.filter((b) => b.lastOffset >= startOffset).map((b) => (b.firstOffset < startOffset ? { ...b, firstOffset: startOffset } : b))
    .sort((a, b) => a.firstOffset - b.firstOffset);
}

const toWire = (batches: readonly StateBatch[]) => batches.map((b) => ({ firstOffset: BigInt(b.firstOffset), lastOffset: BigInt(b.lastOffset), deliveryState: b.deliveryState, deliveryCount: b.deliveryCount }));
const fromWire = (batches: readonly { firstOffset: bigint; lastOffset: bigint; deliveryState: number; deliveryCount: number }[]) =>
  batches.map((b) => ({ firstOffset: Number(b.firstOffset), lastOffset: Number(b.lastOffset), deliveryState: b.deliveryState, deliveryCount: b.deliveryCount }));

export class ShareCoordinatorShard {
  /** By shareCoordinatorKey. */
  readonly states = new Map<string, ShareGroupState>();
  private effects: ShareStateEffects = { records: [], replies: [], onAppendFailure: [] };

  constructor(readonly config: ShareCoordinatorConfig) {}

  replay(r: ShareStateRecord): void {
    const id = shareCoordinatorKey(r.key);
    if (r.value === null) { this.states.delete(id); return; }
    if (r.type === 'snapshot') {
      const v = r.value;
      this.states.set(id, {
        stateEpoch: v.stateEpoch, leaderEpoch: v.leaderEpoch, startOffset: Number(v.startOffset), stateBatches: fromWire(v.stateBatches),
        snapshotEpoch: v.snapshotEpoch, updatesSinceSnapshot: 0, createTimestamp: Number(v.createTimestamp),
      });
      return;
    }
    const s = this.states.get(id);
    if (!s) return; // an update without a snapshot before it (its snapshot was deleted): nothing to apply it to
    const startOffset = r.value.startOffset >= 0n ? Number(r.value.startOffset) : s.startOffset;
    s.stateBatches = mergeStateBatches(s.stateBatches, fromWire(r.value.stateBatches), startOffset);
    s.startOffset = startOffset;
    s.leaderEpoch = r.value.leaderEpoch;
    s.updatesSinceSnapshot++;
  }

  onLoaded(_nowMs: number): ShareStateEffects { return this.take(); }
  tick(_nowMs: number): ShareStateEffects { return this.take(); }
  nextDeadlineMs(): number | null { return null; }

  private take(): ShareStateEffects {
    const out = this.effects;
    this.effects = { records: [], replies: [], onAppendFailure: [] };
    return out;
  }

  private reply(send: () => void, fail: (code: number) => void): void { this.effects.replies.push({ send, fail } satisfies Reply); }

  private refuse(code: number, respond: (code: number) => void): ShareStateEffects {
    this.reply(() => respond(code), () => respond(code));
    return this.take();
  }

  /** InitializeShareGroupState: a share-partition starts (again) at `startOffset` under a new state epoch. */
  initialize(nowMs: number, k: SharePartitionKey, stateEpoch: number, startOffset: number, respond: (code: number) => void): ShareStateEffects {
    const s = this.states.get(shareCoordinatorKey(k));
    if (s && stateEpoch < s.stateEpoch) return this.refuse(ErrorCode.FENCED_STATE_EPOCH, respond);
    this.snapshot(k, { stateEpoch, leaderEpoch: -1, startOffset, stateBatches: [], snapshotEpoch: (s?.snapshotEpoch ?? -1) + 1, createTimestamp: nowMs }, nowMs);
    this.reply(() => respond(ErrorCode.NONE), respond);
    return this.take();
  }

  /**
   * WriteShareGroupState from a share-partition leader. A write under an older state epoch
   * (FENCED_STATE_EPOCH) or from an older leader (FENCED_LEADER_EPOCH) is refused, so a deposed
   * leader cannot overwrite its successor's acknowledgements.
   */
  write(nowMs: number, p: WriteParams, respond: (code: number) => void): ShareStateEffects {
    const id = shareCoordinatorKey(p);
    const s = this.states.get(id);
    // Never initialized, or deleted since (the group or its offsets were): a leader still holding
    // it must not bring it back, so the write is refused and the leader drops what it holds.
    if (!s) return this.refuse(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, respond);
    if (p.stateEpoch < s.stateEpoch) return this.refuse(ErrorCode.FENCED_STATE_EPOCH, respond);
    if (p.leaderEpoch < s.leaderEpoch) return this.refuse(ErrorCode.FENCED_LEADER_EPOCH, respond);
    if (s.updatesSinceSnapshot >= this.config.updatesPerSnapshot) {
      const startOffset = p.startOffset >= 0 ? p.startOffset : s.startOffset;
      const merged = mergeStateBatches(s.stateBatches, p.stateBatches, startOffset);
      this.snapshot(p, { stateEpoch: p.stateEpoch, leaderEpoch: p.leaderEpoch, startOffset, stateBatches: merged, snapshotEpoch: s.snapshotEpoch + 1, createTimestamp: s.createTimestamp }, nowMs);
    } else {
      this.effects.records.push({
        type: 'update', key: { groupId: p.groupId, topicId: p.topicId, partition: p.partition },
        value: { snapshotEpoch: s.snapshotEpoch, leaderEpoch: p.leaderEpoch, startOffset: BigInt(p.startOffset), deliveryCompleteCount: -1, stateBatches: toWire(p.stateBatches) },
      });
    }
    this.reply(() => respond(ErrorCode.NONE), respond);
    return this.take();
  }

  /**
   * ReadShareGroupState from a share-partition leader taking the partition over under
   * `leaderEpoch` (Kafka's readStateAndMaybeUpdateLeaderEpoch): a newer epoch than the stored one
   * is written first (an update with no batches), so a deposed leader's late write is fenced
   * (FENCED_LEADER_EPOCH) before the new leader acts on what it read. The answer is the state once
   * that record is committed. An older epoch is refused.
   */
  readForLeader(k: SharePartitionKey, leaderEpoch: number, respond: (r: ReadResult) => void): ShareStateEffects {
    const s = this.states.get(shareCoordinatorKey(k));
    const answer = () => respond(this.read(k));
    const fail = (code: number) => respond({ errorCode: code, errorMessage: null });
    if (s && leaderEpoch >= 0 && leaderEpoch < s.leaderEpoch) {
      this.reply(() => fail(ErrorCode.FENCED_LEADER_EPOCH), fail);
      return this.take();
    }
    if (s && leaderEpoch > s.leaderEpoch) {
      this.effects.records.push({
        type: 'update', key: { groupId: k.groupId, topicId: k.topicId, partition: k.partition },
        value: { snapshotEpoch: s.snapshotEpoch, leaderEpoch, startOffset: -1n, deliveryCompleteCount: -1, stateBatches: [] },
      });
    }
    this.reply(answer, fail);
    return this.take();
  }

  /** ReadShareGroupState without fencing (and the state a summary is made of); UNKNOWN_TOPIC_OR_PARTITION when it was never initialized. */
  read(k: SharePartitionKey): ReadResult {
    const s = this.states.get(shareCoordinatorKey(k));
    if (!s) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'The share-partition has no state.' };
    return { errorCode: 0, errorMessage: null, stateEpoch: s.stateEpoch, startOffset: s.startOffset, leaderEpoch: s.leaderEpoch, stateBatches: s.stateBatches.map((b) => ({ ...b })) };
  }

  /** DeleteShareGroupState: tombstones for both record types of the share-partition. */
  delete(k: SharePartitionKey, respond: (code: number) => void): ShareStateEffects {
    const key = { groupId: k.groupId, topicId: k.topicId, partition: k.partition };
    if (this.states.has(shareCoordinatorKey(k))) {
      this.effects.records.push({ type: 'update', key, value: null }, { type: 'snapshot', key, value: null });
    }
    this.reply(() => respond(ErrorCode.NONE), respond);
    return this.take();
  }

  private snapshot(k: SharePartitionKey, s: Omit<ShareGroupState, 'updatesSinceSnapshot'>, nowMs: number): void {
    this.effects.records.push({
      type: 'snapshot', key: { groupId: k.groupId, topicId: k.topicId, partition: k.partition },
      value: {
        snapshotEpoch: s.snapshotEpoch, stateEpoch: s.stateEpoch, leaderEpoch: s.leaderEpoch, startOffset: BigInt(s.startOffset),
        createTimestamp: BigInt(s.createTimestamp), writeTimestamp: BigInt(nowMs), deliveryCompleteCount: -1, stateBatches: toWire(s.stateBatches),
      },
    });
  }
}
