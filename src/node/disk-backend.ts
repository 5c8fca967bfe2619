// The durable backend: partition logs from the storage engine in a log directory, and the cluster
// metadata as the `__cluster_metadata` log in the same directory. meta.properties binds the
// directory to one cluster and node; a directory of another one is refused at start.
import { randomBytes } from 'node:crypto';
import * as nodeFs from 'node:fs';
import * as nodePath from 'node:path';
import { Prng, limits, partitionKey, componentLogger, type Clock, type Logger } from '../util/index.js';
import { effectiveBrokerConfig, listenerName, resolveTopicConfig, validateGroupConfigs, validateTopicConfigs, type BrokerConfig, type TopicConfig } from '../config/index.js';
import { controllerGateFor, controllerSaslFor, controllerTlsFor } from './controller-listener.js';
import { ConfigurationsImage, type MetadataImage, type MetadataRecord } from '../metadata/index.js';
import { describeQuorum, parseQuorumVoters, type VoterAddress } from '../raft/index.js';
import { realScheduler, StorageLog, subjectNameStrategyOf, type SchemaValidation } from '../replication/index.js';
import {
  LogDirFreeSpace, LogManager, NodeFileSystem, logConfig, logDirName, parseLogDirName, randomUuid, readMetaProperties, type FileSystem, type LogConfig, type LogDirSpaceView, type PartitionLog,
} from '../storage/index.js';
import { readBootstrapRecords, storedVoters, unformattedRefusal } from './storage-format.js';
import { LogMetadata, METADATA_TOPIC, type LogMetadataOptions } from './metadata-log.js';
import { ControllerService } from './controller-service.js';
import { ForwardingControllerChannel } from './controller-forwarder.js';
import { controllerApis } from './controller-apis.js';
import { ClientQuotaManager, type Router, type LogDirDescription } from '../broker/index.js';
import type { BrokerDeps } from './broker.js';
import { openRemoteStorageManager, remoteStorageSettings, validateTieredTopicConfig } from '../tiered/index.js';

export interface DiskBackendOptions {
  dataDir: string;
  nodeId: number;
  brokerConfig: BrokerConfig;
  clock: Clock;
  logger: Logger;
  fs?: FileSystem;
  /** How often retention, flush.ms, checkpoints and the cleaner are looked at. */
  tickMs?: number;
  /** Over metadata.log.segment.bytes, whose floor (8 MiB) is too large for tests of segment deletion. */
  metadataSegmentBytes?: number;
  /**
   * The cluster id a new directory is formatted with at start (what `startCluster` gives every
   * node). Without it a directory without meta.properties gets a random one, if the node is its own
   * quorum; a node of a larger quorum refuses to start (`logline storage format` first).
   */
  clusterId?: string;
  /** The log directory went offline after an I/O error (see LogManagerOptions.onOffline). */
  onLogDirFailure?: (dir: string, cause: Error) => void;
  /** Records a new cluster's metadata log starts with (SCRAM credentials of --add-scram). */
  bootstrapRecords?: readonly MetadataRecord[];
}

/**
 * The metadata quorum: this node alone (no process.roles: no controller listener, no network), else
 * controller.quorum.voters over the network, this node a voter on its controller listener
 * (process.roles with controller; the only voter listens too, for brokers on other nodes) or an
 * observer (process.roles=broker). `discovered`: the voter set learnt through
 * controller.quorum.bootstrap.servers (KIP-853) when no static voters are configured; a controller
 * outside it starts as an observer until AddRaftVoter makes it a voter.
 */
export function metadataQuorum(config: BrokerConfig, nodeId: number, discovered?: readonly VoterAddress[], image: () => MetadataImage | undefined = () => undefined):
  Pick<LogMetadataOptions, 'voters' | 'voterAddresses' | 'controllerListener' | 'controllerTls' | 'controllerSasl' | 'controllerGate'> {
  const roles = config.processRoles;
  const voters = config.get('controller.quorum.voters') as string[];
  if (roles.length === 0) return { voters: [nodeId] };
  const controller = roles.includes('controller');
  if (voters.length === 0 && discovered === undefined) {
    if (!controller) throw new DataDirectoryError(`process.roles=${roles.join(',')}: a broker needs controller.quorum.voters or controller.quorum.bootstrap.servers`);
    return { voters: [nodeId] };
  }
  const addresses = voters.length > 0 ? parseQuorumVoters(voters.join(',')) : [...discovered!];
  if (controller && discovered === undefined && !addresses.some((v) => v.nodeId === nodeId)) {
    throw new DataDirectoryError(`controller.quorum.voters does not name this controller (node.id ${nodeId})`);
  }
  if (!controller && addresses.some((v) => v.nodeId === nodeId)) {
    throw new DataDirectoryError(`controller.quorum.voters names node ${nodeId}, whose process.roles has no controller`);
  }
  let controllerListener: { host: string; port: number } | undefined;
  if (controller) {
    const names = new Set(config.controllerListenerNames);
    const l = config.listeners.find((x) => names.has(listenerName(x)));
    if (l === undefined) throw new DataDirectoryError(`listeners: no ${[...names].join('/') || 'controller'} listener (controller.listener.names) for the controller role`);
    const m = /^[^:]+:\/\/(\[[^\]]*\]|[^:]*):(\d+)$/.exec(l)!;
    controllerListener = { host: m[1]!.replace(/^\[|\]$/g, '') || '0.0.0.0', port: Number(m[2]) };
  }
  const controllerTls = controllerTlsFor(config);
  const controllerSasl = controllerSaslFor(config);
  const controllerGate = controllerGateFor(config, image);
  return {
    voterAddresses: addresses, ...(controllerListener ? { controllerListener } : {}), ...(controllerTls ? { controllerTls } : {}),
    ...(controllerSasl ? { controllerSasl } : {}), ...(controllerGate ? { controllerGate } : {}),
  };
}

/** Partition logs opened per event-loop turn while a metadata delta is applied. */
const OPENS_PER_TURN = 32;

/** How long a start asks controller.quorum.bootstrap.servers for the voter set before giving up. */
const BOOTSTRAP_DISCOVERY_TIMEOUT_MS = 60_000;

/**
 * The voter set with its CONTROLLER endpoints, from whichever bootstrap server leads the quorum
 * (DescribeQuorum v2's Nodes); the others answer NOT_LEADER_OR_FOLLOWER, so each is asked in turn
 * until the leader answers (an election may be under way).
 */
export async function discoverVoters(bootstrapServers: readonly string[], logger: Logger, timeoutMs = BOOTSTRAP_DISCOVERY_TIMEOUT_MS): Promise<VoterAddress[]> {
  const servers = bootstrapServers.map((s) => {
    const m = /^(\[[^\]]*\]|[^:]+):(\d+)$/.exec(s.trim());
    if (m === null) throw new DataDirectoryError(`controller.quorum.bootstrap.servers: "${s}" is not host:port`);
    return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
  });
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  for (;;) {
    for (const s of servers) {
      try {
        const d = await describeQuorum(s.host, s.port, 2_000);
        if (d.errorCode === 0 && d.voterEndpoints !== undefined && d.voterEndpoints.length > 0) {
          componentLogger(logger, 'metadata-quorum').info(`voters ${d.voterEndpoints.map((v) => `${v.nodeId}@${v.host}:${v.port}`).join(',')} (from ${s.host}:${s.port})`);
          return d.voterEndpoints.map((v) => ({ nodeId: v.nodeId, host: v.host, port: v.port }));
        }
        last = `${s.host}:${s.port} answered error ${d.errorCode}`;
      } catch (e) {
        last = `${s.host}:${s.port}: ${(e as Error).message}`;
      }
    }
    if (Date.now() >= deadline) throw new DataDirectoryError(`controller.quorum.bootstrap.servers: no leader of the metadata quorum answered within ${timeoutMs} ms (${last})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export type DiskBackend = Omit<BrokerDeps, 'nodeId' | 'clock' | 'controller'> & {
  metadata: LogMetadata;
  /** The controller hosted here (active while this node leads the metadata quorum); `controller` is the channel the broker uses. */
  controllerService: ControllerService;
  controller: ForwardingControllerChannel;
  /** The controller listener's APIs (a node with the controller role; null for a broker-only node). */
  controllerRouter: Router<any> | null;
  /** controller_mutation_rate as this node's controller measures it (charged only while it is active). */
  controllerMutationQuotas: ClientQuotaManager;
  logs: LogManager;
  /** The log directory's free space against log.dir.min.free.bytes and its state. */
  logDirSpace: () => LogDirSpaceView[];
  /** Closes the node's storage; a clean shutdown records `brokerEpoch` (this broker's registration) in its marker. */
  close(brokerEpoch?: bigint): Promise<void> };

function describeLogDir(dataDir: string, logs: LogManager): LogDirDescription {
  let totalBytes = -1;
  let usableBytes = -1;
  try {
    const s = nodeFs.statfsSync(dataDir);
    totalBytes = s.blocks * s.bsize;
    usableBytes = s.bavail * s.bsize;
  } catch { /* unknown: -1 as Kafka reports */ }
  const partitions: LogDirDescription['partitions'] = [];
  for (const [key, log] of logs.logs) {
    const tp = parseLogDirName(key);
    if (!tp || tp.topic === METADATA_TOPIC) continue;
    partitions.push({ ...tp, sizeBytes: log.segments.reduce((n, s) => n + s.size, 0), offsetLag: Math.max(0, log.highWatermark - log.logEndOffset) });
  }
  return { path: nodePath.resolve(dataDir), offline: logs.offline !== null, partitions, totalBytes, usableBytes };
}

export class DataDirectoryError extends Error {
  override name = 'DataDirectoryError';
}

/**
 * One process per log directory (Kafka holds a `.lock` file): the lock file names the owner's pid;
 * a lock left by a process that no longer exists is taken over. Returns the release function.
 */
function lockDataDir(dir: string): () => void {
  nodeFs.mkdirSync(dir, { recursive: true });
  const path = nodePath.join(dir, '.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      nodeFs.writeFileSync(path, `${process.pid}\n`, { flag: 'wx' });
      return () => { try { if (nodeFs.readFileSync(path, 'utf8').trim() === String(process.pid)) nodeFs.rmSync(path); } catch { /* already gone */ } };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const owner = Number(nodeFs.readFileSync(path, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && processExists(owner)) {
        throw new DataDirectoryError(`data directory ${dir} is in use by process ${owner}`);
      }
      if (owner === process.pid) throw new DataDirectoryError(`data directory ${dir} is already open in this process`);
      nodeFs.rmSync(path, { force: true });
    }
  }
  throw new DataDirectoryError(`cannot lock data directory ${dir}`);
}

function processExists(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
}

export async function diskBackend(o: DiskBackendOptions): Promise<DiskBackend> {
  const brokerConfig = o.brokerConfig;
  const unlock = o.fs ? () => {} : lockDataDir(o.dataDir);
  try {
    return await openDiskBackend(o, brokerConfig, unlock);
  } catch (e) {
    unlock();
    throw e;
  }
}

async function openDiskBackend(o: DiskBackendOptions, brokerConfig: BrokerConfig, unlock: () => void): Promise<DiskBackend> {
  let metadata: LogMetadata | null = null;
  // A topic inherits what it does not set from the broker config with its dynamic overrides (the
  // cluster default, then this broker's own), as DescribeConfigs reports it; parsed once per configs image.
  let inherited: { configs: ConfigurationsImage; broker: BrokerConfig } | null = null;
  const brokerConfigIn = (configs: ConfigurationsImage): BrokerConfig => {
    if (inherited?.configs !== configs) {
      inherited = { configs, broker: effectiveBrokerConfig(brokerConfig, { clusterDefault: configs.brokerConfigs(''), perBroker: configs.brokerConfigs(o.nodeId) }) };
    }
    return inherited.broker;
  };
  // Resolved once per configs image (images are immutable): once for every topic without overrides,
  // once per topic with some. Creating 10,000 partitions resolved 10,000 times, ~0.2 ms each.
  const resolved = new WeakMap<ConfigurationsImage, { defaults: TopicConfig | null; byTopic: Map<string, TopicConfig> }>();
  const topicConfigIn = (configs: ConfigurationsImage, topic: string): TopicConfig => {
    let memo = resolved.get(configs);
    if (memo === undefined) resolved.set(configs, memo = { defaults: null, byTopic: new Map() });
    const overrides = configs.topicConfigs(topic);
    if (overrides.size === 0) return memo.defaults ??= resolveTopicConfig(overrides, brokerConfigIn(configs));
    let c = memo.byTopic.get(topic);
    if (c === undefined) memo.byTopic.set(topic, c = resolveTopicConfig(overrides, brokerConfigIn(configs)));
    return c;
  };
  const topicConfig = (topic: string) => topicConfigIn(metadata?.image.configs ?? ConfigurationsImage.EMPTY, topic);
  // Tiered storage (KIP-405): a topic tiers only on a broker with remote.log.storage.system.enable
  // (a topic configured so before the broker turned it off keeps its data local).
  const remoteSettings = remoteStorageSettings(brokerConfig);
  const logConfigOf = (c: TopicConfig): LogConfig => (c.remoteStorageEnable && remoteSettings === null ? { ...c, remoteStorageEnable: false } : c);
  // The remote tier, opened before anything can be led here (the broker's RemoteLogManager uses it).
  // Segments are copied from their files, so tiering needs the logs on a real disk.
  const fsInUse = o.fs ?? new NodeFileSystem();
  if (remoteSettings !== null && !(fsInUse instanceof NodeFileSystem)) {
    throw new DataDirectoryError('remote.log.storage.system.enable=true needs a data directory on disk (segments are copied to the remote tier from their files)');
  }
  const remoteStorage = remoteSettings === null ? undefined : await openRemoteStorageManager(remoteSettings);
  // The metadata log is the Raft driver's (StorageLogStore), never opened through the LogManager.
  const configFor = (topic: string): LogConfig => logConfigOf(topicConfig(topic));
  const fs = fsInUse;
  // Before anything is written: an unformatted node of a larger quorum must not make up a cluster id.
  const refusal = o.clusterId === undefined && readMetaProperties(fs, o.dataDir) === null ? unformattedRefusal(brokerConfig, o.dataDir) : null;
  if (refusal !== null) throw new DataDirectoryError(refusal);
  // What a new cluster's metadata starts with: `storage format`'s bootstrap.checkpoint, then --add-scram's.
  const bootstrapRecords = [...readBootstrapRecords(fs, o.dataDir), ...o.bootstrapRecords ?? []];
  const storage = componentLogger(o.logger, 'storage');
  const logs = new LogManager({
    dir: o.dataDir, fs, clock: o.clock, configFor,
    retentionCheckIntervalMs: Number(brokerConfig.get('log.retention.check.interval.ms')),
    // Kafka checkpoints high watermarks every 5 s and the rest every minute; here all offsets go
    // together (a few small files), at the shorter of the two.
    checkpointIntervalMs: Math.min(Number(brokerConfig.get('log.flush.offset.checkpoint.interval.ms')), Number(brokerConfig.get('replica.high.watermark.checkpoint.interval.ms'))),
    cleanerEnable: brokerConfig.get('log.cleaner.enable') as boolean,
    writebackBytes: Number(brokerConfig.get('log.writeback.bytes')),
    producerIdExpirationMs: Number(brokerConfig.get('producer.id.expiration.ms')),
    producerIdExpirationCheckIntervalMs: Number(brokerConfig.get('producer.id.expiration.check.interval.ms')),
    log: (m) => storage.info(m),
    ...(o.onLogDirFailure ? { onOffline: (cause: Error) => o.onLogDirFailure!(o.dataDir, cause) } : {}),
  });
  // The free-space floor (log.dir.min.free.bytes): dynamic, so read from the image at each sample.
  const thresholdsNow = () => {
    const c = brokerConfigIn(metadata?.image.configs ?? ConfigurationsImage.EMPTY);
    return { minFreeBytes: Number(c.get('log.dir.min.free.bytes')), alertFreeBytes: Number(c.get('log.dir.free.bytes.alert.threshold')) };
  };
  const space = new LogDirFreeSpace({
    dir: nodePath.resolve(o.dataDir), fs, thresholds: thresholdsNow, intervalMs: o.tickMs ?? 1000,
    log: (level, m) => storage[level](m),
  });
  space.sample(o.clock.nowMs());
  {
    const v = space.view(false);
    if (v.totalBytes >= 0 && v.minFreeBytes >= v.totalBytes) {
      storage.warn(`log.dir.min.free.bytes ${v.minFreeBytes} is not below the size of the volume of ${o.dataDir} (${v.totalBytes} bytes): every produce will be refused; lower it`);
    }
  }
  // Static voters win; else the voters this node's metadata log recorded (a formatted bootstrap
  // snapshot, or a later one), else the voter set is asked of controller.quorum.bootstrap.servers.
  const bootstrapVoters = async (): Promise<VoterAddress[] | undefined> => {
    const bootstrap = brokerConfig.get('controller.quorum.bootstrap.servers') as string[];
    if (brokerConfig.processRoles.length === 0 || (brokerConfig.get('controller.quorum.voters') as string[]).length > 0 || bootstrap.length === 0) return undefined;
    return storedVoters(fs, o.dataDir) ?? discoverVoters(bootstrap, o.logger);
  };
  try {
    const meta = logs.ensureMetaProperties(o.nodeId, logs.storedClusterId() ?? o.clusterId ?? randomUuid());
    storage.info(`${o.dataDir} (cluster ${meta.clusterId}, ${logs.hadCleanShutdown ? 'clean' : 'unclean or first'} start)`);
    metadata = await LogMetadata.open({
      logDir: o.dataDir, fs, clock: o.clock, clusterId: meta.clusterId, nodeId: o.nodeId, ...metadataQuorum(brokerConfig, o.nodeId, await bootstrapVoters(), () => metadata?.image),
      snapshotRecordBytes: Number(brokerConfig.get('metadata.log.max.record.bytes.between.snapshots')),
      segmentBytes: o.metadataSegmentBytes ?? Number(brokerConfig.get('metadata.log.segment.bytes')), logger: componentLogger(o.logger, 'metadata-quorum'), flushStats: logs.flushStats,
      ...(bootstrapRecords.length > 0 ? { bootstrapRecords } : {}),
      raftTimeouts: {
        electionTimeoutMs: Number(brokerConfig.get('controller.quorum.election.timeout.ms')),
        fetchTimeoutMs: Number(brokerConfig.get('controller.quorum.fetch.timeout.ms')),
        electionBackoffMaxMs: Number(brokerConfig.get('controller.quorum.election.backoff.max.ms')),
        requestTimeoutMs: Number(brokerConfig.get('controller.quorum.request.timeout.ms')),
        retryBackoffMs: Number(brokerConfig.get('controller.quorum.retry.backoff.ms')),
      },
    });
  } catch (e) {
    logs.close();
    throw e;
  }
  const md = metadata;
  // Partitions on disk that the metadata no longer names (deleted while this node was down).
  const live = new Set([...md.view().topics()].flatMap((t) => t.partitions.map((p) => partitionKey(t.name, p.partition))));
  for (const { topic, partition } of logs.partitionDirs()) {
    if (topic !== METADATA_TOPIC && !live.has(partitionKey(topic, partition))) {
      storage.warn(`removing ${logDirName(topic, partition)}, which the cluster metadata does not contain`);
      logs.deleteLog(topic, partition);
    }
  }
  // Topic config changes reach that topic's open logs (retention, segment size, cleanup policy,
  // ...); a change of the broker configs topics inherit reaches every log. Resolved in the image
  // the delta gives (view() shows it only once the publishers have run).
  md.onDelta((delta, image) => {
    if (delta.configs === null) return;
    const changed = delta.configs.topicConfigChanges(o.nodeId);
    const reconfigure = (topic: string, log: PartitionLog) => {
      // Never throw into the metadata load: a log keeps its config when the new one does not resolve.
      try {
        log.config = logConfigOf(topicConfigIn(image.configs, topic));
      } catch (e) {
        storage.warn(`${topic}: config not applied: ${e instanceof Error ? e.message : String(e)}`);
      }
    };
    if (changed.all) {
      for (const [key, log] of logs.logs) {
        const topic = parseLogDirName(key)?.topic;
        if (topic !== undefined && topic !== METADATA_TOPIC) reconfigure(topic, log);
      }
      return;
    }
    for (const topic of changed.topics) {
      for (const partition of image.topics.getTopic(topic)?.partitions.keys() ?? []) {
        const log = logs.logs.get(logDirName(topic, partition));
        if (log !== undefined) reconfigure(topic, log);
      }
    }
  });
  // The controller runs where the metadata quorum is led (this node, in a quorum of one).
  const topicDefaults = {
    numPartitions: brokerConfig.get('num.partitions') as number,
    defaultReplicationFactor: Math.max(1, brokerConfig.get('default.replication.factor') as number),
    partitionsPerRequestMax: limits.partitionsPerRequestMax,
  };
  // A topic's overrides, then tiering's rules on the topic as it would resolve (Kafka's LogConfig.validate).
  const validate = (configs: ReadonlyMap<string, string | null>, current?: ReadonlyMap<string, string>) => {
    const [problem] = validateTopicConfigs(configs);
    if (problem) return { key: problem.name, message: problem.message };
    const broker = brokerConfigIn(metadata?.image.configs ?? ConfigurationsImage.EMPTY);
    const next = resolveTopicConfig(new Map([...configs].filter((e): e is [string, string] => e[1] !== null)), broker);
    const was = current === undefined ? false : resolveTopicConfig(current, broker).remoteStorageEnable;
    const [tiered] = validateTieredTopicConfig(next, remoteSettings !== null, was);
    return tiered ? { key: tiered.name, message: tiered.message } : null;
  };
  // Seeded from the OS, not the clock: processes started in the same millisecond (a cluster's nodes
  // started together) would otherwise generate the same topic and ACL ids when each becomes active.
  const prng = new Prng(randomBytes(4).readUInt32BE(0));
  const controllerService = new ControllerService(md, {
    clusterId: md.clusterId, nodeId: o.nodeId, clock: o.clock, prng, sessionTimeoutMs: Number(brokerConfig.get('broker.session.timeout.ms')),
    uncleanLeaderElectionEnable: brokerConfig.get('unclean.leader.election.enable') as boolean, minInsyncReplicas: Number(brokerConfig.get('min.insync.replicas')), topicDefaults, validateTopicConfigs: validate, logger: componentLogger(o.logger, 'controller'),
    validateGroupConfigs: (configs) => { const p = validateGroupConfigs(configs, brokerConfig); return p === null ? null : { key: p.name, message: p.message }; },
    autoLeaderRebalanceEnable: brokerConfig.get('auto.leader.rebalance.enable') as boolean,
    leaderImbalanceCheckIntervalMs: 1000 * Number(brokerConfig.get('leader.imbalance.check.interval.seconds')),
    ...(bootstrapRecords.length > 0 ? { bootstrapRecords } : {}),
  });
  controllerService.start();
  // controller_mutation_rate is the active controller's to charge: for changes forwarded in an
  // Envelope (controller-apis.ts) and for those this node's broker hands to its own controller.
  const controllerMutationQuotas = new ClientQuotaManager(o.clock, {
    samples: Number(brokerConfig.get('quota.window.num')), windowMs: Number(brokerConfig.get('quota.window.size.seconds')) * 1000,
  });
  md.onChange(() => controllerMutationQuotas.update(md.image.clientQuotas));
  const mutationQuotas = () => controllerService.isActive ? controllerMutationQuotas : undefined;
  // A controller serves the brokers' requests on its controller listener (a quorum of one has none:
  // its broker calls the ControllerService directly).
  const roles = brokerConfig.processRoles;
  let controllerRouter: Router<any> | null = null;
  if (roles.length === 0 || roles.includes('controller')) {
    const apis = controllerApis({
      nodeId: o.nodeId, controller: controllerService, metadata: md, brokerConfig, nowMs: () => o.clock.nowMs(), mutationQuotas, defaultNumPartitions: topicDefaults.numPartitions,
    });
    md.serveControllerApis(apis.serve);
    controllerRouter = apis.router;
  }
  // The broker reaches the active controller through this channel wherever it runs.
  const controllerClientTls = controllerTlsFor(brokerConfig)?.client;
  const controllerClientSasl = controllerSaslFor(brokerConfig)?.client;
  const controller = new ForwardingControllerChannel(md, controllerService, {
    nodeId: o.nodeId,
    // Kafka's request.timeout.ms: a change may take a commit and a replica-manager sync.
    requestTimeoutMs: 30_000, logger: componentLogger(o.logger, 'controller-channel'),
    ...(controllerClientTls ? { tls: controllerClientTls } : {}),
    ...(controllerClientSasl ? { sasl: controllerClientSasl } : {}),
  });
  let logsOpened = 0;
  let ticking = false;
  const timer = setInterval(() => {
    // Apart from the tick, which may be busy for long (the cleaner), so the interval stays bounded.
    if (logs.offline === null) space.maybeSample(o.clock.nowMs());
    if (ticking) return;
    ticking = true;
    logs.tick(o.clock.nowMs()).finally(() => { ticking = false; });
  }, o.tickMs ?? 1000);
  timer.unref();
  let closed = false;
  return {
    scheduler: realScheduler,
    prng,
    metadata: md,
    controller,
    controllerService,
    controllerRouter,
    mutationQuotas,
    controllerMutationQuotas,
    logger: o.logger,
    logs,
    openLog: async (topic, partition, topicId) => {
      // A delta that creates thousands of partitions opens them one after another: a turn of the
      // event loop every few, so the Raft driver sharing it keeps fetching (else followers time out
      // and elect again in the middle of a large creation).
      if (++logsOpened % OPENS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
      return new StorageLog(logs.getOrCreateLog(topic, partition, topicId));
    },
    dropLog: async (topic, partition) => logs.deleteLog(topic, partition),
    logDirs: () => [describeLogDir(o.dataDir, logs)],
    logDirSpace: () => [space.view(logs.offline !== null)],
    // Clients' produce to a partition led here (the broker checks that; with one directory per node
    // it is in this one) while the directory is below the floor; an offline directory's partitions
    // are left to the replica manager's answer.
    produceRefusal: (_topic, _partition, bytes) => (logs.offline === null ? space.admit(bytes, o.clock.nowMs()) : null),
    belowFreeSpaceFloor: (_topic, _partition, fetchMaxBytes) => logs.offline === null && !space.mayReplicate(fetchMaxBytes, o.clock.nowMs()),
    topicDefaults,
    brokerConfig,
    validateTopicConfigs: validate,
    autoCreateTopicsEnable: brokerConfig.get('auto.create.topics.enable') as boolean,
    minInsyncReplicas: (topic: string) => topicConfig(topic).minInsyncReplicas,
    previousBrokerEpoch: logs.cleanShutdownBrokerEpoch,
    maxMessageBytes: (topic: string) => topicConfig(topic).maxMessageBytes,
    schemaValidation: (topic: string) => schemaValidationOf(topicConfig(topic)),
    fetchSessionCacheSlots: brokerConfig.get('max.incremental.fetch.session.cache.slots') as number,
    ...(remoteStorage !== undefined ? { remoteStorage } : {}),
    /** Flushes every log, writes the checkpoints and marks a clean shutdown. */
    close: async (brokerEpoch?: bigint) => {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      try {
        controller.close();
        controllerService.close();
        await md.close();
        logs.close(brokerEpoch);
      } finally { unlock(); }
    },
  };
}

/** A topic's broker-side schema validation (Confluent Server's keys), null when neither key nor value is validated. */
function schemaValidationOf(c: TopicConfig): SchemaValidation | null {
  if (!c.confluentKeySchemaValidation && !c.confluentValueSchemaValidation) return null;
  return {
    key: c.confluentKeySchemaValidation ? subjectNameStrategyOf(c.confluentKeySubjectNameStrategy) : null,
    value: c.confluentValueSchemaValidation ? subjectNameStrategyOf(c.confluentValueSubjectNameStrategy) : null,
  };
}
