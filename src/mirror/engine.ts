// The engine behind `logline mirror`: one heartbeat task per pair of clusters (when heartbeats
// are on), and per enabled flow one source task and one checkpoint task, all in this process;
// with a small HTTP listener for its status and metrics (`logline mirror status` reads it: the
// lag and last error live in the running engine, which the internal topics cannot tell).
import { createServer, type Server } from 'node:http';
import { clientSecurityFromProperties, type ClusterClientOptions } from '../client/index.js';
import { quietLogger, type Logger } from '../util/index.js';
import { MirrorCheckpointTask } from './checkpoint-task.js';
import type { MirrorConfig } from './config.js';
import { MirrorHeartbeatTask } from './heartbeat-task.js';
import { MirrorMetrics } from './metrics.js';
import { MirrorSourceTask } from './source-task.js';
import type { TaskContext } from './task.js';

/**
 * Each cluster's client options: its bootstrap servers, client.id, and TLS and SASL from its client
 * keys (`A.security.protocol`, ...). A key that cannot be used throws ClientConfigError.
 */
export function mirrorClientOptions(config: MirrorConfig): Map<string, ClusterClientOptions> {
  const out = new Map<string, ClusterClientOptions>();
  for (const [alias, c] of config.clusters) {
    const clientId = c.client.get('client.id');
    out.set(alias, { bootstrap: c.bootstrapServers, ...(clientId ? { clientId } : {}), ...clientSecurityFromProperties(c.client) });
  }
  return out;
}

export interface MirrorEngineOptions {
  config: MirrorConfig;
  /** Client options per cluster alias; the caller turns each cluster's client keys into TLS and SASL. */
  clients: ReadonlyMap<string, ClusterClientOptions>;
  logger?: Logger;
  /** Connect's offset.flush.interval.ms (MirrorMaker 2's dedicated mode: 10 s). */
  offsetFlushIntervalMs?: number;
  loadTimeoutMs?: number;
  /** host:port of the status listener; port 0 picks one; none: no listener. */
  statusListener?: string;
}

export class MirrorEngine {
  readonly metrics = new MirrorMetrics();
  private stopped = false;
  private readonly running: Promise<void>[] = [];
  private server: Server | null = null;
  /** The status listener's address, once started. */
  statusAddress: { host: string; port: number } | null = null;

  constructor(private readonly o: MirrorEngineOptions) {}

  async start(): Promise<void> {
    const ctx: TaskContext = {
      logger: this.o.logger ?? quietLogger,
      metrics: this.metrics,
      clients: this.o.clients,
      offsetFlushIntervalMs: this.o.offsetFlushIntervalMs ?? 10_000,
      loadTimeoutMs: this.o.loadTimeoutMs ?? 60_000,
      stopping: () => this.stopped,
    };
    if (this.o.statusListener !== undefined) await this.listen(this.o.statusListener);
    for (const flow of this.o.config.flows) {
      this.metrics.flow(flow.source, flow.target, flow.enabled);
      if (flow.emitHeartbeats) this.running.push(new MirrorHeartbeatTask(flow, ctx).run());
      if (!flow.enabled) continue;
      this.running.push(new MirrorSourceTask(flow, ctx).run());
      if (flow.emitCheckpoints || flow.syncGroupOffsets) this.running.push(new MirrorCheckpointTask(flow, ctx).run());
    }
  }

  private listen(hostPort: string): Promise<void> {
    const at = hostPort.lastIndexOf(':');
    const host = at > 0 ? hostPort.slice(0, at) : '127.0.0.1';
    const port = Number(at >= 0 ? hostPort.slice(at + 1) : hostPort);
    this.server = createServer((req, res) => {
      const now = Date.now();
      if (req.method === 'GET' && req.url === '/status') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(this.metrics.status(now)));
      } else if (req.method === 'GET' && req.url === '/metrics') {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
        res.end(this.metrics.prometheus(now));
      } else {
        res.writeHead(404).end();
      }
    });
    return new Promise((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, host, () => {
        const a = this.server!.address() as { address: string; port: number };
        this.statusAddress = { host: a.address, port: a.port };
        resolve();
      });
    });
  }

  /** Stops every task (each finishes its current step and flushes) and the listener. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled(this.running);
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
