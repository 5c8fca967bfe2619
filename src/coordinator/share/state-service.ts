// The share coordinator service: which `__share_group_state` partition holds a share-partition's
// state (Kafka's partitionFor over the key "group:topicId:partition"), its shards on the coordinator
// runtime (loaded for the partitions led here, like the group coordinator's), and one promise per
// request kind (InitializeShareGroupState, ReadShareGroupState, WriteShareGroupState,
// DeleteShareGroupState, ReadShareGroupStateSummary). NOT_COORDINATOR and
// COORDINATOR_LOAD_IN_PROGRESS are answered here.
import { ErrorCode } from '../../protocol/index.js';
import type { Clock } from '../../util/index.js';
import type { Scheduler } from '../../replication/index.js';
import { CoordinatorRuntime, type CoordinatorLog, type RuntimeLogger } from '../runtime/runtime.js';
import { partitionForGroup } from '../group/service.js';
import { decodeShareStateRecord, encodeShareStateRecord, shareCoordinatorKey, type SharePartitionKey, type ShareStateRecord } from './state-records.js';
import { ShareCoordinatorShard, type ReadResult, type ShareCoordinatorConfig, type ShareStateEffects, type WriteParams } from './state-shard.js';

export const SHARE_STATE_TOPIC = '__share_group_state';

export interface ShareCoordinatorDeps {
  clock: Clock;
  scheduler: Scheduler;
  config: ShareCoordinatorConfig;
  numPartitions: number;
  log: CoordinatorLog;
  logger: RuntimeLogger;
}

export class ShareCoordinatorService {
  readonly runtime: CoordinatorRuntime<ShareStateRecord, ShareCoordinatorShard, ShareStateEffects>;

  constructor(readonly deps: ShareCoordinatorDeps) {
    this.runtime = new CoordinatorRuntime({
      name: 'share coordinator', log: deps.log, clock: deps.clock, scheduler: deps.scheduler, logger: deps.logger,
      newShard: () => new ShareCoordinatorShard(deps.config), encode: encodeShareStateRecord, decode: decodeShareStateRecord,
    });
  }

  partitionFor(k: SharePartitionKey): number { return partitionForGroup(shareCoordinatorKey(k), this.deps.numPartitions); }

  loadShard(partition: number, epoch: number): Promise<void> { return this.runtime.loadShard(partition, epoch); }
  unloadShard(partition: number, epoch?: number): void { this.runtime.unloadShard(partition, epoch); }
  ensureLoading(partition: number): void { this.runtime.followLeadership(partition); }
  syncPartitions(): void { for (let p = 0; p < this.deps.numPartitions; p++) this.ensureLoading(p); }

  /** Whether this broker serves the key's partition now (else the caller goes to its leader). */
  isLocal(k: SharePartitionKey): boolean { return this.deps.log.isLeader(this.partitionFor(k)); }

  private op(k: SharePartitionKey, run: (shard: ShareCoordinatorShard, nowMs: number, done: (code: number) => void) => ShareStateEffects): Promise<number> {
    const partition = this.partitionFor(k);
    this.ensureLoading(partition);
    if (!this.runtime.activeShard(partition)) return Promise.resolve(this.runtime.errorFor(partition));
    return new Promise<number>((resolve) => {
      let answered = false;
      const done = (code: number) => { if (!answered) { answered = true; resolve(code); } };
      void this.runtime.write(partition, (shard, now) => run(shard, now, done)).then((code) => { if (code !== ErrorCode.NONE) done(code); });
    });
  }

  initialize(k: SharePartitionKey, stateEpoch: number, startOffset: number): Promise<number> {
    return this.op(k, (s, now, done) => s.initialize(now, k, stateEpoch, startOffset, done));
  }

  write(p: WriteParams): Promise<number> { return this.op(p, (s, now, done) => s.write(now, p, done)); }

  delete(k: SharePartitionKey): Promise<number> { return this.op(k, (s, _now, done) => s.delete(k, done)); }

  /**
   * ReadShareGroupState: with a leader epoch (a share-partition leader taking over) the stored
   * leader epoch is raised first, fencing the previous leader's writes; -1 only reads.
   */
  read(k: SharePartitionKey, leaderEpoch = -1): Promise<ReadResult> {
    const partition = this.partitionFor(k);
    this.ensureLoading(partition);
    const shard = this.runtime.activeShard(partition);
    if (!shard) return Promise.resolve({ errorCode: this.runtime.errorFor(partition), errorMessage: null });
    if (leaderEpoch < 0) return Promise.resolve(shard.read(k));
    return new Promise<ReadResult>((resolve) => {
      let answered = false;
      const done = (r: ReadResult) => { if (!answered) { answered = true; resolve(r); } };
      void this.runtime.write(partition, (s) => s.readForLeader(k, leaderEpoch, done))
        .then((code) => { if (code !== ErrorCode.NONE) done({ errorCode: code, errorMessage: null }); });
    });
  }

  /** ReadShareGroupStateSummary: the start offset and state epoch (the batches are left out). */
  summary(k: SharePartitionKey): Promise<ReadResult> {
    return this.read(k, -1).then((r) => ({ errorCode: r.errorCode, errorMessage: r.errorMessage, ...(r.errorCode === ErrorCode.NONE ? { stateEpoch: r.stateEpoch!, startOffset: r.startOffset!, leaderEpoch: r.leaderEpoch! } : {}) }));
  }

  /** Resolves when every shard loading now has loaded. */
  loaded(): Promise<void> { return this.runtime.loaded(); }
  close(): void { this.runtime.close(); }
}
