// The replica manager: the partitions this broker hosts, the produce path (validate through the
// log, append, wait for the high watermark for acks=all) and the fetch path (read whole batches
// up to the high watermark, long-poll in the fetch purgatory until min_bytes or max_wait_ms).
// Followers fetch with their replica id: they read up to the log end offset, their fetch offset
// is their log end offset (which moves the high watermark and may add them to the ISR), and a
// divergent last fetched epoch is answered with the epoch's end (DivergingEpoch). ISR changes go
// to the controller through an IsrChangeChannel (AlterPartition); the ISR expiration task drops
// followers that stopped catching up for replica.lag.time.max.ms.
// It follows the cluster metadata through applyDelta (Kafka's ReplicaManager.applyDelta): each
// delta's local changes make partitions leaders or followers, or stop and delete them.
// Storage and records errors carry Kafka error names as codes; they become error codes here,
// per partition, and never escape as exceptions.
import { ErrorCode } from '../protocol/index.js';
import { BatchHeaderAt, buildControlBatch, convertLegacyMessageSet, iterateBatches, LOG_OVERHEAD_BYTES, RECORD_BATCH_HEADER_BYTES } from '../records/index.js';
import { StorageError } from '../storage/index.js';
import { type LocalPartitionChange, type MetadataDelta, type MetadataImage, type TopicPartitionRef } from '../metadata/index.js';
import { assert, limits, partitionKey as key, type Clock } from '../util/index.js';
import { Partition, type ActiveProducer, type AppendOrigin, type IsrEligibility, type IsrProposal, type LocalLog } from './partition.js';
import { NO_ISR_CHANGES, type IsrChangeChannel } from './alter-partition-manager.js';
import { ReplicaManagerStats } from './stats.js';
import { Purgatory, PurgatoryFullError, type Scheduler } from './purgatory.js';
import { NO_REPLICA_FETCHERS, type ReplicaFetchers } from './fetchers.js';
import type { ClientMetadata, ReplicaSelector, ReplicaView } from './replica-selector.js';
import type { ReplicationQuota } from './quota.js';
import type { RemoteLogManager, TopicIdPartition } from '../tiered/index.js';
import { schemaRecordCheck, type SchemaIdLookup, type SchemaValidation } from './schema-validation.js';

/** The leader replication throttle: the quota, and whether serving a partition to a replica counts against it. */
export interface LeaderThrottle {
  readonly quota: ReplicationQuota;
  isThrottled(p: Partition, replicaId: number): boolean;
}

export interface ReplicaManagerLimits {
  fetchPurgatoryOperationsMax: number;
  producePurgatoryOperationsMax: number;
}

/** A topic's configs as a partition applies them. */
export interface PartitionConfig {
  minInsyncReplicas: number;
  /** max.message.bytes (the partition keeps its current value when undefined). */
  maxMessageBytes: number | undefined;
  /** Broker-side schema validation (confluent.*.schema.validation); off when absent. */
  schemaValidation?: SchemaValidation | null;
  /** link.name: the cluster link this topic mirrors ('' or absent: not a mirror topic). */
  linkName?: string;
  /** link.epoch.base: added to the leader epoch written into batches and the leader-epoch cache (a promoted mirror topic). */
  epochBase?: number;
}

/** What applying a delta needs from the broker: its storage and its topic configs. */
export interface ReplicaDeltaPorts {
  /** Opens a partition's local log, creating it when absent. */
  openLog(topic: string, partition: number, topicId: string): Promise<LocalLog>;
  /** Deletes a partition's local data (its directory). */
  deleteLog(topic: string, partition: number): Promise<void>;
  /** The topic's min.insync.replicas and max.message.bytes as the metadata now has them. */
  topicConfig(topic: string): PartitionConfig;
}

/** What one delta did on this broker (Kafka's state-change log lines, as counts). */
export interface AppliedDelta {
  /** Replicas stopped and deleted. */
  deleted: number;
  /** Partitions made leader, or whose leader state (ISR) changed. */
  leaders: number;
  /** Partitions made follower, or following at a new partition epoch. */
  followers: number;
  /** Logs opened for partitions new to this broker. */
  opened: number;
  /** Partitions whose configs were re-applied. */
  reconfigured: number;
  /** Partitions the delta could not be applied to (their log would not open or delete). */
  failed: { topic: string; partition: number; error: unknown }[];
}

/** One delta being applied: the ports, what it did so far, and topic configs resolved once each. */
interface DeltaRun {
  readonly ports: ReplicaDeltaPorts;
  readonly applied: AppliedDelta;
  topicConfig(topic: string): PartitionConfig;
}

/** The metadata's leader id of a partition without a leader. */
const NO_LEADER_ID = -1;

function set<K, V>(map: Map<K, V>, k: K, v: V): V {
  map.set(k, v);
  return v;
}

export interface ProduceEntryIn {
  topic: string; partition: number; records: Buffer;
  /** Produce v0-2 with magic 0/1 messages: converted to RecordBatch v2 before the append. */
  legacyMessageSet?: boolean;
}
export interface ProduceResultOut {
  errorCode: number; errorMessage: string | null; baseOffset: bigint; logAppendTimeMs: bigint; logStartOffset: bigint;
  recordErrors: { batchIndex: number; batchIndexErrorMessage: string | null }[];
}
export interface FetchPartitionIn {
  topic: string; partition: number; fetchOffset: bigint; partitionMaxBytes: number; currentLeaderEpoch: number;
  /** Fetch v12+: the epoch of the follower's last fetched batch (-1: none, no divergence check). */
  lastFetchedEpoch?: number;
  /** The follower's log start offset (v5+). */
  logStartOffset?: bigint;
}
export interface FetchResultOut {
  errorCode: number; highWatermark: bigint; lastStableOffset: bigint; logStartOffset: bigint;
  abortedTransactions: { producerId: bigint; firstOffset: bigint }[] | null; preferredReadReplica: number; records: Buffer | null;
  /** A follower's log diverges from the leader's: truncate to this epoch's end, then fetch again. */
  divergingEpoch?: { epoch: number; endOffset: bigint };
}

/** How ISR changes are made: replica.lag.time.max.ms and the channel to the controller. */
export interface IsrOptions {
  readonly replicaLagTimeMaxMs: number;
  readonly channel: IsrChangeChannel;
}

const DEFAULT_ISR_OPTIONS: IsrOptions = { replicaLagTimeMaxMs: 30_000, channel: NO_ISR_CHANGES };

interface FetchReadParams {
  maxBytes: number; isolationLevel: number; partitions: FetchPartitionIn[];
  /** -1 (or absent) for consumers; a broker id for a follower's fetch. */
  replicaId?: number;
  /** The follower's broker epoch (Fetch v15+ ReplicaState.ReplicaEpoch), -1 when not sent. */
  replicaEpoch?: bigint;
  /**
   * A consumer's Fetch v11+ (KIP-392): followers serve it up to their high watermark, and a leader
   * may answer it with a preferred read replica. Without it only the leader serves consumers.
   */
  clientMetadata?: ClientMetadata;
  /** Memory for the record bytes read (they live as long as the response); fresh buffers when absent. */
  alloc?: (bytes: number) => Buffer;
}

/** The last offset of the last whole batch in `records` (batch headers only). */
function lastOffsetIn(records: Buffer): number {
  let last = -1;
  for (let pos = 0; pos + RECORD_BATCH_HEADER_BYTES <= records.length;) {
    const len = records.readInt32BE(pos + BatchHeaderAt.BatchLength);
    if (pos + LOG_OVERHEAD_BYTES + len > records.length) break;
    last = Number(records.readBigInt64BE(pos + BatchHeaderAt.BaseOffset)) + records.readInt32BE(pos + BatchHeaderAt.LastOffsetDelta);
    pos += LOG_OVERHEAD_BYTES + len;
  }
  return last;
}

/** Size of the largest batch in `records`, from batch lengths alone (validation comes later). */
function largestBatchBytes(records: Buffer): number {
  let largest = 0;
  for (let pos = 0; pos + LOG_OVERHEAD_BYTES <= records.length;) {
    const size = records.readInt32BE(pos + BatchHeaderAt.BatchLength) + LOG_OVERHEAD_BYTES;
    if (size <= LOG_OVERHEAD_BYTES) return records.length; // malformed: let validation name the problem
    largest = Math.max(largest, size);
    pos += size;
  }
  return largest;
}

/**
 * A new leader's followers that have not fetched a partition from it yet may not know it leads it
 * (the metadata reaches brokers at different moments). A fetch of theirs is parked at most this
 * long meanwhile, so that the partition joins their fetch session within milliseconds of their
 * learning of it, not after replica.fetch.wait.max.ms (500 ms) of a fetch parked without it; the
 * first acks=all write after a failover waits for exactly that. Only for this long after the
 * leadership began: a follower that never fetches the partition stops costing polls.
 */
const NEW_LEADER_POLL_MS = 5;
const NEW_LEADER_WINDOW_MS = 5_000;

/** A follower's fetch carries its broker id as the replica id (consumers send -1). */
const isFollowerFetch = (params: FetchReadParams): boolean => (params.replicaId ?? -1) >= 0;

/** Maps a storage/records error (code = a Kafka error name) to its code. */
export function errorCodeOf(err: unknown): { code: number; message: string } {
  // RecordsError carries the Kafka error name as `code`, StorageError as `kind`.
  const e = err as { code?: unknown; kind?: unknown } | null;
  const name = typeof e?.kind === 'string' ? e.kind : e?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof name === 'string' && name in ErrorCode) return { code: ErrorCode[name as keyof typeof ErrorCode], message };
  return { code: ErrorCode.UNKNOWN_SERVER_ERROR, message };
}

const produceError = (code: number, message: string | null = null): ProduceResultOut =>
  ({ errorCode: code, errorMessage: message, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [] });
const fetchError = (code: number, p?: Partition): FetchResultOut => ({
  errorCode: code, highWatermark: BigInt(p?.highWatermark ?? -1), lastStableOffset: BigInt(p?.lastStableOffset ?? -1),
  logStartOffset: BigInt(p?.log.logStartOffset ?? -1), abortedTransactions: null, preferredReadReplica: -1, records: null,
});

export class ReplicaManager {
  private readonly partitions = new Map<string, Partition>();
  readonly fetchPurgatory: Purgatory<Partition>;
  readonly producePurgatory: Purgatory<Partition>;
  /** Whether KIP-966's strict min ISR holds here (eligible.leader.replicas.version >= 1 in the image). */
  private strictMinIsr = false;

  /** The feature turned on or off: every partition follows (off may release a held high watermark). */
  private setStrictMinIsr(on: boolean): void {
    this.strictMinIsr = on;
    for (const p of this.partitions.values()) {
      p.strictMinIsr = on;
      if (p.maybeAdvanceHighWatermark()) this.onHighWatermark(p);
    }
  }

  /** The latest metadata image applied: which brokers may join an ISR, at which epoch. */
  private image: MetadataImage | null = null;
  private isrExpiration: { cancel(): void } | null = null;
  /** leader.replication.throttled.* (none until the broker sets it). */
  leaderThrottle: LeaderThrottle | null = null;
  /** The schema registry's id lookup for topics with schema validation (the node sets it when it runs one). */
  schemaIds: SchemaIdLookup | null = null;
  /** Bytes and messages in and out per topic, ISR shrinks and expansions (read by /metrics). */
  readonly stats = new ReplicaManagerStats();
  /** Per follower id: partitions newly led here that it has not fetched yet, with when the leadership began. */
  private readonly unfetchedByFollower = new Map<number, Map<Partition, number>>();
  /** Per follower id: wakes its fetches parked in the fetch purgatory. */
  private readonly parkedFollowerFetches = new Map<number, Set<() => void>>();
  /**
   * This process's registration (its incarnation id), when the broker sets it. An image in which
   * this broker is registered under another incarnation (a process before a crash) or not at all
   * is not acted on as its leader: a restarted broker that replays metadata written before its
   * crash would otherwise lead again at the old leader epoch with a log that may have lost its
   * unflushed tail, and answer followers with DivergingEpoch down to it, erasing acknowledged
   * records they hold. The controller moves those leaderships away when the new incarnation
   * registers (or the old session expires); until then such a partition is a follower with no
   * leader. Kafka gets the same by publishing metadata to the replica manager only once the
   * broker has caught up past its own registration.
   */
  localIncarnationId: string | null = null;
  /** Partitions named led here before this process's registration was in the metadata (see takeDeferredLeaders). */
  private readonly deferredLeaders = new Map<string, LocalPartitionChange>();
  /**
   * Tiered storage (KIP-405), when the broker has it on: its copy and expiry tasks follow the
   * leaderships here, and consumer reads below a log's local start are served from the tier.
   */
  remoteLog: RemoteLogManager | null = null;
  /** remote.fetch.max.wait.ms: how long a fetch waits for a remote read before answering without it. */
  remoteFetchMaxWaitMs = 500;

  constructor(readonly brokerId: number, readonly clock: Clock, private readonly scheduler: Scheduler, limits: ReplicaManagerLimits,
    /** Where followers fetch from their leader (none fetches until the replication issue plugs one in). */
    readonly fetchers: ReplicaFetchers = NO_REPLICA_FETCHERS,
    readonly isrOptions: IsrOptions = DEFAULT_ISR_OPTIONS,
    /** replica.selector.class (KIP-392); null: consumers are never sent elsewhere. */
    readonly replicaSelector: ReplicaSelector | null = null) {
    this.fetchPurgatory = new Purgatory('fetch', scheduler, limits.fetchPurgatoryOperationsMax);
    this.producePurgatory = new Purgatory('produce', scheduler, limits.producePurgatoryOperationsMax);
  }

  partition(topic: string, index: number): Partition | undefined { return this.partitions.get(key(topic, index)); }
  allPartitions(): IterableIterator<Partition> { return this.partitions.values(); }
  addPartition(p: Partition): void { this.partitions.set(key(p.topic, p.index), p); }
  removePartition(topic: string, index: number): Partition | undefined {
    const p = this.partitions.get(key(topic, index));
    this.partitions.delete(key(topic, index));
    if (p) {
      // Whatever waits on it is answered now (with an error: it leads nothing any more), and the
      // purgatories stop keeping its key.
      p.stop();
      this.completeDelayedRequests(p);
      this.fetchPurgatory.forgetKey(p);
      this.producePurgatory.forgetKey(p);
    }
    return p;
  }

  // ---- Metadata deltas -----------------------------------------------------------------------

  /**
   * Brings this broker's replicas in line with one metadata delta, in Kafka's order: deletes
   * first (a topic deleted and re-created under the same name in one delta must lose its old data
   * before the new partition opens), then new leaders, then followers; then topic config changes.
   * Work is proportional to what the delta changed, not to the partitions hosted here. A partition
   * whose log fails to open or delete is reported in `failed`; the others are still applied.
   */
  async applyDelta(delta: MetadataDelta, image: MetadataImage, ports: ReplicaDeltaPorts): Promise<AppliedDelta> {
    const applied: AppliedDelta = { deleted: 0, leaders: 0, followers: 0, opened: 0, reconfigured: 0, failed: [] };
    this.image = image;
    if (image.features.elrEnabled !== this.strictMinIsr) this.setStrictMinIsr(image.features.elrEnabled);
    // Resolved once per topic and delta: a topic of 10,000 partitions resolves its configs once.
    const configs = new Map<string, PartitionConfig>();
    const run: DeltaRun = { ports, applied, topicConfig: (topic) => configs.get(topic) ?? set(configs, topic, ports.topicConfig(topic)) };
    const mayLead = this.localIncarnationId === null || image.cluster.broker(this.brokerId)?.incarnationId === this.localIncarnationId;
    const changes = delta.topics?.localChanges(this.brokerId);
    if (changes !== undefined) {
      for (const ref of changes.deletes) await this.stopReplica(ref, run);
      for (const change of mayLead ? changes.leaders : []) await this.becomeLeader(change, run);
      const notLed = mayLead ? [] : changes.leaders.map((c) => ({ ...c, registration: { ...c.registration, leader: NO_LEADER_ID } }));
      for (const c of notLed) this.deferredLeaders.set(key(c.topicName, c.partition), c);
      await this.becomeFollowers([...notLed, ...changes.followers], run);
    }
    // The registration may come in a delta without topic changes (it moved no leadership).
    if (mayLead && this.deferredLeaders.size > 0) await this.takeDeferredLeaders(changes?.leaders ?? [], changes?.followers ?? [], image, run);
    if (delta.configs !== null) this.applyConfigChanges(delta.configs.topicConfigChanges(this.brokerId), image, run);
    return applied;
  }

  /**
   * This process's registration is in the metadata now: the partitions it was named leader of
   * before (and passed over) are led here if the image as of the registration still says so (a
   * registration that replaced an earlier process's moved them away in the same batch; one with
   * no earlier registration, as a data directory from before registrations, did not).
   */
  private async takeDeferredLeaders(leaders: readonly LocalPartitionChange[], followers: readonly LocalPartitionChange[], image: MetadataImage, run: DeltaRun): Promise<void> {
    const changed = new Set([...leaders, ...followers].map((c) => key(c.topicName, c.partition)));
    const deferred = [...this.deferredLeaders];
    this.deferredLeaders.clear();
    for (const [k, c] of deferred) {
      if (changed.has(k)) continue;
      const registration = image.topics.getTopic(c.topicName)?.partitions.get(c.partition);
      if (registration === undefined || registration.leader !== this.brokerId || this.partitions.get(k) === undefined) continue;
      await this.becomeLeader({ ...c, registration }, run);
    }
  }

  /** Stop-replica with delete: the partition leaves this broker and its data is deleted. */
  private async stopReplica(ref: TopicPartitionRef, { ports, applied }: DeltaRun): Promise<void> {
    const p = this.removePartition(ref.topicName, ref.partition);
    if (p !== undefined) this.fetchers.removeFetcherForPartitions([p]);
    // Topic deletion deletes the partition's remote data too (in the background: it may be large).
    const tip = p === undefined ? null : topicIdPartitionOf(p);
    if (tip !== null && this.remoteLog !== null) {
      const rlm = this.remoteLog;
      rlm.onNotLeader(tip);
      rlm.onDeleted(tip).catch((e: unknown) => rlm.logWarning(`${ref.topicName}-${ref.partition}: remote data not deleted: ${e instanceof Error ? e.message : String(e)}`));
    }
    try {
      // Also when no Partition was open here: a log left on disk must not come back with a re-created topic.
      await ports.deleteLog(ref.topicName, ref.partition);
      applied.deleted++;
    } catch (error) {
      applied.failed.push({ topic: ref.topicName, partition: ref.partition, error });
    }
  }

  private async becomeLeader(change: LocalPartitionChange, run: DeltaRun): Promise<void> {
    const p = await this.getOrCreatePartition(change, run);
    if (p === undefined) return;
    const wasFollower = !p.isLeader;
    p.topicId = change.topicId;
    p.makeLeader(change.registration, this.clock.nowMs());
    if (wasFollower) this.fetchers.removeFetcherForPartitions([p]);
    this.updateTiering(p);
    this.onHighWatermark(p);
    if (wasFollower) this.expectFirstFetches(p);
    run.applied.leaders++;
  }

  /**
   * A partition newly led here: each follower's fetch parked now does not hold it, so it is
   * answered at once (the follower may already know and fetch again with the partition), and its
   * fetches park only briefly until it has fetched the partition (see NEW_LEADER_POLL_MS).
   */
  private expectFirstFetches(p: Partition): void {
    const nowMs = this.clock.nowMs();
    for (const id of p.replicas) {
      if (id === this.brokerId) continue;
      let unfetched = this.unfetchedByFollower.get(id);
      if (unfetched === undefined) this.unfetchedByFollower.set(id, unfetched = new Map());
      unfetched.set(p, nowMs);
      for (const wake of [...(this.parkedFollowerFetches.get(id) ?? [])]) wake();
    }
  }

  /** Whether follower `replicaId` may not know yet of a partition led here (and prunes what no longer counts). */
  private followerMayNotKnow(replicaId: number): boolean {
    const unfetched = this.unfetchedByFollower.get(replicaId);
    if (unfetched === undefined) return false;
    const nowMs = this.clock.nowMs();
    for (const [p, sinceMs] of unfetched) {
      if (!p.isLeader || nowMs - sinceMs > NEW_LEADER_WINDOW_MS || !p.replicas.includes(replicaId) || this.partitions.get(key(p.topic, p.index)) !== p) unfetched.delete(p);
    }
    if (unfetched.size === 0) this.unfetchedByFollower.delete(replicaId);
    return unfetched.size > 0;
  }

  /**
   * Followers: stop serving as leader, and (re)start fetching from the new leader where the leader
   * or its epoch changed (Kafka's applyLocalFollowersDelta). Waits on a partition that was led here
   * are answered now, with NOT_LEADER_OR_FOLLOWER.
   */
  private async becomeFollowers(changes: readonly LocalPartitionChange[], run: DeltaRun): Promise<void> {
    const toFetch: Partition[] = [];
    for (const change of changes) {
      const p = await this.getOrCreatePartition(change, run);
      if (p === undefined) continue;
      p.topicId = change.topicId;
      if (p.makeFollower(change.registration)) toFetch.push(p);
      this.updateTiering(p);
      this.completeDelayedRequests(p);
      run.applied.followers++;
    }
    if (toFetch.length === 0) return;
    this.fetchers.removeFetcherForPartitions(toFetch);
    // A partition without a leader has no one to fetch from until one is elected (a later delta).
    const withLeader = toFetch.filter((p) => p.leaderId >= 0);
    if (withLeader.length > 0) this.fetchers.addFetcherForPartitions(withLeader);
  }

  /** The hosted partition, or a new one on its opened log (leader and epoch set by the caller). */
  private async getOrCreatePartition(change: LocalPartitionChange, { ports, applied, topicConfig }: DeltaRun): Promise<Partition | undefined> {
    const existing = this.partitions.get(key(change.topicName, change.partition));
    if (existing !== undefined) return existing;
    let log: LocalLog;
    let config: PartitionConfig;
    try {
      log = await ports.openLog(change.topicName, change.partition, change.topicId);
      config = topicConfig(change.topicName);
    } catch (error) {
      applied.failed.push({ topic: change.topicName, partition: change.partition, error });
      return undefined;
    }
    applied.opened++;
    const p = new Partition(change.topicName, change.partition, log, -1, -1, this.brokerId, config.minInsyncReplicas, config.maxMessageBytes);
    p.schemaValidation = config.schemaValidation ?? null;
    p.linkName = config.linkName ?? '';
    p.epochBase = config.epochBase ?? 0;
    p.strictMinIsr = this.strictMinIsr;
    this.addPartition(p);
    return p;
  }

  /**
   * Topic config changes reach that topic's partitions here; a broker-level change (the cluster
   * default, resource '', or this broker's own) reaches every partition, resolved once per topic.
   */
  private applyConfigChanges(changed: { all: boolean; topics: string[] }, image: MetadataImage, { applied, topicConfig }: DeltaRun): void {
    const reconfigure = (p: Partition) => {
      let c: PartitionConfig;
      try {
        c = topicConfig(p.topic);
      } catch (error) {
        applied.failed.push({ topic: p.topic, partition: p.index, error });
        return;
      }
      p.minInsyncReplicas = c.minInsyncReplicas;
      // A lower min ISR may release a high watermark held under the strict min ISR rule.
      if (p.maybeAdvanceHighWatermark()) this.onHighWatermark(p);
      p.maxMessageBytes = c.maxMessageBytes ?? p.maxMessageBytes;
      this.updateTiering(p, true);
      p.schemaValidation = c.schemaValidation ?? null;
      p.linkName = c.linkName ?? '';
      p.epochBase = c.epochBase ?? 0;
      applied.reconfigured++;
    };
    if (changed.all) {
      for (const p of this.partitions.values()) reconfigure(p);
      return;
    }
    for (const name of changed.topics) {
      const topic = image.topics.getTopic(name);
      if (topic === undefined) continue; // deleted with its configs
      for (const index of topic.partitions.keys()) {
        const p = this.partitions.get(key(name, index));
        if (p !== undefined) reconfigure(p);
      }
    }
  }

  /**
   * Starts or stops the partition's tiered-storage tasks as its role and remote.storage.enable say
   * (the log's config is already the new one when a config change gets here). KIP-950: tiering
   * turned off with remote.log.delete.on.disable deletes the remote data.
   */
  private updateTiering(p: Partition, configChanged = false): void {
    const rlm = this.remoteLog;
    const log = p.log.tieredLog;
    const tip = topicIdPartitionOf(p);
    if (rlm === null || log === null || tip === null) return;
    if (log.remoteLogEnabled) {
      if (p.isLeader) rlm.onLeader({ topicIdPartition: tip, leaderEpoch: p.leaderEpoch, log });
      else rlm.onFollower({ topicIdPartition: tip, leaderEpoch: p.leaderEpoch, log });
      return;
    }
    rlm.onNotLeader(tip);
    if (configChanged && p.isLeader && !log.remoteLogEnabled && log.config.remoteLogDeleteOnDisable) {
      rlm.onRemoteStorageDisabled({ topicIdPartition: tip, leaderEpoch: p.leaderEpoch, log })
        .catch((e: unknown) => rlm.logWarning(`${p.topic}-${p.index}: remote data not deleted on disable: ${e instanceof Error ? e.message : String(e)}`));
    }
  }

  /** Answers what waits on `p` if it can complete now (a replica that no longer leads: with an error). */
  private completeDelayedRequests(p: Partition): void {
    this.producePurgatory.checkAndComplete(p);
    this.fetchPurgatory.checkAndComplete(p);
  }

  /**
   * The partition if this broker leads it. One the metadata has but this broker does not host is
   * NOT_LEADER_OR_FOLLOWER, as in Kafka's getPartitionOrError: also while a large delta is still
   * opening its log here (Metadata already lists it), and the client retries after a metadata refresh.
   */
  private leaderPartition(topic: string, index: number): Partition | number {
    const p = this.hostedPartition(topic, index);
    if (typeof p === 'number') return p;
    if (!p.isLeader) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    return p;
  }

  /** Appends each entry; the results are keyed by partitionKey(topic, partition). */
  async produce(acks: number, timeoutMs: number, entries: ProduceEntryIn[], origin: AppendOrigin = 'client'): Promise<Map<string, ProduceResultOut>> {
    const out = new Map<string, ProduceResultOut>();
    await Promise.all(entries.map(async (e) => {
      out.set(key(e.topic, e.partition), await this.appendOne(acks, timeoutMs, e, origin));
    }));
    return out;
  }

  /**
   * WriteTxnMarkers for one partition: a COMMIT or ABORT control batch for the producer, appended
   * as the coordinator (acks=all). Resolves with an error code.
   */
  async writeTxnMarker(topic: string, index: number, m: { producerId: bigint; producerEpoch: number; coordinatorEpoch: number; commit: boolean }, timeoutMs: number): Promise<number> {
    const records = buildControlBatch({
      type: m.commit ? 'COMMIT' : 'ABORT', producerId: Number(m.producerId), producerEpoch: m.producerEpoch, coordinatorEpoch: m.coordinatorEpoch,
      timestamp: this.clock.nowMs(),
    });
    const out = await this.appendOne(-1, timeoutMs, { topic, partition: index, records }, 'coordinator');
    return out.errorCode;
  }

  /** DescribeProducers: the producers with state in a partition led here. */
  activeProducers(topic: string, index: number): { errorCode: number; producers: ActiveProducer[] } {
    const p = this.leaderPartition(topic, index);
    if (typeof p === 'number') return { errorCode: p, producers: [] };
    return { errorCode: 0, producers: p.log.activeProducers() };
  }

  private async appendOne(acks: number, timeoutMs: number, e: ProduceEntryIn, origin: AppendOrigin): Promise<ProduceResultOut> {
    const p = this.leaderPartition(e.topic, e.partition);
    if (typeof p === 'number') return produceError(p);
    // A mirror topic holds the source cluster's records at the source's offsets; only its link writes.
    if (p.linkName !== '' && origin === 'client') {
      return produceError(ErrorCode.INVALID_REQUEST, `Topic ${p.topic} is a read-only mirror topic of cluster link ${p.linkName}; promote it (logline link promote ${p.topic}) to produce to it`);
    }
    if (acks === -1 && p.isr.length < p.minInsyncReplicas) {
      return produceError(ErrorCode.NOT_ENOUGH_REPLICAS, `ISR ${p.isr.length} is below min.insync.replicas ${p.minInsyncReplicas}`);
    }
    // Legacy messages have their size at the same place as a batch's length: one check for both.
    const tooLarge = largestBatchBytes(e.records);
    if (tooLarge > p.maxMessageBytes) {
      return produceError(ErrorCode.MESSAGE_TOO_LARGE, `batch of ${tooLarge} bytes exceeds max.message.bytes ${p.maxMessageBytes}`);
    }
    let records = e.records;
    if (e.legacyMessageSet) {
      const converted = await this.upConvert(p, records);
      if (!Buffer.isBuffer(converted)) return converted;
      records = converted;
    }
    let appended;
    try {
      // Only a client's records are validated against the registry (coordinators write their own).
      const check = p.schemaValidation !== null && origin === 'client' ? schemaRecordCheck(p.topic, p.schemaValidation, this.schemaIds) : null;
      // Validation may await (a compacted topic's keys, a schema check): the write happens only if
      // this broker still leads the partition at this epoch then. Otherwise the batch would land in
      // what is now a follower's log, past the offset its fetcher continues from, and every answer
      // from the new leader would fail to append there (NOT_CONTIGUOUS) for good.
      const epoch = p.leaderEpoch;
      const k = key(p.topic, p.index);
      appended = await p.log.appendAsLeader(records, p.logEpoch(epoch), origin, check, () => p.isLeader && p.leaderEpoch === epoch && this.partitions.get(k) === p);
    } catch (err) {
      const { code, message } = errorCodeOf(err);
      const failed = produceError(code, message);
      // KIP-467: which records made the batch fail, so a client can fail those and retry the rest.
      if (err instanceof StorageError) failed.recordErrors = err.recordErrors.map((r) => ({ batchIndex: r.batchIndex, batchIndexErrorMessage: r.message }));
      return failed;
    }
    p.bytesAppended += records.length;
    const counters = this.stats.topic(p.topic);
    counters.bytesIn += records.length;
    counters.messagesIn += appended.lastOffset - appended.firstOffset + 1;
    // Followers long-poll for what the leader appends; the high watermark moves only with them
    // (or at once for an ISR of one).
    if (p.maybeAdvanceHighWatermark()) this.onHighWatermark(p);
    else this.fetchPurgatory.checkAndComplete(p);
    const result: ProduceResultOut = {
      errorCode: 0, errorMessage: null, baseOffset: BigInt(appended.firstOffset), logAppendTimeMs: BigInt(appended.logAppendTimeMs),
      logStartOffset: BigInt(p.log.logStartOffset), recordErrors: [],
    };
    if (acks !== -1 || p.highWatermark > appended.lastOffset) return result;
    return new Promise((resolve) => {
      const op = {
        tryComplete: () => {
          // Leadership moved or the replica was stopped while waiting (Kafka answers the same).
          if (!p.isLeader) {
            resolve(produceError(ErrorCode.NOT_LEADER_OR_FOLLOWER));
            return true;
          }
          if (p.highWatermark <= appended.lastOffset) return false;
          // Kafka's checkEnoughReplicasReachOffset: replicated, but by fewer than min.insync.replicas.
          const isr = p.maximalIsr.length;
          resolve(isr < p.minInsyncReplicas
            ? produceError(ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, `ISR ${isr} fell below min.insync.replicas ${p.minInsyncReplicas} after the append`)
            : result);
          return true;
        },
        onExpiration: () => resolve(produceError(ErrorCode.REQUEST_TIMED_OUT)),
      };
      try {
        this.producePurgatory.tryCompleteElseWatch(op, [p], timeoutMs);
      } catch (err) {
        if (!(err instanceof PurgatoryFullError)) throw err;
        resolve(produceError(ErrorCode.REQUEST_TIMED_OUT, err.message));
      }
    });
  }

  /**
   * A legacy message set as one RecordBatch v2 (Kafka's LogValidator up-conversion), or the error
   * answer. The converted batch must fit max.message.bytes too, and the partition may have lost
   * its leadership while a wrapper was inflated.
   */
  private async upConvert(p: Partition, legacy: Buffer): Promise<Buffer | ProduceResultOut> {
    let batch: Buffer;
    try {
      batch = await convertLegacyMessageSet(legacy);
    } catch (err) {
      const { code, message } = errorCodeOf(err);
      return produceError(code, message);
    }
    if (batch.length > p.maxMessageBytes) {
      return produceError(ErrorCode.MESSAGE_TOO_LARGE, `converted batch of ${batch.length} bytes exceeds max.message.bytes ${p.maxMessageBytes}`);
    }
    if (!p.isLeader) return produceError(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    return batch;
  }

  /**
   * A mirror partition led here, as its link fetcher sees it: the log end offset and the source
   * leader epoch of the last batch (-1 when empty; read only `withLastEpoch`, it costs a read), or
   * an error code (not led here, not a mirror).
   */
  async mirrorState(topic: string, index: number, withLastEpoch = true): Promise<{ errorCode: number; logEndOffset: number; lastEpoch: number; logStartOffset: number; highWatermark: number }> {
    const p = this.mirrorPartition(topic, index);
    if (typeof p === 'number') return { errorCode: p, logEndOffset: -1, lastEpoch: -1, logStartOffset: -1, highWatermark: -1 };
    const leo = p.log.logEndOffset;
    let lastEpoch = -1;
    if (withLastEpoch && leo > p.log.logStartOffset) {
      // The last batch's own epoch (the source's), read from its header: the leader-epoch cache
      // also holds the epochs this broker led the partition in.
      const bytes = await p.log.read(leo - 1, 1, leo, true);
      for (const v of iterateBatches(bytes, { allowPartialTail: true })) lastEpoch = v.partitionLeaderEpoch;
    }
    return { errorCode: 0, logEndOffset: leo, lastEpoch, logStartOffset: p.log.logStartOffset, highWatermark: p.highWatermark };
  }

  /**
   * The link fetcher's append: the source cluster's batches as they are (offsets, producer ids,
   * timestamps and leader epochs kept), through the follower-append path, at this log's end; then
   * the high watermark moves as for any leader append (the ISR inside this cluster replicates it).
   */
  appendMirrored(topic: string, index: number, records: Buffer): { errorCode: number; errorMessage: string | null; logEndOffset: number } {
    const p = this.mirrorPartition(topic, index);
    if (typeof p === 'number') return { errorCode: p, errorMessage: null, logEndOffset: -1 };
    try {
      const before = p.log.logEndOffset;
      p.log.appendAsFollower(records);
      const added = p.log.logEndOffset - before;
      if (added > 0) {
        p.bytesAppended += records.length;
        const counters = this.stats.topic(p.topic);
        counters.bytesIn += records.length;
        counters.messagesIn += added;
      }
    } catch (err) {
      const { code, message } = errorCodeOf(err);
      return { errorCode: code, errorMessage: message, logEndOffset: p.log.logEndOffset };
    }
    if (p.maybeAdvanceHighWatermark()) this.onHighWatermark(p);
    else this.fetchPurgatory.checkAndComplete(p);
    return { errorCode: 0, errorMessage: null, logEndOffset: p.log.logEndOffset };
  }

  /** The source truncated (a new source leader without our tail): the mirror's log follows it down. */
  truncateMirrored(topic: string, index: number, offset: number): number {
    const p = this.mirrorPartition(topic, index);
    if (typeof p === 'number') return p;
    // Below the high watermark would take back what consumers here may have read; the source only
    // answers up to its own high watermark, so only an unclean election there gets here.
    if (offset < p.highWatermark) return ErrorCode.OFFSET_OUT_OF_RANGE;
    if (offset < p.log.logEndOffset) p.log.truncateTo(offset);
    return ErrorCode.NONE;
  }

  /** The source's log starts past this mirror's end (retention there): restart the mirror's log at it. */
  restartMirroredAt(topic: string, index: number, offset: number): number {
    const p = this.mirrorPartition(topic, index);
    if (typeof p === 'number') return p;
    p.log.truncateFullyAndStartAt(offset);
    return ErrorCode.NONE;
  }

  private mirrorPartition(topic: string, index: number): Partition | number {
    const p = this.leaderPartition(topic, index);
    if (typeof p === 'number') return p;
    if (p.linkName === '') return ErrorCode.INVALID_REQUEST;
    return p;
  }

  /** The high watermark moved: wake acks=all producers and fetchers of this partition. */
  onHighWatermark(p: Partition): void {
    this.completeDelayedRequests(p);
  }

  /**
   * Reads for a Fetch; record bytes go into `params.alloc`'s memory when given (see FetchParams).
   * A follower's first read records its progress (Kafka updates fetch state on the first read
   * only, not when a parked fetch completes).
   */
  async fetch(params: FetchReadParams & { maxWaitMs: number; minBytes: number }): Promise<FetchResultOut[]> {
    const first = await this.readAll(params, true);
    let bytes = 0;
    for (const r of first) {
      if (r.errorCode !== 0 || r.divergingEpoch !== undefined || r.preferredReadReplica >= 0) return first;
      bytes += r.records?.length ?? 0;
    }
    if (params.maxWaitMs <= 0 || bytes >= params.minBytes || params.partitions.length === 0) return first;
    // Not enough yet: wait until what was there plus the bytes appended since make up min_bytes.
    // No error above means every partition is hosted here (led, or followed for a KIP-392 consumer).
    const watched = params.partitions.map((fp) => this.partitions.get(key(fp.topic, fp.partition))!);
    const leading = watched.map((p) => p.isLeader);
    const startBytes = watched.map((p) => p.bytesAppended);
    // A follower reads up to the log end offset, so every append counts. A consumer reads below
    // the high watermark (read_committed: the LSO): appends count once that bound has moved (else
    // every append would wake the fetch just to answer nothing).
    const follower = isFollowerFetch(params);
    const committedOnly = params.isolationLevel === 1;
    const bound = (p: Partition) => committedOnly ? p.lastStableOffset : p.highWatermark;
    const startBound = follower ? [] : watched.map(bound);
    // A new leader's follower that has not fetched its new partition yet, and a throttled follower,
    // are parked only briefly.
    const maxWaitMs = Math.min(params.maxWaitMs, this.leaderThrottleWaitMs(watched, params),
      follower && this.followerMayNotKnow(params.replicaId!) ? NEW_LEADER_POLL_MS : Infinity);
    return new Promise((resolve, reject) => {
      let settled = false;
      let woken = false;
      const parked = follower ? this.parkedFollowerFetches.get(params.replicaId!) ?? set(this.parkedFollowerFetches, params.replicaId!, new Set()) : null;
      const wake = () => { woken = true; this.fetchPurgatory.checkAndComplete(watched[0]!); };
      const finish = () => {
        if (settled) return;
        settled = true;
        parked?.delete(wake);
        this.readAll(params, false).then(resolve, reject);
      };
      const op = {
        tryComplete: () => {
          if (woken) {
            finish();
            return true;
          }
          let available = bytes;
          for (let i = 0; i < watched.length; i++) {
            const p = watched[i]!;
            // A partition that changed role or left this broker: answer now, the read gives its error.
            if (p.isLeader !== leading[i] || this.partitions.get(key(p.topic, p.index)) !== p) {
              finish();
              return true;
            }
            if (follower || bound(p) > startBound[i]!) {
              // A follower replica serving a consumer (KIP-392) may have had the bytes before its
              // high watermark reached them: a moved high watermark is news enough to answer.
              if (!leading[i]) {
                finish();
                return true;
              }
              available += p.bytesAppended - startBytes[i]!;
            }
          }
          if (available < params.minBytes) return false;
          finish();
          return true;
        },
        onExpiration: finish,
      };
      try {
        if (!this.fetchPurgatory.tryCompleteElseWatch(op, watched, maxWaitMs)) parked?.add(wake);
      } catch (err) {
        if (!(err instanceof PurgatoryFullError)) { reject(err); return; }
        finish();
      }
    });
  }

  private async readAll(params: FetchReadParams, updateFetchState: boolean): Promise<FetchResultOut[]> {
    let budget = params.maxBytes;
    let anyData = false;
    let remoteReads = 0;
    const follower = isFollowerFetch(params);
    const results: FetchResultOut[] = new Array(params.partitions.length);
    for (let i = 0; i < params.partitions.length; i++) {
      const fp = params.partitions[i]!;
      // Most partitions of a long-lived fetch session have nothing new: answer those without a
      // promise, so an idle partition costs a few comparisons.
      const checked = follower ? this.checkFollowerFetch(fp, params.replicaId!, params.replicaEpoch ?? -1n) : this.checkFetch(fp, params.clientMetadata !== undefined);
      const preferred = !follower && checked instanceof Partition && params.clientMetadata !== undefined
        ? this.preferredReadReplica(checked, params.clientMetadata, Number(fp.fetchOffset)) : -1;
      let r: FetchResultOut;
      if (preferred >= 0) {
        // Kafka skips the read: the consumer is to fetch from the preferred replica instead.
        r = { ...this.fetchAnswer(checked as Partition, null, params.isolationLevel), preferredReadReplica: preferred };
      } else if (checked instanceof Partition) {
        const leaderEndOffset = checked.log.logEndOffset;
        const upTo = follower ? leaderEndOffset : params.isolationLevel === 1 ? checked.lastStableOffset : checked.highWatermark;
        // KIP-74: the first partition with data returns at least one whole batch, even past max_bytes.
        let maxBytes = Math.min(fp.partitionMaxBytes, Math.max(0, budget));
        const offset = Number(fp.fetchOffset);
        // Kafka's shouldLeaderThrottle: a throttled partition served to a replica outside the ISR
        // gets what the leader quota allows now, nothing when it is used up.
        const throttled = follower && this.isLeaderThrottled(checked, params.replicaId!);
        const allowance = throttled ? this.leaderThrottle!.quota.allowance(this.clock.nowMs()) : Infinity;
        if (throttled) maxBytes = Math.min(maxBytes, allowance);
        const wanted = offset < upTo && (maxBytes > 0 || (!anyData && allowance > 0));
        const leaderEpoch = checked.leaderEpoch;
        // Kafka's minOneMessage: only until some partition returned data does a batch larger
        // than what is left come whole; after that the answer stays within max_bytes.
        const readBytes = !anyData ? Math.max(1, maxBytes) : maxBytes;
        // Below the local log start: a consumer is served from the remote tier; a follower is told
        // to rebuild from it (Kafka's OFFSET_MOVED_TO_TIERED_STORAGE) and fetch from the local start.
        const remote = offset < checked.log.localLogStartOffset;
        if (remote && follower) r = fetchError(ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE, checked);
        else if (remote && wanted && remoteReads++ < limits.remotePartitionsPerFetchMax) r = await this.readRemote(checked, offset, readBytes, upTo, !anyData, params.isolationLevel);
        else if (remote) r = this.fetchAnswer(checked, null, params.isolationLevel);
        else r = wanted ? await this.readOne(checked, offset, readBytes, upTo, !anyData, params.isolationLevel, params.alloc) : this.fetchAnswer(checked, null, params.isolationLevel);
        if (throttled) this.leaderThrottle!.quota.record(r.records?.length ?? 0, this.clock.nowMs());
        // A metadata delta may have moved the leadership (or the replica set) while the read was
        // awaited: what the follower fetched then no longer counts, and it asks again.
        if (follower && r.errorCode === 0 && (!checked.isLeader || checked.leaderEpoch !== leaderEpoch || !checked.followers.has(params.replicaId!))) {
          r = fetchError(ErrorCode.NOT_LEADER_OR_FOLLOWER, checked);
        }
        if (follower && updateFetchState && r.errorCode === 0) {
          this.updateFollowerFetchState(checked, params.replicaId!, params.replicaEpoch ?? -1n, fp, leaderEndOffset);
          this.unfetchedByFollower.get(params.replicaId!)?.delete(checked);
        }
      } else {
        r = checked;
      }
      if (r.records && r.records.length > 0) {
        budget -= r.records.length;
        anyData = true;
        if (!follower && checked instanceof Partition) this.stats.topic(checked.topic).bytesOut += r.records.length;
      }
      results[i] = r;
    }
    return results;
  }

  /**
   * A follower fetch that got nothing for a throttled partition because the leader quota is used
   * up waits only until the quota allows bytes again (then reads again), not the whole max wait:
   * an idle partition would otherwise hold the throttled copy up for replica.fetch.wait.max.ms.
   */
  private leaderThrottleWaitMs(watched: readonly Partition[], params: FetchReadParams): number {
    if (!isFollowerFetch(params) || this.leaderThrottle === null || !this.leaderThrottle.quota.isThrottling) return Infinity;
    if (!watched.some((p) => this.isLeaderThrottled(p, params.replicaId!))) return Infinity;
    const delayMs = this.leaderThrottle.quota.delayMs(this.clock.nowMs());
    return delayMs > 0 ? delayMs : Infinity;
  }

  private isLeaderThrottled(p: Partition, replicaId: number): boolean {
    const t = this.leaderThrottle;
    return t !== null && t.quota.isThrottling && !p.isr.includes(replicaId) && t.isThrottled(p, replicaId);
  }

  /**
   * The partition to read, or the error answer: unknown, not the leader, a stale epoch, an offset
   * out of range. With `fromFollower` (a KIP-392 consumer) a follower replica serves too, and a
   * partition the metadata has but this broker does not host is NOT_LEADER_OR_FOLLOWER (Kafka's
   * answer to a consumer whose preferred replica moved away), so the consumer goes back to the leader.
   */
  private checkFetch(fp: FetchPartitionIn, fromFollower = false): Partition | FetchResultOut {
    const p = fromFollower ? this.hostedPartition(fp.topic, fp.partition) : this.leaderPartition(fp.topic, fp.partition);
    if (typeof p === 'number') return fetchError(p);
    if (fp.currentLeaderEpoch >= 0 && fp.currentLeaderEpoch !== p.leaderEpoch) {
      return fetchError(fp.currentLeaderEpoch > p.leaderEpoch ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.FENCED_LEADER_EPOCH, p);
    }
    const offset = Number(fp.fetchOffset);
    if (offset < p.log.logStartOffset || offset > p.log.logEndOffset) return fetchError(ErrorCode.OFFSET_OUT_OF_RANGE, p);
    return p;
  }

  private hostedPartition(topic: string, index: number): Partition | number {
    const p = this.partitions.get(key(topic, index));
    if (p !== undefined) return p;
    return this.image?.topics.getTopic(topic)?.partitions.has(index) === true ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  }

  /**
   * Kafka's findPreferredReadReplica, on the leader: the candidates are the leader and the ISR
   * followers whose logs hold `fetchOffset` and that have an unfenced registration with an endpoint
   * on the consumer's listener (the replica's rack comes from it). -1 when the selector picks the
   * leader or there is no selector.
   */
  private preferredReadReplica(p: Partition, client: ClientMetadata, fetchOffset: number): number {
    if (this.replicaSelector === null || !p.isLeader) return -1;
    const rackOf = (id: number): string | null | undefined => {
      const b = this.image?.cluster.broker(id);
      return b === undefined || b.fenced || !b.endpoints.some((e) => e.name === client.listenerName) ? undefined : b.rack;
    };
    const nowMs = this.clock.nowMs();
    const leader: ReplicaView = { brokerId: this.brokerId, rack: rackOf(this.brokerId) ?? null, logEndOffset: p.log.logEndOffset, timeSinceLastCaughtUpMs: 0 };
    const replicas: ReplicaView[] = [leader];
    for (const f of p.followers.values()) {
      if (!p.isr.includes(f.brokerId) || f.logEndOffset < fetchOffset || f.logStartOffset > fetchOffset) continue;
      const rack = rackOf(f.brokerId);
      if (rack === undefined) continue; // no endpoint for the consumer to go to
      replicas.push({ brokerId: f.brokerId, rack, logEndOffset: f.logEndOffset, timeSinceLastCaughtUpMs: nowMs - f.lastCaughtUpTimeMs });
    }
    const selected = this.replicaSelector.select(client, { leader, replicas });
    return selected === null || selected.brokerId === this.brokerId ? -1 : selected.brokerId;
  }

  /**
   * A follower's fetch (Kafka's Partition.fetchRecords from a follower): it must be a replica and
   * not send an older broker epoch than its registration's (NOT_LEADER_OR_FOLLOWER); when its last fetched
   * epoch ends earlier on this leader than where it fetches from (or that epoch is unknown here)
   * the answer is the epoch's end, for it to truncate to, before the offset range is checked.
   */
  private checkFollowerFetch(fp: FetchPartitionIn, replicaId: number, replicaEpoch: bigint): Partition | FetchResultOut {
    const p = this.leaderPartition(fp.topic, fp.partition);
    if (typeof p === 'number') return fetchError(p);
    if (fp.currentLeaderEpoch >= 0 && fp.currentLeaderEpoch !== p.leaderEpoch) {
      return fetchError(fp.currentLeaderEpoch > p.leaderEpoch ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.FENCED_LEADER_EPOCH, p);
    }
    if (p.checkFollower(replicaId, replicaEpoch, this.aliveBrokerEpoch(replicaId)) !== null) return fetchError(ErrorCode.NOT_LEADER_OR_FOLLOWER, p);
    const offset = Number(fp.fetchOffset);
    const lastFetchedEpoch = fp.lastFetchedEpoch ?? -1;
    if (lastFetchedEpoch >= 0) {
      const end = this.lastOffsetForLeaderEpoch(p, lastFetchedEpoch);
      if (end === null) return fetchError(ErrorCode.OFFSET_OUT_OF_RANGE, p);
      if (end.leaderEpoch < lastFetchedEpoch || end.endOffset < offset) {
        return { ...this.fetchAnswer(p, null, 0), divergingEpoch: { epoch: end.leaderEpoch, endOffset: BigInt(end.endOffset) } };
      }
    }
    if (offset < p.log.logStartOffset || offset > p.log.logEndOffset) return fetchError(ErrorCode.OFFSET_OUT_OF_RANGE, p);
    return p;
  }

  /** Where `epoch` ends on this leader's log: the current epoch at the log end offset, older ones where the next began. */
  private lastOffsetForLeaderEpoch(p: Partition, epoch: number): { leaderEpoch: number; endOffset: number } | null {
    // (A mirror partition's epochs are the source's: only its cache knows them.)
    if (p.linkName === '' && epoch === p.logEpoch(p.leaderEpoch)) return { leaderEpoch: epoch, endOffset: p.log.logEndOffset };
    return p.log.endOffsetForEpoch(epoch);
  }

  /**
   * What a follower's fetch tells the leader: its log end offset, which may move the high
   * watermark (waking acks=all produces and consumers) and add it to the ISR.
   */
  private updateFollowerFetchState(p: Partition, replicaId: number, replicaEpoch: bigint, fp: FetchPartitionIn, leaderEndOffset: number): void {
    const nowMs = this.clock.nowMs();
    p.updateFollowerFetchState(replicaId, replicaEpoch, Number(fp.fetchOffset), Number(fp.logStartOffset ?? -1n), nowMs, leaderEndOffset);
    const proposal = p.maybeExpandIsr(replicaId, this.isrEligibility);
    if (proposal !== null) this.submitIsrChange(proposal);
    if (p.maybeAdvanceHighWatermark()) this.onHighWatermark(p);
  }

  // ---- ISR changes -----------------------------------------------------------------------------

  /** The registration's epoch of an unfenced broker in the latest image (Kafka's getAliveBrokerEpoch). */
  private aliveBrokerEpoch(brokerId: number): bigint | undefined {
    const b = this.image?.cluster.broker(brokerId);
    return b === undefined || b.fenced ? undefined : b.epoch;
  }

  /** Kafka's isReplicaIsrEligible, from the latest image: registered, unfenced, not shutting down. */
  private readonly isrEligibility: IsrEligibility = (brokerId) => {
    if (this.image === null) return -1n; // no metadata yet (a leader built by hand): nothing to refuse on
    const b = this.image.cluster.broker(brokerId);
    return b === undefined || b.fenced || b.inControlledShutdown ? undefined : b.epoch;
  };

  private submitIsrChange(proposal: IsrProposal): void {
    const p = proposal.partition;
    this.isrOptions.channel.submit(proposal, (result) => {
      // Kafka marks IsrShrinksPerSec/IsrExpandsPerSec when the controller accepts the change, whether
      // the answer or the metadata reaches the partition first: a new partition epoch at our leader epoch.
      if (result.errorCode === ErrorCode.NONE && result.leaderEpoch === proposal.leaderEpoch && result.partitionEpoch > proposal.partitionEpoch) {
        if (proposal.pending.kind === 'shrink') this.stats.isrShrinks++;
        else this.stats.isrExpands++;
      }
      if (p.handleIsrChangeResult(proposal.pending, result, { ineligible: [ErrorCode.INELIGIBLE_REPLICA, ErrorCode.OPERATION_NOT_ATTEMPTED] })) {
        if (p.maybeAdvanceHighWatermark()) this.onHighWatermark(p);
        else this.producePurgatory.checkAndComplete(p);
      }
    });
  }

  /**
   * Kafka's isr-expiration task: every partition led here drops the ISR followers that have not
   * caught up within replica.lag.time.max.ms. Returns how many partitions proposed a shrink.
   */
  maybeShrinkIsr(): number {
    const nowMs = this.clock.nowMs();
    let proposed = 0;
    for (const p of this.partitions.values()) {
      if (!p.isLeader || p.isr.length <= 1) continue;
      const proposal = p.maybeShrinkIsr(nowMs, this.isrOptions.replicaLagTimeMaxMs);
      if (proposal === null) continue;
      this.submitIsrChange(proposal);
      proposed++;
    }
    return proposed;
  }

  /** Runs maybeShrinkIsr every replica.lag.time.max.ms / 2 on `scheduler` until stopIsrExpiration. */
  startIsrExpiration(scheduler: Scheduler = this.scheduler): void {
    const periodMs = Math.max(1, Math.floor(this.isrOptions.replicaLagTimeMaxMs / 2));
    const tick = () => {
      this.maybeShrinkIsr();
      this.isrExpiration = scheduler.schedule(periodMs, tick);
    };
    this.stopIsrExpiration();
    this.isrExpiration = scheduler.schedule(periodMs, tick);
  }

  stopIsrExpiration(): void {
    this.isrExpiration?.cancel();
    this.isrExpiration = null;
  }

  private async readOne(p: Partition, offset: number, maxBytes: number, upTo: number, minOneBatch: boolean, isolationLevel: number, alloc?: (bytes: number) => Buffer): Promise<FetchResultOut> {
    let records: Buffer | null = null;
    try {
      const read = await p.log.read(offset, maxBytes, upTo, minOneBatch, alloc);
      assert(minOneBatch || read.length <= maxBytes, `fetch read ${read.length} bytes past its ${maxBytes}-byte limit`);
      records = read.length > 0 ? read : null;
    } catch (err) {
      return fetchError(errorCodeOf(err).code, p);
    }
    return this.fetchAnswer(p, records, isolationLevel, offset);
  }
  /**
   * A follower below its leader's local log start (the fetcher's restoreFromRemoteTier port): the
   * log restarts at `localStart` with the epochs and producer state the tier holds. False while
   * the tier's metadata here does not know the segment yet.
   */
  async restoreFromRemoteTier(p: Partition, localStart: number, logStart: number): Promise<boolean> {
    const rlm = this.remoteLog;
    const log = p.log.tieredLog;
    const tip = topicIdPartitionOf(p);
    if (rlm === null || log === null || tip === null) return false;
    const aux = await rlm.remoteLogAuxState(tip, localStart, logStart);
    if (aux === null || p.isLeader) return false;
    log.restoreFromRemoteTier(localStart, logStart, aux.epochs, aux.producerSnapshot);
    return true;
  }

  /**
   * A consumer's read from the remote tier (Kafka's DelayedRemoteFetch): the bytes come through the
   * chunked reader off the event loop; a read slower than remote.fetch.max.wait.ms is answered
   * without records (the consumer asks again, and finds the chunks cached). read_committed gets the
   * aborted transactions of the remote transaction indexes.
   */
  private async readRemote(p: Partition, offset: number, maxBytes: number, upTo: number, minOneBatch: boolean, isolationLevel: number): Promise<FetchResultOut> {
    const rlm = this.remoteLog;
    const log = p.log.tieredLog;
    const tip = topicIdPartitionOf(p);
    if (rlm === null || log === null || tip === null) return fetchError(ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE, p);
    let timer: { cancel(): void } | null = null;
    try {
      const read = rlm.read(tip, log, offset, maxBytes, upTo, minOneBatch).then(async (records) => {
        const aborted = isolationLevel === 1 && records.length > 0 ? await rlm.abortedTransactions(tip, log, offset, lastOffsetIn(records) + 1) : [];
        return { records, aborted };
      });
      const timeout = new Promise<null>((resolve) => { timer = this.scheduler.schedule(this.remoteFetchMaxWaitMs, () => resolve(null)); });
      const done = await Promise.race([read, timeout]);
      read.catch(() => undefined);
      if (done === null) return this.fetchAnswer(p, null, isolationLevel);
      const answer = this.fetchAnswer(p, done.records.length > 0 ? done.records : null, 0, offset);
      return isolationLevel === 1 ? { ...answer, abortedTransactions: done.aborted.map((t) => ({ producerId: BigInt(t.producerId), firstOffset: BigInt(t.firstOffset) })) } : answer;
    } catch (err) {
      return fetchError(errorCodeOf(err).code, p);
    } finally {
      (timer as { cancel(): void } | null)?.cancel();
    }
  }

  private fetchAnswer(p: Partition, records: Buffer | null, isolationLevel: number, offset = 0): FetchResultOut {
    // The aborted transactions overlapping what is returned, so the client can drop their records.
    let abortedTransactions: FetchResultOut['abortedTransactions'] = null;
    if (isolationLevel === 1) {
      abortedTransactions = records === null ? [] : p.log.abortedTransactions(offset, lastOffsetIn(records) + 1)
        .map((t) => ({ producerId: BigInt(t.producerId), firstOffset: BigInt(t.firstOffset) }));
    }
    return {
      errorCode: 0, highWatermark: p.wire.highWatermark.of(p.highWatermark), lastStableOffset: p.wire.lastStableOffset.of(p.lastStableOffset),
      logStartOffset: p.wire.logStartOffset.of(p.log.logStartOffset), abortedTransactions, preferredReadReplica: -1, records,
    };
  }

  /**
   * ListOffsets on the leader. `replicaId` -1 is a consumer (latest = the high watermark, or the
   * last stable offset for read_committed); a replica or a debugging client (-2) gets the log end
   * offset, as Kafka answers them (a follower out of range compares its log end with the leader's).
   */
  async listOffsets(topic: string, index: number, timestamp: bigint, currentLeaderEpoch: number, isolationLevel = 0, replicaId = -1): Promise<{ errorCode: number; timestamp: bigint; offset: bigint; leaderEpoch: number }> {
    const p = this.leaderPartition(topic, index);
    if (typeof p === 'number') return { errorCode: p, timestamp: -1n, offset: -1n, leaderEpoch: -1 };
    if (currentLeaderEpoch >= 0 && currentLeaderEpoch !== p.leaderEpoch) {
      const code = currentLeaderEpoch > p.leaderEpoch ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.FENCED_LEADER_EPOCH;
      return { errorCode: code, timestamp: -1n, offset: -1n, leaderEpoch: -1 };
    }
    const ok = (offset: number, ts = -1, epoch = p.leaderEpoch) => ({ errorCode: 0, timestamp: BigInt(ts), offset: BigInt(offset), leaderEpoch: epoch });
    const end = replicaId !== -1 ? p.log.logEndOffset : isolationLevel === 1 ? p.lastStableOffset : p.highWatermark;
    switch (timestamp) {
      case -1n: return ok(end);
      case -2n: return ok(p.log.logStartOffset);
      // KIP-405/KIP-1005: the first offset on local disk, and the highest offset copied to the tier.
      case -4n: return ok(p.log.localLogStartOffset);
      case -5n: {
        const log = p.log.tieredLog;
        const highest = log?.remoteLogEnabled === true ? log.highestOffsetInRemoteStorage : -1;
        return highest < 0 ? ok(-1, -1, -1) : ok(highest, -1, log!.epochCache.epochForOffset(highest));
      }
      case -3n: {
        const m = await p.log.maxTimestampOffset();
        return m ? ok(m.offset, m.timestamp, m.leaderEpoch) : ok(-1, -1, -1);
      }
      default: {
        // A tiered log looks in the remote tier first: its oldest records are only there.
        const tiered = await this.remoteOffsetForTimestamp(p, Number(timestamp));
        if (typeof tiered === 'number') return { errorCode: tiered, timestamp: -1n, offset: -1n, leaderEpoch: -1 };
        if (tiered !== null && tiered.offset < end) return ok(tiered.offset, tiered.timestamp, tiered.leaderEpoch);
        const found = await p.log.offsetForTimestamp(Number(timestamp));
        return found && found.offset < end ? ok(found.offset, found.timestamp, found.leaderEpoch) : { errorCode: 0, timestamp: -1n, offset: -1n, leaderEpoch: -1 };
      }
    }
  }

  /** ListOffsets by timestamp below the local log start (the remote tier), or null; an error code when the tier fails. */
  private async remoteOffsetForTimestamp(p: Partition, timestampMs: number): Promise<{ offset: number; timestamp: number; leaderEpoch: number } | number | null> {
    const rlm = this.remoteLog;
    const log = p.log.tieredLog;
    const tip = topicIdPartitionOf(p);
    if (rlm === null || log === null || tip === null || log.logStartOffset >= log.localLogStartOffset) return null;
    try {
      return await rlm.offsetForTimestamp(tip, log, timestampMs);
    } catch (err) {
      return errorCodeOf(err).code;
    }
  }

  /** DeleteRecords: -1 means "up to the high watermark"; beyond it is OFFSET_OUT_OF_RANGE. */
  async deleteRecords(topic: string, index: number, offset: bigint): Promise<{ errorCode: number; lowWatermark: bigint }> {
    const p = this.leaderPartition(topic, index);
    if (typeof p === 'number') return { errorCode: p, lowWatermark: -1n };
    const target = offset === -1n ? p.highWatermark : Number(offset);
    if (target < 0 || target > p.highWatermark) return { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, lowWatermark: BigInt(p.log.logStartOffset) };
    try {
      return { errorCode: 0, lowWatermark: BigInt(await p.log.deleteRecordsBefore(Math.max(target, p.log.logStartOffset))) };
    } catch (err) {
      return { errorCode: errorCodeOf(err).code, lowWatermark: BigInt(p.log.logStartOffset) };
    }
  }

  /** OffsetForLeaderEpoch: where `leaderEpoch` ended on this leader's log, for follower truncation. */
  offsetForLeaderEpoch(topic: string, index: number, currentLeaderEpoch: number, leaderEpoch: number): { errorCode: number; leaderEpoch: number; endOffset: bigint } {
    const p = this.leaderPartition(topic, index);
    if (typeof p === 'number') return { errorCode: p, leaderEpoch: -1, endOffset: -1n };
    if (currentLeaderEpoch >= 0 && currentLeaderEpoch !== p.leaderEpoch) {
      return { errorCode: currentLeaderEpoch > p.leaderEpoch ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.FENCED_LEADER_EPOCH, leaderEpoch: -1, endOffset: -1n };
    }
    // The current epoch ends at the log end offset; older ones where the next epoch began.
    if (p.linkName === '' && leaderEpoch === p.logEpoch(p.leaderEpoch)) return { errorCode: 0, leaderEpoch, endOffset: BigInt(p.log.logEndOffset) };
    const found = p.log.endOffsetForEpoch(leaderEpoch);
    return found ? { errorCode: 0, leaderEpoch: found.leaderEpoch, endOffset: BigInt(found.endOffset) } : { errorCode: 0, leaderEpoch: -1, endOffset: -1n };
  }
}

/** The partition as tiered storage names it (null before its topic id is known). */
function topicIdPartitionOf(p: Partition): TopicIdPartition | null {
  return p.topicId === undefined || p.topicId === '' ? null : { topicId: p.topicId, topic: p.topic, partition: p.index };
}
