// The raft room's door: the pure core (KRaft semantics), its persistence ports with memory and file
// implementations, the replicated state machine contract, the deterministic simulator, the driver
// that runs a core on real time and sockets, and the socket transport speaking Kafka's Raft RPCs.
export { RaftCore, encodeLeaderChange, type PersistedState, type ProposeResult, type VoterChangeResult } from './core/raft.js';
export { encodeVoters, decodeVoters, type Voter, type VoterSet } from './core/voters.js';
export { RaftLog } from './core/log.js';
export { batchesOf, entriesOf, makeBatch, sliceBatch, batchEntry, lastOffsetOf, endOffsetOf, countEntries } from './core/batch.js';
export {
  RaftErrorCode, defaultRaftTimeouts,
  type NodeId, type Entry, type EntryBatch, type EntryKind, type Snapshot, type SnapshotId, type QuorumState, type RaftConfig, type RaftRole, type Ready,
  type LogOp, type Envelope, type RaftMessage, type RaftRequest, type RaftResponse, type QuorumDescription,
  type ReplicaProgress, type VoteRequest, type VoteResponse, type FetchRequest, type FetchResponse,
  type FetchSnapshotRequest, type FetchSnapshotResponse, type BeginQuorumEpochRequest, type BeginQuorumEpochResponse,
  type EndQuorumEpochRequest, type EndQuorumEpochResponse,
} from './core/types.js';
export type { QuorumStateStore, LogStore, LoadedLog } from './store/ports.js';
export { MemoryQuorumStateStore, MemoryLogStore } from './store/memory.js';
export { FileQuorumStateStore, FileLogStore } from './store/file.js';
export {
  StorageLogStore, METADATA_LOG_DIR_NAME, RECOVERY_POINT_FILE, TRUNCATION_REPAIR_FILE, snapshotFileName, writeBootstrapSnapshot, latestSnapshotVoters, type StorageLogStoreOptions,
} from './store/storage.js';
export { encodeSnapshotFile, decodeSnapshotFile, SnapshotFormatError } from './store/snapshot-file.js';
export type { ReplicatedStateMachine } from './state-machine.js';
export { Simulation, SimViolation, runSeed, type SimOptions, type SimResult, type SimStats, type SimControl, type SimHost } from './sim/sim.js';
export { RaftDriver, RaftError, type RaftErrorKind, type RaftDriverOptions, type Committed } from './driver.js';
export { parseQuorumVoters, formatQuorumVoters, type RaftTransport, type TransportInbox, type VoterAddress, type VoterChange } from './transport.js';
export { SocketTransport, socketTransportLimits, isQuorumApi, type SocketTransportOptions, type OtherRequests, type PeerLogin, type InboundGate } from './net/socket-transport.js';
export { describeQuorum, addRaftVoter, removeRaftVoter, type VoterChangeAnswer } from './net/describe-quorum.js';
export * as raftWire from './net/messages.js';
export { AppendListStateMachine, CounterStateMachine } from './node/state-machines.js';
