// The transaction coordinator service: which `__transaction_state` shard owns a transactional id
// (Kafka's partitionFor), its shards on the coordinator runtime (loaded for the partitions led
// here; the partition's leader epoch is the coordinator epoch stamped on markers), and one
// promise-returning method per request for the handlers. NOT_COORDINATOR /
// COORDINATOR_LOAD_IN_PROGRESS are answered here.
//
// Producer ids: the shard takes a synchronous generator, the broker's allocator is asynchronous
// (a block of ids is a metadata record). So before an InitProducerId or a transaction version 2
// EndTxn (which rotates the producer id when the epochs ran out) runs, the service makes sure a
// spare id is on hand for every such operation in the queue; ids an operation did not need stay
// spare for the next one, so none is wasted.
import { ErrorCode, type DescribeTransactionsResponseTransactionState, type ListTransactionsResponse } from '../../protocol/index.js';
import { assert, limits, type Clock } from '../../util/index.js';
import type { Scheduler } from '../../replication/index.js';
import { CoordinatorRuntime, type CoordinatorLog, type RuntimeLogger } from '../runtime/runtime.js';
import { partitionForTransactionalId } from './partition.js';
import { TxnMarkerChannel, type MarkerSender } from './markers.js';
import {
  TransactionCoordinatorShard, type AddOffsetsParams, type AddPartitionsParams, type EndTxnParams, type EndTxnResult, type InitProducerIdParams,
  type InitProducerIdResult, type ListTransactionsFilters, type PartitionError, type TxnCoordinatorConfig, type TxnEffects,
} from './shard.js';
import { NO_PRODUCER_EPOCH, NO_PRODUCER_ID, TXN_STATES, decodeTxnRecord, encodeTxnRecord, type TxnRecord } from './records.js';

export interface TxnServiceDeps {
  clock: Clock;
  scheduler: Scheduler;
  config: TxnCoordinatorConfig;
  numPartitions: number;
  log: CoordinatorLog;
  markers: MarkerSender;
  /** A fresh producer id from the cluster's allocator. */
  allocateProducerId(): Promise<bigint>;
  logger: RuntimeLogger;
}

type Routed = { partition: number; shard: TransactionCoordinatorShard } | { errorCode: number };

export class TxnCoordinatorService {
  readonly runtime: CoordinatorRuntime<TxnRecord, TransactionCoordinatorShard, TxnEffects>;
  private readonly spareProducerIds: bigint[] = [];
  /** Queued operations that may take a producer id (InitProducerId, TV2 EndTxn). */
  private idTakersQueued = 0;

  constructor(readonly deps: TxnServiceDeps) {
    let channel: TxnMarkerChannel | null = null;
    this.runtime = new CoordinatorRuntime({
      name: 'transaction coordinator', log: deps.log, clock: deps.clock, scheduler: deps.scheduler, logger: deps.logger,
      newShard: (_partition, epoch) => new TransactionCoordinatorShard(deps.config, epoch, () => this.takeProducerId()),
      // Kafka enforces uncompressed batches on this topic (the runtime writes them uncompressed).
      encode: (r) => encodeTxnRecord(r, deps.config.logValueVersion),
      decode: decodeTxnRecord,
      onCommitted: (partition, _epoch, e) => { for (const m of e.markers) void channel!.send(partition, m); },
    });
    channel = new TxnMarkerChannel(this.runtime, deps.markers, deps.scheduler, deps.logger);
  }

  partitionFor(transactionalId: string): number { return partitionForTransactionalId(transactionalId, this.deps.numPartitions); }

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

  private takeProducerId(): bigint {
    const id = this.spareProducerIds.shift();
    assert(id !== undefined, 'an InitProducerId ran without a spare producer id');
    return id;
  }

  private route(transactionalId: string): Routed {
    const partition = this.partitionFor(transactionalId);
    this.ensureLoading(partition);
    const shard = this.runtime.activeShard(partition);
    return shard ? { partition, shard } : { errorCode: this.runtime.errorFor(partition) };
  }

  /** Runs an operation on the id's shard; resolves with what its reply carried. */
  private op<T>(transactionalId: string, onError: (code: number) => T,
    run: (shard: TransactionCoordinatorShard, nowMs: number, done: (v: T) => void) => TxnEffects): Promise<T> {
    const r = this.route(transactionalId);
    if ('errorCode' in r) return Promise.resolve(onError(r.errorCode));
    return new Promise<T>((resolve) => {
      let answered = false;
      const done = (v: T) => { if (!answered) { answered = true; resolve(v); } };
      void this.runtime.write(r.partition, (shard, now) => run(shard, now, done)).then((code) => { if (!answered) done(onError(code || ErrorCode.UNKNOWN_SERVER_ERROR)); });
    });
  }

  /** Runs `run` once a spare producer id is on hand for it (and for every other id taker queued). */
  private async withSpareProducerId<T>(transactionalId: string, failed: (code: number) => T, run: () => Promise<T>): Promise<T> {
    const pre = this.route(transactionalId);
    if ('errorCode' in pre) return failed(pre.errorCode);
    this.idTakersQueued++;
    try {
      while (this.spareProducerIds.length < Math.min(this.idTakersQueued, limits.spareProducerIdsMax)) {
        this.spareProducerIds.push(await this.deps.allocateProducerId());
      }
    } catch (err) {
      this.idTakersQueued--;
      this.deps.logger.warn(`no producer id for ${transactionalId}: ${err instanceof Error ? err.message : String(err)}`);
      return failed(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    }
    try {
      return await run();
    } finally {
      this.idTakersQueued--;
    }
  }

  initProducerId(p: InitProducerIdParams): Promise<InitProducerIdResult> {
    const failed = (errorCode: number): InitProducerIdResult => ({ errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });
    return this.withSpareProducerId(p.transactionalId, failed, () => this.op(p.transactionalId, failed, (s, now, done) => s.initProducerId(now, p, done)));
  }

  addPartitions(p: AddPartitionsParams): Promise<number> {
    return this.op(p.transactionalId, (code) => code, (s, now, done) => s.addPartitionsToTxn(now, p, done));
  }

  /** AddPartitionsToTxn verifyOnly (and the produce path's check): nothing is written. */
  verifyPartitions(p: AddPartitionsParams): PartitionError[] {
    const r = this.route(p.transactionalId);
    if ('errorCode' in r) return p.partitions.map((tp) => ({ ...tp, errorCode: r.errorCode }));
    return r.shard.verifyPartitionsInTxn(p);
  }

  addOffsets(p: AddOffsetsParams): Promise<number> {
    return this.op(p.transactionalId, (code) => code, (s, now, done) => s.addOffsetsToTxn(now, p, done));
  }

  /** EndTxn; a version 2 client's answer carries the producer id and epoch it continues with. */
  endTxn(p: EndTxnParams): Promise<EndTxnResult> {
    const failed = (errorCode: number): EndTxnResult => ({ errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });
    const run = () => this.op(p.transactionalId, failed,
      (s, now, done) => s.endTxn(now, p, (errorCode, producerId, producerEpoch) => done({ errorCode, producerId, producerEpoch })));
    return (p.clientTransactionVersion ?? 0) >= 2 ? this.withSpareProducerId(p.transactionalId, failed, run) : run();
  }

  describe(transactionalId: string): DescribeTransactionsResponseTransactionState {
    const r = this.route(transactionalId);
    if ('errorCode' in r) {
      return {
        errorCode: r.errorCode, transactionalId, transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1n,
        producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH, topics: [],
      };
    }
    return r.shard.describeTransaction(transactionalId);
  }

  /** Every loaded shard's transactions; COORDINATOR_LOAD_IN_PROGRESS while one still loads. */
  list(f: ListTransactionsFilters): Pick<ListTransactionsResponse, 'errorCode' | 'unknownStateFilters' | 'transactionStates'> {
    let errorCode: number = ErrorCode.NONE;
    let unknownStateFilters: string[] = f.stateFilters.filter((s) => !(TXN_STATES as readonly string[]).includes(s));
    const transactionStates: ListTransactionsResponse['transactionStates'] = [];
    const now = this.deps.clock.nowMs();
    for (const s of this.runtime.shards()) {
      if (s.loading) { errorCode = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS; continue; }
      const part = s.shard.listTransactions(now, f);
      unknownStateFilters = part.unknownStateFilters;
      transactionStates.push(...part.transactionStates);
    }
    return { errorCode, unknownStateFilters, transactionStates };
  }

  /** Resolves when every shard has finished loading (tests, and a broker that wants to wait). */
  loaded(): Promise<void> { return this.runtime.loaded(); }

  close(): void { this.runtime.close(); }
}
