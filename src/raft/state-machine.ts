// The contract between Raft and what it replicates (the controller, later): committed entries go
// in, in log order; a snapshot comes out on request; a snapshot from the leader replaces the state.
import type { Entry, EntryBatch, Snapshot } from './core/types.js';

export interface ReplicatedStateMachine {
  /** Committed data entries, in offset order, each exactly once per incarnation. */
  apply(entries: readonly Entry[]): void;
  /**
   * Optional: the same entries as the log keeps them (data batches only, see core/batch.ts), so a
   * state machine that can read values in place needs no object per entry. Used instead of apply
   * when present.
   */
  applyBatches?(batches: readonly EntryBatch[]): void;
  /**
   * Optional: every committed entry up to `offset` is applied, control records (leader changes,
   * voter changes) included. They change no state, but a state machine that reports its position
   * (the metadata log, as Kafka's MetadataLoader does) counts them.
   */
  appliedThrough?(offset: number, epoch: number): void;
  /** The state as of the last applied entry. */
  snapshot(): Uint8Array;
  /** Replace all state with a snapshot (on start, or when the leader sent one). */
  restore(snapshot: Snapshot): void;
}
