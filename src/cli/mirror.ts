// `logline mirror --config mm2.properties`: MirrorMaker 2 in one process (connect-mirror-maker.sh's
// dedicated mode), reading its own properties file; `logline mirror status` asks a running mirror
// for its per-partition lag and last errors through the mirror's status listener.
import { readFileSync } from 'node:fs';
import { ClientConfigError, type ClusterClientOptions } from '../client/index.js';
import { parseProperties } from '../config/index.js';
import { MirrorConfigError, MirrorEngine, mirrorClientOptions, parseMirrorConfig, type MirrorConfig, type PartitionStatus } from '../mirror/index.js';
import { createLogger, parseLogLevel } from '../util/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { table, toJson } from './output.js';

/** Where the status listener is unless --status-listener says otherwise. */
export const MIRROR_STATUS_DEFAULT = '127.0.0.1:9645';

const FLAGS: Record<string, FlagSpec> = {
  config: { type: 'string', help: 'MirrorMaker 2\'s properties file (clusters, A.bootstrap.servers, A->B.enabled, ...)' },
  'status-listener': { type: 'string', help: `host:port of the status and /metrics listener (default ${MIRROR_STATUS_DEFAULT}; port 0 picks one)` },
  'offset-flush-interval-ms': { type: 'number', help: 'how often delayed offset syncs and source offsets are written (default 10000, Connect\'s offset.flush.interval.ms)' },
  'log-level': { type: 'string', help: 'ERROR, WARN, INFO (default), DEBUG' },
  url: { type: 'string', help: `status: host:port of the mirror's status listener (default ${MIRROR_STATUS_DEFAULT})` },
  json: { type: 'boolean', help: 'status: print JSON instead of tables' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

const USAGE = 'logline mirror --config FILE [options] | logline mirror status [--url HOST:PORT]';

/** The parsed file, or a UsageError naming the key at fault (exit code 2). */
export function loadMirrorConfig(file: string): MirrorConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--config ${file}: ${(e as Error).message}`);
  }
  try {
    return parseMirrorConfig(parseProperties(text));
  } catch (e) {
    if (e instanceof MirrorConfigError) throw new UsageError(`${file}: ${e.message}`);
    throw e;
  }
}

/** Each cluster's client options; a bad client key is a usage error (exit code 2). */
function clientsOf(config: MirrorConfig): Map<string, ClusterClientOptions> {
  try {
    return mirrorClientOptions(config);
  } catch (e) {
    if (e instanceof ClientConfigError) throw new UsageError(e.message);
    throw e;
  }
}

export async function mirrorCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  const [verb] = positionals;
  if (flags.help) {
    console.log(helpText(USAGE, 'Mirror topics, consumer group offsets and heartbeats between clusters as MirrorMaker 2 does, from its own properties file.', FLAGS));
    return 0;
  }
  if (verb === 'status') return status(flags);
  if (verb !== undefined) throw new UsageError(`unknown verb "${verb}"`);
  if (typeof flags.config !== 'string') throw new UsageError('logline mirror needs --config FILE (MirrorMaker 2\'s properties)');
  const config = loadMirrorConfig(flags.config);
  const logger = createLogger({ level: parseLogLevel(typeof flags['log-level'] === 'string' ? flags['log-level'] : 'INFO'), component: 'mirror' });
  const engine = new MirrorEngine({
    config, clients: clientsOf(config), logger,
    statusListener: typeof flags['status-listener'] === 'string' ? flags['status-listener'] : MIRROR_STATUS_DEFAULT,
    ...(typeof flags['offset-flush-interval-ms'] === 'number' ? { offsetFlushIntervalMs: flags['offset-flush-interval-ms'] } : {}),
  });
  await engine.start();
  const flows = config.flows.filter((f) => f.enabled).map((f) => `${f.source}->${f.target}`);
  logger.info(`mirroring ${flows.join(', ') || '(no enabled flow: heartbeats only)'}; status on http://${engine.statusAddress!.host}:${engine.statusAddress!.port}/status`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  logger.info('stopping');
  await engine.stop();
  return 0;
}

async function status(flags: Record<string, unknown>): Promise<number> {
  const url = typeof flags.url === 'string' ? flags.url : MIRROR_STATUS_DEFAULT;
  let body: { flows: { source: string; target: string; enabled: boolean; lastError: string | null; lastErrorAtMs: number | null; lastHeartbeatMs: number | null }[]; partitions: PartitionStatus[]; checkpoints: unknown[] };
  try {
    const r = await fetch(`http://${url}/status`, { signal: AbortSignal.timeout(10_000) });
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    body = await r.json() as typeof body;
  } catch (e) {
    console.error(`no mirror answers at ${url}: ${(e as Error).message}`);
    return 1;
  }
  if (flags.json) { console.log(toJson(body)); return 0; }
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  console.log(table(body.flows.map((f) => ({ flow: `${f.source}->${f.target}`, enabled: f.enabled, lastHeartbeat: iso(f.lastHeartbeatMs), lastError: f.lastError, lastErrorAt: iso(f.lastErrorAtMs) }))));
  console.log('');
  console.log(table(body.partitions.map((p) => ({
    flow: `${p.source}->${p.target}`, topic: p.topic, partition: p.partition, remoteTopic: p.remoteTopic, position: p.position,
    highWatermark: p.highWatermark, lagRecords: p.lagRecords, lagMs: p.lagMs, records: p.recordCount, replicationLatencyMs: p.replicationLatencyMs,
  }))));
  return 0;
}
