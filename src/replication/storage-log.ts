// The storage engine's PartitionLog behind the replica manager's LocalLog port: the one log every
// partition has, durable on a real disk or, in tests and the development server without a data
// directory, on a MemoryFileSystem.
import type { PartitionLog, RecordCheck } from '../storage/index.js';
import type { ActiveProducer, AppendOrigin, AppendResult, LocalLog } from './partition.js';

/** A PartitionLog behind the replica manager's LocalLog port (reads are synchronous there). */
export class StorageLog implements LocalLog {
  constructor(readonly log: PartitionLog) {}
  get logStartOffset(): number { return this.log.logStartOffset; }
  get localLogStartOffset(): number { return this.log.localLogStartOffset; }
  get tieredLog(): PartitionLog { return this.log; }
  get logEndOffset(): number { return this.log.logEndOffset; }
  get durableEndOffset(): number { return this.log.durableEndOffset; }
  get highWatermark(): number { return this.log.highWatermark; }
  whenDurable(): Promise<void> { return this.log.whenDurable(); }
  appendAsLeader(records: Buffer, leaderEpoch: number, origin?: AppendOrigin, check?: RecordCheck | null, current?: (() => boolean) | null): Promise<AppendResult> {
    return this.log.appendAsLeader(records, leaderEpoch, origin, check, current);
  }
  async read(offset: number, maxBytes: number, upTo: number, minOneBatch: boolean, alloc?: (bytes: number) => Buffer): Promise<Buffer> { return this.log.read(offset, maxBytes, upTo, minOneBatch, alloc); }
  offsetForTimestamp(ts: number) { return this.log.offsetForTimestamp(ts); }
  maxTimestampOffset() { return this.log.maxTimestampOffset(); }
  updateHighWatermark(offset: number): void { this.log.updateHighWatermark(offset); }
  async deleteRecordsBefore(offset: number): Promise<number> { return this.log.deleteRecordsBefore(offset); }
  assignEpochStartOffset(epoch: number, startOffset: number): void { this.log.epochCache.assign(epoch, startOffset); }
  endOffsetForEpoch(epoch: number) { return this.log.endOffsetForEpoch(epoch); }
  firstUnstableOffset(): number | null { return this.log.producerState.firstUnstableOffset(); }
  abortedTransactions(from: number, upTo: number) { return this.log.abortedTransactions(from, upTo); }
  appendAsFollower(records: Buffer): AppendResult { return this.log.appendAsFollower(records); }
  truncateTo(offset: number): void { this.log.truncateTo(offset); }
  truncateFullyAndStartAt(offset: number, logStartOffset?: number): void { this.log.truncateFullyAndStartAt(offset, logStartOffset); }
  get latestEpoch(): number { return this.log.epochCache.latestEpoch; }
  activeProducers(): ActiveProducer[] {
    return [...this.log.producerState.producers.values()].map((p) => ({
      producerId: p.producerId, producerEpoch: p.epoch, lastSequence: p.batches.at(-1)?.lastSeq ?? -1, lastTimestamp: p.lastTimestamp,
      coordinatorEpoch: p.coordinatorEpoch, currentTxnStartOffset: p.currentTxnFirstOffset,
    }));
  }
}
