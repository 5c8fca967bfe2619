// The replication simulation (issue 19): brokers running the real ReplicaManager, Partition,
// ReplicaFetcherManager and AlterPartitionManager over MemoryFileSystems, with the controller on
// the Raft simulator (ControllerNodesHost: real RaftCores, ControllerSeat, QuorumController and
// MetadataLoader per node). Everything is driven through the production ports: a simulated Clock
// and Scheduler per broker process, a LeaderLink per broker-to-broker connection (requests go
// through the real Fetch, ListOffsets and OffsetForLeaderEpoch handlers), the AlterPartition
// channel and registrations/heartbeats to the node a broker believes active, and metadata: each
// broker replays the committed metadata log as far as the node it follows has it, into its own
// MetadataLoader, whose deltas go to ReplicaManager.applyDelta.
//
// Faults: crashes of brokers (a power cut of their MemoryFileSystem, losing unsynced writes; the
// restart reopens the logs through the real recovery path), cuts between brokers (one-way or both)
// and between brokers and controller nodes, request loss and random delays (so answers overtake
// each other across connections), and the Raft sim's own faults on the controller nodes. A broker
// crashes only while the others are up and hold every acknowledged record (one failure at a time:
// min.insync.replicas - 1 with RF 3 and min.insync.replicas 2); cuts and controller faults are
// unrestricted. A producer writes acks=all and acks=1; a consumer reads each partition up to the
// high watermark. With `allNodesPowerLoss` (issue 33), every broker also loses power at the same
// moment once per seed (each disk keeps what was fsynced and a random part of the rest) and all
// restart: with flush.messages=1 the invariants below go on checking every batch acknowledged or
// read before it; without, what the first leader after it lacks is counted, not failed, and the
// checks start again from what the cluster kept. (The controller nodes' own crashes are the Raft
// sim's, which fsyncs before acknowledging.)
//
// Invariants, after every step:
//  1. a batch acknowledged with acks=all is in the log of every later leader (a leader at that
//     leader epoch or a later one) at the same offset with the same CRC;
//  2. the same for every batch a consumer read: nothing read below a high watermark is truncated;
//  3. a leader's high watermark never goes back within a leader epoch;
//  4. in every controller node's committed image the ISR is within the replicas and the leader in
//     its ISR;
//  5. at most one broker leads a partition in a leader epoch;
//  6. below a leader's high watermark, every follower of its ISR that fetched in this leader epoch
//     holds the leader's batches (log matching on the committed prefix);
//  7. with eligible leader replicas on (KIP-966, finalized in a new cluster), a leader does not move
//     its high watermark while its committed ISR stays below min.insync.replicas.
// After healing: every broker registered and unfenced, every partition with its full ISR, and an
// acks=all write to each partition succeeds.
import { type Activation } from '../../src/controller/index.js';
import {
  deserializeMetadataRecord, MetadataLoader, NO_LEADER_CHANGE, provenance, type MetadataBatch, type MetadataImage, type MetadataProvenance, type MetadataRecord,
} from '../../src/metadata/index.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { entriesOf, SimViolation, Simulation, type SimControl, type SimStats } from '../../src/raft/index.js';
import type { EntryBatch, NodeId, Snapshot } from '../../src/raft/core/types.js';
import { BatchHeaderAt, buildRecordBatchSync, LOG_OVERHEAD_BYTES } from '../../src/records/index.js';
import {
  AlterPartitionManager, Partition, ReplicaFetcherManager, ReplicaManager, StorageLog, type LeaderEndpoint, type LeaderLink, type Scheduler,
} from '../../src/replication/index.js';
import { LogManager, logConfig, MemoryFileSystem, type LogConfig } from '../../src/storage/index.js';
import { Prng, type Clock } from '../../src/util/index.js';
import { fetchHandler } from '../../src/broker/handlers/01-fetch.js';
import { listOffsetsHandler } from '../../src/broker/handlers/02-list-offsets.js';
import { offsetForLeaderEpochHandler } from '../../src/broker/handlers/23-offset-for-leader-epoch.js';
import { FetchSessionCache } from '../../src/broker/fetch-sessions.js';
import { registration, uuidFor } from '../controller/driver.js';
import { ControllerNodesHost, decodeRecords, HEARTBEAT_INTERVAL_MS, type ControllerNode, type ControllerNodeStats, type Operation } from '../controller/raft-simulation.js';

/** Deliberate bugs, each of which some seeds must catch. */
export type ReplicationBug =
  /** The leader's high watermark waits for one ISR follower rather than all of them. */
  | 'hw-from-one-follower'
  /** Followers never send their last fetched epoch: the leader never answers DivergingEpoch, so a divergent suffix stays. */
  | 'follower-skips-truncation'
  /** The leader counts a proposed ISR shrink at once, before the controller has committed it. */
  | 'isr-before-commit'
  /** unclean.leader.election.enable: a replica outside the ISR may be elected. */
  | 'unclean-election';

export interface ReplicationSimOptions {
  readonly seed: number;
  readonly chaosMs?: number;
  readonly livenessMs?: number;
  readonly traceLength?: number;
  readonly bug?: ReplicationBug;
  /** Whether the Raft sim's faults hit the controller nodes (by default, half the seeds). */
  readonly controllerFaults?: boolean;
  /**
   * Correlated power loss (issue 33): once during the faulty phase every broker loses power at
   * the same moment (each disk keeps what was fsynced and a random part of the rest), then all
   * restart. Off by default (the seeds' schedules stay what they were).
   */
  readonly allNodesPowerLoss?: boolean;
  /** flush.messages of the topic's logs; by default drawn per seed from 1, 4 and none. */
  readonly flushMessages?: number;
}

export interface ReplicationSimStats extends ControllerNodeStats {
  registrations: number;
  heartbeats: number;
  brokerCrashes: number;
  brokerCuts: number;
  producedAcksAll: number;
  producedAcks1: number;
  acknowledgedAcksAll: number;
  notEnoughReplicas: number;
  consumedBatches: number;
  /** Leaders seen with a committed ISR below min.insync.replicas under the strict rule (invariant 7 watched them). */
  leadersUnderMinIsr: number;
  leaderChanges: number;
  isrChanges: number;
  uncleanElections: number;
  truncations: number;
  fetchRequests: number;
  lostRequests: number;
  /** Acknowledged batches checked against a leader's log. */
  checkedBatches: number;
  /** All-nodes power losses (allNodesPowerLoss). */
  allNodesPowerLosses: number;
  /** Batches acknowledged with acks=all before a power loss of all nodes: in the first leader's log after it, or not. */
  ackedKeptAfterPowerLoss: number;
  ackedLostAfterPowerLoss: number;
  /** The same for batches a consumer read below a high watermark. */
  readKeptAfterPowerLoss: number;
  readLostAfterPowerLoss: number;
}

export interface ReplicationSimResult {
  readonly seed: number;
  readonly bug: ReplicationBug | undefined;
  readonly ok: boolean;
  readonly violation: string | undefined;
  readonly trace: readonly string[];
  readonly stats: ReplicationSimStats;
  readonly raft: SimStats;
}

const TOPIC = 'events';
const REPLICATION_FACTOR = 3;
const MIN_INSYNC_REPLICAS = 2;
/** replica.lag.time.max.ms, replica.fetch.wait.max.ms, replica.fetch.backoff.ms of the simulated brokers (scaled down). */
const REPLICA_LAG_TIME_MAX_MS = 1500;
const REPLICA_FETCH_WAIT_MAX_MS = 200;
const REPLICA_FETCH_BACKOFF_MS = 100;
const ALTER_PARTITION_RETRY_BACKOFF_MS = 100;
/** One way between two brokers, or a client and a broker. */
const NET_DELAY_MS_MAX = 6;
/** A request lost on the way (or its answer) fails its connection after this long, as a socket timeout does. */
const REQUEST_TIMEOUT_MS = 1000;
const METADATA_PULL_MS = 60;
const PRODUCE_INTERVAL_MS = 80;
const CONSUME_INTERVAL_MS = 120;
const PRODUCE_TIMEOUT_MS = 2000;
const CHAOS_INTERVAL_MS = 400;
const CHECKPOINT_INTERVAL_MS = 500;

/** One acknowledged (acks=all) or consumed batch: where it is, what it is, and the leader epoch it was seen in. */
interface Seen {
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly crc: number;
  readonly epoch: number;
  readonly how: string;
  /** Acknowledged to a producer (else read by a consumer). */
  readonly acked: boolean;
}

/** A running broker process: its storage, replica manager, fetchers, ISR channel and metadata. */
interface BrokerProcess {
  readonly life: number;
  alive: boolean;
  readonly logs: LogManager;
  readonly rm: ReplicaManager;
  readonly fetchers: ReplicaFetcherManager;
  readonly alterPartitions: AlterPartitionManager;
  readonly fetchSessions: FetchSessionCache;
  readonly loader: MetadataLoader;
  /** The image of the delta being applied (fetchers find leaders and topic ids here). */
  image: MetadataImage;
  /** Index of the next committed metadata batch to replay. */
  nextBatch: number;
  deltas: Promise<void>;
  readonly links: Set<SimLink>;
  readonly scheduler: Scheduler;
}

type BrokerState = 'down' | 'registering' | 'running';

interface SimBroker {
  readonly id: number;
  readonly fs: MemoryFileSystem;
  life: number;
  incarnation: string;
  epoch: bigint;
  state: BrokerState;
  guess: NodeId;
  inflight: boolean;
  restartAtMs: number;
  proc: BrokerProcess | null;
  /** When a heartbeat of it was last answered. */
  heartbeatOkMs: number;
}

export function runReplicationSeed(options: ReplicationSimOptions): Promise<ReplicationSimResult> {
  return withBug(options.bug, async () => {
    let host: ReplicationHost | undefined;
    // Half the seeds put the Raft sim's faults on the controller nodes too (crashes, partitions,
    // loss between them); the other half keep the quorum calm so that the brokers' own faults
    // have a working controller to play against (fencing, elections, ISR changes).
    const controllerFaults = options.controllerFaults ?? new Prng(options.seed * 7919 + 13).next() < 0.5;
    const sim = new Simulation({
      ...(controllerFaults ? {} : { schedule: [] }),
      seed: options.seed, chaosMs: options.chaosMs ?? 8000, livenessMs: options.livenessMs ?? 20_000, traceLength: options.traceLength ?? 120,
      host: (control) => (host = new ReplicationHost(control, options)),
    });
    const r = await sim.runAsync();
    const h = host!;
    const trace = r.ok ? [] : [...r.trace, `brokers at the end:\n  ${h.describe()}`];
    h.stop();
    return { seed: options.seed, bug: options.bug, ok: r.ok, violation: r.violation, trace, stats: h.stats, raft: r.stats };
  });
}

/** A failing seed's report: what broke, how to replay it, and the last events. */
export function describeReplicationFailure(r: ReplicationSimResult): string {
  const replay = r.bug !== undefined
    ? `node dist/test/replication/simulation-cli.js --seed ${r.seed} --bug ${r.bug}`
    : `LOGLINE_REPLICATION_SIM_SEED=${r.seed} node scripts/run-tests.mjs test/replication/simulation.test, or node dist/test/replication/simulation-cli.js --seed ${r.seed}`;
  return `replication simulation failed, seed ${r.seed}${r.bug !== undefined ? ` with bug ${r.bug}` : ''} (replay: ${replay}): ${r.violation}\nlast events:\n  ${r.trace.join('\n  ')}`;
}

// ---- Deliberate bugs: the production classes patched for one run ----------------------------------

async function withBug<T>(bug: ReplicationBug | undefined, run: () => Promise<T>): Promise<T> {
  const proto = Partition.prototype as any;
  const saved = { hw: proto.maybeAdvanceHighWatermark, shrink: proto.maybeShrinkIsr };
  if (bug === 'hw-from-one-follower') {
    proto.maybeAdvanceHighWatermark = function (this: Partition): boolean {
      if (!this.isLeader) return false;
      let best = -1;
      for (const id of this.maximalIsr) if (id !== this.localBrokerId) best = Math.max(best, this.followers.get(id)?.logEndOffset ?? -1);
      const hw = this.maximalIsr.length <= 1 ? this.log.logEndOffset : Math.min(this.log.logEndOffset, best);
      if (hw <= this.highWatermark) return false;
      this.highWatermark = hw;
      this.log.updateHighWatermark(hw);
      return true;
    };
  } else if (bug === 'isr-before-commit') {
    proto.maybeShrinkIsr = function (this: Partition, ...args: unknown[]) {
      const r = saved.shrink.apply(this, args);
      if (r !== null) this.isr = [...r.pending.proposedIsr];
      return r;
    };
  }
  try {
    return await run();
  } finally {
    proto.maybeAdvanceHighWatermark = saved.hw;
    proto.maybeShrinkIsr = saved.shrink;
  }
}

// ---- Broker-to-broker connections ---------------------------------------------------------------

/** A follower's connection to a leader process: requests and answers cross the simulated network. */
class SimLink implements LeaderLink {
  closed = false;
  private readonly pending = new Set<(e: Error) => void>();

  constructor(private readonly host: ReplicationHost, readonly from: SimBroker, readonly fromLife: number, readonly to: SimBroker, readonly toLife: number) {}

  version(apiKey: number): number {
    return apiKey === 1 ? fetchHandler.maxVersion : apiKey === 2 ? listOffsetsHandler.maxVersion : offsetForLeaderEpochHandler.maxVersion;
  }

  send<T = any>(apiKey: number, version: number, body: object): Promise<T> {
    if (this.closed) return Promise.reject(new Error('connection closed'));
    return new Promise<T>((resolve, reject) => {
      const fail = (e: Error) => {
        this.pending.delete(fail);
        reject(e);
      };
      this.pending.add(fail);
      this.host.deliverRequest(this, apiKey, version, body, (response) => {
        if (!this.pending.delete(fail)) return;
        resolve(response as T);
      });
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const all = [...this.pending];
    this.pending.clear();
    for (const f of all) f(new Error('connection closed'));
  }
}

// ---- The host ----------------------------------------------------------------------------------

class ReplicationHost extends ControllerNodesHost<ReplicationSimStats> {
  private readonly brokers: SimBroker[] = [];
  private readonly clock: Clock;
  /** The committed metadata log, as the nodes apply it (the same on every node: the Raft sim checks that). */
  /**
   * The committed metadata in offset order, as the brokers replay it: batches, control records
   * (which only move a broker's position), and a snapshot where every node that had some batches
   * got them in a snapshot (never applied one by one here): a broker behind it loads the snapshot,
   * as a real one below the log start fetches it.
   */
  private readonly metadataLog: (MetadataBatch | { controlThrough: number; epoch: number } | { snapshot: MetadataRecord[]; at: MetadataProvenance })[] = [];
  private metadataEnd = 0;
  /** "a>b": broker a's packets do not reach broker b. */
  private readonly brokerCuts = new Set<string>();
  private dropRate = 0;
  private readonly logConfig: LogConfig;
  private partitions = 0;
  private topicCreated = false;
  private adminInflight = false;
  private adminGuess: NodeId;
  private producerSeq = 0;
  /** Per partition: batches acknowledged with acks=all or consumed, by base offset and in order seen. */
  private readonly seen = new Map<number, { list: Seen[]; byOffset: Map<number, Seen> }>();
  private readonly consumerPosition = new Map<number, number>();
  /** "partition:epoch" → the broker that led it. */
  private readonly leaderOfEpoch = new Map<string, number>();
  /** "broker:partition:epoch" → the highest high watermark seen. */
  private readonly hwOf = new Map<string, number>();
  /** Per leader (as hwOf), the broker life and partition epoch at which its ISR was last seen below min ISR. */
  private readonly underMinIsr = new Map<string, string>();
  /** "broker:partition" → how far the leader's log was verified: its life and epoch, log end offset, entries checked. */
  private readonly verified = new Map<string, { key: string; logEnd: number; checked: number }>();
  /** Partitions written with acks=all after healing. */
  private readonly finalAcked = new Set<number>();
  private failure: string | undefined;
  /** No new faults before this (a scripted schedule such as isolateIsr runs alone). */
  private quietUntilMs = 0;
  /** When each cut between a broker and a controller node ends. */
  private readonly cutUntilMs = new Map<string, number>();
  /** Brokers that crashed and are not yet back in every ISR (see updateRecovering). */
  private readonly recovering = new Set<number>();
  /** Invariant 6: per leader and follower life, the offset their logs were compared up to. */
  private readonly isrVerified = new Map<string, number>();
  /** The ISR of each partition at the latest committed offset seen (to count ISR changes). */
  private readonly isrSeen = new Map<number, { offset: number; isr: string; leader: number }>();
  private dirty = true;
  private stopped = false;
  private readonly crashRng: Prng;
  private readonly writebackBytes: number;

  /**
   * After an all-nodes power loss: the batches acknowledged or read before it, per partition, to
   * count against the first leader's log after it; and each broker's life at the loss.
   */
  private readonly preLoss = new Map<number, Seen[]>();
  private lifeAtLoss: number[] | null = null;

  constructor(sim: SimControl, options: ReplicationSimOptions) {
    const bug = options.bug;
    super(sim, undefined, {
      activations: 0, notController: 0, fenced: 0, imagesCompared: 0, stagedCompared: 0, registrations: 0, heartbeats: 0, brokerCrashes: 0,
      brokerCuts: 0, producedAcksAll: 0, producedAcks1: 0, acknowledgedAcksAll: 0, notEnoughReplicas: 0, consumedBatches: 0, leadersUnderMinIsr: 0, leaderChanges: 0,
      isrChanges: 0, uncleanElections: 0, truncations: 0, fetchRequests: 0, lostRequests: 0, checkedBatches: 0,
      allNodesPowerLosses: 0, ackedKeptAfterPowerLoss: 0, ackedLostAfterPowerLoss: 0, readKeptAfterPowerLoss: 0, readLostAfterPowerLoss: 0,
    });
    this.unclean = bug === 'unclean-election';
    this.replicationBug = bug;
    this.clock = { nowMs: () => this.sim.nowMs() };
    this.crashRng = new Prng(this.rng.nextUint32());
    // Background write-back (log.writeback.bytes) on half the seeds, drawn apart from the main
    // stream so every seed's schedule is what it was before write-back existed.
    const writeback = new Prng(this.crashRng.seed ^ 0x9e3779b9);
    this.writebackBytes = writeback.next() < 0.5 ? 0 : [128, 512, 2048][writeback.int(3)]!;
    const drawnFlush = [1, 4, Number.MAX_SAFE_INTEGER][this.rng.int(3)]!;
    const flush = options.flushMessages ?? drawnFlush;
    this.logConfig = logConfig({ flushMessages: flush, segmentBytes: [4096, 1 << 20][this.rng.int(2)]!, segmentIndexBytes: 8192, indexIntervalBytes: 256 });
    this.partitions = 1 + this.rng.int(2);
    // Mostly three brokers (every broker holds every partition); sometimes four or five.
    const brokerCount = this.rng.next() < 0.7 ? 3 : 4 + this.rng.int(2);
    for (let id = 1; id <= brokerCount; id++) {
      const fs = new MemoryFileSystem();
      this.brokers.push({
        id, fs, life: 0, incarnation: '', epoch: -1n, state: 'down', guess: this.randomNode(), inflight: false, restartAtMs: this.rng.int(200), proc: null, heartbeatOkMs: -Infinity,
      });
    }
    this.adminGuess = this.randomNode();
    for (const b of this.brokers) this.at(b.restartAtMs, () => this.brokerTick(b));
    this.at(300, () => this.adminTick());
    this.startControllerTicks();
    this.at(500, () => this.chaosTick());
    this.at(400, () => this.produceTick());
    this.at(500, () => this.consumeTick());
    if (options.allNodesPowerLoss === true) {
      // Its own stream, so the rest of the schedule up to the loss is the seed's usual one.
      this.powerLossRng = new Prng(this.crashRng.seed ^ 0x2545f491);
      const chaosMs = options.chaosMs ?? 8000;
      this.at(2000 + this.powerLossRng.int(Math.max(1, chaosMs - 3000)), () => this.allNodesPowerLoss());
    }
    sim.record(`${brokerCount} brokers, ${this.partitions} partition(s) of ${TOPIC} (RF ${REPLICATION_FACTOR}, min.insync.replicas ${MIN_INSYNC_REPLICAS}), flush.messages ${flush}${bug ? `, bug ${bug}` : ''}`);
  }

  private readonly replicationBug: ReplicationBug | undefined;
  private powerLossRng: Prng | null = null;

  protected clientNames(): string[] {
    return this.brokers.map((b) => `b${b.id}`);
  }

  /** Cuts between brokers and controller nodes come from chaosTick here, each for its own while. */
  protected override clientCutTick(): void {}

  // ---- SimHost ----------------------------------------------------------------------------------

  override apply(id: NodeId, batches: readonly EntryBatch[]): void {
    for (const b of batches) {
      if (b.baseOffset + b.count <= this.metadataEnd) continue;
      if (b.kind === 'data') {
        const records = entriesOf([b]).map((e) => deserializeMetadataRecord(Buffer.from(e.value.buffer, e.value.byteOffset, e.value.byteLength)) as MetadataRecord);
        this.metadataLog.push({ baseOffset: b.baseOffset, epoch: b.epoch, records });
        for (const r of records) this.countUncleanElection(r);
      } else {
        this.metadataLog.push({ controlThrough: b.baseOffset + b.count - 1, epoch: b.epoch });
      }
      this.metadataEnd = b.baseOffset + b.count;
    }
    super.apply(id, batches);
  }

  override restore(id: NodeId, snapshot: Snapshot): void {
    if (snapshot.id.endOffset > this.metadataEnd) {
      this.metadataLog.push({ snapshot: decodeRecords(snapshot.data), at: provenance(snapshot.id.endOffset - 1, snapshot.id.epoch) });
      this.metadataEnd = snapshot.id.endOffset;
    }
    super.restore(id, snapshot);
  }

  /** Per partition of TOPIC, its ISR and leader along the committed metadata log. */
  private readonly committedPartitions = new Map<number, { isr: readonly number[]; leader: number }>();
  private topicId: string | undefined;

  /**
   * An unclean election, record by record: a leader change to a broker outside the ISR before the
   * record that leaves the ISR as that broker alone (Kafka's unclean election). An ISR expansion
   * that also elects the preferred leader in one record is not one (its new leader was caught up).
   */
  private countUncleanElection(r: MetadataRecord): void {
    if (r.name === 'TopicRecord' && r.data.name === TOPIC) this.topicId = r.data.topicId;
    else if (r.name === 'PartitionRecord' && r.data.topicId === this.topicId) {
      this.committedPartitions.set(r.data.partitionId, { isr: r.data.isr, leader: r.data.leader });
    } else if (r.name === 'PartitionChangeRecord' && r.data.topicId === this.topicId) {
      const before = this.committedPartitions.get(r.data.partitionId);
      if (before === undefined) return;
      const after = { isr: r.data.isr ?? before.isr, leader: r.data.leader === NO_LEADER_CHANGE ? before.leader : r.data.leader };
      if (after.leader >= 0 && after.leader !== before.leader && !before.isr.includes(after.leader) && after.isr.length === 1 && after.isr[0] === after.leader) {
        this.stats.uncleanElections++;
        this.sim.record(`unclean election: b${after.leader} leads ${TOPIC}-${r.data.partitionId}, outside the ISR [${before.isr}]`);
      }
      this.committedPartitions.set(r.data.partitionId, after);
    }
  }

  /** Invariant 4, on every node's committed image. */
  protected override afterApply(node: ControllerNode): void {
    const image = node.loader.image;
    const t = image.topics.getTopic(TOPIC);
    if (t === undefined) return;
    for (const [index, p] of t.partitions) {
      const last = this.isrSeen.get(index);
      const offset = image.provenance.lastContainedOffset;
      if (last === undefined || (offset > last.offset && (last.isr !== `${p.isr}` || last.leader !== p.leader))) {
        if (last !== undefined && last.isr !== `${p.isr}`) this.stats.isrChanges++;
        this.isrSeen.set(index, { offset, isr: `${p.isr}`, leader: p.leader });
      }
      for (const r of p.isr) if (!p.replicas.includes(r)) this.violation(`n${node.id}: ${TOPIC}-${index} ISR [${p.isr}] is not within replicas [${p.replicas}]`);
      if (p.leader >= 0 && !p.isr.includes(p.leader)) this.violation(`n${node.id}: ${TOPIC}-${index} leader ${p.leader} is not in its ISR [${p.isr}]`);
    }
  }

  override runEvents(nowMs: number): void {
    this.dirty = true;
    super.runEvents(nowMs);
  }

  /** Lets what the step started run, then checks the invariants on the brokers. */
  async settle(): Promise<void> {
    if (this.dirty) {
      this.dirty = false;
      await new Promise<void>((resolve) => setImmediate(resolve));
      this.checkBrokers();
    }
    if (this.failure !== undefined) throw new SimViolation(this.failure);
  }

  override heal(nowMs: number): void {
    this.healed = true;
    this.clientCuts.clear();
    this.brokerCuts.clear();
    this.dropRate = 0;
    for (const b of this.brokers) b.restartAtMs = Math.min(b.restartAtMs, nowMs);
    this.sim.record('HEAL: brokers back, no cuts or loss');
  }

  override livenessDone(): boolean {
    if (!this.topicCreated) return false;
    const node = [...this.nodes.values()].find((n) => n.up && n.seat.active !== null);
    if (node === undefined) return false;
    const image = node.loader.image;
    for (const b of this.brokers) {
      const reg = image.cluster.broker(b.id);
      if (b.state !== 'running' || reg === undefined || reg.fenced) return false;
    }
    const t = image.topics.getTopic(TOPIC);
    if (t === undefined) return false;
    for (const [index, p] of t.partitions) {
      if (p.leader < 0 || p.isr.length !== REPLICATION_FACTOR || !this.finalAcked.has(index)) return false;
    }
    return true;
  }

  stop(): void {
    this.stopped = true;
    for (const b of this.brokers) this.kill(b);
  }

  private violation(message: string): void {
    this.failure ??= message;
    throw new SimViolation(message);
  }

  /** A failure inside asynchronous broker code: reported at the end of the step. */
  private fail(message: string): void {
    this.failure ??= message;
  }

  // ---- Broker processes ---------------------------------------------------------------------------

  private startProcess(b: SimBroker): void {
    b.life++;
    const life = b.life;
    const clock = this.clock;
    const host = this;
    const scheduler: Scheduler = {
      schedule(delayMs, fn) {
        let cancelled = false;
        host.at(host.sim.nowMs() + delayMs, () => {
          if (cancelled || b.proc?.life !== life || !b.proc.alive) return;
          fn();
        });
        return { cancel: () => { cancelled = true; } };
      },
    };
    const logs = new LogManager({
      dir: '/data', fs: b.fs, clock, configFor: () => this.logConfig, checkpointIntervalMs: CHECKPOINT_INTERVAL_MS, cleanerEnable: false,
      ...(this.writebackBytes > 0 ? { writebackBytes: this.writebackBytes } : {}),
    });
    const alterPartitions = new AlterPartitionManager({
      brokerId: b.id, brokerEpoch: () => b.epoch, scheduler, retryBackoffMs: ALTER_PARTITION_RETRY_BACKOFF_MS,
      send: (request) => new Promise((resolve, reject) => {
        this.brokerSend(b, (c, now) => c.alterPartition(request, 3), (response) => {
          const isr = request.topics.flatMap((t) => t.partitions.map((p) => `${p.partitionIndex}:[${p.newIsr}]@${p.partitionEpoch}`));
          const errors = response.topics.flatMap((t) => t.partitions.map((p) => p.errorCode));
          this.sim.record(`b${b.id} AlterPartition ${isr.join(' ')}: ${response.errorCode} ${errors.join(',')}`);
          resolve(response);
        }, () => reject(new Error('NOT_CONTROLLER')));
      }),
    });
    const fetchers = new ReplicaFetcherManager({
      fetchMaxBytes: 1 << 20, fetchResponseMaxBytes: 10 << 20, fetchWaitMaxMs: REPLICA_FETCH_WAIT_MAX_MS, fetchMinBytes: 1,
      fetchBackoffMs: REPLICA_FETCH_BACKOFF_MS, numFetchers: 1,
    }, {
      brokerId: b.id, brokerEpoch: () => b.epoch, clock, scheduler,
      leaderEndpoint: (id) => (proc.image.cluster.broker(id) === undefined ? undefined : { host: `b${id}`, port: 9092 }),
      topicId: (topic) => proc.image.topics.getTopic(topic)?.id,
      connect: (e) => this.connect(b, life, e),
    });
    const rm = new ReplicaManager(b.id, clock, scheduler, { fetchPurgatoryOperationsMax: 1000, producePurgatoryOperationsMax: 1000 }, fetchers,
      { replicaLagTimeMaxMs: REPLICA_LAG_TIME_MAX_MS, channel: alterPartitions });
    rm.startIsrExpiration(scheduler);
    rm.localIncarnationId = b.incarnation;
    const loader = new MetadataLoader();
    const proc: BrokerProcess = {
      life, alive: true, logs, rm, fetchers, alterPartitions, fetchSessions: new FetchSessionCache(100, clock), loader, image: loader.image,
      nextBatch: 0, deltas: Promise.resolve(), links: new Set(), scheduler,
    };
    loader.installPublisher({ name: 'replicas', onMetadataUpdate: (delta, image) => this.enqueueDelta(b, proc, delta, image) });
    b.proc = proc;
    const checkpoint = () => {
      // A checkpoint in flight at a power cut fails with its process; only a live one's failure counts.
      void logs.checkpointAsync().catch((e: unknown) => { if (proc.alive) this.fail(`b${b.id} checkpoint failed: ${String(e)}`); });
      scheduler.schedule(CHECKPOINT_INTERVAL_MS, checkpoint);
    };
    scheduler.schedule(CHECKPOINT_INTERVAL_MS, checkpoint);
    const pull = () => {
      this.pullMetadata(b, proc);
      scheduler.schedule(METADATA_PULL_MS, pull);
    };
    pull();
  }

  private enqueueDelta(b: SimBroker, proc: BrokerProcess, delta: Parameters<ReplicaManager['applyDelta']>[0], image: MetadataImage): void {
    proc.deltas = proc.deltas.then(async () => {
      if (!proc.alive) return;
      proc.image = image;
      const applied = await proc.rm.applyDelta(delta, image, {
        openLog: async (topic, partition, topicId) => new CountingLog(proc.logs.getOrCreateLog(topic, partition, topicId), this.stats),
        deleteLog: async (topic, partition) => proc.logs.deleteLog(topic, partition),
        topicConfig: (topic) => ({ minInsyncReplicas: Number(image.configs.topicConfigs(topic).get('min.insync.replicas') ?? 1), maxMessageBytes: undefined }),
      });
      if (applied.failed.length > 0 && proc.alive) this.fail(`b${b.id} could not apply metadata: ${applied.failed.map((f) => String(f.error)).join('; ')}`);
    }).catch((e: unknown) => {
      if (proc.alive) this.fail(`b${b.id} applying metadata at ${image.provenance.lastContainedOffset}: ${e instanceof Error ? e.message : String(e)}`);
    });
  }

  /** The broker replays the committed metadata as far as the node it follows has it. */
  private pullMetadata(b: SimBroker, proc: BrokerProcess): void {
    const node = this.nodes.get(b.guess);
    if (node === undefined || !node.up || this.clientCuts.has(`b${b.id}>${node.id}`)) return;
    const available = node.loader.image.provenance.lastContainedOffset;
    let batches: MetadataBatch[] = [];
    try {
      while (proc.nextBatch < this.metadataLog.length) {
        const entry = this.metadataLog[proc.nextBatch]!;
        if ('snapshot' in entry) {
          if (entry.at.lastContainedOffset > available) break;
          if (batches.length > 0) proc.loader.handleCommit(batches);
          batches = [];
          proc.loader.handleSnapshot(entry.snapshot, entry.at);
        } else if ('controlThrough' in entry) {
          if (entry.controlThrough > available) break;
          if (batches.length > 0) proc.loader.handleCommit(batches);
          batches = [];
          proc.loader.handleControl(entry.controlThrough, entry.epoch);
        } else {
          if (entry.baseOffset + entry.records.length - 1 > available) break;
          batches.push(entry);
        }
        proc.nextBatch++;
      }
      if (batches.length > 0) proc.loader.handleCommit(batches);
    } catch (e) {
      this.violation(`b${b.id} replaying committed metadata: ${(e as Error).message}`);
    }
  }

  /** Power cut: the process is gone, its disk keeps what was synced and a random part of the rest. */
  private kill(b: SimBroker): void {
    const proc = b.proc;
    if (proc === null) return;
    proc.alive = false;
    b.proc = null;
    proc.alterPartitions.close();
    proc.rm.stopIsrExpiration();
    void proc.fetchers.close();
    for (const l of proc.links) l.close();
    if (!this.stopped) b.fs.crash(this.crashRng);
  }

  private brokerTick(b: SimBroker): void {
    const now = this.sim.nowMs();
    this.at(now + HEARTBEAT_INTERVAL_MS / 2 + this.rng.int(HEARTBEAT_INTERVAL_MS), () => this.brokerTick(b));
    if (b.inflight) return;
    switch (b.state) {
      case 'down':
        if (now < b.restartAtMs) return;
        b.incarnation = uuidFor(this.rng.nextUint32());
        b.epoch = -1n;
        b.state = 'registering';
        this.startProcess(b);
        this.sim.record(`b${b.id} starts (life ${b.life})`);
        return this.register(b);
      case 'registering':
        return this.register(b);
      case 'running':
        return this.heartbeat(b);
    }
  }

  /** Sends to the node the broker believes active; NOT_CONTROLLER moves its guess. */
  private brokerSend<T>(b: SimBroker, op: Operation<T>, onOk: (response: T, node: ControllerNode) => void, onNotController?: () => void): void {
    const life = b.life;
    this.send(`b${b.id}`, b.guess, op, (a) => {
      if (b.life !== life || b.proc === null) return;
      this.dirty = true;
      if (a.kind === 'not-controller') {
        b.guess = a.hint ?? this.randomNode();
        onNotController?.();
        return;
      }
      onOk(a.response, a.node);
    });
  }

  private register(b: SimBroker): void {
    b.inflight = true;
    const incarnation = b.incarnation;
    const life = b.life;
    this.brokerSend(b, (c, now) => c.registerBroker(registration(b.id, { incarnationId: incarnation }), now), (r) => {
      b.inflight = false;
      if (r.errorCode !== ErrorCode.NONE) return;
      this.stats.registrations++;
      b.epoch = r.brokerEpoch;
      b.state = 'running';
      this.sim.record(`b${b.id} registered, epoch ${r.brokerEpoch}`);
    }, () => { if (b.life === life) b.inflight = false; });
  }

  private heartbeat(b: SimBroker): void {
    const proc = b.proc!;
    b.inflight = true;
    const life = b.life;
    const request = {
      brokerId: b.id, brokerEpoch: b.epoch, currentMetadataOffset: BigInt(proc.loader.image.provenance.lastContainedOffset), wantFence: false,
      wantShutDown: false, offlineLogDirs: [],
    };
    this.brokerSend(b, (c, now) => c.processBrokerHeartbeat(request, now), (r) => {
      b.inflight = false;
      this.stats.heartbeats++;
      b.heartbeatOkMs = this.sim.nowMs();
      if (r.errorCode === ErrorCode.STALE_BROKER_EPOCH) {
        this.sim.record(`b${b.id} heartbeat: stale epoch ${b.epoch}, registers again`);
        b.state = 'registering';
      }
    }, () => { if (b.life === life) b.inflight = false; });
  }

  // ---- The network between brokers ---------------------------------------------------------------

  private reachable(from: number, to: number): boolean {
    return !this.brokerCuts.has(`${from}>${to}`);
  }

  private netDelay(): number {
    return 1 + this.rng.int(NET_DELAY_MS_MAX);
  }

  private connect(from: SimBroker, life: number, e: LeaderEndpoint): Promise<LeaderLink> {
    const to = this.brokers[Number(e.host.slice(1)) - 1]!;
    return new Promise((resolve, reject) => {
      this.at(this.sim.nowMs() + this.netDelay(), () => {
        if (from.proc === null || from.proc.life !== life) return reject(new Error('process gone'));
        if (to.proc === null || !this.reachable(from.id, to.id) || !this.reachable(to.id, from.id)) {
          return this.at(this.sim.nowMs() + (to.proc === null ? 1 : REQUEST_TIMEOUT_MS), () => reject(new Error(`cannot connect to b${to.id}`)));
        }
        const link = new SimLink(this, from, life, to, to.proc.life);
        from.proc!.links.add(link);
        to.proc.links.add(link);
        resolve(link);
      });
    });
  }

  /** A request crosses the network, runs on the leader process through its handler, and the answer comes back. */
  deliverRequest(link: SimLink, apiKey: number, version: number, body: any, answer: (response: unknown) => void): void {
    const lost = () => {
      this.stats.lostRequests++;
      this.at(this.sim.nowMs() + REQUEST_TIMEOUT_MS, () => link.close());
    };
    this.at(this.sim.nowMs() + this.netDelay(), () => {
      if (link.closed) return;
      const proc = link.to.proc;
      if (proc === null || proc.life !== link.toLife) return link.close();
      if (!this.reachable(link.from.id, link.to.id) || this.rng.next() < this.dropRate) return lost();
      if (apiKey === 1) this.stats.fetchRequests++;
      if (apiKey === 1 && this.replicationBug === 'follower-skips-truncation') {
        for (const t of body.topics) for (const p of t.partitions) p.lastFetchedEpoch = -1;
      }
      Promise.resolve(this.handle1(proc, apiKey, version, body)).then((response) => {
        this.dirty = true;
        this.at(this.sim.nowMs() + this.netDelay(), () => {
          if (link.closed) return;
          if (link.to.proc?.life !== link.toLife) return link.close();
          if (!this.reachable(link.to.id, link.from.id) || this.rng.next() < this.dropRate) return lost();
          answer(response);
        });
      }, (e: unknown) => proc.alive && this.fail(`b${link.to.id} handler for API ${apiKey} threw: ${e instanceof Error ? e.stack : String(e)}`));
    });
  }

  private handle1(proc: BrokerProcess, apiKey: number, version: number, body: any): unknown {
    const base = { header: undefined as never, apiVersion: version, connectionId: 'sim', clientAddress: 'sim', listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', principal: 'User:ANONYMOUS', nowMs: this.sim.nowMs() };
    const rm = proc.rm;
    switch (apiKey) {
      case 1: return fetchHandler.handle(body, {
        ...base,
        services: {
          metadata: () => ({ topicById: (id: string) => { const t = proc.image.topics.topicsById.get(id); return t === undefined ? undefined : { name: t.name }; } }) as any,
          fetchSessions: proc.fetchSessions,
          fetchPartitions: (p: any) => rm.fetch(p),
        },
      });
      case 2: return listOffsetsHandler.handle(body, {
        ...base, services: { listOffsets: (p: any) => rm.listOffsets(p.topic, p.partition, p.timestamp, p.currentLeaderEpoch, p.isolationLevel, p.replicaId) },
      });
      case 23: return offsetForLeaderEpochHandler.handle(body, {
        ...base, services: { offsetForLeaderEpoch: (topic: string, partition: number, current: number, epoch: number) => rm.offsetForLeaderEpoch(topic, partition, current, epoch) },
      });
      default: throw new Error(`no simulated handler for API ${apiKey}`);
    }
  }

  // ---- The admin, producer and consumer ----------------------------------------------------------

  private adminTick(): void {
    if (this.topicCreated) return;
    this.at(this.sim.nowMs() + 300, () => this.adminTick());
    if (this.adminInflight) return;
    this.adminInflight = true;
    this.send('admin', this.adminGuess, (c) => c.createTopics({
      topics: [{ name: TOPIC, numPartitions: this.partitions, replicationFactor: REPLICATION_FACTOR, assignments: [], configs: [{ name: 'min.insync.replicas', value: String(MIN_INSYNC_REPLICAS) }] }],
      timeoutMs: 1000, validateOnly: false,
    }), (a) => {
      this.adminInflight = false;
      if (a.kind === 'not-controller') {
        this.adminGuess = a.hint ?? this.randomNode();
        return;
      }
      const code = a.response[0]!.errorCode;
      if (code === ErrorCode.NONE || code === ErrorCode.TOPIC_ALREADY_EXISTS) {
        if (!this.topicCreated) this.sim.record(`topic ${TOPIC} created`);
        this.topicCreated = true;
      }
    });
  }

  /** A client's metadata: a running broker's image (as a Metadata request to it would answer). */
  private clientImage(): MetadataImage | undefined {
    const running = this.brokers.filter((b) => b.proc !== null);
    if (running.length === 0) return undefined;
    return running[this.rng.int(running.length)]!.proc!.loader.image;
  }

  private produceTick(): void {
    this.at(this.sim.nowMs() + PRODUCE_INTERVAL_MS / 2 + this.rng.int(PRODUCE_INTERVAL_MS), () => this.produceTick());
    const reg = this.clientImage()?.topics.getTopic(TOPIC);
    if (reg === undefined) return;
    const partition = this.rng.int(this.partitions);
    const leader = reg.partitions.get(partition)?.leader ?? -1;
    if (leader < 0) return;
    const acks = this.healed || this.rng.next() < 0.7 ? -1 : 1;
    const n = this.producerSeq++;
    const count = 1 + this.rng.int(3);
    const records = buildRecordBatchSync({
      records: Array.from({ length: count }, (_, i) => ({ key: null, value: Buffer.from(`s${this.sim.seed}-${n}-${i}`) })), baseTimestamp: this.sim.nowMs(),
    });
    const crc = records.readUInt32BE(BatchHeaderAt.Crc);
    if (acks === -1) this.stats.producedAcksAll++;
    else this.stats.producedAcks1++;
    const b = this.brokers[leader - 1]!;
    this.at(this.sim.nowMs() + this.netDelay(), () => {
      const proc = b.proc;
      if (proc === null || this.rng.next() < this.dropRate) return;
      proc.rm.produce(acks, PRODUCE_TIMEOUT_MS, [{ topic: TOPIC, partition, records }]).then((out) => {
        this.dirty = true;
        const r = [...out.values()][0]!;
        const epoch = proc.rm.partition(TOPIC, partition)?.leaderEpoch ?? -1;
        this.at(this.sim.nowMs() + this.netDelay(), () => {
          // The answer is lost with the process, or on the way.
          if (b.proc !== proc || this.rng.next() < this.dropRate) return;
          if (r.errorCode === ErrorCode.NOT_ENOUGH_REPLICAS || r.errorCode === ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND) this.stats.notEnoughReplicas++;
          if (r.errorCode !== ErrorCode.NONE || acks !== -1) return;
          this.stats.acknowledgedAcksAll++;
          const baseOffset = Number(r.baseOffset);
          this.observe(partition, { baseOffset, lastOffset: baseOffset + count - 1, crc, epoch, how: `acked by b${b.id} in epoch ${epoch}`, acked: true });
          if (this.healed) this.finalAcked.add(partition);
        });
      }, (e: unknown) => proc.alive && this.fail(`b${b.id} produce threw: ${e instanceof Error ? e.stack : String(e)}`));
    });
  }

  private consumeTick(): void {
    this.at(this.sim.nowMs() + CONSUME_INTERVAL_MS / 2 + this.rng.int(CONSUME_INTERVAL_MS), () => this.consumeTick());
    const reg = this.clientImage()?.topics.getTopic(TOPIC);
    if (reg === undefined) return;
    const partition = this.rng.int(this.partitions);
    const leader = reg.partitions.get(partition)?.leader ?? -1;
    if (leader < 0) return;
    const b = this.brokers[leader - 1]!;
    const position = this.consumerPosition.get(partition) ?? 0;
    this.at(this.sim.nowMs() + this.netDelay(), () => {
      const proc = b.proc;
      if (proc === null) return;
      proc.rm.fetch({
        replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0,
        partitions: [{ topic: TOPIC, partition, fetchOffset: BigInt(position), partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }],
      }).then((results) => {
        this.dirty = true;
        const r = results[0]!;
        const epoch = proc.rm.partition(TOPIC, partition)?.leaderEpoch ?? -1;
        this.at(this.sim.nowMs() + this.netDelay(), () => {
          if (b.proc !== proc || r.errorCode !== ErrorCode.NONE || r.records === null) return;
          if ((this.consumerPosition.get(partition) ?? 0) !== position) return;
          let next = position;
          for (let pos = 0; pos + LOG_OVERHEAD_BYTES <= r.records.length;) {
            const len = r.records.readInt32BE(pos + BatchHeaderAt.BatchLength);
            const baseOffset = Number(r.records.readBigInt64BE(pos + BatchHeaderAt.BaseOffset));
            const lastOffset = baseOffset + r.records.readInt32BE(pos + BatchHeaderAt.LastOffsetDelta);
            this.stats.consumedBatches++;
            this.observe(partition, { baseOffset, lastOffset, crc: r.records.readUInt32BE(pos + BatchHeaderAt.Crc), epoch, how: `read from b${b.id} in epoch ${epoch} below its high watermark ${r.highWatermark}`, acked: false });
            next = lastOffset + 1;
            pos += LOG_OVERHEAD_BYTES + len;
          }
          this.consumerPosition.set(partition, next);
        });
      }, (e: unknown) => proc.alive && this.fail(`b${b.id} fetch threw: ${e instanceof Error ? e.stack : String(e)}`));
    });
  }

  /** A batch a client was told is committed: it must agree with every other such batch at its offset. */
  private observe(partition: number, s: Seen): void {
    let seen = this.seen.get(partition);
    if (seen === undefined) this.seen.set(partition, seen = { list: [], byOffset: new Map() });
    const other = seen.byOffset.get(s.baseOffset);
    if (other !== undefined) {
      if (other.crc !== s.crc || other.lastOffset !== s.lastOffset) {
        this.fail(`${TOPIC}-${partition} offset ${s.baseOffset}: ${s.how} is batch crc ${s.crc}, but ${other.how} was crc ${other.crc}`);
      }
      return;
    }
    seen.byOffset.set(s.baseOffset, s);
    seen.list.push(s);
  }

  // ---- Invariants on the brokers ------------------------------------------------------------------

  private checkBrokers(): void {
    for (const b of this.brokers) {
      const proc = b.proc;
      if (proc === null) continue;
      for (const p of proc.rm.allPartitions()) {
        if (!p.isLeader) continue;
        const epochKey = `${p.index}:${p.leaderEpoch}`;
        const owner = this.leaderOfEpoch.get(epochKey);
        if (owner === undefined) {
          this.leaderOfEpoch.set(epochKey, b.id);
          this.stats.leaderChanges++;
          this.sim.record(`b${b.id} leads ${TOPIC}-${p.index} in epoch ${p.leaderEpoch}, ISR [${p.isr}], log end ${p.log.logEndOffset}, hw ${p.highWatermark}`);
        } else if (owner !== b.id) {
          this.violation(`${TOPIC}-${p.index}: brokers ${owner} and ${b.id} both lead in epoch ${p.leaderEpoch}`);
        }
        const hwKey = `${b.id}:${epochKey}`;
        const hw = this.hwOf.get(hwKey) ?? -1;
        if (p.highWatermark < hw) this.violation(`${TOPIC}-${p.index}: leader b${b.id}'s high watermark went back from ${hw} to ${p.highWatermark} in epoch ${p.leaderEpoch}`);
        // Invariant 7 (KIP-966's strict min ISR): with eligible leader replicas on, a leader whose
        // committed ISR stayed below min.insync.replicas (no partition change between two checks)
        // did not move its high watermark.
        const under = `${proc.life}:${p.partitionEpoch}`;
        const was = this.underMinIsr.get(hwKey);
        if (p.strictMinIsr && p.isUnderMinIsr && was === under && p.highWatermark > hw) {
          this.violation(`${TOPIC}-${p.index}: leader b${b.id} moved its high watermark from ${hw} to ${p.highWatermark} in epoch ${p.leaderEpoch} with ISR [${p.isr}] below min.insync.replicas ${p.minInsyncReplicas}`);
        }
        if (p.strictMinIsr && p.isUnderMinIsr) {
          if (was !== under) this.stats.leadersUnderMinIsr++;
          this.underMinIsr.set(hwKey, under);
        }
        else this.underMinIsr.delete(hwKey);
        this.hwOf.set(hwKey, p.highWatermark);
        this.countAfterPowerLoss(b, proc, p);
        this.verifyLeaderLog(b, proc, p);
        this.verifyIsrLogs(b, proc, p);
      }
    }
  }

  /**
   * Invariant 6: below the leader's high watermark, every follower of its maximal ISR that has
   * fetched in this leader epoch holds the leader's batches (what it holds of them: a restarted
   * follower may have less). Checked from where it was checked last, per leader and follower life.
   */
  private verifyIsrLogs(b: SimBroker, proc: BrokerProcess, p: Partition): void {
    for (const id of p.maximalIsr) {
      if (id === b.id || (p.followers.get(id)?.logEndOffset ?? -1) < 0) continue;
      const f = this.brokers[id - 1]!.proc;
      const fp = f?.rm.partition(TOPIC, p.index);
      if (f === null || fp === undefined) continue;
      const key = `isr:${b.id}:${proc.life}:${p.index}:${p.leaderEpoch}:${id}:${f.life}`;
      const fLog = (fp.log as StorageLog).log;
      const upTo = Math.min(p.highWatermark, fLog.logEndOffset, p.followers.get(id)!.logEndOffset);
      let from = Math.max(this.isrVerified.get(key) ?? 0, fLog.logStartOffset, p.log.logStartOffset);
      if (from >= upTo) continue;
      const mine = batchesIn((p.log as StorageLog).log, from, upTo);
      const theirs = batchesIn(fLog, from, upTo);
      for (let i = 0; i < Math.min(mine.length, theirs.length); i++) {
        const [m, t] = [mine[i]!, theirs[i]!];
        if (m.baseOffset !== t.baseOffset || m.crc !== t.crc) {
          this.violation(`${TOPIC}-${p.index}: ISR follower b${id} has batch ${t.baseOffset} crc ${t.crc} below the high watermark ${p.highWatermark} of b${b.id} (leader in epoch ${p.leaderEpoch}), which has batch ${m.baseOffset} crc ${m.crc}`);
        }
        from = Math.max(from, m.lastOffset + 1);
      }
      this.isrVerified.set(key, from);
    }
  }

  /** Invariants 1 and 2: every acknowledged or consumed batch of an epoch up to the leader's is in its log. */
  private verifyLeaderLog(b: SimBroker, proc: BrokerProcess, p: Partition): void {
    const seen = this.seen.get(p.index);
    if (seen === undefined) return;
    const key = `${b.id}:${p.index}`;
    const at = `${proc.life}:${p.leaderEpoch}`;
    const logEnd = p.log.logEndOffset;
    let v = this.verified.get(key);
    if (v === undefined || v.key !== at || logEnd < v.logEnd) this.verified.set(key, v = { key: at, logEnd, checked: 0 });
    v.logEnd = logEnd;
    const log = (p.log as StorageLog).log;
    for (; v.checked < seen.list.length; v.checked++) {
      const s = seen.list[v.checked]!;
      if (s.epoch > p.leaderEpoch) continue;
      this.stats.checkedBatches++;
      const where = `${TOPIC}-${p.index} offset ${s.baseOffset} (${s.how})`;
      if (s.baseOffset < log.logStartOffset || s.lastOffset >= logEnd) {
        this.violation(`${where} is not in the log of b${b.id}, leader in epoch ${p.leaderEpoch} (log ${log.logStartOffset}..${logEnd})`);
      }
      const bytes = log.read(s.baseOffset, 1, logEnd);
      const baseOffset = bytes.length >= LOG_OVERHEAD_BYTES ? Number(bytes.readBigInt64BE(BatchHeaderAt.BaseOffset)) : -1;
      const crc = bytes.length >= LOG_OVERHEAD_BYTES ? bytes.readUInt32BE(BatchHeaderAt.Crc) : -1;
      if (baseOffset !== s.baseOffset || crc !== s.crc) {
        this.violation(`${where}: b${b.id}, leader in epoch ${p.leaderEpoch}, has batch ${baseOffset} crc ${crc} there instead of crc ${s.crc}`);
      }
    }
  }

  /**
   * The first leader of a partition started after an all-nodes power loss: which of the batches
   * acknowledged or read before the loss its log still has (at the same offset, same CRC).
   */
  private countAfterPowerLoss(b: SimBroker, proc: BrokerProcess, p: Partition): void {
    const before = this.preLoss.get(p.index);
    if (before === undefined || this.lifeAtLoss === null || proc.life <= this.lifeAtLoss[b.id - 1]!) return;
    this.preLoss.delete(p.index);
    const log = (p.log as StorageLog).log;
    let lost = 0;
    for (const s of before) {
      const bytes = s.baseOffset >= log.logStartOffset && s.lastOffset < log.logEndOffset ? log.read(s.baseOffset, 1, log.logEndOffset) : Buffer.alloc(0);
      const kept = bytes.length >= LOG_OVERHEAD_BYTES && Number(bytes.readBigInt64BE(BatchHeaderAt.BaseOffset)) === s.baseOffset && bytes.readUInt32BE(BatchHeaderAt.Crc) === s.crc;
      if (!kept) lost++;
      if (s.acked) kept ? this.stats.ackedKeptAfterPowerLoss++ : this.stats.ackedLostAfterPowerLoss++;
      else kept ? this.stats.readKeptAfterPowerLoss++ : this.stats.readLostAfterPowerLoss++;
    }
    this.sim.record(`after the power loss b${b.id} leads ${TOPIC}-${p.index} in epoch ${p.leaderEpoch} (log end ${log.logEndOffset}): ${before.length - lost} of ${before.length} batches acknowledged or read before it kept`);
  }

  // ---- Faults -------------------------------------------------------------------------------------

  /**
   * Every broker loses power at once (its disk keeps what was fsynced and a random part of the
   * rest) and restarts a little later. With flush.messages=1 nothing acknowledged or read may be
   * lost, and the invariants go on checking every batch. Without it, losses are what the setting
   * allows: they are counted, and the checks start again from what the cluster kept.
   */
  private allNodesPowerLoss(): void {
    if (this.healed) return;
    const now = this.sim.nowMs();
    // Once the topic exists and has had some writes acknowledged.
    if (!this.topicCreated || this.seen.size === 0) {
      this.at(now + 250, () => this.allNodesPowerLoss());
      return;
    }
    for (const b of this.brokers) {
      if (b.proc !== null) this.kill(b);
      this.recovering.add(b.id);
      b.state = 'down';
      b.inflight = false;
      b.restartAtMs = now + 100 + this.powerLossRng!.int(1500);
    }
    this.stats.allNodesPowerLosses++;
    this.lifeAtLoss = this.brokers.map((b) => b.life);
    const durable = this.logConfig.flushMessages === 1;
    for (const [partition, seen] of this.seen) {
      this.preLoss.set(partition, [...seen.list]);
      if (!durable) {
        // What was lost is not held against the leaders after the loss; the consumer starts over.
        this.seen.set(partition, { list: [], byOffset: new Map() });
        this.consumerPosition.set(partition, 0);
      }
    }
    this.sim.record(`ALL BROKERS LOSE POWER (flush.messages ${this.logConfig.flushMessages}); back at ${this.brokers.map((b) => `b${b.id}@${b.restartAtMs}`).join(' ')}`);
  }

  /**
   * Whether every other replica of the partitions `b` holds runs, is unfenced and in the ISR the
   * controller has: then a crash of `b` is the one failure RF 3 with min.insync.replicas 2 must
   * survive (an ISR member has every acknowledged batch, which is what the invariants check, not
   * what this assumes). Other brokers do not matter.
   */
  private othersHealthy(b: SimBroker): boolean {
    const node = [...this.nodes.values()].find((n) => n.up && n.seat.active !== null);
    const t = node?.loader.image.topics.getTopic(TOPIC);
    // A broker cut off from the controller is failing too (its session may expire): see recovering.
    if (node === undefined || t === undefined || this.clientCuts.size > 0) return false;
    for (const p of t.partitions.values()) {
      if (!p.replicas.includes(b.id)) continue;
      for (const id of p.replicas) {
        if (id === b.id) continue;
        const o = this.brokers[id - 1]!;
        const reg = node.loader.image.cluster.broker(id);
        if (o.proc === null || o.state !== 'running' || reg === undefined || reg.fenced || !p.isr.includes(id)) return false;
        // A session about to expire (no heartbeat answered lately) is a failure on its way.
        if (this.sim.nowMs() - o.heartbeatOkMs > HEARTBEAT_INTERVAL_MS * 2) return false;
      }
    }
    return true;
  }

  /**
   * A crashed broker recovers once it is back in the ISR of every partition it holds. Until then
   * no other broker is cut off from the controller: fencing the other replicas would leave the
   * ISR to the crashed broker alone (its session has not expired yet), which then returns as
   * leader without its unflushed tail. That is two failures more than RF 3 with
   * min.insync.replicas 2 promises to survive; Kafka closes the gap with KIP-966 (eligible leader
   * replicas, unclean-shutdown detection at registration), which Logline does not have yet.
   */
  private updateRecovering(): void {
    const node = [...this.nodes.values()].find((n) => n.up && n.seat.active !== null);
    const t = node?.loader.image.topics.getTopic(TOPIC);
    if (node === undefined || t === undefined) return;
    for (const id of [...this.recovering]) {
      const b = this.brokers[id - 1]!;
      const reg = node.loader.image.cluster.broker(id);
      if (b.proc === null || reg === undefined || reg.fenced || reg.incarnationId !== b.incarnation) continue;
      if ([...t.partitions.values()].every((p) => !p.replicas.includes(id) || p.isr.includes(id))) this.recovering.delete(id);
    }
  }

  /** Cuts "bN>node" for a while; a later cut of the same pair extends it (an earlier one's end does not mend it). */
  private cutFromController(cuts: readonly string[], forMs: number): void {
    const until = this.sim.nowMs() + forMs;
    for (const c of cuts) {
      this.clientCuts.add(c);
      this.cutUntilMs.set(c, Math.max(this.cutUntilMs.get(c) ?? 0, until));
    }
    this.at(until, () => {
      for (const c of cuts) if ((this.cutUntilMs.get(c) ?? 0) <= this.sim.nowMs()) this.clientCuts.delete(c);
    });
  }

  private chaosTick(): void {
    if (this.healed) return;
    this.at(this.sim.nowMs() + CHAOS_INTERVAL_MS / 2 + this.rng.int(CHAOS_INTERVAL_MS), () => this.chaosTick());
    // The brokers' faults start once the topic exists (before, they only delay its creation).
    if (!this.topicCreated || this.sim.nowMs() < this.quietUntilMs) return;
    this.updateRecovering();
    const r = this.rng.next();
    const b = this.brokers[this.rng.int(this.brokers.length)]!;
    if (r < 0.25) {
      if (b.proc === null || !this.othersHealthy(b)) return;
      this.kill(b);
      this.recovering.add(b.id);
      b.state = 'down';
      b.inflight = false;
      b.restartAtMs = this.sim.nowMs() + 100 + this.rng.int(this.rng.next() < 0.5 ? 1000 : 5000);
      this.stats.brokerCrashes++;
      this.sim.record(`b${b.id} crashes (power cut), back at ${b.restartAtMs}`);
    } else if (r < 0.45) {
      const o = this.brokers[(b.id + this.rng.int(this.brokers.length - 1)) % this.brokers.length]!;
      const oneWay = this.rng.next() < 0.4;
      this.brokerCuts.add(`${b.id}>${o.id}`);
      if (!oneWay) this.brokerCuts.add(`${o.id}>${b.id}`);
      this.stats.brokerCuts++;
      this.sim.record(`cut b${b.id} ${oneWay ? '->' : '<->'} b${o.id}`);
    } else if (r < 0.65) {
      if (this.brokerCuts.size === 0) return;
      this.brokerCuts.clear();
      this.sim.record('broker cuts mended');
    } else if (r < 0.85) {
      if (this.recovering.size > 0) return;
      // Cut off from every controller node, or some, for a while: a session that expires fences
      // the broker and moves its leaderships while it may still act on the image it has.
      // Sometimes two brokers at once: a partition whose whole ISR is fenced goes offline (or,
      // with unclean.leader.election.enable, to a replica outside it).
      const nodes = this.rng.next() < 0.6 ? this.sim.nodeIds : this.sim.nodeIds.filter(() => this.rng.next() < 0.5);
      const forMs = 500 + this.rng.int(this.rng.next() < 0.5 ? 2000 : 6000);
      const victims = this.rng.next() < 0.3 ? [b, this.brokers[b.id % this.brokers.length]!] : [b];
      this.cutFromController(victims.flatMap((v) => nodes.map((n) => `b${v.id}>${n}`)), forMs);
      this.sim.record(`b${victims.map((v) => v.id).join(',b')} cut off from controller node(s) ${nodes.join(',')} for ${forMs} ms`);
    } else if (r < 0.93) {
      this.isolateIsr();
    } else if (r < 0.96) {
      this.dropRate = [0, 0, 0.02, 0.1][this.rng.int(4)]!;
      this.sim.record(`request loss ${this.dropRate}`);
    }
  }

  /**
   * A schedule that leaves a partition's whole ISR fenced while a replica outside it is alive: a
   * follower is cut off from the other replicas (it leaves the ISR), then the leader and the other
   * follower are cut off from the controller. Without unclean election the partition goes offline until
   * they return; with it, the outsider leads.
   */
  private isolateIsr(): void {
    if (this.recovering.size > 0) return;
    const node = [...this.nodes.values()].find((n) => n.up && n.seat.active !== null);
    const p = node?.loader.image.topics.getTopic(TOPIC)?.partitions.get(this.rng.int(this.partitions));
    if (p === undefined || p.leader < 0) return;
    const [f1, f2] = p.replicas.filter((id) => id !== p.leader);
    if (f1 === undefined || f2 === undefined) return;
    const leader = p.leader;
    // Alone: the other faults wait until it is over, and the cuts before it are mended.
    this.brokerCuts.clear();
    this.clientCuts.clear();
    this.cutUntilMs.clear();
    // Or the leader alone is cut off from the controller before the follower's lag expires: its
    // ISR shrink cannot commit, and the controller elects from the ISR it has (the outsider too).
    const pendingShrink = this.rng.next() < 0.5;
    const fenced = pendingShrink ? [leader] : [leader, f1];
    const startMs = pendingShrink ? 200 + this.rng.int(800) : REPLICA_LAG_TIME_MAX_MS + 200 + this.rng.int(500);
    const forMs = 4000 + this.rng.int(3000);
    this.quietUntilMs = this.sim.nowMs() + startMs + forMs;
    for (const id of [leader, f1]) {
      this.brokerCuts.add(`${id}>${f2}`);
      this.brokerCuts.add(`${f2}>${id}`);
    }
    this.sim.record(`isolating the ISR: cut b${f2} from b${leader},b${f1}, then b${fenced.join(',b')} from the controller`);
    this.at(this.sim.nowMs() + startMs, () => {
      if (this.healed) return;
      this.cutFromController(fenced.flatMap((id) => this.sim.nodeIds.map((n) => `b${id}>${n}`)), forMs);
    });
  }

  describe(): string {
    return this.brokers.map((b) => {
      const parts = b.proc === null ? [] : [...b.proc.rm.allPartitions()].map((p) => `${p.index}:${p.isLeader ? 'L' : `f(${p.leaderId})`}e${p.leaderEpoch} isr[${p.isr}] leo${p.log.logEndOffset} hw${p.highWatermark}`);
      return `b${b.id} ${b.state} life ${b.life} epoch ${b.epoch} guess n${b.guess} ${parts.join(' ')}`;
    }).join('\n  ');
  }
}

/** The batches (base offset, last offset, CRC) of a log whose last offset is below `upTo`, from the one holding `from`. */
function batchesIn(log: StorageLog['log'], from: number, upTo: number): { baseOffset: number; lastOffset: number; crc: number }[] {
  const out: { baseOffset: number; lastOffset: number; crc: number }[] = [];
  for (let at = from; at < upTo;) {
    const bytes = log.read(at, 1 << 16, log.logEndOffset);
    if (bytes.length < LOG_OVERHEAD_BYTES) break;
    for (let pos = 0; pos + LOG_OVERHEAD_BYTES <= bytes.length;) {
      const len = bytes.readInt32BE(pos + BatchHeaderAt.BatchLength);
      if (pos + LOG_OVERHEAD_BYTES + len > bytes.length) break;
      const baseOffset = Number(bytes.readBigInt64BE(pos + BatchHeaderAt.BaseOffset));
      const lastOffset = baseOffset + bytes.readInt32BE(pos + BatchHeaderAt.LastOffsetDelta);
      if (lastOffset >= upTo) return out;
      out.push({ baseOffset, lastOffset, crc: bytes.readUInt32BE(pos + BatchHeaderAt.Crc) });
      at = lastOffset + 1;
      pos += LOG_OVERHEAD_BYTES + len;
    }
  }
  return out;
}

/** A partition log that counts truncations (to see that the schedules make followers diverge). */
class CountingLog extends StorageLog {
  constructor(log: StorageLog['log'], private readonly counts: { truncations: number }) {
    super(log);
  }
  override truncateTo(offset: number): void {
    if (offset < this.logEndOffset) this.counts.truncations++;
    super.truncateTo(offset);
  }
}

export type { Activation };
