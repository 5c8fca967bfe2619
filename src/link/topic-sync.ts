// A link's mirror topics follow their source topics' shape and settings while they are mirrors:
// partitions added at the source (CreatePartitions there) are added here, checked every
// `metadata.max.age.ms` of the link (Confluent's cluster links refresh the source's metadata on
// that property too), and the source topics' own settings of `SYNCED_TOPIC_CONFIGS` are copied
// every `topic.config.sync.ms` (Confluent's name and default). One node per link runs it (the
// one leading the link's first mirror partition, as for the group offset sync).
import { ApiKey, ErrorCode } from '../protocol/index.js';
import { KafkaError, type ClusterClient, type ClusterClientOptions } from '../client/index.js';
import { LinkBackgroundTask } from './background-task.js';
import type { Logger } from '../util/index.js';

/**
 * The topic configs a mirror topic takes from its source topic (the ones of Confluent's "always
 * synced" list that Logline has): how long and how records are kept, compacted, compressed and
 * stamped. A key the source topic does not set is removed here too (the target's default then
 * applies). `link.name`, `link.epoch.base` and every other key are never touched, so settings of
 * the target's own (replication, tiered storage, min.insync.replicas, ...) stay its own.
 */
export const SYNCED_TOPIC_CONFIGS: readonly string[] = [
  'cleanup.policy', 'compression.type', 'delete.retention.ms', 'max.compaction.lag.ms', 'max.message.bytes',
  'message.timestamp.after.max.ms', 'message.timestamp.before.max.ms', 'message.timestamp.type',
  'min.cleanable.dirty.ratio', 'min.compaction.lag.ms', 'retention.bytes', 'retention.ms',
];

/**
 * The IncrementalAlterConfigs operations (0 SET, 1 DELETE) that make a mirror topic's own configs
 * (`mirror`) match its source topic's own (`source`) on SYNCED_TOPIC_CONFIGS, touching no other key.
 */
export function mirrorConfigChanges(source: ReadonlyMap<string, string>, mirror: ReadonlyMap<string, string>): { name: string; configOperation: 0 | 1; value: string | null }[] {
  const out: { name: string; configOperation: 0 | 1; value: string | null }[] = [];
  for (const key of SYNCED_TOPIC_CONFIGS) {
    const v = source.get(key);
    if (v !== undefined && mirror.get(key) !== v) out.push({ name: key, configOperation: 0, value: v });
    else if (v === undefined && mirror.has(key)) out.push({ name: key, configOperation: 1, value: null });
  }
  return out;
}

// DescribeConfigsResponse.ConfigSource: a topic's own setting.
const DYNAMIC_TOPIC_CONFIG = 1;
const TOPIC_RESOURCE = 2;

export interface TopicSyncIntervals {
  /** How often the source's partition counts are compared (the link's metadata.max.age.ms). */
  metadataMaxAgeMs: number;
  /** How often the source topics' configs are copied (the link's topic.config.sync.ms). */
  configSyncMs: number;
}

export class TopicSync extends LinkBackgroundTask {
  private topics: string[] = [];
  private lastPartitionCheck = -Infinity;
  private lastConfigSync = -Infinity;

  constructor(link: string, source: ClusterClient, targetOptions: ClusterClientOptions, private readonly intervals: TopicSyncIntervals, logger: Logger) {
    super(link, source, targetOptions, logger, { name: 'topic sync', clientSuffix: 'topics' });
  }

  setTopics(topics: readonly string[]): void { this.topics = [...topics].sort(); }

  protected tickMs(): number { return Math.max(100, Math.min(this.intervals.metadataMaxAgeMs, this.intervals.configSyncMs)); }

  protected async round(): Promise<void> {
    if (this.topics.length === 0) return;
    const now = Date.now();
    const target = this.targetClient();
    if (now - this.lastPartitionCheck >= this.intervals.metadataMaxAgeMs) {
      await this.syncPartitions(target);
      this.lastPartitionCheck = now;
    }
    if (now - this.lastConfigSync >= this.intervals.configSyncMs) {
      await this.syncConfigs(target);
      this.lastConfigSync = now;
    }
  }

  /** Grows each mirror topic to its source topic's partition count (never shrinks: Kafka cannot). */
  private async syncPartitions(target: ClusterClient): Promise<void> {
    const topics = this.topics;
    const [src, here] = await Promise.all([this.source.metadata(topics), target.metadata(topics)]);
    const hereCount = new Map(here.filter((t) => t.errorCode === 0).map((t) => [t.name, t.partitions.length]));
    for (const s of src) {
      const n = hereCount.get(s.name);
      if (this.stopped || s.errorCode !== 0 || n === undefined || s.partitions.length <= n) continue;
      const r = await target.admin(ApiKey.CreatePartitions, { topics: [{ name: s.name, count: s.partitions.length, assignments: null }], timeoutMs: 30_000, validateOnly: false }, 3);
      const res = r.results[0];
      // Another round (or another node after a leadership move) may have grown it already.
      if (res.errorCode !== ErrorCode.NONE && res.errorCode !== ErrorCode.INVALID_PARTITIONS) throw new KafkaError(res.errorCode, res.errorMessage ?? `CreatePartitions ${s.name}`);
      if (res.errorCode === ErrorCode.NONE) this.logger.info(`link ${this.link}: mirror topic ${s.name} grown from ${n} to ${s.partitions.length} partitions as its source topic`);
    }
  }

  /** Copies the source topics' own values of SYNCED_TOPIC_CONFIGS; removes those the source does not set. */
  private async syncConfigs(target: ClusterClient): Promise<void> {
    const describe = async (client: ClusterClient) => {
      const r = await client.admin(ApiKey.DescribeConfigs, {
        resources: this.topics.map((n) => ({ resourceType: TOPIC_RESOURCE, resourceName: n, configurationKeys: [...SYNCED_TOPIC_CONFIGS] })), includeSynonyms: false, includeDocumentation: false,
      }, 4);
      const out = new Map<string, Map<string, string>>();
      for (const res of r.results) {
        if (res.errorCode !== 0) continue;
        out.set(res.resourceName, new Map(res.configs.filter((c: any) => c.configSource === DYNAMIC_TOPIC_CONFIG && c.value !== null).map((c: any) => [c.name, c.value])));
      }
      return out;
    };
    const [src, here] = await Promise.all([describe(this.source), describe(target)]);
    const resources = [];
    for (const [topic, own] of here) {
      const wanted = src.get(topic);
      if (wanted === undefined) continue; // not at the source (any more), or unreadable: left as it is
      const configs = mirrorConfigChanges(wanted, own);
      if (configs.length > 0) resources.push({ resourceType: TOPIC_RESOURCE, resourceName: topic, configs });
    }
    if (resources.length === 0 || this.stopped) return;
    const r = await target.admin(ApiKey.IncrementalAlterConfigs, { resources, validateOnly: false }, 1);
    for (const res of r.responses) {
      if (res.errorCode !== 0) this.logger.warn(`link ${this.link}: configs of mirror topic ${res.resourceName} not synced: ${res.errorMessage ?? `error ${res.errorCode}`}`);
      else this.logger.info(`link ${this.link}: configs of mirror topic ${res.resourceName} synced from its source topic`);
    }
  }
}
