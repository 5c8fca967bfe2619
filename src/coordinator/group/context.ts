// What the parts of a group coordinator shard share (classic groups, consumer groups, offsets): the
// groups of the partition (both protocols in one namespace, as in Kafka), the timers, the time of
// the running operation, and the Effects it is building. Also the shard's configuration and the
// request and result types the parts speak.
import type { JoinGroupResponse, SyncGroupResponse } from '../../protocol/index.js';
import { Timers } from '../runtime/timers.js';
import type { CoordinatorResult, Reply } from '../runtime/runtime.js';
import type { ClassicGroup } from './classic.js';
import type { ConsumerGroup } from './consumer-model.js';
import type { ShareGroup } from './share-model.js';
import type { GroupRecord } from './records.js';

export type { Reply } from '../runtime/runtime.js';

export interface GroupCoordinatorConfig {
  initialRebalanceDelayMs: number;
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  groupMaxSize: number;
  offsetsRetentionMs: number;
  offsetsRetentionCheckIntervalMs: number;
  offsetMetadataMaxBytes: number;
  consumerSessionTimeoutMs: number;
  consumerHeartbeatIntervalMs: number;
  consumerGroupMaxSize: number;
  /** Server-side assignors of the consumer protocol; the first is the default. */
  consumerAssignors: string[];
  /** group.share.session.timeout.ms, group.share.heartbeat.interval.ms, group.share.max.size */
  shareSessionTimeoutMs: number;
  shareHeartbeatIntervalMs: number;
  shareGroupMaxSize: number;
}

export const defaultGroupConfig: GroupCoordinatorConfig = {
  initialRebalanceDelayMs: 3000, minSessionTimeoutMs: 6000, maxSessionTimeoutMs: 1_800_000, groupMaxSize: 2_147_483_647,
  offsetsRetentionMs: 7 * 24 * 3600 * 1000, offsetsRetentionCheckIntervalMs: 600_000, offsetMetadataMaxBytes: 4096,
  consumerSessionTimeoutMs: 45_000, consumerHeartbeatIntervalMs: 5000, consumerGroupMaxSize: 2_147_483_647, consumerAssignors: ['uniform', 'range'],
  shareSessionTimeoutMs: 45_000, shareHeartbeatIntervalMs: 5000, shareGroupMaxSize: 200,
};

/** What an operation of the group shard returns; `producer` is set by TxnOffsetCommit (the records go out in its transactional batch). */
export type Effects = CoordinatorResult<GroupRecord>;

export interface ClientInfo { clientId: string; clientHost: string; apiVersion: number }

export type Group = ClassicGroup | ConsumerGroup | ShareGroup;

/**
 * Rebalances the coordinator has run (Kafka's group-coordinator-metrics: a classic group's join
 * phase completing, a consumer group's epoch bump). Counted by live operations only, never by
 * replay, and shared by a service's shards so an unloaded shard's count is kept.
 */
export class GroupCoordinatorStats {
  classicRebalances = 0;
  consumerRebalances = 0;
}

export const UNKNOWN_MEMBER = '';

export const joinError = (errorCode: number, memberId = UNKNOWN_MEMBER): JoinGroupResponse => ({
  throttleTimeMs: 0, errorCode, generationId: -1, protocolType: null, protocolName: null, leader: '', skipAssignment: false, memberId, members: [],
});
export const syncError = (errorCode: number): SyncGroupResponse => ({ throttleTimeMs: 0, errorCode, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) });

export interface JoinParams {
  groupId: string; memberId: string; groupInstanceId: string | null; sessionTimeoutMs: number; rebalanceTimeoutMs: number;
  protocolType: string; protocols: { name: string; metadata: Buffer }[]; reason: string | null;
}
export interface SyncParams {
  groupId: string; memberId: string; groupInstanceId: string | null; generationId: number; protocolType: string | null; protocolName: string | null;
  assignments: { memberId: string; assignment: Buffer }[];
}

const emptyEffects = (): Effects => ({ records: [], replies: [], onAppendFailure: [] });

export class GroupShardContext {
  readonly groups = new Map<string, Group>();
  readonly timers = new Timers();
  private effects: Effects = emptyEffects();
  /** The time of the running operation (never goes back). */
  nowMs = 0;
  /** True while the partition is being replayed (records are history, not live writes). */
  loading = true;

  /** `replay` is the shard's: the one path that changes durable state. */
  constructor(readonly config: GroupCoordinatorConfig, readonly uuid: () => string, readonly replay: (r: GroupRecord) => void, readonly stats: GroupCoordinatorStats,
    private readonly logger: (message: string) => void = () => {}) {}

  /** What an operator reads to follow a group (Kafka's coordinator logs these at INFO); silent while replaying. */
  info(message: string): void { if (!this.loading) this.logger(message); }

  /** Runs one operation at `nowMs` and hands back what it produced. */
  run(nowMs: number, op: () => void): Effects {
    this.nowMs = Math.max(this.nowMs, nowMs);
    op();
    const out = this.effects;
    this.effects = emptyEffects();
    return out;
  }

  emit(record: GroupRecord): void { this.effects.records.push(record); }

  /** Records whose state the rest of the operation needs at once (replay is idempotent, so the runtime's replay after the append is harmless). */
  emitAndApply(record: GroupRecord): void {
    this.emit(record);
    this.replay(record);
  }

  respond(send: () => void, fail?: (code: number) => void): void { this.effects.replies.push({ send, fail: fail ?? (() => send()) } satisfies Reply); }
  onAppendFailure(undo: (errorCode: number) => void): void { this.effects.onAppendFailure.push(undo); }
}
