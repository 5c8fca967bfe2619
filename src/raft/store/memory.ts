// In-memory stores for tests and the simulator. The log store keeps written-but-unsynced changes
// apart, and a crash keeps only a random prefix of them, as a power cut does to a page cache.
import type { Entry, LogOp, QuorumState, Snapshot } from '../core/types.js';
import type { LoadedLog, LogStore, QuorumStateStore } from './ports.js';

export class MemoryQuorumStateStore implements QuorumStateStore {
  private state: QuorumState | undefined;
  writes = 0;
  read(): QuorumState | undefined { return this.state; }
  write(state: QuorumState): void { this.state = { ...state }; this.writes++; }
}

export class MemoryLogStore implements LogStore {
  private snapshot: Snapshot | undefined;
  private entries: Entry[] = [];
  private pending: LogOp[] = [];
  syncs = 0;

  load(): LoadedLog {
    return { snapshot: this.snapshot, entries: [...this.entries] };
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
        for (const e of op.entries) {
          const last = this.entries[this.entries.length - 1];
          const expected = last !== undefined ? last.offset + 1 : (this.snapshot?.id.endOffset ?? 0);
          if (e.offset !== expected) throw new Error(`memory log: append at ${e.offset}, expected ${expected}`);
          this.entries.push(e);
        }
        return;
      }
      case 'truncate':
        this.entries = this.entries.filter((e) => e.offset < op.offset);
        return;
      case 'snapshot':
        this.snapshot = op.snapshot;
        this.entries = op.replaceLog ? [] : this.entries.filter((e) => e.offset >= op.snapshot.id.endOffset);
        return;
    }
  }
}
