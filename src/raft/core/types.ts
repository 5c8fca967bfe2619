// The vocabulary of the Raft core: log entries, the RPCs it exchanges (shaped after Kafka's Vote,
// BeginQuorumEpoch, EndQuorumEpoch, Fetch and FetchSnapshot, one partition each), its configuration,
// and the Ready value it hands to its driver. Offsets and epochs are checked safe integers here;
// the driver converts to the protocol's int64 bigint at the wire.

export type NodeId = number;

/**
 * `data`: the state machine's records. `control`: KRaft's leader-change marker (ControlRecordType
 * LEADER_CHANGE). `voters`: a KIP-853 VotersRecord (ControlRecordType KRAFT_VOTERS), the voter set
 * from its offset on.
 */
export type EntryKind = 'data' | 'control' | 'voters';

/** One record of the metadata log. */
export interface Entry {
  readonly offset: number;
  readonly epoch: number;
  readonly kind: EntryKind;
  readonly value: Uint8Array;
}

/**
 * Consecutive entries with one epoch and kind (see core/batch.ts): what the log keeps, the stores
 * persist and Fetch carries. Entry i has offset baseOffset + i and value
 * bytes[bounds[2i], bounds[2i + 1]).
 */
export interface EntryBatch {
  readonly baseOffset: number;
  readonly epoch: number;
  readonly kind: EntryKind;
  readonly count: number;
  readonly bytes: Uint8Array;
  readonly bounds: Int32Array;
  /**
   * `bytes` is exactly one RecordBatch v2 with these offsets, epoch and kind (as a follower
   * received it): the store and the wire reuse the bytes instead of encoding them again.
   */
  readonly recordBatch: boolean;
}

/** (endOffset, epoch) of a snapshot: it holds every entry below endOffset; epoch is that of endOffset - 1. */
export interface SnapshotId {
  readonly endOffset: number;
  readonly epoch: number;
}

export interface Snapshot {
  readonly id: SnapshotId;
  readonly data: Uint8Array;
}

/** The quorum-state file: what must survive a crash before a vote or an epoch change is acted on. */
export interface QuorumState {
  readonly epoch: number;
  readonly leaderId?: NodeId;
  readonly votedId?: NodeId;
}

/** Error codes the core puts in responses; the values are Kafka's. */
export const RaftErrorCode = {
  NONE: 0,
  NOT_LEADER_OR_FOLLOWER: 6,
  FENCED_LEADER_EPOCH: 74,
  UNKNOWN_LEADER_EPOCH: 75,
  POSITION_OUT_OF_RANGE: 99,
  SNAPSHOT_NOT_FOUND: 98,
  INCONSISTENT_VOTER_SET: 94,
} as const;
export type RaftErrorCodeValue = (typeof RaftErrorCode)[keyof typeof RaftErrorCode];

export interface VoteRequest {
  readonly type: 'VoteRequest';
  readonly candidateEpoch: number;
  readonly candidateId: NodeId;
  readonly lastOffsetEpoch: number;
  /** The candidate's log end offset. */
  readonly lastOffset: number;
  /** KIP-996: a pre-vote asks "would you vote for me?" without changing anyone's state. */
  readonly preVote: boolean;
}

export interface VoteResponse {
  readonly type: 'VoteResponse';
  readonly errorCode: RaftErrorCodeValue;
  readonly leaderEpoch: number;
  readonly leaderId: NodeId | undefined;
  readonly voteGranted: boolean;
  /** Echo of the request, so a stale answer can be told from a fresh one. */
  readonly preVote: boolean;
  readonly candidateEpoch: number;
}

export interface BeginQuorumEpochRequest {
  readonly type: 'BeginQuorumEpochRequest';
  readonly leaderEpoch: number;
  readonly leaderId: NodeId;
}

export interface BeginQuorumEpochResponse {
  readonly type: 'BeginQuorumEpochResponse';
  readonly errorCode: RaftErrorCodeValue;
  readonly leaderEpoch: number;
  readonly leaderId: NodeId | undefined;
}

export interface EndQuorumEpochRequest {
  readonly type: 'EndQuorumEpochRequest';
  readonly leaderEpoch: number;
  readonly leaderId: NodeId;
  /** Voters ordered by how far they had replicated; the first should stand first. */
  readonly preferredSuccessors: readonly NodeId[];
}

export interface EndQuorumEpochResponse {
  readonly type: 'EndQuorumEpochResponse';
  readonly errorCode: RaftErrorCodeValue;
  readonly leaderEpoch: number;
  readonly leaderId: NodeId | undefined;
}

export interface FetchRequest {
  readonly type: 'FetchRequest';
  readonly replicaId: NodeId;
  /** The epoch the fetcher believes current (Kafka's CurrentLeaderEpoch). */
  readonly replicaEpoch: number;
  readonly fetchOffset: number;
  readonly lastFetchedEpoch: number;
  readonly maxWaitMs: number;
}

export interface FetchResponse {
  readonly type: 'FetchResponse';
  readonly errorCode: RaftErrorCodeValue;
  readonly leaderEpoch: number;
  readonly leaderId: NodeId | undefined;
  readonly highWatermark: number;
  readonly logStartOffset: number;
  /** Set when the fetcher's log diverges: truncate to at most this (epoch, end offset). */
  readonly divergingEpoch?: { readonly epoch: number; readonly endOffset: number };
  /** Set when the fetch offset is below the log start: fetch this snapshot instead. */
  readonly snapshotId?: SnapshotId;
  readonly batches: readonly EntryBatch[];
}

export interface FetchSnapshotRequest {
  readonly type: 'FetchSnapshotRequest';
  readonly replicaId: NodeId;
  readonly replicaEpoch: number;
  readonly snapshotId: SnapshotId;
  readonly position: number;
  readonly maxBytes: number;
}

export interface FetchSnapshotResponse {
  readonly type: 'FetchSnapshotResponse';
  readonly errorCode: RaftErrorCodeValue;
  readonly leaderEpoch: number;
  readonly leaderId: NodeId | undefined;
  readonly snapshotId: SnapshotId;
  readonly size: number;
  readonly position: number;
  readonly bytes: Uint8Array;
}

export type RaftRequest = VoteRequest | BeginQuorumEpochRequest | EndQuorumEpochRequest | FetchRequest | FetchSnapshotRequest;
export type RaftResponse = VoteResponse | BeginQuorumEpochResponse | EndQuorumEpochResponse | FetchResponse | FetchSnapshotResponse;
export type RaftMessage = RaftRequest | RaftResponse;

/**
 * A message between two nodes. A response carries the correlation id of its request, as on the
 * Kafka wire, so duplicated or late answers are recognised and dropped.
 */
export interface Envelope {
  readonly from: NodeId;
  readonly to: NodeId;
  readonly correlationId: number;
  readonly message: RaftMessage;
}

/** A change to make to the durable log, in order, before the Ready's messages are sent. */
export type LogOp =
  | { readonly kind: 'append'; readonly batches: readonly EntryBatch[] }
  /** Delete every entry at or above `offset`. */
  | { readonly kind: 'truncate'; readonly offset: number }
  /** Store the snapshot, then delete the log below its end offset (and all of it when `replaceLog`). */
  | { readonly kind: 'snapshot'; readonly snapshot: Snapshot; readonly replaceLog: boolean };

/**
 * What the driver must do, in this order: write `quorumState` atomically, apply `logOps` and
 * fsync when `syncLog`, then send `messages`, then restore `restoreSnapshot` (if any) and apply
 * `committed` to the state machine, then call `advance()`.
 */
export interface Ready {
  readonly quorumState: QuorumState | undefined;
  readonly logOps: readonly LogOp[];
  readonly syncLog: boolean;
  readonly messages: readonly Envelope[];
  readonly restoreSnapshot: Snapshot | undefined;
  readonly committed: readonly EntryBatch[];
}

export interface RaftConfig {
  readonly nodeId: NodeId;
  /**
   * controller.quorum.voters: the bootstrap voter set, in force until the log or a snapshot holds a
   * VotersRecord (KIP-853). A node not in the voter set is an observer.
   */
  readonly voters: readonly NodeId[];
  /** Where the bootstrap voters listen, written into VotersRecords (optional; ids alone work). */
  readonly voterEndpoints?: ReadonlyArray<{ readonly id: NodeId; readonly host: string; readonly port: number }>;
  /** controller.quorum.election.timeout.ms; each timeout is randomized in [t, 2t). */
  readonly electionTimeoutMs: number;
  /** controller.quorum.fetch.timeout.ms; the leader's check-quorum timeout is 1.5 times this. */
  readonly fetchTimeoutMs: number;
  /** controller.quorum.election.backoff.max.ms: cap of the exponential backoff after a lost election. */
  readonly electionBackoffMaxMs: number;
  /** controller.quorum.request.timeout.ms: an unanswered request is resent after this. */
  readonly requestTimeoutMs: number;
  /** controller.quorum.retry.backoff.ms. */
  readonly retryBackoffMs: number;
  /** How long the leader parks a Fetch that has nothing new (Kafka's follower uses 500 ms). */
  readonly fetchMaxWaitMs: number;
  readonly fetchMaxEntries: number;
  readonly snapshotChunkBytes: number;
  /** Uniform in [0, 1): randomness is an input, so a seeded simulation can replay it. */
  readonly random: () => number;
}

export const defaultRaftTimeouts = {
  electionTimeoutMs: 1000,
  fetchTimeoutMs: 2000,
  electionBackoffMaxMs: 1000,
  requestTimeoutMs: 2000,
  retryBackoffMs: 20,
  fetchMaxWaitMs: 500,
  fetchMaxEntries: 512,
  snapshotChunkBytes: 1 << 20,
} as const;

export type RaftRole = 'unattached' | 'prospective' | 'candidate' | 'leader' | 'follower' | 'resigned';

export interface ReplicaProgress {
  readonly nodeId: NodeId;
  readonly endOffset: number;
  readonly lastFetchMs: number | undefined;
  /** When it last had all of the leader's log (Kafka's lastCaughtUpTimestamp). */
  readonly lastCaughtUpMs?: number | undefined;
}

/** What DescribeQuorum reports. */
export interface QuorumDescription {
  readonly leaderId: NodeId | undefined;
  readonly leaderEpoch: number;
  readonly highWatermark: number;
  readonly voters: readonly ReplicaProgress[];
  readonly observers: readonly ReplicaProgress[];
  /** Where the voters listen (their CONTROLLER endpoints, DescribeQuorum v2's Nodes), when known; the leader's answer only. */
  readonly voterEndpoints?: readonly { readonly nodeId: NodeId; readonly host: string; readonly port: number }[];
}
