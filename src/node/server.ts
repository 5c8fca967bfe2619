// `startServer(options)`: a broker as a library. The project's own tests start brokers this way on
// port 0; `logline server` is a thin CLI over it.
import { componentLogger, createLogger, limits, quietLogger, systemClock, type BufferPoolStats, type Clock, type Logger } from '../util/index.js';
import {
  enforceClientQuotas, quotaWindowOf, Router, apiVersionsHandler, describeQuorumAnswer, describeQuorumHandler, type ClientQuotaManager, type QuorumServices,
} from '../broker/index.js';
import { NetworkServer, saslInputs, securedListener, type ListenerSpec, type NetworkLimits, type NetworkStats, type RequestMetrics } from '../network/index.js';
import type { HttpListener } from '../http/index.js';
import { Broker, type BrokerDeps } from './broker.js';
import { diskBackend } from './disk-backend.js';
import { MemoryFileSystem, type FileSystem, type LogDirSpaceView, type LogFlushStats } from '../storage/index.js';
import { listenerName, parseBrokerConfig, type BrokerConfig } from '../config/index.js';
import { addressConnectionRates, applyConnectionLimitsOnConfigChange, connectionLimitsOf } from './connection-limits.js';
import { ScramImage } from '../metadata/index.js';
import type { LogMetadata } from './metadata-log.js';
import type { ControllerService } from './controller-service.js';
import { reloadTlsOnConfigChange } from './tls-reload.js';
import { registryProtocol, SCHEMA_REGISTRY_ENDPOINT, startNodeRegistry, type NodeRegistry } from './schema-registry.js';
import { startNodeMirror } from './mirror.js';
import { startNodeLinks } from './link.js';
import type { LinkManager } from '../link/index.js';
import type { MirrorEngine } from '../mirror/index.js';
import type { RegistryService } from '../registry/index.js';

/**
 * Starts the HTTP listener for a node at `address` (http.listener): the http room's
 * startHttpListener, which src/index.ts and the CLI pass in. A node started without one (most
 * tests) has no HTTP listener.
 */
export type HttpListenerFactory = (node: ServerHandle, address: { host: string; port: number }) => Promise<HttpListener>;

export interface ServerOptions {
  nodeId?: number;
  /** Records a new data directory's metadata log starts with (`--add-scram` credentials); ignored for an existing one. */
  bootstrapRecords?: readonly import('../metadata/index.js').MetadataRecord[];
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
  /** The file system `dataDir` is on (default the real one): an in-memory one lets tests inject disk faults. */
  fs?: FileSystem;
  /**
   * The server stopped by itself: its log directory failed (an I/O error), and with every log
   * directory gone a broker halts, as Kafka's does. Called once it is closed, with the error.
   */
  onHalt?: (cause: Error) => void;
  /** Only ApiVersions, no backend at all (protocol-level tests). */
  bare?: boolean;
  /** A parsed broker configuration (server.properties + overrides); it sets node id, listeners and limits. */
  config?: BrokerConfig;
  /** The cluster id a new data directory is formatted with (Kafka's `kafka-storage format --cluster-id`); every node of a cluster shares one. */
  clusterId?: string;
  /** Serves http.listener (health, admin API, /metrics); without it there is no HTTP listener whatever http.listener says. */
  http?: HttpListenerFactory;
  /**
   * Serves the schema registry on schema.registry.listener (a broker only). Off unless asked, as
   * the HTTP listener: `logline server` and the package door turn it on, most tests leave it off.
   */
  schemaRegistry?: boolean;
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
  /** The configuration the node runs with. */
  readonly config: BrokerConfig;
  /** The schema registry's REST address (http://host:port), when it runs here. */
  readonly schemaRegistryUrl: string | null;
  /** The schema registry's service (its replayed state), when it runs here. */
  readonly schemaRegistry: RegistryService | null;
  /** MirrorMaker 2's engine, when mirror.enable runs it in this node. */
  readonly mirror: MirrorEngine | null;
  /** Cluster links: the fetchers of the mirror topics' partitions led here (a broker only). */
  readonly links: LinkManager | null;
  /** The controller hosted here (it may be a standby), if the node has the metadata log. */
  readonly controllerService: ControllerService | null;
  /** controller_mutation_rate as this node's controller charges it (only while active), if the node has the metadata log. */
  readonly controllerMutationQuotas: ClientQuotaManager | null;
  /** Requests, total time and error codes per API on the client listeners. */
  readonly requestMetrics: RequestMetrics;
  /** fsync times of this node's logs, the metadata log's included (a data directory only). */
  readonly logFlushStats: LogFlushStats | null;
  /** Each log directory's free space against log.dir.min.free.bytes and its state (none without a backend of our own). */
  logDirs(): LogDirSpaceView[];
  /** The bound HTTP listener, or null (none configured, or no factory given). */
  readonly http: { readonly host: string; readonly port: number } | null;
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
  const advertised = config?.originals.has('advertised.listeners') ? config.advertisedListeners.map((l) => parseListener(l)) : [];
  return bound.map((l) => {
    const adv = advertised.find((a) => a.name === l.name) ?? (bound.length === 1 && advertised.length === 1 ? advertised[0] : undefined);
    const host = adv?.host || (l.host === '0.0.0.0' || l.host === '::' ? 'localhost' : l.host);
    return { name: l.name, host, port: adv && adv.port !== 0 ? adv.port : l.port, securityProtocol: SECURITY_PROTOCOL_IDS[l.securityProtocol.toUpperCase()] ?? 0 };
  });
}

export { quietLogger };
/** Text lines at INFO on stdout (ERROR and WARN on stderr): `logline server` builds its own from log.level and --log-format. */
export const consoleLogger: Logger = createLogger();

/** http.listener ("host:port", "[::1]:port"; empty or null: none) → the address to bind. */
export function parseHttpListener(text: string | null): { host: string; port: number } | null {
  return listenerAddress('http.listener', text);
}

/** A "host:port" listener key (http.listener, schema.registry.listener); empty or null: none. */
function listenerAddress(keyName: string, text: string | null): { host: string; port: number } | null {
  if (text === null || text.trim() === '') return null;
  const m = /^(\[[^\]]*\]|[^:]*):(\d+)$/.exec(text.trim());
  if (!m || Number(m[2]) > 65535) throw new Error(`invalid ${keyName} "${text}": expected HOST:PORT or empty`);
  return { host: m[1]!.replace(/^\[|\]$/g, '') || '0.0.0.0', port: Number(m[2]) };
}

/**
 * "NAME://host:port" → listener spec. The security protocol is the name's in
 * listener.security.protocol.map (`protocols`), else the name itself (PLAINTEXT://, SSL://).
 */
export function parseListener(text: string, protocols?: ReadonlyMap<string, string>): ListenerSpec {
  const m = /^([A-Za-z0-9_]+):\/\/(\[[^\]]*\]|[^:]*):(\d+)$/.exec(text.trim());
  if (!m) throw new Error(`invalid listener "${text}": expected NAME://HOST:PORT`);
  const name = m[1]!.toUpperCase();
  const host = m[2]!.replace(/^\[|\]$/g, '') || '0.0.0.0';
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`invalid listener "${text}": port ${port} out of range`);
  return { name, host, port, securityProtocol: protocols?.get(name) ?? name };
}

/** Network limits and defaults taken from a broker config, with Kafka's property names. */
function fromConfig(config: BrokerConfig): { limits: Partial<NetworkLimits>; listeners: string[] } {
  const controllers = new Set(config.controllerListenerNames);
  return {
    limits: {
      requestBytesMax: config.get('socket.request.max.bytes') as number,
      // Only when set: Kafka's default of 50 suits its acceptor thread; one event loop that can be
      // busy for a while drops SYNs past it (clients retry after a second), so Node's 511 stays.
      ...(config.originals.has('socket.listen.backlog.size') ? { listenBacklog: config.get('socket.listen.backlog.size') as number } : {}),
      idleMs: config.get('connections.max.idle.ms') as number,
    },
    // The controller listener is the metadata quorum's (its SocketTransport binds it), not a client listener.
    listeners: config.listeners.filter((l) => !controllers.has(l.slice(0, l.indexOf('://')).toUpperCase())),
  };
}

export async function startServer(options: ServerOptions = {}): Promise<ServerHandle> {
  const fromCfg = options.config ? fromConfig(options.config) : undefined;
  if (fromCfg) {
    const listenerNames = (options.listeners ?? fromCfg.listeners).map(listenerName);
    const connectionLimits = await connectionLimitsOf(options.config!, listenerNames, componentLogger(options.logger ?? quietLogger, 'network'));
    options = { ...options, listeners: options.listeners ?? fromCfg.listeners, limits: { ...connectionLimits, ...fromCfg.limits, ...options.limits } };
  }
  const nodeId = options.nodeId ?? options.config?.nodeId ?? 1;
  const root = options.logger ?? quietLogger;
  const logger = componentLogger(root, 'server');
  const clock = options.clock ?? systemClock;
  let router: Router<any>;
  let services: object;
  let broker: Broker | null = null;
  const brokerConfig = options.config ?? parseBrokerConfig({ 'node.id': String(nodeId) });
  // Without a data directory the same backend runs on an in-memory file system (one code path).
  const clusterId = options.clusterId !== undefined ? { clusterId: options.clusterId } : {};
  // Bound once the handle exists; a directory cannot fail before its logs serve anything.
  let onLogDirFailure = (_dir: string, _cause: Error): void => {};
  const failures = { onLogDirFailure: (dir: string, cause: Error) => onLogDirFailure(dir, cause) };
  const bootstrap = options.bootstrapRecords ? { bootstrapRecords: options.bootstrapRecords } : {};
  const disk = !options.backend && !options.bare
    ? await diskBackend(options.dataDir !== undefined
      ? { dataDir: options.dataDir, ...(options.fs ? { fs: options.fs } : {}), nodeId, brokerConfig, clock, logger: root, ...clusterId, ...failures, ...bootstrap }
      : { dataDir: '/logline', fs: options.fs ?? new MemoryFileSystem(), nodeId, brokerConfig, clock, logger: root, ...clusterId, ...failures, ...bootstrap })
    : undefined;
  const backend = options.backend ?? disk;
  if (disk && options.dataDir === undefined) componentLogger(root, 'storage').warn('in memory, not durable (no data directory given)');
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
  const network = new NetworkServer(router, services, { ...DEFAULT_NETWORK_LIMITS, ...options.limits }, clock, componentLogger(root, 'network'), quotaWindowOf(brokerConfig));
  if (broker) {
    const quotas = broker.clientQuotas;
    network.throttle = (ctx, apiKey, request, requestBytes, handlerMs, body) => enforceClientQuotas(quotas, ctx, apiKey, request, requestBytes, handlerMs, body);
    network.addressConnectionRate = addressConnectionRates(() => quotas.image);
  }
  try {
    const sasl = saslInputs(() => disk?.metadata.image.scram ?? ScramImage.EMPTY);
    await network.listen((options.listeners ?? ['PLAINTEXT://localhost:9092']).map((l) => securedListener(parseListener(l, brokerConfig.securityProtocolMap), brokerConfig, sasl)));
  } catch (e) {
    await broker?.replicaFetchers.close();
    await disk?.close();
    throw e;
  }
  if (disk) {
    reloadTlsOnConfigChange(disk.metadata, nodeId, brokerConfig, network, componentLogger(root, 'tls'));
    applyConnectionLimitsOnConfigChange(disk.metadata, nodeId, brokerConfig, network, componentLogger(root, 'network'));
  }
  // The handle exists before registration so that the HTTP listener can answer /v1/ready with 503 meanwhile.
  let close: (closeOptions?: { controlledShutdown?: boolean }) => Promise<void> = async () => {};
  let httpBound: HttpListener | null = null;
  let registry: NodeRegistry | null = null;
  let mirror: MirrorEngine | null = null;
  let links: LinkManager | null = null;
  const handle: ServerHandle = {
    nodeId,
    listeners: network.bound,
    router,
    broker,
    stats: network.stats,
    framePool: network.framePool.stats,
    metadata: disk?.metadata ?? null,
    controllerPort: disk?.metadata.controllerPort ?? 0,
    config: brokerConfig,
    get schemaRegistryUrl() { return registry?.listener.url ?? null; },
    get schemaRegistry() { return registry?.service ?? null; },
    get mirror() { return mirror; },
    get links() { return links; },
    controllerService: disk?.controllerService ?? null,
    controllerMutationQuotas: disk?.controllerMutationQuotas ?? null,
    requestMetrics: network.requestMetrics,
    logFlushStats: disk?.logs.flushStats ?? null,
    logDirs: () => disk?.logDirSpace() ?? [],
    get http() { return httpBound === null ? null : { host: httpBound.host, port: httpBound.port }; },
    // Stop accepting and answer what is in flight, then flush the logs and mark a clean shutdown.
    close: (closeOptions) => close(closeOptions),
  };
  try {
    const httpAddress = options.http ? parseHttpListener(brokerConfig.get('http.listener') as string | null) : null;
    if (httpAddress) {
      httpBound = await options.http!(handle, httpAddress).catch((e: NodeJS.ErrnoException) => {
        throw Object.assign(new Error(`http.listener ${httpAddress.host}:${httpAddress.port}: ${e.message}`), { code: e.code });
      });
      logger.info(`http listening on http://${httpBound.host}:${httpBound.port}`);
    }
    const registryAddress = broker && options.schemaRegistry ? listenerAddress('schema.registry.listener', brokerConfig.get('schema.registry.listener') as string | null) : null;
    if (broker && registryAddress) {
      registry = await startNodeRegistry(broker, registryAddress, clock, root, brokerConfig).catch((e: NodeJS.ErrnoException) => {
        throw Object.assign(new Error(`schema.registry.listener ${registryAddress.host}:${registryAddress.port}: ${e.message}`), { code: e.code });
      });
      logger.info(`schema registry listening on ${registry.listener.url}`);
    }
    // The broker registers its listeners as advertised, and is listed once the controller unfences
    // it; the registry's address rides along as an endpoint of its own, which is how other nodes
    // find the registry writer.
    const registryEndpoint = registry ? [{ name: SCHEMA_REGISTRY_ENDPOINT, host: registry.listener.host, port: registry.listener.port, securityProtocol: SECURITY_PROTOCOL_IDS[registryProtocol(brokerConfig)] ?? 0 }] : [];
    if (broker) await broker.register([...registrationListeners(network.bound, options.config), ...registryEndpoint]);
    mirror = await startNodeMirror(brokerConfig, componentLogger(root, 'mirror'));
    if (broker) links = startNodeLinks(broker, network.bound, componentLogger(root, 'link'));
  } catch (e) {
    await links?.close();
    await mirror?.stop();
    await registry?.close();
    await httpBound?.close();
    await network.close();
    broker?.lifecycle?.close();
    await broker?.replicaFetchers.close();
    await disk?.close();
    throw e;
  }
  for (const l of network.bound) logger.info(`listening on ${l.name}://${l.host}:${l.port}`);
  if (disk && !brokerRole) {
    const names = new Set(brokerConfig.controllerListenerNames);
    const l = brokerConfig.listeners.map((l) => parseListener(l)).find((x) => names.has(x.name));
    if (l) logger.info(`controller listening on ${l.name}://${l.host}:${disk.metadata.controllerPort}`);
  }
  let closing: Promise<void> | null = null;
  close = (closeOptions?: { controlledShutdown?: boolean }): Promise<void> => closing ??= (async () => {
    // The mirror first: it flushes its positions, possibly to this very broker.
    await mirror?.stop();
    // Link fetchers append to logs that close below.
    await links?.close();
    // Controlled shutdown next: the controller moves this broker's leaderships away.
    if (closeOptions?.controlledShutdown !== false) await broker?.controlledShutdown(CONTROLLED_SHUTDOWN_TIMEOUT_MS);
    broker?.lifecycle?.close();
    await httpBound?.close();
    await registry?.close();
    // Followers stop before the logs they write close.
    await broker?.replicaFetchers.close();
    await network.close();
    broker?.txn.close();
    broker?.share.manager.close();
    broker?.closeInterBrokerConnections();
    broker?.replicaManager.stopIsrExpiration();
    broker?.alterPartitions.close();
    broker?.replicaManager.fetchPurgatory.dropAll();
    // A waiting produce may be the broker's own (a coordinator's or tiered storage's metadata write,
    // acks=all): it ends with REQUEST_TIMED_OUT rather than never, so no writer awaits it forever.
    broker?.replicaManager.producePurgatory.expireAll();
    await broker?.settled();
    // Tiered storage's tasks stop before the logs they copy from close.
    await broker?.closeRemoteLog();
    await disk?.logs.removalsDone();
    // The clean-shutdown marker records this registration's epoch: the next registration shows the restart was clean (KIP-966).
    await disk?.close(broker?.lifecycle?.brokerEpoch);
  })();
  // Kafka's handling of a failed log directory when it was the broker's only one (it also holds
  // the metadata log): the broker halts (no controlled shutdown: nothing can be written any more).
  // Until it is gone its partitions answer KAFKA_STORAGE_ERROR; the controller fences it when its
  // heartbeats stop, and elects new leaders from the ISR, so nothing acknowledged with acks=all is lost.
  onLogDirFailure = (dir, cause) => {
    logger.error(`log directory ${dir} failed (${cause.message}); shutting down the broker, as every log directory has failed`);
    // Not from inside the log operation that failed.
    setImmediate(() => {
      close({ controlledShutdown: false }).then(() => options.onHalt?.(cause), (e: unknown) => {
        logger.error(`shutting down after a log directory failure: ${e instanceof Error ? e.message : String(e)}`);
        options.onHalt?.(cause);
      });
    });
  };
  return handle;
}
