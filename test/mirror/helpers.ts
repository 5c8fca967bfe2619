// Two single-node clusters on loopback and the mirror between them, for the mirror's tests.
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { MirrorEngine, parseMirrorConfig } from '../../src/mirror/index.js';
import { parseProperties } from '../../src/config/index.js';
import { tempDataDir } from '../broker/process-helpers.js';

export interface TwoClusters {
  a: ServerHandle;
  b: ServerHandle;
  aBootstrap: string;
  bBootstrap: string;
  aClient: ClusterClient;
  bClient: ClusterClient;
  close(): Promise<void>;
}

export async function twoClusters(): Promise<TwoClusters> {
  const a = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const b = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
  const aBootstrap = `127.0.0.1:${a.listeners[0]!.port}`;
  const bBootstrap = `127.0.0.1:${b.listeners[0]!.port}`;
  const aClient = new ClusterClient({ bootstrap: aBootstrap });
  const bClient = new ClusterClient({ bootstrap: bBootstrap });
  return {
    a, b, aBootstrap, bBootstrap, aClient, bClient,
    async close() { aClient.close(); bClient.close(); await a.close(); await b.close(); },
  };
}

/** MirrorMaker 2 properties for A->B between the two clusters, with one-node replication factors and short intervals. */
export function mm2Properties(c: TwoClusters, extra: Record<string, string> = {}): string {
  const lines: Record<string, string> = {
    'clusters': 'A, B',
    'A.bootstrap.servers': c.aBootstrap,
    'B.bootstrap.servers': c.bBootstrap,
    'A->B.enabled': 'true',
    'replication.factor': '1',
    'offset-syncs.topic.replication.factor': '1',
    'heartbeats.topic.replication.factor': '1',
    'checkpoints.topic.replication.factor': '1',
    'offset.storage.replication.factor': '1',
    'refresh.topics.interval.seconds': '1',
    'refresh.groups.interval.seconds': '1',
    'emit.checkpoints.interval.seconds': '1',
    'sync.topic.configs.interval.seconds': '1',
    ...extra,
  };
  return Object.entries(lines).map(([k, v]) => `${k} = ${v}`).join('\n') + '\n';
}

export async function startMirror(c: TwoClusters, extra: Record<string, string> = {}): Promise<MirrorEngine> {
  const config = parseMirrorConfig(parseProperties(mm2Properties(c, extra)));
  const engine = new MirrorEngine({
    config, clients: new Map([['A', { bootstrap: c.aBootstrap }], ['B', { bootstrap: c.bBootstrap }]]),
    offsetFlushIntervalMs: 500, statusListener: '127.0.0.1:0',
  });
  await engine.start();
  return engine;
}

/** Polls `check` every 100 ms until it holds or `timeoutMs` passes (then fails with `what`). */
export async function eventually(what: string, timeoutMs: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
