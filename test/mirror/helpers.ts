// Two single-node clusters on loopback and the mirror between them, for the mirror's tests.
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { MirrorEngine, parseMirrorConfig } from '../../src/mirror/index.js';
import { parseBrokerConfig, parseProperties } from '../../src/config/index.js';
import { createLogger } from '../../src/util/index.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { Kafka, logLevel, type KafkaConfig } from 'kafkajs';
import { ApiKey } from '../../src/protocol/index.js';
import { Cluster, fetchCommitted, type ClusterClientOptions, type FetchedRecord } from '../../src/client/index.js';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';

export interface TwoClusters {
  a: ServerHandle;
  b: ServerHandle;
  aBootstrap: string;
  bBootstrap: string;
  aClient: ClusterClient;
  bClient: ClusterClient;
  close(): Promise<void>;
}

/** `brokerConfig`: server.properties keys both clusters get (listeners default to one PLAINTEXT on loopback). */
export async function twoClusters(brokerConfig?: Record<string, string>): Promise<TwoClusters> {
  const options = () => brokerConfig === undefined
    ? { listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() }
    : { config: parseBrokerConfig({ 'node.id': '1', listeners: 'PLAINTEXT://127.0.0.1:0', ...brokerConfig }), dataDir: tempDataDir() };
  const a = await startServer(options());
  const b = await startServer(options());
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
export function mm2Properties(c: Pick<TwoClusters, 'aBootstrap' | 'bBootstrap'>, extra: Record<string, string> = {}): string {
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
    // MIRROR_LOG=1 prints the engine's log while a test is being looked into.
    ...(process.env.MIRROR_LOG ? { logger: createLogger({ level: 'INFO' }) } : {}),
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

/** Every record of a topic's partitions, read to the high watermark (`source`: a bootstrap, or options with TLS and SASL). */
export async function readAll(source: string | ClusterClientOptions, topic: string, partitions: number): Promise<Map<number, FetchedRecord[]>> {
  const cluster = new Cluster(typeof source === 'string' ? { bootstrap: source } : source);
  const out = new Map<number, FetchedRecord[]>(Array.from({ length: partitions }, (_, p) => [p, []]));
  const positions = new Map<number, number>(Array.from({ length: partitions }, (_, p) => [p, 0]));
  try {
    for (let round = 0; positions.size > 0 && round < 10_000; round++) {
      const fetched = await fetchCommitted(cluster, new Map([[topic, positions]]), { maxWaitMs: 0 });
      for (const f of fetched) {
        out.get(f.partition)!.push(...f.records);
        positions.set(f.partition, f.next);
        if (f.next >= f.highWatermark) positions.delete(f.partition);
      }
    }
  } finally {
    cluster.close();
  }
  return out;
}

export async function createTopic(c: TwoClusters, cluster: 'a' | 'b', name: string, partitions: number, configs: { name: string; value: string }[] = []): Promise<void> {
  const client = cluster === 'a' ? c.aClient : c.bClient;
  const r = await client.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs }], timeoutMs: 30_000, validateOnly: false }, 7);
  assert.equal(r.topics[0].errorCode, 0, `create ${name}`);
  await client.retrying(() => client.topic(name));
}

interface Sent { key: string; value: string }

/** kafkajs writes `count` records in batches of 20 while the mirror runs; returns what A acknowledged (`security`: kafkajs' ssl and sasl). */
export async function kafkajsWrites(bootstrap: string, topic: string, count: number, tag: string, security: Pick<KafkaConfig, 'ssl' | 'sasl'> = {}): Promise<Sent[]> {
  const kafka = new Kafka({ brokers: [bootstrap], clientId: `kafkajs-${tag}`, logLevel: logLevel.NOTHING, ...security });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const sent: Sent[] = [];
  try {
    for (let i = 0; i < count; i += 20) {
      const messages = Array.from({ length: Math.min(20, count - i) }, (_, j) => ({
        key: `${tag}-k${(i + j) % 7}`, value: `${tag}-v${i + j}`, timestamp: String(1_700_000_000_000 + i + j), headers: { h: `${tag}-h${i + j}` },
      }));
      await producer.send({ topic, messages, acks: -1 });
      for (const m of messages) sent.push({ key: m.key, value: m.value });
    }
  } finally {
    await producer.disconnect();
  }
  return sent;
}

/** kcat (librdkafka) writes `count` keyed records with a header, acks=all (a child process: the brokers run in this one). */
export async function kcatWrites(bootstrap: string, topic: string, count: number, tag: string): Promise<Sent[]> {
  if (!hasKcat) { console.log('# kcat is not installed: its librdkafka producer is skipped'); return []; }
  const lines = Array.from({ length: count }, (_, i) => `${tag}-k${i % 5}|${tag}-v${i}`).join('\n') + '\n';
  const r = await runProcess('kcat', ['-P', '-b', bootstrap, '-t', topic, '-K', '|', '-H', `h=${tag}`, '-X', 'acks=all'], lines, 60_000);
  assert.equal(r.code, 0, `kcat: ${r.stderr}`);
  return Array.from({ length: count }, (_, i) => ({ key: `${tag}-k${i % 5}`, value: `${tag}-v${i}` }));
}


/** A loopback port free a moment ago (for a server that must come back on the same port). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

export const hasKcat = spawnSync('kcat', ['-V']).status === 0;
