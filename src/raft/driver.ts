// The driver: the only code of the raft room with timers, sockets and promises. It owns one
// RaftCore and replays each Ready in the order the core demands: write the quorum state, apply the
// log ops and fsync, and only then send the messages (a vote or an append is never acknowledged
// before it is durable); then restore a snapshot and apply committed entries to the state machine;
// then advance(). The stores are synchronous, so a Ready is handled in one turn of the event loop,
// and everything that arrives meanwhile is batched into the next one (group commit for free).
import { AssertionError, assert } from '../util/index.js';
import { RaftCore, type ProposeResult, type VoterChangeResult } from './core/raft.js';
import type { Voter } from './core/voters.js';
import { entriesOf, lastOffsetOf } from './core/batch.js';
import type { EntryBatch, Envelope, NodeId, QuorumDescription, RaftConfig, RaftRole, Ready, Snapshot, SnapshotId } from './core/types.js';
import { describeMessage } from './core/describe.js';
import type { ReplicatedStateMachine } from './state-machine.js';
import type { LogStore, QuorumStateStore } from './store/ports.js';
import type { RaftTransport, TransportInbox, VoterChange } from './transport.js';

export type RaftErrorKind =
  /** This node does not lead; `leaderId` says who does, if known. */
  | 'NOT_LEADER'
  /** The proposal was appended but a new leader replaced it: it is not in the log. */
  | 'PROPOSAL_LOST'
  /** A snapshot from the leader covered the proposal's offsets: it may or may not be in the log. */
  | 'UNKNOWN_OUTCOME'
  /** Not committed within proposeTimeoutMs; it may still commit later. */
  | 'TIMEOUT'
  /** More proposals waiting than proposalsPendingMax. */
  | 'BUSY'
  | 'SHUTDOWN'
  /** KIP-853 refusals, by Kafka's error names: not now (an uncommitted change, the epoch not committed, the voter lagging). */
  | 'REQUEST_TIMED_OUT'
  | 'DUPLICATE_VOTER'
  | 'VOTER_NOT_FOUND'
  | 'INVALID_REQUEST';

export class RaftError extends Error {
  override name = 'RaftError';
  constructor(readonly kind: RaftErrorKind, message: string, readonly leaderId?: NodeId, readonly epoch?: number) {
    super(message);
  }
}

/**
 * Where a commit is, for latency breakdowns (a, b):
 * `append` (base, last offset) a leader appended proposals; `syncStart`/`syncDone` (log end, 0) an
 * fsync of the log up to there; `fetchIn` (from, fetch offset) a leader got a Fetch;
 * `fetchOut` (to, fetch offset) a follower sent one; `dataIn` (from, end offset) a follower got
 * entries up to there; `dataOut` (to, end offset) a leader sent them; `hw` (high watermark, 0);
 * `resolved` (last offset, 0) a proposal was answered.
 */
export type StageName = 'append' | 'syncStart' | 'syncDone' | 'fetchIn' | 'fetchOut' | 'dataIn' | 'dataOut' | 'hw' | 'resolved';

export interface Committed {
  readonly epoch: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
}

export interface RaftDriverOptions {
  readonly config: RaftConfig;
  readonly quorumStore: QuorumStateStore;
  readonly logStore: LogStore;
  readonly stateMachine: ReplicatedStateMachine;
  readonly transport: RaftTransport;
  /** Monotonic milliseconds; defaults to performance.now() on the process's time origin. */
  readonly nowMs?: () => number;
  /** A proposal not committed within this is rejected with TIMEOUT. */
  readonly proposeTimeoutMs?: number;
  readonly proposalsPendingMax?: number;
  /** Take a snapshot once this many entries were applied since the last one (0: only on request). */
  readonly snapshotEveryEntries?: number;
  /** Debug hook: one line per message in and out and per role change. */
  readonly trace?: (line: string) => void;
  /**
   * Latency hook, cheap enough to leave on under load: `stage(name, a, b)` at the points a commit
   * passes (see StageName); node-main records them with a timestamp when LOGLINE_RAFT_STAGES is set.
   */
  readonly stage?: (name: StageName, a: number, b: number) => void;
  /** An invariant broke (a core assertion): the process must stop. Default: throw out of the event loop. */
  readonly onFatal?: (err: Error) => void;
}

interface Proposal {
  readonly epoch: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly deadlineMs: number;
  readonly resolve: (c: Committed) => void;
  readonly reject: (e: RaftError) => void;
}

interface Queued {
  readonly values: readonly Uint8Array[];
  readonly resolve: (c: Committed) => void;
  readonly reject: (e: RaftError) => void;
}

const monotonicNow = (): number => Math.floor(performance.timeOrigin + performance.now());

export class RaftDriver {
  readonly core: RaftCore;
  private readonly opts: RaftDriverOptions;
  private readonly now: () => number;
  private lastNowMs = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAtMs = Infinity;
  private pumping = false;
  /** A Ready is persisted but its fsync has not completed. */
  private syncing = false;
  private closedSync: (() => void) | undefined;
  private deferred: Array<() => void> = [];
  private closed = false;

  /** Proposals appended and waiting for their last offset to commit, by last offset. */
  private waiting: Proposal[] = [];
  /** Proposals received this turn; appended together as one batch on the next. */
  private queued: Queued[] = [];
  private flushScheduled = false;
  private appliedEnd = 0;
  private lastSnapshotEnd = 0;
  private nextExpiryScanMs = 0;
  /** The earliest deadline of a waiting proposal (at most this early: entries that resolved are not taken out). */
  private earliestDeadlineMs = Infinity;
  private votersVersionSent = -1;

  private constructor(opts: RaftDriverOptions, core: RaftCore, now: () => number) {
    this.opts = opts;
    this.core = core;
    this.now = now;
  }

  /** Loads the stores, starts the transport, and runs the core. */
  static async start(opts: RaftDriverOptions): Promise<RaftDriver> {
    const now = opts.nowMs ?? monotonicNow;
    const loaded = opts.logStore.load();
    const core = new RaftCore(opts.config, {
      quorumState: opts.quorumStore.read(), snapshot: loaded.snapshot, batches: loaded.batches,
    }, now());
    const driver = new RaftDriver(opts, core, now);
    driver.lastSnapshotEnd = loaded.snapshot?.id.endOffset ?? 0;
    await opts.transport.start(driver.inbox());
    driver.run(() => undefined);
    return driver;
  }

  get nodeId(): NodeId { return this.core.nodeId; }
  get role(): RaftRole { return this.core.role; }
  get epoch(): number { return this.core.epoch; }
  get leaderId(): NodeId | undefined { return this.core.leaderId; }
  get highWatermark(): number { return this.core.highWatermark; }
  /** One past the last entry handed to the state machine (control entries included). */
  get appliedOffset(): number { return this.appliedEnd; }

  /**
   * Appends `values` if this node leads; resolves once they are committed (a majority has them
   * durably), with their offsets. Values proposed in the same turn go into one append.
   */
  propose(values: readonly Uint8Array[]): Promise<Committed> {
    if (this.closed) return Promise.reject(new RaftError('SHUTDOWN', 'raft driver closed'));
    assert(values.length > 0, 'propose needs at least one value');
    if (!this.core.isLeader) return Promise.reject(this.notLeader());
    const max = this.opts.proposalsPendingMax ?? 100_000;
    if (this.waiting.length + this.queued.length >= max) {
      return Promise.reject(new RaftError('BUSY', `${max} proposals already pending`, this.core.leaderId, this.core.epoch));
    }
    return new Promise<Committed>((resolve, reject) => {
      this.queued.push({ values, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.run(() => this.flushProposals()));
      }
    });
  }

  /**
   * KIP-853: adds a voter (it must be fetching as an observer and caught up) or removes one; resolves
   * once the VotersRecord is committed (by a majority of the new set). One change at a time.
   */
  addVoter(voter: Voter, opts: { timeoutMs?: number } = {}): Promise<Committed> {
    return this.changeVoters(() => this.core.addVoter(voter, this.nowMs()), opts.timeoutMs);
  }

  removeVoter(id: NodeId, opts: { timeoutMs?: number } = {}): Promise<Committed> {
    return this.changeVoters(() => this.core.removeVoter(id, this.nowMs()), opts.timeoutMs);
  }

  /** `timeoutMs`: REQUEST_TIMED_OUT when not committed by then (AddRaftVoter's TimeoutMs); else proposeTimeoutMs. */
  private changeVoters(change: () => VoterChangeResult, timeoutMs?: number): Promise<Committed> {
    if (this.closed) return Promise.reject(new RaftError('SHUTDOWN', 'raft driver closed'));
    let result: VoterChangeResult | undefined;
    this.run(() => { result = change(); });
    const r = result;
    if (r === undefined) return Promise.reject(new RaftError('REQUEST_TIMED_OUT', 'the driver is busy; try again'));
    if (!r.ok) {
      return Promise.reject(r.error === 'NOT_LEADER' ? this.notLeader() : new RaftError(r.error, r.message, this.core.leaderId, this.core.epoch));
    }
    return new Promise<Committed>((resolve, reject) => {
      this.addWaiting({
        epoch: r.epoch, baseOffset: r.offset, lastOffset: r.offset,
        deadlineMs: this.lastNowMs + (timeoutMs ?? this.opts.proposeTimeoutMs ?? 30_000), resolve, reject,
      });
      this.armTimer();
    });
  }

  /** Kafka's error code for a voter change's outcome. */
  private async answerVoterChange(change: VoterChange): Promise<{ errorCode: number; errorMessage: string | null }> {
    try {
      const opts = { timeoutMs: change.timeoutMs };
      if (change.kind === 'add') {
        await this.addVoter(change.host === undefined || change.port === undefined
          ? { id: change.voterId } : { id: change.voterId, host: change.host, port: change.port }, opts);
      } else {
        await this.removeVoter(change.voterId, opts);
      }
      return { errorCode: 0, errorMessage: null };
    } catch (e) {
      if (!(e instanceof RaftError)) throw e;
      const codes: Partial<Record<RaftErrorKind, number>> = {
        NOT_LEADER: 6, SHUTDOWN: 6, DUPLICATE_VOTER: 126, VOTER_NOT_FOUND: 127, INVALID_REQUEST: 42,
      };
      // REQUEST_TIMED_OUT, TIMEOUT, PROPOSAL_LOST, UNKNOWN_OUTCOME: retriable, as Kafka answers them.
      return { errorCode: codes[e.kind] ?? 7, errorMessage: e.message };
    }
  }

  /** Resign leadership gracefully (EndQuorumEpoch to the most caught-up voters). */
  resign(): void { this.run(() => this.core.resign(this.nowMs())); }

  /**
   * Snapshot the state machine at the applied offset and let the core drop the log below it.
   * Undefined when nothing new was applied since the last snapshot.
   */
  requestSnapshot(): SnapshotId | undefined {
    let id: SnapshotId | undefined;
    this.run(() => { id = this.takeSnapshot(); });
    return id;
  }

  describeQuorum(): QuorumDescription { return this.core.describeQuorum(); }

  /** RaftCore.hasFreshQuorumContact at this moment. */
  hasFreshQuorumContact(): boolean { return this.core.hasFreshQuorumContact(this.now()); }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    const err = new RaftError('SHUTDOWN', 'raft driver closed');
    for (const q of this.queued) q.reject(err);
    for (const p of this.waiting) p.reject(err);
    this.queued = [];
    this.waiting = [];
    await this.opts.transport.close();
    // An fsync in flight must finish before its file descriptor is closed.
    if (this.syncing) await new Promise<void>((resolve) => { this.closedSync = resolve; });
    this.opts.logStore.close();
  }

  // ---- Inputs ----------------------------------------------------------------------------------

  private inbox(): TransportInbox {
    return {
      deliver: (env: Envelope) => this.run(() => {
        this.opts.trace?.(`in  ${env.from}->${env.to} #${env.correlationId} ${describeMessage(env)}`);
        if (this.opts.stage !== undefined) this.stageMessage(env, 'in');
        this.core.step(env, this.nowMs());
      }),
      requestFailed: (correlationId: number) => this.run(() => {
        this.opts.trace?.(`failed #${correlationId}`);
        this.core.requestFailed(correlationId, this.nowMs());
      }),
      changeVoters: (change: VoterChange) => this.answerVoterChange(change),
      describeQuorum: () => ({
        description: this.core.describeQuorum(),
        // Kafka answers DescribeQuorum only on the leader.
        errorCode: this.core.isLeader ? 0 : 6,
      }),
    };
  }

  private nowMs(): number {
    // The core asserts that time never goes back.
    this.lastNowMs = Math.max(this.lastNowMs, this.now());
    return this.lastNowMs;
  }

  /** Runs one input into the core, then every Ready it causes. Inputs during a Ready wait for it. */
  private run(input: () => void): void {
    if (this.closed) return;
    if (this.pumping) { this.deferred.push(input); return; }
    this.pumping = true;
    try {
      input();
      this.pump();
      while (this.deferred.length > 0) {
        const next = this.deferred.shift()!;
        next();
        this.pump();
      }
      if (this.syncing) this.runEarly();
    } catch (err) {
      this.fatal(err as Error);
      return;
    } finally {
      this.pumping = false;
    }
    this.expireProposals();
    this.maybeTellVoters();
    this.armTimer();
  }

  /** After a VotersRecord (appended, truncated or from a snapshot), the transport learns the endpoints. */
  private maybeTellVoters(): void {
    const version = this.core.votersVersion;
    if (version === this.votersVersionSent) return;
    this.votersVersionSent = version;
    const set = this.core.voterSet;
    const addresses = set.flatMap((v) => (v.host === undefined || v.port === undefined ? [] : [{ nodeId: v.id, host: v.host, port: v.port }]));
    this.opts.transport.setVoters?.(addresses);
  }

  private fatal(err: Error): void {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    const onFatal = this.opts.onFatal ?? ((e: Error) => { setImmediate(() => { throw e; }); });
    onFatal(err instanceof AssertionError ? err : new AssertionError(`raft driver: ${err.stack ?? err.message}`));
  }

  private flushProposals(): void {
    this.flushScheduled = false;
    const batch = this.queued;
    this.queued = [];
    if (batch.length === 0) return;
    const values: Uint8Array[] = [];
    for (const q of batch) for (const v of q.values) values.push(v);
    const result: ProposeResult = this.core.propose(values, this.nowMs());
    if (!result.ok) {
      const err = this.notLeader();
      for (const q of batch) q.reject(err);
      return;
    }
    const deadlineMs = this.lastNowMs + (this.opts.proposeTimeoutMs ?? 30_000);
    let offset = result.baseOffset;
    for (const q of batch) {
      const p: Proposal = {
        epoch: result.epoch, baseOffset: offset, lastOffset: offset + q.values.length - 1, deadlineMs, resolve: q.resolve, reject: q.reject,
      };
      offset += q.values.length;
      this.addWaiting(p);
    }
    assert(offset === result.lastOffset + 1, 'proposal offsets do not add up');
    this.opts.stage?.('append', result.baseOffset, result.lastOffset);
  }

  private addWaiting(p: Proposal): void {
    // A voter change may carry a shorter timeout than the proposals before it.
    this.earliestDeadlineMs = Math.min(this.earliestDeadlineMs, p.deadlineMs);
    // Almost always appended at the end; after a lost leadership a new epoch may reuse lower offsets.
    let i = this.waiting.length;
    while (i > 0 && this.waiting[i - 1]!.lastOffset > p.lastOffset) i--;
    this.waiting.splice(i, 0, p);
  }

  private notLeader(): RaftError {
    return new RaftError('NOT_LEADER', `node ${this.core.nodeId} is not the leader (leader: ${this.core.leaderId ?? 'unknown'})`,
      this.core.leaderId, this.core.epoch);
  }

  // ---- Ready -----------------------------------------------------------------------------------

  /**
   * Takes Readies while none is waiting for its fsync. With an asynchronous fsync the event loop
   * goes on reading sockets meanwhile, and whatever arrives lands in the next Ready: one fsync
   * covers many appends (group commit), and the core never sees a Ready's messages leave early.
   */
  private pump(): void {
    while (!this.syncing) {
      const ready = this.core.ready();
      if (ready === undefined) return;
      this.persist(ready);
      const store = this.opts.logStore;
      if (ready.syncLog && store.syncAsync !== undefined) {
        this.syncing = true;
        const syncEnd = this.core.log.endOffset;
        this.opts.stage?.('syncStart', syncEnd, 0);
        const held = this.applyEarly(this.sendLeaderResponsesEarly(ready));
        store.syncAsync((err) => {
          this.syncing = false;
          this.opts.stage?.('syncDone', syncEnd, 0);
          if (this.closed) { this.closedSync?.(); return; }
          if (err !== null) { this.fatal(err); return; }
          this.run(() => this.finish(held));
        });
        return;
      }
      if (ready.syncLog) store.sync();
      this.finish(ready);
    }
  }

  /**
   * A leader's Fetch and FetchSnapshot answers promise nothing about its own disk (the high
   * watermark they carry counts only what the leader has fsynced), so they leave while its fsync
   * runs, as etcd's leader writes in parallel with replicating: commit latency is then the
   * slower of the two paths, not their sum. Everything else waits for the fsync. A Ready that
   * changes the quorum state (becoming leader, say) sends nothing early.
   */
  private sendLeaderResponsesEarly(ready: Ready): Ready {
    if (!this.core.isLeader || ready.quorumState !== undefined) return ready;
    const rest: Envelope[] = [];
    for (const env of ready.messages) {
      const type = env.message.type;
      if (type === 'FetchResponse' || type === 'FetchSnapshotResponse') {
        this.opts.trace?.(`out (early) ${env.from}->${env.to} #${env.correlationId} ${describeMessage(env)}`);
        this.send(env);
      } else {
        rest.push(env);
      }
    }
    return rest.length === ready.messages.length ? ready : { ...ready, messages: rest };
  }

  /**
   * Committed entries are on a majority's disks: they are applied (and their proposals answered)
   * without waiting for this node's fsync, unless a snapshot must be restored before them.
   */
  private applyEarly(ready: Ready): Ready {
    if (ready.committed.length === 0 || ready.restoreSnapshot !== undefined) return ready;
    this.apply(ready.committed);
    return { ...ready, committed: [] };
  }

  /**
   * While an fsync is in flight, what the core lets go before the next Ready: a leader's Fetch
   * answers and newly committed entries (see RaftCore.takeEarly). Without this a follower's
   * acknowledgement would wait for the leader's fsync in flight and then for the next one.
   */
  private runEarly(): void {
    const early = this.core.takeEarly();
    for (const env of early.messages) {
      this.opts.trace?.(`out (early) ${env.from}->${env.to} #${env.correlationId} ${describeMessage(env)}`);
      this.send(env);
    }
    if (early.committed.length > 0) this.apply(early.committed);
  }

  /** The Ready is durable: send, restore, apply, advance. */
  private finish(ready: Ready): void {
    const trace = this.opts.trace;
    if (trace !== undefined) {
      trace(`ready role=${this.core.role} epoch=${this.core.epoch} leader=${this.core.leaderId} hw=${this.core.highWatermark}`);
      for (const env of ready.messages) trace(`out ${env.from}->${env.to} #${env.correlationId} ${describeMessage(env)}`);
    }
    for (const env of ready.messages) this.send(env);
    if (ready.restoreSnapshot !== undefined) this.restore(ready.restoreSnapshot);
    if (ready.committed.length > 0) this.apply(ready.committed);
    this.core.advance();
    const every = this.opts.snapshotEveryEntries ?? 0;
    if (every > 0 && this.appliedEnd - this.lastSnapshotEnd >= every) this.takeSnapshot();
  }

  private send(env: Envelope): void {
    if (this.opts.stage !== undefined) this.stageMessage(env, 'out');
    this.opts.transport.send(env);
  }

  private stageMessage(env: Envelope, dir: 'in' | 'out'): void {
    const stage = this.opts.stage!;
    const m = env.message;
    const peer = dir === 'in' ? env.from : env.to;
    if (m.type === 'FetchRequest') stage(dir === 'in' ? 'fetchIn' : 'fetchOut', peer, m.fetchOffset);
    else if (m.type === 'FetchResponse' && m.batches.length > 0) {
      stage(dir === 'in' ? 'dataIn' : 'dataOut', peer, lastOffsetOf(m.batches[m.batches.length - 1]!) + 1);
    }
  }

  private persist(ready: Ready): void {
    if (ready.quorumState !== undefined) this.opts.quorumStore.write(ready.quorumState);
    if (ready.logOps.length > 0) this.opts.logStore.apply(ready.logOps);
  }

  private restore(snapshot: Snapshot): void {
    this.opts.stateMachine.restore(snapshot);
    this.appliedEnd = snapshot.id.endOffset;
    this.lastSnapshotEnd = Math.max(this.lastSnapshotEnd, snapshot.id.endOffset);
    // Proposals the snapshot covers can no longer be checked entry by entry.
    while (this.waiting.length > 0 && this.waiting[0]!.lastOffset < snapshot.id.endOffset) {
      const p = this.waiting.shift()!;
      p.reject(new RaftError('UNKNOWN_OUTCOME', `offsets ${p.baseOffset}..${p.lastOffset} were replaced by a snapshot`));
    }
  }

  private apply(committed: readonly EntryBatch[]): void {
    const first = committed[0]!.baseOffset;
    assert(first === this.appliedEnd, `committed entries start at ${first}, applied end is ${this.appliedEnd}`);
    let end = first;
    for (const b of committed) {
      assert(b.baseOffset === end, 'committed entries are not contiguous');
      end += b.count;
    }
    const dataBatches = committed.filter((b) => b.kind === 'data');
    const sm = this.opts.stateMachine;
    if (dataBatches.length > 0) {
      // Entry objects, when the state machine wants them, live only for the call: the log keeps batches.
      if (sm.applyBatches !== undefined) sm.applyBatches(dataBatches);
      else sm.apply(entriesOf(dataBatches));
    }
    const last = committed[committed.length - 1]!;
    if (last.kind !== 'data') sm.appliedThrough?.(end - 1, last.epoch);
    this.appliedEnd = end;
    this.opts.stage?.('hw', end, 0);
    // Log matching: if the entry at a proposal's last offset has the proposal's epoch, the whole
    // proposal (and everything before it) is what this leader appended.
    let bi = 0;
    while (this.waiting.length > 0 && this.waiting[0]!.lastOffset < this.appliedEnd) {
      const p = this.waiting.shift()!;
      let epoch: number | undefined;
      if (p.lastOffset >= first) {
        while (lastOffsetOf(committed[bi]!) < p.lastOffset) bi++;
        epoch = committed[bi]!.epoch;
      }
      if (epoch === p.epoch) p.resolve({ epoch: p.epoch, baseOffset: p.baseOffset, lastOffset: p.lastOffset });
      else p.reject(new RaftError('PROPOSAL_LOST', `offset ${p.lastOffset} holds another leader's entry`, this.core.leaderId, this.core.epoch));
    }
  }

  private takeSnapshot(): SnapshotId | undefined {
    if (this.appliedEnd <= this.core.log.startOffset) return undefined;
    const id = this.core.createSnapshot(this.appliedEnd, this.opts.stateMachine.snapshot());
    this.lastSnapshotEnd = id.endOffset;
    return id;
  }

  // ---- Timers ----------------------------------------------------------------------------------

  private expireProposals(): void {
    // A full scan at most every 100 ms: the list can hold many proposals under load.
    const now = this.lastNowMs;
    if (this.waiting.length === 0 || now < this.nextExpiryScanMs) return;
    this.nextExpiryScanMs = now + 100;
    const kept: Proposal[] = [];
    this.earliestDeadlineMs = Infinity;
    for (const p of this.waiting) {
      if (now >= p.deadlineMs) p.reject(new RaftError('TIMEOUT', `offsets ${p.baseOffset}..${p.lastOffset} not committed in time`));
      else { kept.push(p); this.earliestDeadlineMs = Math.min(this.earliestDeadlineMs, p.deadlineMs); }
    }
    if (kept.length !== this.waiting.length) this.waiting = kept;
  }

  private armTimer(): void {
    if (this.closed) return;
    let at = this.core.nextDeadlineMs();
    // The earliest proposal deadline, but not before the next expiry scan may run (a timer for a
    // deadline that passed before it would fire, find the scan not due, and be armed again at once).
    if (this.waiting.length > 0) at = Math.min(at, Math.max(this.earliestDeadlineMs, this.nextExpiryScanMs));
    if (at === this.timerAtMs && this.timer !== undefined) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAtMs = at;
    if (at === Infinity) return;
    const delayMs = Math.max(0, at - this.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAtMs = Infinity;
      this.run(() => this.core.tick(this.nowMs()));
    }, Math.min(delayMs, 2 ** 31 - 1));
  }
}
