// `startServer(options)`: a broker as a library. The project's own tests start brokers this way on
// port 0; `logline server` is a thin CLI over it.
import { limits, systemClock, type BufferPoolStats, type Clock } from '../util/index.js';
import { NetworkServer, type ListenerSpec, type Logger, type NetworkLimits, type NetworkStats } from './network.js';
import { Router } from './router.js';
import { apiVersionsHandler } from './handlers/18-api-versions.js';
import { Broker, type BrokerDeps } from './broker.js';
import { MemoryMetadata, memoryBackend } from './memory-backend.js';
import { diskBackend } from './disk-backend.js';
import { LogMetadata } from './metadata-log.js';
import { describeQuorumHandler, type QuorumServices } from './handlers/55-describe-quorum.js';
import { parseBrokerConfig, type BrokerConfig } from '../config/index.js';
import { ClusterAdmin, LeaderBrokerForwarder } from './cluster-admin.js';
import type { BrokerEndpoint } from './services.js';
import { OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC } from '../coordinator/index.js';

export interface ServerOptions {
  nodeId?: number;
  /** e.g. ["PLAINTEXT://localhost:9092"]; port 0 picks a free port. */
  listeners?: string[];
  limits?: Partial<NetworkLimits>;
  clock?: Clock;
  logger?: Logger;
  /**
   * Metadata and storage behind the broker. The default today is the in-memory backend (not
   * durable); the metadata log and the storage engine replace it behind the same ports.
   */
  backend?: Omit<BrokerDeps, 'nodeId' | 'clock'>;
  /**
   * A log directory: partition logs and the `__cluster_metadata` log live there and survive
   * restarts (`logline server` always passes one; without it the backend is in memory).
   */
  dataDir?: string;
  /** Only ApiVersions, no backend at all (protocol-level tests). */
  bare?: boolean;
  /** A parsed broker configuration (server.properties + overrides); it sets node id, listeners and limits. */
  config?: BrokerConfig;
  /** The cluster id a new data directory is formatted with (Kafka's `kafka-storage format --cluster-id`); every node of a cluster shares one. */
  clusterId?: string;
  /** The cluster's brokers and their client endpoints, until brokers register in the metadata. */
  staticBrokers?: readonly BrokerEndpoint[];
}

export interface ServerHandle {
  readonly nodeId: number;
  readonly listeners: { name: string; host: string; port: number; securityProtocol: string }[];
  readonly router: Router<any>;
  readonly broker: Broker | null;
  readonly stats: NetworkStats;
  /** The request frame pool's counters (reuse is what keeps a steady produce load free of GC). */
  readonly framePool: BufferPoolStats;
  /** The metadata log (a data directory only). */
  readonly metadata: LogMetadata | null;
  /** The bound controller listener port (0 when the quorum is this node alone: it has none). */
  readonly controllerPort: number;
  close(): Promise<void>;
}

export interface BrokerServices {
  nodeId: number;
}

export const DEFAULT_NETWORK_LIMITS: NetworkLimits = {
  requestBytesMax: limits.requestBytesMax,
  connectionsMax: 2_147_483_647,
  connectionsPerIpMax: 2_147_483_647,
  idleMs: 600_000,
  inFlightPerConnectionMax: limits.inFlightRequestsPerConnectionMax,
};

export const quietLogger: Logger = { info() {}, warn() {}, error() {} };
export const consoleLogger: Logger = {
  info: (m) => console.log(`[logline] ${m}`),
  warn: (m) => console.warn(`[logline] WARN ${m}`),
  error: (m) => console.error(`[logline] ERROR ${m}`),
};

/** "PLAINTEXT://host:port" → listener spec; the name before :// is also the security protocol. */
export function parseListener(text: string): ListenerSpec {
  const m = /^([A-Za-z0-9_]+):\/\/(\[[^\]]*\]|[^:]*):(\d+)$/.exec(text.trim());
  if (!m) throw new Error(`invalid listener "${text}": expected NAME://HOST:PORT`);
  const name = m[1]!.toUpperCase();
  const host = m[2]!.replace(/^\[|\]$/g, '') || '0.0.0.0';
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`invalid listener "${text}": port ${port} out of range`);
  return { name, host, port, securityProtocol: name };
}

/** Network limits and defaults taken from a broker config, with Kafka's property names. */
function fromConfig(config: BrokerConfig): { limits: Partial<NetworkLimits>; listeners: string[] } {
  const controllers = new Set(config.controllerListenerNames);
  return {
    limits: {
      requestBytesMax: config.get('socket.request.max.bytes') as number,
      connectionsMax: config.get('max.connections') as number,
      connectionsPerIpMax: config.get('max.connections.per.ip') as number,
      idleMs: config.get('connections.max.idle.ms') as number,
    },
    // The controller listener comes with the Raft quorum; a single node serves brokers only today.
    listeners: config.listeners.filter((l) => !controllers.has(l.slice(0, l.indexOf('://')).toUpperCase())),
  };
}

export async function startServer(options: ServerOptions = {}): Promise<ServerHandle> {
  const fromCfg = options.config ? fromConfig(options.config) : undefined;
  if (fromCfg) {
    options = { ...options, listeners: options.listeners ?? fromCfg.listeners, limits: { ...fromCfg.limits, ...options.limits } };
  }
  const nodeId = options.nodeId ?? options.config?.nodeId ?? 1;
  const logger = options.logger ?? quietLogger;
  const clock = options.clock ?? systemClock;
  let router: Router<any>;
  let services: object;
  let broker: Broker | null = null;
  let clusterAdmin: ClusterAdmin | null = null;
  const brokerConfig = options.config ?? parseBrokerConfig({ 'node.id': String(nodeId) });
  const disk = !options.backend && !options.bare && options.dataDir !== undefined
    ? await diskBackend({
      dataDir: options.dataDir, nodeId, brokerConfig, clock, logger,
      ...(options.clusterId !== undefined ? { clusterId: options.clusterId } : {}),
      ...(options.staticBrokers !== undefined ? { staticBrokers: options.staticBrokers } : {}),
    })
    : undefined;
  const backend = options.backend ?? disk ?? (options.bare ? undefined : memoryBackend(new MemoryMetadata(), {
    brokerConfig,
    topicDefaults: {
      numPartitions: brokerConfig.get('num.partitions') as number,
      defaultReplicationFactor: Math.max(1, brokerConfig.get('default.replication.factor') as number),
      partitionsPerRequestMax: limits.partitionsPerRequestMax,
    },
    fetchSessionCacheSlots: brokerConfig.get('max.incremental.fetch.session.cache.slots') as number,
  }));
  if (!options.backend && !disk && backend) logger.warn('storage: in memory, not durable (no data directory given)');
  if (backend) {
    broker = new Broker({ ...backend, nodeId, clock });
    try {
      await broker.syncPartitions();
    } catch (e) {
      await disk?.close();
      throw e;
    }
    router = broker.router;
    services = broker.services();
    if (disk) {
      // The metadata quorum this node is a voter of (the broker itself knows nothing of Raft).
      const md = disk.metadata;
      router.register(describeQuorumHandler);
      services = { ...services, describeQuorum: () => ({ description: md.describeQuorum(), isLeader: md.raft.role === 'leader' }) } satisfies QuorumServices;
      if (md.controllerPort !== 0 || md.leaderId !== nodeId) {
        // A cluster: changes asked of a node that is not the active controller go to it.
        clusterAdmin = new ClusterAdmin(md, new LeaderBrokerForwarder(md));
        const b = broker.services();
        const topicAdmin = clusterAdmin.topicAdmin(b.topicAdmin);
        services = {
          ...services, topicAdmin, configAdmin: clusterAdmin.configAdmin(b.configAdmin),
          ensureOffsetsTopic: clusterAdmin.ensureInternalTopic(() => broker!.ensureOffsetsTopic(), OFFSETS_TOPIC, 0),
          ensureTransactionTopic: clusterAdmin.ensureInternalTopic(() => broker!.ensureTransactionTopic(), TRANSACTION_STATE_TOPIC, 1),
          generateProducerId: clusterAdmin.generateProducerId(() => broker!.producerIds.generate()),
          autoCreateTopics: async (names: string[]) => {
            await topicAdmin.createTopics({ topics: names.map((name) => ({ name, numPartitions: -1, replicationFactor: -1, assignments: [], configs: [] })), timeoutMs: 30000, validateOnly: false }, 7);
          },
        };
      }
    }
  } else {
    router = new Router<BrokerServices>();
    // A bare network server (no backend) finalizes no features.
    router.register(apiVersionsHandler(() => router.supportedVersions(), () => ({ epoch: -1n, levels: new Map() })));
    services = { nodeId };
  }
  const network = new NetworkServer(router, services, { ...DEFAULT_NETWORK_LIMITS, ...options.limits }, clock, logger);
  try {
    await network.listen((options.listeners ?? ['PLAINTEXT://localhost:9092']).map(parseListener));
  } catch (e) {
    await disk?.close();
    throw e;
  }
  if (backend && (backend.metadata instanceof MemoryMetadata || backend.metadata instanceof LogMetadata) && backend.metadata.endpoint.port === 0) {
    const first = network.bound[0]!;
    const advertised = options.config?.originals.has('advertised.listeners') ? options.config.advertisedListeners[0] : undefined;
    const adv = advertised ? parseListener(advertised) : undefined;
    const host = adv?.host || (first.host === '0.0.0.0' || first.host === '::' ? 'localhost' : first.host);
    backend.metadata.endpoint = { nodeId, host, port: adv && adv.port !== 0 ? adv.port : first.port, rack: null };
  }
  for (const l of network.bound) logger.info(`listening on ${l.name}://${l.host}:${l.port}`);
  return {
    nodeId,
    listeners: network.bound,
    router,
    broker,
    stats: network.stats,
    framePool: network.framePool.stats,
    metadata: disk?.metadata ?? null,
    controllerPort: disk?.metadata.controllerPort ?? 0,
    // Stop accepting and answer what is in flight, then flush the logs and mark a clean shutdown.
    close: async () => {
      await network.close();
      clusterAdmin?.close();
      broker?.txn.close();
      broker?.replicaManager.fetchPurgatory.dropAll();
      broker?.replicaManager.producePurgatory.dropAll();
      await broker?.settled();
      await disk?.logs.removalsDone();
      await disk?.close();
    },
  };
}
