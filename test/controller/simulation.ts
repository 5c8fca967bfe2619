// Deterministic simulation of the controller: a seeded PRNG drives simulated brokers that register,
// heartbeat, fall silent (crash, with or without a restart under a new incarnation id), ask for
// controlled shutdown, create and delete topics, grow partitions and take producer-id blocks,
// against an active controller and a standby, with a simulated clock and a simulated metadata log
// whose commit point lags the appends. The active controller can lose leadership at any time,
// with its uncommitted records either kept (the new leader commits them) or truncated; the
// standby then takes over. Responses reach brokers only once the records they depend on are
// committed, as a real driver does. Invariants are checked after every step; a failure names its
// seed and the last events, and the same seed replays the same run.
import { effectiveMinIsr, topicMinIsr, QuorumController, type ControllerResult } from '../../src/controller/index.js';
import {
  imageToRecords, LeaderRecoveryState, MetadataDelta, MetadataImage, NO_LEADER, MetadataRecordType, type MetadataRecord,
} from '../../src/metadata/index.js';
import { ErrorCode, type BrokerRegistrationRequest } from '../../src/protocol/index.js';
import { Prng } from '../../src/util/index.js';
import { CLUSTER_ID, registration, uuidFor } from './driver.js';

type BrokerState = 'down' | 'registering' | 'running' | 'shutting-down';

interface SimBroker {
  readonly id: number;
  incarnation: string;
  epoch: bigint;
  state: BrokerState;
  /** The metadata offset this broker has replayed (it follows the committed log, with lag). */
  seenOffset: number;
  /** A crashed broker's supervisor restarts it at this time; Infinity: only when the sim picks it. */
  restartAtMs: number;
  rack: string | null;
  /** A request is waiting for its records to commit. */
  inflight: boolean;
  /** The broker epoch its last clean shutdown recorded (-1 after a crash): its next previousBrokerEpoch (KIP-966). */
  cleanEpoch: bigint;
}

interface Pending {
  readonly upTo: number;
  readonly broker: SimBroker | undefined;
  readonly deliver: () => void;
}

interface LogEntry {
  readonly offset: number;
  readonly record: MetadataRecord;
}

export interface SimulationStats {
  steps: number;
  records: number;
  failovers: number;
  truncations: number;
  fenced: number;
  controlledShutdowns: number;
  crashes: number;
  topics: number;
  /** Reassignments started (replicas widened) and finished (replicas narrowed to a target, or reverted). */
  reassignmentsStarted: number;
  reassignmentsFinished: number;
  /** Committed partition changes leaving an empty ISR with an ELR, elections from the ELR, and unclean ones (KIP-966's model). */
  elrWaits: number;
  elrElections: number;
  uncleanElections: number;
}

export class ControllerSimulation {
  private readonly rng: Prng;
  private now = 0;
  private readonly controllers: [QuorumController, QuorumController];
  private activeIndex = 0;
  private readonly log: LogEntry[] = [];
  /** The active controller replays each operation's records as one batch (else record by record). */
  private readonly batched: boolean;
  /** Offsets at which an operation's records end (a Raft batch; commits land on these). */
  private batchEnds: number[] = [];
  private committed = -1;
  /** The active controller's serialised image after each offset it replayed. */
  private readonly imageAt = new Map<number, string>();
  private pending: Pending[] = [];
  private readonly brokers: SimBroker[] = [];
  private topicCounter = 0;
  private readonly trace: string[] = [];
  private readonly producerIdBlocks: Array<[bigint, bigint]> = [];
  /** Highest epochs seen per partition and per broker, in committed images and in the active one. */
  private committedMax = new Map<string, number>();
  private activeMax = new Map<string, number>();
  /** unclean.leader.election.enable in this seed. */
  private uncleanOn = false;
  /**
   * The committed history replayed record by record, and per partition the replicas known to hold
   * every record that may have been committed (the ELR safety model, see checkElrSafety).
   */
  private readonly model = { image: MetadataImage.EMPTY, offset: -1, holders: new Map<string, Set<number>>() };
  readonly stats: SimulationStats = { steps: 0, records: 0, failovers: 0, truncations: 0, fenced: 0, controlledShutdowns: 0, crashes: 0, topics: 0, reassignmentsStarted: 0, reassignmentsFinished: 0, elrWaits: 0, elrElections: 0, uncleanElections: 0 };

  constructor(readonly seed: number, private readonly steps = 250) {
    this.rng = new Prng(seed * 2654435761 + 17);
    const unclean = this.rng.next() < 0.3;
    this.uncleanOn = unclean;
    this.batched = this.rng.next() < 0.5;
    const make = (n: number) => new QuorumController({
      clusterId: CLUSTER_ID, prng: new Prng(seed * 31 + n), uncleanLeaderElectionEnable: unclean, sessionTimeoutMs: 9000,
    });
    this.controllers = [make(1), make(2)];
    const brokerCount = 3 + this.rng.int(3);
    const racks = this.rng.next() < 0.5;
    for (let id = 1; id <= brokerCount; id++) {
      this.brokers.push({
        id, incarnation: '', epoch: -1n, state: 'down', seenOffset: -1, restartAtMs: 0,
        rack: racks ? `rack-${id % 2}` : null, inflight: false, cleanEpoch: -1n,
      });
    }
    this.note(`seed ${seed}: ${brokerCount} brokers${racks ? ' on 2 racks' : ''}${unclean ? ', unclean election on' : ''}${this.batched ? ', batched replay' : ''}`);
  }

  private get active(): QuorumController { return this.controllers[this.activeIndex]!; }
  private get standby(): QuorumController { return this.controllers[1 - this.activeIndex]!; }

  run(): SimulationStats {
    try {
      this.active.activate(0, this.now);
      this.append(this.active.bootstrap(), undefined, () => {});
      this.advanceCommit(this.lastLogOffset());
      for (let i = 0; i < this.steps; i++) {
        this.step();
        this.stats.steps++;
        this.checkActive();
      }
      this.settle();
      return this.stats;
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      throw new Error(`controller simulation failed, seed ${this.seed} (replay: LOGLINE_CONTROLLER_SEED=${this.seed}): ${message}\nlast events:\n  ${this.trace.join('\n  ')}`, { cause: e });
    }
  }

  // ---- the schedule --------------------------------------------------------------------------

  private step(): void {
    const r = this.rng.next();
    if (r < 0.25) {
      this.now += this.rng.int(2500);
      const result = this.active.maybeFenceStaleBrokers(this.now);
      if (result.response.length > 0) {
        this.stats.fenced += result.response.length;
        this.note(`@${this.now} session expired: fence ${result.response.join(',')}`);
      }
      this.append(result, undefined, () => {});
    } else if (r < 0.72) {
      this.brokerAction(this.brokers[this.rng.int(this.brokers.length)]!);
    } else if (r < 0.80) {
      this.createTopic();
    } else if (r < 0.83) {
      this.deleteOrGrowTopic();
    } else if (r < 0.85) {
      this.allocateProducerIds();
    } else if (r < 0.86) {
      this.electLeaders();
    } else if (r < 0.88) {
      this.reassign();
    } else if (r < 0.985) {
      const ends = this.batchEnds.filter((o) => o > this.committed);
      if (ends.length > 0) this.advanceCommit(ends[this.rng.int(ends.length)]!);
    } else {
      this.failover(this.rng.next() < 0.5);
    }
  }

  private brokerAction(b: SimBroker): void {
    if (b.inflight) return;
    if (this.rng.next() < 0.8) b.seenOffset = Math.max(b.seenOffset, this.committed);
    switch (b.state) {
      case 'down':
        if (this.now >= b.restartAtMs || this.rng.next() < 0.2) {
          b.incarnation = uuidFor(this.rng.nextUint32());
          b.state = 'registering';
          this.note(`@${this.now} b${b.id} starts, incarnation ${b.incarnation}`);
          this.register(b);
        }
        return;
      case 'registering':
        return this.register(b);
      case 'running': {
        const r = this.rng.next();
        if (r < 0.05) {
          b.state = 'down';
          b.cleanEpoch = -1n;
          b.restartAtMs = this.rng.next() < 0.6 ? this.now + this.rng.int(20_000) : Infinity;
          this.stats.crashes++;
          this.note(`@${this.now} b${b.id} crashes (restart ${b.restartAtMs === Infinity ? 'never' : `@${b.restartAtMs}`})`);
          return;
        }
        if (r < 0.09) {
          b.state = 'shutting-down';
          this.note(`@${this.now} b${b.id} asks for controlled shutdown`);
        }
        return this.heartbeat(b, r > 0.98);
      }
      case 'shutting-down':
        return this.heartbeat(b, false);
    }
  }

  private register(b: SimBroker): void {
    const request: BrokerRegistrationRequest = registration(b.id, { incarnationId: b.incarnation, rack: b.rack, previousBrokerEpoch: b.cleanEpoch });
    const result = this.active.registerBroker(request, this.now);
    b.inflight = true;
    this.append(result, b, () => {
      const r = result.response;
      this.note(`@${this.now} b${b.id} registration: ${errorName(r.errorCode)}${r.errorCode === 0 ? ` epoch ${r.brokerEpoch}` : ''}`);
      if (r.errorCode !== ErrorCode.NONE) return;
      const entry = this.log.find((e) => e.offset === Number(r.brokerEpoch));
      check(entry !== undefined && entry.record.type === MetadataRecordType.RegisterBrokerRecord && entry.record.data.brokerId === b.id,
        `b${b.id}: broker epoch ${r.brokerEpoch} is not the offset of its RegisterBrokerRecord`);
      b.epoch = r.brokerEpoch;
      b.state = 'running';
    });
  }

  private heartbeat(b: SimBroker, wantFence: boolean): void {
    const wantShutDown = b.state === 'shutting-down';
    const result = this.active.processBrokerHeartbeat({
      brokerId: b.id, brokerEpoch: b.epoch, currentMetadataOffset: BigInt(b.seenOffset), wantFence, wantShutDown, offlineLogDirs: [],
    }, this.now);
    b.inflight = true;
    if (result.records.length > 0) this.note(`@${this.now} b${b.id} heartbeat (offset ${b.seenOffset}${wantShutDown ? ', shutdown' : ''}${wantFence ? ', fence' : ''}): ${result.records.length} records`);
    this.append(result, b, () => {
      const r = result.response;
      if (r.errorCode === ErrorCode.STALE_BROKER_EPOCH) {
        this.note(`@${this.now} b${b.id} heartbeat: stale epoch ${b.epoch}, registers again`);
        // The same process registering again names its last epoch (a clean restart, as the lifecycle does).
        if (b.state !== 'shutting-down') b.cleanEpoch = b.epoch;
        b.state = b.state === 'shutting-down' ? 'down' : 'registering';
        return;
      }
      check(r.errorCode === ErrorCode.NONE, `b${b.id} heartbeat: ${errorName(r.errorCode)}`);
      if (r.shouldShutDown) {
        check(wantShutDown, `b${b.id} told to shut down without asking`);
        this.assertLeadsNothing(this.active.committedImage, b.id, 'a broker let go by controlled shutdown');
        b.state = 'down';
        b.cleanEpoch = b.epoch;
        b.restartAtMs = this.rng.next() < 0.7 ? this.now + this.rng.int(20_000) : Infinity;
        this.stats.controlledShutdowns++;
        this.note(`@${this.now} b${b.id} shut down cleanly`);
      }
    });
  }

  private createTopic(): void {
    const name = `t${this.topicCounter++}`;
    const result = this.active.createTopics({
      topics: [{
        name, numPartitions: 1 + this.rng.int(3), replicationFactor: 1 + this.rng.int(3), assignments: [],
        // Half the topics at min.insync.replicas 2: an ELR next to a non-empty ISR (KIP-966).
        configs: this.rng.next() < 0.5 ? [{ name: 'min.insync.replicas', value: '2' }] : [],
      }],
      timeoutMs: 1000, validateOnly: false,
    });
    if (result.records.length > 0) {
      this.stats.topics++;
      this.note(`@${this.now} create ${name}: ${result.response[0]!.numPartitions}x${result.response[0]!.replicationFactor}`);
    }
    this.append(result, undefined, () => {});
  }

  private deleteOrGrowTopic(): void {
    const names = [...this.active.image.topics.topicsByName.keys()];
    if (names.length === 0) return;
    const name = names[this.rng.int(names.length)]!;
    if (this.rng.next() < 0.5) {
      this.note(`@${this.now} delete ${name}`);
      this.append(this.active.deleteTopics([{ name, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }]), undefined, () => {});
    } else {
      const count = this.active.image.topics.getTopic(name)!.partitions.size + 1;
      this.note(`@${this.now} grow ${name} to ${count}`);
      this.append(this.active.createPartitions([{ name, count, assignments: null }], false), undefined, () => {});
    }
  }

  /** An admin's ElectLeaders (preferred or unclean, all partitions) or a leader-balancing pass. */
  private electLeaders(): void {
    const r = this.rng.next();
    if (r < 0.4) {
      const result = this.active.maybeBalancePartitionLeaders();
      if (result.response > 0) this.note(`@${this.now} leader balancing: ${result.response} elections`);
      return this.append(result, undefined, () => {});
    }
    const electionType = r < 0.8 ? 0 : 1;
    const result = this.active.electLeaders({ electionType, topicPartitions: null, timeoutMs: 1000 });
    if (result.records.length > 0) this.note(`@${this.now} ElectLeaders ${electionType === 0 ? 'preferred' : 'unclean'}: ${result.records.length} elections`);
    this.append(result, undefined, () => {
      for (const t of result.response) {
        for (const p of t.partitionResult) check(p.errorCode !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `ElectLeaders: ${t.topic}-${p.partitionId} unknown`);
      }
    });
  }

  /**
   * An admin's AlterPartitionReassignments on one partition (a random target, or a cancel), or the
   * partition leader's AlterPartition adding the live adding replicas to the ISR (they caught up),
   * which completes the reassignment.
   */
  private reassign(): void {
    const image = this.active.image;
    const topics = [...image.topics.topicsByName.values()];
    if (topics.length === 0) return;
    const t = topics[this.rng.int(topics.length)]!;
    const partitionIndex = this.rng.int(t.partitions.size);
    const p = t.partitions.get(partitionIndex)!;
    const r = this.rng.next();
    if (r < 0.4) {
      const leader = image.cluster.broker(p.leader);
      const live = (id: number) => { const b = image.cluster.broker(id); return b !== undefined && !b.fenced && !b.inControlledShutdown; };
      const add = p.addingReplicas.filter((id) => live(id) && !p.isr.includes(id));
      if (leader === undefined || add.length === 0) return;
      const newIsr = [...p.isr, ...add];
      this.note(`@${this.now} ${t.name}-${partitionIndex}: leader ${p.leader} adds ${add.join(',')} to the ISR`);
      this.append(this.countReassignments(this.active.alterPartition({
        brokerId: p.leader, brokerEpoch: leader.epoch,
        topics: [{ topicName: t.name, topicId: t.id, partitions: [{
          partitionIndex, leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch, leaderRecoveryState: 0, newIsr,
          newIsrWithEpochs: newIsr.map((id) => ({ brokerId: id, brokerEpoch: image.cluster.broker(id)?.epoch ?? -1n })),
        }] }],
      }, 3)), undefined, () => {});
      return;
    }
    let replicas: number[] | null = null;
    if (r >= 0.55) {
      const ids = [...image.cluster.brokers.keys()];
      replicas = [];
      const n = 1 + this.rng.int(Math.min(3, ids.length));
      while (replicas.length < n) {
        const id = ids[this.rng.int(ids.length)]!;
        if (!replicas.includes(id)) replicas.push(id);
      }
    }
    const result = this.countReassignments(this.active.alterPartitionReassignments({ timeoutMs: 1000, topics: [{ name: t.name, partitions: [{ partitionIndex, replicas }] }] }));
    this.note(`@${this.now} reassign ${t.name}-${partitionIndex} [${p.replicas.join(',')}] to ${replicas === null ? 'cancel' : `[${replicas.join(',')}]`}: ${result.records.length} record(s)`);
    this.append(result, undefined, () => {
      const code = result.response.responses[0]!.partitions[0]!.errorCode;
      check(code !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && code !== ErrorCode.INVALID_REPLICA_ASSIGNMENT || replicas === null,
        `reassign ${t.name}-${partitionIndex}: ${errorName(code)}`);
    });
  }

  private countReassignments<T>(result: ControllerResult<T>): ControllerResult<T> {
    for (const r of result.records) {
      if (r.type !== MetadataRecordType.PartitionChangeRecord || r.data.replicas === null) continue;
      if ((r.data.addingReplicas?.length ?? 0) > 0 || (r.data.removingReplicas?.length ?? 0) > 0) this.stats.reassignmentsStarted++;
      else this.stats.reassignmentsFinished++;
    }
    return result;
  }

  private allocateProducerIds(): void {
    const b = this.brokers.find((x) => x.state === 'running' && !x.inflight);
    if (b === undefined) return;
    const result = this.active.allocateProducerIds({ brokerId: b.id, brokerEpoch: b.epoch });
    b.inflight = true;
    this.append(result, b, () => {
      const r = result.response;
      if (r.errorCode !== ErrorCode.NONE) return;
      const end = r.producerIdStart + BigInt(r.producerIdLen);
      for (const [s, e] of this.producerIdBlocks) {
        check(end <= s || r.producerIdStart >= e, `producer id block [${r.producerIdStart}, ${end}) overlaps [${s}, ${e})`);
      }
      this.producerIdBlocks.push([r.producerIdStart, end]);
    });
  }

  // ---- the simulated metadata log --------------------------------------------------------------

  private lastLogOffset(): number {
    return this.log.length === 0 ? -1 : this.log[this.log.length - 1]!.offset;
  }

  /** Appends an operation's records as one batch; its response waits until they are committed. */
  private append<T>(result: ControllerResult<T>, broker: SimBroker | undefined, deliver: () => void): void {
    const c = this.active;
    let offset = c.nextWriteOffset;
    if (this.batched && result.records.length > 0) {
      // The driver's way: one state per batch; the standby still compares at the batch's end.
      c.replayBatch(result.records, offset);
      for (const record of result.records) this.log.push({ offset: offset++, record });
      this.imageAt.set(offset - 1, serialise(c.image));
      this.stats.records += result.records.length;
    } else {
      for (const record of result.records) {
        c.replay(record, offset);
        this.log.push({ offset, record });
        this.imageAt.set(offset, serialise(c.image));
        this.stats.records++;
        offset++;
      }
    }
    if (result.records.length > 0) this.batchEnds.push(offset - 1);
    // A response that wrote nothing still waits for what it read (Kafka's appendWithoutRecords).
    const upTo = Math.max(this.lastLogOffset(), -1);
    this.pending.push({ upTo, broker, deliver: () => { if (broker) broker.inflight = false; deliver(); } });
    this.deliverCommitted();
  }

  private advanceCommit(to: number): void {
    if (to <= this.committed) return;
    this.committed = to;
    this.active.commit(to);
    this.catchUp(this.standby, to);
    this.batchEnds = this.batchEnds.filter((o) => o > to);
    this.checkCommitted(this.active.committedImage);
    this.deliverCommitted();
  }

  /** A standby replays committed records; its image must equal the active's at every offset. */
  private catchUp(c: QuorumController, to: number): void {
    for (const { offset, record } of this.log) {
      if (offset <= c.lastReplayedOffset || offset > to) continue;
      c.replay(record, offset);
      const expected = this.imageAt.get(offset);
      if (expected !== undefined && serialise(c.image) !== expected) {
        throw new Error(`standby image differs from the active one at offset ${offset}`);
      }
    }
    c.commit(to);
  }

  private deliverCommitted(): void {
    const ready = this.pending.filter((p) => p.upTo <= this.committed);
    this.pending = this.pending.filter((p) => p.upTo > this.committed);
    for (const p of ready) p.deliver();
  }

  /**
   * The active controller loses leadership. Its uncommitted records are either truncated (the new
   * leader never had them) or kept (the new leader has them and commits them). Requests in flight
   * are lost either way; brokers retry.
   */
  private failover(truncate: boolean): void {
    const old = this.active;
    this.stats.failovers++;
    for (const p of this.pending) if (p.broker) p.broker.inflight = false;
    this.pending = [];
    if (truncate && this.lastLogOffset() > this.committed) {
      this.stats.truncations++;
      while (this.log.length > 0 && this.lastLogOffset() > this.committed) this.imageAt.delete(this.log.pop()!.offset);
      this.batchEnds = [];
    }
    old.deactivate();
    const reverted = this.imageAt.get(old.lastReplayedOffset);
    if (reverted !== undefined) check(serialise(old.image) === reverted, `the reverted image differs from the image at offset ${old.lastReplayedOffset}`);
    this.activeIndex = 1 - this.activeIndex;
    const next = this.active;
    // The new leader holds the whole log; it commits it together with its leader-change record.
    this.catchUp(next, this.lastLogOffset());
    const leaderChangeOffset = Math.max(this.lastLogOffset(), next.lastReplayedOffset) + 1;
    next.activate(leaderChangeOffset + 1, this.now);
    this.note(`@${this.now} failover to controller ${this.activeIndex + 1}${truncate ? ', uncommitted records truncated' : ''}; leader change at ${leaderChangeOffset}`);
    this.committed = Math.max(this.committed, this.lastLogOffset());
    next.commit(this.committed);
    this.catchUp(old, this.committed);
    this.batchEnds = [];
    this.activeMax = new Map(this.committedMax);
    this.checkCommitted(next.committedImage);
  }

  /** Heals everything: every broker comes back and heartbeats until the cluster is whole. */
  private settle(): void {
    this.note(`@${this.now} settle`);
    for (const b of this.brokers) if (b.state === 'down') b.restartAtMs = this.now;
    for (let round = 0; round < 12; round++) {
      this.now += 3000;
      this.append(this.active.maybeFenceStaleBrokers(this.now), undefined, () => {});
      for (const b of this.brokers) {
        this.advanceCommit(this.lastLogOffset());
        b.seenOffset = this.committed;
        if (b.state === 'down') { b.restartAtMs = this.now; }
        this.brokerActionSettled(b);
      }
      this.advanceCommit(this.lastLogOffset());
      this.checkActive();
    }
    const image = this.active.committedImage;
    for (const b of this.brokers) {
      const reg = image.cluster.broker(b.id);
      check(reg !== undefined && !reg.fenced && !reg.inControlledShutdown, `after healing, broker ${b.id} is ${reg === undefined ? 'unregistered' : reg.fenced ? 'fenced' : 'in controlled shutdown'}`);
    }
    for (const t of image.topics.topicsById.values()) {
      for (const [id, p] of t.partitions) check(p.leader !== NO_LEADER, `after healing, ${t.name}-${id} has no leader (ISR ${p.isr.join(',')})`);
    }
    this.catchUp(this.standby, this.committed);
    check(serialiseAsRecords(this.standby.image) === serialiseAsRecords(image), 'after healing, the standby\'s snapshot records differ from the active\'s');
  }

  private brokerActionSettled(b: SimBroker): void {
    if (b.inflight) return;
    if (b.state === 'down') {
      b.incarnation = uuidFor(this.rng.nextUint32());
      b.state = 'registering';
    }
    if (b.state === 'registering') return this.register(b);
    return this.heartbeat(b, false);
  }

  // ---- invariants ------------------------------------------------------------------------------

  private checkActive(): void {
    checkImage(this.active.image, 'active image');
    this.checkGrowth(this.active.image, this.activeMax, 'active image');
    check(this.active.lastReplayedOffset === this.lastLogOffset(),
      `active controller replayed up to ${this.active.lastReplayedOffset}, log ends at ${this.lastLogOffset()}`);
  }

  private checkCommitted(image: MetadataImage): void {
    checkImage(image, 'committed image');
    this.checkElrSafety();
    this.checkGrowth(image, this.committedMax, 'committed image');
  }

  /**
   * KIP-966's safety, on a model of the data: a leader moves the high watermark only while it leads
   * an ISR of at least min ISR members (the strict rule), so after a record that leaves a partition
   * led with such an ISR, exactly its ISR members are known to hold every committed record; while
   * it is below, no record commits and the known holders stay (ISR members joining them). Then:
   * every ELR member is a holder (an election from the ELR loses nothing), and a replica entering
   * an ISR that keeps none of its members (an election from outside it) is a holder, unless the
   * election was unclean (RECOVERING, or unclean.leader.election.enable in this seed), after which
   * only the new ISR holds what counts as committed.
   */
  private checkElrSafety(): void {
    const m = this.model;
    for (const { offset, record } of this.log) {
      if (offset <= m.offset || offset > this.committed) continue;
      const before = m.image;
      const delta = new MetadataDelta(before);
      delta.replay(record);
      m.image = delta.apply(before.provenance);
      m.offset = offset;
      if (record.type !== MetadataRecordType.PartitionRecord && record.type !== MetadataRecordType.PartitionChangeRecord) continue;
      const { topicId, partitionId } = record.data;
      const t = m.image.topics.getTopicById(topicId);
      const p = t?.partitions.get(partitionId);
      if (t === undefined || p === undefined) continue;
      const key = `${topicId}:${partitionId}`;
      const prev = before.topics.getTopicById(topicId)?.partitions.get(partitionId);
      let holders = m.holders.get(key);
      if (prev === undefined || holders === undefined) {
        holders = new Set(p.isr);
      } else {
        const where = `offset ${offset}: ${t.name}-${partitionId} (ISR ${prev.isr.join(',')} -> ${p.isr.join(',')}, ELR ${p.elr.join(',')}, leader ${p.leader}, holders ${[...holders].join(',')})`;
        const keepsMember = p.isr.some((b) => prev.isr.includes(b));
        for (const b of p.isr) if (prev.addingReplicas.includes(b) && !prev.isr.includes(b)) holders.add(b);
        // Unclean: the record marks the leader recovering, or (already recovering, as nothing here
        // reports recovery done) elects a leader from outside the ISR and the ELR.
        const recovering = p.leaderRecoveryState === LeaderRecoveryState.RECOVERING;
        const unclean = (recovering && prev.leaderRecoveryState !== LeaderRecoveryState.RECOVERING)
          || (recovering && p.leader !== prev.leader && p.leader !== NO_LEADER && !prev.isr.includes(p.leader) && !prev.elr.includes(p.leader))
          || (this.uncleanOn && !keepsMember && p.isr.some((b) => !holders!.has(b)));
        if (unclean) {
          this.stats.uncleanElections++;
          holders = new Set(p.isr);
        } else {
          // An adding replica joins through its leader's AlterPartition once caught up, also in the
          // record that completes its reassignment and drops the old members.
          if (!keepsMember) for (const b of p.isr) check(holders.has(b) || prev.addingReplicas.includes(b), `${where}: broker ${b} entered the ISR without every committed record`);
          for (const b of p.elr) check(holders.has(b), `${where}: ELR member ${b} may lack committed records`);
          if (p.elr.length > 0 && p.isr.length === 0) this.stats.elrWaits++;
          if (!keepsMember && p.isr.length === 1 && prev.elr.includes(p.isr[0]!)) this.stats.elrElections++;
        }
      }
      if (p.leader !== NO_LEADER && p.isr.length >= effectiveMinIsr(topicMinIsr(m.image, t.name, 1), p.replicas.length)) holders = new Set(p.isr);
      else for (const b of p.isr) holders.add(b);
      m.holders.set(key, holders);
    }
  }

  private checkGrowth(image: MetadataImage, max: Map<string, number>, label: string): void {
    checkEpochGrowth(image, max, label);
  }

  private assertLeadsNothing(image: MetadataImage, brokerId: number, what: string): void {
    for (const t of image.topics.topicsById.values()) {
      for (const [id, p] of t.partitions) check(p.leader !== brokerId, `${what} (${brokerId}) still leads ${t.name}-${id}`);
    }
  }

  private note(line: string): void {
    this.trace.push(line);
    if (this.trace.length > 40) this.trace.shift();
  }
}

/** Partition registrations already compared against a given epoch map. */
const grown = new WeakMap<object, Map<string, number>>();

/**
 * Leader epochs, partition epochs and broker epochs never go down: `max` holds the highest seen so
 * far along one history of images (one controller's, or one node's committed ones).
 */
export function checkEpochGrowth(image: MetadataImage, max: Map<string, number>, label: string): void {
  const grow = (key: string, value: number): void => {
    const before = max.get(key);
    check(before === undefined || value >= before, `${label}: ${key} went from ${before} to ${value}`);
    max.set(key, value);
  };
  for (const t of image.topics.topicsById.values()) {
    for (const [id, p] of t.partitions) {
      // An unchanged registration object has unchanged epochs.
      if (grown.get(p) === max) continue;
      grown.set(p, max);
      grow(`${t.id}-${id} leader epoch`, p.leaderEpoch);
      grow(`${t.id}-${id} partition epoch`, p.partitionEpoch);
    }
  }
  for (const b of image.cluster.brokers.values()) grow(`broker ${b.id} epoch`, Number(b.epoch));
}

/** A fenced or shut-down broker leads nothing; a leader is in its ISR; the ISR is a non-empty subset of the replicas. */
const checkedWith = new WeakMap<object, object>();
export function checkImage(image: MetadataImage, label: string): void {
  for (const t of image.topics.topicsById.values()) {
    // A topic checked against this very cluster image needs no second look.
    if (checkedWith.get(t) === image.cluster) continue;
    checkedWith.set(t, image.cluster);
    for (const [id, p] of t.partitions) {
      const where = `${label}: ${t.name}-${id} (replicas ${p.replicas.join(',')}, ISR ${p.isr.join(',')}, ELR ${p.elr.join(',')}, last known ELR ${p.lastKnownElr.join(',')}, leader ${p.leader})`;
      // KIP-966: with ELR on the ISR may empty (its last members wait in the ELR); never without.
      check(p.isr.length > 0 || (image.features.elrEnabled && p.leader === NO_LEADER), `${where}: empty ISR`);
      check(new Set(p.elr).size === p.elr.length && p.elr.every((b) => p.replicas.includes(b)), `${where}: ELR with duplicates or outside the replicas`);
      check(p.elr.every((b) => !p.isr.includes(b)), `${where}: an ELR member is in the ISR`);
      const minIsr = effectiveMinIsr(topicMinIsr(image, t.name, 1), p.replicas.length);
      check(p.elr.length === 0 || p.isr.length < minIsr, `${where}: an ELR next to an ISR at min ISR ${minIsr}`);
      check(p.lastKnownElr.length <= 1, `${where}: a last known ELR of more than the last leader`);
      check(image.features.elrEnabled || (p.elr.length === 0 && p.lastKnownElr.length === 0), `${where}: ELR kept with the feature off`);
      check(new Set(p.isr).size === p.isr.length, `${where}: duplicate ISR member`);
      check(p.isr.every((b) => p.replicas.includes(b)), `${where}: ISR not within the replicas`);
      check(p.addingReplicas.every((b) => p.replicas.includes(b) && !p.removingReplicas.includes(b)), `${where}: adding ${p.addingReplicas.join(',')} not within the replicas or also removing`);
      check(p.removingReplicas.every((b) => p.replicas.includes(b)), `${where}: removing ${p.removingReplicas.join(',')} not within the replicas`);
      check(new Set(p.replicas).size === p.replicas.length, `${where}: duplicate replica`);
      if (p.leader === NO_LEADER) continue;
      check(p.isr.includes(p.leader), `${where}: leader not in the ISR`);
      const b = image.cluster.broker(p.leader);
      check(b !== undefined && !b.fenced, `${where}: leader is fenced or unregistered`);
      check(!b!.inControlledShutdown, `${where}: leader is in controlled shutdown`);
    }
  }
}

export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

const ERROR_NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name]));
export function errorName(code: number): string {
  return ERROR_NAMES.get(code) ?? String(code);
}

const bigints = (_k: string, v: unknown): unknown => (typeof v === 'bigint' ? `${v}n` : v);
const serialised = new WeakMap<object, string>();
function cached(part: object, make: () => unknown): string {
  let s = serialised.get(part);
  if (s === undefined) serialised.set(part, s = JSON.stringify(make(), bigints));
  return s;
}

/**
 * The image as text, for comparing two controllers' images: every sub-image the controller writes
 * (features, cluster, topics, configs, producer ids). Images share untouched parts between offsets,
 * so each part is serialised once per object, which keeps a check at every offset cheap.
 */
export function serialise(image: MetadataImage): string {
  const brokers = [...image.cluster.brokers.values()].map((b) => cached(b, () => b));
  const topics = [...image.topics.topicsById.values()].map((t) => cached(t, () =>
    `${t.id} ${t.name} ${[...t.partitions].map(([id, p]) => `${id}:${cached(p, () => p)}`).join(',')}`));
  return [
    cached(image.features, () => [...image.features.finalizedVersions]),
    brokers.join(','),
    topics.join('\n'),
    cached(image.configs, () => [...image.configs.resources.values()].map((r) => [r.type, r.name, [...r.entries]])),
    cached(image.producerIds, () => image.producerIds.nextProducerId),
  ].join('\n');
}

/** The full snapshot form (imageToRecords), for the occasional check that the cheap form misses nothing. */
export function serialiseAsRecords(image: MetadataImage): string {
  return JSON.stringify(imageToRecords(image), bigints);
}
