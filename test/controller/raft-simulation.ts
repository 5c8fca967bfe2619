// The controller on the Raft simulator: the Raft sim's nodes (real RaftCores under its crashes,
// partitions, message loss and snapshots) each run a controller node as the server does: a
// MetadataLoader replays what Raft commits into the node's own MetadataImage, and a ControllerSeat
// (the same one src/node/controller-service.ts uses) activates a QuorumController on the Raft
// leader once its epoch start is committed. Simulated brokers send BrokerRegistration and
// BrokerHeartbeat (with controlled shutdown) to the node they believe is the active controller,
// take NOT_CONTROLLER and retry elsewhere, crash and come back under a new incarnation id; an
// admin creates and deletes topics and asks for preferred elections. Answers go out once what
// they wrote (or read) is committed on the node that ran them, as the server's driver does.
//
// Invariants, after every step: at most one node is ever active in a Raft epoch; images of any two
// nodes at the same offset are equal, and equal to what the active controller replayed when it
// staged that batch; a fenced broker leads nothing and a leader is in its ISR (checkImage); along
// each node's committed history leader, partition and broker epochs never go down; a registration's
// broker epoch is the offset of its RegisterBrokerRecord. After healing, the run must end with
// every broker registered and unfenced and a new topic created, on every node that is up.
import { ControllerSeat, QuorumController, type Activation, type ControllerResult } from '../../src/controller/index.js';
import {
  deserializeMetadataRecord, imageToRecords, MetadataLoader, provenance, serializeMetadataRecord, type MetadataRecord,
} from '../../src/metadata/index.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { entriesOf, Simulation, SimViolation, type SimControl, type SimHost, type SimStats } from '../../src/raft/index.js';
import type { EntryBatch, NodeId, Snapshot } from '../../src/raft/core/types.js';
import { MinHeap } from '../../src/raft/sim/heap.js';
import { Prng } from '../../src/util/index.js';
import { CLUSTER_ID, registration, uuidFor } from './driver.js';
import { checkEpochGrowth, checkImage, errorName, serialise, serialiseAsRecords } from './simulation.js';

/** Deliberate bugs in the harness's driver part, to show the invariants catch them. */
export type ControllerRaftBug =
  /** Activate as soon as Raft says leader, before the epoch start (and so the previous leader's records) is committed. */
  | 'activate-before-epoch-start'
  /** Answer an operation as soon as its records are appended, not once they are committed. */
  | 'answer-before-commit'
  /** An off-by-one in writing a snapshot: its last record is left out. */
  | 'snapshot-loses-last-record';

export interface ControllerRaftOptions {
  readonly seed: number;
  /** Simulated time of the faulty phase (the Raft sim's chaosMs). */
  readonly chaosMs?: number;
  readonly livenessMs?: number;
  readonly traceLength?: number;
  readonly bug?: ControllerRaftBug;
}

export interface ControllerRaftStats {
  activations: number;
  registrations: number;
  heartbeats: number;
  notController: number;
  fenced: number;
  controlledShutdowns: number;
  brokerCrashes: number;
  topicsCreated: number;
  topicsDeleted: number;
  /** Image comparisons between nodes at one offset, and against the active controller's staged image. */
  imagesCompared: number;
  stagedCompared: number;
}

export interface ControllerRaftResult {
  readonly seed: number;
  readonly ok: boolean;
  readonly violation: string | undefined;
  readonly trace: readonly string[];
  readonly stats: ControllerRaftStats;
  readonly raft: SimStats;
}

/** broker.session.timeout.ms of the simulated cluster, and the brokers' heartbeat interval. */
export const SESSION_TIMEOUT_MS = 3000;
export const HEARTBEAT_INTERVAL_MS = 400;
/** How often the active controller looks for expired sessions, and balances leaders. */
const FENCE_CHECK_MS = 250;
const BALANCE_MS = 2000;
const ADMIN_INTERVAL_MS = 600;
/** One way of a request or an answer between a client and a controller node. */
const CLIENT_DELAY_MS_MAX = 5;
/** A client gives up on a request unanswered for this long, and asks another node. */
const CLIENT_REQUEST_TIMEOUT_MS = 1000;

export function runControllerRaftSeed(options: ControllerRaftOptions): ControllerRaftResult {
  let host: ControllerHost | undefined;
  const sim = new Simulation({
    seed: options.seed, chaosMs: options.chaosMs ?? 8000, livenessMs: options.livenessMs ?? 20_000,
    traceLength: options.traceLength ?? 100,
    host: (control) => (host = new ControllerHost(control, options.bug)),
  });
  const r = sim.run();
  const trace = r.ok ? [] : [...r.trace, `clients and nodes at the end:\n  ${host!.describeClients()}`];
  return { seed: options.seed, ok: r.ok, violation: r.violation, trace, stats: host!.stats, raft: r.stats };
}

/** A failing seed's report: what broke, how to replay it, and the last events. */
export function describeFailure(r: ControllerRaftResult): string {
  return `controller-on-Raft simulation failed, seed ${r.seed} (replay: LOGLINE_CONTROLLER_RAFT_SEED=${r.seed}): ${r.violation}\n`
    + `last events:\n  ${r.trace.join('\n  ')}`;
}

interface Waiting {
  /** The operation is answered once this offset is applied on the node. */
  readonly lastOffset: number;
  /** The epoch its records were appended in; undefined for an operation that wrote nothing. */
  readonly epoch: number | undefined;
  readonly activation: Activation;
  /** The epoch of the entry committed at lastOffset, once seen. */
  committedEpoch?: number;
  settle(ok: boolean): void;
}

export interface ControllerNode {
  readonly id: NodeId;
  up: boolean;
  loader: MetadataLoader;
  /** The next offset to apply (RaftDriver.appliedOffset). */
  appliedEnd: number;
  seat: ControllerSeat;
  waiting: Waiting[];
  /** Highest epochs along this node's committed images since it started. */
  epochsMax: Map<string, number>;
}

type BrokerState = 'down' | 'registering' | 'running' | 'shutting-down';

interface SimBroker {
  readonly id: number;
  incarnation: string;
  /** Bumped at each crash: answers to an earlier process are lost. */
  life: number;
  epoch: bigint;
  state: BrokerState;
  /** The node this broker believes is the active controller. */
  guess: NodeId;
  inflight: boolean;
  /** The metadata offset it has replayed, reported in heartbeats. */
  seenOffset: number;
  restartAtMs: number;
}

interface HostEvent {
  readonly at: number;
  readonly seq: number;
  readonly run: () => void;
}

/** An operation a client sends to a controller node. */
export type Operation<T> = (c: QuorumController, nowMs: number) => ControllerResult<T>;

export type Answer<T> = { readonly kind: 'ok'; readonly response: T; readonly node: ControllerNode } | { readonly kind: 'not-controller'; readonly hint: NodeId | undefined };

/** What every host of controller nodes counts. */
export interface ControllerNodeStats {
  activations: number;
  notController: number;
  fenced: number;
  imagesCompared: number;
  stagedCompared: number;
}

/**
 * The controller nodes on the Raft simulator as the server runs them (loader, seat, quorum
 * controller, answers on commit), their invariants, the simulated network between clients and
 * nodes, and the active controller's periodic work. A host adds its clients (ControllerHost here:
 * simulated brokers and an admin; the replication simulation: real replica managers).
 */
export abstract class ControllerNodesHost<S extends ControllerNodeStats = ControllerNodeStats> implements SimHost {
  protected readonly rng: Prng;
  protected readonly nodes = new Map<NodeId, ControllerNode>();
  private readonly events = new MinHeap<HostEvent>();
  private seq = 0;
  protected healed = false;
  /** unclean.leader.election.enable on every controller node. */
  protected unclean: boolean;
  /** Raft epoch → the node that was active in it. */
  private readonly activeOfEpoch = new Map<number, NodeId>();
  /** Offset → the committed image there (canonical text), from whichever node applied it first. */
  private readonly imageAt = new Map<number, string>();
  /** "offset:epoch" → the image the active controller replayed when it staged a batch ending there. */
  private readonly stagedAt = new Map<string, string>();
  /** "client>node": the client cannot reach the node (b1>3, admin>2). */
  protected readonly clientCuts = new Set<string>();

  constructor(protected readonly sim: SimControl, protected readonly bug: ControllerRaftBug | undefined, readonly stats: S) {
    this.rng = new Prng(sim.seed * 2246822519 + 5);
    this.unclean = this.rng.next() < 0.3;
  }

  /** The clients a client cut may pick (b1, admin, ...). */
  protected abstract clientNames(): string[];
  abstract heal(nowMs: number): void;
  abstract livenessDone(): boolean;
  /** After a node applied committed batches (its image moved). */
  protected afterApply(_node: ControllerNode): void {}

  /** The active controller's periodic work: fencing, balancing leaders; and cuts between clients and nodes. */
  protected startControllerTicks(): void {
    this.at(FENCE_CHECK_MS, () => this.fenceTick());
    this.at(BALANCE_MS, () => this.balanceTick());
    this.at(500, () => this.clientCutTick());
  }

  // ---- SimHost: the controller nodes ------------------------------------------------------------

  start(id: NodeId): void {
    const node: ControllerNode = {
      id, up: true, loader: new MetadataLoader(), appliedEnd: 0, waiting: [], epochsMax: new Map(),
      seat: new ControllerSeat((image) => new QuorumController({
        clusterId: CLUSTER_ID, prng: new Prng(this.rng.nextUint32()), sessionTimeoutMs: SESSION_TIMEOUT_MS,
        uncleanLeaderElectionEnable: this.unclean, image,
        topicDefaults: { numPartitions: 1, defaultReplicationFactor: 1, partitionsPerRequestMax: 1000 },
      })),
    };
    this.nodes.set(id, node);
  }

  crash(id: NodeId): void {
    const node = this.nodes.get(id)!;
    node.up = false;
    node.seat.resign();
    this.failWaiting(node);
  }

  restore(id: NodeId, snapshot: Snapshot): void {
    const node = this.nodes.get(id)!;
    const records = decodeRecords(snapshot.data);
    node.loader.handleSnapshot(records, provenance(snapshot.id.endOffset - 1, snapshot.id.epoch));
    node.appliedEnd = snapshot.id.endOffset;
    // A proposal a snapshot covers has an unknown outcome (RaftDriver's UNKNOWN_OUTCOME).
    this.failWaiting(node);
    this.checkCommitted(node);
  }

  snapshot(id: NodeId): Uint8Array {
    const records = imageToRecords(this.nodes.get(id)!.loader.image);
    return encodeRecords(this.bug === 'snapshot-loses-last-record' ? records.slice(0, -1) : records);
  }

  apply(id: NodeId, batches: readonly EntryBatch[]): void {
    const node = this.nodes.get(id)!;
    for (const b of batches) {
      const entries = entriesOf([b]);
      for (const w of node.waiting) {
        if (w.lastOffset >= b.baseOffset && w.lastOffset < b.baseOffset + b.count) w.committedEpoch = b.epoch;
      }
      node.appliedEnd = b.baseOffset + b.count;
      if (b.kind !== 'data') { node.loader.handleControl(b.baseOffset + b.count - 1, b.epoch); continue; }
      const records = entries.map((e) => deserializeMetadataRecord(Buffer.from(e.value.buffer, e.value.byteOffset, e.value.byteLength)) as MetadataRecord);
      // The committed log must replay: a record the active controller wrote on a stale image may not.
      this.guard(() => node.loader.handleCommit([{ baseOffset: b.baseOffset, epoch: b.epoch, records }]), `n${id} replaying the batch at ${b.baseOffset}/e${b.epoch}: `);
      this.checkCommitted(node);
    }
    node.seat.committed(node.loader.image.provenance.lastContainedOffset);
    this.settleWaiting(node);
    this.afterApply(node);
  }

  afterInput(id: NodeId): void {
    const node = this.nodes.get(id)!;
    const core = this.sim.core(id)!;
    const leadership = {
      isLeader: core.isLeader, epoch: core.epoch, leaderId: core.leaderId, logEndOffset: core.log.endOffset,
      appliedOffset: this.bug === 'activate-before-epoch-start' ? core.log.endOffset : node.appliedEnd,
    };
    const change = node.seat.check(leadership, node.loader.image, this.sim.nowMs());
    if (change.resigned !== null) {
      this.sim.record(`n${id} controller inactive (epoch ${change.resigned.epoch})`);
      this.failWaiting(node);
    }
    if (!change.activated) return;
    const a = change.active!;
    const owner = this.activeOfEpoch.get(a.epoch);
    if (owner !== undefined && owner !== id) throw new SimViolation(`two active controllers in epoch ${a.epoch}: n${owner} and n${id}`);
    this.activeOfEpoch.set(a.epoch, id);
    this.stats.activations++;
    this.sim.record(`n${id} controller active in epoch ${a.epoch}, writing from ${a.controller.nextWriteOffset}`);
    if (change.bootstrap.length > 0) this.write(node, a, change.bootstrap, () => {});
  }

  nextEventMs(): number {
    return this.events.peek()?.at ?? Infinity;
  }

  runEvents(nowMs: number): void {
    while ((this.events.peek()?.at ?? Infinity) <= nowMs) this.events.pop()!.run();
  }


  // ---- The driver's part: run, stage, propose, answer on commit ---------------------------------

  /**
   * A request reaches `node`: NOT_CONTROLLER unless its seat is active; else the operation runs on
   * the latest state and is answered once what it wrote, or read, is committed on this node.
   */
  protected handle<T>(node: ControllerNode, op: Operation<T>, answer: (a: Answer<T>) => void): void {
    const a = node.up ? node.seat.active : null;
    if (a === null) {
      this.stats.notController++;
      return answer({ kind: 'not-controller', hint: node.up ? this.sim.core(node.id)?.leaderId : undefined });
    }
    const out = op(a.controller, this.sim.nowMs());
    const deliver = (ok: boolean) => answer(ok ? { kind: 'ok', response: out.response, node } : { kind: 'not-controller', hint: undefined });
    if (out.records.length === 0) {
      node.waiting.push({ lastOffset: a.controller.lastReplayedOffset, epoch: undefined, activation: a, settle: deliver });
      return this.settleWaiting(node);
    }
    this.write(node, a, out.records, deliver);
  }

  /** Stages the records on the active controller and proposes them as one batch. */
  protected write(node: ControllerNode, a: Activation, records: readonly MetadataRecord[], settle: (ok: boolean) => void): void {
    const staged = node.seat.stage(a, records);
    const image = a.controller.image;
    this.guard(() => checkImage(image, `n${node.id} active image`));
    const r = this.sim.propose(node.id, records.map((rec) => serializeMetadataRecord(rec)));
    // The node may have crashed inside propose (at its fsync): then nothing answers.
    if (!node.up) return settle(false);
    if (!r.ok || !node.seat.landed(a, staged, r)) {
      this.sim.record(`n${node.id} proposal ${r.ok ? `landed at ${r.baseOffset}/e${r.epoch}, staged at ${staged}/e${a.epoch}` : 'refused'}: resigns`);
      if (node.seat.active === a) node.seat.resign();
      this.failWaiting(node);
      return settle(false);
    }
    this.stagedAt.set(`${r.lastOffset}:${r.epoch}`, serialise(image));
    if (this.bug === 'answer-before-commit') return settle(true);
    // A quorum of one commits inside propose, before anything waits: then the entry there is this one.
    const committedEpoch = node.appliedEnd > r.lastOffset ? r.epoch : undefined;
    node.waiting.push({ lastOffset: r.lastOffset, epoch: r.epoch, activation: a, settle, committedEpoch });
    this.settleWaiting(node);
  }

  protected settleWaiting(node: ControllerNode): void {
    const done = node.waiting.filter((w) => w.lastOffset < node.appliedEnd);
    if (done.length === 0) return;
    node.waiting = node.waiting.filter((w) => w.lastOffset >= node.appliedEnd);
    for (const w of done) {
      const ok = w.epoch === undefined || w.committedEpoch === w.epoch;
      if (!ok && node.seat.active === w.activation) {
        // Another leader's entry took the offset (RaftDriver's PROPOSAL_LOST): the replayed state is not the log's.
        this.sim.record(`n${node.id} proposal at ${w.lastOffset}/e${w.epoch} lost to e${w.committedEpoch}: resigns`);
        node.seat.resign();
      }
      w.settle(ok);
    }
    if (node.seat.active === null) this.failWaiting(node);
  }

  protected failWaiting(node: ControllerNode): void {
    const all = node.waiting;
    node.waiting = [];
    for (const w of all) w.settle(false);
  }

  // ---- Invariants on committed images -------------------------------------------------------------

  protected checkCommitted(node: ControllerNode): void {
    const image = node.loader.image;
    const offset = image.provenance.lastContainedOffset;
    if (offset < 0) return;
    this.guard(() => {
      checkImage(image, `n${node.id} committed image at ${offset}`);
      checkEpochGrowth(image, node.epochsMax, `n${node.id} committed history at ${offset}`);
    });
    const text = serialise(image);
    const seen = this.imageAt.get(offset);
    if (seen === undefined) this.imageAt.set(offset, text);
    else {
      this.stats.imagesCompared++;
      if (seen !== text) throw new SimViolation(`n${node.id}'s image at offset ${offset} differs from another node's:\n${diff(seen, text)}`);
    }
    const staged = this.stagedAt.get(`${offset}:${image.provenance.lastContainedEpoch}`);
    if (staged !== undefined) {
      this.stats.stagedCompared++;
      if (staged !== text) throw new SimViolation(`n${node.id}'s committed image at offset ${offset} differs from what the active controller replayed there:\n${diff(staged, text)}`);
    }
  }

  /** Runs checks (or a replay) whose failures are plain errors as invariant violations. */
  protected guard(fn: () => void, prefix = ''): void {
    try {
      fn();
    } catch (e) {
      if (e instanceof SimViolation) throw e;
      throw new SimViolation(`${prefix}${(e as Error).message}`);
    }
  }

  // ---- Clients ----------------------------------------------------------------------------------

  protected at(atMs: number, run: () => void): void {
    this.events.push({ at: Math.max(atMs, this.sim.nowMs() + 1), seq: this.seq++, run });
  }

  protected randomNode(): NodeId {
    return this.sim.nodeIds[this.rng.int(this.sim.nodeIds.length)]!;
  }

  /** Sends an operation to a node over the simulated client network; the answer comes back the same way. */
  protected send<T>(client: string, target: NodeId, op: Operation<T>, onAnswer: (a: Answer<T>) => void): void {
    const now = this.sim.nowMs();
    const cut = () => this.clientCuts.has(`${client}>${target}`);
    // A request or answer lost in a cut ends in the client's request timeout; it asks elsewhere then.
    const timedOut = () => this.at(this.sim.nowMs() + CLIENT_REQUEST_TIMEOUT_MS, () => onAnswer({ kind: 'not-controller', hint: undefined }));
    this.at(now + 1 + this.rng.int(CLIENT_DELAY_MS_MAX), () => {
      const node = this.nodes.get(target)!;
      if (cut()) return timedOut();
      if (!node.up) return this.at(this.sim.nowMs() + 1, () => onAnswer({ kind: 'not-controller', hint: undefined }));
      this.handle(node, op, (a) => this.at(this.sim.nowMs() + 1 + this.rng.int(CLIENT_DELAY_MS_MAX), () => {
        if (cut()) return timedOut();
        onAnswer(a);
      }));
    });
  }

  /** Cuts a client off from some controller nodes, or mends every cut (the Raft sim cuts the nodes from each other). */
  protected clientCutTick(): void {
    if (this.healed) return;
    this.at(this.sim.nowMs() + 500 + this.rng.int(1000), () => this.clientCutTick());
    const r = this.rng.next();
    if (r < 0.3) {
      const clients = this.clientNames();
      const client = clients[this.rng.int(clients.length)]!;
      const side = this.sim.nodeIds.filter(() => this.rng.next() < 0.5);
      for (const n of side) this.clientCuts.add(`${client}>${n}`);
      if (side.length > 0) this.sim.record(`${client} cut off from n${side.join(',n')}`);
    } else if (r < 0.5 && this.clientCuts.size > 0) {
      this.clientCuts.clear();
      this.sim.record('client cuts mended');
    }
  }

  protected fenceTick(): void {
    this.at(this.sim.nowMs() + FENCE_CHECK_MS, () => this.fenceTick());
    for (const node of this.nodes.values()) {
      const a = node.up ? node.seat.active : null;
      if (a === null) continue;
      const out = a.controller.maybeFenceStaleBrokers(this.sim.nowMs());
      if (out.records.length === 0) continue;
      this.stats.fenced += out.response.length;
      this.sim.record(`n${node.id} fences ${out.response.join(',')} (session expired)`);
      this.write(node, a, out.records, () => {});
    }
  }

  /** auto.leader.rebalance.enable on the active controller. */
  protected balanceTick(): void {
    this.at(this.sim.nowMs() + BALANCE_MS, () => this.balanceTick());
    for (const node of this.nodes.values()) {
      const a = node.up ? node.seat.active : null;
      if (a === null) continue;
      const out = a.controller.maybeBalancePartitionLeaders();
      if (out.records.length > 0) this.write(node, a, out.records, () => {});
    }
  }

  protected require(condition: boolean, message: string): void {
    if (!condition) throw new SimViolation(message);
  }
}

class ControllerHost extends ControllerNodesHost<ControllerRaftStats> {
  private readonly brokers: SimBroker[] = [];
  private topicCounter = 0;
  private adminInflight = false;
  private adminGuess!: NodeId;
  /** After healing: the topic whose creation must commit everywhere. */
  private liveTopic: string | undefined;

  constructor(sim: SimControl, bug: ControllerRaftBug | undefined) {
    super(sim, bug, {
      activations: 0, registrations: 0, heartbeats: 0, notController: 0, fenced: 0, controlledShutdowns: 0, brokerCrashes: 0,
      topicsCreated: 0, topicsDeleted: 0, imagesCompared: 0, stagedCompared: 0,
    });
    const brokerCount = 3 + this.rng.int(3);
    for (let id = 1; id <= brokerCount; id++) {
      this.brokers.push({
        id, incarnation: '', life: 0, epoch: -1n, state: 'down', guess: this.randomNode(), inflight: false, seenOffset: -1,
        restartAtMs: this.rng.int(300),
      });
    }
    this.adminGuess = this.randomNode();
    for (const b of this.brokers) this.at(b.restartAtMs, () => this.brokerTick(b));
    this.at(100 + this.rng.int(ADMIN_INTERVAL_MS), () => this.adminTick());
    this.startControllerTicks();
    sim.record(`controllers on nodes ${sim.nodeIds.join(',')}; ${brokerCount} brokers${this.unclean ? ', unclean election on' : ''}`);
  }


  protected clientNames(): string[] {
    return [...this.brokers.map((b) => `b${b.id}`), 'admin'];
  }

  override heal(nowMs: number): void {
    this.healed = true;
    this.clientCuts.clear();
    for (const b of this.brokers) b.restartAtMs = Math.min(b.restartAtMs, nowMs);
  }

  override livenessDone(): boolean {
    if (this.liveTopic === undefined) return false;
    const live = this.sim.nodeIds.filter((id) => !this.sim.downForGood(id)).map((id) => this.nodes.get(id)!);
    for (const node of live) {
      if (!node.up) return false;
      const image = node.loader.image;
      if (image.topics.getTopic(this.liveTopic) === undefined) return false;
      for (const b of this.brokers) {
        const reg = image.cluster.broker(b.id);
        if (reg === undefined || reg.fenced || reg.inControlledShutdown) return false;
      }
    }
    // At the end, once more in the full snapshot form (the per-step form leaves out what the controller never writes).
    const full = new Map<number, string>();
    for (const node of live) {
      const offset = node.loader.image.provenance.lastContainedOffset;
      const text = serialiseAsRecords(node.loader.image);
      const seen = full.get(offset);
      if (seen === undefined) full.set(offset, text);
      else if (seen !== text) throw new SimViolation(`after healing, n${node.id}'s snapshot records at offset ${offset} differ from another node's`);
    }
    return true;
  }

  private brokerTick(b: SimBroker): void {
    const now = this.sim.nowMs();
    this.at(now + HEARTBEAT_INTERVAL_MS / 2 + this.rng.int(HEARTBEAT_INTERVAL_MS), () => this.brokerTick(b));
    if (b.inflight) return;
    switch (b.state) {
      case 'down':
        if (now < b.restartAtMs) return;
        b.incarnation = uuidFor(this.rng.nextUint32());
        b.state = 'registering';
        this.sim.record(`b${b.id} starts, incarnation ${b.incarnation}`);
        return this.register(b);
      case 'registering':
        return this.register(b);
      case 'running': {
        const r = this.healed ? 1 : this.rng.next();
        if (r < 0.015) return this.brokerCrash(b);
        if (r < 0.03) {
          b.state = 'shutting-down';
          this.sim.record(`b${b.id} asks for controlled shutdown`);
        }
        return this.heartbeat(b);
      }
      case 'shutting-down':
        return this.heartbeat(b);
    }
  }

  private brokerCrash(b: SimBroker): void {
    b.state = 'down';
    b.life++;
    b.inflight = false;
    b.restartAtMs = this.sim.nowMs() + (this.rng.next() < 0.7 ? this.rng.int(3000) : 2 * SESSION_TIMEOUT_MS);
    this.stats.brokerCrashes++;
    this.sim.record(`b${b.id} crashes, back at ${b.restartAtMs}`);
  }

  /** Runs `onAnswer` only if the broker process that asked is still alive; NOT_CONTROLLER moves its guess. */
  private brokerSend<T>(b: SimBroker, op: Operation<T>, onOk: (response: T, node: ControllerNode) => void): void {
    const life = b.life;
    b.inflight = true;
    this.send(`b${b.id}`, b.guess, op, (a) => {
      if (b.life !== life) return;
      b.inflight = false;
      if (a.kind === 'not-controller') {
        b.guess = a.hint ?? this.randomNode();
        // At once to a named leader; without one (an election), after a backoff.
        const backoffMs = a.hint !== undefined ? 10 + this.rng.int(40) : 100 + this.rng.int(200);
        return this.at(this.sim.nowMs() + backoffMs, () => this.brokerRetry(b, life));
      }
      // The broker follows the committed log; the node that answered has applied at least this.
      b.seenOffset = Math.max(b.seenOffset, a.node.loader.image.provenance.lastContainedOffset);
      onOk(a.response, a.node);
    });
  }

  /** What the clients are doing, for a failure report. */
  describeClients(): string {
    const brokers = this.brokers.map((b) => `b${b.id} ${b.state} epoch=${b.epoch} guess=n${b.guess}${b.inflight ? ' inflight' : ''}`);
    const nodes = [...this.nodes.values()].map((n) => `n${n.id} ${n.up ? 'up' : 'down'} applied=${n.appliedEnd} image@${n.loader.image.provenance.lastContainedOffset}`
      + `${n.seat.active !== null ? ` ACTIVE e${n.seat.active.epoch}` : ''} waiting=${n.waiting.length}`);
    return [...nodes, ...brokers, `admin guess=n${this.adminGuess}${this.adminInflight ? ' inflight' : ''} live topic ${this.liveTopic ?? '-'}`].join('\n  ');
  }

  private brokerRetry(b: SimBroker, life: number): void {
    if (b.life !== life || b.inflight) return;
    if (b.state === 'registering') this.register(b);
    else if (b.state === 'running' || b.state === 'shutting-down') this.heartbeat(b);
  }

  private register(b: SimBroker): void {
    const incarnation = b.incarnation;
    this.brokerSend(b, (c, now) => c.registerBroker(registration(b.id, { incarnationId: incarnation }), now), (r, node) => {
      if (r.errorCode === ErrorCode.DUPLICATE_BROKER_REGISTRATION) return;
      this.require(r.errorCode === ErrorCode.NONE, `b${b.id} registration: ${errorName(r.errorCode)}`);
      // The broker epoch is the offset of its RegisterBrokerRecord, in the committed image that answered.
      const reg = node.loader.image.cluster.broker(b.id);
      this.require(reg !== undefined && reg.epoch === r.brokerEpoch && reg.incarnationId === incarnation,
        `b${b.id} registered with epoch ${r.brokerEpoch}, but n${node.id}'s committed image has epoch ${reg?.epoch} incarnation ${reg?.incarnationId}`);
      this.stats.registrations++;
      this.sim.record(`b${b.id} registered, epoch ${r.brokerEpoch}`);
      b.epoch = r.brokerEpoch;
      b.state = 'running';
    });
  }

  private heartbeat(b: SimBroker): void {
    const wantShutDown = b.state === 'shutting-down';
    const request = {
      brokerId: b.id, brokerEpoch: b.epoch, currentMetadataOffset: BigInt(b.seenOffset), wantFence: false, wantShutDown, offlineLogDirs: [],
    };
    this.brokerSend(b, (c, now) => c.processBrokerHeartbeat(request, now), (r, node) => {
      this.stats.heartbeats++;
      if (r.errorCode === ErrorCode.STALE_BROKER_EPOCH) {
        this.sim.record(`b${b.id} heartbeat: stale epoch ${b.epoch}, registers again`);
        b.state = wantShutDown ? 'down' : 'registering';
        return;
      }
      this.require(r.errorCode === ErrorCode.NONE, `b${b.id} heartbeat: ${errorName(r.errorCode)}`);
      if (!r.shouldShutDown) return;
      this.require(wantShutDown, `b${b.id} told to shut down without asking`);
      const image = node.loader.image;
      for (const t of image.topics.topicsById.values()) {
        for (const [p, part] of t.partitions) this.require(part.leader !== b.id, `b${b.id} let go by controlled shutdown still leads ${t.name}-${p}`);
      }
      b.state = 'down';
      b.life++;
      b.restartAtMs = this.sim.nowMs() + this.rng.int(3000);
      this.stats.controlledShutdowns++;
      this.sim.record(`b${b.id} shut down cleanly`);
    });
  }

  /** The admin: topic creation and deletion, preferred elections; after healing, one topic that must commit. */
  private adminTick(): void {
    this.at(this.sim.nowMs() + ADMIN_INTERVAL_MS / 2 + this.rng.int(ADMIN_INTERVAL_MS), () => this.adminTick());
    if (this.adminInflight || (this.healed && this.liveTopic !== undefined)) return;
    const r = this.rng.next();
    if (!this.healed && r < 0.2) return this.adminDelete();
    if (!this.healed && r < 0.3) {
      return this.adminSend((c) => c.electLeaders({ electionType: 0, topicPartitions: null, timeoutMs: 1000 }), () => {});
    }
    const name = `${this.healed ? 'live' : 't'}${this.topicCounter++}`;
    const partitions = 1 + this.rng.int(3);
    const rf = this.healed ? 1 : 1 + this.rng.int(3);
    this.adminSend((c) => c.createTopics({
      topics: [{ name, numPartitions: partitions, replicationFactor: rf, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false,
    }), (results, node) => {
      const t = results[0]!;
      if (t.errorCode !== ErrorCode.NONE) return;
      this.require(node.loader.image.topics.getTopic(name) !== undefined, `topic ${name} created, but not in n${node.id}'s committed image`);
      this.stats.topicsCreated++;
      this.sim.record(`topic ${name} created (${partitions}x${rf})`);
      if (this.healed) this.liveTopic = name;
    });
  }

  private adminDelete(): void {
    const names = [...this.nodes.get(this.adminGuess)!.loader.image.topics.topicsByName.keys()];
    if (names.length === 0) return;
    const name = names[this.rng.int(names.length)]!;
    this.adminSend((c) => c.deleteTopics([{ name, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }]), (results) => {
      if (results[0]!.errorCode === ErrorCode.NONE) {
        this.stats.topicsDeleted++;
        this.sim.record(`topic ${name} deleted`);
      }
    });
  }

  private adminSend<T>(op: Operation<T>, onOk: (response: T, node: ControllerNode) => void): void {
    this.adminInflight = true;
    this.send('admin', this.adminGuess, op, (a) => {
      this.adminInflight = false;
      if (a.kind === 'not-controller') {
        this.adminGuess = a.hint ?? this.randomNode();
        return;
      }
      onOk(a.response, a.node);
    });
  }

  /** The active controller's periodic work: fencing expired sessions. */
}

/** Snapshot bytes: each record serialised, behind its 4-byte length. */
function encodeRecords(records: readonly MetadataRecord[]): Uint8Array {
  const parts: Buffer[] = [];
  for (const r of records) {
    const body = serializeMetadataRecord(r);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(body.length);
    parts.push(len, body);
  }
  return new Uint8Array(Buffer.concat(parts));
}

/** The metadata records of a snapshot the hosts write (`snapshot`). */
export function decodeRecords(data: Uint8Array): MetadataRecord[] {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const out: MetadataRecord[] = [];
  for (let at = 0; at < buf.length;) {
    const len = buf.readUInt32BE(at);
    out.push(deserializeMetadataRecord(buf.subarray(at + 4, at + 4 + len)) as MetadataRecord);
    at += 4 + len;
  }
  return out;
}

/** The first differing line of two canonical images. */
function diff(a: string, b: string): string {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] !== y[i]) return `  line ${i}: ${(x[i] ?? '<none>').slice(0, 300)}\n  vs       ${(y[i] ?? '<none>').slice(0, 300)}`;
  }
  return '  (equal)';
}
