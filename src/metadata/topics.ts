// Topics: partition registrations, topic images and the topics image (by id and by name), and the
// deltas that replay TopicRecord, PartitionRecord, PartitionChangeRecord and RemoveTopicRecord.
// A delta copies only what it touches; apply() shares every untouched topic and partition object.
import type { PartitionChangeRecord, PartitionRecord, TopicRecord, RemoveTopicRecord } from '../protocol/index.js';
import { partitionName } from '../util/index.js';
import { MetadataError } from './errors.js';

/** PartitionChangeRecord.leader meaning "the leader does not change". */
export const NO_LEADER_CHANGE = -2;
/** A leader of -1: the partition has no leader. */
export const NO_LEADER = -1;
/** PartitionChangeRecord.leaderRecoveryState meaning "no change". */
export const NO_LEADER_RECOVERY_CHANGE = -1;
export const LeaderRecoveryState = { RECOVERED: 0, RECOVERING: 1 } as const;
/** Kafka's DirectoryId.MIGRATING: replicas whose directory is not tracked (Uuid(0, 2)). */
export const DIRECTORY_MIGRATING = 'AAAAAAAAAAAAAAAAAAAAAg';

export interface PartitionRegistration {
  readonly replicas: readonly number[];
  readonly directories: readonly string[];
  readonly isr: readonly number[];
  readonly removingReplicas: readonly number[];
  readonly addingReplicas: readonly number[];
  readonly elr: readonly number[];
  readonly lastKnownElr: readonly number[];
  readonly leader: number;
  readonly leaderRecoveryState: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
}

function frozen(list: readonly number[] | readonly string[] | null): readonly never[] {
  return Object.freeze([...(list ?? [])]) as readonly never[];
}

/** Kafka fills unknown directories with MIGRATING so there is one directory per replica. */
function directoriesFor(dirs: readonly string[], replicaCount: number): readonly string[] {
  if (dirs.length === replicaCount) return Object.freeze([...dirs]);
  if (dirs.length === 0) return Object.freeze(new Array<string>(replicaCount).fill(DIRECTORY_MIGRATING));
  throw new MetadataError('INVALID_RECORD', `${dirs.length} directories for ${replicaCount} replicas`);
}

export function partitionFromRecord(r: PartitionRecord): PartitionRegistration {
  return Object.freeze({
    replicas: frozen(r.replicas),
    directories: directoriesFor(r.directories, r.replicas.length),
    isr: frozen(r.isr),
    removingReplicas: frozen(r.removingReplicas),
    addingReplicas: frozen(r.addingReplicas),
    elr: frozen(r.eligibleLeaderReplicas),
    lastKnownElr: frozen(r.lastKnownElr),
    leader: r.leader,
    leaderRecoveryState: r.leaderRecoveryState,
    leaderEpoch: r.leaderEpoch,
    partitionEpoch: r.partitionEpoch,
  });
}

/**
 * Kafka's PartitionRegistration.merge: null lists keep the old value; a leader other than -2 sets
 * the leader and bumps the leader epoch by one (even when it names the same broker); -1 for the
 * recovery state keeps it; every change record bumps the partition epoch by one.
 */
export function mergePartitionChange(p: PartitionRegistration, r: PartitionChangeRecord): PartitionRegistration {
  const replicas = r.replicas === null ? p.replicas : frozen(r.replicas);
  const directories = r.directories === null
    ? (p.directories.length === replicas.length ? p.directories : directoriesFor([], replicas.length))
    : directoriesFor(r.directories, replicas.length);
  const leaderChanged = r.leader !== NO_LEADER_CHANGE;
  return Object.freeze({
    replicas,
    directories,
    isr: r.isr === null ? p.isr : frozen(r.isr),
    removingReplicas: r.removingReplicas === null ? p.removingReplicas : frozen(r.removingReplicas),
    addingReplicas: r.addingReplicas === null ? p.addingReplicas : frozen(r.addingReplicas),
    elr: r.eligibleLeaderReplicas === null ? p.elr : frozen(r.eligibleLeaderReplicas),
    lastKnownElr: r.lastKnownElr === null ? p.lastKnownElr : frozen(r.lastKnownElr),
    leader: leaderChanged ? r.leader : p.leader,
    leaderRecoveryState: r.leaderRecoveryState === NO_LEADER_RECOVERY_CHANGE ? p.leaderRecoveryState : r.leaderRecoveryState,
    leaderEpoch: leaderChanged ? p.leaderEpoch + 1 : p.leaderEpoch,
    partitionEpoch: p.partitionEpoch + 1,
  });
}

export class TopicImage {
  constructor(
    readonly name: string,
    readonly id: string,
    readonly partitions: ReadonlyMap<number, PartitionRegistration>,
  ) {
    Object.freeze(this);
  }

  partition(partitionId: number): PartitionRegistration | undefined {
    return this.partitions.get(partitionId);
  }
}

export class TopicsImage {
  static readonly EMPTY = new TopicsImage(new Map(), new Map());

  constructor(
    readonly topicsById: ReadonlyMap<string, TopicImage>,
    readonly topicsByName: ReadonlyMap<string, TopicImage>,
  ) {
    Object.freeze(this);
  }

  get isEmpty(): boolean { return this.topicsById.size === 0; }
  getTopic(name: string): TopicImage | undefined { return this.topicsByName.get(name); }
  getTopicById(id: string): TopicImage | undefined { return this.topicsById.get(id); }

  /** A partition by topic id or name (ids are 22-character base64url; names are looked up first). */
  getPartition(topicIdOrName: string, partitionId: number): PartitionRegistration | undefined {
    const topic = this.topicsByName.get(topicIdOrName) ?? this.topicsById.get(topicIdOrName);
    return topic?.partitions.get(partitionId);
  }
}

/** Changes to one topic within a delta. */
export class TopicDelta {
  /** Partitions created or changed in this delta, by partition id. */
  readonly partitionChanges = new Map<number, PartitionRegistration>();

  constructor(readonly image: TopicImage) {}

  get name(): string { return this.image.name; }
  get id(): string { return this.image.id; }

  partition(partitionId: number): PartitionRegistration | undefined {
    return this.partitionChanges.get(partitionId) ?? this.image.partitions.get(partitionId);
  }

  /** Partitions that did not exist in the base image. */
  newPartitions(): number[] {
    return [...this.partitionChanges.keys()].filter((p) => !this.image.partitions.has(p));
  }

  replayPartition(r: PartitionRecord): void {
    this.partitionChanges.set(r.partitionId, partitionFromRecord(r));
  }

  replayPartitionChange(r: PartitionChangeRecord): void {
    const current = this.partition(r.partitionId);
    if (current === undefined) {
      throw new MetadataError('UNKNOWN_PARTITION', `PartitionChangeRecord for missing partition ${partitionName(this.name, r.partitionId)}`);
    }
    this.partitionChanges.set(r.partitionId, mergePartitionChange(current, r));
  }

  apply(): TopicImage {
    if (this.partitionChanges.size === 0) return this.image;
    const partitions = new Map(this.image.partitions);
    for (const [id, p] of this.partitionChanges) partitions.set(id, p);
    return new TopicImage(this.image.name, this.image.id, partitions);
  }
}

export interface TopicPartitionRef {
  readonly topicId: string;
  readonly topicName: string;
  readonly partition: number;
}

export interface LocalPartitionChange extends TopicPartitionRef {
  readonly registration: PartitionRegistration;
  /** The registration in the base image, if the partition existed there. */
  readonly previous: PartitionRegistration | undefined;
}

/** What one broker must do after a delta (Kafka's LocalReplicaChanges). */
export interface LocalReplicaChanges {
  /** Replicas this broker must stop and delete (topic deleted, or the broker left the replica set). */
  readonly deletes: readonly TopicPartitionRef[];
  /** Partitions this broker leads whose registration changed (a new partition epoch). */
  readonly leaders: readonly LocalPartitionChange[];
  /** The subset of `leaders` where this broker was just elected (a new leader epoch). */
  readonly electedLeaders: readonly LocalPartitionChange[];
  /** Partitions this broker now follows, or follows at a new partition epoch. */
  readonly followers: readonly LocalPartitionChange[];
}

export class TopicsDelta {
  readonly changedTopics = new Map<string, TopicDelta>();
  readonly deletedTopicIds = new Set<string>();
  /** Topics created in this delta: name → id. */
  readonly createdTopics = new Map<string, string>();

  constructor(readonly image: TopicsImage) {}

  get createdTopicIds(): ReadonlySet<string> { return new Set(this.createdTopics.values()); }

  /** The topic's image as of this delta (undefined once deleted). */
  private currentTopic(id: string): TopicImage | undefined {
    const changed = this.changedTopics.get(id);
    if (changed !== undefined) return changed.image;
    if (this.deletedTopicIds.has(id)) return undefined;
    return this.image.topicsById.get(id);
  }

  private topicIdForName(name: string): string | undefined {
    const created = this.createdTopics.get(name);
    if (created !== undefined) return created;
    const existing = this.image.topicsByName.get(name);
    return existing !== undefined && !this.deletedTopicIds.has(existing.id) ? existing.id : undefined;
  }

  replayTopic(r: TopicRecord): void {
    if (this.currentTopic(r.topicId) !== undefined || this.topicIdForName(r.name) !== undefined) {
      throw new MetadataError('DUPLICATE_TOPIC', `TopicRecord for existing topic ${r.name} (${r.topicId})`);
    }
    this.changedTopics.set(r.topicId, new TopicDelta(new TopicImage(r.name, r.topicId, new Map())));
    this.createdTopics.set(r.name, r.topicId);
  }

  private topicDelta(topicId: string, what: string): TopicDelta {
    let delta = this.changedTopics.get(topicId);
    if (delta !== undefined) return delta;
    const topic = this.deletedTopicIds.has(topicId) ? undefined : this.image.topicsById.get(topicId);
    if (topic === undefined) throw new MetadataError('UNKNOWN_TOPIC', `${what} for unknown topic id ${topicId}`);
    delta = new TopicDelta(topic);
    this.changedTopics.set(topicId, delta);
    return delta;
  }

  replayPartition(r: PartitionRecord): void {
    this.topicDelta(r.topicId, 'PartitionRecord').replayPartition(r);
  }

  replayPartitionChange(r: PartitionChangeRecord): void {
    this.topicDelta(r.topicId, 'PartitionChangeRecord').replayPartitionChange(r);
  }

  /** Returns the removed topic's name (its configs go with it). */
  replayRemoveTopic(r: RemoveTopicRecord): string {
    const topic = this.currentTopic(r.topicId);
    if (topic === undefined) throw new MetadataError('UNKNOWN_TOPIC', `RemoveTopicRecord for unknown topic id ${r.topicId}`);
    this.changedTopics.delete(r.topicId);
    if (this.image.topicsById.has(r.topicId)) this.deletedTopicIds.add(r.topicId);
    this.createdTopics.delete(topic.name);
    return topic.name;
  }

  apply(): TopicsImage {
    if (this.changedTopics.size === 0 && this.deletedTopicIds.size === 0) return this.image;
    const byId = new Map(this.image.topicsById);
    const byName = new Map(this.image.topicsByName);
    for (const id of this.deletedTopicIds) {
      const topic = byId.get(id)!;
      byId.delete(id);
      byName.delete(topic.name);
    }
    for (const [id, delta] of this.changedTopics) {
      const topic = delta.apply();
      byId.set(id, topic);
      byName.set(topic.name, topic);
    }
    return new TopicsImage(byId, byName);
  }

  /** Kafka's TopicsDelta.localChanges: what `brokerId` must do to its replicas after this delta. */
  localChanges(brokerId: number): LocalReplicaChanges {
    const deletes: TopicPartitionRef[] = [];
    const leaders: LocalPartitionChange[] = [];
    const electedLeaders: LocalPartitionChange[] = [];
    const followers: LocalPartitionChange[] = [];
    for (const id of this.deletedTopicIds) {
      const topic = this.image.topicsById.get(id)!;
      for (const [partition, p] of topic.partitions) {
        if (p.replicas.includes(brokerId)) deletes.push({ topicId: id, topicName: topic.name, partition });
      }
    }
    for (const [id, delta] of this.changedTopics) {
      for (const [partition, p] of delta.partitionChanges) {
        const previous = delta.image.partitions.get(partition);
        const ref = { topicId: id, topicName: delta.name, partition };
        if (!p.replicas.includes(brokerId)) {
          if (previous !== undefined && previous.replicas.includes(brokerId)) deletes.push(ref);
        } else if (p.leader === brokerId) {
          if (previous !== undefined && previous.partitionEpoch === p.partitionEpoch) continue;
          const change = { ...ref, registration: p, previous };
          leaders.push(change);
          if (previous === undefined || previous.leaderEpoch !== p.leaderEpoch) electedLeaders.push(change);
        } else if (previous === undefined || previous.partitionEpoch !== p.partitionEpoch) {
          followers.push({ ...ref, registration: p, previous });
        }
      }
    }
    return { deletes, leaders, electedLeaders, followers };
  }
}
