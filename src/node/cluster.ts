// `startCluster({ nodes })`: N combined broker+controller nodes in this process on 127.0.0.1, one
// metadata quorum over the network, each node a real server with its own data directory. What the
// project's cluster tests use and what a Node user's tests use instead of Docker. With
// `{ controllers, brokers }` the roles are separate processes' worth: controller-only nodes (ids
// 1..C, the quorum) and broker-only nodes (ids C+1..C+M, observers of the metadata log).
//
// Controller listener ports must be known to every voter before any starts
// (controller.quorum.voters), so they are chosen free up front (broker ports too, so that a
// restarted node comes back on the same address). Brokers find each other, and the active
// controller, through their registrations in the metadata.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { parseBrokerConfig } from '../config/index.js';
import { freePort, type Logger } from '../util/index.js';
import { startServer, quietLogger, type HttpListenerFactory, type ServerHandle } from './server.js';
import { randomUuid, type FileSystem } from '../storage/index.js';

export interface ClusterOptions {
  /** How many combined nodes (node ids 1..N); default 3. Not with `controllers`/`brokers`. */
  nodes?: number;
  /** Separate roles: this many controller-only nodes (ids 1..C)... */
  controllers?: number;
  /** ...and this many broker-only nodes (ids C+1..C+M). */
  brokers?: number;
  /** A directory holding one data directory per node (`node-<id>`); default a new temporary one, removed by close(). */
  dataDir?: string;
  /** Broker properties for every node (Kafka's keys), over the cluster's own (shorter election and heartbeat timeouts than Kafka's among them). */
  config?: Record<string, string>;
  /** Broker properties for one node, by node id, over `config` (e.g. `broker.rack`). */
  nodeConfig?: Readonly<Record<number, Record<string, string>>>;
  /**
   * The file system of each node's data directory (default the real one); an in-memory one lets a
   * test inject disk faults, and keeps the node's data across kill and restart in this process.
   */
  fs?: (nodeId: number) => FileSystem;
  /** Fixed broker ports (one per broker); default free ports. */
  brokerPorts?: readonly number[];
  /** Fixed controller ports (one per controller); default free ports. */
  controllerPorts?: readonly number[];
  logger?: Logger;
  /**
   * Serves each node's http.listener: a free port of its own on 127.0.0.1 (kept across restarts)
   * unless `config` or `nodeConfig` names one. Without it no node has an HTTP listener.
   */
  http?: HttpListenerFactory;
  /** Runs the schema registry on every broker, on a free port of its own unless `config` or `nodeConfig` names schema.registry.listener. */
  schemaRegistry?: boolean;
}

export interface ClusterNodeHandle {
  readonly nodeId: number;
  readonly roles: readonly ('broker' | 'controller')[];
  readonly host: string;
  /** 0 for a controller-only node. */
  readonly brokerPort: number;
  /** 0 for a broker-only node. */
  readonly controllerPort: number;
  /** The HTTP listener's port (0: none). */
  readonly httpPort: number;
  /** The schema registry's REST address while the node runs it, else null. */
  readonly schemaRegistryUrl: string | null;
  readonly dataDir: string;
  /** The running server, or null while the node is down. */
  readonly server: ServerHandle | null;
  readonly running: boolean;
  /** Stops the node at once: no controlled shutdown, open connections dropped (the logs are closed so the directory can reopen in this process). */
  kill(): Promise<void>;
  /** Starts a killed node again on the same ports and data directory. */
  restart(): Promise<void>;
}

export interface ClusterHandle {
  readonly clusterId: string;
  /** `host:port,...` of every broker listener. */
  readonly bootstrap: string;
  readonly nodes: readonly ClusterNodeHandle[];
  /** `1@127.0.0.1:port,...` */
  readonly controllerQuorumVoters: string;
  /** The node whose metadata log leads, if a running node knows one. */
  leaderId(): number | undefined;
  close(): Promise<void>;
}

/**
 * Shorter timeouts than Kafka's defaults for a cluster whose nodes start together on one host (a
 * test suite's cluster); `config` overrides each. With Kafka's, 3 nodes took 2.0-4.4 s to start (4 Dec
 * 2026, bench/cluster-start): nobody stands for election before controller.quorum.election.timeout.ms
 * (1000, randomized to [1000, 2000)), and a broker whose first heartbeat reached the controller
 * before its own registration was in its metadata waited a whole broker.heartbeat.interval.ms
 * (2000) fenced. None of these bear on safety: a follower still suspects its leader only after
 * controller.quorum.fetch.timeout.ms (2000, unchanged) and the controller fences a broker only after
 * broker.session.timeout.ms (9000, unchanged); shorter ones cost a few more heartbeats a second.
 */
const EMBEDDED_CLUSTER_DEFAULTS: Readonly<Record<string, string>> = Object.freeze({
  'controller.quorum.election.timeout.ms': '300',
  'controller.quorum.election.backoff.max.ms': '300',
  'broker.heartbeat.interval.ms': '200',
});

export async function startCluster(options: ClusterOptions = {}): Promise<ClusterHandle> {
  const split = options.controllers !== undefined || options.brokers !== undefined;
  if (split && options.nodes !== undefined) throw new Error('nodes: not with controllers/brokers (combined nodes or separate roles)');
  const controllerCount = split ? options.controllers ?? 3 : options.nodes ?? 3;
  const brokerCount = split ? options.brokers ?? 3 : controllerCount;
  for (const [what, n] of [['controllers', controllerCount], ['brokers', brokerCount]] as const) {
    if (!Number.isInteger(n) || n < 1 || n > 64) throw new Error(`${split ? what : 'nodes'}: expected 1-64, got ${n}`);
  }
  const host = '127.0.0.1';
  const ownDir = options.dataDir === undefined;
  const baseDir = options.dataDir ?? mkdtempSync(nodePath.join(tmpdir(), 'logline-cluster-'));
  // Picked ports never meet the ports an operator named (which are bound only later).
  const named = [...options.brokerPorts ?? [], ...options.controllerPorts ?? []];
  const pick = async (n: number): Promise<number[]> => {
    const out: number[] = [];
    while (out.length < n) {
      const p = await freePort(host);
      if (!named.includes(p)) out.push(p);
    }
    return out;
  };
  const brokerPorts = options.brokerPorts ? [...options.brokerPorts] : await pick(brokerCount);
  const controllerPorts = options.controllerPorts ? [...options.controllerPorts] : await pick(controllerCount);
  if (brokerPorts.length !== brokerCount || controllerPorts.length !== controllerCount) {
    throw new Error(`brokerPorts needs ${brokerCount} entries and controllerPorts ${controllerCount}`);
  }
  const httpPorts = options.http ? await pick(controllerCount + brokerCount) : [];
  // Combined: node i is broker i and controller i. Split: controllers first, then brokers.
  type Role = 'broker' | 'controller';
  const layout: { nodeId: number; roles: Role[]; brokerPort: number; controllerPort: number }[] = split
    ? [
      ...controllerPorts.map((controllerPort, i) => ({ nodeId: i + 1, roles: ['controller'] as Role[], brokerPort: 0, controllerPort })),
      ...brokerPorts.map((brokerPort, i) => ({ nodeId: controllerCount + i + 1, roles: ['broker'] as Role[], brokerPort, controllerPort: 0 })),
    ]
    : brokerPorts.map((brokerPort, i) => ({ nodeId: i + 1, roles: ['broker', 'controller'] as Role[], brokerPort, controllerPort: controllerPorts[i]! }));
  const voters = layout.filter((l) => l.roles.includes('controller')).map((l) => `${l.nodeId}@${host}:${l.controllerPort}`).join(',');
  // Every node's directory is formatted with it at its first start (`storage format`'s cluster id).
  const clusterId = randomUuid();
  const logger = options.logger ?? quietLogger;

  const nodes = layout.map(({ nodeId, roles, brokerPort, controllerPort }, i) => {
    const dataDir = nodePath.join(baseDir, `node-${nodeId}`);
    const httpOverride = options.nodeConfig?.[nodeId]?.['http.listener'] ?? options.config?.['http.listener'];
    const listeners = [
      ...(roles.includes('broker') ? [`PLAINTEXT://${host}:${brokerPort}`] : []),
      ...(roles.includes('controller') ? [`CONTROLLER://${host}:${controllerPort}`] : []),
    ];
    const config = parseBrokerConfig({
      'node.id': String(nodeId),
      'process.roles': roles.join(','),
      'listeners': listeners.join(','),
      ...(roles.includes('broker') ? { 'advertised.listeners': `PLAINTEXT://${host}:${brokerPort}` } : {}),
      'controller.listener.names': 'CONTROLLER',
      'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      'controller.quorum.voters': voters,
      'log.dirs': dataDir,
      'http.listener': options.http ? `${host}:${httpPorts[i]}` : '',
      'schema.registry.listener': options.schemaRegistry ? `${host}:0` : '',
      ...EMBEDDED_CLUSTER_DEFAULTS,
      ...options.config,
      ...options.nodeConfig?.[nodeId],
    });
    let server: ServerHandle | null = null;
    let transition: Promise<void> = Promise.resolve();
    const fs = options.fs?.(nodeId);
    const start = async () => {
      let started: ServerHandle | null = null;
      started = await startServer({
        config, dataDir, clusterId, logger: prefixed(logger, nodeId), ...(fs ? { fs } : {}), ...(options.http ? { http: options.http } : {}),
        ...(options.schemaRegistry ? { schemaRegistry: true } : {}),
        // Its log directory failed and it stopped itself: the node is down until restarted.
        onHalt: () => { if (started !== null && server === started) server = null; },
      });
      server = started;
    };
    const serialize = (f: () => Promise<void>): Promise<void> => {
      const run = transition.then(f);
      transition = run.catch(() => {});
      return run;
    };
    const handle: ClusterNodeHandle & { start(): Promise<void> } = {
      nodeId, roles, host, brokerPort, controllerPort, dataDir,
      // The bound port: a node given http.listener with port 0 gets one at start.
      get httpPort() { return server?.http?.port ?? (options.http && httpOverride === undefined ? httpPorts[i]! : 0); },
      get schemaRegistryUrl() { return server?.schemaRegistryUrl ?? null; },
      get server() { return server; },
      get running() { return server !== null; },
      start,
      kill: () => serialize(async () => {
        const s = server;
        server = null;
        await s?.close({ controlledShutdown: false });
      }),
      restart: () => serialize(async () => {
        if (server === null) await start();
      }),
    };
    return handle;
  });

  const started = await Promise.allSettled(nodes.map((node) => node.start()));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.allSettled(nodes.map((node) => node.kill()));
    if (ownDir) rmSync(baseDir, { recursive: true, force: true });
    throw failed.reason;
  }
  // Each node resolved once its own registration was in its own metadata; a user's first Metadata
  // request may go to any node, so wait until every node lists every broker.
  const listedDeadline = Date.now() + 30_000;
  const brokerIds = layout.filter((l) => l.roles.includes('broker')).map((l) => l.nodeId);
  const everyoneListed = () => nodes.every((node) => {
    const listed = node.server?.metadata?.view().brokers('').map((b) => b.nodeId) ?? [];
    return brokerIds.every((id) => listed.includes(id));
  });
  while (!everyoneListed()) {
    if (Date.now() > listedDeadline) {
      await Promise.allSettled(nodes.map((node) => node.kill()));
      if (ownDir) rmSync(baseDir, { recursive: true, force: true });
      throw new Error('startCluster: not every node listed every broker within 30 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  let closed = false;
  return {
    clusterId,
    bootstrap: nodes.filter((node) => node.roles.includes('broker')).map((node) => `${host}:${node.brokerPort}`).join(','),
    nodes,
    controllerQuorumVoters: voters,
    leaderId: () => {
      for (const node of nodes) {
        const id = node.server?.metadata?.leaderId;
        if (id !== undefined) return id;
      }
      return undefined;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await Promise.allSettled(nodes.map((node) => node.kill()));
      if (ownDir) rmSync(baseDir, { recursive: true, force: true });
    },
  };
}

function prefixed(logger: Logger, nodeId: number): Logger {
  // The structured logger names the node in each line's component; a plain object gets a prefix.
  if (logger.child) return logger.child(`node-${nodeId}`);
  return {
    info: (m) => logger.info(`node ${nodeId}: ${m}`),
    warn: (m) => logger.warn(`node ${nodeId}: ${m}`),
    error: (m) => logger.error(`node ${nodeId}: ${m}`),
  };
}
