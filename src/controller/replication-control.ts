// ReplicationControlManager: topics, partitions, ISR and leaders. It reads the metadata image and
// emits records: leader elections and ISR shrinks when a broker is fenced, shuts down or returns
// (all through PartitionChangeBuilder), and topic creation, deletion and partition growth (the
// request rules live in topics.ts, shared with the broker's inline path until it is wired here).
import {
  metadataRecord, metadataRecordName, ConfigResourceType, NO_LEADER,
  type MetadataImage, type MetadataRecord, type MetadataRecordName, type PartitionRegistration,
} from '../metadata/index.js';
import type {
  CreateTopicsRequest, CreateTopicsResponseCreatableTopicResult, CreatePartitionsRequestCreatePartitionsTopic,
  CreatePartitionsResponseCreatePartitionsTopicResult, DeleteTopicsResponseDeletableTopicResult,
} from '../protocol/index.js';
import type { Prng } from '../util/index.js';
import { PartitionChangeBuilder, type Election } from './partition-change.js';
import type { PlacementBroker } from './placement.js';
import {
  createPartitions, createTopics, deleteTopics,
  type ControllerView, type EmittedRecord, type TopicConfigValidator, type TopicDefaults,
} from './topics.js';

export const UNCLEAN_LEADER_ELECTION_ENABLE = 'unclean.leader.election.enable';

export interface ReplicationControlOptions {
  /** The static `unclean.leader.election.enable`; topic and cluster-wide dynamic configs override it. */
  readonly uncleanLeaderElectionEnable: boolean;
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

  /**
   * `brokerId` was fenced or entered controlled shutdown in `image`: it leaves every ISR it is in
   * (except as a last member, see PartitionChangeBuilder) and hands every leadership to another
   * ISR member, or the partition goes offline.
   */
  handleBrokerLeaving(image: MetadataImage, brokerId: number): MetadataRecord[] {
    return this.changes(image, (p) => p.leader === brokerId || p.isr.includes(brokerId),
      (builder) => builder.removeFromTargetIsr(brokerId));
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
    const acceptable = (id: number): boolean => isActiveBroker(image, id);
    for (const t of image.topics.topicsById.values()) {
      const election = this.electionFor(image, t.name);
      for (const [partitionId, p] of t.partitions) {
        if (!select(p)) continue;
        const builder = new PartitionChangeBuilder(p, t.id, partitionId, acceptable, this.options.log).setElection(election);
        target(builder);
        const record = builder.build();
        if (record !== null) out.push(record);
      }
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
