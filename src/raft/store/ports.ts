// The two durable ports of a Raft node: the quorum-state file and the log (with its snapshots).
// The core never calls them; the driver (or the simulator) replays each Ready onto them.
import type { EntryBatch, LogOp, QuorumState, Snapshot } from '../core/types.js';

export interface QuorumStateStore {
  read(): QuorumState | undefined;
  /** Durable when it returns: a vote or an epoch change is acted on only after this. */
  write(state: QuorumState): void;
}

export interface LoadedLog {
  readonly snapshot: Snapshot | undefined;
  readonly batches: readonly EntryBatch[];
}

export interface LogStore {
  /** What survived: the latest snapshot and the entries above it. */
  load(): LoadedLog;
  /** Apply changes in order; they may be lost in a crash until `sync()`. */
  apply(ops: readonly LogOp[]): void;
  sync(): void;
  /**
   * Like sync, off the event loop: what was applied before the call is durable when `done` runs.
   * Optional; a driver falls back to `sync` without it.
   */
  syncAsync?(done: (err: Error | null) => void): void;
  close(): void;
}
