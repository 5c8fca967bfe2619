// The controller driver: the only async code around the deterministic QuorumController, hosted in
// the process whose Raft voter leads the metadata quorum (src/controller/README.md, "Replay,
// commit, revert"). When this node becomes the Raft leader and has applied its log up to its
// LeaderChange entry, a QuorumController is built on that committed image, activated and
// bootstrapped. Each operation runs against the latest (replayed, maybe uncommitted) state: its
// records are replayed at once, so the next operation sees them, proposed as one batch, and the
// response goes out once that batch is committed (and so in this node's image). An operation that
// wrote nothing answers once everything it read is committed. Leadership lost: the controller is
// dropped (Kafka's deactivate reverts to the committed state; a new one is built on the next
// activation, from the image every node replays) and pending operations answer NOT_CONTROLLER.
// Stale brokers are fenced on a timer, their silence counted from the answer to their last heartbeat
// and not while this process itself stood still; with auto.leader.rebalance.enable, leadership goes back to
// preferred replicas every leader.imbalance.check.interval.seconds (Kafka's KRaft controller does
// not read leader.imbalance.per.broker.percentage: any imbalanced partition is balanced).
import {
  ErrorCode, ZERO_UUID,
  type AlterClientQuotasRequest, type AlterClientQuotasResponseEntryData, type UpdateFeaturesRequest, type UpdateFeaturesResponse,
  type AllocateProducerIdsRequest, type AllocateProducerIdsResponse, type AlterPartitionRequest, type AlterPartitionResponse,
  type BrokerHeartbeatRequest, type BrokerHeartbeatResponse,
  type BrokerRegistrationRequest, type BrokerRegistrationResponse, type CreatePartitionsRequestCreatePartitionsTopic,
  type CreatePartitionsResponseCreatePartitionsTopicResult, type CreateTopicsRequest, type CreateTopicsResponseCreatableTopicResult,
  type DeleteTopicsResponseDeletableTopicResult, type ElectLeadersRequest, type ElectLeadersResponseReplicaElectionResult,
  type AlterPartitionReassignmentsRequest, type AlterPartitionReassignmentsResponse, type ListPartitionReassignmentsRequest, type ListPartitionReassignmentsResponse,
  type CreateAclsRequestAclCreation, type CreateAclsResponseAclCreationResult, type DeleteAclsRequestDeleteAclsFilter, type DeleteAclsResponseDeleteAclsFilterResult,
  type AlterUserScramCredentialsRequest, type AlterUserScramCredentialsResponse,
} from '../protocol/index.js';
import {
  BALANCE_ELECTIONS_MAX, ControllerSeat, QuorumController, toMetadataRecords, type Activation, type ControllerResult,
  type TopicConfigValidator, type TopicDefaults,
} from '../controller/index.js';
import type { MetadataImage, MetadataRecord } from '../metadata/index.js';
import type { Clock, Prng, Logger } from '../util/index.js';
import { NotControllerError, planConfigChange, type ConfigChange, type ControllerChannel, type ResourceResult } from '../broker/index.js';
import type { LogMetadata } from './metadata-log.js';
import type { Scheduler } from '../replication/index.js';

export interface ControllerServiceOptions {
  readonly clusterId: string;
  /** Records a new cluster's log starts with after its feature levels (--add-scram). */
  readonly bootstrapRecords?: readonly MetadataRecord[];
  /** This node's id: a registration of this id cannot belong to a live other process (see activate). */
  readonly nodeId: number;
  readonly clock: Clock;
  readonly prng: Prng;
  /** broker.session.timeout.ms */
  readonly sessionTimeoutMs: number;
  readonly uncleanLeaderElectionEnable: boolean;
  /** The static min.insync.replicas (KIP-966's ELR is bounded by it). */
  readonly minInsyncReplicas?: number;
  readonly topicDefaults: TopicDefaults;
  readonly validateTopicConfigs: TopicConfigValidator;
  /** A group's overrides against this controller's bounds (Kafka's GroupConfig.validate); absent: only each key's own rule. */
  readonly validateGroupConfigs?: (configs: ReadonlyMap<string, string>) => { key: string; message: string } | null;
  readonly logger: Logger;
  /** auto.leader.rebalance.enable (default true). */
  readonly autoLeaderRebalanceEnable?: boolean;
  /** leader.imbalance.check.interval.seconds, in ms (default 300 s). */
  readonly leaderImbalanceCheckIntervalMs?: number;
  /** Runs the session check and the leader-balancing pass after their intervals (default: an unref'd setTimeout); tests drive them by hand. */
  readonly scheduler?: Scheduler;
}

/** Kafka's delay before the next pass when one pass could not elect every preferred leader. */
const BALANCE_AGAIN_MS = 10;

const unrefScheduler: Scheduler = {
  schedule(delayMs, fn) {
    const t = setTimeout(fn, delayMs);
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

/** The seat's activation plus what only this driver keeps for it. */
interface Active {
  readonly activation: Activation;
  readonly controller: QuorumController;
  readonly epoch: number;
  /** Operations waiting for an offset to commit (operations that wrote nothing). */
  readonly waiters: { offset: number; resolve: () => void; reject: (e: Error) => void }[];
  /** The next leader-balancing pass, while one is scheduled. */
  balance: { cancel(): void } | null;
}

export class ControllerService implements ControllerChannel {
  /** When this node's controller is active (the decision is the seat's, shared with the simulation). */
  private readonly seat: ControllerSeat;
  private active: Active | null = null;
  private tickTimer: { cancel(): void } | null = null;
  private closed = false;
  /** The incarnation id of the broker in this process, if there is one. */
  localIncarnationId: string | null = null;

  constructor(private readonly md: LogMetadata, private readonly o: ControllerServiceOptions) {
    this.seat = new ControllerSeat((image) => this.makeController(image));
  }

  /** Starts following the quorum: activates now if this node leads, and checks leadership and sessions on a timer. */
  start(): void {
    this.md.onChange(() => this.onApplied());
    this.scheduleTick(this.o.clock.nowMs());
    this.checkLeadership();
  }

  close(): void {
    this.closed = true;
    this.tickTimer?.cancel();
    this.tickTimer = null;
    this.resign('controller closed');
  }

  get isActive(): boolean { return this.checkLeadership() !== null; }

  /** The active controller's state machine (tests and tools). */
  get controller(): QuorumController | null { return this.active?.controller ?? null; }

  /**
   * Per broker with a session here, whether it has heartbeated within broker.session.timeout.ms;
   * null when this node is not the active controller (a standby keeps no sessions).
   */
  brokerSessionsAlive(brokerIds: Iterable<number>): Map<number, boolean> | null {
    const c = this.checkLeadership()?.controller;
    if (c === undefined) return null;
    const nowMs = this.o.clock.nowMs();
    const out = new Map<number, boolean>();
    for (const id of brokerIds) out.set(id, c.heartbeats.hasValidSession(id, nowMs));
    return out;
  }

  // ---- ControllerChannel ---------------------------------------------------------------------

  createTopics(request: CreateTopicsRequest): Promise<CreateTopicsResponseCreatableTopicResult[]> {
    return this.run((c) => c.createTopics(request)).catch(notController(() => request.topics.map((t) => ({
      name: t.name, topicId: ZERO_UUID, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: 'This is not the active controller.', topicConfigErrorCode: 0,
      numPartitions: -1, replicationFactor: -1, configs: null,
    }))));
  }

  deleteTopics(targets: { name: string | null; topicId: string }[]): Promise<DeleteTopicsResponseDeletableTopicResult[]> {
    return this.run((c) => c.deleteTopics(targets)).catch(notController(() => targets.map((t) => ({
      name: t.name, topicId: t.topicId, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: 'This is not the active controller.',
    }))));
  }

  createPartitions(topics: CreatePartitionsRequestCreatePartitionsTopic[], validateOnly: boolean): Promise<CreatePartitionsResponseCreatePartitionsTopicResult[]> {
    return this.run((c) => c.createPartitions(topics, validateOnly)).catch(notController(() => topics.map((t) => ({
      name: t.name, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: 'This is not the active controller.',
    }))));
  }

  electLeaders(request: ElectLeadersRequest): Promise<{ errorCode: number; results: ElectLeadersResponseReplicaElectionResult[] }> {
    return this.run((c) => c.electLeaders(request)).then((results) => ({ errorCode: ErrorCode.NONE, results }),
      notController(() => ({ errorCode: ErrorCode.NOT_CONTROLLER, results: [] })));
  }

  alterPartitionReassignments(request: AlterPartitionReassignmentsRequest): Promise<AlterPartitionReassignmentsResponse> {
    return this.run((c) => c.alterPartitionReassignments(request)).catch(notController(() => ({
      throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: 'This is not the active controller.', responses: [],
    })));
  }

  listPartitionReassignments(request: ListPartitionReassignmentsRequest): Promise<ListPartitionReassignmentsResponse> {
    return this.run((c) => c.listPartitionReassignments(request)).catch(notController(() => ({
      throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: 'This is not the active controller.', topics: [],
    })));
  }

  alterConfigs(change: ConfigChange): Promise<ResourceResult> {
    return this.run((c) => {
      const image = c.image;
      const out = planConfigChange({
        topicExists: (name) => image.topics.getTopic(name) !== undefined, configs: (t, n) => image.configs.configs(t, n),
        validateTopic: (configs, current) => this.o.validateTopicConfigs(configs, current),
        validateGroup: (configs) => this.o.validateGroupConfigs?.(configs) ?? null,
      }, change);
      const records = toMetadataRecords(out.records);
      return { records: [...records, ...c.recordsForConfigChanges(records)], response: out.response };
    }).catch(notController(() => ({ errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: 'This is not the active controller.' })));
  }

  updateFeatures(request: UpdateFeaturesRequest): Promise<UpdateFeaturesResponse> {
    return this.run((c) => c.updateFeatures(request, 1)).catch(notController(() => ({
      throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: 'This is not the active controller.',
      results: request.featureUpdates.map((u) => ({ feature: u.feature, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: 'This is not the active controller.' })),
    })));
  }

  alterClientQuotas(request: AlterClientQuotasRequest): Promise<AlterClientQuotasResponseEntryData[]> {
    return this.run((c) => c.alterClientQuotas(request)).catch(notController(() => request.entries.map((e) => ({
      errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: 'This is not the active controller.', entity: e.entity.map((x) => ({ ...x })),
    }))));
  }

  createAcls(creations: CreateAclsRequestAclCreation[]): Promise<CreateAclsResponseAclCreationResult[]> {
    return this.run((c) => c.createAcls(creations))
      .catch(notController(() => creations.map(() => ({ errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: 'This is not the active controller.' }))));
  }

  deleteAcls(filters: DeleteAclsRequestDeleteAclsFilter[]): Promise<DeleteAclsResponseDeleteAclsFilterResult[]> {
    return this.run((c) => c.deleteAcls(filters))
      .catch(notController(() => filters.map(() => ({ errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: 'This is not the active controller.', matchingAcls: [] }))));
  }

  alterUserScramCredentials(request: AlterUserScramCredentialsRequest): Promise<AlterUserScramCredentialsResponse> {
    return this.run((c) => c.alterUserScramCredentials(request)).catch(notController(() => scramNotController(request, 'This is not the active controller.')));
  }

  allocateProducerIds(request: AllocateProducerIdsRequest): Promise<AllocateProducerIdsResponse> {
    return this.run((c) => c.allocateProducerIds(request))
      .catch(notController(() => ({ throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, producerIdStart: -1n, producerIdLen: 0 })));
  }

  registerBroker(request: BrokerRegistrationRequest): Promise<BrokerRegistrationResponse> {
    return this.run((c) => c.registerBroker(request, this.o.clock.nowMs()))
      .catch(notController(() => ({ throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, brokerEpoch: -1n })));
  }

  brokerHeartbeat(request: BrokerHeartbeatRequest): Promise<BrokerHeartbeatResponse> {
    let answerPendingOn: QuorumController | null = null;
    const notActive = (): BrokerHeartbeatResponse => ({ throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, isCaughtUp: false, isFenced: true, shouldShutDown: false });
    return this.run((c) => {
      const out = c.processBrokerHeartbeat(request, this.o.clock.nowMs());
      c.heartbeatAwaitingAnswer(request);
      answerPendingOn = c;
      return out;
    }).then((r) => {
      // An unfenced answer renews the broker's lease (src/node/lifecycle.ts): only a controller
      // that a majority of the quorum followed a moment ago may give it. One woken from a stall
      // may have been replaced, and the broker fenced, while it stood still.
      if (r.errorCode === ErrorCode.NONE && !r.isFenced && !this.md.hasFreshQuorumContact()) return notActive();
      return r;
    }).finally(() => (answerPendingOn as QuorumController | null)?.heartbeatAnswered(request, this.o.clock.nowMs())).catch(notController(notActive));
  }

  alterPartition(request: AlterPartitionRequest, version = 3): Promise<AlterPartitionResponse> {
    return this.run((c) => c.alterPartition(request, version))
      .catch(notController(() => ({ throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, topics: [] })));
  }

  // ---- driving the state machine ---------------------------------------------------------------

  /**
   * Runs one operation against the latest state and answers once what it wrote (or read) is
   * committed. The operation, its replay and its proposal happen in one turn, so operations are
   * serialized without a queue, and each sees every earlier one.
   */
  private run<T>(op: (c: QuorumController) => ControllerResult<T>): Promise<T> {
    const a = this.checkLeadership();
    if (a === null) return Promise.reject(new NotControllerError('not the active controller'));
    const c = a.controller;
    let out: ControllerResult<T>;
    try {
      out = op(c);
    } catch (e) {
      // A bug in the state machine: this request fails (its connection is closed), not the caller's loop.
      return Promise.reject(e);
    }
    if (out.records.length === 0) return this.committed(a, c.lastReplayedOffset).then(() => out.response);
    return this.write(a, out.records).then(() => out.response);
  }

  /** Replays `records` at the next write offset and proposes them as one batch; resolves once committed. */
  private async write(a: Active, records: readonly MetadataRecord[]): Promise<void> {
    const baseOffset = this.seat.stage(a.activation, records);
    let got: { baseOffset: number; epoch: number };
    try {
      got = await this.md.propose(records);
    } catch (e) {
      // Not leader any more, the proposal lost to another leader, or a timeout: the replayed state
      // may not be the log's. Start over from the committed image (the next activation).
      if (this.active === a) this.resign(`a proposal failed: ${(e as Error).message}`);
      throw new NotControllerError((e as Error).message);
    }
    if (!this.seat.landed(a.activation, baseOffset, got)) {
      // Something else appended between our replay and our append: our state is not the log's.
      this.o.logger.error(`batch replayed at ${baseOffset} (epoch ${a.epoch}) was written at ${got.baseOffset} (epoch ${got.epoch}); resigning`);
      if (this.active === a) this.resigned('write offset mismatch');
      throw new NotControllerError('write offset mismatch');
    }
  }

  /** Resolves once the image holds `offset` (the metadata loader applies what Raft commits). */
  private committed(a: Active, offset: number): Promise<void> {
    if (this.md.image.provenance.lastContainedOffset >= offset) return Promise.resolve();
    return new Promise((resolve, reject) => a.waiters.push({ offset, resolve, reject }));
  }

  /** Committed records were applied to the image: the controller may forget older states. */
  private onApplied(): void {
    const a = this.checkLeadership();
    if (a === null) return;
    const offset = this.md.image.provenance.lastContainedOffset;
    this.seat.committed(offset);
    for (let i = a.waiters.length - 1; i >= 0; i--) {
      const w = a.waiters[i]!;
      if (w.offset <= offset) { a.waiters.splice(i, 1); w.resolve(); }
    }
  }

  /**
   * Checks leadership and sessions every quarter session (at most 1 s; Kafka checks on a schedule
   * too), which fences a silent broker within ~1.25 session timeouts.
   */
  private scheduleTick(scheduledAtMs: number): void {
    if (this.closed) return;
    const intervalMs = Math.max(10, Math.min(1000, Math.floor(this.o.sessionTimeoutMs / 4)));
    this.tickTimer = (this.o.scheduler ?? unrefScheduler).schedule(intervalMs, () => {
      const nowMs = this.o.clock.nowMs();
      this.tick(nowMs, nowMs - scheduledAtMs - intervalMs);
      this.scheduleTick(nowMs);
    });
  }

  /** `lateMs`: how much later than due this check runs, time in which this process did not run. */
  private tick(nowMs: number, lateMs: number): void {
    const a = this.checkLeadership();
    if (a === null) return;
    a.controller.heartbeats.discountStall(lateMs, nowMs);
    const out = a.controller.maybeFenceStaleBrokers(nowMs);
    if (out.records.length > 0) this.write(a, out.records).catch(() => { /* resigned; the next controller checks again */ });
  }

  /** Schedules the next leader-balancing pass of this activation (auto.leader.rebalance.enable). */
  private scheduleBalance(a: Active, delayMs: number): void {
    if (this.o.autoLeaderRebalanceEnable === false) return;
    a.balance = (this.o.scheduler ?? unrefScheduler).schedule(delayMs, () => {
      a.balance = null;
      if (this.checkLeadership() !== a) return;
      const out = a.controller.maybeBalancePartitionLeaders();
      if (out.response > 0) this.o.logger.info(`leader balancing moves ${out.response} leadership(s) back to preferred replicas`);
      // A pass capped at BALANCE_ELECTIONS_MAX may have left some: Kafka runs the next one right away.
      const next = out.response >= BALANCE_ELECTIONS_MAX ? BALANCE_AGAIN_MS : this.o.leaderImbalanceCheckIntervalMs ?? 300_000;
      if (out.records.length > 0) this.write(a, out.records).catch(() => { /* resigned; the next controller balances */ });
      if (this.active === a) this.scheduleBalance(a, next);
    });
  }

  /**
   * The active state when this node leads the current epoch; activates (once its log up to its
   * LeaderChange entry is applied) or resigns as the quorum says.
   */
  private checkLeadership(): Active | null {
    if (this.closed) return null;
    const l = this.md.leadership();
    const change = this.seat.check(l, this.md.image, this.o.clock.nowMs());
    if (change.resigned !== null) this.resigned(`leadership lost (epoch ${l.epoch}, leader ${l.leaderId ?? 'unknown'})`);
    if (change.activated) this.activated(change.active!, change.bootstrap);
    return this.active;
  }

  private makeController(image: MetadataImage): QuorumController {
    return new QuorumController({
      clusterId: this.o.clusterId, prng: this.o.prng, sessionTimeoutMs: this.o.sessionTimeoutMs,
      uncleanLeaderElectionEnable: this.o.uncleanLeaderElectionEnable, topicDefaults: this.o.topicDefaults,
      ...(this.o.minInsyncReplicas !== undefined ? { minInsyncReplicas: this.o.minInsyncReplicas } : {}),
      validateTopicConfigs: this.o.validateTopicConfigs, log: (line) => this.o.logger.info(`${line}`), image,
      ...(this.o.bootstrapRecords ? { bootstrapRecords: this.o.bootstrapRecords } : {}),
    });
  }

  private activated(activation: Activation, bootstrap: readonly MetadataRecord[]): void {
    const c = activation.controller;
    // Every registered broker gets a full session, except a registration of this node's id by
    // another incarnation than this process's broker: this process holds the node's data
    // directory, so that one is gone (killed), and the restarted broker must not wait a whole
    // session to register again. This process's own registration (a failover) keeps its session.
    const own = c.image.cluster.broker(this.o.nodeId);
    if (own !== undefined && own.incarnationId !== this.localIncarnationId) c.heartbeats.remove(this.o.nodeId);
    const a: Active = { activation, controller: c, epoch: activation.epoch, waiters: [], balance: null };
    this.active = a;
    this.scheduleBalance(a, this.o.leaderImbalanceCheckIntervalMs ?? 300_000);
    this.o.logger.info(`active in epoch ${a.epoch}, writing from offset ${c.nextWriteOffset}`);
    if (bootstrap.length > 0) this.write(a, bootstrap).catch((e) => this.o.logger.error(`bootstrap failed: ${(e as Error).message}`));
  }

  private resign(why: string): void {
    this.seat.resign();
    this.resigned(why);
  }

  /** The seat ended the activation: stop its timers and fail what waits on it. */
  private resigned(why: string): void {
    const a = this.active;
    if (a === null) return;
    this.active = null;
    a.balance?.cancel();
    a.balance = null;
    this.o.logger.info(`inactive (${why})`);
    for (const w of a.waiters.splice(0)) w.reject(new NotControllerError(why));
  }
}

/** Maps a NotControllerError to the operation's NOT_CONTROLLER response; anything else is a bug and propagates. */
function notController<T>(answer: () => T): (e: unknown) => T {
  return (e) => {
    if (e instanceof NotControllerError) return answer();
    throw e;
  };
}

/** Every user of an AlterUserScramCredentials request answered NOT_CONTROLLER. */
export function scramNotController(request: AlterUserScramCredentialsRequest, errorMessage: string, errorCode: number = ErrorCode.NOT_CONTROLLER): AlterUserScramCredentialsResponse {
  const users = [...new Set([...request.deletions.map((d) => d.name), ...request.upsertions.map((u) => u.name)])];
  return { throttleTimeMs: 0, results: users.map((user) => ({ user, errorCode, errorMessage })) };
}
