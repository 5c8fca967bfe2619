// MetadataImage is the whole cluster state at one offset of `__cluster_metadata`; MetadataDelta
// replays records on top of an image and apply() gives the next image. Sub-images a delta never
// touched are the same objects (===) in the next image, and so are untouched topics and partitions.
import { ClusterDelta, ClusterImage } from './cluster.js';
import { ConfigurationsDelta, ConfigurationsImage } from './configs.js';
import { FeaturesDelta, FeaturesImage, ProducerIdsDelta, ProducerIdsImage } from './features.js';
import { ClientQuotasDelta, ClientQuotasImage } from './quotas.js';
import {
  AclsDelta, AclsImage, DelegationTokensDelta, DelegationTokensImage, ScramDelta, ScramImage,
} from './security.js';
import { TopicsDelta, TopicsImage } from './topics.js';
import { MetadataRecordType, type MetadataRecord } from './records.js';
import { MetadataError } from './errors.js';

/** Where an image came from: the last record offset and leader epoch it contains. */
export interface MetadataProvenance {
  readonly lastContainedOffset: number;
  readonly lastContainedEpoch: number;
  readonly lastContainedLogTimeMs: number;
}

export const EMPTY_PROVENANCE: MetadataProvenance = Object.freeze({
  lastContainedOffset: -1, lastContainedEpoch: -1, lastContainedLogTimeMs: -1,
});

export function provenance(lastContainedOffset: number, lastContainedEpoch: number, lastContainedLogTimeMs = -1): MetadataProvenance {
  for (const [k, v] of [['offset', lastContainedOffset], ['epoch', lastContainedEpoch], ['logTimeMs', lastContainedLogTimeMs]] as const) {
    if (!Number.isSafeInteger(v) || v < -1) throw new MetadataError('INVALID_RECORD', `provenance ${k} ${v}`);
  }
  return Object.freeze({ lastContainedOffset, lastContainedEpoch, lastContainedLogTimeMs });
}

export interface MetadataImageParts {
  readonly provenance: MetadataProvenance;
  readonly features: FeaturesImage;
  readonly cluster: ClusterImage;
  readonly topics: TopicsImage;
  readonly configs: ConfigurationsImage;
  readonly clientQuotas: ClientQuotasImage;
  readonly producerIds: ProducerIdsImage;
  readonly acls: AclsImage;
  readonly scram: ScramImage;
  readonly delegationTokens: DelegationTokensImage;
}

export class MetadataImage implements MetadataImageParts {
  static readonly EMPTY: MetadataImage = new MetadataImage({
    provenance: EMPTY_PROVENANCE,
    features: FeaturesImage.EMPTY,
    cluster: ClusterImage.EMPTY,
    topics: TopicsImage.EMPTY,
    configs: ConfigurationsImage.EMPTY,
    clientQuotas: ClientQuotasImage.EMPTY,
    producerIds: ProducerIdsImage.EMPTY,
    acls: AclsImage.EMPTY,
    scram: ScramImage.EMPTY,
    delegationTokens: DelegationTokensImage.EMPTY,
  });

  readonly provenance: MetadataProvenance;
  readonly features: FeaturesImage;
  readonly cluster: ClusterImage;
  readonly topics: TopicsImage;
  readonly configs: ConfigurationsImage;
  readonly clientQuotas: ClientQuotasImage;
  readonly producerIds: ProducerIdsImage;
  readonly acls: AclsImage;
  readonly scram: ScramImage;
  readonly delegationTokens: DelegationTokensImage;

  constructor(parts: MetadataImageParts) {
    this.provenance = parts.provenance;
    this.features = parts.features;
    this.cluster = parts.cluster;
    this.topics = parts.topics;
    this.configs = parts.configs;
    this.clientQuotas = parts.clientQuotas;
    this.producerIds = parts.producerIds;
    this.acls = parts.acls;
    this.scram = parts.scram;
    this.delegationTokens = parts.delegationTokens;
    Object.freeze(this);
  }

  /** True when the image holds no state (its provenance may still be set). */
  get isEmpty(): boolean {
    return this.features.isEmpty && this.cluster.isEmpty && this.topics.isEmpty && this.configs.isEmpty
      && this.clientQuotas.isEmpty && this.producerIds.isEmpty && this.acls.isEmpty && this.scram.isEmpty
      && this.delegationTokens.isEmpty;
  }

  get highestOffsetAndEpoch(): { offset: number; epoch: number } {
    return { offset: this.provenance.lastContainedOffset, epoch: this.provenance.lastContainedEpoch };
  }
}

/**
 * Records replayed on top of one image. Sub-deltas are created on first use, so `delta.topics` is
 * null when no topic record was replayed; publishers use that to skip work.
 */
export class MetadataDelta {
  features: FeaturesDelta | null = null;
  cluster: ClusterDelta | null = null;
  topics: TopicsDelta | null = null;
  configs: ConfigurationsDelta | null = null;
  clientQuotas: ClientQuotasDelta | null = null;
  producerIds: ProducerIdsDelta | null = null;
  acls: AclsDelta | null = null;
  scram: ScramDelta | null = null;
  delegationTokens: DelegationTokensDelta | null = null;
  /** Records replayed, including ignored ones. */
  recordCount = 0;

  constructor(readonly image: MetadataImage) {}

  private featuresDelta(): FeaturesDelta { return (this.features ??= new FeaturesDelta(this.image.features)); }
  private clusterDelta(): ClusterDelta { return (this.cluster ??= new ClusterDelta(this.image.cluster)); }
  private topicsDelta(): TopicsDelta { return (this.topics ??= new TopicsDelta(this.image.topics)); }
  private configsDelta(): ConfigurationsDelta { return (this.configs ??= new ConfigurationsDelta(this.image.configs)); }
  private quotasDelta(): ClientQuotasDelta { return (this.clientQuotas ??= new ClientQuotasDelta(this.image.clientQuotas)); }
  private producerIdsDelta(): ProducerIdsDelta { return (this.producerIds ??= new ProducerIdsDelta(this.image.producerIds)); }
  private aclsDelta(): AclsDelta { return (this.acls ??= new AclsDelta(this.image.acls)); }
  private scramDelta(): ScramDelta { return (this.scram ??= new ScramDelta(this.image.scram)); }
  private tokensDelta(): DelegationTokensDelta { return (this.delegationTokens ??= new DelegationTokensDelta(this.image.delegationTokens)); }

  replay(record: MetadataRecord): void {
    this.recordCount++;
    switch (record.type) {
      case MetadataRecordType.RegisterBrokerRecord: return this.clusterDelta().replayRegisterBroker(record.data);
      case MetadataRecordType.UnregisterBrokerRecord: return this.clusterDelta().replayUnregisterBroker(record.data);
      case MetadataRecordType.FenceBrokerRecord: return this.clusterDelta().replayFence(record.data);
      case MetadataRecordType.UnfenceBrokerRecord: return this.clusterDelta().replayUnfence(record.data);
      case MetadataRecordType.BrokerRegistrationChangeRecord: return this.clusterDelta().replayRegistrationChange(record.data);
      case MetadataRecordType.RegisterControllerRecord: return this.clusterDelta().replayRegisterController(record.data);
      case MetadataRecordType.TopicRecord: return this.topicsDelta().replayTopic(record.data);
      case MetadataRecordType.PartitionRecord: return this.topicsDelta().replayPartition(record.data);
      case MetadataRecordType.PartitionChangeRecord: return this.topicsDelta().replayPartitionChange(record.data);
      case MetadataRecordType.RemoveTopicRecord: {
        const name = this.topicsDelta().replayRemoveTopic(record.data);
        return this.configsDelta().deleteTopicConfigs(name);
      }
      case MetadataRecordType.ConfigRecord: return this.configsDelta().replay(record.data);
      case MetadataRecordType.FeatureLevelRecord: return this.featuresDelta().replay(record.data);
      case MetadataRecordType.ClientQuotaRecord: return this.quotasDelta().replay(record.data);
      case MetadataRecordType.ProducerIdsRecord: return this.producerIdsDelta().replay(record.data);
      case MetadataRecordType.AccessControlEntryRecord: return this.aclsDelta().replay(record.data);
      case MetadataRecordType.RemoveAccessControlEntryRecord: return this.aclsDelta().replayRemove(record.data);
      case MetadataRecordType.UserScramCredentialRecord: return this.scramDelta().replay(record.data);
      case MetadataRecordType.RemoveUserScramCredentialRecord: return this.scramDelta().replayRemove(record.data);
      case MetadataRecordType.DelegationTokenRecord: return this.tokensDelta().replay(record.data);
      case MetadataRecordType.RemoveDelegationTokenRecord: return this.tokensDelta().replayRemove(record.data);
      // Markers with no state: NoOp keeps the log moving, transactions (KIP-868) and the ZK
      // migration state do not change what a broker serves.
      case MetadataRecordType.NoOpRecord:
      case MetadataRecordType.BeginTransactionRecord:
      case MetadataRecordType.EndTransactionRecord:
      case MetadataRecordType.AbortTransactionRecord:
      case MetadataRecordType.ZkMigrationStateRecord:
        return;
      default: {
        const unknown: { type: number } = record;
        throw new MetadataError('UNKNOWN_RECORD_TYPE', `cannot replay metadata record type ${unknown.type}`);
      }
    }
  }

  /** The next image; every sub-image without changes is reused as is. */
  apply(next: MetadataProvenance): MetadataImage {
    const base = this.image;
    return new MetadataImage({
      provenance: next,
      features: this.features?.apply() ?? base.features,
      cluster: this.cluster?.apply() ?? base.cluster,
      topics: this.topics?.apply() ?? base.topics,
      configs: this.configs?.apply() ?? base.configs,
      clientQuotas: this.clientQuotas?.apply() ?? base.clientQuotas,
      producerIds: this.producerIds?.apply() ?? base.producerIds,
      acls: this.acls?.apply() ?? base.acls,
      scram: this.scram?.apply() ?? base.scram,
      delegationTokens: this.delegationTokens?.apply() ?? base.delegationTokens,
    });
  }
}
