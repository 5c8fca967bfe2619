// Share groups' parts on a broker (KIP-932): the share coordinator over `__share_group_state`, the
// share-partition manager over the replica manager, the share sessions, and the per-group settings
// (the share.* group configs over their group.share.* broker defaults). The broker builds them
// here and hands them to the handlers; the share coordinator follows leadership like the other
// coordinators.
import { ErrorCode } from '../protocol/index.js';
import type { Clock } from '../util/index.js';
import { isoDurationMs, type BrokerConfig } from '../config/index.js';
import type { ReplicaManager, Scheduler } from '../replication/index.js';
import { ShareSessionCache, type MetadataView, type ShareStateSender, type ShareStateStore } from '../broker/index.js';
import {
  SHARE_STATE_TOPIC, ShareCoordinatorService, SharePartitionManager, replicaManagerLog, type RuntimeLogger, type ShareGroupSettings, type SharePartitionKey, type DeadLetterWriter,
} from '../coordinator/index.js';
import { buildRecordBatchSync } from '../records/index.js';

/** What the share-partition leaders and the group coordinator call, wherever the state is led. */
export type ShareStatePersister = ShareStateStore;

/**
 * A state call meeting a share coordinator that is loading, moving or unreachable is retried every
 * STATE_RETRY_BACKOFF_MS for up to STATE_RETRY_MS: long enough for the state partition's leader to
 * be replaced after a broker dies (broker.session.timeout.ms is 9 s), short of a client's request timeout.
 */
const STATE_RETRY_BACKOFF_MS = 50;
const STATE_RETRY_MS = 20_000;
const RETRIABLE = new Set<number>([
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NETWORK_EXCEPTION, ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
]);
const GROUP_RESOURCE = 32;
const TOPIC_RESOURCE = 2;
const BY_DURATION = 'by_duration:';

export interface ShareParts {
  coordinator: ShareCoordinatorService;
  /** The share coordinator's state wherever it is led: the share-partition leaders' and the group coordinator's way to it. */
  persister: ShareStatePersister;
  manager: SharePartitionManager;
  sessions: ShareSessionCache;
}

export interface SharePartsDeps {
  config: BrokerConfig;
  clock: Clock;
  scheduler: Scheduler;
  replicaManager: ReplicaManager;
  metadata(): MetadataView;
  ensureShareStateTopic(): Promise<number>;
  nodeId: number;
  /** The leader of a partition in the metadata; undefined while it has none. */
  leaderOf(topic: string, partition: number): number | undefined;
  /** The state RPCs to the share coordinator on another broker. */
  sender: ShareStateSender;
  /** Produce requests to other brokers (dead letters for a partition led elsewhere). */
  produceTo(nodeId: number, topic: string, partition: number, records: Buffer, timeoutMs: number): Promise<number>;
  logger: RuntimeLogger;
}

/** The group's share.* configs, each over its group.share.* broker default (Kafka's GroupConfig). */
export function shareGroupSettings(config: BrokerConfig, view: MetadataView, groupId: string): ShareGroupSettings {
  const overrides = view.configs(GROUP_RESOURCE, groupId);
  const num = (key: string, brokerKey: Parameters<BrokerConfig['get']>[0]) => Number(overrides.get(key) ?? config.get(brokerKey));
  const reset = overrides.get('share.auto.offset.reset') ?? 'latest';
  const byDurationMs = reset.startsWith(BY_DURATION) ? isoDurationMs(reset.slice(BY_DURATION.length)) : null;
  return {
    recordLockDurationMs: num('share.record.lock.duration.ms', 'group.share.record.lock.duration.ms'),
    deliveryCountLimit: num('share.delivery.count.limit', 'group.share.delivery.count.limit'),
    maxInFlightRecords: num('share.partition.max.record.locks', 'group.share.partition.max.record.locks'),
    autoOffsetReset: reset === 'earliest' ? 'earliest' : byDurationMs !== null ? { byDurationMs: Math.floor(byDurationMs) } : 'latest',
    isolationLevel: overrides.get('share.isolation.level') === 'read_committed' ? 1 : 0,
    deadLetterTopic: overrides.get('errors.deadletterqueue.topic.name') || null,
    deadLetterCopyRecord: overrides.get('errors.deadletterqueue.copy.record.enable') === 'true',
  };
}

/**
 * Dead letters as a producer writes them: one batch to partition `sourcePartition` modulo the
 * topic's partitions (so one source partition's letters stay in order), acks=all, on its leader
 * here or elsewhere. A topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION: the group's
 * dead-letter topic is created by its operator, as Kafka requires.
 */
function deadLetterWriter(d: SharePartsDeps): DeadLetterWriter {
  return {
    write: async (topic, sourcePartition, records) => {
      const view = d.metadata();
      const t = view.topic(topic);
      if (!t || t.partitions.length === 0) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      // KIP-1191: a dead-letter topic is named with errors.deadletterqueue.topic.name.prefix and
      // opts in with its errors.deadletterqueue.group.enable, so a group cannot make the broker
      // write onto a topic that did not allow it.
      if (!topic.startsWith(String(d.config.get('errors.deadletterqueue.topic.name.prefix')))) return ErrorCode.INVALID_CONFIG;
      if (view.configs(TOPIC_RESOURCE, topic).get('errors.deadletterqueue.group.enable') !== 'true') return ErrorCode.TOPIC_AUTHORIZATION_FAILED;
      const partition = sourcePartition % t.partitions.length;
      const batch = buildRecordBatchSync({ records, baseTimestamp: d.clock.nowMs() });
      const timeoutMs = Number(d.config.get('share.coordinator.write.timeout.ms'));
      const leader = d.leaderOf(topic, partition);
      if (leader === undefined || leader < 0) return ErrorCode.LEADER_NOT_AVAILABLE;
      if (leader !== d.nodeId) return d.produceTo(leader, topic, partition, batch, timeoutMs);
      const r = await d.replicaManager.produce(-1, timeoutMs, [{ topic, partition, records: batch }]);
      return [...r.values()][0]?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
    },
  };
}

export function createShareParts(d: SharePartsDeps): ShareParts {
  const c = d.config;
  const rm = d.replicaManager;
  const coordinator = new ShareCoordinatorService({
    clock: d.clock, scheduler: d.scheduler, logger: d.logger, numPartitions: Number(c.get('share.coordinator.state.topic.num.partitions')),
    config: { updatesPerSnapshot: Number(c.get('share.coordinator.snapshot.update.records.per.snapshot')) },
    log: replicaManagerLog(rm, SHARE_STATE_TOPIC, Number(c.get('share.coordinator.write.timeout.ms'))),
  });
  // The share coordinator leading the key's `__share_group_state` partition: this broker's, or
  // another's through the state RPCs. While the partition has no leader, is loading, or moves
  // (a broker killed), the call is retried for up to STATE_RETRY_MS.
  const route = async <T extends { errorCode: number } | number>(k: SharePartitionKey, local: () => Promise<T>, remote: (nodeId: number) => Promise<T>, unavailable: T): Promise<T> => {
    const created = await d.ensureShareStateTopic();
    if (created !== ErrorCode.NONE) return (typeof unavailable === 'number' ? created : { ...(unavailable as { errorCode: number }), errorCode: created }) as T;
    const deadline = d.clock.nowMs() + STATE_RETRY_MS;
    for (;;) {
      const partition = coordinator.partitionFor(k);
      const leader = d.leaderOf(SHARE_STATE_TOPIC, partition);
      const out = leader === undefined || leader < 0 ? unavailable : leader === d.nodeId ? await local() : await remote(leader);
      const code = typeof out === 'number' ? out : out.errorCode;
      if (!RETRIABLE.has(code) || d.clock.nowMs() >= deadline) return out;
      await new Promise((r) => setTimeout(r, STATE_RETRY_BACKOFF_MS));
    }
  };
  const persister: ShareStatePersister = {
    read: (k, leaderEpoch) => route(k, () => coordinator.read(k, leaderEpoch), (n) => d.sender.read(n, k, leaderEpoch), { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: null }),
    initialize: (k, stateEpoch, startOffset) => route(k, () => coordinator.initialize(k, stateEpoch, startOffset), (n) => d.sender.initialize(n, k, stateEpoch, startOffset), ErrorCode.COORDINATOR_NOT_AVAILABLE),
    write: (p) => route(p, () => coordinator.write(p), (n) => d.sender.write(n, p), ErrorCode.COORDINATOR_NOT_AVAILABLE),
    delete: (k) => route(k, () => coordinator.delete(k), (n) => d.sender.delete(n, k), ErrorCode.COORDINATOR_NOT_AVAILABLE),
    summary: (k) => route(k, () => coordinator.summary(k), (n) => d.sender.summary(n, k), { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: null }),
  };
  const manager = new SharePartitionManager({
    clock: d.clock, scheduler: d.scheduler, persister, warn: (m) => d.logger.warn(m), deadLetters: deadLetterWriter(d),
    settings: (groupId) => shareGroupSettings(c, d.metadata(), groupId),
    log: {
      leaderEpoch: (topic, partition) => { const p = rm.partition(topic, partition); return p?.isLeader ? p.leaderEpoch : null; },
      bounds: (topic, partition) => { const p = rm.partition(topic, partition); return p?.isLeader ? { logStartOffset: p.log.logStartOffset, highWatermark: p.highWatermark } : null; },
      offsetForTimestamp: async (topic, partition, timestampMs) => {
        const r = await rm.listOffsets(topic, partition, BigInt(timestampMs), -1);
        return r.errorCode === ErrorCode.NONE && r.offset >= 0n ? Number(r.offset) : null;
      },
      read: async (topic, partition, offset, maxBytes, isolationLevel, maxWaitMs) => {
        const [r] = await rm.fetch({ maxBytes, isolationLevel, maxWaitMs, minBytes: 1, partitions: [{ topic, partition, fetchOffset: BigInt(offset), partitionMaxBytes: maxBytes, currentLeaderEpoch: -1 }] });
        return {
          errorCode: r!.errorCode, records: r!.records,
          abortedTransactions: (r!.abortedTransactions ?? []).map((t) => ({ producerId: Number(t.producerId), firstOffset: Number(t.firstOffset) })),
        };
      },
    },
  });
  return { coordinator, persister, manager, sessions: new ShareSessionCache(Number(c.get('group.share.max.share.sessions'))) };
}
