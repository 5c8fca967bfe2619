// `logline server`: a broker in this process until SIGINT/SIGTERM. Configuration is Kafka's:
// a server.properties file (--config), then --set key=value overrides and the shorthand flags.
// Unknown or invalid properties are refused with a clear message (exit code 2).
import { readFileSync } from 'node:fs';
import { startServer } from '../node/index.js';
import { componentLogger, createLogger, parseLogLevel, type LogFormat } from '../util/index.js';
import { startHttpListener } from '../http/index.js';
import { BrokerConfigError, brokerKey, parseBrokerConfig, parseProperties, type BrokerConfig } from '../config/index.js';
import { parseAddScram, scramCredentialRecord } from '../security/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { tuneHeap } from './heap.js';

/** The flags that make a node's configuration; `logline storage` takes them too, to format what the server will run. */
export const NODE_CONFIG_FLAGS: Record<string, FlagSpec> = {
  config: { type: 'string', help: 'a server.properties file' },
  set: { type: 'string', repeatable: true, help: 'key=value for any Kafka broker property' },
  'node-id': { type: 'string', help: 'node.id (default 1)' },
  listeners: { type: 'string', help: 'listeners, e.g. PLAINTEXT://localhost:9092 (the default)' },
  'advertised-listeners': { type: 'string', help: 'advertised.listeners' },
  'data-dir': { type: 'string', help: 'log.dirs: where partitions and the metadata log live (default ./logline-data)' },
};

const FLAGS: Record<string, FlagSpec> = {
  ...NODE_CONFIG_FLAGS,
  'log-format': { type: 'string', help: 'text (the default) or json: one JSON object a line with ts, level, component and msg' },
  'add-scram': { type: 'string', repeatable: true, help: "a SCRAM credential written at the first start of a new data directory, e.g. 'SCRAM-SHA-512=[name=admin,password=admin-secret]' (ignored afterwards)" },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

const DEFAULTS: Record<string, string> = { 'node.id': '1', listeners: 'PLAINTEXT://localhost:9092', 'log.dirs': './logline-data' };

function overrides(flags: Record<string, unknown>): Map<string, string> {
  const out = new Map<string, string>();
  for (const kv of (flags.set as string[] | undefined) ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--set expects key=value, got "${kv}"`);
    out.set(kv.slice(0, eq).trim(), kv.slice(eq + 1).trim());
  }
  const shorthand: [string, string][] = [['node-id', 'node.id'], ['listeners', 'listeners'], ['advertised-listeners', 'advertised.listeners'], ['data-dir', 'log.dirs']];
  for (const [flag, key] of shorthand) if (typeof flags[flag] === 'string') out.set(key, flags[flag] as string);
  return out;
}

/**
 * The node's configuration: the embedded defaults, under a server.properties file (--config), under
 * --set and the shorthand flags. Throws BrokerConfigError (configProblems prints it) or UsageError.
 */
export function nodeConfig(flags: Record<string, unknown>): BrokerConfig {
  let file = new Map<string, string>();
  if (typeof flags.config === 'string') {
    try {
      file = parseProperties(readFileSync(flags.config, 'utf8'));
    } catch (e) {
      throw new UsageError(`--config ${flags.config}: ${(e as Error).message}`);
    }
  }
  return parseBrokerConfig(new Map([...Object.entries(DEFAULTS), ...file]), overrides(flags));
}

/** What `invalid configuration` looks like on stderr: each bad key's message. */
export function configProblems(err: BrokerConfigError): string {
  return `invalid configuration:\n${err.problems.map((p) => `  ${p.message}`).join('\n')}`;
}

export async function serverCommand(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv, FLAGS);
  if (flags.help) {
    console.log(helpText('logline server [options]', 'Runs a Logline broker until interrupted. A node of a multi-node cluster needs its data directory formatted first (logline storage format).', FLAGS));
    return 0;
  }
  let config;
  try {
    config = nodeConfig(flags);
  } catch (err) {
    if (err instanceof BrokerConfigError) {
      console.error(configProblems(err));
      return 2;
    }
    throw err;
  }
  if (config.logDirs.length !== 1) {
    console.error(`invalid configuration:\n  log.dirs: one directory is supported, got ${config.logDirs.length}`);
    return 2;
  }
  const format = (flags['log-format'] ?? 'text') as string;
  if (format !== 'text' && format !== 'json') throw new UsageError(`--log-format: expected text or json, got "${format}"`);
  const logger = createLogger({ level: parseLogLevel(config.get('log.level') as string), format: format as LogFormat });
  const log = componentLogger(logger, 'server');
  // Kafka keys Logline accepts without acting on them: said once, so nobody expects them to work.
  const unused = [...config.originals.keys()].filter((k) => brokerKey(k)?.unused === true);
  if (unused.length > 0) log.info(`accepted, not used by Logline (docs/config-reference.md says why): ${unused.join(', ')}`);
  const heap = tuneHeap();
  if (heap !== null) log.debug?.(`V8 heap: ${heap}`);
  let bootstrapRecords;
  try {
    bootstrapRecords = ((flags['add-scram'] as string[] | undefined) ?? []).map((v) => scramCredentialRecord(parseAddScram(v)));
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  let server;
  // The broker stopped by itself (its log directory failed): the process exits with 1.
  let halt = () => {};
  // Caught from before the start: a SIGTERM while the broker starts (it logs its listeners before
  // the start returns) stops it cleanly once started rather than killing the process mid-way.
  let signal: string | null = null;
  let stop = () => {};
  const onSignal = (sig: string) => { signal = sig; stop(); };
  process.once('SIGINT', () => onSignal('SIGINT'));
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  try {
    server = await startServer({ config, dataDir: config.logDirs[0], logger, bootstrapRecords, onHalt: () => halt(), http: startHttpListener, schemaRegistry: true });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    console.error(e.code === 'EADDRINUSE' ? `cannot listen: ${e.message} (is another broker running?)` : `cannot start: ${e.message}`);
    return 1;
  }
  const halted = await new Promise<boolean>((resolve) => {
    stop = () => { log.info(`${signal}: shutting down`); resolve(false); };
    halt = () => resolve(true);
    if (signal !== null) stop();
  });
  await server.close();
  log.info('stopped');
  return halted ? 1 : 0;
}
