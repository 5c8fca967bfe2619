// A node's log directory before its first start, as Kafka's StorageTool and Formatter prepare it
// (`logline storage format`), and what a start reads back:
//
//   meta.properties        version=1, node.id, cluster.id, directory.id. Every node of a cluster
//                          shares the cluster id, so a node whose quorum names other nodes refuses
//                          to start without one (unformattedRefusal) instead of making one up; a
//                          node that is its own quorum still stamps its directory at first start.
//   bootstrap.checkpoint   the records a new cluster's metadata starts with beyond what every new
//                          cluster writes (--add-scram credentials, --feature / --release-version
//                          levels), in Kafka's snapshot file format, written only when there are
//                          some. The first active controller appends them after the default
//                          feature levels; a start of an existing metadata log ignores them.
//   __cluster_metadata-0/00000000000000000000-0000000000.checkpoint
//                          with --standalone or --initial-controllers: Kafka's bootstrap snapshot,
//                          the initial voter set of a KIP-853 dynamic quorum (a node configured
//                          with controller.quorum.bootstrap.servers). A start takes the voters from
//                          its latest snapshot before it asks the bootstrap servers.
//
// Directory ids in --initial-controllers are taken as this node's directory.id, as Kafka does; the
// quorum itself does not track directory ids (its VotersRecords carry the zero UUID).
import * as nodePath from 'node:path';
import { listenerName, type BrokerConfig } from '../config/index.js';
import {
  CONTROLLER_FEATURES, GROUP_VERSION_FEATURE, KRAFT_VERSION_FEATURE, METADATA_VERSION_LATEST, defaultFeatureLevel, metadataVersionLevel, metadataVersionName,
} from '../controller/index.js';
import { ELIGIBLE_LEADER_REPLICAS_VERSION_FEATURE, METADATA_VERSION_FEATURE, TRANSACTION_VERSION_FEATURE, deserializeMetadataRecord, metadataRecord, serializeMetadataRecord, type MetadataRecord } from '../metadata/index.js';
import {
  METADATA_LOG_DIR_NAME, decodeSnapshotFile, encodeSnapshotFile, latestSnapshotVoters, snapshotFileName, writeBootstrapSnapshot, type VoterAddress,
} from '../raft/index.js';
import { buildRecordBatchSync, iterateBatches, iterateRecords } from '../records/index.js';
import { META_PROPERTIES, isUuid, randomUuid, readMetaProperties, writeMetaProperties, type FileSystem, type MetaProperties } from '../storage/index.js';

/** Kafka's name for the bootstrap metadata file in the metadata log directory. */
export const BOOTSTRAP_CHECKPOINT = 'bootstrap.checkpoint';

/** A format that cannot be done: `usage` for input that is wrong (exit code 2), else a refusal (exit code 1). */
export class FormatError extends Error {
  override name = 'FormatError';
  constructor(message: string, readonly usage: boolean) { super(message); }
}

const usage = (message: string) => new FormatError(message, true);

/** How the metadata quorum of a dynamic (KIP-853) node begins: Kafka's three mutually exclusive flags. */
export type InitialQuorum =
  | { kind: 'standalone' }
  | { kind: 'initial-controllers'; text: string }
  | { kind: 'no-initial-controllers' };

export interface FormatOptions {
  readonly config: BrokerConfig;
  readonly clusterId: string;
  readonly ignoreFormatted?: boolean;
  /** UserScramCredentialRecords (--add-scram). */
  readonly scramRecords?: readonly MetadataRecord[];
  /** --feature name=level. */
  readonly features?: ReadonlyMap<string, number>;
  /** --release-version, e.g. "3.9" or "4.0-IV3". */
  readonly releaseVersion?: string;
  readonly quorum?: InitialQuorum;
  readonly fs: FileSystem;
}

/** The one log directory a node runs with (the server takes one), or a usage error. */
export function logDirOf(config: BrokerConfig): string {
  if (config.logDirs.length !== 1) throw usage(`log.dirs: one directory is supported, got ${config.logDirs.length}`);
  const dir = config.logDirs[0]!;
  const metadataLogDir = config.get('metadata.log.dir') as string | null;
  if (metadataLogDir !== null && metadataLogDir !== '' && nodePath.resolve(metadataLogDir) !== nodePath.resolve(dir)) {
    throw usage(`metadata.log.dir: the metadata log lives in the log directory (${dir}); a separate metadata.log.dir is not supported`);
  }
  return dir;
}

/** `id@host:port[:directoryId],...` (Kafka's DynamicVoters syntax). */
export function parseInitialControllers(text: string): (VoterAddress & { directoryId?: string })[] {
  const out: (VoterAddress & { directoryId?: string })[] = [];
  for (const part of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const m = /^(\d+)@(\[[^\]]+\]|[^:@]+):(\d+)(?::([A-Za-z0-9_-]+))?$/.exec(part);
    if (m === null) throw usage(`--initial-controllers: "${part}" is not id@host:port:directoryId`);
    const nodeId = Number(m[1]);
    const port = Number(m[3]);
    if (nodeId > 0x7fffffff) throw usage(`--initial-controllers: node id ${m[1]} out of range`);
    if (port < 1 || port > 65535) throw usage(`--initial-controllers: port ${m[3]} in "${part}" out of range`);
    if (m[4] !== undefined && !isUuid(m[4])) throw usage(`--initial-controllers: "${m[4]}" in "${part}" is not a directory id (a Kafka UUID, as \`logline storage random-uuid\` prints)`);
    if (out.some((v) => v.nodeId === nodeId)) throw usage(`--initial-controllers: node ${nodeId} is listed twice`);
    out.push({ nodeId, host: m[2]!.replace(/^\[|\]$/g, ''), port, ...(m[4] !== undefined ? { directoryId: m[4] } : {}) });
  }
  if (out.length === 0) throw usage('--initial-controllers: no controllers given');
  return out;
}

/** This controller as the only voter (--standalone): its controller listener's host and port. */
function standaloneVoter(config: BrokerConfig): VoterAddress {
  const roles = config.processRoles;
  if (!roles.includes('controller')) throw usage('You can only use --standalone on a controller.');
  const names = new Set(config.controllerListenerNames);
  const listener = config.listeners.find((l) => names.has(listenerName(l)));
  const m = listener === undefined ? null : /^[^:]+:\/\/(\[[^\]]*\]|[^:]*):(\d+)$/.exec(listener);
  if (m === null) throw usage(`--standalone: no controller listener (controller.listener.names ${[...names].join(',') || '(none)'}) in listeners`);
  const port = Number(m[2]);
  if (port === 0) throw usage(`--standalone: the controller listener ${listener} has port 0; a voter needs a fixed port`);
  // As Kafka: a listener without a host is reached on localhost.
  const host = m[1]!.replace(/^\[|\]$/g, '') || 'localhost';
  return { nodeId: config.nodeId, host, port };
}

/** The feature levels a format sets beyond a new cluster's defaults, validated as Kafka's Formatter does. */
function featureRecords(o: FormatOptions, dynamic: boolean): { records: MetadataRecord[]; metadataVersion: number } {
  const features = o.features ?? new Map<string, number>();
  if (features.has(METADATA_VERSION_FEATURE) && o.releaseVersion !== undefined) {
    throw usage(`Use --release-version instead of --feature ${METADATA_VERSION_FEATURE}=X to avoid ambiguity.`);
  }
  let metadataVersion = METADATA_VERSION_LATEST;
  if (o.releaseVersion !== undefined) {
    const level = metadataVersionLevel(o.releaseVersion);
    if (level === undefined) throw usage(`--release-version ${o.releaseVersion}: expected ${metadataVersionName(7)} to ${metadataVersionName(METADATA_VERSION_LATEST)} (e.g. 3.9, 4.0-IV3)`);
    metadataVersion = level;
  }
  const supported = new Map(CONTROLLER_FEATURES.map((f) => [f.name, f]));
  for (const [name, level] of features) {
    const f = supported.get(name);
    if (f === undefined) {
      throw usage(`Unsupported feature: ${name}. Supported features are: ${[...supported.keys()].filter((n) => n !== METADATA_VERSION_FEATURE).sort().join(', ')}`);
    }
    if (level < f.minVersion || level > f.maxVersion) throw usage(`--feature ${name}=${level}: supported levels are ${f.minVersion}-${f.maxVersion}`);
    if (name === METADATA_VERSION_FEATURE) metadataVersion = level;
  }
  // kraft.version lives in the quorum (its bootstrap snapshot's KRaftVersionRecord), not in a
  // FeatureLevelRecord: a level only has to agree with the kind of quorum.
  const kraft = features.get(KRAFT_VERSION_FEATURE);
  if (kraft === 0 && dynamic) {
    throw usage('Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags --standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try removing the --feature flag for kraft.version.');
  }
  if (kraft === 1 && !dynamic) {
    throw usage('Cannot set kraft.version to 1 unless controller.quorum.voters is empty and one of the flags --standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic controllers support, try using one of --standalone, --initial-controllers, or --no-initial-controllers and removing controller.quorum.voters.');
  }
  const explicit = o.releaseVersion !== undefined || [...features.keys()].some((n) => n !== KRAFT_VERSION_FEATURE);
  if (!explicit) return { records: [], metadataVersion };
  // Every level then, as Kafka's bootstrap metadata holds them: a release before 4.0 starts
  // group.version and transaction.version at 0, which must cancel the defaults written before them.
  const records = [METADATA_VERSION_FEATURE, GROUP_VERSION_FEATURE, TRANSACTION_VERSION_FEATURE, ELIGIBLE_LEADER_REPLICAS_VERSION_FEATURE].map((name) => metadataRecord('FeatureLevelRecord', {
    name, featureLevel: features.get(name) ?? defaultFeatureLevel(name, metadataVersion),
  }));
  return { records, metadataVersion };
}

/** A metadata log directory holds a log already (anything beyond a bootstrap snapshot a format left). */
function hasMetadataLog(fs: FileSystem, dir: string): boolean {
  const metadataDir = nodePath.join(dir, METADATA_LOG_DIR_NAME);
  if (!fs.isDirectory(metadataDir)) return false;
  const bootstrap = snapshotFileName(0, 0);
  return fs.list(metadataDir).some((n) => n !== bootstrap && !n.endsWith('.tmp'));
}

/**
 * Formats the node's log directory for `config`: meta.properties with `clusterId`, and the
 * bootstrap files. Returns the lines to print. Throws FormatError.
 */
export function formatStorage(o: FormatOptions): string[] {
  const { config, fs } = o;
  if (!isUuid(o.clusterId)) throw usage(`--cluster-id ${JSON.stringify(o.clusterId)}: not a Kafka UUID (22 base64url characters; \`logline storage random-uuid\` prints one)`);
  const dir = logDirOf(config);
  const roles = config.processRoles;
  const staticVoters = (config.get('controller.quorum.voters') as string[]).length > 0;
  // Without process.roles the node is its own quorum: nothing to discover, like a static one.
  const dynamic = roles.length > 0 && !staticVoters;
  const quorum = o.quorum;
  if (!dynamic && (quorum?.kind === 'standalone' || quorum?.kind === 'initial-controllers')) {
    throw usage(roles.length === 0
      ? `--${quorum.kind} formats a dynamic quorum: it needs process.roles with controller and controller.quorum.bootstrap.servers (this node, without process.roles, is a quorum of its own)`
      : `You cannot specify controller.quorum.voters and format the node with --initial-controllers or --standalone. If you want to use dynamic quorum, please remove controller.quorum.voters and specify controller.quorum.bootstrap.servers instead.`);
  }
  if (dynamic && roles.includes('controller') && quorum === undefined) {
    throw usage('Because controller.quorum.voters is not set on this controller, you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers.');
  }
  const voters: (VoterAddress & { directoryId?: string })[] | undefined = quorum?.kind === 'standalone' ? [standaloneVoter(config)]
    : quorum?.kind === 'initial-controllers' ? parseInitialControllers(quorum.text) : undefined;
  const features = featureRecords(o, dynamic);
  const bootstrapRecords = [...features.records, ...o.scramRecords ?? []];

  let existing: MetaProperties | null;
  try {
    existing = readMetaProperties(fs, dir);
  } catch (e) {
    throw new FormatError(`I/O error trying to read log directory ${dir}: ${(e as Error).message}`, false);
  }
  if (existing !== null) {
    const path = nodePath.join(dir, META_PROPERTIES);
    if (existing.clusterId !== o.clusterId) throw new FormatError(`Invalid cluster.id in: ${path}. Expected ${o.clusterId}, but read ${existing.clusterId}`, false);
    if (existing.nodeId !== config.nodeId) throw new FormatError(`Stored node id ${existing.nodeId} doesn't match previous node id ${config.nodeId} in ${path}. If you moved your data, make sure your configured node id matches. If you intend to create a new node, you should remove all data in your data directories.`, false);
    if (!o.ignoreFormatted) throw new FormatError(`Log directory ${dir} is already formatted. Use --ignore-formatted to ignore this directory and format the others.`, false);
    return ['All of the log directories are already formatted.'];
  }
  if (hasMetadataLog(fs, dir)) {
    throw new FormatError(`${dir} holds a metadata log (${METADATA_LOG_DIR_NAME}) but no ${META_PROPERTIES}: it is not a new directory; remove it to format it`, false);
  }
  const own = voters?.find((v) => v.nodeId === config.nodeId);
  const kind = voters === undefined ? 'metadata directory' : own !== undefined ? 'dynamic metadata voter directory' : 'dynamic metadata directory';
  fs.mkdirs(dir);
  if (bootstrapRecords.length > 0) writeBootstrapRecords(fs, dir, bootstrapRecords);
  if (voters !== undefined) writeBootstrapSnapshot(fs, nodePath.join(dir, METADATA_LOG_DIR_NAME), voters.map((v) => ({ id: v.nodeId, host: v.host, port: v.port })));
  // Last: a format cut short leaves no meta.properties, and formatting again finishes it.
  const directoryId = own?.directoryId ?? randomUuid();
  writeMetaProperties(fs, dir, { nodeId: config.nodeId, clusterId: o.clusterId, directoryId });
  return [`Formatting ${kind} ${dir} with ${METADATA_VERSION_FEATURE} ${metadataVersionName(features.metadataVersion)}.`];
}

function writeBootstrapRecords(fs: FileSystem, dir: string, records: readonly MetadataRecord[]): void {
  const batch = buildRecordBatchSync({ records: records.map((r) => ({ key: null, value: serializeMetadataRecord(r) })), baseTimestamp: -1 });
  fs.writeFileAtomic(nodePath.join(dir, BOOTSTRAP_CHECKPOINT), encodeSnapshotFile({ id: { endOffset: 0, epoch: 0 }, data: new Uint8Array(batch) }));
}

/** The records of the directory's bootstrap.checkpoint (none without one). */
export function readBootstrapRecords(fs: FileSystem, dir: string): MetadataRecord[] {
  const path = nodePath.join(dir, BOOTSTRAP_CHECKPOINT);
  if (!fs.exists(path)) return [];
  const data = decodeSnapshotFile({ endOffset: 0, epoch: 0 }, fs.readFile(path));
  const out: MetadataRecord[] = [];
  for (const batch of iterateBatches(Buffer.from(data.buffer, data.byteOffset, data.byteLength))) {
    for (const r of iterateRecords(batch, batch.bytes().subarray(61))) {
      if (r.value === null) throw new Error(`${path}: a record without a value`);
      out.push(deserializeMetadataRecord(r.value));
    }
  }
  return out;
}

/**
 * The metadata quorum's voters as this node's own metadata log last recorded them (its latest
 * snapshot: the bootstrap snapshot of a format, or a later one), with their endpoints; undefined
 * when it has none. A dynamic-quorum node starts from these, as Kafka's does, rather than from
 * controller.quorum.bootstrap.servers, which it needs only to find the quorum without them.
 */
export function storedVoters(fs: FileSystem, dir: string): VoterAddress[] | undefined {
  const set = latestSnapshotVoters(fs, nodePath.join(dir, METADATA_LOG_DIR_NAME));
  if (set === undefined || set.some((v) => v.host === undefined || v.port === undefined)) return undefined;
  return set.map((v) => ({ nodeId: v.id, host: v.host!, port: v.port! }));
}

/**
 * Why this node must not start on an unformatted directory, or null when it may format it itself:
 * a node that is its own quorum (no process.roles, or controller.quorum.voters naming only it) may;
 * a node of a quorum with other voters, or one that finds its quorum through
 * controller.quorum.bootstrap.servers, would make up a cluster id of its own that no other node
 * shares, and never join.
 */
export function unformattedRefusal(config: BrokerConfig, dir: string): string | null {
  if (config.processRoles.length === 0) return null;
  const voters = config.get('controller.quorum.voters') as string[];
  const others = voters.map((v) => Number(v.slice(0, v.indexOf('@')))).filter((id) => id !== config.nodeId);
  if (voters.length > 0 && others.length === 0) return null;
  const how = voters.length > 0
    ? `controller.quorum.voters names other nodes (${others.join(', ')}), and every node of a cluster must be formatted with the same cluster id`
    : 'it finds its metadata quorum through controller.quorum.bootstrap.servers, and every node of a cluster must be formatted with the same cluster id (a first controller with --standalone or --initial-controllers, the others with --initial-controllers or --no-initial-controllers)';
  return `no ${META_PROPERTIES} in ${dir} (have you run \`logline storage format\` to format the directory?): ${how}. `
    + 'Run `logline storage random-uuid` once, then `logline storage format --cluster-id ID` with each node\'s configuration before its first start.';
}

export interface StorageInfo {
  readonly directories: string[];
  readonly metadata: Record<string, string> | null;
  readonly problems: string[];
}

/** `logline storage info`: the log directory and its meta.properties, as Kafka's StorageTool info reports them. */
export function storageInfo(config: BrokerConfig, fs: FileSystem): StorageInfo {
  const dir = logDirOf(config);
  const problems: string[] = [];
  const directories: string[] = [];
  let metadata: Record<string, string> | null = null;
  if (!fs.exists(dir)) problems.push(`${dir} does not exist`);
  else if (!fs.isDirectory(dir)) problems.push(`${dir} is not a directory`);
  else {
    directories.push(dir);
    try {
      const meta = readMetaProperties(fs, dir);
      if (meta === null) problems.push(`${dir} is not formatted.`);
      else {
        metadata = { 'cluster.id': meta.clusterId, 'directory.id': meta.directoryId, 'node.id': String(meta.nodeId), version: '1' };
        if (meta.nodeId !== config.nodeId) problems.push(`${dir} belongs to node ${meta.nodeId}, but node.id is ${config.nodeId}`);
      }
    } catch (e) {
      problems.push(`Error loading ${nodePath.join(dir, META_PROPERTIES)}: ${(e as Error).message}`);
    }
  }
  return { directories, metadata, problems };
}
