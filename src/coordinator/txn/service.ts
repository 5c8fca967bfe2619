// The transaction coordinator service: which `__transaction_state` shard owns a transactional id
// (Kafka's partitionFor), loading shards for the partitions led here (the partition's leader epoch
// is the coordinator epoch stamped on markers), and one promise-returning method per request for
// the handlers. NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS are answered here.
//
// Producer ids: the shard takes a synchronous generator, the broker's allocator is asynchronous
// (a block of ids is a metadata record). So before an InitProducerId runs, the service makes sure a
// spare id is on hand for every InitProducerId in the queue; ids an operation did not need stay
// spare for the next one, so none is wasted.
import { ErrorCode, type DescribeTransactionsResponseTransactionState, type ListTransactionsResponse } from '../../protocol/index.js';
import { assert, limits, type Clock } from '../../util/index.js';
import type { Scheduler } from '../../replication/index.js';
import type { CoordinatorLog, RuntimeLogger } from '../runtime/runtime.js';
import { partitionForTransactionalId } from './partition.js';
import { TxnShardRuntime, type MarkerSender } from './runtime.js';
import {
  TransactionCoordinatorShard, type AddOffsetsParams, type AddPartitionsParams, type EndTxnParams, type InitProducerIdParams,
  type InitProducerIdResult, type ListTransactionsFilters, type PartitionError, type TxnCoordinatorConfig, type TxnEffects,
} from './shard.js';
import { NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TXN_STATES } from './records.js';

export interface TxnServiceDeps {
  clock: Clock;
  scheduler: Scheduler;
  config: TxnCoordinatorConfig;
  numPartitions: number;
  log: CoordinatorLog;
  markers: MarkerSender;
  /** The leader epoch of a `__transaction_state` partition led here (the coordinator epoch). */
  coordinatorEpoch(partition: number): number;
  /** A fresh producer id from the cluster's allocator. */
  allocateProducerId(): Promise<bigint>;
  logger: RuntimeLogger;
}

type Routed = { runtime: TxnShardRuntime } | { errorCode: number };

export class TxnCoordinatorService {
  private readonly runtimes = new Map<number, TxnShardRuntime>();
  private readonly spareProducerIds: bigint[] = [];
  private initsQueued = 0;

  constructor(readonly deps: TxnServiceDeps) {}

  partitionFor(transactionalId: string): number { return partitionForTransactionalId(transactionalId, this.deps.numPartitions); }

  /** Starts loading the partition if it is led here; closes a shard whose partition moved away. */
  ensureLoading(partition: number): TxnShardRuntime | null {
    if (!this.deps.log.isLeader(partition)) {
      this.runtimes.get(partition)?.close();
      this.runtimes.delete(partition);
      return null;
    }
    const epoch = this.deps.coordinatorEpoch(partition);
    let rt = this.runtimes.get(partition);
    if (rt && rt.shard.coordinatorEpoch !== epoch) {
      // Led again under a newer epoch: a fresh load, as Kafka's onElection.
      rt.close();
      rt = undefined;
    }
    if (!rt) {
      const shard = new TransactionCoordinatorShard(this.deps.config, epoch, () => this.takeProducerId());
      rt = new TxnShardRuntime(partition, shard, this.deps.log, this.deps.markers, this.deps.clock, this.deps.scheduler, this.deps.logger);
      this.runtimes.set(partition, rt);
    }
    return rt;
  }

  /** Loads every partition led here and drops the others (after a metadata change). */
  syncPartitions(): void {
    for (let p = 0; p < this.deps.numPartitions; p++) this.ensureLoading(p);
  }

  private takeProducerId(): bigint {
    const id = this.spareProducerIds.shift();
    assert(id !== undefined, 'an InitProducerId ran without a spare producer id');
    return id;
  }

  private route(transactionalId: string): Routed {
    const rt = this.ensureLoading(this.partitionFor(transactionalId));
    if (!rt) return { errorCode: ErrorCode.NOT_COORDINATOR };
    if (rt.loading) return { errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS };
    return { runtime: rt };
  }

  /** Runs an operation on the id's shard; resolves with what its reply carried. */
  private op<T>(transactionalId: string, onError: (code: number) => T,
    run: (shard: TransactionCoordinatorShard, nowMs: number, done: (v: T) => void) => TxnEffects): Promise<T> {
    const r = this.route(transactionalId);
    if ('errorCode' in r) return Promise.resolve(onError(r.errorCode));
    return new Promise<T>((resolve) => {
      let answered = false;
      const done = (v: T) => { if (!answered) { answered = true; resolve(v); } };
      void r.runtime.submit((now) => run(r.runtime.shard, now, done)).then(() => { if (!answered) done(onError(r.runtime.closed ? ErrorCode.NOT_COORDINATOR : ErrorCode.UNKNOWN_SERVER_ERROR)); });
    });
  }

  async initProducerId(p: InitProducerIdParams): Promise<InitProducerIdResult> {
    const failed = (errorCode: number): InitProducerIdResult => ({ errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });
    const pre = this.route(p.transactionalId);
    if ('errorCode' in pre) return failed(pre.errorCode);
    this.initsQueued++;
    try {
      while (this.spareProducerIds.length < Math.min(this.initsQueued, limits.spareProducerIdsMax)) {
        this.spareProducerIds.push(await this.deps.allocateProducerId());
      }
    } catch (err) {
      this.initsQueued--;
      this.deps.logger.warn(`no producer id for ${p.transactionalId}: ${err instanceof Error ? err.message : String(err)}`);
      return failed(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    }
    try {
      return await this.op(p.transactionalId, failed, (s, now, done) => s.initProducerId(now, p, done));
    } finally {
      this.initsQueued--;
    }
  }

  addPartitions(p: AddPartitionsParams): Promise<number> {
    return this.op(p.transactionalId, (code) => code, (s, now, done) => s.addPartitionsToTxn(now, p, done));
  }

  /** AddPartitionsToTxn verifyOnly (and the produce path's check): nothing is written. */
  verifyPartitions(p: AddPartitionsParams): PartitionError[] {
    const r = this.route(p.transactionalId);
    if ('errorCode' in r) return p.partitions.map((tp) => ({ ...tp, errorCode: r.errorCode }));
    return r.runtime.shard.verifyPartitionsInTxn(p);
  }

  addOffsets(p: AddOffsetsParams): Promise<number> {
    return this.op(p.transactionalId, (code) => code, (s, now, done) => s.addOffsetsToTxn(now, p, done));
  }

  endTxn(p: EndTxnParams): Promise<number> {
    return this.op(p.transactionalId, (code) => code, (s, now, done) => s.endTxn(now, p, done));
  }

  describe(transactionalId: string): DescribeTransactionsResponseTransactionState {
    const r = this.route(transactionalId);
    if ('errorCode' in r) {
      return {
        errorCode: r.errorCode, transactionalId, transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1n,
        producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH, topics: [],
      };
    }
    return r.runtime.shard.describeTransaction(transactionalId);
  }

  /** Every loaded shard's transactions; COORDINATOR_LOAD_IN_PROGRESS while one still loads. */
  list(f: ListTransactionsFilters): Pick<ListTransactionsResponse, 'errorCode' | 'unknownStateFilters' | 'transactionStates'> {
    let errorCode: number = ErrorCode.NONE;
    let unknownStateFilters: string[] = f.stateFilters.filter((s) => !(TXN_STATES as readonly string[]).includes(s));
    const transactionStates: ListTransactionsResponse['transactionStates'] = [];
    const now = this.deps.clock.nowMs();
    for (const rt of this.runtimes.values()) {
      if (rt.closed) continue;
      if (rt.loading) { errorCode = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS; continue; }
      const part = rt.shard.listTransactions(now, f);
      unknownStateFilters = part.unknownStateFilters;
      transactionStates.push(...part.transactionStates);
    }
    return { errorCode, unknownStateFilters, transactionStates };
  }

  /** Resolves when every shard has finished loading (tests, and a broker that wants to wait). */
  async loaded(): Promise<void> { await Promise.all([...this.runtimes.values()].map((rt) => rt.loaded)); }

  close(): void {
    for (const rt of this.runtimes.values()) rt.close();
    this.runtimes.clear();
  }
}
