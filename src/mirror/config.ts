// MirrorMaker 2's properties file (connect-mirror-maker.properties), parsed by a pure function into
// clusters and flows. Keys resolve as MirrorMakerConfig resolves them: `A->B.<key>` overrides the
// top-level `<key>` for the flow from A to B; `A.<client key>` (and `A.consumer.`, `A.producer.`,
// `A.admin.` forms) configure the client of cluster A, with top-level client keys as defaults for
// every cluster. Every key must be one this engine knows: a key it would silently ignore is refused
// naming the key (MirrorMaker 2 itself passes unknown keys through to its clients).
import { policyFromConfig, type ReplicationPolicy } from './policy.js';

export class MirrorConfigError extends Error {
  override name = 'MirrorConfigError';
  constructor(readonly key: string, message: string) { super(`${key}: ${message}`); }
}

export interface ClusterSettings {
  alias: string;
  bootstrapServers: string;
  /**
   * The client keys (security.protocol, sasl.*, ssl.*, client.id), cluster-level over top-level;
   * the caller turns them into TLS and SASL options (the CLI with its --command-config reader).
   */
  client: Map<string, string>;
  /** `<alias>.exactly.once.source.support` (Connect's worker key, for flows into this cluster). */
  exactlyOnceSourceSupport: boolean;
}

export interface TopicFilter { include: RegExp; exclude: RegExp }

export interface FlowSettings {
  source: string;
  target: string;
  /** `A->B.enabled`: records, offset syncs and checkpoints flow. Heartbeats are emitted for every pair (as MirrorMaker 2 does). */
  enabled: boolean;
  topics: TopicFilter;
  groups: TopicFilter;
  policy: ReplicationPolicy;
  replicationFactor: number;
  offsetSyncsTopicReplicationFactor: number;
  heartbeatsTopicReplicationFactor: number;
  checkpointsTopicReplicationFactor: number;
  /** Connect's offset.storage.replication.factor: the `mm2-offsets.<source>.internal` topic. */
  offsetStorageReplicationFactor: number;
  syncTopicConfigs: boolean;
  syncTopicConfigsIntervalMs: number;
  /** Config names never copied (config.properties.exclude). */
  configPropertiesExclude: RegExp;
  syncTopicAcls: boolean;
  syncTopicAclsIntervalMs: number;
  refreshTopics: boolean;
  refreshTopicsIntervalMs: number;
  refreshGroups: boolean;
  refreshGroupsIntervalMs: number;
  emitHeartbeats: boolean;
  emitHeartbeatsIntervalMs: number;
  emitCheckpoints: boolean;
  emitCheckpointsIntervalMs: number;
  syncGroupOffsets: boolean;
  syncGroupOffsetsIntervalMs: number;
  offsetSyncsTopicLocation: 'source' | 'target';
  offsetLagMax: number;
  exactlyOnce: boolean;
}

export interface MirrorConfig {
  clusters: Map<string, ClusterSettings>;
  /** Every ordered pair of clusters (enabled or not), as MirrorMakerConfig.clusterPairs. */
  flows: FlowSettings[];
}

type Kind = 'boolean' | 'int' | 'seconds' | 'list' | 'string';

/**
 * The flow keys this engine honours, with MirrorMaker 2's defaults (MirrorSourceConfig,
 * MirrorCheckpointConfig, MirrorHeartbeatConfig, MirrorConnectorConfig).
 */
const FLOW_KEYS: Record<string, { kind: Kind; default: string }> = {
  'enabled': { kind: 'boolean', default: 'false' },
  'topics': { kind: 'list', default: '.*' },
  'topics.exclude': { kind: 'list', default: '.*[\\-\\.]internal, .*\\.replica, __.*' },
  'groups': { kind: 'list', default: '.*' },
  'groups.exclude': { kind: 'list', default: 'console-consumer-.*, connect-.*, __.*' },
  'replication.policy.class': { kind: 'string', default: 'org.apache.kafka.connect.mirror.DefaultReplicationPolicy' },
  'replication.policy.separator': { kind: 'string', default: '.' },
  'replication.policy.internal.topic.separator.enabled': { kind: 'boolean', default: 'true' },
  'replication.factor': { kind: 'int', default: '2' },
  'offset-syncs.topic.replication.factor': { kind: 'int', default: '3' },
  'heartbeats.topic.replication.factor': { kind: 'int', default: '3' },
  'checkpoints.topic.replication.factor': { kind: 'int', default: '3' },
  'offset.storage.replication.factor': { kind: 'int', default: '3' },
  'sync.topic.configs.enabled': { kind: 'boolean', default: 'true' },
  'sync.topic.configs.interval.seconds': { kind: 'seconds', default: '600' },
  'config.properties.exclude': {
    kind: 'list',
    default: 'follower\\.replication\\.throttled\\.replicas, leader\\.replication\\.throttled\\.replicas, message\\.timestamp\\.difference\\.max\\.ms, message\\.timestamp\\.type, unclean\\.leader\\.election\\.enable, min\\.insync\\.replicas',
  },
  'sync.topic.acls.enabled': { kind: 'boolean', default: 'true' },
  'sync.topic.acls.interval.seconds': { kind: 'seconds', default: '600' },
  'refresh.topics.enabled': { kind: 'boolean', default: 'true' },
  'refresh.topics.interval.seconds': { kind: 'seconds', default: '600' },
  'refresh.groups.enabled': { kind: 'boolean', default: 'true' },
  'refresh.groups.interval.seconds': { kind: 'seconds', default: '600' },
  'emit.heartbeats.enabled': { kind: 'boolean', default: 'true' },
  'emit.heartbeats.interval.seconds': { kind: 'seconds', default: '1' },
  'emit.checkpoints.enabled': { kind: 'boolean', default: 'true' },
  'emit.checkpoints.interval.seconds': { kind: 'seconds', default: '60' },
  'sync.group.offsets.enabled': { kind: 'boolean', default: 'false' },
  'sync.group.offsets.interval.seconds': { kind: 'seconds', default: '60' },
  'offset-syncs.topic.location': { kind: 'string', default: 'source' },
  'offset.lag.max': { kind: 'int', default: '100' },
  'exactly.once.support': { kind: 'string', default: 'disabled' },
};

/**
 * Keys MirrorMaker 2 files carry that mean nothing to this engine (one task per flow, no Connect
 * worker): accepted so a real file loads, and listed in docs/mirroring.md.
 */
const ACCEPTED_NO_EFFECT = new Set([
  'tasks.max', 'dedicated.mode.enable.internal.rest', 'config.storage.replication.factor', 'status.storage.replication.factor',
  'key.converter', 'value.converter', 'header.converter', 'admin.timeout.ms', 'consumer.poll.timeout.ms',
]);

/** Client keys (Kafka's names; librdkafka's sasl.username/password and ssl.ca.location too). */
const CLIENT_KEYS = new Set([
  'bootstrap.servers', 'client.id', 'security.protocol', 'sasl.mechanism', 'sasl.jaas.config', 'sasl.username', 'sasl.password',
  'ssl.truststore.location', 'ssl.truststore.type', 'ssl.truststore.password', 'ssl.truststore.certificates', 'ssl.ca.location',
  'ssl.keystore.location', 'ssl.keystore.type', 'ssl.keystore.password', 'ssl.key.password', 'ssl.keystore.key',
  'ssl.keystore.certificate.chain', 'ssl.endpoint.identification.algorithm', 'ssl.enabled.protocols', 'ssl.cipher.suites',
]);

const FLOW_RE = /^([A-Za-z0-9_-]+)->([A-Za-z0-9_-]+)\.(.+)$/;

function parseBoolean(key: string, v: string): boolean {
  const t = v.trim().toLowerCase();
  if (t === 'true') return true;
  if (t === 'false') return false;
  throw new MirrorConfigError(key, `expected true or false, got "${v}"`);
}

function parseInt32(key: string, v: string): number {
  const t = v.trim();
  if (!/^-?\d+$/.test(t) || !Number.isSafeInteger(Number(t))) throw new MirrorConfigError(key, `expected an integer, got "${v}"`);
  return Number(t);
}

/** A comma-separated list of regular expressions, matched against whole names (Java's Pattern.matches). */
function parsePatterns(key: string, v: string): RegExp {
  const parts = v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (parts.length === 0) return /(?!)/; // an empty list matches nothing
  for (const p of parts) {
    try { new RegExp(p); } catch (e) { throw new MirrorConfigError(key, `"${p}" is not a regular expression: ${(e as Error).message}`); }
  }
  return new RegExp(`^(?:${parts.map((p) => `(?:${p})`).join('|')})$`);
}

/** What a `<cluster>.` key's rest may be: a client key, or one under consumer./producer./admin. */
function checkClusterKey(key: string, rest: string): void {
  if (CLIENT_KEYS.has(rest) || rest === 'exactly.once.source.support') return;
  const m = /^(consumer|producer|admin)\.(.+)$/.exec(rest);
  if (m && CLIENT_KEYS.has(m[2]!) && m[2] !== 'bootstrap.servers') return;
  throw new MirrorConfigError(key, 'unknown key (not a client setting this engine uses)');
}

/** Parses MirrorMaker 2's properties (already split into keys and values). */
export function parseMirrorConfig(props: ReadonlyMap<string, string>): MirrorConfig {
  const clustersText = props.get('clusters');
  if (clustersText === undefined) throw new MirrorConfigError('clusters', 'missing: name the clusters, e.g. clusters = A, B');
  const aliases = clustersText.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (aliases.length < 2) throw new MirrorConfigError('clusters', `needs at least two aliases, got "${clustersText}"`);
  for (const a of aliases) if (!/^[A-Za-z0-9_-]+$/.test(a)) throw new MirrorConfigError('clusters', `alias "${a}" may hold only letters, digits, _ and -`);
  if (new Set(aliases).size !== aliases.length) throw new MirrorConfigError('clusters', 'an alias is named twice');

  const top = new Map<string, string>();
  const flowOverrides = new Map<string, Map<string, string>>();
  const clusterProps = new Map<string, Map<string, string>>(aliases.map((a) => [a, new Map()]));
  for (const [key, value] of props) {
    if (key === 'clusters') continue;
    const flow = FLOW_RE.exec(key);
    if (flow) {
      const [, s, t, rest] = flow;
      if (!aliases.includes(s!) || !aliases.includes(t!)) throw new MirrorConfigError(key, `names a flow between clusters not in clusters (${aliases.join(', ')})`);
      if (s === t) throw new MirrorConfigError(key, 'a flow needs two different clusters');
      if (!(rest! in FLOW_KEYS) && !ACCEPTED_NO_EFFECT.has(rest!)) throw new MirrorConfigError(key, 'unknown key');
      const m = flowOverrides.get(`${s}->${t}`) ?? new Map<string, string>();
      m.set(rest!, value);
      flowOverrides.set(`${s}->${t}`, m);
      continue;
    }
    const alias = aliases.find((a) => key.startsWith(`${a}.`));
    if (alias !== undefined) {
      const rest = key.slice(alias.length + 1);
      checkClusterKey(key, rest);
      clusterProps.get(alias)!.set(rest, value);
      continue;
    }
    if (key in FLOW_KEYS && key !== 'enabled') { top.set(key, value); continue; }
    if (ACCEPTED_NO_EFFECT.has(key)) continue;
    if (CLIENT_KEYS.has(key) && key !== 'bootstrap.servers') { top.set(key, value); continue; }
    throw new MirrorConfigError(key, 'unknown key');
  }

  const clusters = new Map<string, ClusterSettings>();
  for (const alias of aliases) {
    const own = clusterProps.get(alias)!;
    const bootstrap = own.get('bootstrap.servers');
    if (bootstrap === undefined || bootstrap.trim() === '') throw new MirrorConfigError(`${alias}.bootstrap.servers`, 'missing');
    const client = new Map<string, string>();
    for (const [k, v] of top) if (CLIENT_KEYS.has(k)) client.set(k, v);
    for (const [k, v] of own) if (CLIENT_KEYS.has(k) && k !== 'bootstrap.servers') client.set(k, v);
    const eos = own.get('exactly.once.source.support') ?? 'disabled';
    if (!['enabled', 'preparing', 'disabled'].includes(eos)) throw new MirrorConfigError(`${alias}.exactly.once.source.support`, `expected enabled, preparing or disabled, got "${eos}"`);
    clusters.set(alias, { alias, bootstrapServers: bootstrap.trim(), client, exactlyOnceSourceSupport: eos === 'enabled' });
  }

  const flows: FlowSettings[] = [];
  for (const source of aliases) {
    for (const target of aliases) {
      if (source === target) continue;
      const own = flowOverrides.get(`${source}->${target}`) ?? new Map<string, string>();
      flows.push(flowSettings(source, target, (k) => own.get(k) ?? top.get(k), (k) => (own.has(k) ? `${source}->${target}.${k}` : k), clusters.get(target)!));
    }
  }
  return { clusters, flows };
}

function flowSettings(source: string, target: string, raw: (key: string) => string | undefined, nameOf: (key: string) => string, targetCluster: ClusterSettings): FlowSettings {
  const get = (k: string): string => raw(k) ?? FLOW_KEYS[k]!.default;
  const bool = (k: string) => parseBoolean(nameOf(k), get(k));
  const int = (k: string, min: number) => {
    const n = parseInt32(nameOf(k), get(k));
    if (n < min) throw new MirrorConfigError(nameOf(k), `must be at least ${min}`);
    return n;
  };
  const replicationFactor = (k: string) => {
    const n = parseInt32(nameOf(k), get(k));
    if (n < 1 && n !== -1) throw new MirrorConfigError(nameOf(k), 'must be at least 1, or -1 for the broker\'s default.replication.factor');
    return n;
  };
  const seconds = (k: string) => int(k, 1) * 1000;
  const location = get('offset-syncs.topic.location');
  if (location !== 'source' && location !== 'target') throw new MirrorConfigError(nameOf('offset-syncs.topic.location'), `expected source or target, got "${location}"`);
  const eos = get('exactly.once.support').trim().toLowerCase();
  if (!['enabled', 'required', 'requested', 'disabled'].includes(eos)) throw new MirrorConfigError(nameOf('exactly.once.support'), `expected enabled (or required, requested) or disabled, got "${eos}"`);
  let policy: ReplicationPolicy;
  try {
    policy = policyFromConfig(get('replication.policy.class'), get('replication.policy.separator'), bool('replication.policy.internal.topic.separator.enabled'));
  } catch (e) {
    throw new MirrorConfigError(nameOf('replication.policy.class'), (e as Error).message);
  }
  return {
    source, target, enabled: bool('enabled'),
    topics: { include: parsePatterns(nameOf('topics'), get('topics')), exclude: parsePatterns(nameOf('topics.exclude'), get('topics.exclude')) },
    groups: { include: parsePatterns(nameOf('groups'), get('groups')), exclude: parsePatterns(nameOf('groups.exclude'), get('groups.exclude')) },
    policy,
    replicationFactor: replicationFactor('replication.factor'),
    offsetSyncsTopicReplicationFactor: replicationFactor('offset-syncs.topic.replication.factor'),
    heartbeatsTopicReplicationFactor: replicationFactor('heartbeats.topic.replication.factor'),
    checkpointsTopicReplicationFactor: replicationFactor('checkpoints.topic.replication.factor'),
    offsetStorageReplicationFactor: replicationFactor('offset.storage.replication.factor'),
    syncTopicConfigs: bool('sync.topic.configs.enabled'), syncTopicConfigsIntervalMs: seconds('sync.topic.configs.interval.seconds'),
    configPropertiesExclude: parsePatterns(nameOf('config.properties.exclude'), get('config.properties.exclude')),
    syncTopicAcls: bool('sync.topic.acls.enabled'), syncTopicAclsIntervalMs: seconds('sync.topic.acls.interval.seconds'),
    refreshTopics: bool('refresh.topics.enabled'), refreshTopicsIntervalMs: seconds('refresh.topics.interval.seconds'),
    refreshGroups: bool('refresh.groups.enabled'), refreshGroupsIntervalMs: seconds('refresh.groups.interval.seconds'),
    emitHeartbeats: bool('emit.heartbeats.enabled'), emitHeartbeatsIntervalMs: seconds('emit.heartbeats.interval.seconds'),
    emitCheckpoints: bool('emit.checkpoints.enabled'), emitCheckpointsIntervalMs: seconds('emit.checkpoints.interval.seconds'),
    syncGroupOffsets: bool('sync.group.offsets.enabled'), syncGroupOffsetsIntervalMs: seconds('sync.group.offsets.interval.seconds'),
    offsetSyncsTopicLocation: location,
    offsetLagMax: int('offset.lag.max', 0),
    exactlyOnce: eos !== 'disabled' || targetCluster.exactlyOnceSourceSupport,
  };
}

/** Whether a topic passes a flow's include and exclude patterns. */
export function matches(filter: TopicFilter, name: string): boolean {
  return filter.include.test(name) && !filter.exclude.test(name);
}
