// In-memory stores for tests and the simulator. The log store keeps written-but-unsynced changes
// apart, and a crash keeps only a random prefix of them, as a power cut does to a page cache.
import { endOffsetOf, sliceBatch } from '../core/batch.js';
import type { EntryBatch, LogOp, QuorumState, Snapshot } from '../core/types.js';
import type { LoadedLog, LogStore, QuorumStateStore } from './ports.js';

export class MemoryQuorumStateStore implements QuorumStateStore {
  private state: QuorumState | undefined;
  writes = 0;
  read(): QuorumState | undefined { return this.state; }
  write(state: QuorumState): void { this.state = { ...state }; this.writes++; }
}

export class MemoryLogStore implements LogStore {
  private snapshot: Snapshot | undefined;
  private batches: EntryBatch[] = [];
  private pending: LogOp[] = [];
  syncs = 0;

  load(): LoadedLog {
    return { snapshot: this.snapshot, batches: [...this.batches] };
  }

  apply(ops: readonly LogOp[]): void {
    for (const op of ops) this.pending.push(op);
  }

  sync(): void {
    for (const op of this.pending) this.fold(op);
    this.pending = [];
    this.syncs++;
  }

  close(): void {}

  /** Lose unsynced changes, except the first `keep` of them, which reached the disk anyway. */
  crash(keep: number): void {
    const kept = this.pending.slice(0, Math.max(0, keep));
    this.pending = [];
    for (const op of kept) this.fold(op);
  }

  get unsyncedOps(): number { return this.pending.length; }

  private fold(op: LogOp): void {
    switch (op.kind) {
      case 'append': {
        for (const b of op.batches) {
          const last = this.batches[this.batches.length - 1];
          const expected = last !== undefined ? endOffsetOf(last) : (this.snapshot?.id.endOffset ?? 0);
          if (b.baseOffset !== expected) throw new Error(`memory log: append at ${b.baseOffset}, expected ${expected}`);
          this.batches.push(b);
        }
        return;
      }
      case 'truncate':
        this.batches = keepRange(this.batches, -Infinity, op.offset);
        return;
      case 'snapshot':
        this.snapshot = op.snapshot;
        this.batches = op.replaceLog ? [] : keepRange(this.batches, op.snapshot.id.endOffset, Infinity);
        return;
    }
  }
}

/** The entries of `batches` in [from, to), batches cut where needed. */
function keepRange(batches: readonly EntryBatch[], from: number, to: number): EntryBatch[] {
  const out: EntryBatch[] = [];
  for (const b of batches) {
    if (endOffsetOf(b) <= from || b.baseOffset >= to) continue;
    out.push(sliceBatch(b, from, to));
  }
  return out;
}
