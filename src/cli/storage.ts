// `logline storage format|info|random-uuid`, after Kafka's kafka-storage.sh: prepare a node's log
// directory before a cluster's first start (one cluster id for every node, SCRAM credentials and
// feature levels for the new metadata, the initial voters of a dynamic quorum), show what a
// directory holds, print a new cluster id. The node's configuration is read as `logline server`
// reads it (--config and the same overrides), so a format prepares exactly what the server runs.
import { BrokerConfigError, type BrokerConfig } from '../config/index.js';
import { FormatError, formatStorage, storageInfo, type InitialQuorum } from '../node/index.js';
import { parseAddScram, scramCredentialRecord } from '../security/index.js';
import { NodeFileSystem, randomUuid } from '../storage/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { toJson } from './output.js';
import { NODE_CONFIG_FLAGS, configProblems, nodeConfig } from './server.js';

const FLAGS: Record<string, FlagSpec> = {
  ...NODE_CONFIG_FLAGS,
  'cluster-id': { type: 'string', short: 't', help: 'format: the cluster id, the same on every node (logline storage random-uuid prints one)' },
  'ignore-formatted': { type: 'boolean', short: 'g', help: 'format: leave an already formatted directory as it is (exit code 0) instead of failing' },
  'add-scram': { type: 'string', short: 'S', repeatable: true, help: "format: a SCRAM credential the new cluster starts with, e.g. 'SCRAM-SHA-256=[name=alice,password=alice-secret]'" },
  'release-version': { type: 'string', short: 'r', help: 'format: the release whose feature levels the cluster starts at, 3.3-IV3 to 4.0-IV3 (default 4.0-IV3)' },
  feature: { type: 'string', short: 'f', repeatable: true, help: 'format: name=level for one feature, e.g. transaction.version=1' },
  standalone: { type: 'boolean', short: 's', help: 'format: this controller is the only voter of a new dynamic quorum (controller.quorum.bootstrap.servers)' },
  'initial-controllers': { type: 'string', short: 'I', help: 'format: the voters of a new dynamic quorum, id@host:port:directoryId,... (the same on every node)' },
  'no-initial-controllers': { type: 'boolean', short: 'N', help: 'format: a node that joins an existing dynamic quorum (an observer until added as a voter)' },
  json: { type: 'boolean', help: 'info: print JSON' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

const USAGE = 'logline storage <format|info|random-uuid> [options]';
const SUMMARY = [
  'Prepare and inspect a node\'s log directory, as kafka-storage.sh does.',
  '',
  '  random-uuid   print a new cluster id',
  '  format        write meta.properties (and the bootstrap metadata) into the node\'s log directory;',
  '                every node of a multi-node cluster needs it before its first start, with one --cluster-id',
  '  info          show the log directory and its meta.properties (exit code 1 on a problem)',
  '',
  'The node\'s configuration is read as `logline server` reads it: --config FILE, then --set and the',
  'shorthand flags. A node that is its own quorum (`logline server` with no options) formats itself.',
].join('\n');

/** --feature name=level, as Kafka parses it. */
function parseFeatures(values: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq <= 0) throw new UsageError(`Can't parse feature=level string ${v}: equals sign not found.`);
    const level = v.slice(eq + 1).trim();
    if (!/^\d+$/.test(level) || Number(level) > 32767) throw new UsageError(`Can't parse feature=level string ${v}: unable to parse ${level} as a short.`);
    out.set(v.slice(0, eq).trim(), Number(level));
  }
  return out;
}

/** At most one of Kafka's three quorum flags. */
function initialQuorum(flags: Record<string, unknown>): InitialQuorum | undefined {
  const given = (['standalone', 'initial-controllers', 'no-initial-controllers'] as const).filter((f) => flags[f] !== undefined && flags[f] !== false);
  if (given.length > 1) throw new UsageError(`--${given[0]} and --${given[1]} do not go together: one of --standalone, --initial-controllers, --no-initial-controllers`);
  switch (given[0]) {
    case 'standalone': return { kind: 'standalone' };
    case 'initial-controllers': return { kind: 'initial-controllers', text: flags['initial-controllers'] as string };
    case 'no-initial-controllers': return { kind: 'no-initial-controllers' };
    default: return undefined;
  }
}

export async function storageCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  const [verb, ...extra] = positionals;
  if (flags.help || verb === undefined) {
    console.log(helpText(USAGE, SUMMARY, FLAGS));
    return flags.help ? 0 : 2;
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  if (verb === 'random-uuid') {
    console.log(randomUuid());
    return 0;
  }
  if (verb !== 'format' && verb !== 'info') throw new UsageError(`unknown verb "${verb}" (format, info, random-uuid)`);
  let config;
  try {
    config = nodeConfig(flags);
  } catch (err) {
    if (!(err instanceof BrokerConfigError)) throw err;
    console.error(configProblems(err));
    return 2;
  }
  const fs = new NodeFileSystem();
  try {
    return verb === 'info' ? info(config, fs, flags.json === true) : format(config, fs, flags);
  } catch (err) {
    if (!(err instanceof FormatError)) throw err;
    console.error(err.message);
    return err.usage ? 2 : 1;
  }
}

function format(config: BrokerConfig, fs: NodeFileSystem, flags: Record<string, unknown>): number {
  const clusterId = flags['cluster-id'];
  if (typeof clusterId !== 'string') throw new UsageError('storage format needs --cluster-id (logline storage random-uuid prints one)');
  let scramRecords;
  try {
    scramRecords = ((flags['add-scram'] as string[] | undefined) ?? []).map((v) => scramCredentialRecord(parseAddScram(v)));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const quorum = initialQuorum(flags);
  const lines = formatStorage({
    config, fs, clusterId, ignoreFormatted: flags['ignore-formatted'] === true, scramRecords,
    features: parseFeatures((flags.feature as string[] | undefined) ?? []),
    ...(typeof flags['release-version'] === 'string' ? { releaseVersion: flags['release-version'] } : {}),
    ...(quorum ? { quorum } : {}),
  });
  for (const line of lines) console.log(line);
  return 0;
}

/** Kafka's StorageTool info output: the directory, its meta.properties, and any problem (exit code 1). */
function info(config: BrokerConfig, fs: NodeFileSystem, json: boolean): number {
  const found = storageInfo(config, fs);
  if (json) {
    console.log(toJson(found));
    return found.problems.length > 0 ? 1 : 0;
  }
  const out: string[] = [];
  if (found.directories.length > 0) out.push(found.directories.length === 1 ? 'Found log directory:' : 'Found log directories:', ...found.directories.map((d) => `  ${d}`), '');
  if (found.metadata !== null) out.push(`Found metadata: {${Object.entries(found.metadata).map(([k, v]) => `${k}=${v}`).join(', ')}}`, '');
  if (found.problems.length > 0) out.push(found.problems.length === 1 ? 'Found problem:' : 'Found problems:', ...found.problems.map((p) => `  ${p}`), '');
  console.log(out.join('\n').trimEnd());
  return found.problems.length > 0 ? 1 : 0;
}
