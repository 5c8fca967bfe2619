// Share groups' parts on a broker (KIP-932): the share coordinator over `__share_group_state`, the
// share-partition manager over the replica manager, the share sessions, and the per-group settings
// (the share.* group configs over their group.share.* broker defaults). The broker builds them
// here and hands them to the handlers; the share coordinator follows leadership like the other
// coordinators.
import { ErrorCode } from '../protocol/index.js';
import type { Clock } from '../util/index.js';
import type { BrokerConfig } from '../config/index.js';
import type { ReplicaManager, Scheduler } from '../replication/index.js';
import { ShareSessionCache, type MetadataView } from '../broker/index.js';
import {
  SHARE_STATE_TOPIC, ShareCoordinatorService, SharePartitionManager, replicaManagerLog, type RuntimeLogger, type ShareGroupSettings, type SharePersister,
} from '../coordinator/index.js';

/** How often a read of a loading share coordinator shard is retried, and how many times. */
const LOAD_RETRY_MS = 50;
const LOAD_RETRIES = 100;
const GROUP_RESOURCE = 32;

export interface ShareParts {
  coordinator: ShareCoordinatorService;
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
  logger: RuntimeLogger;
}

/** The group's share.* configs, each over its group.share.* broker default (Kafka's GroupConfig). */
export function shareGroupSettings(config: BrokerConfig, view: MetadataView, groupId: string): ShareGroupSettings {
  const overrides = view.configs(GROUP_RESOURCE, groupId);
  const num = (key: string, brokerKey: Parameters<BrokerConfig['get']>[0]) => Number(overrides.get(key) ?? config.get(brokerKey));
  // by_duration:<d> (Kafka 4.1) starts at the latest offset here: timestamps are not looked up yet.
  const reset = overrides.get('share.auto.offset.reset') ?? 'latest';
  return {
    recordLockDurationMs: num('share.record.lock.duration.ms', 'group.share.record.lock.duration.ms'),
    deliveryCountLimit: num('share.delivery.count.limit', 'group.share.delivery.count.limit'),
    maxInFlightRecords: num('share.partition.max.record.locks', 'group.share.partition.max.record.locks'),
    autoOffsetReset: reset === 'earliest' ? 'earliest' : 'latest',
    isolationLevel: overrides.get('share.isolation.level') === 'read_committed' ? 1 : 0,
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
  // The share coordinator of this broker. A share-partition whose state partition another broker
  // leads answers NOT_COORDINATOR: the inter-broker RPCs (83-87) are not sent yet.
  const retrying = async <T extends { errorCode: number } | number>(op: () => T | Promise<T>): Promise<T> => {
    await d.ensureShareStateTopic();
    for (let i = 0; ; i++) {
      const out = await op();
      const code = typeof out === 'number' ? out : out.errorCode;
      if (code !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS && !(code === ErrorCode.NOT_COORDINATOR && i < 5) || i >= LOAD_RETRIES) return out;
      await new Promise((r) => setTimeout(r, LOAD_RETRY_MS));
    }
  };
  const persister: SharePersister = {
    read: (k) => retrying(() => coordinator.read(k)),
    initialize: (k, stateEpoch, startOffset) => retrying(() => coordinator.initialize(k, stateEpoch, startOffset)),
    write: (p) => retrying(() => coordinator.write(p)),
  };
  const manager = new SharePartitionManager({
    clock: d.clock, scheduler: d.scheduler, persister, warn: (m) => d.logger.warn(m),
    settings: (groupId) => shareGroupSettings(c, d.metadata(), groupId),
    log: {
      leaderEpoch: (topic, partition) => { const p = rm.partition(topic, partition); return p?.isLeader ? p.leaderEpoch : null; },
      bounds: (topic, partition) => { const p = rm.partition(topic, partition); return p?.isLeader ? { logStartOffset: p.log.logStartOffset, highWatermark: p.highWatermark } : null; },
      read: async (topic, partition, offset, maxBytes, isolationLevel, maxWaitMs) => {
        const [r] = await rm.fetch({ maxBytes, isolationLevel, maxWaitMs, minBytes: 1, partitions: [{ topic, partition, fetchOffset: BigInt(offset), partitionMaxBytes: maxBytes, currentLeaderEpoch: -1 }] });
        return {
          errorCode: r!.errorCode, records: r!.records,
          abortedTransactions: (r!.abortedTransactions ?? []).map((t) => ({ producerId: Number(t.producerId), firstOffset: Number(t.firstOffset) })),
        };
      },
    },
  });
  return { coordinator, manager, sessions: new ShareSessionCache(Number(c.get('group.share.max.share.sessions'))) };
}
