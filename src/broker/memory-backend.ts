// A non-durable backend for the broker: cluster metadata in a table (applying the controller's
// TopicRecord / PartitionRecord / RemoveTopicRecord as the metadata image does) and partition
// logs in memory. Tests that need no disk use it (startServer without a dataDir); nothing here
// survives a restart. The durable backend is disk-backend.ts.
import { Prng, limits } from '../util/index.js';
import { isInternalTopic } from '../controller/index.js';
import { parseBrokerConfig, resolveTopicConfig, validateTopicConfigs } from '../config/index.js';
import { MemoryLog, realScheduler } from '../replication/index.js';
import type { MetadataSource, BrokerDeps } from './broker.js';
import type { MetadataView, TopicView } from './services.js';
import { MetadataRecordType, bootstrapFeatureLevels } from '../metadata/index.js';

export class MemoryMetadata implements MetadataSource {
  endpoint = { nodeId: 1, host: '127.0.0.1', port: 0, rack: null as string | null };
  constructor(readonly clusterId = 'logline-memory') {}
  private topics = new Map<string, TopicView>();
  private readonly configsByResource = new Map<string, Map<string, string>>();
  private listeners: (() => void)[] = [];
  private producerIdsNext = -1n;
  /** A new cluster's feature levels; the epoch counts the commits that changed them. */
  private featureLevels = new Map(bootstrapFeatureLevels().map((f) => [f.name, f.featureLevel]));
  private featuresEpoch = 0n;
  nextProducerId(): bigint { return this.producerIdsNext; }

  view(): MetadataView {
    const topics = [...this.topics.values()];
    return {
      clusterId: this.clusterId, controllerId: this.endpoint.nodeId,
      brokers: () => [this.endpoint],
      topics: () => topics,
      topic: (name) => topics.find((t) => t.name === name),
      topicById: (id) => topics.find((t) => t.id === id),
      configs: (type, name) => new Map(this.configsByResource.get(`${type}:${name}`) ?? []),
      features: () => ({ epoch: this.featureLevels.size === 0 ? -1n : this.featuresEpoch, levels: new Map(this.featureLevels) }),
    };
  }

  async commit(records: { type: number; data: Record<string, any> }[]): Promise<void> {
    for (const r of records) {
      if (r.type === 2) this.topics.set(r.data.topicId, { name: r.data.name, id: r.data.topicId, isInternal: isInternalTopic(r.data.name), partitions: [] });
      else if (r.type === 3) {
        const t = this.topics.get(r.data.topicId)!;
        t.partitions = [...t.partitions, { partition: r.data.partitionId, leader: r.data.leader, leaderEpoch: r.data.leaderEpoch, replicas: r.data.replicas, isr: r.data.isr, offlineReplicas: [] }];
      } else if (r.type === 9) {
        const t = this.topics.get(r.data.topicId);
        if (t) this.configsByResource.delete(`2:${t.name}`);
        this.topics.delete(r.data.topicId);
      } else if (r.type === MetadataRecordType.FeatureLevelRecord) {
        if (r.data.featureLevel === 0) this.featureLevels.delete(r.data.name);
        else this.featureLevels.set(r.data.name, r.data.featureLevel);
        this.featuresEpoch++;
      } else if (r.type === 15) {
        this.producerIdsNext = BigInt(r.data.nextProducerId);
      } else if (r.type === 4) {
        const key = `${r.data.resourceType}:${r.data.resourceName}`;
        const map = this.configsByResource.get(key) ?? new Map<string, string>();
        if (r.data.value === null) map.delete(r.data.name);
        else map.set(r.data.name, r.data.value);
        this.configsByResource.set(key, map);
      }
    }
    for (const l of this.listeners) l();
  }

  onChange(listener: () => void): void { this.listeners.push(listener); }
}

export function memoryBackend(metadata = new MemoryMetadata(), overrides: Partial<BrokerDeps> = {}): Omit<BrokerDeps, 'nodeId' | 'clock'> & { metadata: MemoryMetadata } {
  const brokerConfig = overrides.brokerConfig ?? parseBrokerConfig({});
  return {
    scheduler: realScheduler,
    prng: new Prng(1),
    metadata,
    openLog: async () => new MemoryLog(),
    topicDefaults: { numPartitions: 1, defaultReplicationFactor: 1, partitionsPerRequestMax: limits.partitionsPerRequestMax },
    brokerConfig,
    validateTopicConfigs: (configs: Map<string, string | null>) => {
      const [problem] = validateTopicConfigs(configs);
      return problem ? { key: problem.name, message: problem.message } : null;
    },
    autoCreateTopicsEnable: brokerConfig.get('auto.create.topics.enable') as boolean,
    minInsyncReplicas: (topic: string) => resolveTopicConfig(metadata.view().configs(2, topic), brokerConfig).minInsyncReplicas,
    maxMessageBytes: (topic: string) => resolveTopicConfig(metadata.view().configs(2, topic), brokerConfig).maxMessageBytes,
    fetchSessionCacheSlots: 1000,
    ...overrides,
  } as unknown as Omit<BrokerDeps, 'nodeId' | 'clock'> & { metadata: MemoryMetadata };
}
