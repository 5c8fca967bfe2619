// `startServer(options)`: a broker as a library. The project's own tests start brokers this way on
// port 0; `logline server` is a thin CLI over it.
import { limits, systemClock, type BufferPoolStats, type Clock } from '../util/index.js';
import { NetworkServer, type ListenerSpec, type Logger, type NetworkLimits, type NetworkStats } from './network.js';
import { Router } from './router.js';
import { apiVersionsHandler } from './handlers/18-api-versions.js';
import { Broker, type BrokerDeps } from './broker.js';
import { diskBackend } from './disk-backend.js';
import { MemoryFileSystem } from '../storage/index.js';
import { describeQuorumAnswer, describeQuorumHandler, type QuorumServices } from './handlers/55-describe-quorum.js';
import { parseBrokerConfig, type BrokerConfig } from '../config/index.js';
import type { LogMetadata } from './metadata-log.js';

export interface ServerOptions {
  nodeId?: number;
  /** e.g. ["PLAINTEXT://localhost:9092"]; port 0 picks a free port. */
  listeners?: string[];
  limits?: Partial<NetworkLimits>;
  clock?: Clock;
  logger?: Logger;
  /**
   * Metadata and storage behind the broker. The default is the disk backend (the Raft metadata log
   * and the storage engine), in `dataDir` or, without one, on a MemoryFileSystem.
   */
  backend?: Omit<BrokerDeps, 'nodeId' | 'clock'>;
  /**
   * A log directory: partition logs and the `__cluster_metadata` log live there and survive
   * restarts (`logline server` always passes one; without it the same backend runs on a
   * MemoryFileSystem, not durable).
   */
  dataDir?: string;
  /** Only ApiVersions, no backend at all (protocol-level tests). */
  bare?: boolean;
  /** A parsed broker configuration (server.properties + overrides); it sets node id, listeners and limits. */
  config?: BrokerConfig;
  /** The cluster id a new data directory is formatted with (Kafka's `kafka-storage format --cluster-id`); every node of a cluster shares one. */
  clusterId?: string;
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
  /**
   * Stops the server: a controlled shutdown first (the controller moves this broker's leaderships
   * away), unless `controlledShutdown: false` (a node killed in a test), then the logs are flushed.
   */
  close(options?: { controlledShutdown?: boolean }): Promise<void>;
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

/** How long a stopping broker waits for the controller to let it go before stopping anyway. */
const CONTROLLED_SHUTDOWN_TIMEOUT_MS = 30_000;

const SECURITY_PROTOCOL_IDS: Record<string, number> = { PLAINTEXT: 0, SSL: 1, SASL_PLAINTEXT: 2, SASL_SSL: 3 };

/** Each bound listener as clients should reach it: advertised.listeners by name, else the bound address. */
function registrationListeners(bound: { name: string; host: string; port: number; securityProtocol: string }[], config: BrokerConfig | undefined) {
  const advertised = config?.originals.has('advertised.listeners') ? config.advertisedListeners.map(parseListener) : [];
  return bound.map((l) => {
    const adv = advertised.find((a) => a.name === l.name) ?? (bound.length === 1 && advertised.length === 1 ? advertised[0] : undefined);
    const host = adv?.host || (l.host === '0.0.0.0' || l.host === '::' ? 'localhost' : l.host);
    return { name: l.name, host, port: adv && adv.port !== 0 ? adv.port : l.port, securityProtocol: SECURITY_PROTOCOL_IDS[l.securityProtocol.toUpperCase()] ?? 0 };
  });
}

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
    // The controller listener is the metadata quorum's (its SocketTransport binds it), not a client listener.
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
  const brokerConfig = options.config ?? parseBrokerConfig({ 'node.id': String(nodeId) });
  // Without a data directory the same backend runs on an in-memory file system (one code path).
  const clusterId = options.clusterId !== undefined ? { clusterId: options.clusterId } : {};
  const disk = !options.backend && !options.bare
    ? await diskBackend(options.dataDir !== undefined
      ? { dataDir: options.dataDir, nodeId, brokerConfig, clock, logger, ...clusterId }
      : { dataDir: '/logline', fs: new MemoryFileSystem(), nodeId, brokerConfig, clock, logger, ...clusterId })
    : undefined;
  const backend = options.backend ?? disk;
  if (disk && options.dataDir === undefined) logger.warn('storage: in memory, not durable (no data directory given)');
  // process.roles=controller: no broker at all, only the metadata quorum and the controller, served
  // on the controller listener (the Raft transport's). Otherwise a broker (combined or not).
  const roles = brokerConfig.processRoles;
  const brokerRole = roles.length === 0 || roles.includes('broker');
  if (backend && brokerRole) {
    broker = new Broker({ ...backend, nodeId, clock });
    try {
      await broker.replicasLoaded();
    } catch (e) {
      await broker.replicaFetchers.close();
      await disk?.close();
      throw e;
    }
    router = broker.router;
    services = broker.services();
    if (disk) {
      // DescribeQuorum from any broker: the leader's answer, forwarded when it is another node.
      const md = disk.metadata;
      const forwarder = disk.controller;
      router.register(describeQuorumHandler);
      services = {
        ...services,
        describeQuorum: (request) => forwarder.describeQuorum(request, () => describeQuorumAnswer(request, { description: md.describeQuorum(), isLeader: md.raft.role === 'leader' })),
      } satisfies QuorumServices;
      disk.controllerService.localIncarnationId = broker.incarnationId;
    }
  } else if (disk?.controllerRouter) {
    router = disk.controllerRouter;
    services = {};
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
    await broker?.replicaFetchers.close();
    await disk?.close();
    throw e;
  }
  if (broker) {
    // The broker registers its listeners as advertised, and is listed once the controller unfences it.
    try {
      await broker.register(registrationListeners(network.bound, options.config));
    } catch (e) {
      await network.close();
      broker.lifecycle?.close();
      await broker.replicaFetchers.close();
      await disk?.close();
      throw e;
    }
  }
  for (const l of network.bound) logger.info(`listening on ${l.name}://${l.host}:${l.port}`);
  if (disk && !brokerRole) {
    const names = new Set(brokerConfig.controllerListenerNames);
    const l = brokerConfig.listeners.map(parseListener).find((x) => names.has(x.name));
    if (l) logger.info(`controller listening on ${l.name}://${l.host}:${disk.metadata.controllerPort}`);
  }
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
    close: async (closeOptions) => {
      // Controlled shutdown first: the controller moves this broker's leaderships away.
      if (closeOptions?.controlledShutdown !== false) await broker?.controlledShutdown(CONTROLLED_SHUTDOWN_TIMEOUT_MS);
      broker?.lifecycle?.close();
      // Followers stop before the logs they write close.
      await broker?.replicaFetchers.close();
      await network.close();
      broker?.txn.close();
      broker?.closeInterBrokerConnections();
      broker?.replicaManager.stopIsrExpiration();
      broker?.alterPartitions.close();
      broker?.replicaManager.fetchPurgatory.dropAll();
      broker?.replicaManager.producePurgatory.dropAll();
      await broker?.settled();
      await disk?.logs.removalsDone();
      await disk?.close();
    },
  };
}
