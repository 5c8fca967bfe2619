// The group coordinator service: which shard owns a group (Kafka's partitionFor), its shards on the
// coordinator runtime (loaded for the `__consumer_offsets` partitions led here), and one
// promise-returning method per request kind for the handlers. Errors that are about the
// coordinator rather than the group (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) are answered here.
import { ErrorCode, type ConsumerGroupHeartbeatResponse, type JoinGroupResponse, type ShareGroupHeartbeatResponse, type SyncGroupResponse } from '../../protocol/index.js';
import type { ShareHeartbeatParams } from './share-groups.js';
import type { HeartbeatParams, TopicsSnapshot } from './consumer.js';
import type { Clock } from '../../util/index.js';
import type { Scheduler } from '../../replication/index.js';
import { CoordinatorRuntime, type CoordinatorLog, type RuntimeLogger } from '../runtime/runtime.js';
import { decodeGroupRecord, encodeGroupRecord, type GroupRecord } from './records.js';
import {
  GroupCoordinatorShard, joinError, syncError, type ClientInfo, type CommitParams, type Effects, type FetchedOffset, type GroupCoordinatorConfig,
  GroupCoordinatorStats, type GroupDescription, type JoinParams, type PartitionResults, type SyncParams, type TxnCommitParams,
} from './shard.js';

export const OFFSETS_TOPIC = '__consumer_offsets';

/** Java's String.hashCode over UTF-16 code units, as Kafka hashes group ids. */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's partitionFor: Utils.abs(groupId.hashCode()) % partitions (abs(MIN_VALUE) is 0 there). */
export function partitionForGroup(groupId: string, partitions: number): number {
  const h = javaStringHashCode(groupId);
  return (h === -2147483648 ? 0 : Math.abs(h)) % partitions;
}

export interface GroupServiceDeps {
  clock: Clock;
  scheduler: Scheduler;
  config: GroupCoordinatorConfig;
  numPartitions: number;
  log: CoordinatorLog;
  newUuid: () => string;
  logger: RuntimeLogger;
}

type Routed = { partition: number; shard: GroupCoordinatorShard } | { errorCode: number };

export class GroupCoordinatorService {
  readonly runtime: CoordinatorRuntime<GroupRecord, GroupCoordinatorShard, Effects>;
  readonly stats = new GroupCoordinatorStats();

  constructor(readonly deps: GroupServiceDeps) {
    this.runtime = new CoordinatorRuntime({
      name: 'group coordinator', log: deps.log, clock: deps.clock, scheduler: deps.scheduler, logger: deps.logger,
      newShard: () => new GroupCoordinatorShard(deps.config, deps.newUuid, this.stats, (m) => deps.logger.info(m)), encode: encodeGroupRecord, decode: decodeGroupRecord,
    });
  }

  partitionFor(groupId: string): number { return partitionForGroup(groupId, this.deps.numPartitions); }

  /** Kafka's onElection: load the shard of a partition now led here under `epoch` (a newer epoch reloads). */
  loadShard(partition: number, epoch: number): Promise<void> { return this.runtime.loadShard(partition, epoch); }

  /** Kafka's onResignation: the partition is led elsewhere from `epoch` (none: it is gone). */
  unloadShard(partition: number, epoch?: number): void { this.runtime.unloadShard(partition, epoch); }

  /** Loads the partition if it is led here, unloads it if not (the single node's way to follow leadership). */
  ensureLoading(partition: number): void { this.runtime.followLeadership(partition); }

  /** Loads every partition led here and drops the others (after a metadata change). */
  syncPartitions(): void {
    for (let p = 0; p < this.deps.numPartitions; p++) this.ensureLoading(p);
  }

  private route(groupId: string): Routed {
    const partition = this.partitionFor(groupId);
    this.ensureLoading(partition);
    const shard = this.runtime.activeShard(partition);
    return shard ? { partition, shard } : { errorCode: this.runtime.errorFor(partition) };
  }

  /** NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS for this group, or 0. */
  coordinatorError(groupId: string): number {
    const r = this.route(groupId);
    return 'errorCode' in r ? r.errorCode : 0;
  }

  /** Runs an operation on the group's shard; `make` builds the answer from what the op captured. */
  private op<T>(groupId: string, onError: (code: number) => T, run: (shard: GroupCoordinatorShard, nowMs: number, done: (v: T) => void) => Effects): Promise<T> {
    const r = this.route(groupId);
    if ('errorCode' in r) return Promise.resolve(onError(r.errorCode));
    return new Promise<T>((resolve) => {
      let answered = false;
      const done = (v: T) => { if (!answered) { answered = true; resolve(v); } };
      // Join and sync answers may come from a later operation; a shard unloaded first answers them NOT_COORDINATOR.
      void this.runtime.write(r.partition, (shard, now) => run(shard, now, done)).then((code) => { if (code !== ErrorCode.NONE) done(onError(code)); });
    });
  }

  join(p: JoinParams, client: ClientInfo): Promise<JoinGroupResponse> {
    return this.op(p.groupId, (code) => joinError(code), (s, now, done) => s.classicJoin(now, p, client, done));
  }

  sync(p: SyncParams): Promise<SyncGroupResponse> {
    return this.op(p.groupId, (code) => syncError(code), (s, now, done) => s.classicSync(now, p, done));
  }

  heartbeat(p: { groupId: string; memberId: string; groupInstanceId: string | null; generationId: number }): Promise<number> {
    return this.op(p.groupId, (code) => code, (s, now, done) => {
      const out = s.classicHeartbeat(now, p);
      out.effects.replies.push({ send: () => done(out.errorCode), fail: () => done(out.errorCode) });
      return out.effects;
    });
  }

  leave(groupId: string, members: { memberId: string; groupInstanceId: string | null }[]): Promise<{ errorCode: number; results: number[] }> {
    return this.op<{ errorCode: number; results: number[] }>(groupId, (code) => ({ errorCode: code, results: [] }), (s, now, done) => {
      const out = s.classicLeave(now, groupId, members);
      out.effects.replies.push({ send: () => done({ errorCode: out.errorCode, results: out.results }), fail: (code) => done({ errorCode: code, results: [] }) });
      return out.effects;
    });
  }

  commitOffsets(p: CommitParams, client: ClientInfo): Promise<PartitionResults> {
    const all = (code: number): PartitionResults => p.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((x) => ({ partitionIndex: x.partitionIndex, errorCode: code })) }));
    return this.op(p.groupId, all, (s, now, done) => s.commitOffsets(now, p, client, done));
  }

  /** TxnOffsetCommit: offsets written in the producer's transaction, visible once it commits. */
  txnCommitOffsets(p: TxnCommitParams, client: ClientInfo): Promise<PartitionResults> {
    const all = (code: number): PartitionResults => p.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((x) => ({ partitionIndex: x.partitionIndex, errorCode: code })) }));
    return this.op(p.groupId, all, (s, now, done) => s.txnCommitOffsets(now, p, client, done));
  }

  /**
   * A COMMIT/ABORT marker was written to `__consumer_offsets` partition `partition`: the producer's
   * pending offsets there are applied or dropped, in turn with the shard's other operations. A
   * shard not loaded here will meet the marker when it loads.
   */
  completeTransaction(partition: number, producerId: bigint, commit: boolean): Promise<void> {
    return this.runtime.completeTransaction(partition, Number(producerId), commit);
  }

  fetchOffsets(groupId: string, topics: { name: string; partitionIndexes: number[] }[] | null, member?: { memberId: string | null; memberEpoch: number }, requireStable = false):
    { errorCode: number; topics: { name: string; partitions: FetchedOffset[] }[] } {
    const r = this.route(groupId);
    if ('errorCode' in r) return { errorCode: r.errorCode, topics: [] };
    return r.shard.fetchOffsets(groupId, topics, member, requireStable);
  }

  deleteOffsets(groupId: string, topics: { name: string; partitions: number[] }[]): Promise<{ errorCode: number; topics: PartitionResults }> {
    return this.op<{ errorCode: number; topics: PartitionResults }>(groupId, (code) => ({ errorCode: code, topics: [] }), (s, now, done) => s.deleteOffsets(now, groupId, topics, (errorCode, r) => done({ errorCode, topics: r })));
  }

  deleteGroups(groupIds: string[]): Promise<{ groupId: string; errorCode: number }[]> {
    return Promise.all(groupIds.map((groupId) => this.op(groupId, (errorCode) => ({ groupId, errorCode }),
      (s, now, done) => s.deleteGroups(now, [groupId], (r) => done(r[0]!)))));
  }

  describe(groupId: string): GroupDescription {
    const r = this.route(groupId);
    if ('errorCode' in r) return { groupId, errorCode: r.errorCode, state: '', protocolType: '', protocolName: '', type: 'classic', members: [] };
    return r.shard.describeGroup(groupId);
  }

  /** Groups of every loaded shard; errorCode COORDINATOR_LOAD_IN_PROGRESS while any shard loads. */
  list(statesFilter: string[], typesFilter: string[]): { errorCode: number; groups: ReturnType<GroupCoordinatorShard['listGroups']> } {
    let errorCode = 0;
    const groups = [];
    for (const s of this.runtime.shards()) {
      if (s.loading) { errorCode = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS; continue; }
      groups.push(...s.shard.listGroups(statesFilter, typesFilter));
    }
    return { errorCode, groups };
  }

  consumerHeartbeat(p: HeartbeatParams, client: ClientInfo, topics: TopicsSnapshot): Promise<ConsumerGroupHeartbeatResponse> {
    const failed = (errorCode: number): ConsumerGroupHeartbeatResponse => ({ throttleTimeMs: 0, errorCode, errorMessage: null, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null });
    return this.op(p.groupId, failed, (s, now, done) => s.consumerHeartbeat(now, p, client, topics, done));
  }

  consumerDescribe(groupId: string, topics: TopicsSnapshot): ReturnType<GroupCoordinatorShard['describeConsumerGroup']> {
    const r = this.route(groupId);
    if ('errorCode' in r) return { errorCode: r.errorCode, errorMessage: null, groupId, groupState: '', groupEpoch: -1, assignmentEpoch: -1, assignorName: '', members: [] };
    return r.shard.describeConsumerGroup(groupId, topics);
  }

  shareHeartbeat(p: ShareHeartbeatParams, client: ClientInfo, topics: TopicsSnapshot): Promise<ShareGroupHeartbeatResponse> {
    const failed = (errorCode: number): ShareGroupHeartbeatResponse => ({ throttleTimeMs: 0, errorCode, errorMessage: null, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null });
    return this.op(p.groupId, failed, (s, now, done) => s.shareHeartbeat(now, p, client, topics, done));
  }

  shareDescribe(groupId: string, topics: TopicsSnapshot): ReturnType<GroupCoordinatorShard['describeShareGroup']> {
    const r = this.route(groupId);
    if ('errorCode' in r) return { errorCode: r.errorCode, errorMessage: null, groupId, groupState: '', groupEpoch: -1, assignmentEpoch: -1, assignorName: '', members: [] };
    return r.shard.describeShareGroup(groupId, topics);
  }

  /** A share group's share-partitions (the topics it has state for). */
  shareGroupTopics(groupId: string): ReturnType<GroupCoordinatorShard['shareGroupTopics']> {
    const r = this.route(groupId);
    if ('errorCode' in r) return { errorCode: r.errorCode, topics: [] };
    return r.shard.shareGroupTopics(groupId);
  }

  alterShareOffsets(groupId: string, topics: { topicId: string; name: string; partitions: number[] }[]): Promise<number> {
    return this.op<number>(groupId, (code) => code, (s, now, done) => s.alterShareOffsets(now, groupId, topics, done));
  }

  deleteShareOffsets(groupId: string, topicIds: string[]): Promise<{ errorCode: number; deleted: { topicId: string; name: string; partitions: number[] }[] }> {
    return this.op<{ errorCode: number; deleted: { topicId: string; name: string; partitions: number[] }[] }>(groupId, (errorCode) => ({ errorCode, deleted: [] }),
      (s, now, done) => s.deleteShareOffsets(now, groupId, topicIds, (errorCode, deleted) => done({ errorCode, deleted })));
  }

  /** The shard of a group, once loaded (for tests). */
  shardFor(groupId: string): GroupCoordinatorShard | null {
    return this.runtime.activeShard(this.partitionFor(groupId));
  }

  /** Resolves when every shard loading now has loaded. */
  loaded(): Promise<void> { return this.runtime.loaded(); }

  close(): void { this.runtime.close(); }
}
