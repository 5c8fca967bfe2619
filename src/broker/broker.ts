// The broker's wiring: handlers on one side, the metadata, the controller and the replica
// manager on the other. It depends on ports, not implementations:
//   - a MetadataSource gives the current MetadataView and commits controller records (the
//     metadata log and image in the real server; a table in tests);
//   - a LogFactory opens the local log of a partition (the storage engine in the real server).
// When the metadata changes, the replica manager is brought in line: partitions led here are
// opened, removed topics are dropped.
import { ErrorCode, type CreateTopicsRequest } from '../protocol/index.js';
import {
  createTopics, deleteTopics, createPartitions, type ControllerView, type EmittedRecord, type TopicConfigValidator, type TopicDefaults,
} from '../controller/index.js';
import { Partition, ReplicaManager, type LocalLog, type Scheduler } from '../replication/index.js';
import { Prng, type Clock } from '../util/index.js';
import type { BrokerConfig } from '../config/index.js';
import { ConfigAdmin } from './config-admin.js';
import { describeConfigsHandler } from './handlers/32-describe-configs.js';
import { alterConfigsHandler } from './handlers/33-alter-configs.js';
import { incrementalAlterConfigsHandler } from './handlers/44-incremental-alter-configs.js';
import { FetchSessionCache } from './fetch-sessions.js';
import { Router } from './router.js';
import type { LogDirDescription, MetadataView, TopicAdmin } from './services.js';
import { apiVersionsHandler } from './handlers/18-api-versions.js';
import { metadataHandler } from './handlers/03-metadata.js';
import { produceHandler } from './handlers/00-produce.js';
import { fetchHandler } from './handlers/01-fetch.js';
import { listOffsetsHandler } from './handlers/02-list-offsets.js';
import { createTopicsHandler } from './handlers/19-create-topics.js';
import { deleteTopicsHandler } from './handlers/20-delete-topics.js';
import { createPartitionsHandler } from './handlers/37-create-partitions.js';
import { describeClusterHandler } from './handlers/60-describe-cluster.js';
import { describeLogDirsHandler } from './handlers/35-describe-log-dirs.js';
import { initProducerIdHandler } from './handlers/22-init-producer-id.js';
import { ProducerIdManager } from './producer-ids.js';
import { deleteRecordsHandler } from './handlers/21-delete-records.js';
import { offsetForLeaderEpochHandler } from './handlers/23-offset-for-leader-epoch.js';
import { describeTopicPartitionsHandler } from './handlers/75-describe-topic-partitions.js';
import { electLeadersHandler } from './handlers/43-elect-leaders.js';
import { randomUUID } from 'node:crypto';
import { GroupCoordinatorService, OFFSETS_TOPIC, replicaManagerLog } from '../coordinator/index.js';
import { realScheduler as systemScheduler } from '../replication/index.js';
import { offsetCommitHandler } from './handlers/08-offset-commit.js';
import { offsetFetchHandler } from './handlers/09-offset-fetch.js';
import { findCoordinatorHandler } from './handlers/10-find-coordinator.js';
import { joinGroupHandler } from './handlers/11-join-group.js';
import { heartbeatHandler } from './handlers/12-heartbeat.js';
import { leaveGroupHandler } from './handlers/13-leave-group.js';
import { syncGroupHandler } from './handlers/14-sync-group.js';
import { describeGroupsHandler } from './handlers/15-describe-groups.js';
import { listGroupsHandler } from './handlers/16-list-groups.js';
import { deleteGroupsHandler } from './handlers/42-delete-groups.js';
import { offsetDeleteHandler } from './handlers/47-offset-delete.js';
import { consumerGroupHeartbeatHandler } from './handlers/68-consumer-group-heartbeat.js';
import { consumerGroupDescribeHandler } from './handlers/69-consumer-group-describe.js';

export interface MetadataSource {
  view(): MetadataView;
  /** Commits controller records; resolves once they are applied to the view. */
  commit(records: EmittedRecord[]): Promise<void>;
  /** Called after every applied change. */
  onChange(listener: () => void): void;
  /** The first producer id no block has taken (ProducerIdsRecord), -1 when none was. */
  nextProducerId(): bigint;
}

export type LogFactory = (topic: string, partition: number, topicId: string) => Promise<LocalLog>;

export interface BrokerDeps {
  nodeId: number;
  clock: Clock;
  scheduler: Scheduler;
  prng: Prng;
  metadata: MetadataSource;
  openLog: LogFactory;
  dropLog?: (topic: string, partition: number) => Promise<void>;
  /** The log directories and what they hold (none for the in-memory backend). */
  logDirs?: () => LogDirDescription[];
  topicDefaults: TopicDefaults;
  /** The static broker configuration (server.properties plus --set overrides). */
  brokerConfig: BrokerConfig;
  validateTopicConfigs: TopicConfigValidator;
  autoCreateTopicsEnable: boolean;
  minInsyncReplicas: (topic: string) => number;
  /** max.message.bytes of a topic. */
  maxMessageBytes?: (topic: string) => number;
  fetchSessionCacheSlots: number;
}

export class Broker {
  readonly router = new Router<any>();
  readonly replicaManager: ReplicaManager;
  readonly fetchSessions: FetchSessionCache;
  private syncing: Promise<void> = Promise.resolve();

  constructor(readonly deps: BrokerDeps) {
    this.replicaManager = new ReplicaManager(deps.nodeId, deps.clock, deps.scheduler, { fetchPurgatoryOperationsMax: 100_000, producePurgatoryOperationsMax: 100_000 });
    this.fetchSessions = new FetchSessionCache(deps.fetchSessionCacheSlots, deps.clock);
    deps.metadata.onChange(() => { this.syncing = this.syncing.then(() => this.syncPartitions()); });
    for (const h of [apiVersionsHandler(() => this.router.supportedVersions()), metadataHandler, produceHandler, fetchHandler, listOffsetsHandler,
      createTopicsHandler, deleteTopicsHandler, createPartitionsHandler, describeClusterHandler, deleteRecordsHandler, offsetForLeaderEpochHandler,
      describeTopicPartitionsHandler, describeConfigsHandler, alterConfigsHandler, incrementalAlterConfigsHandler, electLeadersHandler, describeLogDirsHandler, initProducerIdHandler]) {
      this.router.register(h);
    }
    this.groups = this.createGroupCoordinator();
    deps.metadata.onChange(() => { this.syncing = this.syncing.then(() => this.groups.syncPartitions()); });
    for (const h of [offsetCommitHandler, offsetFetchHandler, findCoordinatorHandler, joinGroupHandler, heartbeatHandler, leaveGroupHandler,
      syncGroupHandler, describeGroupsHandler, listGroupsHandler, deleteGroupsHandler, offsetDeleteHandler, consumerGroupHeartbeatHandler, consumerGroupDescribeHandler]) {
      this.router.register(h);
    }
  }

  /** The group coordinator over `__consumer_offsets`, configured from the broker config. */
  readonly groups: GroupCoordinatorService;
  private createGroupCoordinator(): GroupCoordinatorService {
    const c = this.deps.brokerConfig;
    const n = (key: Parameters<typeof c.get>[0]) => Number(c.get(key));
    // Coordinator timers (sessions, offset expiry) must not keep a process alive on their own.
    const scheduler = this.deps.scheduler === systemScheduler
      ? { schedule: (ms: number, fn: () => void) => { const t = setTimeout(fn, ms); t.unref(); return { cancel: () => clearTimeout(t) }; } }
      : this.deps.scheduler;
    return new GroupCoordinatorService({
      clock: this.deps.clock, scheduler, numPartitions: n('offsets.topic.num.partitions'), newUuid: randomUUID,
      log: replicaManagerLog(this.replicaManager, OFFSETS_TOPIC, n('offsets.commit.timeout.ms')),
      logger: { warn: (m) => console.warn(`[logline] WARN ${m}`) },
      config: {
        initialRebalanceDelayMs: n('group.initial.rebalance.delay.ms'), minSessionTimeoutMs: n('group.min.session.timeout.ms'),
        maxSessionTimeoutMs: n('group.max.session.timeout.ms'), groupMaxSize: n('group.max.size'),
        offsetsRetentionMs: n('offsets.retention.minutes') * 60_000, offsetsRetentionCheckIntervalMs: n('offsets.retention.check.interval.ms'),
        offsetMetadataMaxBytes: 4096, consumerSessionTimeoutMs: n('group.consumer.session.timeout.ms'),
        consumerHeartbeatIntervalMs: n('group.consumer.heartbeat.interval.ms'), consumerGroupMaxSize: n('group.consumer.max.size'),
        consumerAssignors: String(c.get('group.consumer.assignors')).split(',').map((a) => (/range/i.test(a) ? 'range' : 'uniform')),
      },
    });
  }

  private offsetsTopicCreation: Promise<number> | null = null;
  /** Creates `__consumer_offsets` (compacted) on first use; one creation at a time. */
  ensureOffsetsTopic(): Promise<number> {
    const view = this.deps.metadata.view();
    if (view.topic(OFFSETS_TOPIC)) return Promise.resolve(0);
    if (this.offsetsTopicCreation) return this.offsetsTopicCreation;
    const c = this.deps.brokerConfig;
    // A cluster smaller than offsets.topic.replication.factor still gets its offsets topic.
    const replicationFactor = Math.max(1, Math.min(Number(c.get('offsets.topic.replication.factor')), view.brokers('').length || 1));
    this.offsetsTopicCreation = this.topicAdmin.createTopics({
      topics: [{
        name: OFFSETS_TOPIC, numPartitions: Number(c.get('offsets.topic.num.partitions')), replicationFactor, assignments: [],
        configs: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'compression.type', value: 'producer' }, { name: 'segment.bytes', value: String(c.get('offsets.topic.segment.bytes')) }],
      }],
      timeoutMs: 30_000, validateOnly: false,
    }, 7).then((r) => (r[0]?.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS ? 0 : r[0]?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR))
      .finally(() => { this.offsetsTopicCreation = null; });
    return this.offsetsTopicCreation;
  }

  /** Opens logs for partitions led here and drops those whose topic is gone. */
  async syncPartitions(): Promise<void> {
    const view = this.deps.metadata.view();
    const wanted = new Set<string>();
    for (const t of view.topics()) {
      for (const p of t.partitions) {
        if (!p.replicas.includes(this.deps.nodeId)) continue;
        wanted.add(`${t.name}-${p.partition}`);
        const existing = this.replicaManager.partition(t.name, p.partition);
        if (existing) {
          existing.leaderEpoch = p.leaderEpoch;
          existing.leaderId = p.leader;
          // Topic configs may have changed (IncrementalAlterConfigs).
          existing.minInsyncReplicas = this.deps.minInsyncReplicas(t.name);
          existing.maxMessageBytes = this.deps.maxMessageBytes?.(t.name) ?? existing.maxMessageBytes;
          continue;
        }
        const log = await this.deps.openLog(t.name, p.partition, t.id);
        this.replicaManager.addPartition(new Partition(t.name, p.partition, log, p.leaderEpoch, p.leader, this.deps.nodeId,
          this.deps.minInsyncReplicas(t.name), this.deps.maxMessageBytes?.(t.name)));
      }
    }
    for (const p of [...this.replicaManager.allPartitions()]) {
      if (wanted.has(`${p.topic}-${p.index}`)) continue;
      this.replicaManager.removePartition(p.topic, p.index);
      await this.deps.dropLog?.(p.topic, p.index);
    }
  }

  /** Resolves when the replica manager has caught up with the last metadata change. */
  settled(): Promise<void> { return this.syncing; }

  private controllerView(): ControllerView {
    const view = this.deps.metadata.view();
    return {
      topic: (name) => { const t = view.topic(name); return t && { id: t.id, name: t.name, partitionCount: t.partitions.length }; },
      topicById: (id) => { const t = view.topicById(id); return t && { id: t.id, name: t.name, partitionCount: t.partitions.length }; },
      topicNames: () => [...view.topics()].map((t) => t.name),
      usableBrokers: () => view.brokers('').map((b) => ({ id: b.nodeId, rack: b.rack })),
    };
  }

  private async commit(records: EmittedRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.deps.metadata.commit(records);
    await this.settled();
  }

  private producerIdManager: ProducerIdManager | null = null;
  get producerIds(): ProducerIdManager {
    return this.producerIdManager ??= new ProducerIdManager(this.deps.nodeId, () => this.deps.metadata.nextProducerId(), (records) => this.commit(records));
  }

  readonly configAdmin = new ConfigAdmin(() => this.deps.metadata.view(), () => this.deps.brokerConfig, () => this.deps.nodeId, (records) => this.commit(records));

  readonly topicAdmin: TopicAdmin = {
    createTopics: async (request: CreateTopicsRequest) => {
      const out = createTopics(request, this.controllerView(), this.deps.topicDefaults, this.deps.validateTopicConfigs, this.deps.prng);
      await this.commit(out.records);
      return out.topics;
    },
    deleteTopics: async (targets) => {
      const out = deleteTopics(targets, this.controllerView());
      await this.commit(out.records);
      return out.results;
    },
    createPartitions: async (topics, validateOnly) => {
      const view = this.deps.metadata.view();
      const rf = (id: string) => view.topicById(id)?.partitions[0]?.replicas.length ?? 1;
      const out = createPartitions(topics, validateOnly, this.controllerView(), rf, this.deps.prng, this.deps.topicDefaults.partitionsPerRequestMax);
      await this.commit(out.records);
      return out.results;
    },
  };

  /** The services object every handler receives. */
  services() {
    const rm = this.replicaManager;
    return {
      nodeId: this.deps.nodeId,
      metadata: () => this.deps.metadata.view(),
      autoCreateTopicsEnable: this.deps.autoCreateTopicsEnable,
      autoCreateTopics: async (names: string[]) => {
        await this.topicAdmin.createTopics({ topics: names.map((name) => ({ name, numPartitions: -1, replicationFactor: -1, assignments: [], configs: [] })), timeoutMs: 30000, validateOnly: false }, 7);
      },
      producePartitions: (p: { acks: number; timeoutMs: number; transactionalId: string | null; entries: { topic: string; partition: number; records: Buffer }[] }) => {
        if (p.transactionalId !== null) {
          // Transactions arrive with their own issue; until then a transactional produce is refused clearly.
          return Promise.resolve(new Map(p.entries.map((e) => [`${e.topic}-${e.partition}`, { errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, errorMessage: 'transactions are not supported yet', baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [] }])));
        }
        return rm.produce(p.acks, p.timeoutMs, p.entries);
      },
      fetchSessions: this.fetchSessions,
      fetchPartitions: (p: any) => rm.fetch(p),
      listOffsets: (p: any) => rm.listOffsets(p.topic, p.partition, p.timestamp, p.currentLeaderEpoch),
      topicAdmin: this.topicAdmin,
      configAdmin: this.configAdmin,
      deleteRecords: (topic: string, partition: number, offset: bigint) => rm.deleteRecords(topic, partition, offset),
      offsetForLeaderEpoch: (topic: string, partition: number, current: number, epoch: number) => rm.offsetForLeaderEpoch(topic, partition, current, epoch),
      groups: this.groups,
      ensureOffsetsTopic: () => this.ensureOffsetsTopic(),
      logDirs: () => this.deps.logDirs?.() ?? [],
      generateProducerId: () => this.producerIds.generate(),
    };
  }
}
