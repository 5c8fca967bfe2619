// A LocalLog kept in memory: batches validated, offsets and the leader epoch stamped, reads by
// offset and by time. Not durable: it serves tests and the development server until the storage
// engine's PartitionLog is wired in behind the same interface.
import { iterateBatches, RecordBatchView, validateBatch } from '../records/index.js';
import type { LocalLog, AppendResult } from './partition.js';

export class MemoryLog implements LocalLog {
  batches: Buffer[] = [];
  logStartOffset = 0;
  logEndOffset = 0;
  highWatermarks: number[] = [];

  async appendAsLeader(records: Buffer, leaderEpoch: number): Promise<AppendResult> {
    const first = this.logEndOffset;
    for (const view of iterateBatches(records)) {
      validateBatch(view);
      const copy = Buffer.from(view.bytes());
      const v = new RecordBatchView(copy);
      v.baseOffset = this.logEndOffset;
      v.partitionLeaderEpoch = leaderEpoch;
      this.batches.push(copy);
      this.logEndOffset = v.lastOffset + 1;
    }
    return { firstOffset: first, lastOffset: this.logEndOffset - 1, logAppendTimeMs: -1 };
  }

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
