// Topic operations of the controller: CreateTopics, DeleteTopics and CreatePartitions turn into
// metadata records (TopicRecord, PartitionRecord, ConfigRecord, RemoveTopicRecord) plus per-topic
// results. Pure: the current state comes in as a view, randomness (topic ids, the first leader)
// from a Prng; nothing is applied here — the records are, once committed to the metadata log.
import {
  ErrorCode, ZERO_UUID,
  type CreateTopicsRequest, type CreateTopicsRequestCreatableTopic, type CreateTopicsResponseCreatableTopicResult,
  type DeleteTopicsResponseDeletableTopicResult, type CreatePartitionsRequestCreatePartitionsTopic,
  type CreatePartitionsResponseCreatePartitionsTopicResult,
} from '../protocol/index.js';
import type { Prng } from '../util/index.js';
import { placeReplicas, type PlacementBroker } from './placement.js';
import { collisionKey, METADATA_TOPIC_NAME, topicNameError } from './topic-names.js';

export const RecordType = { Topic: 2, Partition: 3, Config: 4, RemoveTopic: 9, ProducerIds: 15 } as const;
export const CONFIG_RESOURCE_TOPIC = 2;

/** A metadata record as the controller emits it: the type id, the record version and its body. */
export interface EmittedRecord {
  type: number;
  version: number;
  data: Record<string, unknown>;
}

export interface TopicSummary {
  id: string;
  name: string;
  partitionCount: number;
}

export interface ControllerView {
  topic(name: string): TopicSummary | undefined;
  topicById(id: string): TopicSummary | undefined;
  topicNames(): Iterable<string>;
  /** Brokers that may host new replicas (registered and unfenced). */
  usableBrokers(): PlacementBroker[];
}

export interface TopicDefaults {
  numPartitions: number;
  defaultReplicationFactor: number;
  /** Upper bound on partitions one request may create (a client cannot make this grow). */
  partitionsPerRequestMax: number;
}

/** Checks topic configs; returns the first bad key with a message, or null. */
/**
 * Checks a topic's config overrides as they would be after a change; `current` holds the overrides
 * before it (absent for a new topic), for rules about turning a setting off (KIP-950).
 */
export type TopicConfigValidator = (configs: ReadonlyMap<string, string | null>, current?: ReadonlyMap<string, string>) => { key: string; message: string } | null;

export function randomUuid(prng: Prng): string {
  const b = Buffer.alloc(16);
  for (let i = 0; i < 16; i += 4) b.writeUInt32BE(prng.nextUint32(), i);
  const s = b.toString('base64url');
  return s === ZERO_UUID ? randomUuid(prng) : s;
}

function partitionRecord(topicId: string, partitionId: number, replicas: number[]): EmittedRecord {
  return {
    type: RecordType.Partition, version: 0,
    data: {
      partitionId, topicId, replicas, isr: [...replicas], removingReplicas: [], addingReplicas: [],
      leader: replicas[0], leaderRecoveryState: 0, leaderEpoch: 0, partitionEpoch: 0, directories: [],
      eligibleLeaderReplicas: null, lastKnownElr: null,
    },
  };
}

type Fail = { errorCode: number; errorMessage: string };
const fail = (errorCode: number, errorMessage: string): Fail => ({ errorCode, errorMessage });

/** Replica lists from explicit assignments, or why they are not acceptable. */
function explicitAssignment(t: CreateTopicsRequestCreatableTopic, brokerIds: Set<number>): number[][] | Fail {
  if (t.numPartitions !== -1 || t.replicationFactor !== -1) {
    return fail(ErrorCode.INVALID_REQUEST, 'Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.');
  }
  const byIndex = new Map<number, number[]>();
  for (const a of t.assignments) {
    if (byIndex.has(a.partitionIndex)) return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Partition ${a.partitionIndex} is assigned twice`);
    if (a.brokerIds.length === 0) return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Partition ${a.partitionIndex} has no replicas`);
    if (new Set(a.brokerIds).size !== a.brokerIds.length) return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Duplicate brokers in the replicas of partition ${a.partitionIndex}`);
    const unknown = a.brokerIds.find((b) => !brokerIds.has(b));
    if (unknown !== undefined) return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Broker ${unknown} in the replicas of partition ${a.partitionIndex} is not registered`);
    byIndex.set(a.partitionIndex, a.brokerIds);
  }
  const out: number[][] = [];
  for (let i = 0; i < byIndex.size; i++) {
    const r = byIndex.get(i);
    if (!r) return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'Partitions must be numbered consecutively from 0');
    if (r.length !== byIndex.get(0)!.length) return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'All partitions must have the same number of replicas');
    out.push(r);
  }
  return out;
}

export interface CreateTopicsOutcome {
  records: EmittedRecord[];
  topics: CreateTopicsResponseCreatableTopicResult[];
}

export function createTopics(request: CreateTopicsRequest, view: ControllerView, defaults: TopicDefaults,
  validateConfigs: TopicConfigValidator, prng: Prng): CreateTopicsOutcome {
  const records: EmittedRecord[] = [];
  const topics: CreateTopicsResponseCreatableTopicResult[] = [];
  const counts = new Map<string, number>();
  for (const t of request.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
  const collisions = new Map<string, string>();
  for (const name of view.topicNames()) collisions.set(collisionKey(name), name);
  const usedIds = new Set<string>();
  let partitionsLeft = defaults.partitionsPerRequestMax;
  const brokers = view.usableBrokers();
  const brokerIds = new Set(brokers.map((b) => b.id));

  for (const t of request.topics) {
    const result: CreateTopicsResponseCreatableTopicResult = {
      name: t.name, topicId: ZERO_UUID, errorCode: 0, errorMessage: null, topicConfigErrorCode: 0,
      numPartitions: -1, replicationFactor: -1, configs: null,
    };
    topics.push(result);
    const outcome = planTopic(t, counts, collisions, view, brokers, brokerIds, defaults, validateConfigs);
    if ('errorCode' in outcome) { Object.assign(result, outcome); continue; }
    if (outcome.length > partitionsLeft) {
      Object.assign(result, fail(ErrorCode.POLICY_VIOLATION, `A single request may create at most ${defaults.partitionsPerRequestMax} partitions`));
      continue;
    }
    partitionsLeft -= outcome.length;
    collisions.set(collisionKey(t.name), t.name);
    result.numPartitions = outcome.length;
    result.replicationFactor = outcome[0]!.length;
    if (request.validateOnly) continue;
    // A topic id is never one another topic has (or one this request gave): the ids come from a
    // seeded generator, and a collision would be refused at replay, failing the whole request.
    let topicId = randomUuid(prng);
    while (view.topicById(topicId) !== undefined || usedIds.has(topicId)) topicId = randomUuid(prng);
    usedIds.add(topicId);
    result.topicId = topicId;
    records.push({ type: RecordType.Topic, version: 0, data: { name: t.name, topicId } });
    for (const c of t.configs) {
      if (c.value === null) continue;
      records.push({ type: RecordType.Config, version: 0, data: { resourceType: CONFIG_RESOURCE_TOPIC, resourceName: t.name, name: c.name, value: c.value } });
    }
    outcome.forEach((replicas, i) => records.push(partitionRecord(topicId, i, replicas)));
  }
  return { records, topics };

  function planTopic(t: CreateTopicsRequestCreatableTopic, counts: Map<string, number>, collisions: Map<string, string>,
    view: ControllerView, brokers: PlacementBroker[], brokerIds: Set<number>, defaults: TopicDefaults,
    validateConfigs: TopicConfigValidator): number[][] | Fail {
    if (counts.get(t.name)! > 1) return fail(ErrorCode.INVALID_REQUEST, 'Duplicate topic name.');
    const nameError = topicNameError(t.name);
    if (nameError) return fail(ErrorCode.INVALID_TOPIC_EXCEPTION, nameError);
    if (t.name === METADATA_TOPIC_NAME) return fail(ErrorCode.INVALID_REQUEST, `Creation of internal topic ${METADATA_TOPIC_NAME} is prohibited.`);
    if (view.topic(t.name)) return fail(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${t.name}' already exists.`);
    const clash = collisions.get(collisionKey(t.name));
    if (clash !== undefined) return fail(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${t.name}' collides with existing topic: ${clash}`);
    const configs = new Map<string, string | null>(t.configs.map((c) => [c.name, c.value]));
    const bad = validateConfigs(configs);
    if (bad) return fail(ErrorCode.INVALID_CONFIG, bad.message);
    if (t.assignments.length > 0) return explicitAssignment(t, brokerIds);
    const numPartitions = t.numPartitions === -1 ? defaults.numPartitions : t.numPartitions;
    const replicationFactor = t.replicationFactor === -1 ? defaults.defaultReplicationFactor : t.replicationFactor;
    if (numPartitions <= 0) return fail(ErrorCode.INVALID_PARTITIONS, 'Number of partitions was set to an invalid non-positive value.');
    if (replicationFactor <= 0) return fail(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0, or -1 to use the default value.');
    if (replicationFactor > brokers.length) {
      return fail(ErrorCode.INVALID_REPLICATION_FACTOR, `Unable to replicate the partition ${replicationFactor} time(s): The target replication factor of ${replicationFactor} cannot be reached because only ${brokers.length} broker(s) are registered.`);
    }
    if (numPartitions > defaults.partitionsPerRequestMax) {
      return fail(ErrorCode.POLICY_VIOLATION, `A single request may create at most ${defaults.partitionsPerRequestMax} partitions`);
    }
    return placeReplicas(brokers, numPartitions, replicationFactor, prng.int(brokers.length));
  }
}

export interface DeleteTopicsOutcome {
  records: EmittedRecord[];
  results: DeleteTopicsResponseDeletableTopicResult[];
}

/** Deletes by name (older versions) or by id (v6+). */
export function deleteTopics(targets: { name: string | null; topicId: string }[], view: ControllerView): DeleteTopicsOutcome {
  const records: EmittedRecord[] = [];
  const results: DeleteTopicsResponseDeletableTopicResult[] = [];
  const seen = new Set<string>();
  for (const target of targets) {
    const byId = target.name === null && target.topicId !== ZERO_UUID;
    const topic = byId ? view.topicById(target.topicId) : target.name !== null ? view.topic(target.name) : undefined;
    const result: DeleteTopicsResponseDeletableTopicResult = {
      name: topic?.name ?? target.name, topicId: topic?.id ?? target.topicId, errorCode: 0, errorMessage: null,
    };
    results.push(result);
    if (!topic) {
      result.errorCode = byId ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      result.errorMessage = byId ? `Topic id ${target.topicId} does not exist` : 'This server does not host this topic-partition.';
      continue;
    }
    if (seen.has(topic.id)) continue;
    seen.add(topic.id);
    records.push({ type: RecordType.RemoveTopic, version: 0, data: { topicId: topic.id } });
  }
  return { records, results };
}

export interface CreatePartitionsOutcome {
  records: EmittedRecord[];
  results: CreatePartitionsResponseCreatePartitionsTopicResult[];
}

export function createPartitions(topicsIn: CreatePartitionsRequestCreatePartitionsTopic[], validateOnly: boolean,
  view: ControllerView, currentReplicationFactor: (topicId: string) => number, prng: Prng, partitionsPerRequestMax: number): CreatePartitionsOutcome {
  const records: EmittedRecord[] = [];
  const results: CreatePartitionsResponseCreatePartitionsTopicResult[] = [];
  const brokers = view.usableBrokers();
  const brokerIds = new Set(brokers.map((b) => b.id));
  let left = partitionsPerRequestMax;
  for (const t of topicsIn) {
    const r: CreatePartitionsResponseCreatePartitionsTopicResult = { name: t.name, errorCode: 0, errorMessage: null };
    results.push(r);
    const topic = view.topic(t.name);
    if (!topic) { Object.assign(r, fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${t.name}' does not exist.`)); continue; }
    const adding = t.count - topic.partitionCount;
    if (adding <= 0) {
      Object.assign(r, fail(ErrorCode.INVALID_PARTITIONS, adding === 0
        ? `Topic already has ${topic.partitionCount} partitions.`
        : `The topic ${t.name} currently has ${topic.partitionCount} partition(s); ${t.count} would not be an increase.`));
      continue;
    }
    if (adding > left) { Object.assign(r, fail(ErrorCode.POLICY_VIOLATION, `A single request may create at most ${partitionsPerRequestMax} partitions`)); continue; }
    const rf = currentReplicationFactor(topic.id);
    let placement: number[][];
    if (t.assignments !== null) {
      if (t.assignments.length !== adding) {
        Object.assign(r, fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Attempted to add ${adding} additional partition(s), but only ${t.assignments.length} assignment(s) were specified.`));
        continue;
      }
      const bad = t.assignments.find((a) => a.brokerIds.length !== rf || new Set(a.brokerIds).size !== a.brokerIds.length || a.brokerIds.some((b) => !brokerIds.has(b)));
      if (bad) { Object.assign(r, fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Invalid replica assignment ${JSON.stringify(bad.brokerIds)}: needs ${rf} distinct registered brokers`)); continue; }
      placement = t.assignments.map((a) => a.brokerIds);
    } else {
      if (rf > brokers.length) { Object.assign(r, fail(ErrorCode.INVALID_REPLICATION_FACTOR, `Replication factor ${rf} exceeds the ${brokers.length} usable broker(s)`)); continue; }
      placement = placeReplicas(brokers, adding, rf, prng.int(brokers.length), topic.partitionCount);
    }
    left -= adding;
    if (validateOnly) continue;
    placement.forEach((replicas, i) => records.push(partitionRecord(topic.id, topic.partitionCount + i, replicas)));
  }
  return { records, results };
}
