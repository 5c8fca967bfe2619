// Deterministic simulation of a Raft quorum: N real cores in one process, one seeded PRNG, a
// simulated clock and network (delay, drop, duplicate, reorder, symmetric and one-way partitions),
// crashes that lose unsynced log writes, and restarts from what was stored. Every step is followed by
// invariant checks; a run ends with a liveness check after the network heals. The same seed always
// gives the same run, so a failing seed is its own reproduction.
//
// The faults are an explicit schedule: each chaos step becomes a concrete ChaosEvent ("crash n2
// keeping 1 unsynced op, back after 120 ms"), recorded in the result. Chaos, the network and the
// faults inside the driver draw from separate random streams, so a run can be replayed from its
// seed with a schedule that leaves events out and everything else stays as it was as far as it
// can; that is what trace minimisation (minimize.ts) needs.
//
// A host (SimOptions.host) puts a real state machine and its clients on the nodes (the controller
// simulation does): it is told of starts, crashes, committed batches and snapshots, proposes its
// own values, runs its own events on the simulated clock, and decides liveness; the sim then
// proposes nothing of its own.
import { AssertionError, Prng, assert } from '../../util/index.js';
import { RaftCore } from '../core/raft.js';
import { entriesOf } from '../core/batch.js';
import { differByOne } from '../core/voters.js';
import { defaultRaftTimeouts, type Entry, type EntryBatch, type Envelope, type LogOp, type NodeId, type Ready, type Snapshot } from '../core/types.js';
import type { ProposeResult } from '../core/raft.js';
import { MemoryLogStore, MemoryQuorumStateStore } from '../store/memory.js';
import { MinHeap } from './heap.js';
import { describeMessage } from '../core/describe.js';

export { describeMessage };

export interface SimOptions {
  readonly seed: number;
  /** Stop after this many steps (no liveness check then); by default the whole schedule runs. */
  readonly maxSteps?: number;
  /** Simulated time of the faulty phase. */
  readonly chaosMs?: number;
  /** After healing, a proposal must commit on every node within this. */
  readonly livenessMs?: number;
  /** Events kept for the trace printed on failure. */
  readonly traceLength?: number;
  /** Replay these chaos events instead of drawing them (the seed still drives everything else). */
  readonly schedule?: readonly ChaosEvent[];
  /** Crashes right before an fsync or right after a quorum-state write (default on). */
  readonly driverCrashes?: boolean;
  /** Test-only: a deliberate bug, to check that the simulator and the minimiser catch it. */
  readonly bug?: 'ack-before-fsync';
  /** A state machine and its clients on the nodes, in place of the sim's own proposals and liveness check. */
  readonly host?: (control: SimControl) => SimHost;
  /**
   * A scripted run (scenario files, `sim/scenario.ts`): this cluster shape, no random choices at
   * all, and nothing happens unless a command says so (see the `script*` methods).
   */
  readonly script?: ScriptSetup;
}

/** The cluster of a scripted run. */
export interface ScriptSetup {
  readonly voters: number;
  readonly observers: number;
  /** 1 for Kafka's default timeouts, else scaled as the random runs scale them (0.2, 0.05). */
  readonly timeoutScale: number;
  /** What each node's `config.random` returns, by node id - 1 (default (id - 1) / 10, so node 1 stands first). */
  readonly random: readonly number[];
}

/** A command of a scripted run: a chaos event, or time, delivery and drops under the script's control. */
export type ScriptCommand =
  | ChaosEvent
  | { readonly kind: 'tick'; readonly ms: number; readonly deliver: boolean }
  | { readonly kind: 'deliver'; readonly filter: MessageFilter; readonly drop: boolean }
  | { readonly kind: 'stabilize' };

/** Selects queued messages in a scripted run; an absent field matches anything. */
export interface MessageFilter {
  readonly from?: NodeId;
  readonly to?: NodeId;
  /** A prefix of the message's description, e.g. `Vote`, `PreVoteReq`, `FetchResp`. */
  readonly type?: string;
  readonly count?: number;
}

/** One fault or client action of the chaos phase, at a simulated time. */
export type ChaosEvent =
  | { readonly atMs: number; readonly kind: 'propose'; readonly node: NodeId; readonly count: number }
  | { readonly atMs: number; readonly kind: 'crash'; readonly node: NodeId; readonly keep: number; readonly restartAfterMs: number | undefined }
  | { readonly atMs: number; readonly kind: 'restart'; readonly node: NodeId }
  | { readonly atMs: number; readonly kind: 'partition'; readonly side: readonly NodeId[] }
  | { readonly atMs: number; readonly kind: 'block'; readonly from: NodeId; readonly to: NodeId }
  | { readonly atMs: number; readonly kind: 'heal-network' }
  | { readonly atMs: number; readonly kind: 'snapshot'; readonly node: NodeId }
  | { readonly atMs: number; readonly kind: 'resign' }
  | { readonly atMs: number; readonly kind: 'network'; readonly drop: number; readonly dup: number; readonly delayMaxMs: number }
  /** At healing: this node is killed and stays down. */
  | { readonly atMs: number; readonly kind: 'keep-down'; readonly node: NodeId }
  /** KIP-853, asked of the current leader: add a node as a voter, or remove one. */
  | { readonly atMs: number; readonly kind: 'add-voter'; readonly node: NodeId }
  | { readonly atMs: number; readonly kind: 'remove-voter'; readonly node: NodeId };

export function formatChaosEvent(e: ChaosEvent): string {
  switch (e.kind) {
    case 'propose': return `@${e.atMs} propose n${e.node} x${e.count}`;
    case 'crash': return `@${e.atMs} crash n${e.node} keep=${e.keep} restart=${e.restartAfterMs === undefined ? 'never' : `+${e.restartAfterMs}`}`;
    case 'restart': return `@${e.atMs} restart n${e.node}`;
    case 'partition': return `@${e.atMs} partition ${e.side.length === 0 ? '-' : e.side.join(',')}`;
    case 'block': return `@${e.atMs} block ${e.from}>${e.to}`;
    case 'heal-network': return `@${e.atMs} heal-network`;
    case 'snapshot': return `@${e.atMs} snapshot n${e.node}`;
    case 'resign': return `@${e.atMs} resign`;
    case 'network': return `@${e.atMs} network drop=${e.drop} dup=${e.dup} delay=${e.delayMaxMs}`;
    case 'keep-down': return `@${e.atMs} keep-down n${e.node}`;
    case 'add-voter': return `@${e.atMs} add-voter n${e.node}`;
    case 'remove-voter': return `@${e.atMs} remove-voter n${e.node}`;
  }
}

/** The inverse of formatChaosEvent; events are separated by ';'. */
export function parseSchedule(text: string): ChaosEvent[] {
  const events: ChaosEvent[] = [];
  for (const part of text.split(';').map((p) => p.trim()).filter((p) => p.length > 0)) {
    const m = /^@(\d+) ([a-z-]+)(?: (.*))?$/.exec(part);
    if (m === null) throw new Error(`bad chaos event "${part}"`);
    const atMs = Number(m[1]);
    const args = m[3] ?? '';
    const node = (): NodeId => {
      const n = /n(\d+)/.exec(args);
      if (n === null) throw new Error(`chaos event "${part}" needs a node`);
      return Number(n[1]);
    };
    const num = (key: string): number => {
      const v = new RegExp(`${key}=([0-9.]+)`).exec(args);
      if (v === null) throw new Error(`chaos event "${part}" needs ${key}=`);
      return Number(v[1]);
    };
    switch (m[2]) {
      case 'propose': events.push({ atMs, kind: 'propose', node: node(), count: Number(/x(\d+)/.exec(args)?.[1] ?? 1) }); break;
      case 'crash': {
        const restart = /restart=(never|\+(\d+))/.exec(args);
        events.push({ atMs, kind: 'crash', node: node(), keep: num('keep'), restartAfterMs: restart?.[2] === undefined ? undefined : Number(restart[2]) });
        break;
      }
      case 'restart': events.push({ atMs, kind: 'restart', node: node() }); break;
      case 'partition': events.push({ atMs, kind: 'partition', side: args === '-' ? [] : args.split(',').map(Number) }); break;
      case 'block': {
        const b = /(\d+)>(\d+)/.exec(args);
        if (b === null) throw new Error(`bad block event "${part}"`);
        events.push({ atMs, kind: 'block', from: Number(b[1]), to: Number(b[2]) });
        break;
      }
      case 'heal-network': events.push({ atMs, kind: 'heal-network' }); break;
      case 'snapshot': events.push({ atMs, kind: 'snapshot', node: node() }); break;
      case 'resign': events.push({ atMs, kind: 'resign' }); break;
      case 'network': events.push({ atMs, kind: 'network', drop: num('drop'), dup: num('dup'), delayMaxMs: num('delay') }); break;
      case 'keep-down': events.push({ atMs, kind: 'keep-down', node: node() }); break;
      case 'add-voter': events.push({ atMs, kind: 'add-voter', node: node() }); break;
      case 'remove-voter': events.push({ atMs, kind: 'remove-voter', node: node() }); break;
      default: throw new Error(`unknown chaos event "${part}"`);
    }
  }
  return events;
}

export interface SimStats {
  steps: number;
  simMs: number;
  messages: number;
  proposals: number;
  committed: number;
  leaders: number;
  crashes: number;
  snapshots: number;
  snapshotInstalls: number;
  /** KIP-853 voter changes the leader accepted (appended). */
  voterChanges: number;
  /** Runs whose liveness check went on with a node dead for good. */
  keptDown: number;
  /** Runs that would have kept a node down but had a voter change in flight at healing. */
  keepDownSkipped: number;
}

export interface SimResult {
  readonly seed: number;
  readonly ok: boolean;
  readonly violation: string | undefined;
  readonly failedStep: number | undefined;
  readonly voters: number;
  readonly observers: number;
  readonly stats: SimStats;
  readonly trace: readonly string[];
  /** The chaos events this run executed, in order (replaying them with the seed gives this run). */
  readonly schedule: readonly ChaosEvent[];
}

/** An invariant broke; a host throws it too (anything else thrown is a bug in the harness). */
export class SimViolation extends Error {}
const Violation = SimViolation;

/** What the sim offers its host. */
export interface SimControl {
  readonly seed: number;
  nowMs(): number;
  /** The node's core while it runs. */
  core(node: NodeId): RaftCore | undefined;
  /** All node ids, voters first. */
  readonly nodeIds: readonly NodeId[];
  /** Killed at healing for good: liveness goes on without it. */
  downForGood(node: NodeId): boolean;
  /** Proposes on a running node and drives it; not from inside `apply`/`restore` (the node is mid-Ready there). */
  propose(node: NodeId, values: readonly Uint8Array[]): ProposeResult;
  /** Adds a line to the trace printed on failure. */
  record(line: string | (() => string)): void;
}

/** A state machine and its clients hosted on the simulated nodes. */
export interface SimHost {
  /** The node (re)started with empty state; a snapshot, if it has one, comes through `restore`. */
  start(node: NodeId): void;
  crash(node: NodeId): void;
  restore(node: NodeId, snapshot: Snapshot): void;
  /** The committed batches of one Ready (data and control), in offset order. */
  apply(node: NodeId, batches: readonly EntryBatch[]): void;
  /** The state as of everything the node applied. */
  snapshot(node: NodeId): Uint8Array;
  /** After the node's core took an input and its Ready was handled (its role or applied offset may have changed). */
  afterInput(node: NodeId): void;
  /** When the host's next own event is due (Infinity: none), and running the due ones. */
  nextEventMs(): number;
  runEvents(nowMs: number): void;
  /** The faults stop: the host's own (client crashes) too. */
  heal(nowMs: number): void;
  /** After healing, the run ends once this holds. */
  livenessDone(): boolean;
  /**
   * A host whose clients are asynchronous code (promises): `Simulation.runAsync` awaits this after
   * every step, so the work the step started runs before the next one (deterministically: nothing
   * in it waits on real time or real I/O). It throws a SimViolation its clients found meanwhile.
   */
  settle?(): Promise<void>;
}

interface Flight {
  readonly at: number;
  readonly seq: number;
  readonly env: Envelope;
  /** Incarnations of both ends at send time: a restart closes every connection, as TCP would. */
  readonly fromIncarnation: number;
  readonly toIncarnation: number;
}

interface Mirror {
  start: number;
  keys: string[];
}

interface SimNode {
  readonly id: NodeId;
  readonly voter: boolean;
  readonly prng: Prng;
  /** A scripted run's constant in place of the node's random stream. */
  readonly fixedRandom: number | undefined;
  readonly quorumStore: MemoryQuorumStateStore;
  readonly logStore: MemoryLogStore;
  core: RaftCore | undefined;
  /** Data values applied by the state machine, with their offsets, since its last restore. */
  applied: Array<[number, string]>;
  appliedEnd: number;
  mirror: Mirror;
  leaderEpochSeen: number;
  leaderHw: number;
  sawLive: boolean;
  incarnation: number;
  /** When a crashed node comes back by itself (a supervisor restarting it); Infinity: stays down. */
  restartAtMs: number;
  /** Killed at healing and never restarted; the liveness check goes on without it. */
  downForGood: boolean;
  /** The voter set this node held as leader after its last input (epoch, ids), for the one-change-at-a-time check. */
  voterSetSeen: { epoch: number; ids: string } | undefined;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();
function entryKey(e: Entry): string {
  return e.kind === 'control' ? `${e.epoch}|ctl` : `${e.epoch}|${decoder.decode(e.value)}`;
}

export function encodeSimSnapshot(applied: ReadonlyArray<[number, string]>): Uint8Array {
  return encoder.encode(JSON.stringify(applied));
}

export function decodeSimSnapshot(data: Uint8Array): Array<[number, string]> {
  return JSON.parse(decoder.decode(data)) as Array<[number, string]>;
}

/** The violation an error thrown out of the loop stands for; anything else is a harness bug and is rethrown. */
function violationOf(err: unknown): string {
  if (!(err instanceof Violation || err instanceof AssertionError)) throw err;
  return err instanceof AssertionError ? `core assertion: ${err.message}` : err.message;
}

export class Simulation {
  readonly seed: number;
  /** Setup only (cluster shape, timeouts, the nodes' own randomness). */
  private readonly rng: Prng;
  private readonly chaosRng: Prng;
  private readonly netRng: Prng;
  private readonly faultRng: Prng;
  private readonly replay: readonly ChaosEvent[] | undefined;
  private replayAt = 0;
  private readonly executed: ChaosEvent[] = [];
  private readonly driverCrashes: boolean;
  private readonly bug: SimOptions['bug'];
  private readonly nodes: SimNode[] = [];
  private readonly voterIds: NodeId[] = [];
  private readonly net = new MinHeap<Flight>();
  private seq = 0;
  private now = 0;
  private step = 0;
  private readonly chaosMs: number;
  private readonly livenessMs: number;
  private readonly maxSteps: number;
  private readonly traceLength: number;
  private readonly trace: string[] = [];
  /** A scripted run: messages wait here, in send order, until a command delivers or drops them. */
  private readonly script: ScriptSetup | undefined;
  private readonly queue: Flight[] = [];
  private scriptLines: string[] = [];

  private readonly timeouts: typeof defaultRaftTimeouts;
  private blocked = new Set<string>();
  private readonly requestIncarnation = new Map<string, number>();
  private dropRate = 0;
  private dupRate = 0;
  private delayMaxMs = 10;
  private nextChaosMs = 0;
  private healed = false;
  private valueCounter = 0;
  private livenessValue: string | undefined;
  private readonly host: SimHost | undefined;

  /** Offset -> entry key, for every offset some node applied. */
  private readonly committed: Array<string | undefined> = [];
  /** The lowest epoch of a leader whose high watermark passed each offset (Raft's "committed in term T"). */
  private readonly commitEpochs: Array<number | undefined> = [];
  /** "offset:epoch" -> entry key, and -> key of the entry before it, across all nodes' logs. */
  private readonly logKeys = new Map<string, string>();
  private readonly logPrev = new Map<string, string>();
  private readonly leaderOfEpoch = new Map<number, NodeId>();
  readonly stats: SimStats = {
    steps: 0, simMs: 0, messages: 0, proposals: 0, committed: 0, leaders: 0, crashes: 0, snapshots: 0, snapshotInstalls: 0, keptDown: 0, keepDownSkipped: 0,
    voterChanges: 0,
  };
  /** Voter changes (KIP-853) are drawn in this run; the voter count stays within [bootstrap, bootstrap + 1]. */
  private readonly membership: boolean;

  constructor(options: SimOptions) {
    this.seed = options.seed;
    this.rng = new Prng(options.seed * 2654435761 + 1);
    this.chaosMs = options.chaosMs ?? 15_000;
    this.livenessMs = options.livenessMs ?? 15_000;
    this.maxSteps = options.maxSteps ?? 1_000_000;
    this.traceLength = options.traceLength ?? 40;
    this.replay = options.schedule;
    this.script = options.script;
    this.driverCrashes = this.script === undefined && (options.driverCrashes ?? true);
    this.bug = options.bug;
    const script = this.script;
    const shape = this.rng.next();
    const voters = script?.voters ?? (shape < 0.05 ? 1 : shape < 0.75 ? 3 : 5);
    const observerDraw = this.rng.next() < 0.3 ? 1 : 0;
    const observers = script?.observers ?? observerDraw;
    // Half the seeds run Kafka's default timeouts; the rest scale them down, for many more elections.
    const profile = this.rng.next();
    const scale = script?.timeoutScale ?? (profile < 0.5 ? 1 : profile < 0.75 ? 0.2 : 0.05);
    this.timeouts = scale === 1 ? defaultRaftTimeouts : scaledTimeouts(scale);
    for (let i = 1; i <= voters; i++) this.voterIds.push(i);
    for (let i = 1; i <= voters + observers; i++) this.nodes.push(this.newNode(i, i <= voters));
    this.chaosRng = new Prng(this.rng.nextUint32());
    this.netRng = new Prng(this.rng.nextUint32());
    this.faultRng = new Prng(this.rng.nextUint32());
    // Drawn last, so the other streams of a seed are what they were before voter changes existed.
    this.membership = script === undefined && voters >= 3 && this.rng.next() < 0.5;
    if (this.membership && observers === 0) this.nodes.push(this.newNode(voters + 1, false));
    this.host = options.host?.(this.control());
    for (const n of this.nodes) this.start(n);
    this.nextChaosMs = script !== undefined ? Infinity : this.replay === undefined ? this.chaosRng.int(200) : this.replay[0]?.atMs ?? Infinity;
  }

  private control(): SimControl {
    return {
      seed: this.seed,
      nodeIds: this.nodes.map((n) => n.id),
      nowMs: () => this.now,
      core: (id) => this.nodes[id - 1]?.core,
      downForGood: (id) => this.nodes[id - 1]!.downForGood,
      propose: (id, values) => {
        const n = this.nodes[id - 1]!;
        assert(n.core !== undefined, `propose on n${id}, which is down`);
        const result = n.core.propose(values, this.now);
        if (result.ok) this.stats.proposals += values.length;
        this.afterInput(n);
        return result;
      },
      record: (line) => this.record(line),
    };
  }

  private newNode(id: NodeId, voter: boolean): SimNode {
    return {
      id, voter, prng: new Prng(this.rng.nextUint32()), fixedRandom: this.script === undefined ? undefined : this.script.random[id - 1] ?? (id - 1) / 10,
      quorumStore: new MemoryQuorumStateStore(), logStore: new MemoryLogStore(),
      core: undefined, applied: [], appliedEnd: 0, mirror: { start: 0, keys: [] }, leaderEpochSeen: -1, leaderHw: 0, sawLive: false, incarnation: 0, restartAtMs: Infinity, downForGood: false,
      voterSetSeen: undefined,
    };
  }

  run(): SimResult {
    let violation: string | undefined;
    try {
      this.loop();
    } catch (err) {
      violation = violationOf(err);
    }
    return this.result(violation);
  }

  /** `run` for a host with asynchronous clients: its `settle` is awaited after every step. */
  async runAsync(): Promise<SimResult> {
    let violation: string | undefined;
    try {
      while (this.step < this.maxSteps && !this.loopStep()) await this.host?.settle?.();
    } catch (err) {
      violation = violationOf(err);
    }
    return this.result(violation);
  }

  private result(violation: string | undefined): SimResult {
    this.stats.steps = this.step;
    this.stats.simMs = this.now;
    return {
      seed: this.seed, ok: violation === undefined, violation, failedStep: violation === undefined ? undefined : this.step,
      voters: this.voterIds.length, observers: this.nodes.length - this.voterIds.length, stats: this.stats,
      trace: violation === undefined ? [] : [...this.trace],
      schedule: this.executed,
    };
  }

  // ---- The event loop --------------------------------------------------------------------------

  private loop(): void {
    while (this.step < this.maxSteps && !this.loopStep());
  }

  private sameTimeEvents = 0;

  /** One event of the loop; true when the run is over (liveness reached). */
  private loopStep(): boolean {
    if (!this.healed && this.now >= this.chaosMs) this.heal();
    if (this.healed && this.livenessDone()) return true;
    if (this.now > this.chaosMs + this.livenessMs) {
      throw new Violation(`liveness: ${this.host !== undefined ? 'the host\'s liveness condition did not hold' : 'no proposal committed on every node'} within ${this.livenessMs} ms of healing`);
    }
    const before = this.now;
    this.nextEvent();
    this.sameTimeEvents = this.now === before ? this.sameTimeEvents + 1 : 0;
    if (this.sameTimeEvents > 10_000) throw new Violation(`livelock: 10000 events at time ${this.now}`);
    this.step++;
    return false;
  }

  private nextEvent(): void {
    const flight = this.net.peek();
    let node: SimNode | undefined;
    let nodeAt = Infinity;
    for (const n of this.nodes) {
      if (n.core === undefined) continue;
      const t = n.core.nextDeadlineMs();
      if (t < nodeAt) { nodeAt = t; node = n; }
    }
    const chaosAt = this.nextChaosMs;
    const netAt = flight?.at ?? Infinity;
    let restart: SimNode | undefined;
    for (const n of this.nodes) {
      if (n.core === undefined && !n.downForGood && (restart === undefined || n.restartAtMs < restart.restartAtMs)) restart = n;
    }
    const restartAt = restart?.restartAtMs ?? Infinity;
    const hostAt = this.host?.nextEventMs() ?? Infinity;
    if (!this.healed && Math.min(restartAt, chaosAt, netAt, nodeAt, hostAt) >= this.chaosMs) {
      // Healing is an event of its own at exactly chaosMs, so that it does not move with whatever
      // event happens to come first after it (a replayed schedule may have left that one out).
      this.now = Math.max(this.now, this.chaosMs);
      this.heal();
      return;
    }
    if (hostAt < restartAt && hostAt < chaosAt && hostAt < netAt && hostAt < nodeAt) {
      this.now = Math.max(this.now, hostAt);
      this.host!.runEvents(this.now);
    } else if (restart !== undefined && restartAt <= chaosAt && restartAt <= netAt && restartAt <= nodeAt) {
      this.now = Math.max(this.now, restartAt);
      this.record(`restart n${restart!.id} (supervised)`);
      this.start(restart!);
    } else if (chaosAt <= netAt && chaosAt <= nodeAt) {
      this.now = Math.max(this.now, chaosAt);
      this.chaos();
    } else if (netAt <= nodeAt) {
      this.net.pop();
      this.now = Math.max(this.now, netAt);
      this.deliver(flight!);
    } else {
      this.now = Math.max(this.now, nodeAt);
      this.record(`tick n${node!.id} (${node!.core!.role} e${node!.core!.epoch})`);
      node!.core!.tick(this.now);
      this.afterInput(node!);
    }
  }

  private deliver(flight: Flight): void {
    const env = flight.env;
    const n = this.nodes[env.to - 1]!;
    if (this.blocked.has(`${env.from}>${env.to}`)) {
      this.record(() => `lost ${env.from}->${env.to} #${env.correlationId} ${describeMessage(env)} (blocked)`);
      return;
    }
    if (n.core === undefined) {
      // Connection refused: the sender learns at once.
      this.record(() => `refused ${env.from}->${env.to} #${env.correlationId} ${describeMessage(env)} (n${env.to} is down)`);
      const s = this.nodes[env.from - 1]!;
      if (env.message.type.endsWith('Request') && s.core !== undefined && flight.fromIncarnation === s.incarnation) {
        s.core.requestFailed(env.correlationId, this.now);
        this.afterInput(s);
      }
      return;
    }
    // What a process sent before it was killed is still delivered (its kernel flushes the socket),
    // but nothing reaches an incarnation other than the one the connection was made to.
    const sender = this.nodes[env.from - 1]!;
    if (flight.toIncarnation !== n.incarnation) {
      if (env.message.type.endsWith('Request') && sender.core !== undefined && flight.fromIncarnation === sender.incarnation) {
        sender.core.requestFailed(env.correlationId, this.now);
        this.afterInput(sender);
      }
      return;
    }
    if (env.message.type.endsWith('Request')) this.requestIncarnation.set(`${env.from}:${env.to}:${env.correlationId}`, flight.fromIncarnation);
    this.record(() => `deliver ${env.from}->${env.to} #${env.correlationId} ${describeMessage(env)}`);
    n.core.step(env, this.now);
    this.afterInput(n);
  }

  // ---- Faults ----------------------------------------------------------------------------------

  private chaos(): void {
    if (this.healed) {
      this.nextChaosMs = this.host === undefined ? this.now + 100 : Infinity;
      return this.host === undefined ? this.proposeLiveness() : undefined;
    }
    let event: ChaosEvent | undefined;
    if (this.replay !== undefined) {
      event = this.replay[this.replayAt++];
      this.nextChaosMs = this.replay[this.replayAt]?.atMs ?? Infinity;
    } else {
      this.nextChaosMs = this.now + 10 + this.chaosRng.int(300);
      event = this.drawChaos();
    }
    if (event !== undefined) this.execute(event);
  }

  /** The next fault, drawn from the chaos stream and aimed at the current state. */
  private drawChaos(): ChaosEvent | undefined {
    const rng = this.chaosRng;
    const atMs = this.now;
    const r = rng.next();
    if (r < 0.45) {
      const n = this.randomNode((x) => x.core?.isLeader === true) ?? this.randomNode((x) => x.core !== undefined);
      return n === undefined ? undefined : { atMs, kind: 'propose', node: n.id, count: 1 + rng.int(3) };
    }
    if (r < 0.51) {
      const n = this.randomNode((x) => x.core !== undefined);
      return n === undefined ? undefined : { atMs, kind: 'crash', node: n.id, keep: rng.int(n.logStore.unsyncedOps + 1), restartAfterMs: this.drawRestart(rng) };
    }
    if (r < 0.60) {
      const n = this.randomNode((x) => x.core === undefined);
      return n === undefined ? undefined : { atMs, kind: 'restart', node: n.id };
    }
    if (r < 0.65) return { atMs, kind: 'partition', side: this.nodes.filter(() => rng.next() < 0.5).map((n) => n.id) };
    if (r < 0.69) {
      const from = rng.int(this.nodes.length) + 1;
      const to = rng.int(this.nodes.length) + 1;
      return from === to ? undefined : { atMs, kind: 'block', from, to };
    }
    if (r < 0.75) return { atMs, kind: 'heal-network' };
    if (r < 0.82) {
      const n = this.randomNode((x) => x.core !== undefined && x.appliedEnd > x.core.log.startOffset);
      return n === undefined ? undefined : { atMs, kind: 'snapshot', node: n.id };
    }
    if (r < 0.85) return this.nodes.some((x) => x.core?.isLeader === true) ? { atMs, kind: 'resign' } : undefined;
    if (r < 0.89) {
      return {
        atMs, kind: 'network', drop: [0, 0, 0.01, 0.05, 0.2][rng.int(5)]!, dup: [0, 0.02, 0.1][rng.int(3)]!,
        delayMaxMs: [2, 10, 50, 200][rng.int(4)]!,
      };
    }
    if (r < 0.95 && this.membership) return this.drawVoterChange(atMs);
    return undefined;
  }

  /**
   * A voter change for the current leader: add a node that does not vote while the set has its
   * bootstrap size, else remove a random voter (the leader too), so a minority can still fail.
   */
  private drawVoterChange(atMs: number): ChaosEvent | undefined {
    const leader = this.nodes.find((x) => x.core?.isLeader === true);
    if (leader === undefined) return undefined;
    const ids = leader.core!.voterSet.map((v) => v.id);
    if (ids.length <= this.voterIds.length) {
      const n = this.randomNode((x) => !ids.includes(x.id));
      return n === undefined ? undefined : { atMs, kind: 'add-voter', node: n.id };
    }
    const n = this.randomNode((x) => ids.includes(x.id));
    return n === undefined ? undefined : { atMs, kind: 'remove-voter', node: n.id };
  }

  /** Half the crashes come back quickly, as under a supervisor; the others wait for a restart event. */
  private drawRestart(rng: Prng): number | undefined {
    return rng.next() < 0.5 ? 1 + rng.int(500) : undefined;
  }

  /** Carries out an event; one aimed at a node in the wrong state (down, say) does nothing. */
  private execute(e: ChaosEvent): void {
    const node = 'node' in e ? this.nodes[e.node - 1] : undefined;
    if ('node' in e && node === undefined) return;
    this.executed.push(e);
    switch (e.kind) {
      // A host proposes its own values (the sim's would mean nothing to its state machine).
      case 'propose': return this.host === undefined ? this.proposeOn(node!, e.count) : undefined;
      case 'crash':
        if (node!.core === undefined) return;
        return this.crash(node!, Math.min(e.keep, node!.logStore.unsyncedOps), e.restartAfterMs);
      case 'restart':
        if (node!.core !== undefined) return;
        this.record(`restart n${node!.id}`);
        return this.start(node!);
      case 'partition': return this.partition(e.side);
      case 'block':
        this.blocked.add(`${e.from}>${e.to}`);
        return this.record(`block ${e.from}->${e.to}`);
      case 'heal-network':
        this.blocked.clear();
        return this.record('heal network');
      case 'snapshot': return this.snapshotOn(node!);
      case 'resign': return this.resignLeader();
      case 'network':
        this.dropRate = e.drop;
        this.dupRate = e.dup;
        this.delayMaxMs = e.delayMaxMs;
        return this.record(`network drop=${this.dropRate} dup=${this.dupRate} delay<=${this.delayMaxMs}ms`);
      case 'add-voter':
      case 'remove-voter': return this.changeVoters(e.kind, node!);
      case 'keep-down':
        this.record(`HEAL: no faults, n${node!.id} stays down`);
        if (node!.core !== undefined) this.crash(node!, this.faultRng.int(node!.logStore.unsyncedOps + 1), undefined);
        node!.restartAtMs = Infinity;
        node!.downForGood = true;
        return;
    }
  }

  private randomNode(filter: (n: SimNode) => boolean): SimNode | undefined {
    const candidates = this.nodes.filter(filter);
    return candidates.length === 0 ? undefined : candidates[this.chaosRng.int(candidates.length)];
  }

  private proposeOn(n: SimNode, count: number): void {
    if (n.core === undefined) return;
    const values = Array.from({ length: count }, () => encoder.encode(`v${this.valueCounter++}`));
    const result = n.core.propose(values, this.now);
    this.record(`propose n${n.id} x${count}: ${result.ok ? `at ${result.baseOffset}` : 'not leader'}`);
    if (result.ok) this.stats.proposals += count;
    this.afterInput(n);
  }

  private proposeLiveness(): void {
    const n = this.nodes.find((x) => x.core?.isLeader === true);
    if (n === undefined || this.livenessValue !== undefined && this.committedValue(this.livenessValue)) return;
    const value = `live${this.valueCounter++}`;
    const result = n.core!.propose([encoder.encode(value)], this.now);
    this.record(`propose-live n${n.id} ${value}: ${result.ok ? `at ${result.baseOffset}` : 'not leader'}`);
    if (result.ok) this.livenessValue ??= value;
    this.afterInput(n);
  }

  private committedValue(value: string): boolean {
    return this.committed.some((k) => k !== undefined && k.endsWith(`|${value}`));
  }

  /** Done when every node has applied some value proposed after healing. */
  private livenessDone(): boolean {
    if (this.host !== undefined) return this.host.livenessDone();
    if (this.livenessValue === undefined) return false;
    return this.nodes.every((n) => n.sawLive || n.downForGood);
  }

  private crash(n: SimNode, keep: number, restartAfterMs: number | undefined): void {
    this.record(`crash n${n.id} (keeps ${keep}/${n.logStore.unsyncedOps} unsynced ops)`);
    n.logStore.crash(keep);
    n.core = undefined;
    n.incarnation++;
    this.host?.crash(n.id);
    n.restartAtMs = restartAfterMs === undefined ? Infinity : this.now + restartAfterMs;
    this.stats.crashes++;
  }

  private start(n: SimNode): void {
    n.restartAtMs = Infinity;
    const loaded = n.logStore.load();
    n.applied = [];
    n.appliedEnd = 0;
    n.sawLive = false;
    n.leaderEpochSeen = -1;
    n.mirror = { start: loaded.snapshot?.id.endOffset ?? 0, keys: entriesOf(loaded.batches).map(entryKey) };
    this.host?.start(n.id);
    n.core = new RaftCore({
      ...this.timeouts,
      nodeId: n.id, voters: this.voterIds, fetchMaxEntries: 16, snapshotChunkBytes: 256,
      random: n.fixedRandom === undefined ? () => n.prng.next() : () => n.fixedRandom!,
    }, { quorumState: n.quorumStore.read(), snapshot: loaded.snapshot, batches: loaded.batches }, this.now);
    this.afterInput(n);
  }

  private partition(side: readonly NodeId[]): void {
    this.blocked.clear();
    for (const a of this.nodes) {
      for (const b of this.nodes) {
        if (side.includes(a.id) !== side.includes(b.id)) this.blocked.add(`${a.id}>${b.id}`);
      }
    }
    this.record(`partition [${side.join(',')}] | rest`);
  }

  private snapshotOn(n: SimNode): void {
    if (n.core === undefined || n.appliedEnd <= n.core.log.startOffset) return;
    const id = n.core.createSnapshot(n.appliedEnd, this.host?.snapshot(n.id) ?? encodeSimSnapshot(n.applied));
    this.record(`snapshot n${n.id} at ${id.endOffset} (epoch ${id.epoch})`);
    this.stats.snapshots++;
    this.afterInput(n);
  }

  private changeVoters(kind: 'add-voter' | 'remove-voter', target: SimNode): void {
    const leader = this.nodes.find((x) => x.core?.isLeader === true);
    if (leader === undefined) return;
    const core = leader.core!;
    const r = kind === 'add-voter' ? core.addVoter({ id: target.id }, this.now) : core.removeVoter(target.id, this.now);
    this.record(`${kind} n${target.id} on n${leader.id}: ${r.ok ? `VotersRecord at ${r.offset}` : `${r.error} (${r.message})`}`);
    if (r.ok) this.stats.voterChanges++;
    this.afterInput(leader);
  }

  private resignLeader(): void {
    const n = this.nodes.find((x) => x.core?.isLeader === true);
    if (n === undefined) return;
    this.record(`resign n${n.id}`);
    n.core!.resign(this.now);
    this.afterInput(n);
  }

  private heal(): void {
    this.healed = true;
    this.host?.heal(this.now);
    this.blocked.clear();
    this.dropRate = 0;
    this.dupRate = 0;
    this.delayMaxMs = 10;
    for (const n of this.nodes) if (n.core === undefined) this.start(n);
    // Sometimes a minority stays dead (the leader, when there is one): the others must elect a
    // new leader and commit without it, not keep waiting for it.
    let keepDown: ChaosEvent | undefined;
    if (this.replay !== undefined) {
      keepDown = this.replay.find((e) => e.kind === 'keep-down');
    } else if (this.voterIds.length >= 3 && this.chaosRng.next() < 0.3) {
      const victim = this.nodes.find((x) => x.core?.isLeader === true) ?? this.nodes[this.chaosRng.int(this.voterIds.length)]!;
      // (With voter changes the set has 3-6 voters of which at most one is down: a majority lives.)
      keepDown = { atMs: this.now, kind: 'keep-down', node: victim.id };
    }
    const inFlight = this.uncommittedVoterChange();
    if (keepDown !== undefined && inFlight !== undefined) {
      // KIP-853 as Kafka specifies it cannot promise liveness here (src/raft/README.md, "A stall
      // KIP-853 allows"): a node still counting an uncommitted voter may need that voter's vote,
      // which it refuses when a later leader gave it a newer log, and only the lost node may hold
      // what would unblock them. So every node comes back; the other runs cover losing one.
      this.record(`HEAL: all nodes up (n${inFlight} holds an uncommitted VotersRecord; no node kept down)`);
      this.stats.keepDownSkipped++;
    } else if (keepDown !== undefined) {
      this.execute(keepDown);
      this.stats.keptDown++;
    } else {
      this.record('HEAL: all nodes up, no faults');
    }
    this.nextChaosMs = this.now;
  }

  /** A node whose latest VotersRecord no node has applied (so it may never commit), if any. */
  private uncommittedVoterChange(): NodeId | undefined {
    for (const n of this.nodes) {
      const offset = n.core?.votersOffset ?? -1;
      const key = n.mirror.keys[offset - n.mirror.start];
      // Below the mirror's start the record is inside a snapshot, which holds only committed entries.
      if (offset >= n.mirror.start && key !== undefined && this.committed[offset] !== key) return n.id;
    }
    return undefined;
  }

  // ---- Driving one node ------------------------------------------------------------------------

  private afterInput(n: SimNode): void {
    for (let i = 0; i < 100 && n.core !== undefined; i++) {
      const ready = n.core.ready();
      if (ready === undefined) break;
      if (!this.persistAndSend(n, ready)) return;
      n.core.advance();
    }
    if (n.core !== undefined) this.checkNode(n);
    if (n.core !== undefined) this.host?.afterInput(n.id);
  }

  /** The driver's job, in its order; false when the node crashed half way. */
  private persistAndSend(n: SimNode, ready: Ready): boolean {
    if (ready.quorumState !== undefined) n.quorumStore.write(ready.quorumState);
    this.observeLogOps(n, ready.logOps);
    n.logStore.apply(ready.logOps);
    if (ready.syncLog && this.driverCrashes && !this.healed && this.faultRng.next() < 0.002) {
      this.record(`crash n${n.id} before fsync`);
      this.crash(n, this.faultRng.int(n.logStore.unsyncedOps + 1), this.drawRestart(this.faultRng));
      return false;
    }
    // The deliberate bug: acknowledge appends that were never made durable.
    if (ready.syncLog && this.bug !== 'ack-before-fsync') n.logStore.sync();
    for (const env of ready.messages) this.send(env);
    if (ready.quorumState !== undefined && this.driverCrashes && !this.healed && this.faultRng.next() < 0.03) {
      // Right after a vote or an epoch change is the moment that tests whether it was stored.
      this.record(`crash n${n.id} after quorum-state write`);
      this.crash(n, this.faultRng.int(n.logStore.unsyncedOps + 1), this.faultRng.next() < 0.5 ? 1 : this.drawRestart(this.faultRng));
      return false;
    }
    if (ready.restoreSnapshot !== undefined) this.restore(n, ready.restoreSnapshot);
    for (const e of entriesOf(ready.committed)) this.apply(n, e);
    if (this.host !== undefined && ready.committed.length > 0) this.host.apply(n.id, ready.committed);
    return true;
  }

  private send(env: Envelope): void {
    this.stats.messages++;
    if (this.script !== undefined) return this.sendScripted(env);
    if (this.blocked.has(`${env.from}>${env.to}`) || this.netRng.next() < this.dropRate) return;
    const copies = this.netRng.next() < this.dupRate ? 2 : 1;
    const toIncarnation = this.toIncarnation(env);
    for (let i = 0; i < copies; i++) {
      this.net.push({
        at: this.now + 1 + this.netRng.int(this.delayMaxMs), seq: this.seq++, env,
        fromIncarnation: this.nodes[env.from - 1]!.incarnation, toIncarnation,
      });
    }
  }

  /** A response goes back on the requester's connection: if the requester restarted since, it is lost. */
  private toIncarnation(env: Envelope): number {
    return env.message.type.endsWith('Response')
      ? this.requestIncarnation.get(`${env.to}:${env.from}:${env.correlationId}`) ?? -1
      : this.nodes[env.to - 1]!.incarnation;
  }

  private restore(n: SimNode, snapshot: Snapshot): void {
    n.appliedEnd = snapshot.id.endOffset;
    if (snapshot.id.endOffset > 0) this.stats.snapshotInstalls++;
    if (this.host !== undefined) {
      n.applied = [];
      return this.host.restore(n.id, snapshot);
    }
    n.applied = decodeSimSnapshot(snapshot.data);
    for (const [offset, value] of n.applied) {
      const k = this.committed[offset];
      if (k === undefined || !k.endsWith(`|${value}`)) {
        throw new Violation(`n${n.id} restored a snapshot with ${value} at ${offset}; committed there: ${k}`);
      }
      if (value.startsWith('live')) n.sawLive = true;
    }
  }

  private apply(n: SimNode, e: Entry): void {
    if (e.offset !== n.appliedEnd) throw new Violation(`n${n.id} applied ${e.offset}, expected ${n.appliedEnd}`);
    n.appliedEnd = e.offset + 1;
    const key = entryKey(e);
    const known = this.committed[e.offset];
    if (known === undefined) {
      this.committed[e.offset] = key;
      this.stats.committed++;
    } else if (known !== key) {
      throw new Violation(`n${n.id} applied ${key} at ${e.offset}; another node applied ${known}`);
    }
    if (e.kind === 'data' && this.host === undefined) {
      const value = decoder.decode(e.value);
      n.applied.push([e.offset, value]);
      if (value.startsWith('live')) n.sawLive = true;
    }
  }

  // ---- Invariants ------------------------------------------------------------------------------

  /** Log matching: an (offset, epoch) pair names one entry and one predecessor epoch, on every node. */
  private observeLogOps(n: SimNode, ops: readonly LogOp[]): void {
    const m = n.mirror;
    for (const op of ops) {
      if (op.kind === 'append') {
        for (const e of entriesOf(op.batches)) {
          if (e.offset !== m.start + m.keys.length) throw new Violation(`n${n.id} appended ${e.offset} at log end ${m.start + m.keys.length}`);
          const prev = e.offset === m.start ? undefined : m.keys[m.keys.length - 1]!;
          const key = entryKey(e);
          const id = `${e.offset}:${e.epoch}`;
          const seenKey = this.logKeys.get(id);
          if (seenKey === undefined) this.logKeys.set(id, key);
          else if (seenKey !== key) throw new Violation(`log matching: n${n.id} has ${key} at ${id}; another node has ${seenKey}`);
          if (prev !== undefined) {
            const seenPrev = this.logPrev.get(id);
            if (seenPrev === undefined) this.logPrev.set(id, prev);
            else if (seenPrev !== prev) {
              throw new Violation(`log matching: n${n.id} has ${prev} before ${id}; another node has ${seenPrev}`);
            }
          }
          m.keys.push(key);
        }
      } else if (op.kind === 'truncate') {
        const end = m.start + m.keys.length;
        for (let o = op.offset; o < end && o < this.committed.length; o++) {
          if (this.committed[o] !== undefined && this.committed[o] === m.keys[o - m.start]) {
            throw new Violation(`n${n.id} truncated committed entry ${this.committed[o]} at ${o}`);
          }
        }
        m.keys.length = Math.max(0, op.offset - m.start);
      } else {
        const end = op.snapshot.id.endOffset;
        m.keys = op.replaceLog ? [] : m.keys.slice(end - m.start);
        m.start = end;
      }
    }
  }

  private checkNode(n: SimNode): void {
    const core = n.core!;
    if (!core.isLeader) {
      n.voterSetSeen = undefined;
      return;
    }
    // KIP-853: a leader changes the voter set one voter at a time, and is elected only as a voter
    // of its latest or its committed set (it may lead on, not voting, until its removal commits).
    const ids = core.voterSet.map((v) => v.id).sort((a, b) => a - b).join(',');
    const seen = n.voterSetSeen;
    if (seen === undefined || seen.epoch !== core.epoch) {
      if (!core.mayStand) throw new Violation(`n${n.id} became leader of epoch ${core.epoch} without being a voter of ${ids} or of the committed set`);
    } else if (seen.ids !== ids && !differByOne(core.voterSet, seen.ids.split(',').map((id) => ({ id: Number(id) })))) {
      throw new Violation(`leader n${n.id} changed the voters from ${seen.ids} to ${ids} at once`);
    }
    n.voterSetSeen = { epoch: core.epoch, ids };
    const owner = this.leaderOfEpoch.get(core.epoch);
    if (owner === undefined) {
      this.leaderOfEpoch.set(core.epoch, n.id);
      this.stats.leaders++;
    } else if (owner !== n.id) {
      throw new Violation(`two leaders in epoch ${core.epoch}: n${owner} and n${n.id}`);
    }
    if (n.leaderEpochSeen !== core.epoch) {
      n.leaderEpochSeen = core.epoch;
      n.leaderHw = core.highWatermark;
      this.checkLeaderCompleteness(n);
    }
    if (core.highWatermark < n.leaderHw) {
      throw new Violation(`leader n${n.id} high watermark went back from ${n.leaderHw} to ${core.highWatermark}`);
    }
    for (let o = n.leaderHw; o < core.highWatermark; o++) {
      const e = this.commitEpochs[o];
      if (e === undefined || core.epoch < e) this.commitEpochs[o] = core.epoch;
    }
    n.leaderHw = core.highWatermark;
  }

  /**
   * A new leader holds every entry any node has applied, except those first committed by a leader
   * of a later epoch: Raft's leader completeness covers leaders of later terms only, and a stale
   * candidate may still collect a majority of votes given before its voters moved on (it can then
   * commit nothing, since that majority now follows the later epoch). An entry whose committing
   * leader went unobserved (it crashed in the same step) is required of every leader.
   */
  private checkLeaderCompleteness(n: SimNode): void {
    const m = n.mirror;
    const end = m.start + m.keys.length;
    for (let o = m.start; o < this.committed.length; o++) {
      const k = this.committed[o];
      if (k === undefined) continue;
      const commitEpoch = this.commitEpochs[o];
      if (commitEpoch !== undefined && commitEpoch > n.core!.epoch) continue;
      if (o >= end || m.keys[o - m.start] !== k) {
        throw new Violation(`leader n${n.id} (epoch ${n.core!.epoch}) lacks committed ${k} at ${o}`);
      }
    }
  }

  // ---- Scripted runs (scenario files) ----------------------------------------------------------
  // The same nodes, stores, driver steps and invariant checks as a random run; only the choices
  // come from commands: time moves when a command says so, a message is delivered or dropped when a
  // command says so, in the order it was sent.

  /** Runs one scripted command; returns the trace lines it produced and the invariant it broke, if any. */
  scriptRun(command: ScriptCommand): { lines: string[]; violation: string | undefined } {
    assert(this.script !== undefined, 'scriptRun needs a scripted simulation');
    this.scriptLines = [];
    let violation: string | undefined;
    try {
      switch (command.kind) {
        case 'tick': this.scriptAdvance(command.ms, command.deliver); break;
        case 'deliver': this.scriptDeliver(command.filter, command.drop); break;
        case 'stabilize': this.scriptStabilize(); break;
        default: this.execute(command);
      }
    } catch (err) {
      if (!(err instanceof Violation || err instanceof AssertionError)) throw err;
      violation = err instanceof AssertionError ? `core assertion: ${err.message}` : err.message;
    }
    return { lines: this.scriptLines, violation };
  }

  /** One line per node: role, epoch, leader, vote, log, high watermark, what it applied. */
  scriptNodes(): string[] {
    const bootstrap = this.voterIds.join(',');
    return this.nodes.map((n) => {
      const c = n.core;
      if (c === undefined) return `n${n.id} down`;
      const voters = c.voterSet.map((v) => v.id).join(',');
      const applied = n.applied.map(([, v]) => v);
      return `n${n.id} ${c.role} e${c.epoch} leader=${c.leaderId ?? '-'} voted=${c.votedId ?? '-'} log=${c.log.startOffset}..${c.log.endOffset}@${c.log.lastEpoch}`
        + ` hw=${c.highWatermark}${voters === bootstrap ? '' : ` voters=${voters}`} applied=${applied.length === 0 ? '-' : applied.join(',')}`;
    });
  }

  /** The messages waiting to be delivered, in order. */
  scriptQueue(): string[] {
    return this.queue.map((f) => `${f.env.from}->${f.env.to} #${f.env.correlationId} ${describeMessage(f.env)}`);
  }

  private sendScripted(env: Envelope): void {
    if (this.blocked.has(`${env.from}>${env.to}`)) return;
    this.queue.push({ at: this.now, seq: this.seq++, env, fromIncarnation: this.nodes[env.from - 1]!.incarnation, toIncarnation: this.toIncarnation(env) });
  }

  /**
   * Moves time on by `ms`, ticking each node at its deadline (earliest first, then lowest id).
   * With `deliver`, every message is delivered as soon as it is sent (a network without delay).
   */
  private scriptAdvance(ms: number, deliver: boolean): void {
    const end = this.now + ms;
    for (let i = 0; ; i++) {
      if (i > 100_000) throw new Violation(`livelock: 100000 events before t=${end}`);
      if (deliver && this.queue.length > 0) {
        this.deliver(this.queue.shift()!);
        continue;
      }
      let node: SimNode | undefined;
      for (const n of this.nodes) {
        if (n.core !== undefined && n.core.nextDeadlineMs() <= end && (node === undefined || n.core.nextDeadlineMs() < node.core!.nextDeadlineMs())) node = n;
      }
      if (node === undefined) break;
      this.now = Math.max(this.now, node.core!.nextDeadlineMs());
      this.record(`t=${this.now} tick n${node.id} (${node.core!.role} e${node.core!.epoch})`);
      node.core!.tick(this.now);
      this.afterInput(node);
    }
    this.now = end;
  }

  /** Delivers (or drops) the queued messages the filter selects, in send order; the rest wait. */
  private scriptDeliver(filter: MessageFilter, drop: boolean): void {
    let left = filter.count ?? Infinity;
    const selected: Flight[] = [];
    for (let i = 0; i < this.queue.length && left > 0; i++) {
      const env = this.queue[i]!.env;
      if (filter.from !== undefined && env.from !== filter.from) continue;
      if (filter.to !== undefined && env.to !== filter.to) continue;
      if (filter.type !== undefined && !describeMessage(env).startsWith(filter.type)) continue;
      selected.push(...this.queue.splice(i--, 1));
      left--;
    }
    for (const f of selected) {
      if (drop) this.record(`drop ${f.env.from}->${f.env.to} #${f.env.correlationId} ${describeMessage(f.env)}`);
      else this.deliver(f);
    }
  }

  /** Delivers every message, and those they cause, until none is left; time stands still. */
  private scriptStabilize(): void {
    for (let i = 0; this.queue.length > 0; i++) {
      if (i > 100_000) throw new Violation('livelock: 100000 deliveries without the network going quiet');
      this.deliver(this.queue.shift()!);
    }
  }

  // ---- Trace -----------------------------------------------------------------------------------

  private record(line: string | (() => string)): void {
    if (this.script !== undefined) {
      this.scriptLines.push(typeof line === 'string' ? line : line());
      return;
    }
    if (this.traceLength === 0) return;
    const text = typeof line === 'string' ? line : line();
    this.trace.push(`#${this.step} t=${this.now} ${text}`);
    if (this.trace.length > this.traceLength * 2) this.trace.splice(0, this.trace.length - this.traceLength);
  }
}

function scaledTimeouts(factor: number): typeof defaultRaftTimeouts {
  const scale = (ms: number) => Math.max(5, Math.round(ms * factor));
  return {
    ...defaultRaftTimeouts,
    electionTimeoutMs: scale(defaultRaftTimeouts.electionTimeoutMs),
    fetchTimeoutMs: scale(defaultRaftTimeouts.fetchTimeoutMs),
    electionBackoffMaxMs: scale(defaultRaftTimeouts.electionBackoffMaxMs),
    requestTimeoutMs: scale(defaultRaftTimeouts.requestTimeoutMs),
    fetchMaxWaitMs: scale(defaultRaftTimeouts.fetchMaxWaitMs),
    retryBackoffMs: Math.max(1, Math.round(defaultRaftTimeouts.retryBackoffMs * factor)),
  } as typeof defaultRaftTimeouts;
}

export function runSeed(options: SimOptions): SimResult {
  return new Simulation(options).run();
}
