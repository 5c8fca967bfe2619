// Kafka's TopicBasedRemoteLogMetadataManager: remote log metadata events are records of the internal
// topic `__remote_log_metadata`, each in the partition Kafka's RemoteLogMetadataTopicPartitioner
// picks for its user partition; every broker replays the partitions it can read into its
// RemotePartitionMetadataStore, and a leader's publish returns once its own event has been replayed
// here (Kafka's waitTillConsumptionCatchesUp), so what it copied next sees what it copied before.
// The topic is reached through a port: the node appends through its replica manager (acks=all) or
// to the partition's leader, and reads this broker's replica of each partition up to its high
// watermark, or the leader's when it hosts none.
import { iterateBatches, readRecords } from '../records/index.js';
import { murmur2 } from '../util/index.js';
import { RemoteLogMetadataError, RemoteLogMetadataWaitError } from './errors.js';
import { RemotePartitionMetadataStore } from './metadata-cache.js';
import { decodeRemoteLogMetadata, encodeRemoteLogMetadata } from './metadata-records.js';
import type { RemoteLogMetadataEvent, TopicIdPartition } from './segment-metadata.js';

export const REMOTE_LOG_METADATA_TOPIC = '__remote_log_metadata';

/** Kafka's TopicBasedRemoteLogMetadataManagerConfig defaults (read under rlmm.config.). */
export const REMOTE_LOG_METADATA_TOPIC_DEFAULTS = { numPartitions: 50, replicationFactor: 3, retentionMs: -1, consumeWaitMs: 120_000 } as const;

/** What the metadata manager needs of `__remote_log_metadata` (the node implements it). */
export interface RemoteLogMetadataTopic {
  /** Appends one record (key null, `value`) to the partition, creating the topic when needed; resolves with its offset once committed. */
  append(partition: number, value: Buffer): Promise<number>;
  /** Whole batches of this broker's replica from `offset` below its high watermark; null when this broker has no replica of it. */
  read(partition: number, offset: number, maxBytes: number): Promise<{ records: Buffer; endOffset: number } | null>;
  /**
   * Whether this broker hosts a replica of the partition. The periodic poll reads only those; the
   * others (read over the network) are caught up when a task or a publish needs them.
   */
  isLocal?(partition: number): boolean;
}

export interface MetadataManagerLogger { warn(message: string): void }

const READ_BYTES = 1024 * 1024;

/** Kafka's RemoteLogMetadataTopicPartitioner: murmur2 of Java's Objects.hash(lsb, msb, partition) as 4 big-endian bytes. */
export function metadataPartitionFor(p: TopicIdPartition, numPartitions: number): number {
  const id = Buffer.from(p.topicId, 'base64url');
  const msb = id.readBigInt64BE(0);
  const lsb = id.readBigInt64BE(8);
  // Long.hashCode: (int) (v ^ (v >>> 32)).
  const longHash = (v: bigint): number => Number(BigInt.asIntN(32, v ^ (BigInt.asUintN(64, v) >> 32n)));
  let h = 1;
  for (const x of [longHash(lsb), longHash(msb), p.partition]) h = (Math.imul(31, h) + x) | 0;
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(h);
  return (murmur2(bytes) & 0x7fffffff) % numPartitions;
}

export class RemoteLogMetadataManager {
  readonly store = new RemotePartitionMetadataStore();
  /** Per metadata partition: the next offset to replay. */
  private readonly nextOffsets: number[];
  /** Per metadata partition: the replay running, so two never interleave. */
  private readonly running: (Promise<void> | null)[];
  /** Events refused by the store (logged and dropped, as Kafka does). */
  refusedEvents = 0;
  private closed = false;
  /** Rejects once close() is called: every wait on the topic races it, so a close never waits on a write or read that cannot finish (a broker going down). */
  private readonly closedSignal: Promise<never>;
  private signalClosed!: (e: Error) => void;

  /**
   * `consumeWaitMs` is Kafka's remote.log.metadata.consume.wait.ms: how long a publish waits for its
   * own event to be replayed here before it fails (the caller retries its task later).
   */
  constructor(
    private readonly topic: RemoteLogMetadataTopic, readonly numPartitions: number, private readonly logger: MetadataManagerLogger,
    private readonly consumeWaitMs: number = REMOTE_LOG_METADATA_TOPIC_DEFAULTS.consumeWaitMs,
  ) {
    this.nextOffsets = new Array<number>(numPartitions).fill(0);
    this.running = new Array<Promise<void> | null>(numPartitions).fill(null);
    this.closedSignal = new Promise<never>((_resolve, reject) => { this.signalClosed = reject; });
    this.closedSignal.catch(() => {});
  }

  /** Fails every publish and replay in flight and every later one (the broker is shutting down). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.signalClosed(new RemoteLogMetadataWaitError('closed', 'the remote log metadata manager is closed'));
  }

  private unlessClosed<T>(p: Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new RemoteLogMetadataWaitError('closed', 'the remote log metadata manager is closed'));
    return Promise.race([p, this.closedSignal]);
  }

  metadataPartition(p: TopicIdPartition): number { return metadataPartitionFor(p, this.numPartitions); }

  /** Writes the event and resolves once this broker's store holds it. */
  async publish(event: RemoteLogMetadataEvent): Promise<void> {
    const tip = event.kind === 'segment' ? event.metadata.remoteLogSegmentId.topicIdPartition
      : event.kind === 'segment-update' ? event.update.remoteLogSegmentId.topicIdPartition : event.metadata.topicIdPartition;
    const partition = this.metadataPartition(tip);
    const offset = await this.unlessClosed(this.topic.append(partition, encodeRemoteLogMetadata(event)));
    const deadline = performance.now() + this.consumeWaitMs;
    while (this.nextOffsets[partition]! <= offset) {
      const before = this.nextOffsets[partition]!;
      await this.catchUp(partition);
      if (this.nextOffsets[partition] !== before) continue;
      if (performance.now() >= deadline) {
        throw new RemoteLogMetadataWaitError('timeout', `${REMOTE_LOG_METADATA_TOPIC}-${partition}: offset ${offset} not replayed within remote.log.metadata.consume.wait.ms (${this.consumeWaitMs} ms)`);
      }
      // The write is committed; a replica that reads nothing new yet (its high watermark behind) is asked again shortly.
      await this.unlessClosed(new Promise((r) => setTimeout(r, 10)));
    }
  }

  /** Replays the new records of every partition this broker hosts (a poll of Kafka's consumer task). */
  async poll(): Promise<void> {
    await Promise.all(this.nextOffsets.map((_o, p) => (this.topic.isLocal?.(p) ?? true ? this.catchUp(p) : undefined)));
  }

  /** Replays the partition's records up to what this broker's replica holds below its high watermark. */
  catchUp(partition: number): Promise<void> {
    const running = this.running[partition];
    if (running !== null && running !== undefined) return running.then(() => this.catchUp(partition));
    const run = this.replayPartition(partition).finally(() => { this.running[partition] = null; });
    this.running[partition] = run;
    return run;
  }

  private async replayPartition(partition: number): Promise<void> {
    for (;;) {
      const from = this.nextOffsets[partition]!;
      const read = await this.unlessClosed(this.topic.read(partition, from, READ_BYTES));
      if (read === null || read.records.length === 0) return;
      let next = from;
      for (const batch of iterateBatches(read.records, { allowPartialTail: true })) {
        if (batch.lastOffset < from) continue;
        if (!batch.isControl) {
          for (const r of await readRecords(batch)) if (r.offset >= from && r.value !== null) this.apply(r.value);
        }
        next = batch.lastOffset + 1;
      }
      if (next === from) return;
      this.nextOffsets[partition] = next;
    }
  }

  private apply(value: Buffer): void {
    try {
      this.store.replay(decodeRemoteLogMetadata(value));
    } catch (e) {
      if (!(e instanceof RemoteLogMetadataError)) throw e;
      this.refusedEvents++;
      this.logger.warn(`__remote_log_metadata: event dropped: ${e.message}`);
    }
  }

  /** Where replay of the partition stands (tests, metrics). */
  nextOffset(partition: number): number { return this.nextOffsets[partition]!; }
}
