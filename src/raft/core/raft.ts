// The Raft core with KRaft semantics: a deterministic state machine. Messages, ticks and proposals
// go in (each with the current time); a Ready comes out (quorum state and log changes to persist,
// messages to send after that, committed entries to apply); `advance()` acknowledges it. No clock,
// timers, sockets, files or Math.random in here: time and randomness are inputs.
//
// Roles follow Kafka's QuorumState: unattached, prospective (KIP-996 pre-vote, same epoch),
// candidate (epoch + 1, voted for itself), leader, follower, resigned. Replication is pull-based:
// followers and observers send Fetch; the leader validates (fetch offset, last fetched epoch)
// against its epoch cache and answers with records, a diverging epoch, or a snapshot id.
import { assert } from '../../util/index.js';
import { makeBatch } from './batch.js';
import {
  decodeVoters, encodeVoters, unwrapSnapshotData, voterIds, wrapSnapshotData, type Voter, type VoterSet,
} from './voters.js';
import { RaftLog } from './log.js';
import {
  RaftErrorCode,
  type BeginQuorumEpochRequest, type EndQuorumEpochRequest, type Entry, type Envelope, type FetchRequest,
  type EntryBatch, type FetchResponse, type FetchSnapshotRequest, type FetchSnapshotResponse, type LogOp, type NodeId,
  type QuorumDescription, type QuorumState, type RaftConfig, type RaftErrorCodeValue, type RaftMessage,
  type RaftRequest, type RaftRole, type Ready, type Snapshot, type SnapshotId, type VoteRequest, type VoteResponse,
} from './types.js';

/** What the durable store held when the node started. */
export interface PersistedState {
  readonly quorumState: QuorumState | undefined;
  readonly snapshot: Snapshot | undefined;
  readonly batches: readonly EntryBatch[];
}

/** KIP-853 AddRaftVoter / RemoveRaftVoter outcome on the leader; errors are Kafka's names. */
export type VoterChangeResult =
  | { readonly ok: true; readonly epoch: number; readonly offset: number }
  | {
    readonly ok: false;
    readonly error: 'NOT_LEADER' | 'REQUEST_TIMED_OUT' | 'DUPLICATE_VOTER' | 'VOTER_NOT_FOUND' | 'INVALID_REQUEST';
    readonly message: string;
  };

export type ProposeResult =
  | { readonly ok: true; readonly epoch: number; readonly baseOffset: number; readonly lastOffset: number }
  | { readonly ok: false; readonly error: 'NOT_LEADER'; readonly leaderId: NodeId | undefined; readonly epoch: number };

interface Outstanding {
  readonly to: NodeId;
  readonly type: RaftRequest['type'];
  readonly sentMs: number;
}

interface ReplicaState {
  endOffset: number;
  lastFetchMs: number | undefined;
  /** The leader's log end at the replica's previous fetch, and when it last had all of the leader's log (Kafka's lastCaughtUpTimestamp). */
  lastFetchLeaderEnd: number;
  lastCaughtUpMs: number | undefined;
  previousFetchMs: number | undefined;
  /** The high watermark the last answer to this replica's fetch carried (-1: none yet). */
  highWatermarkSent: number;
}

function newReplicaState(lastFetchMs: number | undefined): ReplicaState {
  return { endOffset: 0, lastFetchMs, lastFetchLeaderEnd: 0, lastCaughtUpMs: undefined, previousFetchMs: undefined, highWatermarkSent: -1 };
}

interface ParkedFetch {
  readonly env: Envelope;
  readonly deadlineMs: number;
}

interface SnapshotDownload {
  readonly id: SnapshotId;
  readonly parts: Uint8Array[];
  position: number;
}

/** The leader-change control record's value: which node leads, and the voters it counts. */
export function encodeLeaderChange(leaderId: NodeId, voters: readonly NodeId[]): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ leaderId, voters }));
}

export class RaftCore {
  readonly nodeId: NodeId;
  private readonly cfg: RaftConfig;
  /** The voter sets in the log: the base (offset -1 or a snapshot's last offset) and each VotersRecord above it. */
  private votersHistory: Array<{ readonly offset: number; readonly set: VoterSet }> = [];
  private voters: readonly NodeId[] = [];
  private majority = 1;
  /** Bumped whenever the voter set in force changes (the driver tells its transport). */
  private votersVersionValue = 0;
  readonly log: RaftLog;

  private nowMs: number;
  private epochValue = 0;
  private leaderIdValue: NodeId | undefined;
  private votedIdValue: NodeId | undefined;
  private roleValue: RaftRole = 'unattached';
  private hw = 0;
  private appliedOffset = 0;
  private flushedOffset = 0;
  private nextCorrelationId = 1;
  private outstanding = new Map<number, Outstanding>();
  /** After a request failed at the transport, the role's timer runs again at this time to resend. */
  private retryAtMs = Infinity;

  // Election state (unattached, prospective, candidate, resigned).
  private electionDeadlineMs = Infinity;
  private backoffUntilMs = Infinity;
  private electionRetries = 0;
  private granted = new Set<NodeId>();
  private rejected = new Set<NodeId>();
  /** Voters a candidate could not reach this round (their Vote request failed in the transport). */
  private unreachable = new Set<NodeId>();

  // Follower (and observer) state.
  private fetchDeadlineMs = Infinity;
  private nextFetchMs = 0;
  private lastLeaderContactMs: number | undefined;
  private leaderResigned = false;
  private download: SnapshotDownload | undefined;

  // Leader state.
  private epochStartOffset = 0;
  private leaderSinceMs = 0;
  private replicas = new Map<NodeId, ReplicaState>();
  private parked = new Map<NodeId, ParkedFetch>();
  private beginQuorumAcked = new Set<NodeId>();
  /** When a voter whose BeginQuorumEpoch failed in the transport is asked again (after the retry backoff). */
  private beginQuorumRetryMs = new Map<NodeId, number>();

  // Resigned state.
  private preferredSuccessors: NodeId[] = [];
  private endQuorumAcked = new Set<NodeId>();

  // The Ready being assembled.
  private outQuorumState: QuorumState | undefined;
  private outLogOps: LogOp[] = [];
  private outSync = false;
  private outMessages: Envelope[] = [];
  private outRestore: Snapshot | undefined;
  private outCommitted: EntryBatch[] = [];
  private readyEndOffset: number | undefined;

  constructor(config: RaftConfig, persisted: PersistedState, nowMs: number) {
    assert(config.voters.length > 0, 'a quorum needs at least one voter');
    assert(new Set(config.voters).size === config.voters.length, 'duplicate voter ids');
    this.cfg = config;
    this.nodeId = config.nodeId;
    this.nowMs = nowMs;
    this.log = RaftLog.load(persisted.snapshot, persisted.batches);
    this.flushedOffset = this.log.endOffset;
    this.loadVoters(config);
    if (this.log.snapshot !== undefined) {
      this.hw = this.appliedOffset = this.log.startOffset;
      this.outRestore = stateMachineSnapshot(this.log.snapshot);
    }
    this.initialize(persisted.quorumState);
  }

  // ---- Voter sets (KIP-853) ----------------------------------------------------------------------

  /** The static set, then the snapshot's, then every VotersRecord in the log. */
  private loadVoters(config: RaftConfig): void {
    const endpoints = new Map((config.voterEndpoints ?? []).map((e) => [e.id, e]));
    const bootstrap: VoterSet = config.voters.map((id) => endpoints.get(id) ?? { id });
    const snapshot = this.log.snapshot;
    const fromSnapshot = snapshot === undefined ? undefined : unwrapSnapshotData(snapshot.data).voters;
    this.votersHistory = [{ offset: snapshot === undefined ? -1 : snapshot.id.endOffset - 1, set: fromSnapshot ?? bootstrap }];
    this.recordVoters(this.log.readRange(this.log.startOffset, this.log.endOffset));
    this.votersChanged();
  }

  /** Adds the VotersRecords among `batches` (just appended) to the history; true if any. */
  private recordVoters(batches: readonly EntryBatch[]): boolean {
    let any = false;
    for (const b of batches) {
      if (b.kind !== 'voters') continue;
      for (let i = 0; i < b.count; i++) {
        const value = b.bytes.subarray(b.bounds[2 * i]!, b.bounds[2 * i + 1]!);
        this.votersHistory.push({ offset: b.baseOffset + i, set: decodeVoters(value) });
        any = true;
      }
    }
    return any;
  }

  private votersChanged(): void {
    const set = this.votersHistory[this.votersHistory.length - 1]!.set;
    assert(set.length > 0, 'a voter set is never empty');
    this.voters = voterIds(set);
    this.majority = Math.floor(this.voters.length / 2) + 1;
    this.votersVersionValue++;
  }

  /** The voter set in force (the latest in the log, committed or not). */
  get voterSet(): VoterSet { return this.votersHistory[this.votersHistory.length - 1]!.set; }
  get votersVersion(): number { return this.votersVersionValue; }
  /** Offset of the latest VotersRecord (-1 or a snapshot's last offset when the set is older than the log). */
  get votersOffset(): number { return this.votersHistory[this.votersHistory.length - 1]!.offset; }

  /** The voter set as of `offset` (inclusive). */
  private votersAt(offset: number): VoterSet {
    for (let i = this.votersHistory.length - 1; i >= 0; i--) {
      if (this.votersHistory[i]!.offset <= offset) return this.votersHistory[i]!.set;
    }
    return this.votersHistory[0]!.set;
  }

  /**
   * KIP-853 AddRaftVoter, as Kafka's AddVoterHandler: only a leader whose high watermark covers its
   * epoch start (the previous leaders are fenced), with no voter change still uncommitted, for an
   * id not yet voting that is caught up (it had all of the leader's log within the fetch timeout). The new set counts from the moment its VotersRecord is appended.
   */
  addVoter(voter: Voter, nowMs: number): VoterChangeResult {
    this.setNow(nowMs);
    const refused = this.voterChangeRefused();
    if (refused !== undefined) return refused;
    if (this.voters.includes(voter.id)) {
      return { ok: false, error: 'DUPLICATE_VOTER', message: `${voter.id} is already a voter of ${this.voters.join(',')}` };
    }
    // Caught up (Kafka's isReplicaCaughtUp): it had all of our log within the last fetch timeout.
    const r = this.replicas.get(voter.id);
    if (r?.lastCaughtUpMs === undefined || this.nowMs - r.lastCaughtUpMs >= this.cfg.fetchTimeoutMs) {
      return { ok: false, error: 'REQUEST_TIMED_OUT', message: `${voter.id} is not caught up (fetched to ${r?.endOffset ?? 'never'}, log end ${this.log.endOffset})` };
    }
    return this.appendVoters([...this.voterSet, voter]);
  }

  /** KIP-853 RemoveRaftVoter, as Kafka's RemoveVoterHandler; a leader removing itself resigns once the change commits. */
  removeVoter(id: NodeId, nowMs: number): VoterChangeResult {
    this.setNow(nowMs);
    const refused = this.voterChangeRefused();
    if (refused !== undefined) return refused;
    if (!this.voters.includes(id)) return { ok: false, error: 'VOTER_NOT_FOUND', message: `${id} is not a voter of ${this.voters.join(',')}` };
    if (this.voters.length === 1) return { ok: false, error: 'INVALID_REQUEST', message: 'cannot remove the last voter' };
    return this.appendVoters(this.voterSet.filter((v) => v.id !== id));
  }

  private voterChangeRefused(): VoterChangeResult | undefined {
    if (!this.isLeader) return { ok: false, error: 'NOT_LEADER', message: `node ${this.nodeId} is not the leader` };
    if (this.hw <= this.epochStartOffset) {
      return { ok: false, error: 'REQUEST_TIMED_OUT', message: 'the leader has not committed its epoch start yet' };
    }
    if (this.votersOffset >= this.hw) {
      return { ok: false, error: 'REQUEST_TIMED_OUT', message: `the voter change at ${this.votersOffset} is not committed yet (high watermark ${this.hw})` };
    }
    return undefined;
  }

  private appendVoters(set: VoterSet): VoterChangeResult {
    const offset = this.log.endOffset;
    this.appendLocal([makeBatch(offset, this.epochValue, 'voters', [encodeVoters(set)])]);
    for (const v of this.voters) if (v !== this.nodeId && !this.replicas.has(v)) this.replicas.set(v, newReplicaState(undefined));
    this.completeParkedFetches();
    // The new majority may already hold more (a lagging voter removed, say).
    this.maybeAdvanceHighWatermark();
    return { ok: true, epoch: this.epochValue, offset };
  }

  private initialize(qs: QuorumState | undefined): void {
    this.epochValue = qs?.epoch ?? 0;
    this.votedIdValue = qs?.votedId;
    this.leaderIdValue = qs?.leaderId;
    if (qs?.leaderId === this.nodeId) {
      // A leader that restarts cannot know what it promised; it resigns its epoch (as Kafka does).
      this.roleValue = 'resigned';
      this.preferredSuccessors = [];
      this.electionDeadlineMs = this.nowMs + this.randomElectionTimeoutMs();
      // A sole voter has nobody to hand over to: it stands again at once, in a new epoch (Kafka's
      // KafkaRaftClient.initialize does the same), so a single node does not wait out a timeout.
      if (this.isVoter && this.voters.length === 1) this.becomeProspective();
    } else if (qs?.leaderId !== undefined) {
      this.enterFollower(qs.leaderId);
    } else {
      this.enterUnattached();
      if (this.isVoter && this.voters.length === 1) this.becomeProspective();
    }
  }

  // ---- Read-only views -------------------------------------------------------------------------

  get role(): RaftRole { return this.roleValue; }
  get epoch(): number { return this.epochValue; }
  get leaderId(): NodeId | undefined { return this.leaderIdValue; }
  get votedId(): NodeId | undefined { return this.votedIdValue; }
  get highWatermark(): number { return this.hw; }
  /** A leader's first offset of its epoch (its LeaderChange entry): everything below it is committed once the high watermark passes it. */
  get epochStart(): number { return this.epochStartOffset; }
  get isVoter(): boolean { return this.voters.includes(this.nodeId); }
  /**
   * Stands for election (and times out as a voter does): a voter of the latest set, or of the
   * committed one. The second matters when this node holds a VotersRecord removing it that a
   * majority lacks: its log may be the only one the others' majority accepts, so it must be able
   * to win (counting only the votes of its latest set, not its own) and then resign once its
   * epoch commits, or the quorum could stall with a majority of the committed set alive.
   */
  get mayStand(): boolean {
    return this.isVoter || (this.votersOffset >= this.hw && this.votersAt(this.hw - 1).some((v) => v.id === this.nodeId));
  }
  get isLeader(): boolean { return this.roleValue === 'leader'; }

  describeQuorum(): QuorumDescription {
    const progress = (id: NodeId) => {
      if (id === this.nodeId) return { nodeId: id, endOffset: this.log.endOffset, lastFetchMs: this.nowMs, lastCaughtUpMs: this.nowMs };
      const r = this.replicas.get(id);
      return { nodeId: id, endOffset: r?.endOffset ?? -1, lastFetchMs: r?.lastFetchMs, lastCaughtUpMs: r?.lastCaughtUpMs };
    };
    const observers = [...this.replicas.keys()].filter((id) => !this.voters.includes(id)).sort((a, b) => a - b);
    return {
      leaderId: this.leaderIdValue,
      leaderEpoch: this.epochValue,
      highWatermark: this.hw,
      voters: this.isLeader ? this.voters.map(progress) : [],
      observers: this.isLeader ? observers.map(progress) : [],
      voterEndpoints: this.isLeader ? this.voterSet.flatMap((v) => (v.host === undefined || v.port === undefined ? [] : [{ nodeId: v.id, host: v.host, port: v.port }])) : [],
    };
  }

  /** The earliest time at which `tick` has something to do. */
  nextDeadlineMs(): number {
    let t = this.retryAtMs;
    for (const o of this.outstanding.values()) t = Math.min(t, o.sentMs + this.cfg.requestTimeoutMs);
    switch (this.roleValue) {
      case 'unattached':
        if (this.mayStand) t = Math.min(t, this.electionDeadlineMs);
        if (!this.mayStand && !this.hasOutstanding('FetchRequest')) t = Math.min(t, this.nextFetchMs);
        return t;
      case 'prospective':
      case 'candidate':
        return Math.min(t, this.electionDeadlineMs, this.backoffUntilMs);
      case 'follower':
        t = Math.min(t, this.fetchDeadlineMs);
        if (!this.hasOutstanding('FetchRequest') && !this.hasOutstanding('FetchSnapshotRequest')) t = Math.min(t, this.nextFetchMs);
        return t;
      case 'leader':
        for (const p of this.parked.values()) t = Math.min(t, p.deadlineMs);
        if (this.voters.length > 1) t = Math.min(t, this.nextCheckQuorumMs(), this.nextBeginQuorumMs());
        return t;
      case 'resigned':
        return Math.min(t, this.electionDeadlineMs);
    }
  }

  // ---- Inputs ----------------------------------------------------------------------------------

  tick(nowMs: number): void {
    this.setNow(nowMs);
    if (this.nowMs >= this.retryAtMs) this.retryAtMs = Infinity;
    this.expireOutstanding();
    switch (this.roleValue) {
      case 'unattached': return this.tickUnattached();
      case 'prospective': return this.tickProspective();
      case 'candidate': return this.tickCandidate();
      case 'follower': return this.tickFollower();
      case 'leader': return this.tickLeader();
      case 'resigned':
        if (this.nowMs >= this.electionDeadlineMs) {
          // A leader removed from the voters (KIP-853) goes on as an observer.
          if (this.mayStand) this.becomeProspective();
          else this.becomeUnattached(this.epochValue, undefined);
        } else {
          this.sendEndQuorumEpochs();
        }
        return;
    }
  }

  step(env: Envelope, nowMs: number): void {
    this.setNow(nowMs);
    if (env.to !== this.nodeId || env.from === this.nodeId) return;
    const m = env.message;
    switch (m.type) {
      case 'VoteRequest': return this.handleVoteRequest(env, m);
      case 'BeginQuorumEpochRequest': return this.handleBeginQuorumEpochRequest(env, m);
      case 'EndQuorumEpochRequest': return this.handleEndQuorumEpochRequest(env, m);
      case 'FetchRequest': return this.handleFetchRequest(env, m);
      case 'FetchSnapshotRequest': return this.handleFetchSnapshotRequest(env, m);
      default: return this.handleResponse(env, m);
    }
  }

  propose(values: readonly Uint8Array[], nowMs: number): ProposeResult {
    this.setNow(nowMs);
    if (!this.isLeader) return { ok: false, error: 'NOT_LEADER', leaderId: this.leaderIdValue, epoch: this.epochValue };
    const base = this.log.endOffset;
    this.appendLocal([makeBatch(base, this.epochValue, 'data', values)]);
    this.completeParkedFetches();
    return { ok: true, epoch: this.epochValue, baseOffset: base, lastOffset: base + values.length - 1 };
  }

  /**
   * The transport could not deliver a request or lost its connection before the answer (the peer
   * restarted, say). It is sent again after the retry backoff rather than a whole request timeout.
   */
  requestFailed(correlationId: number, nowMs: number): void {
    this.setNow(nowMs);
    const o = this.outstanding.get(correlationId);
    if (o === undefined) return;
    this.outstanding.delete(correlationId);
    const retryMs = this.nowMs + this.cfg.retryBackoffMs;
    if (o.type === 'FetchRequest' || o.type === 'FetchSnapshotRequest') this.nextFetchMs = retryMs;
    if (o.type === 'VoteRequest' && this.roleValue === 'candidate') this.voterUnreachable(o.to);
    if (o.type === 'BeginQuorumEpochRequest') this.beginQuorumRetryMs.set(o.to, retryMs);
    this.retryAtMs = Math.min(this.retryAtMs, retryMs);
  }

  /** Graceful resignation (EndQuorumEpoch): hand leadership to the most caught-up voters. */
  resign(nowMs: number): void {
    this.setNow(nowMs);
    if (!this.isLeader) return;
    const successors = this.voters.filter((v) => v !== this.nodeId)
      .sort((a, b) => (this.replicas.get(b)?.endOffset ?? -1) - (this.replicas.get(a)?.endOffset ?? -1) || a - b);
    this.becomeResigned(successors);
  }

  /**
   * The state machine took a snapshot of everything below `endOffset` (which it has applied); the
   * log below it is deleted once the snapshot is stored.
   */
  createSnapshot(endOffset: number, data: Uint8Array): SnapshotId {
    assert(endOffset <= this.appliedOffset, `snapshot at ${endOffset} above applied offset ${this.appliedOffset}`);
    assert(endOffset > this.log.startOffset, `snapshot at ${endOffset} not past log start ${this.log.startOffset}`);
    const epoch = this.log.epochAt(endOffset - 1);
    assert(epoch !== undefined, 'snapshot epoch unknown');
    const snapshot: Snapshot = { id: { endOffset, epoch }, data: wrapSnapshotData(this.votersAt(endOffset - 1), data) };
    this.log.addSnapshot(snapshot);
    // The set in force at the snapshot becomes the base; later VotersRecords stay.
    const base = this.votersHistory.filter((h) => h.offset < endOffset).at(-1)!;
    this.votersHistory = [{ offset: endOffset - 1, set: base.set }, ...this.votersHistory.filter((h) => h.offset >= endOffset)];
    this.outLogOps.push({ kind: 'snapshot', snapshot, replaceLog: false });
    this.outSync = true;
    return snapshot.id;
  }

  // ---- Ready / advance -------------------------------------------------------------------------

  hasReady(): boolean {
    return this.outQuorumState !== undefined || this.outLogOps.length > 0 || this.outMessages.length > 0
      || this.outRestore !== undefined || this.outCommitted.length > 0;
  }

  ready(): Ready | undefined {
    if (!this.hasReady()) return undefined;
    assert(this.readyEndOffset === undefined, 'ready() called twice without advance()');
    const ready: Ready = {
      quorumState: this.outQuorumState,
      logOps: this.outLogOps,
      syncLog: this.outSync,
      messages: this.outMessages,
      restoreSnapshot: this.outRestore,
      committed: this.outCommitted,
    };
    this.outQuorumState = undefined;
    this.outLogOps = [];
    this.outSync = false;
    this.outMessages = [];
    this.outRestore = undefined;
    this.outCommitted = [];
    this.readyEndOffset = this.log.endOffset;
    return ready;
  }

  /**
   * For a driver whose fsync runs off the event loop, while a Ready's fsync is in flight: what may
   * go before the next Ready is durable. A leader's Fetch and FetchSnapshot answers promise nothing
   * about its own disk (the high watermark counts only what it fsynced), so they may leave at once
   * unless the quorum state is changing. Committed entries are on a majority's disks already, so
   * they may be applied at once unless a snapshot must be restored first. Both are removed from the
   * Ready being assembled.
   */
  takeEarly(): { messages: Envelope[]; committed: EntryBatch[] } {
    const messages: Envelope[] = [];
    if (this.isLeader && this.outQuorumState === undefined && this.outMessages.length > 0) {
      const rest: Envelope[] = [];
      for (const env of this.outMessages) {
        const t = env.message.type;
        if (t === 'FetchResponse' || t === 'FetchSnapshotResponse') messages.push(env);
        else rest.push(env);
      }
      if (messages.length > 0) this.outMessages = rest;
    }
    let committed: EntryBatch[] = [];
    if (this.outRestore === undefined && this.outCommitted.length > 0) {
      committed = this.outCommitted;
      this.outCommitted = [];
    }
    return { messages, committed };
  }

  /** The last Ready was persisted (and its log fsynced) and its messages sent. */
  advance(): void {
    assert(this.readyEndOffset !== undefined, 'advance() without ready()');
    this.flushedOffset = Math.max(this.flushedOffset, Math.min(this.readyEndOffset, this.log.endOffset));
    this.readyEndOffset = undefined;
    if (this.isLeader) this.maybeAdvanceHighWatermark();
  }

  // ---- Timers ----------------------------------------------------------------------------------

  private tickUnattached(): void {
    if (this.mayStand) {
      if (this.nowMs >= this.electionDeadlineMs) this.becomeProspective();
      return;
    }
    this.maybeSendFetch();
  }

  private tickProspective(): void {
    if (this.nowMs >= this.backoffUntilMs) {
      this.backoffUntilMs = Infinity;
      this.becomeProspective();
    } else if (this.nowMs >= this.electionDeadlineMs) {
      this.prospectiveLost();
    } else {
      this.sendVoteRequests(true);
    }
  }

  private tickCandidate(): void {
    if (this.nowMs >= this.backoffUntilMs || this.nowMs >= this.electionDeadlineMs) {
      this.becomeProspective();
    } else {
      this.sendVoteRequests(false);
    }
  }

  private tickFollower(): void {
    if (this.nowMs >= this.fetchDeadlineMs) {
      if (this.mayStand) this.becomeProspective();
      else this.becomeUnattached(this.epochValue, undefined);
      return;
    }
    this.maybeSendFetch();
  }

  private tickLeader(): void {
    for (const [id, p] of this.parked) {
      if (this.nowMs >= p.deadlineMs) {
        this.parked.delete(id);
        this.answerFetch(p.env, p.env.message as FetchRequest);
      }
    }
    if (this.voters.length > 1 && this.nowMs >= this.nextCheckQuorumMs() && !this.hasQuorumContact()) {
      // Check quorum: a leader that a majority has not fetched from within 1.5 fetch timeouts may be
      // partitioned away; it resigns so that it stops acknowledging nothing and lets others elect.
      this.becomeResigned([]);
      return;
    }
    this.sendBeginQuorumEpochs();
  }

  private get checkQuorumTimeoutMs(): number { return Math.floor(this.cfg.fetchTimeoutMs * 1.5); }

  private nextCheckQuorumMs(): number {
    const start = this.leaderSinceMs + this.checkQuorumTimeoutMs;
    if (this.nowMs < start) return start;
    // Earliest moment one of the majority's fetch times becomes too old.
    const times = this.voters.filter((v) => v !== this.nodeId)
      .map((v) => this.replicas.get(v)?.lastFetchMs ?? -Infinity).sort((a, b) => b - a);
    const needed = this.isVoter ? this.majority - 1 : this.majority;
    const t = times[needed - 1] ?? -Infinity;
    return Math.max(start, t + this.checkQuorumTimeoutMs);
  }

  /**
   * Whether this leader heard a fetch from a majority of the voters (itself counted) within one
   * fetch timeout before `nowMs` (the caller's clock, which may be ahead of this core's: a process
   * that was frozen has not ticked yet). Until a voter of that majority misses its fetches for a
   * fetch timeout it starts no election, so no other leader can have been elected (and fenced
   * anyone) by then. A leader woken from a stall fails this until its followers fetch again.
   */
  hasFreshQuorumContact(nowMs: number): boolean {
    if (this.roleValue !== 'leader') return false;
    let count = this.isVoter ? 1 : 0;
    for (const v of this.voters) {
      if (v === this.nodeId) continue;
      const last = this.replicas.get(v)?.lastFetchMs;
      if (last !== undefined && nowMs - last < this.cfg.fetchTimeoutMs) count++;
    }
    return count >= this.majority;
  }

  private hasQuorumContact(): boolean {
    let count = this.isVoter ? 1 : 0;
    for (const v of this.voters) {
      if (v === this.nodeId) continue;
      const last = this.replicas.get(v)?.lastFetchMs;
      if (last !== undefined && this.nowMs - last < this.checkQuorumTimeoutMs) count++;
    }
    return count >= this.majority;
  }

  /** Voters that have not fetched lately are told (again) who leads. */
  private nextBeginQuorumMs(): number {
    let t = Infinity;
    for (const v of this.voters) {
      if (v === this.nodeId || this.hasOutstandingTo(v, 'BeginQuorumEpochRequest')) continue;
      const last = this.replicas.get(v)?.lastFetchMs ?? this.leaderSinceMs;
      const due = this.beginQuorumAcked.has(v) ? last + this.cfg.fetchTimeoutMs / 2 : this.nowMs;
      // A voter that is down refuses at once: without the backoff the leader would ask it again in
      // the same millisecond, for as long as it stays down (found by a scenario with zero latency).
      t = Math.min(t, Math.max(due, this.beginQuorumRetryMs.get(v) ?? -Infinity));
    }
    return t;
  }

  private sendBeginQuorumEpochs(): void {
    for (const v of this.voters) {
      if (v === this.nodeId || this.hasOutstandingTo(v, 'BeginQuorumEpochRequest')) continue;
      if (this.nowMs < (this.beginQuorumRetryMs.get(v) ?? -Infinity)) continue;
      const last = this.replicas.get(v)?.lastFetchMs ?? this.leaderSinceMs;
      if (this.beginQuorumAcked.has(v) && this.nowMs < last + this.cfg.fetchTimeoutMs / 2) continue;
      this.sendRequest(v, { type: 'BeginQuorumEpochRequest', leaderEpoch: this.epochValue, leaderId: this.nodeId });
    }
  }

  private sendEndQuorumEpochs(): void {
    for (const v of this.voters) {
      if (v === this.nodeId || this.endQuorumAcked.has(v) || this.hasOutstandingTo(v, 'EndQuorumEpochRequest')) continue;
      this.sendRequest(v, {
        type: 'EndQuorumEpochRequest', leaderEpoch: this.epochValue, leaderId: this.nodeId,
        preferredSuccessors: this.preferredSuccessors,
      });
    }
  }

  // ---- Transitions -----------------------------------------------------------------------------

  private resetRoleState(): void {
    this.outstanding.clear();
    this.electionDeadlineMs = Infinity;
    this.backoffUntilMs = Infinity;
    this.granted.clear();
    this.rejected.clear();
    this.unreachable.clear();
    this.fetchDeadlineMs = Infinity;
    this.nextFetchMs = this.nowMs;
    this.lastLeaderContactMs = undefined;
    this.leaderResigned = false;
    this.download = undefined;
    this.failParkedFetches();
    this.replicas.clear();
    this.beginQuorumAcked.clear();
    this.beginQuorumRetryMs.clear();
    this.endQuorumAcked.clear();
    this.preferredSuccessors = [];
  }

  private persist(): void {
    this.outQuorumState = {
      epoch: this.epochValue,
      ...(this.leaderIdValue !== undefined ? { leaderId: this.leaderIdValue } : {}),
      ...(this.votedIdValue !== undefined ? { votedId: this.votedIdValue } : {}),
    };
  }

  private becomeUnattached(epoch: number, votedId: NodeId | undefined): void {
    assert(epoch >= this.epochValue, 'epochs never go back');
    this.epochValue = epoch;
    this.votedIdValue = votedId;
    this.leaderIdValue = undefined;
    this.persist();
    this.enterUnattached();
  }

  private enterUnattached(): void {
    this.resetRoleState();
    this.roleValue = 'unattached';
    if (this.mayStand) this.electionDeadlineMs = this.nowMs + this.randomElectionTimeoutMs();
  }

  private becomeFollower(epoch: number, leaderId: NodeId): void {
    assert(epoch >= this.epochValue, 'epochs never go back');
    assert(leaderId !== this.nodeId, 'cannot follow itself');
    if (epoch > this.epochValue) this.votedIdValue = undefined;
    this.epochValue = epoch;
    this.leaderIdValue = leaderId;
    this.persist();
    this.enterFollower(leaderId);
    this.maybeSendFetch();
  }

  private enterFollower(leaderId: NodeId): void {
    this.resetRoleState();
    this.roleValue = 'follower';
    this.leaderIdValue = leaderId;
    this.fetchDeadlineMs = this.nowMs + this.cfg.fetchTimeoutMs;
  }

  /** KIP-996: ask for pre-votes at the current epoch; nobody's state changes until a majority agrees. */
  private becomeProspective(): void {
    assert(this.mayStand, 'observers never stand for election');
    const leaderId = this.roleValue === 'follower' ? this.leaderIdValue : undefined;
    const wasResigned = this.roleValue === 'resigned';
    this.resetRoleState();
    this.roleValue = 'prospective';
    // A follower remembers its leader, so that a lost pre-vote sends it back to fetching.
    this.leaderIdValue = wasResigned ? undefined : leaderId;
    if (this.isVoter) this.granted.add(this.nodeId);
    this.electionDeadlineMs = this.nowMs + this.randomElectionTimeoutMs();
    if (this.granted.size >= this.majority) return this.becomeCandidate();
    this.sendVoteRequests(true);
  }

  private prospectiveLost(): void {
    const leaderId = this.leaderIdValue;
    if (leaderId !== undefined && leaderId !== this.nodeId) {
      this.enterFollower(leaderId);
      this.maybeSendFetch();
      return;
    }
    this.backoffUntilMs = this.nowMs + this.electionBackoffMs();
    this.electionDeadlineMs = Infinity;
    this.outstanding.clear();
  }

  private becomeCandidate(): void {
    this.resetRoleState();
    this.roleValue = 'candidate';
    this.epochValue += 1;
    this.votedIdValue = this.nodeId;
    this.leaderIdValue = undefined;
    this.persist();
    if (this.isVoter) this.granted.add(this.nodeId);
    this.electionDeadlineMs = this.nowMs + this.randomElectionTimeoutMs();
    if (this.granted.size >= this.majority) return this.becomeLeader();
    this.sendVoteRequests(false);
  }

  private becomeLeader(): void {
    assert(this.roleValue === 'candidate', 'only a candidate becomes leader');
    this.resetRoleState();
    this.electionRetries = 0;
    this.roleValue = 'leader';
    this.leaderIdValue = this.nodeId;
    this.persist();
    this.leaderSinceMs = this.nowMs;
    this.epochStartOffset = this.log.endOffset;
    for (const v of this.voters) if (v !== this.nodeId) this.replicas.set(v, newReplicaState(undefined));
    // The leader-change record is the first entry of the epoch; committing it commits everything before.
    this.appendLocal([makeBatch(this.log.endOffset, this.epochValue, 'control', [encodeLeaderChange(this.nodeId, this.voters)])]);
    this.sendBeginQuorumEpochs();
  }

  private becomeResigned(successors: NodeId[]): void {
    assert(this.isLeader, 'only a leader resigns');
    this.resetRoleState();
    this.roleValue = 'resigned';
    this.preferredSuccessors = successors;
    this.electionDeadlineMs = this.nowMs + this.randomElectionTimeoutMs();
    this.sendEndQuorumEpochs();
  }

  /** Learn of a newer epoch or of the leader of ours; true when the state changed. */
  private maybeTransition(epoch: number, leaderId: NodeId | undefined): boolean {
    if (epoch > this.epochValue) {
      if (leaderId !== undefined && leaderId !== this.nodeId) this.becomeFollower(epoch, leaderId);
      else this.becomeUnattached(epoch, undefined);
      return true;
    }
    if (epoch === this.epochValue && leaderId !== undefined && leaderId !== this.nodeId) {
      assert(this.roleValue !== 'leader' && this.roleValue !== 'resigned',
        `node ${this.nodeId} led epoch ${epoch} but ${leaderId} claims it`);
      if (this.roleValue === 'follower' && this.leaderIdValue === leaderId) return false;
      this.becomeFollower(epoch, leaderId);
      return true;
    }
    return false;
  }

  private randomElectionTimeoutMs(): number {
    return this.cfg.electionTimeoutMs + Math.floor(this.cfg.random() * this.cfg.electionTimeoutMs);
  }

  private electionBackoffMs(): number {
    this.electionRetries = Math.min(this.electionRetries + 1, 20);
    const cap = Math.min(this.cfg.electionBackoffMaxMs, this.cfg.retryBackoffMs * 2 ** this.electionRetries);
    return 1 + Math.floor(this.cfg.random() * cap);
  }

  // ---- Vote ------------------------------------------------------------------------------------

  private sendVoteRequests(preVote: boolean): void {
    for (const v of this.voters) {
      if (v === this.nodeId || this.granted.has(v) || this.rejected.has(v) || this.hasOutstandingTo(v, 'VoteRequest')) continue;
      this.sendRequest(v, {
        type: 'VoteRequest', candidateEpoch: preVote ? this.epochValue + 1 : this.epochValue, candidateId: this.nodeId,
        lastOffsetEpoch: this.log.lastEpoch, lastOffset: this.log.endOffset, preVote,
      });
    }
  }

  private handleVoteRequest(env: Envelope, req: VoteRequest): void {
    // Any replica answers, voter or not in its own view (as Kafka since KIP-853): its voter set may
    // be behind the candidate's, and the candidate counts only the votes of its own set.
    if (req.candidateEpoch < this.epochValue) {
      return this.respondVote(env, req, false);
    }
    if (!req.preVote && req.candidateEpoch > this.epochValue) this.becomeUnattached(req.candidateEpoch, undefined);
    const grant = req.preVote ? this.canGrantPreVote(req) : this.canGrantVote(req);
    if (grant && !req.preVote) {
      this.votedIdValue = req.candidateId;
      this.persist();
      if (this.mayStand) this.electionDeadlineMs = this.nowMs + this.randomElectionTimeoutMs();
    }
    this.respondVote(env, req, grant);
  }

  private isLogUpToDate(req: VoteRequest): boolean {
    const lastEpoch = this.log.lastEpoch;
    return req.lastOffsetEpoch > lastEpoch || (req.lastOffsetEpoch === lastEpoch && req.lastOffset >= this.log.endOffset);
  }

  private canGrantVote(req: VoteRequest): boolean {
    assert(req.candidateEpoch === this.epochValue, 'vote evaluated at the candidate epoch');
    switch (this.roleValue) {
      case 'unattached':
      case 'prospective':
        if (this.leaderIdValue !== undefined) return false;
        if (this.votedIdValue !== undefined) return this.votedIdValue === req.candidateId;
        return this.isLogUpToDate(req);
      default:
        return false;
    }
  }

  private canGrantPreVote(req: VoteRequest): boolean {
    if (!this.isLogUpToDate(req)) return false;
    if (this.roleValue === 'leader') return false;
    if (this.roleValue === 'follower' && !this.leaderResigned && this.lastLeaderContactMs !== undefined
      && this.nowMs - this.lastLeaderContactMs < this.cfg.fetchTimeoutMs) {
      return false;
    }
    if (req.candidateEpoch === this.epochValue) {
      if (this.leaderIdValue !== undefined && this.roleValue !== 'prospective') return false;
      if (this.votedIdValue !== undefined && this.votedIdValue !== req.candidateId) return false;
    }
    return true;
  }

  private respondVote(env: Envelope, req: VoteRequest, voteGranted: boolean): void {
    this.respond(env, {
      type: 'VoteResponse', errorCode: RaftErrorCode.NONE, leaderEpoch: this.epochValue, leaderId: this.advertisedLeaderId(), voteGranted,
      preVote: req.preVote, candidateEpoch: req.candidateEpoch,
    });
  }

  private handleVoteResponse(from: NodeId, resp: VoteResponse): void {
    // A prospective that remembers the leader it stopped hearing from is standing to replace it:
    // a voter naming that same leader is no news (Kafka transitions only when it has no leader).
    // Following it again would loop follower -> prospective -> follower while the leader is dead.
    const knownLeader = this.roleValue === 'prospective' && resp.leaderEpoch === this.epochValue
      && resp.leaderId !== undefined && resp.leaderId === this.leaderIdValue;
    if (!knownLeader && this.maybeTransition(resp.leaderEpoch, resp.leaderId)) return;
    if (this.roleValue === 'prospective' && resp.preVote && resp.candidateEpoch === this.epochValue + 1) {
      this.countVote(from, resp.voteGranted);
      if (this.granted.size >= this.majority) this.becomeCandidate();
      else if (this.rejected.size > this.voters.length - this.majority) this.prospectiveLost();
    } else if (this.roleValue === 'candidate' && !resp.preVote && resp.candidateEpoch === this.epochValue) {
      this.countVote(from, resp.voteGranted);
      if (this.granted.size >= this.majority) this.becomeLeader();
      else this.maybeBackOffCandidate();
    }
  }

  private countVote(from: NodeId, granted: boolean): void {
    if (!this.voters.includes(from)) return;
    this.unreachable.delete(from);
    if (granted) this.granted.add(from);
    else this.rejected.add(from);
  }

  /**
   * A candidate whose Vote request could not be delivered (connection refused or lost) counts that
   * voter as not voting this round, though it asks again after the retry backoff. Kafka ignores such
   * failures and waits for its election timeout. When a leader dies, its two followers' fetch
   * timeouts run from the same answer and often expire together: both pass pre-vote (each grants
   * the other's) and stand in the same epoch, each refuses the other, and the dead leader never
   * answers, so Kafka's rule waits a whole election timeout (1-2 s with its defaults) before trying
   * again. Counted this way, a split with a dead voter is seen at once and retried after the short
   * random election backoff. Only granted votes elect, so safety is unchanged.
   */
  private voterUnreachable(voter: NodeId): void {
    if (!this.voters.includes(voter) || this.granted.has(voter) || this.rejected.has(voter)) return;
    this.unreachable.add(voter);
    this.maybeBackOffCandidate();
  }

  /** A candidate that can no longer reach a majority backs off, then stands again (Kafka's isVoteRejected). */
  private maybeBackOffCandidate(): void {
    const lost = this.rejected.size + this.unreachable.size;
    if (lost > this.voters.length - this.majority && this.backoffUntilMs === Infinity) {
      this.backoffUntilMs = this.nowMs + this.electionBackoffMs();
    }
  }

  // ---- BeginQuorumEpoch / EndQuorumEpoch -------------------------------------------------------

  private handleBeginQuorumEpochRequest(env: Envelope, req: BeginQuorumEpochRequest): void {
    if (req.leaderEpoch >= this.epochValue) {
      if (req.leaderEpoch === this.epochValue) {
        assert(!(this.isLeader || this.roleValue === 'resigned') || req.leaderId === this.nodeId,
          `two leaders in epoch ${req.leaderEpoch}: ${this.nodeId} and ${req.leaderId}`);
      }
      if (req.leaderId !== this.nodeId) this.maybeTransition(req.leaderEpoch, req.leaderId);
    }
    this.respond(env, {
      type: 'BeginQuorumEpochResponse', errorCode: this.epochError(req.leaderEpoch),
      leaderEpoch: this.epochValue, leaderId: this.advertisedLeaderId(),
    });
  }

  private handleEndQuorumEpochRequest(env: Envelope, req: EndQuorumEpochRequest): void {
    if (req.leaderEpoch >= this.epochValue && req.leaderId !== this.nodeId) {
      this.maybeTransition(req.leaderEpoch, req.leaderId);
      if (this.roleValue === 'follower' && this.leaderIdValue === req.leaderId && this.epochValue === req.leaderEpoch) {
        this.leaderResigned = true;
        const position = req.preferredSuccessors.indexOf(this.nodeId);
        const backoffMs = position < 0 ? this.randomElectionTimeoutMs()
          : position === 0 ? 0 : Math.min(this.cfg.electionBackoffMaxMs, this.cfg.retryBackoffMs * 2 ** position);
        this.fetchDeadlineMs = Math.min(this.fetchDeadlineMs, this.nowMs + backoffMs);
      }
    }
    this.respond(env, {
      type: 'EndQuorumEpochResponse', errorCode: this.epochError(req.leaderEpoch),
      leaderEpoch: this.epochValue, leaderId: this.advertisedLeaderId(),
    });
  }

  /**
   * The leader we tell others about. A prospective's remembered leader is only a guess, and a
   * leader that resigned must not pull the nodes standing for its succession back to it.
   */
  private advertisedLeaderId(): NodeId | undefined {
    if (this.roleValue === 'prospective' || this.roleValue === 'resigned' || this.leaderResigned) return undefined;
    return this.leaderIdValue;
  }

  private epochError(requestEpoch: number): RaftErrorCodeValue {
    return requestEpoch < this.epochValue ? RaftErrorCode.FENCED_LEADER_EPOCH : RaftErrorCode.NONE;
  }

  // ---- Fetch (leader side) ---------------------------------------------------------------------

  /** FENCED when the fetcher is behind our epoch, UNKNOWN when ahead, NOT_LEADER when we do not lead. */
  private leaderOnlyError(replicaEpoch: number): RaftErrorCodeValue {
    if (replicaEpoch < this.epochValue) return RaftErrorCode.FENCED_LEADER_EPOCH;
    if (replicaEpoch > this.epochValue) return RaftErrorCode.UNKNOWN_LEADER_EPOCH;
    if (!this.isLeader) return RaftErrorCode.NOT_LEADER_OR_FOLLOWER;
    return RaftErrorCode.NONE;
  }

  private handleFetchRequest(env: Envelope, req: FetchRequest): void {
    const error = this.leaderOnlyError(req.replicaEpoch);
    if (error !== RaftErrorCode.NONE) return this.respond(env, this.fetchResponse(error, []));
    this.recordFetch(req.replicaId);
    this.parked.delete(req.replicaId);
    const validation = this.validateFetchOffset(req.fetchOffset, req.lastFetchedEpoch);
    if (validation !== undefined) return this.respond(env, this.fetchResponse(RaftErrorCode.NONE, [], validation));
    const replica = this.replicas.get(req.replicaId);
    if (replica !== undefined) {
      // As Kafka's ReplicaState: caught up now when it has our whole log, or as of its previous
      // fetch when it now has what we had then.
      if (req.fetchOffset >= this.log.endOffset) replica.lastCaughtUpMs = this.nowMs;
      else if (req.fetchOffset >= replica.lastFetchLeaderEnd && replica.previousFetchMs !== undefined) {
        replica.lastCaughtUpMs = Math.max(replica.lastCaughtUpMs ?? -Infinity, replica.previousFetchMs);
      }
      replica.endOffset = req.fetchOffset;
      replica.lastFetchLeaderEnd = this.log.endOffset;
    }
    const hwBefore = this.hw;
    this.maybeAdvanceHighWatermark();
    if (!this.isLeader) return this.respond(env, this.fetchResponse(RaftErrorCode.NOT_LEADER_OR_FOLLOWER, []));
    // Park a fetch with nothing new, unless the fetcher has a high watermark to learn: one this
    // fetch just moved, or one another replica's fetch moved since our last answer to this one
    // (else the second follower of a commit waits a whole fetch wait to hear of it, and every
    // broker applies the commit that much later).
    const known = replica === undefined || replica.highWatermarkSent === this.hw;
    if (req.fetchOffset >= this.log.endOffset && req.maxWaitMs > 0 && this.hw === hwBefore && known) {
      this.parked.set(req.replicaId, { env, deadlineMs: this.nowMs + req.maxWaitMs });
      return;
    }
    this.answerFetch(env, req);
  }

  private recordFetch(replicaId: NodeId): void {
    const replica = this.replicas.get(replicaId);
    if (replica !== undefined) {
      replica.previousFetchMs = replica.lastFetchMs;
      replica.lastFetchMs = this.nowMs;
    } else {
      this.replicas.set(replicaId, newReplicaState(this.nowMs));
    }
  }

  /** Undefined when the fetcher's log is a prefix of ours; otherwise where it must go instead. */
  private validateFetchOffset(fetchOffset: number, lastFetchedEpoch: number): Partial<FetchResponse> | undefined {
    const snapshotId = this.log.snapshotId;
    if (fetchOffset < this.log.startOffset) return { snapshotId: snapshotId! };
    const end = this.log.endOffsetForEpoch(lastFetchedEpoch);
    if (end === undefined) {
      assert(snapshotId !== undefined, 'an epoch older than the log needs a snapshot');
      return { snapshotId };
    }
    if (end.epoch !== lastFetchedEpoch || end.endOffset < fetchOffset) return { divergingEpoch: end };
    return undefined;
  }

  private answerFetch(env: Envelope, req: FetchRequest): void {
    if (req.fetchOffset < this.log.startOffset) {
      return this.respond(env, this.fetchResponse(RaftErrorCode.NONE, [], { snapshotId: this.log.snapshotId! }));
    }
    const batches = this.log.read(req.fetchOffset, this.cfg.fetchMaxEntries);
    const replica = this.replicas.get(req.replicaId);
    if (replica !== undefined) replica.highWatermarkSent = this.hw;
    this.respond(env, this.fetchResponse(RaftErrorCode.NONE, batches));
  }

  private fetchResponse(errorCode: RaftErrorCodeValue, batches: readonly EntryBatch[], extra: Partial<FetchResponse> = {}): FetchResponse {
    return {
      type: 'FetchResponse', errorCode, leaderEpoch: this.epochValue, leaderId: this.advertisedLeaderId(),
      highWatermark: this.hw, logStartOffset: this.log.startOffset, batches, ...extra,
    };
  }

  private completeParkedFetches(): void {
    for (const [id, p] of this.parked) {
      this.parked.delete(id);
      this.answerFetch(p.env, p.env.message as FetchRequest);
    }
  }

  private failParkedFetches(): void {
    for (const p of this.parked.values()) this.respond(p.env, this.fetchResponse(RaftErrorCode.NOT_LEADER_OR_FOLLOWER, []));
    this.parked.clear();
  }

  /**
   * The high watermark is the largest offset a majority of voters has (the leader counting only
   * what it has fsynced), and moves only once an entry of the current epoch is included.
   */
  private maybeAdvanceHighWatermark(): void {
    const offsets = this.voters.map((v) => (v === this.nodeId ? this.flushedOffset : this.replicas.get(v)?.endOffset ?? 0));
    offsets.sort((a, b) => b - a);
    const candidate = offsets[this.majority - 1]!;
    if (candidate > this.epochStartOffset && candidate > this.hw) {
      this.hw = candidate;
      this.emitCommitted();
      this.completeParkedFetches();
      // KIP-853: a leader removed from the voters resigns once that change is committed.
      if (!this.isVoter && this.votersOffset < this.hw) this.resign(this.nowMs);
    }
  }

  private handleFetchSnapshotRequest(env: Envelope, req: FetchSnapshotRequest): void {
    const error = this.leaderOnlyError(req.replicaEpoch);
    const snapshot = this.log.snapshot;
    const base = { type: 'FetchSnapshotResponse' as const, leaderEpoch: this.epochValue, leaderId: this.advertisedLeaderId() };
    if (error !== RaftErrorCode.NONE) {
      return this.respond(env, { ...base, errorCode: error, snapshotId: req.snapshotId, size: 0, position: 0, bytes: new Uint8Array(0) });
    }
    this.recordFetch(req.replicaId);
    if (snapshot === undefined || snapshot.id.endOffset !== req.snapshotId.endOffset || snapshot.id.epoch !== req.snapshotId.epoch) {
      return this.respond(env, { ...base, errorCode: RaftErrorCode.SNAPSHOT_NOT_FOUND, snapshotId: req.snapshotId, size: 0, position: 0, bytes: new Uint8Array(0) });
    }
    const size = snapshot.data.length;
    if (req.position < 0 || req.position > size) {
      return this.respond(env, { ...base, errorCode: RaftErrorCode.POSITION_OUT_OF_RANGE, snapshotId: req.snapshotId, size, position: req.position, bytes: new Uint8Array(0) });
    }
    const chunk = snapshot.data.subarray(req.position, req.position + Math.min(req.maxBytes, this.cfg.snapshotChunkBytes));
    this.respond(env, { ...base, errorCode: RaftErrorCode.NONE, snapshotId: snapshot.id, size, position: req.position, bytes: chunk });
  }

  // ---- Fetch (follower side) -------------------------------------------------------------------

  private fetchTarget(): NodeId | undefined {
    if (this.roleValue === 'follower') return this.leaderIdValue;
    if (this.roleValue === 'unattached' && !this.mayStand) {
      // An observer without a leader asks a random voter, which answers with who leads.
      return this.voters[Math.floor(this.cfg.random() * this.voters.length)];
    }
    return undefined;
  }

  private maybeSendFetch(): void {
    if (this.nowMs < this.nextFetchMs || this.hasOutstanding('FetchRequest') || this.hasOutstanding('FetchSnapshotRequest')) return;
    const target = this.fetchTarget();
    if (target === undefined || target === this.nodeId) return;
    if (this.download !== undefined) {
      this.sendRequest(target, {
        type: 'FetchSnapshotRequest', replicaId: this.nodeId, replicaEpoch: this.epochValue,
        snapshotId: this.download.id, position: this.download.position, maxBytes: this.cfg.snapshotChunkBytes,
      });
      return;
    }
    this.sendRequest(target, {
      type: 'FetchRequest', replicaId: this.nodeId, replicaEpoch: this.epochValue,
      fetchOffset: this.log.endOffset, lastFetchedEpoch: this.log.lastEpoch, maxWaitMs: this.cfg.fetchMaxWaitMs,
    });
  }

  private handleFetchResponse(from: NodeId, resp: FetchResponse): void {
    if (this.maybeTransition(resp.leaderEpoch, resp.leaderId)) return;
    if (resp.errorCode !== RaftErrorCode.NONE || this.roleValue !== 'follower' || from !== this.leaderIdValue) {
      this.nextFetchMs = this.nowMs + this.cfg.retryBackoffMs;
      return;
    }
    this.touchLeader();
    if (resp.divergingEpoch !== undefined) {
      this.truncateToDivergence(resp.divergingEpoch);
    } else if (resp.snapshotId !== undefined) {
      this.download = { id: resp.snapshotId, parts: [], position: 0 };
    } else {
      this.appendFromLeader(resp);
    }
    this.maybeSendFetch();
  }

  private touchLeader(): void {
    this.lastLeaderContactMs = this.nowMs;
    if (!this.leaderResigned) this.fetchDeadlineMs = this.nowMs + this.cfg.fetchTimeoutMs;
  }

  /** The leader's log diverges from ours after `diverging`; cut back to where ours may still match. */
  private truncateToDivergence(diverging: { epoch: number; endOffset: number }): void {
    const local = this.log.endOffsetForEpoch(diverging.epoch);
    const localEnd = local === undefined ? this.log.startOffset : local.endOffset;
    const offset = Math.max(this.log.startOffset, Math.min(diverging.endOffset, localEnd, this.log.endOffset));
    assert(offset >= this.hw, `truncation to ${offset} below high watermark ${this.hw}`);
    this.log.truncateTo(offset);
    if (this.votersOffset >= offset) {
      // A truncated VotersRecord was never committed: the set before it is in force again.
      this.votersHistory = this.votersHistory.filter((h, i) => i === 0 || h.offset < offset);
      this.votersChanged();
    }
    this.flushedOffset = Math.min(this.flushedOffset, offset);
    if (this.readyEndOffset !== undefined) this.readyEndOffset = Math.min(this.readyEndOffset, offset);
    this.outLogOps.push({ kind: 'truncate', offset });
    this.outSync = true;
  }

  private appendFromLeader(resp: FetchResponse): void {
    const batches = resp.batches;
    if (batches.length > 0) {
      // A valid answer to our outstanding fetch starts at our log end; anything else is a bug.
      assert(batches[0]!.baseOffset === this.log.endOffset, `fetched ${batches[0]!.baseOffset}, log end ${this.log.endOffset}`);
      this.appendLocal(batches);
    }
    const hw = Math.min(resp.highWatermark, this.log.endOffset);
    if (hw > this.hw) {
      this.hw = hw;
      this.emitCommitted();
    }
  }

  private handleFetchSnapshotResponse(from: NodeId, resp: FetchSnapshotResponse): void {
    if (this.maybeTransition(resp.leaderEpoch, resp.leaderId)) return;
    const d = this.download;
    if (this.roleValue !== 'follower' || from !== this.leaderIdValue || d === undefined) return;
    if (resp.errorCode !== RaftErrorCode.NONE) {
      // The leader has a newer snapshot (or none); start over from a Fetch.
      this.download = undefined;
      if (resp.errorCode !== RaftErrorCode.SNAPSHOT_NOT_FOUND && resp.errorCode !== RaftErrorCode.POSITION_OUT_OF_RANGE) {
        this.nextFetchMs = this.nowMs + this.cfg.retryBackoffMs;
      }
      this.maybeSendFetch();
      return;
    }
    this.touchLeader();
    assert(resp.position === d.position && resp.snapshotId.endOffset === d.id.endOffset, 'snapshot chunk out of order');
    d.parts.push(resp.bytes);
    d.position += resp.bytes.length;
    assert(d.position <= resp.size, 'snapshot chunk past its size');
    if (d.position === resp.size) this.installSnapshot(d);
    this.maybeSendFetch();
  }

  private installSnapshot(d: SnapshotDownload): void {
    const data = new Uint8Array(d.position);
    let at = 0;
    for (const p of d.parts) { data.set(p, at); at += p.length; }
    const snapshot: Snapshot = { id: d.id, data };
    assert(snapshot.id.endOffset >= this.hw, 'a fetched snapshot is behind our high watermark');
    this.download = undefined;
    this.log.installSnapshot(snapshot);
    const voters = unwrapSnapshotData(snapshot.data).voters;
    this.votersHistory = [{ offset: snapshot.id.endOffset - 1, set: voters ?? this.votersAt(snapshot.id.endOffset - 1) }];
    this.votersChanged();
    this.flushedOffset = Math.min(this.flushedOffset, snapshot.id.endOffset);
    this.outLogOps.push({ kind: 'snapshot', snapshot, replaceLog: true });
    this.outSync = true;
    this.hw = Math.max(this.hw, snapshot.id.endOffset);
    this.appliedOffset = snapshot.id.endOffset;
    this.outRestore = stateMachineSnapshot(snapshot);
    this.outCommitted = [];
  }

  // ---- Responses in general --------------------------------------------------------------------

  private handleResponse(env: Envelope, m: RaftMessage): void {
    const o = this.outstanding.get(env.correlationId);
    // A response we are not waiting for (duplicated, late, or from an older role) is dropped.
    if (o === undefined || o.to !== env.from || `${o.type.slice(0, -'Request'.length)}Response` !== m.type) return;
    this.outstanding.delete(env.correlationId);
    switch (m.type) {
      case 'VoteResponse': return this.handleVoteResponse(env.from, m);
      case 'FetchResponse': return this.handleFetchResponse(env.from, m);
      case 'FetchSnapshotResponse': return this.handleFetchSnapshotResponse(env.from, m);
      case 'BeginQuorumEpochResponse':
        if (this.maybeTransition(m.leaderEpoch, m.leaderId)) return;
        if (this.isLeader && m.errorCode === RaftErrorCode.NONE) this.beginQuorumAcked.add(env.from);
        return;
      case 'EndQuorumEpochResponse':
        if (this.maybeTransition(m.leaderEpoch, m.leaderId)) return;
        if (this.roleValue === 'resigned') this.endQuorumAcked.add(env.from);
        return;
      default:
        return;
    }
  }

  // ---- Plumbing --------------------------------------------------------------------------------

  private setNow(nowMs: number): void {
    assert(nowMs >= this.nowMs, `time went back from ${this.nowMs} to ${nowMs}`);
    this.nowMs = nowMs;
  }

  private appendLocal(batches: readonly EntryBatch[]): void {
    this.log.append(batches);
    if (this.recordVoters(batches)) this.votersChanged();
    this.outLogOps.push({ kind: 'append', batches });
    this.outSync = true;
  }

  private emitCommitted(): void {
    const upTo = Math.min(this.hw, this.log.endOffset);
    if (this.appliedOffset >= upTo) return;
    assert(this.appliedOffset >= this.log.startOffset, 'committed entries below the log start');
    for (const b of this.log.readRange(this.appliedOffset, upTo)) this.outCommitted.push(b);
    this.appliedOffset = upTo;
  }

  private sendRequest(to: NodeId, message: RaftRequest): void {
    const correlationId = this.nextCorrelationId++;
    this.outstanding.set(correlationId, { to, type: message.type, sentMs: this.nowMs });
    this.outMessages.push({ from: this.nodeId, to, correlationId, message });
  }

  private respond(request: Envelope, message: RaftMessage): void {
    this.outMessages.push({ from: this.nodeId, to: request.from, correlationId: request.correlationId, message });
  }

  private hasOutstanding(type: RaftRequest['type']): boolean {
    for (const o of this.outstanding.values()) if (o.type === type) return true;
    return false;
  }

  private hasOutstandingTo(to: NodeId, type: RaftRequest['type']): boolean {
    for (const o of this.outstanding.values()) if (o.to === to && o.type === type) return true;
    return false;
  }

  /** Requests unanswered for a request timeout are forgotten, so the role's timer sends them again. */
  private expireOutstanding(): void {
    for (const [id, o] of this.outstanding) {
      if (this.nowMs >= o.sentMs + this.cfg.requestTimeoutMs) this.outstanding.delete(id);
    }
  }
}

/** What the state machine restores: a snapshot's bytes without the voter set the core keeps in them. */
function stateMachineSnapshot(snapshot: Snapshot): Snapshot {
  return { id: snapshot.id, data: unwrapSnapshotData(snapshot.data).data };
}
