// The raft room's door: the pure core (KRaft semantics), its persistence ports with memory and file
// implementations, the replicated state machine contract, and the deterministic simulator.
export { RaftCore, encodeLeaderChange, type PersistedState, type ProposeResult } from './core/raft.js';
export { RaftLog } from './core/log.js';
export {
  RaftErrorCode, defaultRaftTimeouts,
  type NodeId, type Entry, type Snapshot, type SnapshotId, type QuorumState, type RaftConfig, type RaftRole, type Ready,
  type LogOp, type Envelope, type RaftMessage, type RaftRequest, type RaftResponse, type QuorumDescription,
  type ReplicaProgress, type VoteRequest, type VoteResponse, type FetchRequest, type FetchResponse,
  type FetchSnapshotRequest, type FetchSnapshotResponse, type BeginQuorumEpochRequest, type BeginQuorumEpochResponse,
  type EndQuorumEpochRequest, type EndQuorumEpochResponse,
} from './core/types.js';
export type { QuorumStateStore, LogStore, LoadedLog } from './store/ports.js';
export { MemoryQuorumStateStore, MemoryLogStore } from './store/memory.js';
export { FileQuorumStateStore, FileLogStore } from './store/file.js';
export type { ReplicatedStateMachine } from './state-machine.js';
export { Simulation, runSeed, type SimOptions, type SimResult, type SimStats } from './sim/sim.js';
