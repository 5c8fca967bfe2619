// ReplicationControlManager: topics, partitions, ISR and leaders. It reads the metadata image and
// emits records: leader elections and ISR shrinks when a broker is fenced, shuts down or returns
// (all through PartitionChangeBuilder), and topic creation, deletion and partition growth (the
// request rules live in topics.ts, shared with the broker's inline path until it is wired here).
import {
  metadataRecord, metadataRecordName, mergePartitionChange, ConfigResourceType, MetadataRecordType, LeaderRecoveryState, NO_LEADER, NO_LEADER_CHANGE, NO_LEADER_RECOVERY_CHANGE,
  type MetadataImage, type MetadataRecord, type MetadataRecordName, type PartitionRegistration,
} from '../metadata/index.js';
import {
  ErrorCode, ZERO_UUID,
  type AlterPartitionRequest, type AlterPartitionRequestPartitionData, type AlterPartitionResponseTopicData,
  type ElectLeadersRequest, type ElectLeadersResponseReplicaElectionResult,
  type AlterPartitionReassignmentsRequest, type AlterPartitionReassignmentsResponseReassignableTopicResponse,
  type ListPartitionReassignmentsRequest, type ListPartitionReassignmentsResponseOngoingTopicReassignment,
} from '../protocol/index.js';
import type {
  CreateTopicsRequest, CreateTopicsResponseCreatableTopicResult, CreatePartitionsRequestCreatePartitionsTopic,
  CreatePartitionsResponseCreatePartitionsTopicResult, DeleteTopicsResponseDeletableTopicResult,
} from '../protocol/index.js';
import type { Prng } from '../util/index.js';
import { MIN_INSYNC_REPLICAS, topicMinIsr } from './min-isr.js';
import { PartitionChangeBuilder, type Election, type PartitionChangeRecordOut } from './partition-change.js';
import { isReassigning, reassignmentReplicas, reassignmentRevert } from './reassignment.js';
import type { PlacementBroker } from './placement.js';
import {
  createPartitions, createTopics, deleteTopics,
  type ControllerView, type EmittedRecord, type TopicConfigValidator, type TopicDefaults,
} from './topics.js';

export const UNCLEAN_LEADER_ELECTION_ENABLE = 'unclean.leader.election.enable';
/** ElectLeaders' electionType values. */
export const ElectionType = { PREFERRED: 0, UNCLEAN: 1 } as const;
/** Preferred elections one leader-balancing pass may emit (Kafka's maxElectionsPerImbalance). */
export const BALANCE_ELECTIONS_MAX = 1000;

export interface ReplicationControlOptions {
  /** The static `unclean.leader.election.enable`; topic and cluster-wide dynamic configs override it. */
  readonly uncleanLeaderElectionEnable: boolean;
  /** The static `min.insync.replicas` (default 1); topic and cluster-wide dynamic configs override it. */
  readonly minInsyncReplicas?: number;
  readonly topicDefaults: TopicDefaults;
  readonly validateTopicConfigs: TopicConfigValidator;
  readonly log: (line: string) => void;
}

/** A broker may lead when it is registered, unfenced and not in controlled shutdown (Kafka's isActive). */
export function isActiveBroker(image: MetadataImage, brokerId: number): boolean {
  const b = image.cluster.broker(brokerId);
  return b !== undefined && !b.fenced && !b.inControlledShutdown;
}

/** Brokers that may host new replicas, by id. */
export function usableBrokers(image: MetadataImage): PlacementBroker[] {
  return [...image.cluster.brokers.values()]
    .filter((b) => !b.fenced && !b.inControlledShutdown)
    .sort((a, b) => a.id - b.id)
    .map((b) => ({ id: b.id, rack: b.rack }));
}

/** The topic operations' view of an image. */
export function imageView(image: MetadataImage): ControllerView {
  return {
    topic: (name) => summary(image.topics.getTopic(name)),
    topicById: (id) => summary(image.topics.getTopicById(id)),
    topicNames: () => image.topics.topicsByName.keys(),
    usableBrokers: () => usableBrokers(image),
  };
}

function summary(t: { id: string; name: string; partitions: ReadonlyMap<number, unknown> } | undefined) {
  return t === undefined ? undefined : { id: t.id, name: t.name, partitionCount: t.partitions.size };
}

/** Fills schema defaults so every emitted record has the shape replay reads. */
export function toMetadataRecords(records: readonly EmittedRecord[]): MetadataRecord[] {
  return records.map((r) => {
    const name: MetadataRecordName = metadataRecordName(r.type);
    return metadataRecord(name, r.data as never, r.version) as MetadataRecord;
  });
}

export class ReplicationControlManager {
  constructor(private readonly options: ReplicationControlOptions) {}

  /** `unclean` when the topic's, the cluster's or the static config enables unclean elections. */
  electionFor(image: MetadataImage, topicName: string): Election {
    const value = image.configs.topicConfigs(topicName).get(UNCLEAN_LEADER_ELECTION_ENABLE)
      ?? image.configs.configs(ConfigResourceType.BROKER, '').get(UNCLEAN_LEADER_ELECTION_ENABLE);
    const enabled = value === undefined ? this.options.uncleanLeaderElectionEnable : value.toLowerCase() === 'true';
    return enabled ? 'unclean' : 'online';
  }

  /** The builder for a partition of `topicName`, with eligible leader replicas as the image's features say (KIP-966). */
  private builder(image: MetadataImage, topicName: string, topicId: string, partitionId: number, p: PartitionRegistration): PartitionChangeBuilder {
    return new PartitionChangeBuilder(p, topicId, partitionId, (id) => isActiveBroker(image, id), this.options.log)
      .setEligibleLeaderReplicas(image.features.elrEnabled, topicMinIsr(image, topicName, this.options.minInsyncReplicas ?? 1));
  }

  /**
   * `brokerId` was fenced or entered controlled shutdown in `image`: it leaves every ISR it is in
   * (except as a last member, see PartitionChangeBuilder) and hands every leadership to another
   * ISR member, or the partition goes offline.
   */
  handleBrokerLeaving(image: MetadataImage, brokerId: number): MetadataRecord[] {
    return this.changes(image, (p) => p.leader === brokerId || p.isr.includes(brokerId),
      (builder) => builder.removeFromTargetIsr(brokerId));
  }

  /**
   * PartitionChangeRecords clearing the ELR and last known ELR of every partition that has any, of
   * the topics named (every topic when null): Kafka does it when min.insync.replicas changes (the
   * ELR was computed for the old value) and when eligible.leader.replicas.version goes to 0.
   */
  clearElr(image: MetadataImage, topicNames: ReadonlySet<string> | null): MetadataRecord[] {
    const out: MetadataRecord[] = [];
    for (const t of image.topics.topicsById.values()) {
      if (topicNames !== null && !topicNames.has(t.name)) continue;
      for (const [partitionId, p] of t.partitions) {
        if (p.elr.length === 0 && p.lastKnownElr.length === 0) continue;
        out.push(metadataRecord('PartitionChangeRecord', {
          partitionId, topicId: t.id, isr: null, leader: NO_LEADER_CHANGE, replicas: null, removingReplicas: null, addingReplicas: null,
          leaderRecoveryState: NO_LEADER_RECOVERY_CHANGE, eligibleLeaderReplicas: [], lastKnownElr: [],
        }));
      }
    }
    return out;
  }

  /**
   * Kafka's getPartitionElrUpdatesForConfigChanges: with ELR on, a change of min.insync.replicas
   * on a topic clears that topic's ELRs; on the cluster default (the broker resource ''), every one.
   */
  elrUpdatesForConfigChanges(image: MetadataImage, records: readonly MetadataRecord[]): MetadataRecord[] {
    if (!image.features.elrEnabled) return [];
    const topics = new Set<string>();
    for (const r of records) {
      if (r.type !== MetadataRecordType.ConfigRecord || r.data.name !== MIN_INSYNC_REPLICAS) continue;
      if (r.data.resourceType === ConfigResourceType.BROKER && r.data.resourceName === '') return this.clearElr(image, null);
      if (r.data.resourceType === ConfigResourceType.TOPIC) topics.add(r.data.resourceName);
    }
    return topics.size === 0 ? [] : this.clearElr(image, topics);
  }

  /**
   * KIP-966: `brokerId` registered after an unclean shutdown (its previousBrokerEpoch is not its last
   * registration's epoch): it may have lost records it held as an eligible leader replica, so it
   * leaves every ELR (Kafka's handleBrokerUncleanShutdown).
   */
  handleBrokerUncleanShutdown(image: MetadataImage, brokerId: number): MetadataRecord[] {
    return this.changes(image, (p) => p.elr.includes(brokerId), (builder) => builder.setUncleanShutdownReplicas([brokerId]));
  }

  /** A broker became active: every leaderless partition tries an election again. */
  handleBrokerUnfenced(image: MetadataImage): MetadataRecord[] {
    return this.changes(image, (p) => p.leader === NO_LEADER, () => {});
  }

  /** True while `brokerId` leads some partition. */
  leadsAnything(image: MetadataImage, brokerId: number): boolean {
    for (const t of image.topics.topicsById.values()) {
      for (const p of t.partitions.values()) if (p.leader === brokerId) return true;
    }
    return false;
  }

  private changes(image: MetadataImage, select: (p: PartitionRegistration) => boolean,
    target: (builder: PartitionChangeBuilder) => void): MetadataRecord[] {
    const out: MetadataRecord[] = [];
    for (const t of image.topics.topicsById.values()) {
      const election = this.electionFor(image, t.name);
      for (const [partitionId, p] of t.partitions) {
        if (!select(p)) continue;
        const builder = this.builder(image, t.name, t.id, partitionId, p).setElection(election);
        target(builder);
        const record = builder.build();
        if (record !== null) out.push(record);
      }
    }
    return out;
  }

  /**
   * ElectLeaders (key 43): preferred elections move leadership to the first replica when it is in
   * the ISR and may lead; unclean elections give a leaderless partition a leader, from outside the
   * ISR if need be. Without a partition list every partition is tried and only the ones where an
   * election was needed are reported, as Kafka does.
   */
  electLeaders(image: MetadataImage, request: ElectLeadersRequest):
    { records: MetadataRecord[]; response: ElectLeadersResponseReplicaElectionResult[] } {
    const records: MetadataRecord[] = [];
    const results = new Map<string, ElectLeadersResponseReplicaElectionResult>();
    const report = (topic: string, partitionId: number, errorCode: number, errorMessage: string | null): void => {
      let r = results.get(topic);
      if (r === undefined) results.set(topic, r = { topic, partitionResult: [] });
      r.partitionResult.push({ partitionId, errorCode, errorMessage });
    };
    const unclean = request.electionType === ElectionType.UNCLEAN;
    if (request.electionType !== ElectionType.PREFERRED && !unclean) {
      for (const t of request.topicPartitions ?? []) for (const p of t.partitions) report(t.topic, p, ErrorCode.INVALID_REQUEST, `Unknown election type ${request.electionType}`);
      return { records, response: [...results.values()] };
    }
    const targets = request.topicPartitions
      ?? [...image.topics.topicsByName.values()].map((t) => ({ topic: t.name, partitions: [...t.partitions.keys()] }));
    for (const target of targets) {
      const topic = image.topics.getTopic(target.topic);
      for (const partitionId of target.partitions) {
        const p = topic?.partitions.get(partitionId);
        if (topic === undefined || p === undefined) {
          report(target.topic, partitionId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'The topic-partition does not exist.');
          continue;
        }
        const notNeeded = unclean ? p.leader !== NO_LEADER : p.leader === p.replicas[0];
        if (notNeeded) {
          if (request.topicPartitions !== null) report(topic.name, partitionId, ErrorCode.ELECTION_NOT_NEEDED, 'The partition already has the leader this election would pick.');
          continue;
        }
        const record = this.builder(image, topic.name, topic.id, partitionId, p).setElection(unclean ? 'unclean' : 'preferred').build();
        if (record === null) {
          report(topic.name, partitionId, unclean ? ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE : ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, null);
          continue;
        }
        records.push(record);
        report(topic.name, partitionId, ErrorCode.NONE, null);
      }
    }
    return { records, response: [...results.values()] };
  }

  /**
   * Leader balancing (`auto.leader.rebalance.enable`): partitions led by another replica while
   * their preferred replica is in the ISR and may lead get it back, up to `max` per pass.
   */
  balancePartitionLeaders(image: MetadataImage, max = BALANCE_ELECTIONS_MAX): MetadataRecord[] {
    const out: MetadataRecord[] = [];
    const acceptable = (id: number): boolean => isActiveBroker(image, id);
    for (const t of image.topics.topicsById.values()) {
      for (const [partitionId, p] of t.partitions) {
        if (out.length >= max) return out;
        const preferred = p.replicas[0]!;
        if (p.leader === preferred || !p.isr.includes(preferred) || !acceptable(preferred)) continue;
        const record = this.builder(image, t.name, t.id, partitionId, p).setElection('preferred').build();
        if (record !== null) out.push(record);
      }
    }
    return out;
  }

  /**
   * AlterPartition (key 56) from a partition leader, validated as Kafka's ReplicationControlManager
   * does (the sender's broker epoch is checked by the caller): each valid partition gets the
   * PartitionChangeRecord that reaches the proposed ISR (partition epoch bumped, leader kept) and
   * is answered with its state after it; an ISR that is already the partition's is answered with
   * the current state and no record. `version` picks the errors older senders understand.
   */
  alterPartition(image: MetadataImage, request: AlterPartitionRequest, version: number):
    { records: MetadataRecord[]; response: AlterPartitionResponseTopicData[] } {
    const records: MetadataRecord[] = [];
    const response: AlterPartitionResponseTopicData[] = [];
    for (const t of request.topics) {
      const topic = version > 1 ? image.topics.getTopicById(t.topicId) : image.topics.getTopic(t.topicName);
      const out: AlterPartitionResponseTopicData = { topicName: t.topicName, topicId: t.topicId, partitions: [] };
      response.push(out);
      const fail = (partitionIndex: number, errorCode: number) =>
        out.partitions.push({ partitionIndex, errorCode, leaderId: -1, leaderEpoch: -1, isr: [], leaderRecoveryState: 0, partitionEpoch: -1 });
      if (topic === undefined || (version > 1 && t.topicId === ZERO_UUID)) {
        for (const p of t.partitions) fail(p.partitionIndex, version > 1 ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        continue;
      }
      for (const data of t.partitions) {
        const current = topic.partitions.get(data.partitionIndex);
        const newIsr = version >= 3 ? data.newIsrWithEpochs : data.newIsr.map((brokerId) => ({ brokerId, brokerEpoch: -1n }));
        const error = this.validateAlterPartition(image, request.brokerId, current, data, newIsr, version);
        if (error !== ErrorCode.NONE) {
          this.options.log(`AlterPartition from broker ${request.brokerId} for ${topic.name}-${data.partitionIndex} refused: error ${error}`);
          fail(data.partitionIndex, error);
          continue;
        }
        let p = current!;
        const record = this.builder(image, topic.name, topic.id, data.partitionIndex, p)
          .setElection(this.electionFor(image, topic.name)).setTargetIsr(newIsr.map((m) => m.brokerId)).build();
        if (record !== null) {
          records.push(record);
          p = mergePartitionChange(p, record.data);
          if (record.data.leader !== NO_LEADER_CHANGE && record.data.leader !== request.brokerId) {
            // The change moved leadership away from the sender (Kafka: only when it completes a
            // reassignment): it must learn the new leader from the metadata before trying again.
            fail(data.partitionIndex, version > 1 ? ErrorCode.NEW_LEADER_ELECTED : ErrorCode.FENCED_LEADER_EPOCH);
            continue;
          }
        }
        out.partitions.push({
          partitionIndex: data.partitionIndex, errorCode: ErrorCode.NONE, leaderId: p.leader, leaderEpoch: p.leaderEpoch,
          isr: [...p.isr], leaderRecoveryState: p.leaderRecoveryState, partitionEpoch: p.partitionEpoch,
        });
      }
    }
    return { records, response };
  }

  /** Kafka's validateAlterPartitionData: ErrorCode.NONE when the proposal may be applied. */
  private validateAlterPartition(image: MetadataImage, brokerId: number, p: PartitionRegistration | undefined, data: AlterPartitionRequestPartitionData,
    newIsr: readonly { brokerId: number; brokerEpoch: bigint }[], version: number): number {
    if (p === undefined) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    // Epochs ahead of this controller's: it is likely no longer the active one.
    if (data.leaderEpoch > p.leaderEpoch || data.partitionEpoch > p.partitionEpoch) return ErrorCode.NOT_CONTROLLER;
    if (data.leaderEpoch < p.leaderEpoch) return ErrorCode.FENCED_LEADER_EPOCH;
    if (brokerId !== p.leader) return ErrorCode.INVALID_REQUEST;
    if (data.partitionEpoch < p.partitionEpoch) return ErrorCode.INVALID_UPDATE_VERSION;
    const ids = newIsr.map((m) => m.brokerId);
    if (new Set(ids).size !== ids.length || !ids.every((id) => p.replicas.includes(id))) return ErrorCode.INVALID_REQUEST;
    if (!ids.includes(p.leader)) return ErrorCode.INVALID_REQUEST;
    const recovery = version >= 1 ? data.leaderRecoveryState : LeaderRecoveryState.RECOVERED;
    if (recovery === LeaderRecoveryState.RECOVERING && ids.length > 1) return ErrorCode.INVALID_REQUEST;
    if (p.leaderRecoveryState === LeaderRecoveryState.RECOVERED && recovery === LeaderRecoveryState.RECOVERING) return ErrorCode.INVALID_REQUEST;
    const ineligible = newIsr.some((m) => {
      const b = image.cluster.broker(m.brokerId);
      return b === undefined || b.fenced || b.inControlledShutdown || (m.brokerEpoch !== -1n && m.brokerEpoch !== b.epoch);
    });
    if (ineligible) return version > 1 ? ErrorCode.INELIGIBLE_REPLICA : ErrorCode.OPERATION_NOT_ATTEMPTED;
    return ErrorCode.NONE;
  }

  /**
   * AlterPartitionReassignments (key 45), as Kafka's ReplicationControlManager answers it: per
   * partition, a target replica list starts (or replaces) a reassignment — replicas = target ∪
   * current with addingReplicas / removingReplicas, completed at once when the ISR already holds
   * every target replica — and null replicas cancel one (back to the replicas before it). Each
   * partition's record is built on the state the previous ones left.
   */
  alterPartitionReassignments(image: MetadataImage, request: AlterPartitionReassignmentsRequest):
    { records: MetadataRecord[]; response: AlterPartitionReassignmentsResponseReassignableTopicResponse[] } {
    const records: MetadataRecord[] = [];
    const response: AlterPartitionReassignmentsResponseReassignableTopicResponse[] = [];
    const changed = new Map<string, PartitionRegistration>();
    for (const t of request.topics) {
      const out: AlterPartitionReassignmentsResponseReassignableTopicResponse = { name: t.name, partitions: [] };
      response.push(out);
      const topic = image.topics.getTopic(t.name);
      for (const target of t.partitions) {
        const key = `${t.name}:${target.partitionIndex}`;
        const p = changed.get(key) ?? topic?.partitions.get(target.partitionIndex);
        let error: { code: number; message: string } | null = null;
        if (topic === undefined) error = { code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message: `Unable to find a topic named ${t.name}.` };
        else if (p === undefined) error = { code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message: `Unable to find partition ${t.name}:${target.partitionIndex}.` };
        else {
          const outcome = target.replicas === null
            ? this.cancelReassignment(image, topic.name, topic.id, target.partitionIndex, p)
            : this.changeReassignment(image, topic.name, topic.id, target.partitionIndex, p, target.replicas);
          if ('code' in outcome) error = outcome;
          else if (outcome.record !== null) {
            records.push(outcome.record);
            changed.set(key, mergePartitionChange(p, outcome.record.data));
          }
        }
        if (error !== null) this.options.log(`unable to alter the reassignment of ${t.name}:${target.partitionIndex}: ${error.message}`);
        out.partitions.push({ partitionIndex: target.partitionIndex, errorCode: error?.code ?? ErrorCode.NONE, errorMessage: error?.message ?? null });
      }
    }
    return { records, response };
  }

  private changeReassignment(image: MetadataImage, topicName: string, topicId: string, partitionId: number, p: PartitionRegistration, target: readonly number[]):
    { record: PartitionChangeRecordOut | null } | { code: number; message: string } {
    const invalid = validateManualAssignment(image, target);
    if (invalid !== null) return { code: ErrorCode.INVALID_REPLICA_ASSIGNMENT, message: invalid };
    const r = reassignmentReplicas(p.replicas, target);
    const record = this.builder(image, topicName, topicId, partitionId, p)
      .setTargetReplicas(r.merged).setTargetAdding(r.adding).setTargetRemoving(r.removing).build();
    return { record };
  }

  private cancelReassignment(image: MetadataImage, topicName: string, topicId: string, partitionId: number, p: PartitionRegistration):
    { record: PartitionChangeRecordOut | null } | { code: number; message: string } {
    if (!isReassigning(p)) return { code: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, message: 'No partition reassignment is in progress.' };
    const revert = reassignmentRevert(p);
    const election = this.electionFor(image, topicName);
    if (revert.unclean && election !== 'unclean') {
      return { code: ErrorCode.INVALID_REPLICA_ASSIGNMENT, message: `Unable to revert partition assignment for ${topicName}:${partitionId} because it would require an unclean leader election.` };
    }
    const record = this.builder(image, topicName, topicId, partitionId, p)
      .setElection(election).setTargetIsr(revert.isr).setTargetReplicas(revert.replicas).setTargetAdding([]).setTargetRemoving([]).build();
    return { record };
  }

  /**
   * ListPartitionReassignments (key 46): the partitions with a reassignment in progress, all of
   * them or among the ones named (unknown topics and partitions are left out, as Kafka does).
   */
  listPartitionReassignments(image: MetadataImage, request: ListPartitionReassignmentsRequest): ListPartitionReassignmentsResponseOngoingTopicReassignment[] {
    const wanted = request.topics
      ?? [...image.topics.topicsByName.values()].map((t) => ({ name: t.name, partitionIndexes: [...t.partitions.keys()].sort((a, b) => a - b) }));
    const out: ListPartitionReassignmentsResponseOngoingTopicReassignment[] = [];
    for (const w of wanted) {
      const topic = image.topics.getTopic(w.name);
      if (topic === undefined) continue;
      const partitions = w.partitionIndexes.flatMap((partitionIndex) => {
        const p = topic.partitions.get(partitionIndex);
        if (p === undefined || !isReassigning(p)) return [];
        return [{ partitionIndex, replicas: [...p.replicas], addingReplicas: [...p.addingReplicas], removingReplicas: [...p.removingReplicas] }];
      });
      if (partitions.length > 0) out.push({ name: topic.name, partitions });
    }
    return out;
  }

  createTopics(image: MetadataImage, request: CreateTopicsRequest, prng: Prng):
    { records: MetadataRecord[]; response: CreateTopicsResponseCreatableTopicResult[] } {
    const out = createTopics(request, imageView(image), this.options.topicDefaults, this.options.validateTopicConfigs, prng);
    return { records: toMetadataRecords(out.records), response: out.topics };
  }

  deleteTopics(image: MetadataImage, targets: { name: string | null; topicId: string }[]):
    { records: MetadataRecord[]; response: DeleteTopicsResponseDeletableTopicResult[] } {
    const out = deleteTopics(targets, imageView(image));
    return { records: toMetadataRecords(out.records), response: out.results };
  }

  createPartitions(image: MetadataImage, topics: CreatePartitionsRequestCreatePartitionsTopic[], validateOnly: boolean, prng: Prng):
    { records: MetadataRecord[]; response: CreatePartitionsResponseCreatePartitionsTopicResult[] } {
    const rf = (topicId: string): number => image.topics.getTopicById(topicId)?.partitions.get(0)?.replicas.length ?? 1;
    const out = createPartitions(topics, validateOnly, imageView(image), rf, prng, this.options.topicDefaults.partitionsPerRequestMax);
    return { records: toMetadataRecords(out.records), response: out.results };
  }
}

/** Kafka's validateManualPartitionAssignment: an error message, or null when the list may be used. */
function validateManualAssignment(image: MetadataImage, replicas: readonly number[]): string | null {
  if (replicas.length === 0) return 'The manual partition assignment includes an empty replica list.';
  const seen = new Set<number>();
  for (const id of replicas) {
    if (seen.has(id)) return `The manual partition assignment includes the broker ${id} more than once.`;
    seen.add(id);
    if (image.cluster.broker(id) === undefined) return `The manual partition assignment includes broker ${id}, but no such broker is registered.`;
  }
  return null;
}
