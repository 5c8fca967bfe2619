// The group coordinator service: which shard owns a group (Kafka's partitionFor), loading shards
// for the `__consumer_offsets` partitions led here, and one promise-returning method per request
// kind for the handlers. Errors that are about the coordinator rather than the group
// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS) are answered here.
import { ErrorCode, type ConsumerGroupHeartbeatResponse, type JoinGroupResponse, type SyncGroupResponse } from '../../protocol/index.js';
import type { HeartbeatParams, TopicsSnapshot } from './consumer.js';
import type { Clock } from '../../util/index.js';
import type { Scheduler } from '../../replication/index.js';
import { ShardRuntime, type CoordinatorLog, type RuntimeLogger } from '../runtime/runtime.js';
import { GroupCoordinatorShard, type CommitParams, type FetchedOffset, type GroupDescription, type PartitionResults, type TxnCommitParams } from './coordinator-shard.js';
import { joinError, syncError, type ClientInfo, type Effects, type GroupCoordinatorConfig, type JoinParams, type SyncParams } from './shard.js';

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

type Routed = { runtime: ShardRuntime } | { errorCode: number };

export class GroupCoordinatorService {
  private readonly runtimes = new Map<number, ShardRuntime>();

  constructor(readonly deps: GroupServiceDeps) {}

  partitionFor(groupId: string): number { return partitionForGroup(groupId, this.deps.numPartitions); }

  /** Starts loading the partition if it is led here and not loaded yet. */
  ensureLoading(partition: number): ShardRuntime | null {
    if (!this.deps.log.isLeader(partition)) {
      this.runtimes.get(partition)?.close();
      this.runtimes.delete(partition);
      return null;
    }
    let rt = this.runtimes.get(partition);
    if (!rt) {
      rt = new ShardRuntime(partition, new GroupCoordinatorShard(this.deps.config, this.deps.newUuid), this.deps.log, this.deps.clock, this.deps.scheduler, this.deps.logger);
      this.runtimes.set(partition, rt);
    }
    return rt;
  }

  /** Loads every partition led here and drops the others (after a metadata change). */
  syncPartitions(): void {
    for (let p = 0; p < this.deps.numPartitions; p++) this.ensureLoading(p);
  }

  private route(groupId: string): Routed {
    const rt = this.ensureLoading(this.partitionFor(groupId));
    if (!rt) return { errorCode: ErrorCode.NOT_COORDINATOR };
    if (rt.loading) return { errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS };
    return { runtime: rt };
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
      // Join and sync answers may come from a later operation; a shard closed meanwhile answers NOT_COORDINATOR.
      void r.runtime.submit((now) => run(r.runtime.shard, now, done)).then(() => { if (r.runtime.closed) done(onError(ErrorCode.NOT_COORDINATOR)); });
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
    const rt = this.runtimes.get(partition);
    if (!rt) return Promise.resolve();
    return rt.submit(() => {
      rt.shard.replayTransactionMarker(Number(producerId), commit);
      return { records: [], replies: [], onAppendFailure: [] };
    });
  }

  fetchOffsets(groupId: string, topics: { name: string; partitionIndexes: number[] }[] | null, member?: { memberId: string | null; memberEpoch: number }, requireStable = false):
    { errorCode: number; topics: { name: string; partitions: FetchedOffset[] }[] } {
    const r = this.route(groupId);
    if ('errorCode' in r) return { errorCode: r.errorCode, topics: [] };
    return r.runtime.shard.fetchOffsets(groupId, topics, member, requireStable);
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
    return r.runtime.shard.describeGroup(groupId);
  }

  /** Groups of every loaded shard; errorCode COORDINATOR_LOAD_IN_PROGRESS while any shard loads. */
  list(statesFilter: string[], typesFilter: string[]): { errorCode: number; groups: ReturnType<GroupCoordinatorShard['listGroups']> } {
    let errorCode = 0;
    const groups = [];
    for (const rt of this.runtimes.values()) {
      if (rt.loading) { errorCode = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS; continue; }
      groups.push(...rt.shard.listGroups(statesFilter, typesFilter));
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
    return r.runtime.shard.describeConsumerGroup(groupId, topics);
  }

  /** The shard of a group, once loaded (for the KIP-848 handlers and tests). */
  runtimeFor(groupId: string): ShardRuntime | null {
    const r = this.route(groupId);
    return 'runtime' in r ? r.runtime : null;
  }

  close(): void {
    for (const rt of this.runtimes.values()) rt.close();
    this.runtimes.clear();
  }
}
