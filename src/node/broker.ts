// The broker's wiring: handlers on one side, the metadata, the controller and the replica
// manager on the other. It depends on ports, not implementations:
//   - a MetadataSource gives the current MetadataView and commits controller records (the
//     metadata log and image in the real server; a table in tests);
//   - a LogFactory opens the local log of a partition (the storage engine in the real server).
// Each metadata delta is applied to the replica manager (become leader, become follower, stop and
// delete a replica, topic config changes), one delta at a time in log order; the first one, at
// start, is the whole image as a delta from the empty image.
import { ErrorCode, type BrokerRegistrationRequest, type CreateTopicsRequest } from '../protocol/index.js';
import { firstBatchProducer } from '../records/index.js';
import { CONTROLLER_FEATURES, KRAFT_VERSION_FEATURE, topicNameError, type TopicConfigValidator, type TopicDefaults } from '../controller/index.js';
import { AlterPartitionManager, ReplicaFetcherManager, ReplicaManager, ReplicationQuota, isThrottledReplica, parseThrottledReplicas, replicaSelectorFor, type LeaderEndpoint, type LocalLog, type ReplicaDeltaPorts, type Scheduler, type SchemaValidation } from '../replication/index.js';
import { BrokerConnection, InterBrokerConnections, type InterBrokerEndpoint } from '../client/index.js';
import { clientSaslFor, clientTlsFor } from '../network/index.js';
import { ScramImage, type MetadataDelta, type MetadataImage } from '../metadata/index.js';
import { Prng, componentLogger, limits, partitionKey, partitionName, quietLogger, type Clock, type Logger } from '../util/index.js';
import type { BrokerConfig } from '../config/index.js';
import {
  ConfigAdmin, describeConfigsHandler, alterConfigsHandler, incrementalAlterConfigsHandler, FetchSessionCache, Router, apiVersionsHandler, saslHandshakeHandler,
  saslAuthenticateHandler, describeUserScramCredentialsHandler, alterUserScramCredentialsHandler, metadataHandler, produceHandler, fetchHandler, listOffsetsHandler,
  createTopicsHandler, deleteTopicsHandler, createPartitionsHandler, describeClusterHandler, describeLogDirsHandler, initProducerIdHandler, ProducerIdManager,
  deleteRecordsHandler, offsetForLeaderEpochHandler, describeTopicPartitionsHandler, electLeadersHandler, alterPartitionReassignmentsHandler,
  listPartitionReassignmentsHandler, addPartitionsToTxnHandler, addOffsetsToTxnHandler, endTxnHandler, writeTxnMarkersHandler, txnOffsetCommitHandler,
  describeProducersHandler, describeTransactionsHandler, listTransactionsHandler, TxnMarkerSender, AddPartitionsToTxnManager, offsetCommitHandler, offsetFetchHandler,
  findCoordinatorHandler, joinGroupHandler, heartbeatHandler, leaveGroupHandler, syncGroupHandler, describeGroupsHandler, listGroupsHandler, deleteGroupsHandler,
  offsetDeleteHandler, consumerGroupHeartbeatHandler, consumerGroupDescribeHandler, describeClientQuotasHandler, alterClientQuotasHandler, updateFeaturesHandler, ClientQuotaManager,
  ControllerMutationQuota, quotaWindowOf, describeAclsHandler, createAclsHandler, deleteAclsHandler, bindAuthz, type ControllerChannel, type LogDirDescription,
  type MetadataView, type ProducePartitionsParams, type TopicAdmin, type TxnMarkerParams, type ForwardedFor,
  shareGroupHeartbeatHandler, shareGroupDescribeHandler, shareFetchHandler, shareAcknowledgeHandler, initializeShareGroupStateHandler, readShareGroupStateHandler,
  writeShareGroupStateHandler, deleteShareGroupStateHandler, readShareGroupStateSummaryHandler, ShareStateSender, describeShareGroupOffsetsHandler,
  alterShareGroupOffsetsHandler, deleteShareGroupOffsetsHandler,
} from '../broker/index.js';
import { createShareParts, type ShareParts } from './share.js';
import { LifecycleDriver } from './lifecycle-driver.js';
import { randomUUID } from 'node:crypto';
import {
  GroupCoordinatorService, OFFSETS_TOPIC, replicaManagerLog, SHARE_STATE_TOPIC, TRANSACTION_STATE_TOPIC, TxnCoordinatorService, defaultTxnConfig, type MarkerWrite, type PartitionError,
} from '../coordinator/index.js';
import { SCHEMAS_TOPIC } from '../registry/index.js';
import { realScheduler as systemScheduler } from '../replication/index.js';
import { authorizerFromConfig, type StandardAuthorizer } from '../security/index.js';
import { AclsImage } from '../metadata/index.js';
import { buildRecordBatchSync } from '../records/index.js';
import {
  RemoteLogManager, RemoteLogMetadataManager, REMOTE_LOG_METADATA_TOPIC, REMOTE_LOG_METADATA_TOPIC_DEFAULTS,
  type RemoteLogMetadataTopic, type RemoteStorageManager,
} from '../tiered/index.js';

export interface MetadataSource {
  view(): MetadataView;
  /** Called after every applied change. */
  onChange(listener: () => void): void;
  /**
   * Called with every delta and the image it gives, in log order. The first call covers the whole
   * image held at the time of subscribing (a delta from the empty image), unless it is empty.
   */
  onDelta(listener: (delta: MetadataDelta, image: MetadataImage) => void): void;
  /** The offset of the last record the view holds (a heartbeat's currentMetadataOffset). */
  offset(): bigint;
}

/** Topics the broker writes itself (Kafka's double-underscore internal topics, the registry's _schemas). */
function brokerWrittenTopic(topic: string): boolean {
  return topic.startsWith('__') || topic === '_schemas';
}

export type LogFactory = (topic: string, partition: number, topicId: string) => Promise<LocalLog>;

export interface BrokerDeps {
  /** The broker epoch this node's last clean shutdown recorded (-1 or absent: none), for its registration (KIP-966). */
  previousBrokerEpoch?: bigint;
  nodeId: number;
  clock: Clock;
  /**
   * controller_mutation_rate (KIP-599) is charged by the active controller, once for the cluster:
   * its quotas while the controller in this process is active, so the broker charges changes it
   * hands to it directly; undefined otherwise (the change is forwarded, and charged there).
   */
  mutationQuotas?: () => ClientQuotaManager | undefined;
  scheduler: Scheduler;
  prng: Prng;
  metadata: MetadataSource;
  /** The active controller: every change to cluster state goes through it. */
  controller: ControllerChannel;
  openLog: LogFactory;
  dropLog?: (topic: string, partition: number) => Promise<void>;
  /** The log directories and what they hold. */
  logDirs?: () => LogDirDescription[];
  /**
   * Why a client's produce of `bytes` to a partition is refused before it reaches the log (its log
   * directory is below log.dir.min.free.bytes), or null.
   */
  produceRefusal?: (topic: string, partition: number, bytes: number) => string | null;
  /** Whether a partition's log directory is below log.dir.min.free.bytes now (followers stop fetching it). */
  belowFreeSpaceFloor?: (topic: string, partition: number, fetchMaxBytes: number) => boolean;
  topicDefaults: TopicDefaults;
  /** The static broker configuration (server.properties plus --set overrides). */
  brokerConfig: BrokerConfig;
  validateTopicConfigs: TopicConfigValidator;
  autoCreateTopicsEnable: boolean;
  minInsyncReplicas: (topic: string) => number;
  /** max.message.bytes of a topic. */
  maxMessageBytes?: (topic: string) => number;
  /** A topic's broker-side schema validation (confluent.*.schema.validation), null when off. */
  schemaValidation?: (topic: string) => SchemaValidation | null;
  fetchSessionCacheSlots: number;
  logger?: Logger;
  /** The remote tier, opened from remote.log.storage.* when remote.log.storage.system.enable is on (tiered storage). */
  remoteStorage?: RemoteStorageManager;
}

/** How often `__remote_log_metadata` is replayed (Kafka's consumer task polls every 100 ms). */
const REMOTE_LOG_METADATA_POLL_MS = 100;
/** Kafka's AlterPartitionManager retries after retry.backoff.ms (100). */
const ALTER_PARTITION_RETRY_BACKOFF_MS = 100;
/** Kafka's request.timeout.ms default, which its marker channel and AddPartitionsToTxnManager use. */
const INTER_BROKER_REQUEST_TIMEOUT_MS = 30_000;

export class Broker {
  readonly router = new Router<any>();
  readonly replicaManager: ReplicaManager;
  /** Sends the ISR changes of the partitions led here to the controller (AlterPartition). */
  readonly alterPartitions: AlterPartitionManager;
  readonly fetchSessions: FetchSessionCache;
  /** The delta applications queued so far: each starts when the one before has finished. */
  private syncing: Promise<void> = Promise.resolve();
  /** The first delta's application (the metadata this broker started with), unguarded. */
  private firstDelta: Promise<void> | null = null;

  constructor(readonly deps: BrokerDeps) {
    this.clientQuotas = new ClientQuotaManager(deps.clock, quotaWindowOf(deps.brokerConfig));
    // ISR changes go to the active controller; the expiration task and retries must not keep a process alive.
    this.alterPartitions = new AlterPartitionManager({
      brokerId: deps.nodeId, brokerEpoch: () => this.lifecycle?.brokerEpoch ?? -1n, send: (request) => deps.controller.alterPartition(request, 3),
      scheduler: this.coordinatorScheduler(), retryBackoffMs: ALTER_PARTITION_RETRY_BACKOFF_MS, log: (line) => this.log('alter-partition').warn(line),
    });
    this.leaderQuota = this.replicationQuota('leader.replication.throttled.rate');
    this.followerQuota = this.replicationQuota('follower.replication.throttled.rate');
    this.replicaFetchers = this.createReplicaFetchers();
    this.replicaManager = new ReplicaManager(deps.nodeId, deps.clock, deps.scheduler, { fetchPurgatoryOperationsMax: limits.fetchPurgatoryOperationsMax, producePurgatoryOperationsMax: limits.producePurgatoryOperationsMax },
      this.replicaFetchers, { replicaLagTimeMaxMs: Number(deps.brokerConfig.get('replica.lag.time.max.ms')), channel: this.alterPartitions },
      replicaSelectorFor(deps.brokerConfig.get('replica.selector.class') as string | null));
    this.replicaManager.startIsrExpiration(this.coordinatorScheduler());
    this.replicaManager.leaderThrottle = {
      quota: this.leaderQuota,
      isThrottled: (p) => isThrottledReplica(this.throttledReplicas(p.topic, 'leader.replication.throttled.replicas'), p.index, deps.nodeId),
    };
    this.replicaManager.localIncarnationId = this.incarnationId;
    this.remoteLog = deps.remoteStorage === undefined ? null : this.createRemoteLogManager(deps.remoteStorage);
    this.fetchSessions = new FetchSessionCache(deps.fetchSessionCacheSlots, deps.clock);
    for (const h of [apiVersionsHandler(() => this.router.supportedVersions(this.deps.metadata.view().features().levels), () => this.deps.metadata.view().features()), metadataHandler, produceHandler, fetchHandler, listOffsetsHandler,
      createTopicsHandler, deleteTopicsHandler, createPartitionsHandler, describeClusterHandler, deleteRecordsHandler, offsetForLeaderEpochHandler,
      describeTopicPartitionsHandler, describeConfigsHandler, alterConfigsHandler, incrementalAlterConfigsHandler, electLeadersHandler,
      alterPartitionReassignmentsHandler, listPartitionReassignmentsHandler, describeLogDirsHandler, initProducerIdHandler,
      describeClientQuotasHandler, alterClientQuotasHandler, updateFeaturesHandler,
      saslHandshakeHandler, saslAuthenticateHandler, describeUserScramCredentialsHandler, alterUserScramCredentialsHandler]) {
      this.router.register(h);
    }
    this.groups = this.createGroupCoordinator();
    for (const h of [offsetCommitHandler, offsetFetchHandler, findCoordinatorHandler, joinGroupHandler, heartbeatHandler, leaveGroupHandler,
      syncGroupHandler, describeGroupsHandler, listGroupsHandler, deleteGroupsHandler, offsetDeleteHandler, consumerGroupHeartbeatHandler, consumerGroupDescribeHandler]) {
      this.router.register(h);
    }
    const leaderOf = (topic: string, partition: number) => deps.metadata.view().topic(topic)?.partitions.find((p) => p.partition === partition)?.leader;
    const interBroker = (purpose: string) => new InterBrokerConnections({
      clientId: `broker-${deps.nodeId}-${purpose}`, requestTimeoutMs: INTER_BROKER_REQUEST_TIMEOUT_MS, endpoint: (id) => this.interBrokerEndpoint(id),
      tls: clientTlsFor(deps.brokerConfig, deps.brokerConfig.interBrokerListenerName),
      sasl: clientSaslFor(deps.brokerConfig, deps.brokerConfig.interBrokerListenerName),
    });
    this.shareStateConnections = interBroker('share-state');
    this.deadLetterConnections = interBroker('share-dead-letters');
    const deadLetters = new ShareStateSender(this.deadLetterConnections, (m) => this.log('share-dead-letters').warn(m));
    this.share = createShareParts({
      config: deps.brokerConfig, clock: deps.clock, scheduler: this.coordinatorScheduler(), replicaManager: this.replicaManager, nodeId: deps.nodeId,
      metadata: () => deps.metadata.view(), ensureShareStateTopic: () => this.ensureShareStateTopic(), logger: this.log('share-coordinator'),
      leaderOf, sender: new ShareStateSender(this.shareStateConnections, (m) => this.log('share-state').warn(m)),
      produceTo: (nodeId, topic, partition, records, timeoutMs) => deadLetters.produce(nodeId, topic, partition, records, timeoutMs),
    });
    for (const h of [shareGroupHeartbeatHandler, shareGroupDescribeHandler, shareFetchHandler, shareAcknowledgeHandler, initializeShareGroupStateHandler,
      readShareGroupStateHandler, writeShareGroupStateHandler, deleteShareGroupStateHandler, readShareGroupStateSummaryHandler, describeShareGroupOffsetsHandler,
      alterShareGroupOffsetsHandler, deleteShareGroupOffsetsHandler]) this.router.register(h);
    this.markerConnections = interBroker('txn-markers');
    this.verificationConnections = interBroker('txn-verification');
    this.markerSender = new TxnMarkerSender({
      nodeId: deps.nodeId, connections: this.markerConnections, writeLocal: (m) => this.writeTxnMarkers(m),
      leaderOf,
      warn: (m) => this.log('txn-markers').warn(m),
    });
    this.addPartitionsToTxn = new AddPartitionsToTxnManager(this.verificationConnections, (m) => this.log('txn-verification').warn(m));
    this.txn = this.createTxnCoordinator();
    for (const h of [addPartitionsToTxnHandler, addOffsetsToTxnHandler, endTxnHandler, writeTxnMarkersHandler, txnOffsetCommitHandler,
      describeProducersHandler, describeTransactionsHandler, listTransactionsHandler]) {
      this.router.register(h);
    }
    for (const h of [describeAclsHandler, createAclsHandler, deleteAclsHandler]) this.router.register(h);
    this.authorizer = authorizerFromConfig(deps.brokerConfig.get('authorizer.class.name') as string | null, deps.brokerConfig.get('super.users') as string | null,
      deps.brokerConfig.get('allow.everyone.if.no.acl.found') === true, AclsImage.EMPTY);
    const authorizer = this.authorizer;
    if (authorizer !== null) this.router.authorizer = (ctx) => bindAuthz(authorizer.indexFor(this.acls), ctx.principal, ctx.clientAddress);
    deps.metadata.onDelta((_delta, image) => { this.scramCredentials = image.scram; });
    // Last: a source that already holds an image delivers it right here. ACLs take effect as soon
    // as their image is applied, for every open connection.
    deps.metadata.onDelta((_delta, image) => {
      this.acls = image.acls;
      // The index of new ACLs is built here rather than by the first request that needs it.
      authorizer?.indexFor(image.acls);
    });
    deps.metadata.onDelta((delta, image) => {
      this.clientQuotas.update(image.clientQuotas);
      this.enqueueDelta(delta, image);
    });
  }

  /** Client quotas: rates measured per user/client-id against the image's ClientQuotaRecords. */
  readonly clientQuotas: ClientQuotaManager;
  /** Kafka's StandardAuthorizer when `authorizer.class.name` names it; null: everything is allowed. */
  readonly authorizer: StandardAuthorizer | null;
  /** The ACLs of the latest image. */
  private acls: AclsImage = AclsImage.EMPTY;

  /** Coordinator timers (sessions, offset expiry, transaction timeouts) must not keep a process alive on their own. */
  private coordinatorScheduler() {
    return this.deps.scheduler === systemScheduler
      ? { schedule: (ms: number, fn: () => void) => { const t = setTimeout(fn, ms); t.unref(); return { cancel: () => clearTimeout(t) }; } }
      : this.deps.scheduler;
  }

  /** Inter-broker connections for the transaction coordinator's markers, and for transaction verification. */
  private readonly markerConnections: InterBrokerConnections;
  private readonly verificationConnections: InterBrokerConnections;
  /** Inter-broker connections for the share coordinator's state RPCs (83-87). */
  private readonly shareStateConnections: InterBrokerConnections;
  /** ...and for the dead letters share-partition leaders write to partitions led elsewhere. */
  private readonly deadLetterConnections: InterBrokerConnections;
  /** Writes a transaction's markers on each partition's leader, here or on another broker. */
  private readonly markerSender: TxnMarkerSender;
  /** Verifies transactional produces with a transaction coordinator on another broker. */
  private readonly addPartitionsToTxn: AddPartitionsToTxnManager;

  /** Where broker `id` listens for other brokers (inter.broker.listener.name, else its first listener). */
  private interBrokerEndpoint(id: number): InterBrokerEndpoint | undefined {
    const endpoints = this.image?.cluster.broker(id)?.endpoints ?? [];
    return endpoints.find((e) => e.name === this.deps.brokerConfig.interBrokerListenerName) ?? endpoints[0];
  }

  /** Closes the transaction coordinator's, the verification's and the share state's connections to other brokers. */
  closeInterBrokerConnections(): void {
    this.markerConnections.close();
    this.verificationConnections.close();
    this.shareStateConnections.close();
    this.deadLetterConnections.close();
  }

  /** The transaction coordinator over `__transaction_state`; its markers go to the partition leaders, here or elsewhere. */
  readonly txn: TxnCoordinatorService;
  private createTxnCoordinator(): TxnCoordinatorService {
    const c = this.deps.brokerConfig;
    const n = (key: Parameters<typeof c.get>[0]) => Number(c.get(key));
    const timeoutMs = n('offsets.commit.timeout.ms');
    // A marker partition already written in an earlier attempt is not written again on a retry.
    const written = new WeakMap<MarkerWrite, Set<string>>();
    return new TxnCoordinatorService({
      clock: this.deps.clock, scheduler: this.coordinatorScheduler(), numPartitions: n('transaction.state.log.num.partitions'),
      log: replicaManagerLog(this.replicaManager, TRANSACTION_STATE_TOPIC, timeoutMs),
      allocateProducerId: () => this.producerIds.generate(),
      logger: this.log('txn-coordinator'),
      markers: {
        writeMarkers: async (m) => {
          let done = written.get(m);
          if (!done) written.set(m, done = new Set());
          const todo = m.partitions.filter((tp) => !done!.has(partitionKey(tp.topic, tp.partition)));
          const results = await this.markerSender.send({ producerId: m.producerId, producerEpoch: m.producerEpoch, coordinatorEpoch: m.coordinatorEpoch, commit: m.result === 'commit', partitions: todo });
          const failed: string[] = [];
          for (const r of results) {
            // A partition whose topic was deleted needs no marker any more (Kafka drops it too).
            if (r.errorCode === 0 || r.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) done.add(partitionKey(r.topic, r.partition));
            else if (r.errorCode === ErrorCode.TRANSACTION_COORDINATOR_FENCED || r.errorCode === ErrorCode.INVALID_PRODUCER_EPOCH) {
              // The partition has seen a newer coordinator or producer epoch: this marker is stale and
              // retrying cannot help (Kafka gives up on it too); the newer one settles the partition.
              this.log('txn-markers').warn(`marker for producer ${m.producerId} on ${partitionName(r.topic, r.partition)} refused (error ${r.errorCode}); dropped`);
              done.add(partitionKey(r.topic, r.partition));
            } else failed.push(`${partitionName(r.topic, r.partition)}: error ${r.errorCode}`);
          }
          if (failed.length > 0) throw new Error(`markers not written to ${failed.join(', ')}`);
        },
      },
      config: {
        ...defaultTxnConfig,
        transactionMaxTimeoutMs: n('transaction.max.timeout.ms'), transactionalIdExpirationMs: n('transactional.id.expiration.ms'),
        abortTimedOutTransactionsIntervalMs: n('transaction.abort.timed.out.transaction.cleanup.interval.ms'),
        removeExpiredTransactionalIdsIntervalMs: n('transaction.remove.expired.transaction.cleanup.interval.ms'),
      },
    });
  }

  /** WriteTxnMarkers on this broker: a control batch per partition, then pending group offsets settled. */
  async writeTxnMarkers(m: TxnMarkerParams): Promise<{ topic: string; partition: number; errorCode: number }[]> {
    const timeoutMs = Number(this.deps.brokerConfig.get('offsets.commit.timeout.ms'));
    return Promise.all(m.partitions.map(async ({ topic, partition }) => {
      const errorCode = await this.replicaManager.writeTxnMarker(topic, partition, m, timeoutMs);
      if (errorCode === 0 && topic === OFFSETS_TOPIC) await this.groups.completeTransaction(partition, m.producerId, m.commit);
      return { topic, partition, errorCode };
    }));
  }

  /**
   * A transactional produce is checked with the transaction coordinator (Kafka's transaction
   * verification, KIP-890 part 1): each partition must be in the producer's ongoing transaction, so
   * a late write after the transaction was aborted cannot open a transaction no one will close.
   * With `addToTransaction` (Produce v12, transaction version 2) the partitions led here are added
   * to the transaction instead (KIP-890 part 2); the coordinator still refuses an old epoch, so a
   * late write of a transaction that has ended (its EndTxn bumped the epoch) cannot start another.
   */
  private async checkTransactionalProduce(transactionalId: string, entries: { topic: string; partition: number; records: Buffer }[],
    addToTransaction: boolean, transactionAbortableSupported: boolean): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const byProducer = new Map<string, { producerId: bigint; producerEpoch: number; partitions: { topic: string; partition: number }[] }>();
    for (const e of entries) {
      // Legacy message sets (Produce v0-2) have no producer; validation answers malformed bytes.
      const batch = firstBatchProducer(e.records);
      if (batch === null || !batch.isTransactional) continue;
      const { producerId, producerEpoch } = batch;
      // A partition not led here is refused by the append; it must not join the transaction first.
      if (addToTransaction && !this.replicaManager.partition(e.topic, e.partition)?.isLeader) continue;
      const k = `${producerId}/${producerEpoch}`;
      let g = byProducer.get(k);
      if (!g) byProducer.set(k, g = { producerId, producerEpoch, partitions: [] });
      g.partitions.push({ topic: e.topic, partition: e.partition });
    }
    const checked = await Promise.all([...byProducer.values()].map((g) => this.checkTxnPartitions({ transactionalId, ...g }, addToTransaction)));
    for (const r of checked.flat()) {
      if (r.errorCode === 0) continue;
      // What a produce may answer: coordinator trouble (and, while adding, a transaction that is
      // ending) is retriable (NOT_ENOUGH_REPLICAS, as Kafka); TRANSACTION_ABORTABLE only to a
      // client that knows it (Produce v11+), INVALID_TXN_STATE before.
      const code = r.errorCode === ErrorCode.PRODUCER_FENCED ? ErrorCode.INVALID_PRODUCER_EPOCH
        : r.errorCode === ErrorCode.TRANSACTION_ABORTABLE && !transactionAbortableSupported ? ErrorCode.INVALID_TXN_STATE
          : COORDINATOR_TROUBLE.has(r.errorCode) ? ErrorCode.NOT_ENOUGH_REPLICAS : r.errorCode;
      out.set(partitionKey(r.topic, r.partition), code);
    }
    return out;
  }

  /**
   * The transaction coordinator's answer for partitions of a producer's transaction, wherever it
   * runs: this broker's shard when this broker leads the id's `__transaction_state` partition,
   * else the broker that leads it (AddPartitionsToTxn v4+). `add`: add the partitions (a
   * transaction version 2 client) instead of only verifying them.
   */
  checkTxnPartitions(p: { transactionalId: string; producerId: bigint; producerEpoch: number; partitions: { topic: string; partition: number }[] }, add: boolean): Promise<PartitionError[]> {
    const shard = this.txn.partitionFor(p.transactionalId);
    const coordinator = this.deps.metadata.view().topic(TRANSACTION_STATE_TOPIC)?.partitions.find((x) => x.partition === shard)?.leader ?? -1;
    if (coordinator < 0) return Promise.resolve(p.partitions.map((tp) => ({ ...tp, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE })));
    if (coordinator !== this.deps.nodeId) return this.addPartitionsToTxn.check(coordinator, { ...p, verifyOnly: !add });
    if (!add) return Promise.resolve(this.txn.verifyPartitions(p));
    return this.txn.addPartitions({ ...p, clientTransactionVersion: 2 }).then((errorCode) => p.partitions.map((tp) => ({ ...tp, errorCode })));
  }

  /** The group coordinator over `__consumer_offsets`, configured from the broker config. */
  readonly groups: GroupCoordinatorService;
  /** The node's logger with `component` on each line. */
  private log(component: string): Logger {
    return componentLogger(this.deps.logger ?? quietLogger, component);
  }

  private createGroupCoordinator(): GroupCoordinatorService {
    const c = this.deps.brokerConfig;
    const n = (key: Parameters<typeof c.get>[0]) => Number(c.get(key));
    const scheduler = this.coordinatorScheduler();
    return new GroupCoordinatorService({
      clock: this.deps.clock, scheduler, numPartitions: n('offsets.topic.num.partitions'), newUuid: randomUUID,
      log: replicaManagerLog(this.replicaManager, OFFSETS_TOPIC, n('offsets.commit.timeout.ms')),
      logger: this.log('group-coordinator'),
      config: {
        initialRebalanceDelayMs: n('group.initial.rebalance.delay.ms'), minSessionTimeoutMs: n('group.min.session.timeout.ms'),
        maxSessionTimeoutMs: n('group.max.session.timeout.ms'), groupMaxSize: n('group.max.size'),
        offsetsRetentionMs: n('offsets.retention.minutes') * 60_000, offsetsRetentionCheckIntervalMs: n('offsets.retention.check.interval.ms'),
        offsetMetadataMaxBytes: 4096, consumerSessionTimeoutMs: n('group.consumer.session.timeout.ms'),
        consumerHeartbeatIntervalMs: n('group.consumer.heartbeat.interval.ms'), consumerGroupMaxSize: n('group.consumer.max.size'),
        consumerAssignors: String(c.get('group.consumer.assignors')).split(',').map((a) => (/range/i.test(a) ? 'range' : 'uniform')),
        shareSessionTimeoutMs: n('group.share.session.timeout.ms'), shareHeartbeatIntervalMs: n('group.share.heartbeat.interval.ms'), shareGroupMaxSize: n('group.share.max.size'),
      },
    });
  }

  private readonly internalTopicCreations = new Map<string, Promise<number>>();
  /** Creates an internal topic on first use; one creation at a time per topic. */
  private ensureInternalTopic(name: string, numPartitions: number, replicationFactorWanted: number, configsFor: (replicationFactor: number) => Record<string, string>): Promise<number> {
    const view = this.deps.metadata.view();
    if (view.topic(name)) return Promise.resolve(0);
    const running = this.internalTopicCreations.get(name);
    if (running) return running;
    // A cluster smaller than the wanted replication factor still gets the topic.
    const replicationFactor = Math.max(1, Math.min(replicationFactorWanted, view.brokers('').length || 1));
    const creation = this.topicAdmin.createTopics({
      topics: [{ name, numPartitions, replicationFactor, assignments: [], configs: Object.entries(configsFor(replicationFactor)).map(([k, value]) => ({ name: k, value })) }],
      timeoutMs: 30_000, validateOnly: false,
    }, 7).then((r) => (r[0]?.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS ? 0 : r[0]?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR))
      .finally(() => { this.internalTopicCreations.delete(name); });
    this.internalTopicCreations.set(name, creation);
    return creation;
  }

  // ---- tiered storage ---------------------------------------------------------------------------

  /** Tiered storage's tasks and remote reads (null when remote.log.storage.system.enable is off). */
  readonly remoteLog: RemoteLogManager | null;
  private remoteLogPoll: { cancel(): void } | null = null;
  /** Produces `__remote_log_metadata` events to a partition led by another broker (made with the RemoteLogManager). */
  private metadataConnections: InterBrokerConnections | null = null;

  /** An rlmm.config. (remote.log.metadata.manager.impl.prefix) integer setting, Kafka's TopicBasedRemoteLogMetadataManagerConfig names. */
  private rlmmSetting(name: string, dflt: number): number {
    const c = this.deps.brokerConfig;
    const raw = c.originals.get(String(c.get('remote.log.metadata.manager.impl.prefix')) + name)?.trim();
    const n = raw === undefined ? dflt : Number(raw);
    return Number.isSafeInteger(n) ? n : dflt;
  }

  private createRemoteLogManager(rsm: RemoteStorageManager): RemoteLogManager {
    const c = this.deps.brokerConfig;
    const rm = this.replicaManager;
    const numPartitions = Math.max(1, this.rlmmSetting('remote.log.metadata.topic.num.partitions', REMOTE_LOG_METADATA_TOPIC_DEFAULTS.numPartitions));
    const topic: RemoteLogMetadataTopic = {
      append: (partition, value) => this.appendRemoteLogMetadata(partition, value),
      // This broker's replica up to its high watermark: what is committed (Kafka's consumer reads the
      // same); a partition without a replica here is fetched from its leader.
      read: async (partition, offset, maxBytes) => {
        const p = rm.partition(REMOTE_LOG_METADATA_TOPIC, partition);
        if (p === undefined) return this.fetchRemoteLogMetadata(partition, offset, maxBytes);
        const hw = p.highWatermark;
        if (offset >= hw || offset < p.log.logStartOffset) return { records: Buffer.alloc(0), endOffset: hw };
        return { records: await p.log.read(offset, maxBytes, hw, true), endOffset: hw };
      },
      isLocal: (partition) => rm.partition(REMOTE_LOG_METADATA_TOPIC, partition) !== undefined,
    };
    const logger = this.log('remote-log-manager');
    this.metadataConnections = new InterBrokerConnections({
      clientId: `broker-${this.deps.nodeId}-remote-log-metadata`, requestTimeoutMs: INTER_BROKER_REQUEST_TIMEOUT_MS, endpoint: (id) => this.interBrokerEndpoint(id),
      tls: clientTlsFor(c, c.interBrokerListenerName), sasl: clientSaslFor(c, c.interBrokerListenerName),
    });
    const metadata = new RemoteLogMetadataManager(topic, numPartitions, logger,
      Math.max(0, this.rlmmSetting('remote.log.metadata.consume.wait.ms', REMOTE_LOG_METADATA_TOPIC_DEFAULTS.consumeWaitMs)));
    const rlm = new RemoteLogManager({
      brokerId: this.deps.nodeId, rsm, metadata, clock: this.deps.clock, scheduler: this.coordinatorScheduler(), logger,
      taskIntervalMs: Number(c.get('remote.log.manager.task.interval.ms')),
      copyMaxBytesPerSecond: Number(c.get('remote.log.manager.copy.max.bytes.per.second')),
      fetchMaxBytesPerSecond: Number(c.get('remote.log.manager.fetch.max.bytes.per.second')),
    });
    rm.remoteLog = rlm;
    rm.remoteFetchMaxWaitMs = Number(c.get('remote.fetch.max.wait.ms'));
    // Kafka's consumer task polls the metadata partitions; every broker replays what its replicas hold.
    const scheduler = this.coordinatorScheduler();
    const poll = () => {
      this.remoteLogPoll = null;
      metadata.poll().catch((e: unknown) => logger.warn(`__remote_log_metadata: ${e instanceof Error ? e.message : String(e)}`))
        .finally(() => { if (!this.remoteLogClosed) this.remoteLogPoll = scheduler.schedule(REMOTE_LOG_METADATA_POLL_MS, poll); });
    };
    this.remoteLogPoll = scheduler.schedule(REMOTE_LOG_METADATA_POLL_MS, poll);
    return rlm;
  }

  private remoteLogClosed = false;

  /** Appends an event to `__remote_log_metadata` (created on first use), here or at the partition's leader, acks=all. */
  private async appendRemoteLogMetadata(partition: number, value: Buffer): Promise<number> {
    const created = await this.ensureRemoteLogMetadataTopic();
    if (created !== 0) throw new Error(`${REMOTE_LOG_METADATA_TOPIC} could not be created (error ${created})`);
    const records = buildRecordBatchSync({ records: [{ key: null, value, timestamp: this.deps.clock.nowMs() }] });
    const leader = this.deps.metadata.view().topic(REMOTE_LOG_METADATA_TOPIC)?.partitions.find((p) => p.partition === partition)?.leader ?? -1;
    if (leader < 0) throw new Error(`${REMOTE_LOG_METADATA_TOPIC}-${partition} has no leader`);
    const timeoutMs = INTER_BROKER_REQUEST_TIMEOUT_MS;
    if (leader === this.deps.nodeId) {
      const out = (await this.replicaManager.produce(-1, timeoutMs, [{ topic: REMOTE_LOG_METADATA_TOPIC, partition, records }])).get(partitionKey(REMOTE_LOG_METADATA_TOPIC, partition));
      if (out === undefined || out.errorCode !== 0) throw new Error(`${REMOTE_LOG_METADATA_TOPIC}-${partition}: produce failed (error ${out?.errorCode})`);
      return Number(out.baseOffset);
    }
    const conn = await this.metadataConnections!.connection(leader);
    const response = await conn.send(0, conn.version(0, 12), { transactionalId: null, acks: -1, timeoutMs, topicData: [{ name: REMOTE_LOG_METADATA_TOPIC, partitionData: [{ index: partition, records }] }] });
    const r = response.responses?.[0]?.partitionResponses?.[0];
    if (r === undefined || r.errorCode !== 0) throw new Error(`${REMOTE_LOG_METADATA_TOPIC}-${partition}: produce to broker ${leader} failed (error ${r?.errorCode})`);
    return Number(r.baseOffset);
  }

  /** A `__remote_log_metadata` partition not hosted here, read as a consumer from its leader (Fetch v12, by topic name). */
  private async fetchRemoteLogMetadata(partition: number, offset: number, maxBytes: number): Promise<{ records: Buffer; endOffset: number } | null> {
    const leader = this.deps.metadata.view().topic(REMOTE_LOG_METADATA_TOPIC)?.partitions.find((p) => p.partition === partition)?.leader ?? -1;
    if (leader < 0 || leader === this.deps.nodeId || this.metadataConnections === null) return null;
    const conn = await this.metadataConnections.connection(leader);
    const response = await conn.send(1, Math.min(conn.version(1), 12), {
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, rackId: '', forgottenTopicsData: [],
      topics: [{ topic: REMOTE_LOG_METADATA_TOPIC, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: BigInt(offset), lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: maxBytes }] }],
    });
    const r = response.responses?.[0]?.partitions?.[0];
    if (r === undefined || r.errorCode !== 0) throw new Error(`${REMOTE_LOG_METADATA_TOPIC}-${partition}: fetch from broker ${leader} failed (error ${r?.errorCode})`);
    return { records: r.records ?? Buffer.alloc(0), endOffset: Number(r.highWatermark) };
  }

  /** `__remote_log_metadata` (Kafka's TopicBasedRemoteLogMetadataManagerConfig: rlmm.config.remote.log.metadata.topic.*), created on first use. */
  ensureRemoteLogMetadataTopic(): Promise<number> {
    return this.ensureInternalTopic(REMOTE_LOG_METADATA_TOPIC, Math.max(1, this.rlmmSetting('remote.log.metadata.topic.num.partitions', REMOTE_LOG_METADATA_TOPIC_DEFAULTS.numPartitions)),
      this.rlmmSetting('remote.log.metadata.topic.replication.factor', REMOTE_LOG_METADATA_TOPIC_DEFAULTS.replicationFactor), () => ({
        'cleanup.policy': 'delete', 'retention.ms': String(this.rlmmSetting('remote.log.metadata.topic.retention.ms', REMOTE_LOG_METADATA_TOPIC_DEFAULTS.retentionMs)),
        'remote.storage.enable': 'false',
      }));
  }

  /** Stops tiered storage's tasks and polling and closes the remote store (before the logs close). */
  async closeRemoteLog(): Promise<void> {
    this.remoteLogClosed = true;
    this.remoteLogPoll?.cancel();
    this.remoteLogPoll = null;
    this.metadataConnections?.close();
    // The tasks stop at once; closing the store then ends their calls in flight, so a store that
    // stopped answering cannot hold the shutdown until its timeouts.
    const stopping = this.remoteLog?.close();
    await this.deps.remoteStorage?.close();
    await stopping;
  }

  /** `__consumer_offsets` (compacted), created on first use. */
  ensureOffsetsTopic(): Promise<number> {
    const c = this.deps.brokerConfig;
    return this.ensureInternalTopic(OFFSETS_TOPIC, Number(c.get('offsets.topic.num.partitions')), Number(c.get('offsets.topic.replication.factor')), () => ({
      'cleanup.policy': 'compact', 'compression.type': 'producer', 'segment.bytes': String(c.get('offsets.topic.segment.bytes')),
    }));
  }

  /** `__transaction_state` (compacted, uncompressed, transaction.state.log.*), created on first use. */
  ensureTransactionTopic(): Promise<number> {
    const c = this.deps.brokerConfig;
    return this.ensureInternalTopic(TRANSACTION_STATE_TOPIC, Number(c.get('transaction.state.log.num.partitions')),
      Number(c.get('transaction.state.log.replication.factor')), (replicationFactor) => ({
        'cleanup.policy': 'compact', 'compression.type': 'uncompressed', 'segment.bytes': String(c.get('transaction.state.log.segment.bytes')),
        // A topic made smaller than asked (a small cluster) could never meet a larger min ISR.
        'min.insync.replicas': String(Math.min(Number(c.get('transaction.state.log.min.isr')), replicationFactor)), 'unclean.leader.election.enable': 'false',
      }));
  }

  /** Share groups: the share coordinator, the share-partitions led here and the share sessions. */
  readonly share: ShareParts;

  /** `__share_group_state` (share.coordinator.state.topic.*), created on first use; compacted: each update carries a share-partition's whole in-flight state. */
  ensureShareStateTopic(): Promise<number> {
    const c = this.deps.brokerConfig;
    return this.ensureInternalTopic(SHARE_STATE_TOPIC, Number(c.get('share.coordinator.state.topic.num.partitions')),
      Number(c.get('share.coordinator.state.topic.replication.factor')), (replicationFactor) => ({
        'cleanup.policy': 'compact', 'segment.bytes': String(c.get('share.coordinator.state.topic.segment.bytes')),
        'min.insync.replicas': String(Math.min(Number(c.get('share.coordinator.state.topic.min.isr')), replicationFactor)), 'unclean.leader.election.enable': 'false',
      }));
  }

  /** The leader of a partition as the latest image has it; -1 when none (or no such topic). */
  partitionLeader(topic: string, partition: number): number {
    return this.deps.metadata.view().topic(topic)?.partitions.find((p) => p.partition === partition)?.leader ?? -1;
  }

  /** http://host:port of broker `id`'s registration endpoint named `name`, or null. */
  endpointUrl(id: number, name: string): string | null {
    const e = this.image?.cluster.broker(id)?.endpoints.find((x) => x.name === name);
    // Kafka's SecurityProtocol ids: 1 SSL and 3 SASL_SSL use TLS.
    const scheme = e?.securityProtocol === 1 || e?.securityProtocol === 3 ? 'https' : 'http';
    return e ? `${scheme}://${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}` : null;
  }

  /** One decision of the authorizer over the latest ACLs (true without one): the schema registry asks it. */
  authorize(principal: string, host: string, operation: number, resourceType: number, resourceName: string): boolean {
    return this.authorizer === null || this.authorizer.indexFor(this.acls).authorize(principal, host, operation, resourceType, resourceName);
  }

  /** The SCRAM credentials of the latest image (the schema registry checks HTTP Basic passwords against them). */
  get scramImage(): ScramImage { return this.scramCredentials; }

  /**
   * `_schemas` for the schema registry: compacted, one partition (a single writer appends in
   * order), the cluster's default replication factor and min ISR like the other internal topics.
   */
  ensureSchemasTopic(): Promise<number> {
    const c = this.deps.brokerConfig;
    // Confluent's kafkastore.topic.replication.factor is 3; a smaller cluster gets every broker.
    return this.ensureInternalTopic(SCHEMAS_TOPIC, 1, Math.max(3, Number(c.get('default.replication.factor'))), (replicationFactor) => ({
      'cleanup.policy': 'compact', 'compression.type': 'producer',
      'min.insync.replicas': String(Math.min(Number(c.get('transaction.state.log.min.isr')), replicationFactor)), 'unclean.leader.election.enable': 'false',
    }));
  }

  /** Followers fetch from their leaders here; idle (no connection) while this broker follows nothing. */
  readonly replicaFetchers: ReplicaFetcherManager;
  /** The image of the delta being applied: where the fetchers find leaders' endpoints and topic ids. */
  private image: MetadataImage | null = null;
  /** leader.replication.throttled.rate: bytes served to throttled followers. */
  private readonly leaderQuota: ReplicationQuota;
  /** follower.replication.throttled.rate: bytes fetched for throttled replicas. */
  private readonly followerQuota: ReplicationQuota;

  private createReplicaFetchers(): ReplicaFetcherManager {
    const c = this.deps.brokerConfig;
    const num = (key: Parameters<typeof c.get>[0]) => Number(c.get(key));
    return new ReplicaFetcherManager({
      fetchMaxBytes: num('replica.fetch.max.bytes'), fetchResponseMaxBytes: num('replica.fetch.response.max.bytes'),
      fetchWaitMaxMs: num('replica.fetch.wait.max.ms'), fetchMinBytes: num('replica.fetch.min.bytes'),
      fetchBackoffMs: num('replica.fetch.backoff.ms'), numFetchers: num('num.replica.fetchers'),
    }, {
      brokerId: this.deps.nodeId,
      // -1 (unknown) until registered: the leader does not check it then (KIP-903).
      brokerEpoch: () => this.lifecycle?.brokerEpoch ?? -1n,
      leaderEndpoint: (id) => this.interBrokerEndpoint(id),
      topicId: (topic) => this.image?.topics.getTopic(topic)?.id,
      // Consumers reading from this follower (KIP-392) wait for its high watermark to move.
      onFollowerProgress: (p) => this.replicaManager.onHighWatermark(p),
      restoreFromRemoteTier: (p, localStart, logStart) => this.replicaManager.restoreFromRemoteTier(p, localStart, logStart),
      // Below the free-space floor a follower stops growing its copies of clients' topics (they may
      // leave the ISR; the leader's other replicas carry acks=all) rather than run into ENOSPC and
      // halt; the broker's own topics (group offsets, transactions, share state, tiered metadata,
      // schemas) keep replicating: they are small and their commits wait for the ISR.
      mayAppend: (p) => brokerWrittenTopic(p.topic) || this.deps.belowFreeSpaceFloor?.(p.topic, p.index, num('replica.fetch.max.bytes')) !== true,
      connect: async (e: LeaderEndpoint) => {
        const interBrokerTls = clientTlsFor(c, c.interBrokerListenerName);
        const interBrokerSasl = clientSaslFor(c, c.interBrokerListenerName);
        const conn = await BrokerConnection.open({
          host: e.host, port: e.port, clientId: `broker-${this.deps.nodeId}-fetcher`, requestTimeoutMs: num('replica.socket.timeout.ms'),
          ...(interBrokerTls ? { tls: interBrokerTls } : {}),
          ...(interBrokerSasl ? { sasl: interBrokerSasl } : {}),
        });
        try {
          await conn.negotiate();
        } catch (err) {
          conn.close();
          throw err;
        }
        return conn;
      },
      clock: this.deps.clock,
      logger: this.log('replica-fetcher'),
      throttle: {
        quota: this.followerQuota,
        // A replica in the ISR is never throttled (Kafka: only catching-up replicas are).
        isThrottled: (p) => isThrottledReplica(this.throttledReplicas(p.topic, 'follower.replication.throttled.replicas'), p.index, this.deps.nodeId)
          && this.image?.topics.getTopic(p.topic)?.partitions.get(p.index)?.isr.includes(this.deps.nodeId) !== true,
      },
    });
  }

  /**
   * leader/follower.replication.throttled.rate as this broker's dynamic config, the cluster
   * default, or the static config have it, read at each check (a reassignment sets and clears them).
   */
  private replicationQuota(name: 'leader.replication.throttled.rate' | 'follower.replication.throttled.rate'): ReplicationQuota {
    const c = this.deps.brokerConfig;
    const rate = (): number => {
      const configs = this.image?.configs;
      const value = configs?.brokerConfigs(this.deps.nodeId).get(name) ?? configs?.brokerConfigs('').get(name);
      return Number(value ?? c.get(name));
    };
    return new ReplicationQuota(rate, {
      windowCount: Number(c.get('replication.quota.window.num')), windowMs: Number(c.get('replication.quota.window.size.seconds')) * 1000,
    });
  }

  private throttledReplicas(topic: string, name: 'leader.replication.throttled.replicas' | 'follower.replication.throttled.replicas') {
    return parseThrottledReplicas(this.image?.configs.topicConfigs(topic).get(name));
  }

  private readonly deltaPorts: ReplicaDeltaPorts = {
    openLog: (topic, partition, topicId) => this.deps.openLog(topic, partition, topicId),
    deleteLog: async (topic, partition) => { await this.deps.dropLog?.(topic, partition); },
    topicConfig: (topic) => ({ minInsyncReplicas: this.deps.minInsyncReplicas(topic), maxMessageBytes: this.deps.maxMessageBytes?.(topic), schemaValidation: this.deps.schemaValidation?.(topic) ?? null, linkName: this.image?.configs.topicConfigs(topic).get('link.name') ?? '', epochBase: Number(this.image?.configs.topicConfigs(topic).get('link.epoch.base') ?? 0) }),
  };

  private readonly afterDeltaListeners: ((image: MetadataImage) => void)[] = [];
  /** Called after each delta once the replica manager has applied it (the partitions led here are as the image says). */
  afterDelta(listener: (image: MetadataImage) => void): void {
    this.afterDeltaListeners.push(listener);
    // Deltas applied before it came: it hears of the current state once they are.
    this.syncing = this.syncing.then(() => { if (this.image !== null) listener(this.image); });
  }

  /**
   * Queues a delta behind the ones before it (applying one awaits logs opening and deleting). A
   * failed partition is logged and the next delta still applies; the coordinators then follow
   * the leaderships of their internal partitions.
   */
  private enqueueDelta(delta: MetadataDelta, image: MetadataImage): void {
    const step = this.syncing.then(async () => {
      this.image = image;
      const applied = await this.replicaManager.applyDelta(delta, image, this.deltaPorts);
      this.groups.syncPartitions();
      this.txn.syncPartitions();
      this.share.coordinator.syncPartitions();
      for (const l of this.afterDeltaListeners) l(image);
      if (applied.leaders + applied.followers + applied.deleted > 0) {
        this.log('replica-manager').info(`metadata offset ${image.provenance.lastContainedOffset}: ${applied.leaders} partition(s) led here, `
          + `${applied.followers} followed, ${applied.deleted} deleted (${applied.opened} log(s) opened)`);
      }
      if (applied.failed.length === 0) return;
      const why = applied.failed.map((f) => `${partitionName(f.topic, f.partition)}: ${f.error instanceof Error ? f.error.message : String(f.error)}`);
      throw new Error(`metadata offset ${image.provenance.lastContainedOffset}: ${why.length} partition(s) not applied (${why.join('; ')})`);
    });
    this.firstDelta ??= step;
    this.syncing = step.catch((e: unknown) => this.log('replica-manager').error(e instanceof Error ? e.message : String(e)));
  }

  /**
   * Resolves once the replica manager reflects the metadata this broker started with (the first
   * delta: the whole image); rejects when a partition of it could not be opened.
   */
  async replicasLoaded(): Promise<void> {
    await this.settled();
    await this.firstDelta;
  }

  /** Resolves when the replica manager reflects the last metadata delta delivered. */
  settled(): Promise<void> { return this.syncing; }

  /**
   * The controller as this broker uses it: an answer comes once the change is in the image, and
   * also in the replica manager, so a client that asks this broker next sees the result.
   */
  readonly controller: ControllerChannel = (() => {
    const c = () => this.deps.controller;
    const settle = <T>(p: Promise<T>): Promise<T> => p.then(async (r) => { await this.settled(); return r; });
    return {
      createTopics: (request, caller) => settle(c().createTopics(request, caller)),
      deleteTopics: (targets, caller) => settle(c().deleteTopics(targets, caller)),
      createPartitions: (topics, validateOnly, caller) => settle(c().createPartitions(topics, validateOnly, caller)),
      electLeaders: (request, caller) => settle(c().electLeaders(request, caller)),
      alterConfigs: (change, caller) => settle(c().alterConfigs(change, caller)),
      alterClientQuotas: (request, caller) => settle(c().alterClientQuotas(request, caller)),
      alterPartitionReassignments: (request, caller) => settle(c().alterPartitionReassignments(request, caller)),
      listPartitionReassignments: (request, caller) => c().listPartitionReassignments(request, caller),
      updateFeatures: (request, caller) => {
        const update = c().updateFeatures;
        if (update === undefined) return Promise.resolve({ throttleTimeMs: 0, errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: 'No controller here takes feature updates.', results: [] });
        return settle(update.call(c(), request, caller));
      },
      createAcls: (creations, caller) => c().createAcls(creations, caller),
      deleteAcls: (filters, caller) => c().deleteAcls(filters, caller),
      allocateProducerIds: (request) => c().allocateProducerIds(request),
      alterUserScramCredentials: (request, caller) => c().alterUserScramCredentials(request, caller),
      registerBroker: (request) => c().registerBroker(request),
      brokerHeartbeat: (request) => c().brokerHeartbeat(request),
      alterPartition: (request, version) => c().alterPartition(request, version),
    } satisfies ControllerChannel;
  })();

  /** The SCRAM credentials of the latest metadata image (DescribeUserScramCredentials). */
  private scramCredentials: ScramImage = ScramImage.EMPTY;

  /** This process's incarnation of the broker (KIP-631): a restart registers a new one. */
  readonly incarnationId = Buffer.from(randomUUID().replace(/-/g, ''), 'hex').toString('base64url');

  /** This broker's registration and heartbeats (null until `register`). */
  lifecycle: LifecycleDriver | null = null;

  /**
   * Registers this broker with the controller (listeners as advertised), starts heartbeating, and
   * resolves once the controller has unfenced it and this broker's metadata shows it.
   */
  async register(listeners: BrokerRegistrationRequest['listeners'], timeoutMs = 60_000): Promise<void> {
    const c = this.deps.brokerConfig;
    const view = this.deps.metadata.view();
    const rack = c.get('broker.rack') as string | null;
    const driver = this.lifecycle = new LifecycleDriver({
      registration: {
        brokerId: this.deps.nodeId, clusterId: view.clusterId, incarnationId: this.incarnationId,
        listeners, rack: rack === '' ? null : rack, isMigratingZkBroker: false, logDirs: [],
        features: CONTROLLER_FEATURES.filter((f) => f.name !== KRAFT_VERSION_FEATURE)
          .map((f) => ({ name: f.name, minSupportedVersion: f.minVersion, maxSupportedVersion: f.maxVersion })),
      },
      heartbeatIntervalMs: Number(c.get('broker.heartbeat.interval.ms')),
      retryBackoffMs: 100,
      sessionTimeoutMs: Number(c.get('broker.session.timeout.ms')),
      ...(this.deps.previousBrokerEpoch !== undefined ? { previousBrokerEpoch: this.deps.previousBrokerEpoch } : {}),
    }, () => this.controller, () => this.deps.metadata.offset(), this.deps.clock, this.log('broker-lifecycle'));
    this.deps.metadata.onChange(() => driver.onMetadata());
    driver.start();
    const me = this.deps.nodeId;
    // 'running': the controller unfenced this registration (an older one of this id may still be
    // listed, with its old listeners, until then).
    await driver.until(() => driver.state === 'running' && this.deps.metadata.view().brokers('').some((b) => b.nodeId === me), timeoutMs, `broker ${me} registration`);
    await this.settled();
  }

  /** Whether this broker's lease with the controller holds (true before it registers: nothing is led through a lapsed session then). */
  holdsLease(): boolean { return this.lifecycle === null || this.lifecycle.holdsLease(); }

  /** `out` as answered, unless the lease ran out while it was being written (leaseLapsed). */
  private checkLeaseAfter<R extends { errorCode: number; errorMessage: string | null }>(out: Map<string, R>, entries: { topic: string; partition: number }[]): Map<string, R> {
    return this.holdsLease() ? out : leaseLapsed(out, entries);
  }

  /** Controlled shutdown before stopping: the controller moves this broker's leaderships away first. */
  async controlledShutdown(timeoutMs: number): Promise<boolean> {
    const driver = this.lifecycle;
    if (driver === null) return false;
    const done = await driver.controlledShutdown(timeoutMs);
    driver.close();
    await this.settled();
    return done;
  }

  private producerIdManager: ProducerIdManager | null = null;
  get producerIds(): ProducerIdManager {
    return this.producerIdManager ??= new ProducerIdManager(this.deps.nodeId, () => this.lifecycle?.brokerEpoch ?? -1n, () => this.controller);
  }

  readonly configAdmin = new ConfigAdmin(() => this.deps.metadata.view(), () => this.deps.brokerConfig, () => this.deps.nodeId, () => this.controller);

  readonly topicAdmin: TopicAdmin = {
    createTopics: (request: CreateTopicsRequest, _apiVersion, caller) => this.controller.createTopics(request, caller),
    deleteTopics: (targets, caller) => this.controller.deleteTopics(targets, caller),
    createPartitions: (topics, validateOnly, caller) => this.controller.createPartitions(topics, validateOnly, caller),
  };

  /** The services object every handler receives. */
  services() {
    const rm = this.replicaManager;
    return {
      nodeId: this.deps.nodeId,
      metadata: () => this.deps.metadata.view(),
      scramCredentials: () => this.scramCredentials,
      autoCreateTopicsEnable: this.deps.autoCreateTopicsEnable,
      autoCreateTopics: async (names: string[], caller: ForwardedFor) => {
        // Sent at CreateTopics v7, as Kafka sends it: over the client's controller_mutation_rate a
        // topic is refused, not throttled. This node's active controller is charged here; another
        // one charges the Envelope's client when it gets the request.
        const quota = new ControllerMutationQuota(this.deps.mutationQuotas?.(), caller.principal, caller.clientId ?? '', true);
        const accepted = names.filter(() => quota.record(this.deps.topicDefaults.numPartitions));
        if (accepted.length === 0) return;
        await this.topicAdmin.createTopics({ topics: accepted.map((name) => ({ name, numPartitions: -1, replicationFactor: -1, assignments: [], configs: [] })), timeoutMs: 30000, validateOnly: false },
          7, { ...caller, apiVersion: 7 });
      },
      producePartitions: async (p: ProducePartitionsParams) => {
        rm.stats.countProduceRequest(p.acks, carriesProducerId(p.entries[0]?.records));
        // A broker that may have been fenced (its lease ran out in a stall) appends nothing for
        // clients, and answers nothing appended while its lease ran out as a success: the
        // controller may have moved the leadership, and what a stale leader appended is truncated.
        if (!this.holdsLease()) return invalidTopicsRefused(leaseLapsed(new Map(), p.entries), p.entries);
        if (p.transactionalId === null) return invalidTopicsRefused(this.checkLeaseAfter(await rm.produce(p.acks, p.timeoutMs, p.entries), p.entries), p.entries);
        const refused = await this.checkTransactionalProduce(p.transactionalId, p.entries, p.addToTransaction ?? false, p.transactionAbortableSupported ?? false);
        const out = await rm.produce(p.acks, p.timeoutMs, p.entries.filter((e) => !refused.has(partitionKey(e.topic, e.partition))));
        for (const [k, errorCode] of refused) out.set(k, { errorCode, errorMessage: null, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [] });
        return invalidTopicsRefused(this.checkLeaseAfter(out, p.entries), p.entries);
      },
      fetchSessions: this.fetchSessions,
      fetchPartitions: (p: any) => rm.fetch(p),
      listOffsets: (p: any) => rm.listOffsets(p.topic, p.partition, p.timestamp, p.currentLeaderEpoch, p.isolationLevel, p.replicaId),
      topicAdmin: this.topicAdmin,
      deleteTopicEnable: this.deps.brokerConfig.get('delete.topic.enable') as boolean,
      controller: this.controller,
      configAdmin: this.configAdmin,
      clientQuotas: () => this.clientQuotas.image,
      clientQuotaManager: this.clientQuotas,
      fetchMaxBytes: Number(this.deps.brokerConfig.get('fetch.max.bytes')),
      mutationQuotas: () => this.deps.mutationQuotas?.(),
      defaultNumPartitions: this.deps.topicDefaults.numPartitions,
      deleteRecords: (topic: string, partition: number, offset: bigint) => rm.deleteRecords(topic, partition, offset),
      offsetForLeaderEpoch: (topic: string, partition: number, current: number, epoch: number) => rm.offsetForLeaderEpoch(topic, partition, current, epoch),
      groups: this.groups,
      ensureOffsetsTopic: () => this.ensureOffsetsTopic(),
      share: this.share.manager,
      shareSessions: this.share.sessions,
      shareState: this.share.coordinator,
      sharePersister: this.share.persister,
      highWatermark: (topic: string, partition: number) => { const p = this.replicaManager.partition(topic, partition); return p?.isLeader ? p.highWatermark : null; },
      logDirs: () => this.deps.logDirs?.() ?? [],
      // Only where the produce would be appended: elsewhere the replica manager's answer (not the leader, unknown) comes first.
      produceRefusal: (topic: string, partition: number, bytes: number) => (rm.partition(topic, partition)?.isLeader === true ? this.deps.produceRefusal?.(topic, partition, bytes) ?? null : null),
      generateProducerId: () => this.producerIds.generate(),
      txn: this.txn,
      ensureTransactionTopic: () => this.ensureTransactionTopic(),
      writeTxnMarkers: (m: TxnMarkerParams) => this.writeTxnMarkers(m),
      checkTxnPartitions: (p: Parameters<Broker['checkTxnPartitions']>[0], add: boolean) => this.checkTxnPartitions(p, add),
      activeProducers: (topic: string, partition: number) => rm.activeProducers(topic, partition),
      aclAdmin: { enabled: this.authorizer !== null, acls: () => this.acls },
    };
  }
}

/** Whether the first batch is a RecordBatch v2 with a producer id (idempotent or transactional); legacy message sets have none. */
function carriesProducerId(records: Buffer | undefined): boolean {
  return records !== undefined && (firstBatchProducer(records)?.producerId ?? -1n) >= 0n;
}

/**
 * Transaction coordinator answers that mean "not reachable or busy here now": a producer retries
 * them (Kafka answers NOT_ENOUGH_REPLICAS for them). NETWORK_EXCEPTION: the coordinator's broker
 * did not answer.
 */
const COORDINATOR_TROUBLE: ReadonlySet<number> = new Set<number>([
  ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.NETWORK_EXCEPTION,
]);

/**
 * A partition of a topic whose name Kafka refuses can never exist: INVALID_TOPIC_EXCEPTION instead
 * of UNKNOWN_TOPIC_OR_PARTITION, which clients retry until their timeout. Only failed entries are
 * looked at, so the produce path pays nothing.
 */
/** Every entry not already failed answered NOT_LEADER_OR_FOLLOWER: this broker's lease ran out (BrokerLifecycle.holdsLease). */
function leaseLapsed<R extends { errorCode: number; errorMessage: string | null }>(results: Map<string, R>, entries: { topic: string; partition: number }[]): Map<string, R> {
  const errorMessage = 'this broker missed its session with the controller: leadership is unknown until its metadata catches up';
  for (const e of entries) {
    const k = partitionKey(e.topic, e.partition);
    const r = results.get(k);
    if (r === undefined) results.set(k, { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, errorMessage, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [] } as unknown as R);
    else if (r.errorCode === ErrorCode.NONE) results.set(k, { ...r, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, errorMessage, baseOffset: -1n });
  }
  return results;
}

function invalidTopicsRefused<R extends { errorCode: number; errorMessage: string | null }>(results: Map<string, R>, entries: { topic: string; partition: number }[]): Map<string, R> {
  for (const e of entries) {
    const k = partitionKey(e.topic, e.partition);
    const r = results.get(k);
    if (r?.errorCode !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) continue;
    const why = topicNameError(e.topic);
    if (why !== null) results.set(k, { ...r, errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: why });
  }
  return results;
}
