// QuorumController: the controller as a deterministic state machine over the metadata log. Every
// operation reads the current image and returns { records, response } without changing anything;
// state changes only in replay(record, offset). The active controller replays the records it
// emits as soon as they are appended (so the next operation sees them), a standby replays the
// records it learns are committed; both run the same replay, so they cannot drift. The active
// controller keeps one image per uncommitted offset and, on losing leadership, reverts to the last
// committed one. No clock, timer or randomness of its own: time arrives as `nowMs`, randomness
// from the Prng it is given.
import {
  ErrorCode,
  type AllocateProducerIdsRequest, type AllocateProducerIdsResponse, type AlterPartitionRequest, type AlterPartitionResponse, type BrokerHeartbeatRequest,
  type BrokerHeartbeatResponse, type BrokerRegistrationRequest, type BrokerRegistrationResponse,
  type CreatePartitionsRequestCreatePartitionsTopic, type CreatePartitionsResponseCreatePartitionsTopicResult,
  type CreateTopicsRequest, type CreateTopicsResponseCreatableTopicResult, type DeleteTopicsResponseDeletableTopicResult,
  type ElectLeadersRequest, type ElectLeadersResponseReplicaElectionResult,
  type AlterPartitionReassignmentsRequest, type AlterPartitionReassignmentsResponse,
  type ListPartitionReassignmentsRequest, type ListPartitionReassignmentsResponse,
  type AlterClientQuotasRequest, type AlterClientQuotasResponseEntryData,
  type CreateAclsRequestAclCreation, type CreateAclsResponseAclCreationResult, type DeleteAclsRequestDeleteAclsFilter, type DeleteAclsResponseDeleteAclsFilterResult,
  type AlterUserScramCredentialsRequest, type AlterUserScramCredentialsResponse,
  type UpdateFeaturesRequest, type UpdateFeaturesResponse,
} from '../protocol/index.js';
import {
  ELIGIBLE_LEADER_REPLICAS_VERSION_FEATURE,
  BrokerFencingChange, BrokerInControlledShutdownChange, MetadataDelta, MetadataImage, MetadataRecordType, provenance,
  type MetadataRecord,
} from '../metadata/index.js';
import { assert, type Prng } from '../util/index.js';
import { alterClientQuotas } from './client-quotas.js';
import { ClusterControlManager } from './cluster-control.js';
import { FeatureControlManager, FeatureUpgradeType } from './features.js';
import { BrokerHeartbeatManager } from './heartbeat-manager.js';
import { ProducerIdControlManager } from './producer-ids.js';
import { ReplicationControlManager } from './replication-control.js';
import { createAcls, deleteAcls } from './acls.js';
import { alterUserScramCredentials } from './scram-control.js';
import type { TopicConfigValidator, TopicDefaults } from './topics.js';
import type { ControllerResult } from './result.js';

export interface QuorumControllerOptions {
  readonly clusterId: string;
  readonly prng: Prng;
  /** `broker.session.timeout.ms`. */
  readonly sessionTimeoutMs?: number;
  /** `unclean.leader.election.enable` (static default; topic and cluster configs override it). */
  readonly uncleanLeaderElectionEnable?: boolean;
  /** `min.insync.replicas` (static default; topic and cluster configs override it): the ELR's bound (KIP-966). */
  readonly minInsyncReplicas?: number;
  readonly topicDefaults?: TopicDefaults;
  readonly validateTopicConfigs?: TopicConfigValidator;
  readonly log?: (line: string) => void;
  /** Records a new cluster's log starts with after its feature levels (SCRAM credentials of --add-scram). */
  readonly bootstrapRecords?: readonly MetadataRecord[];
  /** Start from this committed image (a loaded snapshot); empty by default. */
  readonly image?: MetadataImage;
}

export const BROKER_SESSION_TIMEOUT_MS_DEFAULT = 9000;

/** The replicated state at one offset: the image, plus what Kafka derives from record offsets. */
interface ControllerState {
  readonly offset: number;
  readonly image: MetadataImage;
  /** broker id → offset of the record that put it in controlled shutdown. */
  readonly controlledShutdownOffsets: ReadonlyMap<number, number>;
  /**
   * broker id → the last offset of the batch that fenced it (the fencing and the leaderships it
   * moved), while it stays fenced: it is unfenced only once its metadata holds that batch, so a
   * broker woken from a stall cannot be unfenced (and take writes again) while it still believes
   * in leaderships it lost.
   */
  readonly fencedOffsets: ReadonlyMap<number, number>;
}

export class QuorumController {
  private readonly prng: Prng;
  private readonly log: (line: string) => void;
  readonly heartbeats: BrokerHeartbeatManager;
  readonly features: FeatureControlManager;
  readonly cluster: ClusterControlManager;
  readonly replication: ReplicationControlManager;
  readonly producerIds = new ProducerIdControlManager();
  /** states[0] is the last committed state; later entries are replayed but not yet committed. */
  private states: ControllerState[];
  private active = false;
  /** Where the next record this controller appends will land (Kafka's OffsetControlManager). */
  private nextWriteOffsetValue = -1;

  private readonly bootstrapExtra: readonly MetadataRecord[];

  constructor(options: QuorumControllerOptions) {
    this.prng = options.prng;
    this.bootstrapExtra = options.bootstrapRecords ?? [];
    this.log = options.log ?? (() => {});
    this.heartbeats = new BrokerHeartbeatManager(options.sessionTimeoutMs ?? BROKER_SESSION_TIMEOUT_MS_DEFAULT);
    this.features = new FeatureControlManager();
    this.cluster = new ClusterControlManager(options.clusterId, this.heartbeats, this.features, this.log);
    this.replication = new ReplicationControlManager({
      uncleanLeaderElectionEnable: options.uncleanLeaderElectionEnable ?? false,
      minInsyncReplicas: options.minInsyncReplicas ?? 1,
      topicDefaults: options.topicDefaults ?? { numPartitions: 1, defaultReplicationFactor: 1, partitionsPerRequestMax: 10_000 },
      validateTopicConfigs: options.validateTopicConfigs ?? (() => null),
      log: this.log,
    });
    const image = options.image ?? MetadataImage.EMPTY;
    this.states = [{ offset: image.provenance.lastContainedOffset, image, controlledShutdownOffsets: shutdownOffsetsOf(image), fencedOffsets: fencedOffsetsOf(image) }];
  }

  // ---- state: replay, commit, revert -------------------------------------------------------

  /** The image with every replayed record, committed or not. */
  get image(): MetadataImage { return this.latest.image; }
  get committedImage(): MetadataImage { return this.states[0]!.image; }
  get lastReplayedOffset(): number { return this.latest.offset; }
  get lastCommittedOffset(): number { return this.states[0]!.offset; }
  get isActive(): boolean { return this.active; }
  get nextWriteOffset(): number { return this.nextWriteOffsetValue; }
  private get latest(): ControllerState { return this.states[this.states.length - 1]!; }

  /** The only mutator of replicated state: applies one record at its log offset. */
  replay(record: MetadataRecord, offset: number, epoch = -1): void {
    this.replayBatch([record], offset, epoch);
  }

  /**
   * Applies a batch whose records sit at consecutive offsets from `baseOffset`, keeping one state
   * for the batch (as Kafka snapshots per batch): a revert or commit then lands on batch ends,
   * which is where Raft commits an operation's records.
   */
  replayBatch(records: readonly MetadataRecord[], baseOffset: number, epoch = -1): void {
    if (records.length === 0) return;
    const prev = this.latest;
    assert(baseOffset > prev.offset, `replay at offset ${baseOffset} after ${prev.offset}`);
    const lastOffset = baseOffset + records.length - 1;
    const delta = new MetadataDelta(prev.image);
    let controlledShutdownOffsets = prev.controlledShutdownOffsets;
    let fencedOffsets = prev.fencedOffsets;
    records.forEach((record, i) => {
      delta.replay(record);
      controlledShutdownOffsets = nextShutdownOffsets(controlledShutdownOffsets, record, baseOffset + i);
      fencedOffsets = nextFencedOffsets(fencedOffsets, record, lastOffset);
    });
    const image = delta.apply(provenance(lastOffset, Math.max(epoch, prev.image.provenance.lastContainedEpoch)));
    this.states.push({ offset: lastOffset, image, controlledShutdownOffsets, fencedOffsets });
    if (this.active) this.nextWriteOffsetValue = Math.max(this.nextWriteOffsetValue, lastOffset + 1);
  }

  /** Records up to `offset` are committed: older states are no longer needed for a revert. */
  commit(offset: number): void {
    let keep = 0;
    for (let i = 0; i < this.states.length && this.states[i]!.offset <= offset; i++) keep = i;
    this.states = this.states.slice(keep);
  }

  /** Drops every state after `offset` (which must be at or after the last committed offset). */
  revertTo(offset: number): void {
    assert(offset >= this.lastCommittedOffset, `cannot revert to ${offset} before the committed offset ${this.lastCommittedOffset}`);
    while (this.states.length > 1 && this.latest.offset > offset) this.states.pop();
  }

  /**
   * This controller became the Raft leader; its appends start at `nextWriteOffset` (after the
   * leader-change record). Every registered broker gets a full session from `nowMs`.
   */
  activate(nextWriteOffset: number, nowMs: number): void {
    assert(nextWriteOffset > this.lastReplayedOffset, `activate at ${nextWriteOffset} with offset ${this.lastReplayedOffset} replayed`);
    this.active = true;
    this.nextWriteOffsetValue = nextWriteOffset;
    this.heartbeats.clear();
    for (const b of this.image.cluster.brokers.values()) this.heartbeats.touch(b.id, nowMs);
  }

  /** Leadership lost: uncommitted records may never be committed, so forget them. */
  deactivate(): void {
    this.active = false;
    this.nextWriteOffsetValue = -1;
    this.heartbeats.clear();
    this.revertTo(this.lastCommittedOffset);
  }

  // ---- operations ----------------------------------------------------------------------------

  /** The FeatureLevelRecords that open a new cluster's log (none once metadata.version is set). */
  bootstrap(): ControllerResult<void> {
    this.assertActive();
    const features = this.features.bootstrapRecords(this.image);
    return { records: features.length === 0 ? features : [...features, ...this.bootstrapExtra], response: undefined };
  }

  registerBroker(request: BrokerRegistrationRequest, nowMs: number): ControllerResult<BrokerRegistrationResponse> {
    this.assertActive();
    // The epoch is the offset of the RegisterBrokerRecord, which is the first record appended.
    const outcome = this.cluster.registerBroker(this.image, request, BigInt(this.nextWriteOffsetValue), nowMs);
    if (!outcome.ok) {
      this.log(`broker ${request.brokerId} registration refused: ${outcome.message}`);
      return { records: [], response: { throttleTimeMs: 0, errorCode: outcome.errorCode, brokerEpoch: -1n } };
    }
    const change = new Chain(this.image).add([outcome.record]);
    // A registration that replaces a live one fences it: its leaderships move before anyone
    // relies on them.
    if (outcome.previous !== undefined) change.add(this.replication.handleBrokerLeaving(change.image, request.brokerId));
    // KIP-966 (Kafka's clean shutdown detection, KIP-841's previousBrokerEpoch): a broker whose last
    // shutdown did not record its registration's epoch may have lost unflushed records.
    if (outcome.previous !== undefined && request.previousBrokerEpoch !== outcome.previous.epoch && change.image.features.elrEnabled) {
      const out = this.replication.handleBrokerUncleanShutdown(change.image, request.brokerId);
      if (out.length > 0) this.log(`broker ${request.brokerId} registers after an unclean shutdown (previous broker epoch ${request.previousBrokerEpoch}, last registration ${outcome.previous.epoch}): it leaves the eligible leader replicas of ${out.length} partition(s)`);
      change.add(out);
    }
    return { records: change.records, response: { throttleTimeMs: 0, errorCode: ErrorCode.NONE, brokerEpoch: outcome.brokerEpoch } };
  }

  processBrokerHeartbeat(request: BrokerHeartbeatRequest, nowMs: number): ControllerResult<BrokerHeartbeatResponse> {
    this.assertActive();
    const image = this.image;
    const stale = this.cluster.checkBrokerEpoch(image, request.brokerId, request.brokerEpoch);
    if (stale !== null) {
      return { records: [], response: { throttleTimeMs: 0, errorCode: stale, isCaughtUp: false, isFenced: true, shouldShutDown: false } };
    }
    const b = image.cluster.broker(request.brokerId)!;
    this.heartbeats.touch(b.id, nowMs, Number(request.currentMetadataOffset));
    const isCaughtUp = Number(request.currentMetadataOffset) >= Number(b.epoch);
    const transition = this.cluster.heartbeatTransition(b, request, () => this.replication.leadsAnything(image, b.id),
      this.latest.controlledShutdownOffsets.get(b.id), this.latest.fencedOffsets.get(b.id));
    const change = new Chain(image);
    if (transition.kind !== 'none') change.add([this.cluster.registrationChange(b, transition.kind)]);
    if (transition.kind === 'unfence') change.add(this.replication.handleBrokerUnfenced(change.image));
    else if (transition.kind !== 'none') change.add(this.replication.handleBrokerLeaving(change.image, b.id));
    const after = change.image.cluster.broker(b.id)!;
    const shouldShutDown = request.wantShutDown && (transition.kind === 'shutdown-now' || b.fenced);
    if (transition.kind !== 'none') this.log(`broker ${b.id} (epoch ${b.epoch}): ${transition.kind}`);
    return {
      records: change.records,
      response: { throttleTimeMs: 0, errorCode: ErrorCode.NONE, isCaughtUp, isFenced: after.fenced, shouldShutDown },
    };
  }

  /**
   * The driver holds this heartbeat's answer until what it read is committed, then calls
   * heartbeatAnswered: meanwhile the broker is not silent (BrokerHeartbeatManager.answerPending).
   * Only the registered incarnation's heartbeats count.
   */
  heartbeatAwaitingAnswer(request: BrokerHeartbeatRequest): void {
    if (this.image.cluster.broker(request.brokerId)?.epoch === request.brokerEpoch) this.heartbeats.answerPending(request.brokerId);
  }

  heartbeatAnswered(request: BrokerHeartbeatRequest, nowMs: number): void {
    if (this.image.cluster.broker(request.brokerId)?.epoch === request.brokerEpoch) this.heartbeats.answered(request.brokerId, nowMs);
  }

  /**
   * Fences every unfenced broker whose session has expired at `nowMs`, moving its leaderships.
   * The driver calls it periodically (Kafka schedules the same check).
   */
  maybeFenceStaleBrokers(nowMs: number): ControllerResult<number[]> {
    this.assertActive();
    const live = [...this.image.cluster.brokers.values()].filter((b) => !b.fenced).map((b) => b.id);
    const stale = this.heartbeats.expired(live, nowMs);
    const change = new Chain(this.image);
    for (const id of stale) {
      const b = change.image.cluster.broker(id)!;
      this.log(`broker ${id} (epoch ${b.epoch}): fenced, no heartbeat for ${this.heartbeats.sessionTimeoutMs} ms`);
      change.add([this.cluster.registrationChange(b, 'fence')]);
      change.add(this.replication.handleBrokerLeaving(change.image, id));
    }
    return { records: change.records, response: stale };
  }

  allocateProducerIds(request: AllocateProducerIdsRequest): ControllerResult<AllocateProducerIdsResponse> {
    this.assertActive();
    return this.producerIds.generateNextProducerIds(this.image, request);
  }

  createAcls(creations: readonly CreateAclsRequestAclCreation[]): ControllerResult<CreateAclsResponseAclCreationResult[]> {
    this.assertActive();
    return createAcls(this.image, creations, this.prng);
  }

  deleteAcls(filters: readonly DeleteAclsRequestDeleteAclsFilter[]): ControllerResult<DeleteAclsResponseDeleteAclsFilterResult[]> {
    this.assertActive();
    return deleteAcls(this.image, filters);
  }

  createTopics(request: CreateTopicsRequest): ControllerResult<CreateTopicsResponseCreatableTopicResult[]> {
    this.assertActive();
    return this.replication.createTopics(this.image, request, this.prng);
  }

  deleteTopics(targets: { name: string | null; topicId: string }[]): ControllerResult<DeleteTopicsResponseDeletableTopicResult[]> {
    this.assertActive();
    return this.replication.deleteTopics(this.image, targets);
  }

  createPartitions(topics: CreatePartitionsRequestCreatePartitionsTopic[], validateOnly: boolean):
    ControllerResult<CreatePartitionsResponseCreatePartitionsTopicResult[]> {
    this.assertActive();
    return this.replication.createPartitions(this.image, topics, validateOnly, this.prng);
  }

  /** AlterUserScramCredentials (key 51): SCRAM credential records (scram-control.ts). */
  alterUserScramCredentials(request: AlterUserScramCredentialsRequest): ControllerResult<AlterUserScramCredentialsResponse> {
    this.assertActive();
    return alterUserScramCredentials(this.image, request);
  }

  /** ElectLeaders (key 43), preferred or unclean. */
  electLeaders(request: ElectLeadersRequest): ControllerResult<ElectLeadersResponseReplicaElectionResult[]> {
    this.assertActive();
    return this.replication.electLeaders(this.image, request);
  }

  /**
   * AlterPartition (key 56): a leader's ISR change. A sender whose broker epoch is not its
   * registration's (a previous incarnation) is refused as a whole with STALE_BROKER_EPOCH.
   */
  alterPartition(request: AlterPartitionRequest, version: number): ControllerResult<AlterPartitionResponse> {
    this.assertActive();
    const stale = this.cluster.checkBrokerEpoch(this.image, request.brokerId, request.brokerEpoch);
    if (stale !== null) return { records: [], response: { throttleTimeMs: 0, errorCode: stale, topics: [] } };
    const out = this.replication.alterPartition(this.image, request, version);
    return { records: out.records, response: { throttleTimeMs: 0, errorCode: ErrorCode.NONE, topics: out.response } };
  }

  /** AlterPartitionReassignments (key 45): start, replace or cancel reassignments. */
  alterPartitionReassignments(request: AlterPartitionReassignmentsRequest): ControllerResult<AlterPartitionReassignmentsResponse> {
    this.assertActive();
    const out = this.replication.alterPartitionReassignments(this.image, request);
    return { records: out.records, response: { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, responses: out.response } };
  }

  /** ListPartitionReassignments (key 46): the reassignments in progress; writes nothing. */
  listPartitionReassignments(request: ListPartitionReassignmentsRequest): ControllerResult<ListPartitionReassignmentsResponse> {
    this.assertActive();
    const topics = this.replication.listPartitionReassignments(this.image, request);
    return { records: [], response: { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, topics } };
  }

  /** AlterClientQuotas (key 49): ClientQuotaRecords for the valid entries that change something. */
  alterClientQuotas(request: AlterClientQuotasRequest): ControllerResult<AlterClientQuotasResponseEntryData[]> {
    this.assertActive();
    return alterClientQuotas(this.image, request.entries, request.validateOnly);
  }

  /**
   * UpdateFeatures (key 57): all updates or none (Kafka answers every feature with the first
   * refusal's error). Turning eligible.leader.replicas.version down to 0 also clears every
   * partition's ELR and last known ELR, as Kafka does, since nothing keeps them true any more.
   * `version` 0 reads allowDowngrade, later ones upgradeType.
   */
  updateFeatures(request: UpdateFeaturesRequest, version: number): ControllerResult<UpdateFeaturesResponse> {
    this.assertActive();
    const records: MetadataRecord[] = [];
    let refusal: { errorCode: number; message: string } | null = null;
    for (const u of request.featureUpdates) {
      const upgradeType = version === 0 ? (u.allowDowngrade ? FeatureUpgradeType.SAFE_DOWNGRADE : FeatureUpgradeType.UPGRADE) : u.upgradeType;
      const out = this.features.updateFeature(this.image, { feature: u.feature, level: u.maxVersionLevel, upgradeType });
      if ('errorCode' in out) { refusal ??= out; continue; }
      records.push(out.record);
      if (u.feature === ELIGIBLE_LEADER_REPLICAS_VERSION_FEATURE && u.maxVersionLevel === 0) records.push(...this.replication.clearElr(this.image, null));
    }
    const results = request.featureUpdates.map((u) => ({ feature: u.feature, errorCode: refusal?.errorCode ?? ErrorCode.NONE, errorMessage: refusal?.message ?? null }));
    const response = { throttleTimeMs: 0, errorCode: refusal?.errorCode ?? ErrorCode.NONE, errorMessage: refusal?.message ?? null, results };
    if (refusal !== null) this.log(`UpdateFeatures refused: ${refusal.message}`);
    return { records: refusal !== null || request.validateOnly ? [] : records, response };
  }

  /**
   * The records that go with a config change's ConfigRecords (IncrementalAlterConfigs is planned by
   * the node): a new min.insync.replicas clears the ELRs it was computed for (KIP-966, as Kafka).
   */
  recordsForConfigChanges(records: readonly MetadataRecord[]): MetadataRecord[] {
    return this.replication.elrUpdatesForConfigChanges(this.image, records);
  }

  /** One pass of `auto.leader.rebalance.enable`: leadership back to preferred replicas. */
  maybeBalancePartitionLeaders(): ControllerResult<number> {
    this.assertActive();
    const records = this.replication.balancePartitionLeaders(this.image);
    return { records, response: records.length };
  }

  private assertActive(): void {
    assert(this.active, 'controller operation on a standby controller');
  }
}

/**
 * Records of one operation, with the image they lead to, so each step of an operation sees the
 * previous steps (fencing two brokers at once must not elect the second as the first's successor).
 */
class Chain {
  readonly records: MetadataRecord[] = [];
  constructor(public image: MetadataImage) {}

  add(records: readonly MetadataRecord[]): this {
    if (records.length === 0) return this;
    const delta = new MetadataDelta(this.image);
    for (const r of records) delta.replay(r);
    this.image = delta.apply(this.image.provenance);
    this.records.push(...records);
    return this;
  }
}

/** Kafka keeps the offset at which a broker entered controlled shutdown; a new registration clears it. */
function nextShutdownOffsets(current: ReadonlyMap<number, number>, record: MetadataRecord, offset: number): ReadonlyMap<number, number> {
  if (record.type === MetadataRecordType.BrokerRegistrationChangeRecord
    && record.data.inControlledShutdown === BrokerInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN) {
    return new Map(current).set(record.data.brokerId, offset);
  }
  if (record.type === MetadataRecordType.RegisterBrokerRecord) {
    const next = new Map(current);
    if (record.data.inControlledShutdown) next.set(record.data.brokerId, offset);
    else next.delete(record.data.brokerId);
    return next;
  }
  return current;
}

/** A fencing record maps its broker to the end of its batch; an unfencing or a new registration removes it. */
function nextFencedOffsets(current: ReadonlyMap<number, number>, record: MetadataRecord, batchLastOffset: number): ReadonlyMap<number, number> {
  const fence = (id: number) => new Map(current).set(id, batchLastOffset);
  const clear = (id: number) => { if (!current.has(id)) return current; const next = new Map(current); next.delete(id); return next; };
  if (record.type === MetadataRecordType.FenceBrokerRecord) return fence(record.data.id);
  if (record.type === MetadataRecordType.UnfenceBrokerRecord) return clear(record.data.id);
  if (record.type === MetadataRecordType.RegisterBrokerRecord) return clear(record.data.brokerId);
  if (record.type === MetadataRecordType.UnregisterBrokerRecord) return clear(record.data.brokerId);
  if (record.type === MetadataRecordType.BrokerRegistrationChangeRecord) {
    if (record.data.fenced === BrokerFencingChange.FENCE) return fence(record.data.brokerId);
    if (record.data.fenced === BrokerFencingChange.UNFENCE) return clear(record.data.brokerId);
  }
  return current;
}

/** From a snapshot: every fenced broker must have caught up with the snapshot (its fencing is in it). */
function fencedOffsetsOf(image: MetadataImage): Map<number, number> {
  const out = new Map<number, number>();
  for (const b of image.cluster.brokers.values()) {
    if (b.fenced) out.set(b.id, image.provenance.lastContainedOffset);
  }
  return out;
}

function shutdownOffsetsOf(image: MetadataImage): Map<number, number> {
  const out = new Map<number, number>();
  for (const b of image.cluster.brokers.values()) {
    if (b.inControlledShutdown) out.set(b.id, image.provenance.lastContainedOffset);
  }
  return out;
}
