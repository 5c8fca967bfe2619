// A test backend for the broker: metadata kept in a table (applying the controller's records the
// way the metadata image will) and partition logs in memory. It lets the network, handlers and
// replica manager be tested with real clients while the storage engine is built separately.
import { Prng, systemClock } from '../../src/util/index.js';
import { realScheduler } from '../../src/replication/index.js';
import type { MetadataSource, MetadataView, TopicView, BrokerDeps } from '../../src/broker/index.js';
import { FakeLog } from '../replication/fake-log-helpers.js';

export class MemoryMetadata implements MetadataSource {
  endpoint = { nodeId: 1, host: '127.0.0.1', port: 0, rack: null as string | null };
  private topics = new Map<string, TopicView>();
  private listeners: (() => void)[] = [];

  view(): MetadataView {
    const topics = [...this.topics.values()];
    return {
      clusterId: 'memory-cluster', controllerId: 1,
      brokers: () => [this.endpoint],
      topics: () => topics,
      topic: (name) => topics.find((t) => t.name === name),
      topicById: (id) => topics.find((t) => t.id === id),
    };
  }

  async commit(records: { type: number; data: Record<string, any> }[]): Promise<void> {
    for (const r of records) {
      if (r.type === 2) this.topics.set(r.data.topicId, { name: r.data.name, id: r.data.topicId, isInternal: false, partitions: [] });
      else if (r.type === 3) {
        const t = this.topics.get(r.data.topicId)!;
        t.partitions = [...t.partitions, { partition: r.data.partitionId, leader: r.data.leader, leaderEpoch: r.data.leaderEpoch, replicas: r.data.replicas, isr: r.data.isr, offlineReplicas: [] }];
      } else if (r.type === 9) this.topics.delete(r.data.topicId);
    }
    for (const l of this.listeners) l();
  }

  onChange(listener: () => void): void { this.listeners.push(listener); }
}

export function memoryBackend(metadata = new MemoryMetadata(), overrides: Partial<BrokerDeps> = {}): Omit<BrokerDeps, 'nodeId' | 'clock'> & { metadata: MemoryMetadata } {
  void systemClock;
  return {
    scheduler: realScheduler,
    prng: new Prng(1),
    metadata,
    openLog: async () => new FakeLog(),
    topicDefaults: { numPartitions: 1, defaultReplicationFactor: 1, partitionsPerRequestMax: 100_000 },
    validateTopicConfigs: () => null,
    autoCreateTopicsEnable: true,
    minInsyncReplicas: () => 1,
    fetchSessionCacheSlots: 1000,
    ...overrides,
  } as Omit<BrokerDeps, 'nodeId' | 'clock'> & { metadata: MemoryMetadata };
}
