// `startServer(options)`: a broker as a library. The project's own tests start brokers this way on
// port 0; `logline server` is a thin CLI over it.
import { systemClock, type Clock } from '../util/index.js';
import { NetworkServer, type ListenerSpec, type Logger, type NetworkLimits, type NetworkStats } from './network.js';
import { Router } from './router.js';
import { apiVersionsHandler } from './handlers/18-api-versions.js';
import { Broker, type BrokerDeps } from './broker.js';
import { MemoryMetadata, memoryBackend } from './memory-backend.js';
import { parseBrokerConfig } from '../config/index.js';

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
  /** Only ApiVersions, no backend at all (protocol-level tests). */
  bare?: boolean;
}

export interface ServerHandle {
  readonly nodeId: number;
  readonly listeners: { name: string; host: string; port: number; securityProtocol: string }[];
  readonly router: Router<any>;
  readonly broker: Broker | null;
  readonly stats: NetworkStats;
  close(): Promise<void>;
}

export interface BrokerServices {
  nodeId: number;
}

export const DEFAULT_NETWORK_LIMITS: NetworkLimits = {
  requestBytesMax: 104_857_600,
  connectionsMax: 2_147_483_647,
  connectionsPerIpMax: 2_147_483_647,
  idleMs: 600_000,
  inFlightPerConnectionMax: 16,
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

export async function startServer(options: ServerOptions = {}): Promise<ServerHandle> {
  const nodeId = options.nodeId ?? 1;
  const logger = options.logger ?? quietLogger;
  const clock = options.clock ?? systemClock;
  let router: Router<any>;
  let services: object;
  let broker: Broker | null = null;
  const backend = options.backend ?? (options.bare ? undefined : memoryBackend(new MemoryMetadata(), { brokerConfig: parseBrokerConfig({ 'node.id': String(nodeId) }) }));
  if (!options.backend && backend) logger.warn('storage: in memory, not durable (the on-disk engine is not wired in yet)');
  if (backend) {
    broker = new Broker({ ...backend, nodeId, clock });
    await broker.syncPartitions();
    router = broker.router;
    services = broker.services();
  } else {
    router = new Router<BrokerServices>();
    router.register(apiVersionsHandler(() => router.supportedVersions()));
    services = { nodeId };
  }
  const network = new NetworkServer(router, services, { ...DEFAULT_NETWORK_LIMITS, ...options.limits }, clock, logger);
  await network.listen((options.listeners ?? ['PLAINTEXT://localhost:9092']).map(parseListener));
  if (backend && backend.metadata instanceof MemoryMetadata && backend.metadata.endpoint.port === 0) {
    const first = network.bound[0]!;
    backend.metadata.endpoint = { nodeId, host: first.host === '0.0.0.0' || first.host === '::' ? 'localhost' : first.host, port: first.port, rack: null };
  }
  for (const l of network.bound) logger.info(`listening on ${l.name}://${l.host}:${l.port}`);
  return {
    nodeId,
    listeners: network.bound,
    router,
    broker,
    stats: network.stats,
    close: () => network.close(),
  };
}
