// The cluster metadata of a single node as a log: controller records are appended to
// `__cluster_metadata-0` (a partition log on Kafka's layout, records framed as in KRaft), fsynced,
// and only then replayed into the MetadataImage the broker reads. At start the whole log is
// replayed, so topics, partitions and configs survive restarts and nothing else stores them.
// This is a quorum of one without the Raft machinery: the Raft room's driver will take the log
// over when there are several controllers.
import {
  MetadataDelta, MetadataImage, MetadataLoader, MetadataRecordType, bootstrapFeatureLevels, deserializeMetadataRecord, metadataRecord,
  metadataRecordName, provenance, serializeMetadataRecord, type MetadataBatch, type MetadataRecord,
} from '../metadata/index.js';
import { buildRecordBatchSync, decompressBatchBody, iterateBatches, iterateRecords } from '../records/index.js';
import type { PartitionLog } from '../storage/index.js';
import { isInternalTopic, METADATA_TOPIC_NAME, type EmittedRecord } from '../controller/index.js';
import type { MetadataSource } from './broker.js';
import type { BrokerEndpoint, MetadataView, PartitionView, TopicView } from './services.js';

export const METADATA_TOPIC = METADATA_TOPIC_NAME;
/** The epoch batches are written in: a quorum of one never changes leader. */
const METADATA_EPOCH = 0;

export class LogMetadata implements MetadataSource {
  /** This broker's endpoint, known once it listens (broker registration is not a record yet). */
  endpoint: BrokerEndpoint = { nodeId: 1, host: '127.0.0.1', port: 0, rack: null };
  private readonly loader = new MetadataLoader();
  private readonly listeners: (() => void)[] = [];
  private committing: Promise<void> = Promise.resolve();
  private cached: { image: MetadataImage; endpoint: BrokerEndpoint; view: MetadataView } | null = null;

  private constructor(private readonly log: PartitionLog, readonly clusterId: string) {}

  /** Replays every batch of the log into the image. */
  static async open(log: PartitionLog, clusterId: string): Promise<LogMetadata> {
    const m = new LogMetadata(log, clusterId);
    const batches: MetadataBatch[] = [];
    let offset = log.logStartOffset;
    while (offset < log.logEndOffset) {
      const bytes = log.read(offset, 1 << 20, log.logEndOffset);
      if (bytes.length === 0) break;
      for (const v of iterateBatches(bytes)) {
        const records: MetadataRecord[] = [];
        if (!v.isControl) {
          for (const r of iterateRecords(v, await decompressBatchBody(v))) {
            if (r.value === null) throw new Error(`metadata record at offset ${r.offset} has no value`);
            records.push(deserializeMetadataRecord(r.value));
          }
        }
        if (records.length > 0) batches.push({ baseOffset: v.baseOffset, epoch: v.partitionLeaderEpoch, appendTimestampMs: v.maxTimestamp, records });
        offset = v.lastOffset + 1;
      }
    }
    m.loader.handleCommit(batches);
    log.updateHighWatermark(log.logEndOffset);
    // A new cluster's metadata begins with its feature levels (Kafka's bootstrap metadata); a
    // cluster whose log predates them keeps none (transaction.version 0), as an upgraded Kafka does.
    if (log.logEndOffset === 0) {
      await m.commit(bootstrapFeatureLevels().map((data) => ({ type: MetadataRecordType.FeatureLevelRecord, version: 0, data: { ...data } })));
    }
    return m;
  }

  get image(): MetadataImage { return this.loader.image; }

  view(): MetadataView {
    const image = this.loader.image;
    if (this.cached?.image !== image || this.cached.endpoint !== this.endpoint) this.cached = { image, endpoint: this.endpoint, view: this.viewOf(image) };
    return this.cached.view;
  }

  private viewOf(image: MetadataImage): MetadataView {
    const toView = (t: { name: string; id: string; partitions: ReadonlyMap<number, { leader: number; leaderEpoch: number; replicas: readonly number[]; isr: readonly number[] }> }): TopicView => ({
      name: t.name, id: t.id, isInternal: isInternalTopic(t.name),
      partitions: [...t.partitions].sort(([a], [b]) => a - b).map(([partition, p]): PartitionView => ({
        partition, leader: p.leader, leaderEpoch: p.leaderEpoch, replicas: [...p.replicas], isr: [...p.isr], offlineReplicas: [],
      })),
    });
    const topics = [...image.topics.topicsById.values()].map(toView);
    const byName = new Map(topics.map((t) => [t.name, t]));
    const byId = new Map(topics.map((t) => [t.id, t]));
    const endpoint = this.endpoint;
    return {
      clusterId: this.clusterId, controllerId: endpoint.nodeId,
      brokers: () => [endpoint],
      topics: () => topics,
      topic: (name) => byName.get(name),
      topicById: (id) => byId.get(id),
      configs: (type, name) => new Map(image.configs.configs(type, name)),
      features: () => ({
        epoch: image.features.isEmpty ? -1n : BigInt(image.provenance.lastContainedOffset), levels: image.features.finalizedVersions,
      }),
    };
  }

  /**
   * Appends the records as one batch, fsyncs it, then applies it. The records are replayed into a
   * throwaway delta first: a record the image would refuse must never reach the log, or every
   * later start would fail on it.
   */
  commit(records: EmittedRecord[]): Promise<void> {
    const run = this.committing.then(() => this.commitNow(records));
    this.committing = run.catch(() => {});
    return run;
  }

  private async commitNow(emitted: EmittedRecord[]): Promise<void> {
    if (emitted.length === 0) return;
    const records = emitted.map((r) => metadataRecord(metadataRecordName(r.type), r.data as never, r.version) as MetadataRecord);
    const trial = new MetadataDelta(this.loader.image);
    for (const r of records) trial.replay(r);
    trial.apply(provenance(this.log.logEndOffset + records.length - 1, METADATA_EPOCH, -1));
    const batch = buildRecordBatchSync({ records: records.map((r) => ({ key: null, value: serializeMetadataRecord(r) })) });
    const appended = await this.log.appendAsLeader(batch, METADATA_EPOCH, 'coordinator');
    // KRaft fsyncs the metadata log before a record counts as committed.
    this.log.flush();
    this.log.updateHighWatermark(this.log.logEndOffset);
    this.loader.handleCommit([{ baseOffset: appended.firstOffset, epoch: METADATA_EPOCH, records }]);
    for (const l of this.listeners) l();
  }

  onChange(listener: () => void): void { this.listeners.push(listener); }

  nextProducerId(): bigint { return this.loader.image.producerIds.nextProducerId; }
}
