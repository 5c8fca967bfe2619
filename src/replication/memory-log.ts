// A LocalLog kept in memory: batches validated, offsets and the leader epoch stamped, reads by
// offset and by time. Not durable: it serves tests and the development server until the storage
// engine's PartitionLog is wired in behind the same interface.
import { iterateBatches, iterateRecords, parseControlRecordType, RecordBatchView, validateBatch } from '../records/index.js';
import type { ActiveProducer, AppendOrigin, AppendResult, LocalLog } from './partition.js';

export class MemoryLog implements LocalLog {
  batches: Buffer[] = [];
  logStartOffset = 0;
  logEndOffset = 0;
  highWatermarks: number[] = [];
  /** Producer id → what DescribeProducers reports, and each open transaction's first offset. */
  private readonly producers = new Map<number, ActiveProducer>();
  private readonly aborted: { producerId: number; firstOffset: number; lastOffset: number }[] = [];

  async appendAsLeader(records: Buffer, leaderEpoch: number, origin: AppendOrigin = 'client'): Promise<AppendResult> {
    const first = this.logEndOffset;
    for (const view of iterateBatches(records)) {
      validateBatch(view);
      if (view.isControl && origin === 'client') throw Object.assign(new Error('clients may not write control batches'), { code: 'INVALID_RECORD' });
      const copy = Buffer.from(view.bytes());
      const v = new RecordBatchView(copy);
      v.baseOffset = this.logEndOffset;
      v.partitionLeaderEpoch = leaderEpoch;
      this.batches.push(copy);
      this.logEndOffset = v.lastOffset + 1;
      this.trackProducer(v);
    }
    return { firstOffset: first, lastOffset: this.logEndOffset - 1, logAppendTimeMs: -1 };
  }

  private trackProducer(v: RecordBatchView): void {
    if (v.producerId < 0) return;
    let p = this.producers.get(v.producerId);
    if (!p) this.producers.set(v.producerId, p = { producerId: v.producerId, producerEpoch: v.producerEpoch, lastSequence: -1, lastTimestamp: -1, coordinatorEpoch: -1, currentTxnStartOffset: -1 });
    p.producerEpoch = Math.max(p.producerEpoch, v.producerEpoch);
    p.lastTimestamp = Math.max(p.lastTimestamp, v.maxTimestamp);
    if (v.isControl) {
      let type = 'UNKNOWN';
      for (const r of iterateRecords(v, v.body())) { type = parseControlRecordType(r.key); break; }
      if ((type === 'ABORT' || type === 'COMMIT') && p.currentTxnStartOffset >= 0) {
        if (type === 'ABORT') this.aborted.push({ producerId: v.producerId, firstOffset: p.currentTxnStartOffset, lastOffset: v.lastOffset });
        p.currentTxnStartOffset = -1;
      }
      return;
    }
    if (v.baseSequence >= 0) p.lastSequence = (v.baseSequence + v.lastOffsetDelta) % 0x80000000;
    if (v.isTransactional && p.currentTxnStartOffset < 0) p.currentTxnStartOffset = v.baseOffset;
  }

  firstUnstableOffset(): number | null {
    let min: number | null = null;
    for (const p of this.producers.values()) if (p.currentTxnStartOffset >= 0 && (min === null || p.currentTxnStartOffset < min)) min = p.currentTxnStartOffset;
    return min;
  }

  abortedTransactions(from: number, upTo: number): { producerId: number; firstOffset: number }[] {
    return this.aborted.filter((t) => t.lastOffset >= from && t.firstOffset < upTo).map((t) => ({ producerId: t.producerId, firstOffset: t.firstOffset }));
  }

  activeProducers(): ActiveProducer[] { return [...this.producers.values()].map((p) => ({ ...p })); }

  async read(offset: number, maxBytes: number, upTo: number): Promise<Buffer> {
    const out: Buffer[] = [];
    let size = 0;
    for (const b of this.batches) {
      const v = new RecordBatchView(b);
      if (v.lastOffset < offset || v.baseOffset >= upTo) continue;
      if (out.length > 0 && size + b.length > maxBytes) break;
      out.push(b);
      size += b.length;
    }
    return Buffer.concat(out);
  }

  async offsetForTimestamp(ts: number) {
    for (const b of this.batches) {
      const v = new RecordBatchView(b);
      if (v.maxTimestamp >= ts) return { offset: v.baseOffset, timestamp: v.maxTimestamp, leaderEpoch: v.partitionLeaderEpoch };
    }
    return null;
  }

  async maxTimestampOffset() {
    let best: { offset: number; timestamp: number; leaderEpoch: number } | null = null;
    for (const b of this.batches) {
      const v = new RecordBatchView(b);
      if (!best || v.maxTimestamp > best.timestamp) best = { offset: v.lastOffset, timestamp: v.maxTimestamp, leaderEpoch: v.partitionLeaderEpoch };
    }
    return best;
  }

  updateHighWatermark(offset: number): void { this.highWatermarks.push(offset); }

  async deleteRecordsBefore(offset: number): Promise<number> {
    this.logStartOffset = Math.max(this.logStartOffset, offset);
    this.batches = this.batches.filter((b) => new RecordBatchView(b).lastOffset >= this.logStartOffset);
    return this.logStartOffset;
  }

  endOffsetForEpoch(epoch: number) {
    let best: { leaderEpoch: number; endOffset: number } | null = null;
    for (const b of this.batches) {
      const v = new RecordBatchView(b);
      if (v.partitionLeaderEpoch <= epoch) best = { leaderEpoch: v.partitionLeaderEpoch, endOffset: v.lastOffset + 1 };
    }
    return best;
  }
}
