// The table: every configuration key Logline knows, with Kafka 4.x's (4.2.0's) name, type, default and
// validator. Topic keys (Kafka's LogConfig) and broker keys (KafkaConfig) are two namespaces, as in
// Kafka; a topic key names the broker key that supplies its default. Docs are our own words.
import type { ConfigKeyDef, ConfigType, DynamicMode, Importance, Validator } from './types.js';

interface KeyOptions {
  readonly validator?: Validator;
  readonly importance?: Importance;
  readonly dynamic?: DynamicMode;
  readonly brokerSynonym?: string;
  readonly unused?: boolean;
}

function key<T extends ConfigType>(name: string, type: T, dflt: null, doc: string, o?: KeyOptions): ConfigKeyDef<T, true>;
function key<T extends ConfigType>(name: string, type: T, dflt: string, doc: string, o?: KeyOptions): ConfigKeyDef<T, false>;
function key<T extends ConfigType>(name: string, type: T, dflt: string | null, doc: string, o: KeyOptions = {}): ConfigKeyDef<T> {
  return Object.freeze({
    name, type, defaultValue: dflt as never, doc,
    validator: o.validator, importance: o.importance ?? 'medium', dynamic: o.dynamic ?? 'read-only',
    ...(o.brokerSynonym !== undefined ? { brokerSynonym: o.brokerSynonym } : {}),
    ...(o.unused === true ? { unused: true } : {}),
  });
}

const atLeast = (min: number): Validator => ({ kind: 'atLeast', min });
const between = (min: number, max: number): Validator => ({ kind: 'between', min, max });
const oneOf = (...values: string[]): Validator => ({ kind: 'in', values });
const validList = (...values: string[]): Validator => ({ kind: 'validList', values });

export const LONG_MAX = '9223372036854775807';
export const INT_MAX = '2147483647';
const DOUBLE_MAX = '1.7976931348623157E308';
export const COMPRESSION_TYPES = ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'] as const;
const BROKER_COMPRESSION = oneOf(...COMPRESSION_TYPES);
const GZIP_LEVEL: Validator = { kind: 'custom', rule: 'Value must be -1 or between 1 and 9', check: (v) => v === -1 || ((v as number) >= 1 && (v as number) <= 9) };
const TIMESTAMP_TYPES = oneOf('CreateTime', 'LogAppendTime');
const SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];
const THROTTLED_REPLICAS: Validator = {
  kind: 'custom', rule: 'Value must be "*" or a list of partition:brokerId pairs',
  check: (v) => { const l = v as string[]; return (l.length === 1 && l[0] === '*') || l.every((x) => /^\d+:\d+$/.test(x)); },
};
const CW: KeyOptions = { dynamic: 'cluster-wide' };
/** Kafka's ValidList.anyNonDuplicateValues(false, false): at least one entry, none twice. */
const NON_EMPTY_UNIQUE_LIST: Validator = {
  kind: 'custom', rule: 'Value must be a non-empty list without duplicates',
  check: (v) => { const l = v as string[]; return l.length > 0 && new Set(l).size === l.length; },
};
/** config.providers: Logline has no config providers (they are Java classes), so only an empty list. */
const CONFIG_PROVIDERS: Validator = {
  kind: 'custom', rule: 'Logline cannot load Java classes, so it has no config providers; only an empty value is accepted',
  check: (v) => v === null || (v as string[]).every((x) => x.trim() === ''),
};
const PER_IP_OVERRIDES: Validator = {
  kind: 'custom', rule: 'Value must be a list of host:count pairs, count at least 0',
  check: (v) => { try { parseConnectionsPerIpOverrides(v as string); return true; } catch { return false; } },
};

/**
 * max.connections.per.ip.overrides ("host:count,..."; the count after the last colon, so an IPv6
 * address needs no brackets) as host -> count. Throws on a malformed entry.
 */
export function parseConnectionsPerIpOverrides(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of text.split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const at = entry.lastIndexOf(':');
    const host = entry.slice(0, at).trim().replace(/^\[(.*)\]$/, '$1');
    const count = entry.slice(at + 1).trim();
    if (at <= 0 || host === '' || !/^\d+$/.test(count) || Number(count) > 2_147_483_647) throw new Error(`invalid max.connections.per.ip.overrides entry "${entry}"`);
    out.set(host.toLowerCase(), Number(count));
  }
  return out;
}
/** The replica selectors Logline has (src/replication/replica-selector.ts), by Kafka's class names. */
const REPLICA_SELECTOR_CLASSES = ['org.apache.kafka.common.replica.RackAwareReplicaSelector', 'org.apache.kafka.common.replica.LeaderSelector'];
const REPLICA_SELECTORS: Validator = {
  kind: 'custom', rule: `Value must be one of ${REPLICA_SELECTOR_CLASSES.join(', ')}`,
  check: (v) => v === '' || REPLICA_SELECTOR_CLASSES.includes(v as string),
};

/**
 * A Java plugin class key: Logline cannot load classes, so only unset, empty or Kafka's default
 * (`allowed`, the built-in behaviour Logline has) is accepted.
 */
function javaClass(...allowed: string[]): Validator {
  const ok = (x: string): boolean => x === '' || allowed.includes(x);
  return {
    kind: 'custom', rule: `Logline cannot load Java classes; only ${allowed.length === 0 ? 'an empty value' : `${allowed.join(', ')} or an empty value`} is accepted`,
    check: (v) => v === null || (Array.isArray(v) ? v.every((x) => ok(String(x))) : ok(String(v).trim())),
  };
}

/**
 * remote.log.storage.manager.class.name values Kafka users write, all mapped to Logline's own
 * manager (src/tiered): Kafka's local-directory test store and Aiven's S3 plugin.
 */
export const REMOTE_STORAGE_MANAGER_CLASSES = ['org.apache.kafka.server.log.remote.storage.LocalTieredStorage', 'io.aiven.kafka.tieredstorage.RemoteStorageManager'] as const;
const REMOTE_STORAGE_MANAGERS: Validator = {
  kind: 'custom', rule: `Value must be one of ${REMOTE_STORAGE_MANAGER_CLASSES.join(', ')}, or empty (unset)`,
  // Empty is unset, as Kafka's null default: tiering then refuses to start, naming the key (src/tiered).
  check: (v) => v === null || v === '' || (REMOTE_STORAGE_MANAGER_CLASSES as readonly string[]).includes(v as string),
};
export const TOPIC_BASED_RLMM = 'org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager';
const REMOTE_LOG_METADATA_MANAGERS: Validator = { kind: 'custom', rule: `Value must be ${TOPIC_BASED_RLMM}`, check: (v) => v === TOPIC_BASED_RLMM };

/** Confluent's subject name strategies (full class names), for broker-side schema validation. */
const STRATEGY_PACKAGE = 'io.confluent.kafka.serializers.subject.';
const TOPIC_NAME_STRATEGY = `${STRATEGY_PACKAGE}TopicNameStrategy`;
const SUBJECT_NAME_STRATEGY = oneOf(TOPIC_NAME_STRATEGY, `${STRATEGY_PACKAGE}RecordNameStrategy`, `${STRATEGY_PACKAGE}TopicRecordNameStrategy`);

/** Topic-level keys (Kafka's TopicConfig / LogConfig, and Confluent Server's schema validation), all of them settable per topic. */
export const TOPIC_KEYS = {
  'cleanup.policy': key('cleanup.policy', 'list', 'delete', 'delete: drop old segments; compact: keep the latest record per key; or both.', { validator: validList('compact', 'delete'), brokerSynonym: 'log.cleanup.policy' }),
  'compression.type': key('compression.type', 'string', 'producer', 'Codec batches are stored with; producer keeps what the client sent.', { validator: BROKER_COMPRESSION, brokerSynonym: 'compression.type' }),
  'compression.gzip.level': key('compression.gzip.level', 'int', '-1', 'Gzip level when the topic recompresses with gzip.', { validator: GZIP_LEVEL, brokerSynonym: 'compression.gzip.level' }),
  'compression.lz4.level': key('compression.lz4.level', 'int', '9', 'LZ4 level when the topic recompresses with lz4.', { validator: between(1, 17), brokerSynonym: 'compression.lz4.level' }),
  'compression.zstd.level': key('compression.zstd.level', 'int', '3', 'Zstd level when the topic recompresses with zstd.', { validator: between(-131072, 22), brokerSynonym: 'compression.zstd.level' }),
  'delete.retention.ms': key('delete.retention.ms', 'long', '86400000', 'How long tombstones survive compaction.', { validator: atLeast(0), brokerSynonym: 'log.cleaner.delete.retention.ms' }),
  'file.delete.delay.ms': key('file.delete.delay.ms', 'long', '60000', 'Wait before a deleted segment file is removed from disk.', { validator: atLeast(0), brokerSynonym: 'log.segment.delete.delay.ms' }),
  'flush.messages': key('flush.messages', 'long', LONG_MAX, 'Force an fsync after this many messages.', { validator: atLeast(1), brokerSynonym: 'log.flush.interval.messages' }),
  'flush.ms': key('flush.ms', 'long', LONG_MAX, 'Force an fsync after this much time.', { validator: atLeast(0), brokerSynonym: 'log.flush.interval.ms' }),
  'follower.replication.throttled.replicas': key('follower.replication.throttled.replicas', 'list', '', 'Replicas (partition:broker, or *) whose copy to a follower outside the ISR counts against that broker\'s follower.replication.throttled.rate.', { validator: THROTTLED_REPLICAS }),
  'index.interval.bytes': key('index.interval.bytes', 'int', '4096', 'Bytes between offset index entries.', { validator: atLeast(0), brokerSynonym: 'log.index.interval.bytes' }),
  'leader.replication.throttled.replicas': key('leader.replication.throttled.replicas', 'list', '', 'Replicas (partition:broker, or *) whose copy from the leader to a follower outside the ISR counts against that broker\'s leader.replication.throttled.rate.', { validator: THROTTLED_REPLICAS }),
  'local.retention.bytes': key('local.retention.bytes', 'long', '-2', 'Bytes of a tiered topic\'s partition kept on local disk once copied to remote storage; -2 means retention.bytes.', { validator: atLeast(-2), brokerSynonym: 'log.local.retention.bytes' }),
  'local.retention.ms': key('local.retention.ms', 'long', '-2', 'How long a tiered topic\'s segments stay on local disk once copied to remote storage; -2 means retention.ms.', { validator: atLeast(-2), brokerSynonym: 'log.local.retention.ms' }),
  'max.compaction.lag.ms': key('max.compaction.lag.ms', 'long', LONG_MAX, 'Longest a record may stay uncompacted.', { validator: atLeast(1), brokerSynonym: 'log.cleaner.max.compaction.lag.ms' }),
  'max.message.bytes': key('max.message.bytes', 'int', '1048588', 'Largest record batch the topic accepts.', { validator: atLeast(0), brokerSynonym: 'message.max.bytes' }),
  'message.timestamp.after.max.ms': key('message.timestamp.after.max.ms', 'long', '3600000', 'How far in the future a CreateTime timestamp may be.', { validator: atLeast(0), brokerSynonym: 'log.message.timestamp.after.max.ms' }),
  'message.timestamp.before.max.ms': key('message.timestamp.before.max.ms', 'long', LONG_MAX, 'How far in the past a CreateTime timestamp may be.', { validator: atLeast(0), brokerSynonym: 'log.message.timestamp.before.max.ms' }),
  'message.timestamp.type': key('message.timestamp.type', 'string', 'CreateTime', 'Keep the producer timestamp or stamp the append time.', { validator: TIMESTAMP_TYPES, brokerSynonym: 'log.message.timestamp.type' }),
  'min.cleanable.dirty.ratio': key('min.cleanable.dirty.ratio', 'double', '0.5', 'Dirty share of the log that triggers compaction.', { validator: between(0, 1), brokerSynonym: 'log.cleaner.min.cleanable.ratio' }),
  'min.compaction.lag.ms': key('min.compaction.lag.ms', 'long', '0', 'Youngest a record may be and still be compacted.', { validator: atLeast(0), brokerSynonym: 'log.cleaner.min.compaction.lag.ms' }),
  'link.epoch.base': key('link.epoch.base', 'int', '0', 'Logline\'s promoted mirror topics (issue 35): added to this cluster\'s leader epochs where its leaders write them into batches and the leader-epoch cache, so they stay above the source cluster\'s epochs the topic holds. Set by `logline link promote` (the highest epoch in the mirror + 1).', { validator: atLeast(0) }),
  'link.name': key('link.name', 'string', '', 'Logline\'s mirror topics (issue 35): the cluster link this topic mirrors from the source cluster, at the same offsets; a mirror topic refuses produce. Empty: an ordinary topic. Set by `logline link mirror`, cleared by `logline link promote`.'),
  'min.insync.replicas': key('min.insync.replicas', 'int', '1', 'Smallest ISR that may acknowledge an acks=all write.', { validator: atLeast(1), importance: 'high', brokerSynonym: 'min.insync.replicas' }),
  'preallocate': key('preallocate', 'boolean', 'false', 'Preallocate segment files on creation.', { brokerSynonym: 'log.preallocate' }),
  'remote.log.copy.disable': key('remote.log.copy.disable', 'boolean', 'false', 'Stop copying segments to remote storage; what is there stays readable and expires (KIP-950).'),
  'remote.log.delete.on.disable': key('remote.log.delete.on.disable', 'boolean', 'false', 'Delete the remote data when remote.storage.enable is turned off; required to turn it off (KIP-950).'),
  'remote.storage.enable': key('remote.storage.enable', 'boolean', 'false', 'Copy rolled segments to remote storage (KIP-405); needs remote.log.storage.system.enable on the brokers; not for compacted topics.'),
  'retention.bytes': key('retention.bytes', 'long', '-1', 'Largest a partition may grow before old segments go; -1 is unlimited.', { importance: 'high', brokerSynonym: 'log.retention.bytes' }),
  'retention.ms': key('retention.ms', 'long', '604800000', 'Age after which closed segments are deleted; -1 keeps them forever.', { validator: atLeast(-1), importance: 'high', brokerSynonym: 'log.retention.ms' }),
  'segment.bytes': key('segment.bytes', 'int', '1073741824', 'Size at which a segment rolls.', { validator: atLeast(1024 * 1024), importance: 'high', brokerSynonym: 'log.segment.bytes' }),
  'segment.index.bytes': key('segment.index.bytes', 'int', '10485760', 'Size of each offset index file.', { validator: atLeast(4), brokerSynonym: 'log.index.size.max.bytes' }),
  'segment.jitter.ms': key('segment.jitter.ms', 'long', '0', 'Random jitter subtracted from segment.ms.', { validator: atLeast(0), brokerSynonym: 'log.roll.jitter.ms' }),
  'segment.ms': key('segment.ms', 'long', '604800000', 'Age at which a segment rolls even if not full.', { validator: atLeast(1), brokerSynonym: 'log.roll.ms' }),
  'unclean.leader.election.enable': key('unclean.leader.election.enable', 'boolean', 'false', 'Allow an out-of-sync replica to become leader (may lose data).', { brokerSynonym: 'unclean.leader.election.enable' }),
  // Confluent Server's broker-side schema ID validation, under its names: the node's own schema
  // registry answers (Confluent's confluent.schema.registry.url has no counterpart).
  'confluent.key.schema.validation': key('confluent.key.schema.validation', 'boolean', 'false', 'Refuse records whose key does not start with the magic byte 0 and a schema id registered under the key subject (the schema registry on the leader\'s node answers); null keys pass.'),
  'confluent.key.subject.name.strategy': key('confluent.key.subject.name.strategy', 'string', TOPIC_NAME_STRATEGY, 'How confluent.key.schema.validation names the subject: TopicNameStrategy (<topic>-key), RecordNameStrategy (the schema\'s record name) or TopicRecordNameStrategy (<topic>-<record name>).', { validator: SUBJECT_NAME_STRATEGY }),
  'confluent.value.schema.validation': key('confluent.value.schema.validation', 'boolean', 'false', 'Refuse records whose value does not start with the magic byte 0 and a schema id registered under the value subject (the schema registry on the leader\'s node answers); null values (tombstones) pass.'),
  'errors.deadletterqueue.group.enable': key('errors.deadletterqueue.group.enable', 'boolean', 'false', 'Whether share groups may write dead letters to this topic (KIP-1191): a group\'s errors.deadletterqueue.topic.name is written to only when its topic opts in, so a group cannot make the broker write onto a topic its administrator did not allow.'),
  'confluent.value.subject.name.strategy': key('confluent.value.subject.name.strategy', 'string', TOPIC_NAME_STRATEGY, 'How confluent.value.schema.validation names the subject: TopicNameStrategy (<topic>-value), RecordNameStrategy (the schema\'s record name) or TopicRecordNameStrategy (<topic>-<record name>).', { validator: SUBJECT_NAME_STRATEGY }),
} as const;
export type TopicConfigName = keyof typeof TOPIC_KEYS;

/** Broker keys (Kafka's KafkaConfig), including the log.* defaults topics inherit. */
export const BROKER_KEYS = {
  // Roles, identity and the quorum.
  'process.roles': key('process.roles', 'list', '', 'Roles of this process: broker, controller, or both.', { validator: validList('broker', 'controller'), importance: 'high' }),
  'node.id': key('node.id', 'int', '-1', 'Id of this node in the cluster; required when process.roles is set.', { importance: 'high' }),
  'broker.id': key('broker.id', 'int', '-1', 'Legacy name of node.id; must match it when both are set.', { importance: 'high' }),
  // Logline's own (Kafka has no HTTP listener): health, the admin JSON API and /metrics.
  'http.listener': key('http.listener', 'string', '127.0.0.1:9644', 'host:port of the HTTP listener (health, /v1 admin API, /metrics); empty: none. Port 0 picks a free port.', { importance: 'medium' }),
  // Mutations through the HTTP admin API (create/delete topics, alter configs, produce) need these
  // as HTTP Basic credentials unless the listener is bound to a loopback address.
  // Logline's own: the schema registry's REST listener (Confluent's API), on every broker.
  'schema.registry.listener': key('schema.registry.listener', 'string', '127.0.0.1:8081', 'host:port of the schema registry\'s REST listener (the Confluent Schema Registry API, schemas stored in _schemas); empty: none. Port 0 picks a free port.', { importance: 'medium' }),
  // Logline's own: MirrorMaker 2's engine inside the node (issue 35), reading MM2's properties file.
  'mirror.enable': key('mirror.enable', 'boolean', 'false', 'Run the MirrorMaker 2 engine in this node, with the flows of mirror.config.file (what `logline mirror --config` runs as its own process).', { importance: 'medium' }),
  'mirror.config.file': key('mirror.config.file', 'string', null, 'MirrorMaker 2\'s properties file (clusters, A.bootstrap.servers, A->B.enabled, ...) for mirror.enable.', { importance: 'medium' }),
  'http.admin.username': key('http.admin.username', 'string', null, 'User name the HTTP admin API accepts (HTTP Basic) for mutations when http.listener is not a loopback address; unset: mutations only on loopback.', { importance: 'medium' }),
  'http.admin.password': key('http.admin.password', 'password', null, 'Password for http.admin.username.', { importance: 'medium' }),
  // Logline's own (Kafka sets levels in log4j): the level of the server's log lines.
  'log.level': key('log.level', 'string', 'INFO', 'Least severe level logged: ERROR, WARN, INFO, DEBUG or TRACE.', { validator: oneOf('ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE') }),
  'broker.rack': key('broker.rack', 'string', null, 'Rack of this broker, for rack-aware placement and fetch-from-follower.'),
  'broker.session.timeout.ms': key('broker.session.timeout.ms', 'int', '9000', 'A broker that has not heartbeated to the active controller for this long is fenced.', { validator: atLeast(1) }),
  'broker.heartbeat.interval.ms': key('broker.heartbeat.interval.ms', 'int', '2000', 'Time between a broker\'s heartbeats to the active controller.', { validator: atLeast(1) }),
  'controller.quorum.voters': key('controller.quorum.voters', 'list', '', 'Static voter set as id@host:port entries.', { importance: 'high' }),
  'controller.quorum.bootstrap.servers': key('controller.quorum.bootstrap.servers', 'list', '', 'host:port of controllers to discover a dynamic quorum from.', { importance: 'high' }),
  'controller.quorum.election.timeout.ms': key('controller.quorum.election.timeout.ms', 'int', '1000', 'Wait without a leader before starting an election.', { importance: 'high' }),
  'controller.quorum.fetch.timeout.ms': key('controller.quorum.fetch.timeout.ms', 'int', '2000', 'Wait without a successful fetch before suspecting the leader.', { importance: 'high' }),
  'controller.quorum.election.backoff.max.ms': key('controller.quorum.election.backoff.max.ms', 'int', '1000', 'Longest backoff before a new election.', { importance: 'high' }),
  'controller.quorum.append.linger.ms': key('controller.quorum.append.linger.ms', 'int', '25', 'Time the leader batches writes before flushing them.'),
  'controller.quorum.request.timeout.ms': key('controller.quorum.request.timeout.ms', 'int', '2000', 'Timeout of quorum requests.'),
  'controller.quorum.retry.backoff.ms': key('controller.quorum.retry.backoff.ms', 'int', '20', 'Backoff before retrying a failed quorum request.', { importance: 'low' }),
  'metadata.log.dir': key('metadata.log.dir', 'string', null, 'Directory of the metadata log; defaults to the first log directory.', { importance: 'high' }),
  'metadata.log.segment.bytes': key('metadata.log.segment.bytes', 'int', '1073741824', 'Segment size of the metadata log.', { validator: atLeast(8 * 1024 * 1024), importance: 'high' }),
  'metadata.max.retention.bytes': key('metadata.max.retention.bytes', 'long', '104857600', 'Metadata log bytes kept before old snapshots and segments go.', { importance: 'high' }),
  'metadata.max.retention.ms': key('metadata.max.retention.ms', 'long', '604800000', 'Metadata log age kept before old snapshots and segments go.', { importance: 'high' }),
  'metadata.log.max.record.bytes.between.snapshots': key('metadata.log.max.record.bytes.between.snapshots', 'long', '20971520', 'Bytes of new metadata records that trigger a snapshot.', { validator: atLeast(1), importance: 'high' }),

  // Listeners.
  'listeners': key('listeners', 'list', 'PLAINTEXT://:9092', 'name://host:port endpoints to listen on.', { importance: 'high', dynamic: 'per-broker' }),
  'advertised.listeners': key('advertised.listeners', 'list', null, 'Endpoints given to clients; defaults to listeners (without controller ones).', { importance: 'high', dynamic: 'per-broker' }),
  'listener.security.protocol.map': key('listener.security.protocol.map', 'string', 'PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL', 'Listener name to security protocol.', { importance: 'low', dynamic: 'per-broker' }),
  'controller.listener.names': key('controller.listener.names', 'string', null, 'Comma-separated listener names the controller serves.', { importance: 'high' }),
  'inter.broker.listener.name': key('inter.broker.listener.name', 'string', null, 'Listener brokers use between themselves.'),
  'security.inter.broker.protocol': key('security.inter.broker.protocol', 'string', 'PLAINTEXT', 'Protocol between brokers when no listener name is given.', { validator: oneOf(...SECURITY_PROTOCOLS) }),

  // Network and request limits.
  'socket.request.max.bytes': key('socket.request.max.bytes', 'int', '104857600', 'Largest request frame accepted.', { validator: atLeast(1), importance: 'high' }),
  'socket.send.buffer.bytes': key('socket.send.buffer.bytes', 'int', '102400', 'Accepted; Node sets no SO_SNDBUF on TCP sockets, the kernel sizes them.', { importance: 'high', unused: true }),
  'socket.receive.buffer.bytes': key('socket.receive.buffer.bytes', 'int', '102400', 'Accepted; Node sets no SO_RCVBUF on TCP sockets, the kernel sizes them.', { importance: 'high', unused: true }),
  'socket.listen.backlog.size': key('socket.listen.backlog.size', 'int', '50', 'Connections the kernel holds for a listener before they are accepted (listen(2) backlog); when not set, Node\'s 511 rather than Kafka\'s 50.', { validator: atLeast(1) }),
  'queued.max.requests': key('queued.max.requests', 'int', '500', 'Accepted; there is no request queue between threads here: each connection stops being read at 16 requests in flight.', { validator: atLeast(1), importance: 'high', unused: true }),
  'queued.max.request.bytes': key('queued.max.request.bytes', 'long', '-1', 'Accepted; request memory is bounded per connection here (socket.request.max.bytes, 16 requests in flight) and by the frame pool.', { unused: true }),
  'max.connections': key('max.connections', 'int', INT_MAX, 'Connections allowed on the broker.', { validator: atLeast(0), ...CW }),
  'max.connections.per.ip': key('max.connections.per.ip', 'int', INT_MAX, 'Connections allowed from one address.', { validator: atLeast(0), ...CW }),
  'max.connections.per.ip.overrides': key('max.connections.per.ip.overrides', 'string', '', 'Per-host or per-address limits in place of max.connections.per.ip: host:count,... (a host name counts for the addresses it resolves to).', { validator: PER_IP_OVERRIDES, ...CW }),
  'max.connection.creation.rate': key('max.connection.creation.rate', 'int', INT_MAX, 'New connections accepted per second on the broker (the inter-broker listener aside); faster ones wait (KIP-612).', { validator: atLeast(0), ...CW }),
  'connections.max.idle.ms': key('connections.max.idle.ms', 'long', '600000', 'Idle connections are closed after this long.'),
  'num.network.threads': key('num.network.threads', 'int', '3', 'Accepted; Logline serves the network from one event loop.', { validator: atLeast(1), importance: 'high', unused: true, ...CW }),
  'num.io.threads': key('num.io.threads', 'int', '8', 'Accepted; Logline does not use request handler threads.', { validator: atLeast(1), importance: 'high', unused: true, ...CW }),
  'background.threads': key('background.threads', 'int', '10', 'Accepted; background work shares the event loop.', { validator: atLeast(1), importance: 'high', unused: true, ...CW }),
  'num.replica.fetchers': key('num.replica.fetchers', 'int', '1', 'Fetcher sessions per source broker.', { importance: 'high', ...CW }),
  'num.recovery.threads.per.data.dir': key('num.recovery.threads.per.data.dir', 'int', '2', 'Accepted; recovery runs on the event loop.', { validator: atLeast(1), importance: 'high', unused: true, ...CW }),
  'fetch.max.bytes': key('fetch.max.bytes', 'int', '57671680', 'Most bytes returned by one fetch.', { validator: atLeast(1024) }),
  'max.incremental.fetch.session.cache.slots': key('max.incremental.fetch.session.cache.slots', 'int', '1000', 'Incremental fetch sessions kept.', { validator: atLeast(0) }),
  'fetch.purgatory.purge.interval.requests': key('fetch.purgatory.purge.interval.requests', 'int', '1000', 'Accepted; a completed fetch wait leaves the purgatory at once here, so there is nothing to purge.', { unused: true }),
  'producer.purgatory.purge.interval.requests': key('producer.purgatory.purge.interval.requests', 'int', '1000', 'Accepted; a completed produce wait leaves the purgatory at once here, so there is nothing to purge.', { unused: true }),

  // Topics.
  'num.partitions': key('num.partitions', 'int', '1', 'Partitions of an auto-created or unspecified topic.', { validator: atLeast(1) }),
  'default.replication.factor': key('default.replication.factor', 'int', '1', 'Replication factor of an auto-created or unspecified topic.'),
  'auto.create.topics.enable': key('auto.create.topics.enable', 'boolean', 'true', 'Create a topic when a client asks for metadata of one that does not exist.', { importance: 'high' }),
  'delete.topic.enable': key('delete.topic.enable', 'boolean', 'true', 'Allow DeleteTopics.', { importance: 'high' }),
  'message.max.bytes': key('message.max.bytes', 'int', '1048588', 'Largest record batch accepted, unless the topic overrides it.', { validator: atLeast(0), importance: 'high', ...CW }),
  'min.insync.replicas': key('min.insync.replicas', 'int', '1', 'Smallest ISR that may acknowledge an acks=all write.', { validator: atLeast(1), importance: 'high', ...CW }),
  'unclean.leader.election.enable': key('unclean.leader.election.enable', 'boolean', 'false', 'Allow an out-of-sync replica to become leader (may lose data).', { importance: 'high', ...CW }),
  'compression.type': key('compression.type', 'string', 'producer', 'Default codec of stored batches; producer keeps what the client sent.', { validator: BROKER_COMPRESSION, importance: 'high', ...CW }),
  'compression.gzip.level': key('compression.gzip.level', 'int', '-1', 'Gzip level used when recompressing.', { validator: GZIP_LEVEL, ...CW }),
  'compression.lz4.level': key('compression.lz4.level', 'int', '9', 'LZ4 level used when recompressing.', { validator: between(1, 17), ...CW }),
  'compression.zstd.level': key('compression.zstd.level', 'int', '3', 'Zstd level used when recompressing.', { validator: between(-131072, 22), ...CW }),

  // Replication.
  'replica.lag.time.max.ms': key('replica.lag.time.max.ms', 'long', '30000', 'A follower not caught up for this long leaves the ISR.', { importance: 'high' }),
  'replica.fetch.max.bytes': key('replica.fetch.max.bytes', 'int', '1048576', 'Bytes a follower asks for per partition.', { validator: atLeast(0) }),
  'replica.fetch.response.max.bytes': key('replica.fetch.response.max.bytes', 'int', '10485760', 'Bytes a follower asks for per fetch.', { validator: atLeast(0) }),
  'replica.fetch.wait.max.ms': key('replica.fetch.wait.max.ms', 'int', '500', 'Longest a follower fetch waits for data.'),
  'replica.fetch.min.bytes': key('replica.fetch.min.bytes', 'int', '1', 'Bytes a follower fetch waits for.'),
  'replica.fetch.backoff.ms': key('replica.fetch.backoff.ms', 'int', '1000', 'Pause after a failed follower fetch.', { validator: atLeast(0) }),
  'replica.socket.timeout.ms': key('replica.socket.timeout.ms', 'int', '30000', 'Timeout of follower fetch requests.'),
  'replica.high.watermark.checkpoint.interval.ms': key('replica.high.watermark.checkpoint.interval.ms', 'long', '5000', 'How often high watermarks are checkpointed (replication-offset-checkpoint): a replica restarted after a crash starts from this one (never from its log end, which may hold a suffix it wrote but never had committed) until its leader or followers move it. The other offset checkpoints are written with it.', { validator: atLeast(1) }),
  'replica.selector.class': key('replica.selector.class', 'class', null, 'Picks the replica a consumer reads from (KIP-392): org.apache.kafka.common.replica.RackAwareReplicaSelector (a replica in the consumer\'s client.rack) or org.apache.kafka.common.replica.LeaderSelector; unset, consumers read from leaders.', { validator: REPLICA_SELECTORS }),
  'leader.replication.throttled.rate': key('leader.replication.throttled.rate', 'long', LONG_MAX, 'Bytes/s a leader serves to followers of throttled replicas (leader.replication.throttled.replicas); set dynamically, as reassignments do.', { validator: atLeast(0), ...CW }),
  'follower.replication.throttled.rate': key('follower.replication.throttled.rate', 'long', LONG_MAX, 'Bytes/s a follower fetches for throttled replicas (follower.replication.throttled.replicas); set dynamically, as reassignments do.', { validator: atLeast(0), ...CW }),
  'quota.window.num': key('quota.window.num', 'int', '11', 'Samples a client quota (producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate) keeps to measure its rate.', { validator: atLeast(1) }),
  'quota.window.size.seconds': key('quota.window.size.seconds', 'int', '1', 'Length of each client quota sample.', { validator: atLeast(1) }),
  'replication.quota.window.num': key('replication.quota.window.num', 'int', '11', 'Samples a replication throttle keeps to measure its rate.', { validator: atLeast(1) }),
  'replication.quota.window.size.seconds': key('replication.quota.window.size.seconds', 'int', '1', 'Length of each replication throttle sample.', { validator: atLeast(1) }),
  'auto.leader.rebalance.enable': key('auto.leader.rebalance.enable', 'boolean', 'true', 'Move leadership back to preferred replicas.', { importance: 'high' }),
  'leader.imbalance.per.broker.percentage': key('leader.imbalance.per.broker.percentage', 'int', '10', 'Accepted, not used: as in Kafka\'s KRaft controller, any partition not led by its preferred replica is balanced.', { importance: 'high' }),
  'leader.imbalance.check.interval.seconds': key('leader.imbalance.check.interval.seconds', 'long', '300', 'How often leader imbalance is checked.', { validator: atLeast(1), importance: 'high' }),

  // Consumer offsets and groups.
  'offsets.topic.num.partitions': key('offsets.topic.num.partitions', 'int', '50', 'Partitions of __consumer_offsets.', { validator: atLeast(1), importance: 'high' }),
  'offsets.topic.replication.factor': key('offsets.topic.replication.factor', 'short', '3', 'Replication factor of __consumer_offsets.', { validator: atLeast(1), importance: 'high' }),
  'offsets.topic.segment.bytes': key('offsets.topic.segment.bytes', 'int', '104857600', 'Segment size of __consumer_offsets.', { validator: atLeast(1), importance: 'high' }),
  'offsets.retention.minutes': key('offsets.retention.minutes', 'int', '10080', 'Committed offsets of an empty group expire after this long.', { validator: atLeast(1), importance: 'high' }),
  'offsets.retention.check.interval.ms': key('offsets.retention.check.interval.ms', 'long', '600000', 'How often expired offsets are looked for.', { validator: atLeast(1), importance: 'high' }),
  'offsets.commit.timeout.ms': key('offsets.commit.timeout.ms', 'int', '5000', 'Longest an offset commit waits for replication.', { validator: atLeast(1), importance: 'high' }),
  'offsets.load.buffer.size': key('offsets.load.buffer.size', 'int', '5242880', 'Accepted; not used (a coordinator loading the offsets topic does not read it in buffers of a set size).', { validator: atLeast(1), importance: 'high', unused: true }),
  'group.initial.rebalance.delay.ms': key('group.initial.rebalance.delay.ms', 'int', '3000', 'Wait for more members before the first classic rebalance.'),
  'group.min.session.timeout.ms': key('group.min.session.timeout.ms', 'int', '6000', 'Shortest session timeout a classic member may ask for.'),
  'group.max.session.timeout.ms': key('group.max.session.timeout.ms', 'int', '1800000', 'Longest session timeout a classic member may ask for.'),
  'group.max.size': key('group.max.size', 'int', INT_MAX, 'Members allowed in a classic group.', { validator: atLeast(1) }),
  'group.coordinator.rebalance.protocols': key('group.coordinator.rebalance.protocols', 'list', 'classic,consumer', 'Enabled rebalance protocols.', { validator: validList('classic', 'consumer', 'share') }),
  'group.coordinator.threads': key('group.coordinator.threads', 'int', '4', 'Accepted; coordinators run on the event loop.', { validator: atLeast(1), unused: true }),
  'group.coordinator.append.linger.ms': key('group.coordinator.append.linger.ms', 'int', '10', 'Time coordinator writes are batched.', { validator: atLeast(0) }),
  'group.consumer.session.timeout.ms': key('group.consumer.session.timeout.ms', 'int', '45000', 'Session timeout of consumer-protocol members.', { validator: atLeast(1) }),
  'group.consumer.min.session.timeout.ms': key('group.consumer.min.session.timeout.ms', 'int', '45000', 'Shortest consumer-protocol session timeout (and the shortest consumer.session.timeout.ms a group may set).', { validator: atLeast(1) }),
  'group.consumer.max.session.timeout.ms': key('group.consumer.max.session.timeout.ms', 'int', '60000', 'Longest consumer-protocol session timeout (and the longest consumer.session.timeout.ms a group may set).', { validator: atLeast(1) }),
  'group.consumer.heartbeat.interval.ms': key('group.consumer.heartbeat.interval.ms', 'int', '5000', 'Heartbeat interval of consumer-protocol members.', { validator: atLeast(1) }),
  'group.consumer.min.heartbeat.interval.ms': key('group.consumer.min.heartbeat.interval.ms', 'int', '5000', 'Shortest consumer-protocol heartbeat interval (and the shortest consumer.heartbeat.interval.ms a group may set).', { validator: atLeast(1) }),
  'group.consumer.max.heartbeat.interval.ms': key('group.consumer.max.heartbeat.interval.ms', 'int', '15000', 'Longest consumer-protocol heartbeat interval (and the longest consumer.heartbeat.interval.ms a group may set).', { validator: atLeast(1) }),
  'group.consumer.max.size': key('group.consumer.max.size', 'int', INT_MAX, 'Members allowed in a consumer-protocol group.', { validator: atLeast(1) }),
  'group.consumer.assignors': key('group.consumer.assignors', 'list', 'org.apache.kafka.coordinator.group.assignor.UniformAssignor,org.apache.kafka.coordinator.group.assignor.RangeAssignor', 'Server-side assignors; the first is the default.'),
  'group.consumer.migration.policy': key('group.consumer.migration.policy', 'string', 'bidirectional', 'Whether groups convert between classic and consumer protocols.', { validator: { kind: 'in', values: ['disabled', 'downgrade', 'upgrade', 'bidirectional'], caseInsensitive: true } }),

  // Transactions and producer ids.
  'transaction.state.log.num.partitions': key('transaction.state.log.num.partitions', 'int', '50', 'Partitions of __transaction_state.', { validator: atLeast(1), importance: 'high' }),
  'transaction.state.log.replication.factor': key('transaction.state.log.replication.factor', 'short', '3', 'Replication factor of __transaction_state.', { validator: atLeast(1), importance: 'high' }),
  'transaction.state.log.segment.bytes': key('transaction.state.log.segment.bytes', 'int', '104857600', 'Segment size of __transaction_state.', { validator: atLeast(1), importance: 'high' }),
  'transaction.state.log.min.isr': key('transaction.state.log.min.isr', 'int', '2', 'min.insync.replicas of __transaction_state.', { validator: atLeast(1), importance: 'high' }),
  'transaction.state.log.load.buffer.size': key('transaction.state.log.load.buffer.size', 'int', '5242880', 'Accepted; not used (a coordinator loading the transaction state topic does not read it in buffers of a set size).', { validator: atLeast(1), importance: 'high', unused: true }),
  'transaction.max.timeout.ms': key('transaction.max.timeout.ms', 'int', '900000', 'Longest transaction timeout a producer may ask for.', { validator: atLeast(1), importance: 'high' }),
  'transactional.id.expiration.ms': key('transactional.id.expiration.ms', 'int', '604800000', 'Idle transactional ids expire after this long.', { validator: atLeast(1), importance: 'high' }),
  'transaction.abort.timed.out.transaction.cleanup.interval.ms': key('transaction.abort.timed.out.transaction.cleanup.interval.ms', 'int', '10000', 'How often timed-out transactions are aborted.', { validator: atLeast(1), importance: 'low' }),
  'transaction.remove.expired.transaction.cleanup.interval.ms': key('transaction.remove.expired.transaction.cleanup.interval.ms', 'int', '3600000', 'How often expired transactional ids are removed.', { validator: atLeast(1), importance: 'low' }),
  'producer.id.expiration.ms': key('producer.id.expiration.ms', 'int', '86400000', 'Idle idempotent producer state expires after this long.', { validator: atLeast(1), importance: 'low', ...CW }),
  'producer.id.expiration.check.interval.ms': key('producer.id.expiration.check.interval.ms', 'int', '600000', 'How often expired producer state is looked for.', { validator: atLeast(1), importance: 'low' }),

  // Log defaults that topics inherit, and the log manager.
  'log.dir': key('log.dir', 'string', '/tmp/kafka-logs', 'Log directory, used when log.dirs is not set.', { importance: 'high' }),
  'log.dirs': key('log.dirs', 'string', null, 'Comma-separated log directories.', { importance: 'high' }),
  'log.segment.bytes': key('log.segment.bytes', 'int', '1073741824', 'Default segment.bytes.', { validator: atLeast(14), importance: 'high', ...CW }),
  'log.roll.ms': key('log.roll.ms', 'long', null, 'Default segment.ms; log.roll.hours when unset.', { importance: 'high', ...CW }),
  'log.roll.hours': key('log.roll.hours', 'int', '168', 'Default segment.ms in hours.', { validator: atLeast(1), importance: 'high' }),
  'log.roll.jitter.ms': key('log.roll.jitter.ms', 'long', null, 'Default segment.jitter.ms; log.roll.jitter.hours when unset.', { importance: 'high', ...CW }),
  'log.roll.jitter.hours': key('log.roll.jitter.hours', 'int', '0', 'Default segment.jitter.ms in hours.', { validator: atLeast(0), importance: 'high' }),
  'log.retention.ms': key('log.retention.ms', 'long', null, 'Default retention.ms; minutes then hours when unset.', { importance: 'high', ...CW }),
  'log.retention.minutes': key('log.retention.minutes', 'int', null, 'Default retention.ms in minutes.', { importance: 'high' }),
  'log.retention.hours': key('log.retention.hours', 'int', '168', 'Default retention.ms in hours.', { importance: 'high' }),
  'log.retention.bytes': key('log.retention.bytes', 'long', '-1', 'Default retention.bytes.', { importance: 'high', ...CW }),
  'log.writeback.bytes': key('log.writeback.bytes', 'long', '1048576', 'Logline (not a Kafka property): a partition log with this many bytes appended since its last flush is fsynced in the background, one log at a time, so the page cache holds little unwritten data and the kernel\'s 30 s write-back bursts do not stall appends; 0: leave write-back to the OS, as Kafka does.', { validator: atLeast(0), importance: 'medium' }),
  'log.dir.min.free.bytes': key('log.dir.min.free.bytes', 'long', '1073741824', 'Logline (not a Kafka property; Redpanda\'s storage_min_free_bytes): when the volume of a log directory has fewer usable bytes than this, clients\' produce to its partitions is refused with NOT_ENOUGH_REPLICAS (retriable: every client retries it) and a message giving the reason while fetch, group commits, transaction markers, DeleteRecords, topic deletion and retention go on (the broker\'s followers of clients\' partitions pause, leaving the ISR); writes resume by themselves once space returns. Sampled with statfs every second and at once when the bytes admitted since cross it. 0: no floor (a full disk then takes the directory offline, as in Kafka).', { validator: atLeast(0), importance: 'high', ...CW }),
  'log.dir.free.bytes.alert.threshold': key('log.dir.free.bytes.alert.threshold', 'long', '5368709120', 'Logline (not a Kafka property): below this many usable bytes a log directory is reported low (metrics, logline doctor WARN, the console\'s banner) before it reaches log.dir.min.free.bytes; at or below the floor it adds nothing.', { validator: atLeast(0), importance: 'medium', ...CW }),
  'log.retention.check.interval.ms': key('log.retention.check.interval.ms', 'long', '300000', 'How often segments are checked for deletion.', { validator: atLeast(1) }),
  'log.cleanup.policy': key('log.cleanup.policy', 'list', 'delete', 'Default cleanup.policy.', { validator: validList('compact', 'delete'), ...CW }),
  'log.index.size.max.bytes': key('log.index.size.max.bytes', 'int', '10485760', 'Default segment.index.bytes.', { validator: atLeast(4), ...CW }),
  'log.index.interval.bytes': key('log.index.interval.bytes', 'int', '4096', 'Default index.interval.bytes.', { validator: atLeast(0), ...CW }),
  'log.flush.interval.messages': key('log.flush.interval.messages', 'long', LONG_MAX, 'Default flush.messages.', { validator: atLeast(1), importance: 'high', ...CW }),
  'log.flush.interval.ms': key('log.flush.interval.ms', 'long', null, 'Default flush.ms; log.flush.scheduler.interval.ms when unset.', { importance: 'high', ...CW }),
  'log.flush.scheduler.interval.ms': key('log.flush.scheduler.interval.ms', 'long', LONG_MAX, 'How often logs are checked for a time-based flush.', { importance: 'high' }),
  'log.flush.offset.checkpoint.interval.ms': key('log.flush.offset.checkpoint.interval.ms', 'int', '60000', 'How often recovery points, log start offsets and cleaner offsets are checkpointed; they are written together with the high watermarks, so at the shorter of this and replica.high.watermark.checkpoint.interval.ms.', { validator: atLeast(0), importance: 'high' }),
  'log.flush.start.offset.checkpoint.interval.ms': key('log.flush.start.offset.checkpoint.interval.ms', 'int', '60000', 'Accepted; log start offsets are checkpointed with the recovery points, every log.flush.offset.checkpoint.interval.ms.', { validator: atLeast(0), importance: 'high', unused: true }),
  'log.segment.delete.delay.ms': key('log.segment.delete.delay.ms', 'long', '60000', 'Default file.delete.delay.ms.', { validator: atLeast(0), ...CW }),
  'log.preallocate': key('log.preallocate', 'boolean', 'false', 'Default preallocate.', CW),
  'log.message.timestamp.type': key('log.message.timestamp.type', 'string', 'CreateTime', 'Default message.timestamp.type.', { validator: TIMESTAMP_TYPES, ...CW }),
  'log.message.timestamp.before.max.ms': key('log.message.timestamp.before.max.ms', 'long', LONG_MAX, 'Default message.timestamp.before.max.ms.', { validator: atLeast(0), ...CW }),
  'log.message.timestamp.after.max.ms': key('log.message.timestamp.after.max.ms', 'long', '3600000', 'Default message.timestamp.after.max.ms.', { validator: atLeast(0), ...CW }),
  'log.local.retention.ms': key('log.local.retention.ms', 'long', '-2', 'Default local.retention.ms (-2: the retention time).', { validator: atLeast(-2), ...CW }),
  'log.local.retention.bytes': key('log.local.retention.bytes', 'long', '-2', 'Default local.retention.bytes (-2: the retention size).', { validator: atLeast(-2), ...CW }),
  'log.initial.task.delay.ms': key('log.initial.task.delay.ms', 'long', '30000', 'Delay before the first retention and flush checks.', { validator: atLeast(0), importance: 'low' }),
  'remote.log.storage.system.enable': key('remote.log.storage.system.enable', 'boolean', 'false', 'Enable tiered storage on this broker.'),
  // Tiered storage (KIP-405). Accepted and checked, not yet acted on: src/tiered builds the backend
  // from them but the broker does not start it yet.
  'remote.log.storage.manager.class.name': key('remote.log.storage.manager.class.name', 'class', null, `RemoteStorageManager implementation: ${REMOTE_STORAGE_MANAGER_CLASSES.join(' (local directory) or ')} (S3 or a directory, by rsm.config.storage.backend.class).`, { validator: REMOTE_STORAGE_MANAGERS }),
  'remote.log.storage.manager.class.path': key('remote.log.storage.manager.class.path', 'string', null, 'Accepted and ignored: Logline has its remote storage managers built in.', { unused: true }),
  'remote.log.storage.manager.impl.prefix': key('remote.log.storage.manager.impl.prefix', 'string', 'rsm.config.', 'Prefix of the settings passed to the remote storage manager (e.g. rsm.config.storage.s3.bucket.name).', { validator: { kind: 'nonEmptyString' } }),
  'remote.log.metadata.manager.class.name': key('remote.log.metadata.manager.class.name', 'class', TOPIC_BASED_RLMM, 'RemoteLogMetadataManager implementation; only the topic-based one (__remote_log_metadata).', { validator: REMOTE_LOG_METADATA_MANAGERS }),
  'remote.log.metadata.manager.class.path': key('remote.log.metadata.manager.class.path', 'string', null, 'Accepted and ignored: the metadata manager is built in.', { unused: true }),
  'remote.log.metadata.manager.impl.prefix': key('remote.log.metadata.manager.impl.prefix', 'string', 'rlmm.config.', 'Prefix of the settings passed to the remote log metadata manager (e.g. rlmm.config.remote.log.metadata.topic.replication.factor).', { validator: { kind: 'nonEmptyString' } }),
  'remote.log.metadata.manager.listener.name': key('remote.log.metadata.manager.listener.name', 'string', null, 'Accepted, not used: the metadata manager reaches other brokers on the inter-broker listener.', { unused: true }),
  'remote.log.manager.task.interval.ms': key('remote.log.manager.task.interval.ms', 'long', '30000', 'How often each leader partition\'s copy and expiry tasks run.', { validator: atLeast(1), importance: 'low' }),
  'remote.log.manager.copy.max.bytes.per.second': key('remote.log.manager.copy.max.bytes.per.second', 'long', LONG_MAX, 'Bytes per second this broker may copy to remote storage.', { validator: atLeast(1), ...CW }),
  'remote.log.manager.fetch.max.bytes.per.second': key('remote.log.manager.fetch.max.bytes.per.second', 'long', LONG_MAX, 'Bytes per second this broker may read from remote storage.', { validator: atLeast(1), ...CW }),
  'remote.fetch.max.wait.ms': key('remote.fetch.max.wait.ms', 'int', '500', 'Longest a fetch waits for data read from remote storage.', { validator: atLeast(1), ...CW }),
  'remote.log.index.file.cache.total.size.bytes': key('remote.log.index.file.cache.total.size.bytes', 'long', '1073741824', 'Bytes of remote index files kept in the read cache.', { validator: atLeast(1), importance: 'low', ...CW }),

  // The log cleaner.
  'log.cleaner.enable': key('log.cleaner.enable', 'boolean', 'true', 'Run the log cleaner (needed for compacted topics).'),
  'log.cleaner.threads': key('log.cleaner.threads', 'int', '1', 'Cleaner workers.', { validator: atLeast(0), ...CW }),
  'log.cleaner.dedupe.buffer.size': key('log.cleaner.dedupe.buffer.size', 'long', '134217728', 'Memory for the cleaner key map.', CW),
  'log.cleaner.io.buffer.size': key('log.cleaner.io.buffer.size', 'int', '524288', 'Cleaner read and write buffer size.', { validator: atLeast(0), ...CW }),
  'log.cleaner.io.buffer.load.factor': key('log.cleaner.io.buffer.load.factor', 'double', '0.9', 'Fill factor of the key map.', CW),
  'log.cleaner.io.max.bytes.per.second': key('log.cleaner.io.max.bytes.per.second', 'double', DOUBLE_MAX, 'Cleaner I/O throttle.', CW),
  'log.cleaner.backoff.ms': key('log.cleaner.backoff.ms', 'long', '15000', 'Sleep when there is nothing to clean.', { validator: atLeast(0), ...CW }),
  'log.cleaner.min.cleanable.ratio': key('log.cleaner.min.cleanable.ratio', 'double', '0.5', 'Default min.cleanable.dirty.ratio.', { validator: between(0, 1), ...CW }),
  'log.cleaner.delete.retention.ms': key('log.cleaner.delete.retention.ms', 'long', '86400000', 'Default delete.retention.ms.', { validator: atLeast(0), ...CW }),
  'log.cleaner.min.compaction.lag.ms': key('log.cleaner.min.compaction.lag.ms', 'long', '0', 'Default min.compaction.lag.ms.', { validator: atLeast(0), ...CW }),
  'log.cleaner.max.compaction.lag.ms': key('log.cleaner.max.compaction.lag.ms', 'long', LONG_MAX, 'Default max.compaction.lag.ms.', { validator: atLeast(1), ...CW }),

  // Security. TLS listeners (src/security/); SASL comes later. Every ssl.* key may also be given per
  // listener as listener.name.<lower-case name>.ssl.* (listenerPrefixedKey).
  'sasl.enabled.mechanisms': key('sasl.enabled.mechanisms', 'list', 'GSSAPI', 'SASL mechanisms offered to clients.', { dynamic: 'per-broker' }),
  'sasl.mechanism.inter.broker.protocol': key('sasl.mechanism.inter.broker.protocol', 'string', 'GSSAPI', 'SASL mechanism between brokers.'),
  'sasl.mechanism.controller.protocol': key('sasl.mechanism.controller.protocol', 'string', 'GSSAPI', 'SASL mechanism towards controllers.'),
  'sasl.jaas.config': key('sasl.jaas.config', 'password', null, 'JAAS login module entry of a SASL listener (per mechanism: listener.name.<l>.<mechanism>.sasl.jaas.config): PlainLoginModule users (user_<name>="password"), and username/password for the broker\'s own connections.', { dynamic: 'per-broker' }),
  'connections.max.reauth.ms': key('connections.max.reauth.ms', 'long', '0', 'SASL sessions expire after this long and must re-authenticate (KIP-368); 0: never.', { validator: atLeast(0) }),
  'connection.failed.authentication.delay.ms': key('connection.failed.authentication.delay.ms', 'int', '100', 'A connection whose SASL authentication failed is closed after this delay.', { validator: atLeast(0) }),
  'ssl.keystore.location': key('ssl.keystore.location', 'string', null, 'Key store file.', { dynamic: 'per-broker' }),
  'ssl.keystore.password': key('ssl.keystore.password', 'password', null, 'Key store password.', { dynamic: 'per-broker' }),
  'ssl.key.password': key('ssl.key.password', 'password', null, 'Private key password.', { dynamic: 'per-broker' }),
  'ssl.truststore.location': key('ssl.truststore.location', 'string', null, 'Trust store file.', { dynamic: 'per-broker' }),
  'ssl.truststore.password': key('ssl.truststore.password', 'password', null, 'Trust store password.', { dynamic: 'per-broker' }),
  'ssl.client.auth': key('ssl.client.auth', 'string', 'none', 'Whether TLS clients must present a certificate.', { validator: oneOf('required', 'requested', 'none'), dynamic: 'per-broker' }),
  'ssl.keystore.type': key('ssl.keystore.type', 'string', 'JKS', 'Key store format: PEM or PKCS12 (JKS is Java\'s own and not read here).', { validator: oneOf('JKS', 'PKCS12', 'PEM'), dynamic: 'per-broker' }),
  'ssl.keystore.certificate.chain': key('ssl.keystore.certificate.chain', 'password', null, 'Inline PEM certificate chain (ssl.keystore.type=PEM).', { dynamic: 'per-broker' }),
  'ssl.keystore.key': key('ssl.keystore.key', 'password', null, 'Inline PEM private key (ssl.keystore.type=PEM); encrypted keys take ssl.key.password.', { dynamic: 'per-broker' }),
  'ssl.truststore.type': key('ssl.truststore.type', 'string', 'JKS', 'Trust store format: PEM or PKCS12.', { validator: oneOf('JKS', 'PKCS12', 'PEM'), dynamic: 'per-broker' }),
  'ssl.truststore.certificates': key('ssl.truststore.certificates', 'password', null, 'Inline PEM trusted certificates (ssl.truststore.type=PEM).', { dynamic: 'per-broker' }),
  'ssl.enabled.protocols': key('ssl.enabled.protocols', 'list', 'TLSv1.2,TLSv1.3', 'TLS versions accepted.', { validator: validList('TLSv1.2', 'TLSv1.3'), dynamic: 'per-broker' }),
  'ssl.protocol': key('ssl.protocol', 'string', 'TLSv1.3', 'TLS version of the context (the highest enabled one is used).', { dynamic: 'per-broker' }),
  'ssl.cipher.suites': key('ssl.cipher.suites', 'list', '', 'Cipher suites allowed (IANA or OpenSSL names); empty: the TLS library\'s defaults.', { dynamic: 'per-broker' }),
  'ssl.endpoint.identification.algorithm': key('ssl.endpoint.identification.algorithm', 'string', 'https', 'https: inter-broker and controller connections check the server certificate names the host; empty: they do not.', { dynamic: 'per-broker' }),
  'ssl.principal.mapping.rules': key('ssl.principal.mapping.rules', 'string', 'DEFAULT', 'Rules (RULE:pattern/replacement/[LU], DEFAULT) turning a client certificate\'s distinguished name into a user name.'),
  'authorizer.class.name': key('authorizer.class.name', 'string', '', 'org.apache.kafka.metadata.authorizer.StandardAuthorizer (or kafka.security.authorizer.AclAuthorizer) turns on ACLs; empty: everything is allowed.', { importance: 'low' }),
  'super.users': key('super.users', 'string', '', 'Principals allowed everything, semicolon-separated (User:alice;User:CN=broker,O=acme).', { importance: 'medium' }),
  'allow.everyone.if.no.acl.found': key('allow.everyone.if.no.acl.found', 'boolean', 'false', 'With an authorizer: a resource no ACL names may be used by everyone.', { importance: 'medium' }),
  // Kafka keys Logline accepts and does not use (unused: true). They tune features Logline does not
  // have, or Java machinery it has no counterpart for; setting them changes nothing, harmlessly.
  // See README "Which Kafka keys are used, accepted or refused".
  'controlled.shutdown.enable': key('controlled.shutdown.enable', 'boolean', 'true', 'Accepted, not used: a Logline broker always shuts down in a controlled way (it asks the controller to move its leaderships first).', { unused: true }),
  'early.start.listeners': key('early.start.listeners', 'list', null, 'Accepted, not used: every listener opens once the node has caught up with the metadata log.', { importance: 'high', unused: true }),
  'request.timeout.ms': key('request.timeout.ms', 'int', '30000', 'Accepted, not used: the broker\'s own requests to other nodes time out by replica.socket.timeout.ms and controller.quorum.request.timeout.ms.', { unused: true }),
  'socket.connection.setup.timeout.ms': key('socket.connection.setup.timeout.ms', 'long', '10000', 'Accepted, not used: the broker\'s connections to other nodes have no separate setup timeout.', { unused: true }),
  'socket.connection.setup.timeout.max.ms': key('socket.connection.setup.timeout.max.ms', 'long', '30000', 'Accepted, not used: see socket.connection.setup.timeout.ms.', { unused: true }),
  'max.request.partition.size.limit': key('max.request.partition.size.limit', 'int', '2000', 'Accepted, not used: DescribeTopicPartitions answers at most 2000 partitions (Kafka\'s default) whatever this says.', { validator: atLeast(1), importance: 'low', unused: true }),
  'num.replica.alter.log.dirs.threads': key('num.replica.alter.log.dirs.threads', 'int', null, 'Accepted, not used: Logline moves no replicas between log directories (AlterReplicaLogDirs).', { importance: 'high', unused: true }),
  'replica.alter.log.dirs.io.max.bytes.per.second': key('replica.alter.log.dirs.io.max.bytes.per.second', 'long', LONG_MAX, 'Accepted, not used: Logline moves no replicas between log directories.', { validator: atLeast(0), unused: true, ...CW }),
  'alter.log.dirs.replication.quota.window.num': key('alter.log.dirs.replication.quota.window.num', 'int', '11', 'Accepted, not used: Logline moves no replicas between log directories.', { validator: atLeast(1), importance: 'low', unused: true }),
  'alter.log.dirs.replication.quota.window.size.seconds': key('alter.log.dirs.replication.quota.window.size.seconds', 'int', '1', 'Accepted, not used: Logline moves no replicas between log directories.', { validator: atLeast(1), importance: 'low', unused: true }),
  'controller.quota.window.num': key('controller.quota.window.num', 'int', '11', 'Accepted, not used: controller_mutation_rate quotas are measured with quota.window.num samples.', { validator: atLeast(1), importance: 'low', unused: true }),
  'controller.quota.window.size.seconds': key('controller.quota.window.size.seconds', 'int', '1', 'Accepted, not used: controller_mutation_rate quotas are measured with quota.window.size.seconds samples.', { validator: atLeast(1), importance: 'low', unused: true }),
  'controller.socket.timeout.ms': key('controller.socket.timeout.ms', 'int', '30000', 'Accepted, not used: requests to the controller time out by controller.quorum.request.timeout.ms.', { unused: true }),
  'replica.socket.receive.buffer.bytes': key('replica.socket.receive.buffer.bytes', 'int', '65536', 'Accepted, not used: Node sets no SO_RCVBUF on TCP sockets, the kernel sizes them.', { unused: true }),
  'delete.records.purgatory.purge.interval.requests': key('delete.records.purgatory.purge.interval.requests', 'int', '1', 'Accepted, not used: a completed DeleteRecords wait leaves the purgatory at once here, so there is nothing to purge.', { importance: 'low', unused: true }),
  'log.dir.failure.timeout.ms': key('log.dir.failure.timeout.ms', 'long', '30000', 'Accepted, not used: a failed log directory goes offline at once; the broker keeps serving its other directories.', { validator: atLeast(1), importance: 'low', unused: true }),
  'inter.broker.protocol.version': key('inter.broker.protocol.version', 'string', '4.0-IV3', 'Accepted, not used: in KRaft mode the inter-broker protocol follows metadata.version (Kafka ignores this key too).', { unused: true }),
  'transaction.partition.verification.enable': key('transaction.partition.verification.enable', 'boolean', 'true', 'Accepted, not used: Logline has no switch for the transaction verification this key turns off.', { importance: 'low', unused: true, ...CW }),
  'transaction.two.phase.commit.enable': key('transaction.two.phase.commit.enable', 'boolean', 'false', 'Accepted, not used: Logline has no two-phase commit transactions (KIP-939): it serves InitProducerId up to v5, which cannot ask for them.', { importance: 'low', unused: true }),
  'add.partitions.to.txn.retry.backoff.ms': key('add.partitions.to.txn.retry.backoff.ms', 'int', '20', 'Accepted, not used: when a coordinator answers a partition leader\'s AddPartitionsToTxn (KIP-890) with a retriable error, Logline passes it to the producer to retry rather than retrying itself.', { validator: atLeast(1), importance: 'high', unused: true }),
  'add.partitions.to.txn.retry.backoff.max.ms': key('add.partitions.to.txn.retry.backoff.max.ms', 'int', '100', 'Accepted, not used: see add.partitions.to.txn.retry.backoff.ms.', { validator: atLeast(0), importance: 'high', unused: true }),
  'offset.metadata.max.bytes': key('offset.metadata.max.bytes', 'int', '4096', 'Accepted, not used: committed offset metadata is limited to Kafka\'s default 4096 bytes.', { importance: 'high', unused: true }),
  'offsets.topic.compression.codec': key('offsets.topic.compression.codec', 'int', '0', 'Accepted, not used: coordinator records are written uncompressed.', { importance: 'high', unused: true }),
  'eligible.leader.replicas.enable': key('eligible.leader.replicas.enable', 'boolean', 'false', 'Accepted, not used: as in Kafka 4.1, eligible leader replicas (KIP-966) follow the eligible.leader.replicas.version feature (level 1 in a new cluster; UpdateFeatures changes it).', { unused: true }),
  'initial.broker.registration.timeout.ms': key('initial.broker.registration.timeout.ms', 'int', '60000', 'Accepted, not used: a broker keeps trying to register until it is stopped.', { unused: true }),
  'controller.quorum.auto.join.enable': key('controller.quorum.auto.join.enable', 'boolean', 'false', 'Accepted, not used: a controller outside the voter set stays an observer until an AddRaftVoter request makes it a voter; it does not add itself (KIP-853 auto-join).', { importance: 'low', unused: true }),
  'remote.log.manager.follower.thread.pool.size': key('remote.log.manager.follower.thread.pool.size', 'int', '2', 'Accepted, not used: a thread pool for follower partitions\' tiered-storage tasks; Logline runs on one event loop.', { validator: atLeast(1), unused: true, ...CW }),
  'metadata.log.segment.ms': key('metadata.log.segment.ms', 'long', '604800000', 'Accepted, not used: metadata log segments roll by metadata.log.segment.bytes only.', { validator: atLeast(1), importance: 'low', unused: true }),
  'metadata.log.max.snapshot.interval.ms': key('metadata.log.max.snapshot.interval.ms', 'long', '3600000', 'Accepted, not used: metadata snapshots are taken by metadata.log.max.record.bytes.between.snapshots only.', { validator: atLeast(0), importance: 'high', unused: true }),
  'metadata.max.idle.interval.ms': key('metadata.max.idle.interval.ms', 'int', '500', 'Accepted, not used: the active controller appends no NoOpRecords when idle.', { validator: atLeast(0), importance: 'low', unused: true }),

  // Java plugin classes. Logline cannot load Java classes: each is accepted at Kafka's default (the
  // built-in behaviour, which Logline has) and refused with any other class, as pretending to run a
  // policy, principal builder or callback it never loads would mislead.
  'principal.builder.class': key('principal.builder.class', 'class', 'org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder', 'Accepted at Kafka\'s default only (Logline builds principals as the default builder does): Logline cannot load Java classes.', { validator: javaClass('org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder'), unused: true, dynamic: 'per-broker' }),
  'alter.config.policy.class.name': key('alter.config.policy.class.name', 'class', null, 'Accepted unset only: Logline cannot load Java classes, so it runs no AlterConfigs policy.', { validator: javaClass(), importance: 'low', unused: true }),
  'create.topic.policy.class.name': key('create.topic.policy.class.name', 'class', null, 'Accepted unset only: Logline cannot load Java classes, so it runs no CreateTopics policy.', { validator: javaClass(), importance: 'low', unused: true }),
  'client.quota.callback.class': key('client.quota.callback.class', 'class', null, 'Accepted unset only: Logline cannot load Java classes; client quotas come from the quota configs.', { validator: javaClass(), importance: 'low', unused: true }),
  'sasl.client.callback.handler.class': key('sasl.client.callback.handler.class', 'class', null, 'Accepted unset only: Logline cannot load Java classes.', { validator: javaClass(), unused: true }),
  'sasl.login.callback.handler.class': key('sasl.login.callback.handler.class', 'class', null, 'Accepted unset only: Logline cannot load Java classes.', { validator: javaClass(), unused: true }),
  'sasl.login.class': key('sasl.login.class', 'class', null, 'Accepted unset only: Logline cannot load Java classes.', { validator: javaClass(), unused: true }),
  'sasl.server.callback.handler.class': key('sasl.server.callback.handler.class', 'class', null, 'Accepted unset only: Logline cannot load Java classes; PLAIN and SCRAM credentials come from sasl.jaas.config and the metadata log.', { validator: javaClass(), unused: true }),
  'ssl.engine.factory.class': key('ssl.engine.factory.class', 'class', null, 'Accepted unset only: Logline cannot load Java classes; TLS is Node\'s.', { validator: javaClass(), importance: 'low', unused: true, dynamic: 'per-broker' }),
  'security.providers': key('security.providers', 'string', null, 'Accepted unset only: Logline cannot load Java security providers; TLS is Node\'s.', { validator: javaClass(), importance: 'low', unused: true }),
  'metric.reporters': key('metric.reporters', 'list', 'org.apache.kafka.common.metrics.JmxReporter', 'Accepted with Kafka\'s JmxReporter or empty only: Logline cannot load Java classes and has no JMX; its metrics are on the HTTP listener\'s /metrics.', { validator: javaClass('org.apache.kafka.common.metrics.JmxReporter'), importance: 'low', unused: true, ...CW }),
  'kafka.metrics.reporters': key('kafka.metrics.reporters', 'list', '', 'Accepted empty only: Logline cannot load Java classes; its metrics are on the HTTP listener\'s /metrics.', { validator: javaClass(), importance: 'low', unused: true }),
  'config.providers': key('config.providers', 'list', '', 'Accepted empty only: config providers are Java classes (config.providers.<name>.class), which Logline cannot load, so it resolves no ${provider:path:key} references.', { validator: CONFIG_PROVIDERS, importance: 'low', unused: true, ...CW }),

  // Metrics of Kafka's own registry; Logline's metrics are Prometheus counters and gauges.
  'kafka.metrics.polling.interval.secs': key('kafka.metrics.polling.interval.secs', 'int', '10', 'Accepted, not used: /metrics is read on demand.', { validator: atLeast(1), importance: 'low', unused: true }),
  'metrics.num.samples': key('metrics.num.samples', 'int', '2', 'Accepted, not used: /metrics reports counters and gauges, not sampled rates.', { validator: atLeast(1), importance: 'low', unused: true }),
  'metrics.sample.window.ms': key('metrics.sample.window.ms', 'long', '30000', 'Accepted, not used: /metrics reports counters and gauges, not sampled rates.', { validator: atLeast(1), importance: 'low', unused: true }),
  'metrics.recording.level': key('metrics.recording.level', 'string', 'INFO', 'Accepted, not used: /metrics always reports everything it has.', { validator: oneOf('INFO', 'DEBUG', 'TRACE'), importance: 'low', unused: true }),
  'telemetry.max.bytes': key('telemetry.max.bytes', 'int', '1048576', 'Accepted, not used: Logline serves no client telemetry (KIP-714).', { validator: atLeast(1), importance: 'low', unused: true }),

  // Kerberos (GSSAPI) and OAUTHBEARER: Logline offers PLAIN and SCRAM only, so these tune a
  // mechanism it never runs. Kafka updates the Kerberos and login-refresh ones per broker.
  'sasl.kerberos.service.name': key('sasl.kerberos.service.name', 'string', null, 'Accepted, not used: Logline has no Kerberos (GSSAPI).', { unused: true, dynamic: 'per-broker' }),
  'sasl.kerberos.kinit.cmd': key('sasl.kerberos.kinit.cmd', 'string', '/usr/bin/kinit', 'Accepted, not used: Logline has no Kerberos (GSSAPI).', { unused: true, dynamic: 'per-broker' }),
  'sasl.kerberos.min.time.before.relogin': key('sasl.kerberos.min.time.before.relogin', 'long', '60000', 'Accepted, not used: Logline has no Kerberos (GSSAPI).', { unused: true, dynamic: 'per-broker' }),
  'sasl.kerberos.principal.to.local.rules': key('sasl.kerberos.principal.to.local.rules', 'list', 'DEFAULT', 'Accepted, not used: Logline has no Kerberos (GSSAPI).', { unused: true, dynamic: 'per-broker' }),
  'sasl.kerberos.ticket.renew.jitter': key('sasl.kerberos.ticket.renew.jitter', 'double', '0.05', 'Accepted, not used: Logline has no Kerberos (GSSAPI).', { importance: 'low', unused: true, dynamic: 'per-broker' }),
  'sasl.kerberos.ticket.renew.window.factor': key('sasl.kerberos.ticket.renew.window.factor', 'double', '0.8', 'Accepted, not used: Logline has no Kerberos (GSSAPI).', { importance: 'low', unused: true, dynamic: 'per-broker' }),
  'sasl.login.refresh.buffer.seconds': key('sasl.login.refresh.buffer.seconds', 'short', '300', 'Accepted, not used: Logline has no OAUTHBEARER login to refresh.', { importance: 'low', unused: true, dynamic: 'per-broker' }),
  'sasl.login.refresh.min.period.seconds': key('sasl.login.refresh.min.period.seconds', 'short', '60', 'Accepted, not used: Logline has no OAUTHBEARER login to refresh.', { importance: 'low', unused: true, dynamic: 'per-broker' }),
  'sasl.login.refresh.window.factor': key('sasl.login.refresh.window.factor', 'double', '0.8', 'Accepted, not used: Logline has no OAUTHBEARER login to refresh.', { importance: 'low', unused: true, dynamic: 'per-broker' }),
  'sasl.login.refresh.window.jitter': key('sasl.login.refresh.window.jitter', 'double', '0.05', 'Accepted, not used: Logline has no OAUTHBEARER login to refresh.', { importance: 'low', unused: true, dynamic: 'per-broker' }),
  'sasl.login.connect.timeout.ms': key('sasl.login.connect.timeout.ms', 'int', null, 'Accepted, not used: Logline has no OAUTHBEARER login.', { importance: 'low', unused: true }),
  'sasl.login.read.timeout.ms': key('sasl.login.read.timeout.ms', 'int', null, 'Accepted, not used: Logline has no OAUTHBEARER login.', { importance: 'low', unused: true }),
  'sasl.login.retry.backoff.ms': key('sasl.login.retry.backoff.ms', 'long', '100', 'Accepted, not used: Logline has no OAUTHBEARER login.', { importance: 'low', unused: true }),
  'sasl.login.retry.backoff.max.ms': key('sasl.login.retry.backoff.max.ms', 'long', '10000', 'Accepted, not used: Logline has no OAUTHBEARER login.', { importance: 'low', unused: true }),
  'sasl.oauthbearer.clock.skew.seconds': key('sasl.oauthbearer.clock.skew.seconds', 'int', '30', 'Accepted, not used: Logline has no OAUTHBEARER.', { importance: 'low', unused: true }),
  'sasl.oauthbearer.expected.audience': key('sasl.oauthbearer.expected.audience', 'list', null, 'Accepted, not used: Logline has no OAUTHBEARER.', { importance: 'low', unused: true }),
  'sasl.oauthbearer.expected.issuer': key('sasl.oauthbearer.expected.issuer', 'string', null, 'Accepted, not used: Logline has no OAUTHBEARER.', { importance: 'low', unused: true }),
  'sasl.oauthbearer.jwks.endpoint.refresh.ms': key('sasl.oauthbearer.jwks.endpoint.refresh.ms', 'long', '3600000', 'Accepted, not used: Logline has no OAUTHBEARER.', { importance: 'low', unused: true }),
  'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms': key('sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms', 'long', '10000', 'Accepted, not used: Logline has no OAUTHBEARER.', { importance: 'low', unused: true }),
  'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms': key('sasl.oauthbearer.jwks.endpoint.retry.backoff.ms', 'long', '100', 'Accepted, not used: Logline has no OAUTHBEARER.', { importance: 'low', unused: true }),
  'sasl.oauthbearer.jwks.endpoint.url': key('sasl.oauthbearer.jwks.endpoint.url', 'string', null, 'Accepted, not used: Logline has no OAUTHBEARER.', { unused: true }),
  'sasl.oauthbearer.scope.claim.name': key('sasl.oauthbearer.scope.claim.name', 'string', 'scope', 'Accepted, not used: Logline has no OAUTHBEARER.', { importance: 'low', unused: true }),
  'sasl.oauthbearer.sub.claim.name': key('sasl.oauthbearer.sub.claim.name', 'string', 'sub', 'Accepted, not used: Logline has no OAUTHBEARER.', { importance: 'low', unused: true }),
  'sasl.oauthbearer.token.endpoint.url': key('sasl.oauthbearer.token.endpoint.url', 'string', null, 'Accepted, not used: Logline has no OAUTHBEARER.', { unused: true }),
  'sasl.oauthbearer.scope': key('sasl.oauthbearer.scope', 'string', null, 'Accepted, not used: Logline has no OAUTHBEARER.', { unused: true }),
  'sasl.oauthbearer.client.credentials.client.id': key('sasl.oauthbearer.client.credentials.client.id', 'string', null, 'Accepted, not used: Logline has no OAUTHBEARER.', { unused: true }),
  'sasl.oauthbearer.client.credentials.client.secret': key('sasl.oauthbearer.client.credentials.client.secret', 'password', null, 'Accepted, not used: Logline has no OAUTHBEARER.', { unused: true }),
  'sasl.oauthbearer.assertion.algorithm': key('sasl.oauthbearer.assertion.algorithm', 'string', 'RS256', 'Accepted, not used: Logline has no OAUTHBEARER.', { validator: { kind: 'in', values: ['ES256', 'RS256'], caseInsensitive: true }, unused: true }),
  'sasl.oauthbearer.assertion.claim.aud': key('sasl.oauthbearer.assertion.claim.aud', 'string', null, 'Accepted, not used: Logline has no OAUTHBEARER.', { unused: true }),
  'sasl.oauthbearer.assertion.claim.exp.seconds': key('sasl.oauthbearer.assertion.claim.exp.seconds', 'int', '300', 'Accepted, not used: Logline has no OAUTHBEARER.', { validator: between(0, 86400), importance: 'low', unused: true }),
  'sasl.oauthbearer.assertion.claim.iss': key('sasl.oauthbearer.assertion.claim.iss', 'string', null, 'Accepted, not used: Logline has no OAUTHBEARER.', { unused: true }),
  'sasl.oauthbearer.assertion.claim.jti.include': key('sasl.oauthbearer.assertion.claim.jti.include', 'boolean', 'false', 'Accepted, not used: Logline has no OAUTHBEARER.', { unused: true }),
  'sasl.oauthbearer.assertion.claim.nbf.seconds': key('sasl.oauthbearer.assertion.claim.nbf.seconds', 'int', '60', 'Accepted, not used: Logline has no OAUTHBEARER.', { validator: between(0, 3600), importance: 'low', unused: true }),
  'sasl.oauthbearer.assertion.claim.sub': key('sasl.oauthbearer.assertion.claim.sub', 'string', null, 'Accepted, not used: Logline has no OAUTHBEARER.', { unused: true }),
  'sasl.oauthbearer.assertion.file': key('sasl.oauthbearer.assertion.file', 'string', null, 'Accepted, not used: Logline has no OAUTHBEARER.', { unused: true }),
  'sasl.oauthbearer.assertion.private.key.file': key('sasl.oauthbearer.assertion.private.key.file', 'string', null, 'Accepted, not used: Logline has no OAUTHBEARER.', { unused: true }),
  'sasl.oauthbearer.assertion.private.key.passphrase': key('sasl.oauthbearer.assertion.private.key.passphrase', 'password', null, 'Accepted, not used: Logline has no OAUTHBEARER.', { unused: true }),
  'sasl.oauthbearer.assertion.template.file': key('sasl.oauthbearer.assertion.template.file', 'string', null, 'Accepted, not used: Logline has no OAUTHBEARER.', { unused: true }),
  'sasl.oauthbearer.jwt.retriever.class': key('sasl.oauthbearer.jwt.retriever.class', 'class', 'org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever', 'Accepted at Kafka\'s default only: Logline has no OAUTHBEARER and cannot load Java classes.', { validator: javaClass('org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever'), unused: true }),
  'sasl.oauthbearer.jwt.validator.class': key('sasl.oauthbearer.jwt.validator.class', 'class', 'org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator', 'Accepted at Kafka\'s default only: Logline has no OAUTHBEARER and cannot load Java classes.', { validator: javaClass('org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator'), unused: true }),
  'sasl.server.max.receive.size': key('sasl.server.max.receive.size', 'int', '524288', 'Accepted, not used: a SASL token before authentication is limited to 524288 bytes (Kafka\'s default) whatever this says.', { unused: true }),

  // TLS knobs of Java's JSSE; Node's TLS has no counterpart.
  'ssl.keymanager.algorithm': key('ssl.keymanager.algorithm', 'string', 'SunX509', 'Accepted, not used: a Java key manager algorithm; Node\'s TLS has none.', { importance: 'low', unused: true, dynamic: 'per-broker' }),
  'ssl.trustmanager.algorithm': key('ssl.trustmanager.algorithm', 'string', 'PKIX', 'Accepted, not used: a Java trust manager algorithm; Node\'s TLS has none.', { importance: 'low', unused: true, dynamic: 'per-broker' }),
  'ssl.provider': key('ssl.provider', 'string', null, 'Accepted, not used: a Java security provider; TLS is Node\'s (OpenSSL).', { importance: 'low', unused: true, dynamic: 'per-broker' }),
  'ssl.secure.random.implementation': key('ssl.secure.random.implementation', 'string', null, 'Accepted, not used: a Java SecureRandom algorithm; TLS is Node\'s (OpenSSL).', { importance: 'low', unused: true, dynamic: 'per-broker' }),
  'ssl.allow.dn.changes': key('ssl.allow.dn.changes', 'boolean', 'false', 'Accepted, not used: a reloaded key store is not compared with the previous one.', { importance: 'low', unused: true }),
  'ssl.allow.san.changes': key('ssl.allow.san.changes', 'boolean', 'false', 'Accepted, not used: a reloaded key store is not compared with the previous one.', { importance: 'low', unused: true }),

  // Delegation tokens and password encoding: Logline serves no delegation-token APIs, and (like
  // Kafka in KRaft mode) keeps dynamic passwords in the metadata log as given.
  'delegation.token.secret.key': key('delegation.token.secret.key', 'password', null, 'Accepted, not used: Logline serves no delegation-token APIs.', { unused: true }),
  'delegation.token.max.lifetime.ms': key('delegation.token.max.lifetime.ms', 'long', '604800000', 'Accepted, not used: Logline serves no delegation-token APIs.', { validator: atLeast(1), unused: true }),
  'delegation.token.expiry.time.ms': key('delegation.token.expiry.time.ms', 'long', '86400000', 'Accepted, not used: Logline serves no delegation-token APIs.', { validator: atLeast(1), unused: true }),
  'delegation.token.expiry.check.interval.ms': key('delegation.token.expiry.check.interval.ms', 'long', '3600000', 'Accepted, not used: Logline serves no delegation-token APIs.', { validator: atLeast(1), importance: 'low', unused: true }),
  'password.encoder.secret': key('password.encoder.secret', 'password', null, 'Accepted, not used: dynamic passwords are not encoded (as in Kafka\'s KRaft mode).', { unused: true }),
  'password.encoder.old.secret': key('password.encoder.old.secret', 'password', null, 'Accepted, not used: dynamic passwords are not encoded.', { unused: true }),
  'password.encoder.keyfactory.algorithm': key('password.encoder.keyfactory.algorithm', 'string', null, 'Accepted, not used: dynamic passwords are not encoded.', { importance: 'low', unused: true }),
  'password.encoder.cipher.algorithm': key('password.encoder.cipher.algorithm', 'string', 'AES/CBC/PKCS5Padding', 'Accepted, not used: dynamic passwords are not encoded.', { importance: 'low', unused: true }),
  'password.encoder.key.length': key('password.encoder.key.length', 'int', '128', 'Accepted, not used: dynamic passwords are not encoded.', { validator: atLeast(8), importance: 'low', unused: true }),
  'password.encoder.iterations': key('password.encoder.iterations', 'int', '4096', 'Accepted, not used: dynamic passwords are not encoded.', { validator: atLeast(1024), importance: 'low', unused: true }),

  // Share groups (KIP-932): the min/max keys bound what a group may set (src/config/group.ts).
  'group.share.session.timeout.ms': key('group.share.session.timeout.ms', 'int', '45000', 'How long a share group member may go without a heartbeat before it is removed and its partitions go to the others.', { validator: atLeast(1) }),
  'group.share.min.session.timeout.ms': key('group.share.min.session.timeout.ms', 'int', '45000', 'The shortest share.session.timeout.ms a group may set.', { validator: atLeast(1) }),
  'group.share.max.session.timeout.ms': key('group.share.max.session.timeout.ms', 'int', '60000', 'The longest share.session.timeout.ms a group may set.', { validator: atLeast(1) }),
  'group.share.heartbeat.interval.ms': key('group.share.heartbeat.interval.ms', 'int', '5000', 'The heartbeat interval share group members are told to use.', { validator: atLeast(1) }),
  'group.share.min.heartbeat.interval.ms': key('group.share.min.heartbeat.interval.ms', 'int', '5000', 'The shortest share.heartbeat.interval.ms a group may set.', { validator: atLeast(1) }),
  'group.share.max.heartbeat.interval.ms': key('group.share.max.heartbeat.interval.ms', 'int', '15000', 'The longest share.heartbeat.interval.ms a group may set.', { validator: atLeast(1) }),
  'group.share.max.size': key('group.share.max.size', 'int', '200', 'The most members a share group may have (GROUP_MAX_SIZE_REACHED beyond).', { validator: between(1, 1000) }),
  'group.share.max.groups': key('group.share.max.groups', 'short', '10', 'Accepted, not used: the number of share groups is not bounded here (a Kafka 4.0 key; Kafka 4.1 removed it).', { validator: between(1, 100), unused: true }),
  'group.share.delivery.count.limit': key('group.share.delivery.count.limit', 'int', '5', 'How many times a record is delivered to share consumers before it is archived; share.delivery.count.limit overrides it per group.', { validator: between(2, 10) }),
  'group.share.record.lock.duration.ms': key('group.share.record.lock.duration.ms', 'int', '30000', 'How long a record acquired by a share consumer stays locked to it; share.record.lock.duration.ms overrides it per group.', { validator: between(1000, 3600000) }),
  'group.share.min.record.lock.duration.ms': key('group.share.min.record.lock.duration.ms', 'int', '15000', 'The shortest share.record.lock.duration.ms a group may set.', { validator: between(1000, 30000) }),
  'group.share.max.record.lock.duration.ms': key('group.share.max.record.lock.duration.ms', 'int', '60000', 'The longest share.record.lock.duration.ms a group may set.', { validator: between(30000, 3600000) }),
  'group.share.partition.max.record.locks': key('group.share.partition.max.record.locks', 'int', '2000', 'The most records in flight per share-partition (no new ones are acquired beyond it); share.partition.max.record.locks overrides it per group.', { validator: between(100, 10000) }),
  'errors.deadletterqueue.topic.name.prefix': key('errors.deadletterqueue.topic.name.prefix', 'string', 'dlq.', 'The prefix every share group\'s dead-letter topic name must start with (KIP-1191); dead letters for a topic named otherwise are not written.'),
  'group.share.max.share.sessions': key('group.share.max.share.sessions', 'int', '2000', 'The most share sessions this broker keeps (SHARE_SESSION_LIMIT_REACHED beyond; idle ones are evicted first).', { validator: atLeast(1) }),
  'group.share.assignors': key('group.share.assignors', 'list', 'simple', 'Accepted, not used: share groups here always use the simple assignor.', { validator: NON_EMPTY_UNIQUE_LIST, unused: true }),
  'share.fetch.purgatory.purge.interval.requests': key('share.fetch.purgatory.purge.interval.requests', 'int', '1000', 'Accepted, not used: a completed share fetch wait leaves the purgatory at once here, so there is nothing to purge.', { unused: true }),
  'share.coordinator.state.topic.num.partitions': key('share.coordinator.state.topic.num.partitions', 'int', '50', 'Partitions of __share_group_state, created on first use.', { validator: atLeast(1), importance: 'high' }),
  'share.coordinator.state.topic.replication.factor': key('share.coordinator.state.topic.replication.factor', 'short', '3', 'Replication factor of __share_group_state (at most the number of brokers).', { validator: atLeast(1), importance: 'high' }),
  'share.coordinator.state.topic.min.isr': key('share.coordinator.state.topic.min.isr', 'short', '2', 'min.insync.replicas of __share_group_state.', { validator: atLeast(1), importance: 'high' }),
  'share.coordinator.state.topic.segment.bytes': key('share.coordinator.state.topic.segment.bytes', 'int', '104857600', 'segment.bytes of __share_group_state.', { validator: atLeast(1), importance: 'high' }),
  'share.coordinator.state.topic.compression.codec': key('share.coordinator.state.topic.compression.codec', 'int', '0', 'Accepted, not used: __share_group_state is written uncompressed.', { importance: 'high', unused: true }),
  'share.coordinator.snapshot.update.records.per.snapshot': key('share.coordinator.snapshot.update.records.per.snapshot', 'int', '500', 'ShareUpdate records written for a share-partition before its whole state is written as a ShareSnapshot again.', { validator: atLeast(0) }),
  'share.coordinator.threads': key('share.coordinator.threads', 'int', '1', 'Accepted, not used: the share coordinator runs on the event loop.', { validator: atLeast(1), unused: true }),
  'share.coordinator.append.linger.ms': key('share.coordinator.append.linger.ms', 'int', '-1', 'Accepted, not used: share-state writes are not lingered.', { validator: atLeast(-1), unused: true }),
  'share.coordinator.write.timeout.ms': key('share.coordinator.write.timeout.ms', 'int', '5000', 'How long a write to __share_group_state may wait to be committed.', { validator: atLeast(1) }),
  'share.coordinator.load.buffer.size': key('share.coordinator.load.buffer.size', 'int', '5242880', 'Accepted, not used: the share coordinator reads __share_group_state with the broker\'s own read limits.', { validator: atLeast(1), unused: true }),

  // Streams groups (KIP-1071, Kafka 4.1's streams rebalance protocol, StreamsGroupHeartbeat):
  // Logline has no streams groups yet; Kafka Streams clients use the classic protocol with it.
  'group.streams.session.timeout.ms': key('group.streams.session.timeout.ms', 'int', '45000', 'Accepted, not used: Logline has no streams groups (KIP-1071) yet.', { validator: atLeast(1), unused: true }),
  'group.streams.min.session.timeout.ms': key('group.streams.min.session.timeout.ms', 'int', '45000', 'Accepted, not used: Logline has no streams groups (KIP-1071) yet.', { validator: atLeast(1), unused: true }),
  'group.streams.max.session.timeout.ms': key('group.streams.max.session.timeout.ms', 'int', '60000', 'Accepted, not used: Logline has no streams groups (KIP-1071) yet.', { validator: atLeast(1), unused: true }),
  'group.streams.heartbeat.interval.ms': key('group.streams.heartbeat.interval.ms', 'int', '5000', 'Accepted, not used: Logline has no streams groups (KIP-1071) yet.', { validator: atLeast(1), unused: true }),
  'group.streams.min.heartbeat.interval.ms': key('group.streams.min.heartbeat.interval.ms', 'int', '5000', 'Accepted, not used: Logline has no streams groups (KIP-1071) yet.', { validator: atLeast(1), unused: true }),
  'group.streams.max.heartbeat.interval.ms': key('group.streams.max.heartbeat.interval.ms', 'int', '15000', 'Accepted, not used: Logline has no streams groups (KIP-1071) yet.', { validator: atLeast(1), unused: true }),
  'group.streams.max.size': key('group.streams.max.size', 'int', INT_MAX, 'Accepted, not used: Logline has no streams groups (KIP-1071) yet.', { validator: atLeast(1), unused: true }),
  'group.streams.num.standby.replicas': key('group.streams.num.standby.replicas', 'int', '0', 'Accepted, not used: Logline has no streams groups (KIP-1071) yet.', { validator: atLeast(0), unused: true }),
  'group.streams.max.standby.replicas': key('group.streams.max.standby.replicas', 'int', '2', 'Accepted, not used: Logline has no streams groups (KIP-1071) yet.', { validator: atLeast(0), unused: true }),
  'group.streams.initial.rebalance.delay.ms': key('group.streams.initial.rebalance.delay.ms', 'int', '3000', 'Accepted, not used: Logline has no streams groups (KIP-1071) yet.', { validator: atLeast(0), unused: true }),
} as const;
export type BrokerConfigName = keyof typeof BROKER_KEYS;

export const TOPIC_KEY_LIST: readonly ConfigKeyDef[] = Object.values(TOPIC_KEYS);
export const BROKER_KEY_LIST: readonly ConfigKeyDef[] = Object.values(BROKER_KEYS);

export function topicKey(name: string): ConfigKeyDef | undefined {
  return Object.hasOwn(TOPIC_KEYS, name) ? TOPIC_KEYS[name as TopicConfigName] : undefined;
}
export function brokerKey(name: string): ConfigKeyDef | undefined {
  if (Object.hasOwn(BROKER_KEYS, name)) return BROKER_KEYS[name as BrokerConfigName];
  const prefixed = listenerPrefixedKey(name);
  if (prefixed === undefined) return undefined;
  // Kafka updates every listener override per broker, but for the connection limits it also
  // takes as cluster defaults (DynamicBrokerConfig's ClusterLevelListenerConfigs).
  const base = BROKER_KEYS[prefixed.key as BrokerConfigName];
  return Object.freeze({ ...base, name, dynamic: base.dynamic === 'cluster-wide' ? 'cluster-wide' : 'per-broker' });
}

/**
 * `listener.name.<listener>.<key>` (Kafka's per-listener override, listener name in lower case) →
 * the listener and key, for the keys Kafka reads per listener: TLS and SASL settings, the principal
 * builder, and the connection limits. A SASL login or callback setting may also name its mechanism,
 * `listener.name.<l>.<mechanism>.<key>` (DynamicBrokerConfig's ListenerMechanismConfigs).
 */
export function listenerPrefixedKey(name: string): { listener: string; key: string } | undefined {
  const m = /^listener\.name\.([a-z0-9_]+)\.(.+)$/.exec(name);
  if (m === null) return undefined;
  const rest = m[2]!;
  const mechanism = LISTENER_MECHANISM_KEYS.find((k) => rest.endsWith(`.${k}`) && /^[a-z0-9-]+$/.test(rest.slice(0, -k.length - 1)));
  const key = mechanism ?? rest;
  if (!LISTENER_KEY.test(key) || !Object.hasOwn(BROKER_KEYS, key)) return undefined;
  return { listener: m[1]!.toUpperCase(), key };
}
const LISTENER_KEY = /^(ssl\..+|sasl\..+|connections\.max\.reauth\.ms|max\.connections|max\.connection\.creation\.rate|principal\.builder\.class)$/;
const LISTENER_MECHANISM_KEYS = ['sasl.jaas.config', 'sasl.login.callback.handler.class', 'sasl.login.class', 'sasl.server.callback.handler.class', 'connections.max.reauth.ms'];

/** Broker keys that stand for the same setting, in Kafka's order (DynamicBrokerConfig.brokerConfigSynonyms). */
export function brokerConfigSynonyms(name: string): readonly string[] {
  for (const group of SYNONYM_GROUPS) if (group.includes(name) && (group[0] !== 'log.flush.interval.ms' || name === group[0])) return group;
  return [name];
}
const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ['log.roll.ms', 'log.roll.hours'],
  ['log.roll.jitter.ms', 'log.roll.jitter.hours'],
  ['log.flush.interval.ms', 'log.flush.scheduler.interval.ms'],
  ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours'],
];

/**
 * The milliseconds of a Java Duration.parse text (PnDTnHnMn.nS, case-insensitive, each number
 * signed), as Kafka's share.auto.offset.reset by_duration:<duration> takes; null when it is not one.
 */
export function isoDurationMs(text: string): number | null {
  const m = /^([-+]?)P(?:([-+]?\d+)D)?(T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?)(\d+)(?:[.,](\d{0,9}))?S)?)?$/i.exec(text);
  if (m === null) return null;
  const [, sign, d, t, h, min, sSign, s, frac] = m;
  if (d === undefined && t === undefined) return null;
  if (t !== undefined && h === undefined && min === undefined && s === undefined) return null;
  const seconds = (Number(d ?? 0) * 86400 + Number(h ?? 0) * 3600 + Number(min ?? 0) * 60)
    + (sSign === '-' ? -1 : 1) * (Number(s ?? 0) + Number(`0.${frac ?? ''}0`));
  return (sign === '-' ? -seconds : seconds) * 1000;
}

/** A duration text that is not negative (by_duration's rule). */
export function isNonNegativeIsoDuration(text: string): boolean {
  const ms = isoDurationMs(text);
  return ms !== null && ms >= 0;
}
const SHARE_AUTO_OFFSET_RESET: Validator = {
  kind: 'custom', rule: 'Value must be earliest, latest or by_duration:<ISO-8601 duration, PnDTnHnMn.nS, not negative>',
  check: (v) => v === 'earliest' || v === 'latest' || (typeof v === 'string' && v.startsWith('by_duration:') && isNonNegativeIsoDuration(v.slice('by_duration:'.length))),
};

/** Group keys (Kafka's GroupConfig): set per group with a GROUP resource; defaults from the broker key named. */
export const GROUP_KEYS = {
  'consumer.session.timeout.ms': key('consumer.session.timeout.ms', 'int', '45000', 'Accepted, not used: consumer-protocol groups all take the broker\'s group.consumer.session.timeout.ms.', { validator: atLeast(1), brokerSynonym: 'group.consumer.session.timeout.ms', unused: true }),
  'consumer.heartbeat.interval.ms': key('consumer.heartbeat.interval.ms', 'int', '5000', 'Accepted, not used: consumer-protocol groups all take the broker\'s group.consumer.heartbeat.interval.ms.', { validator: atLeast(1), brokerSynonym: 'group.consumer.heartbeat.interval.ms', unused: true }),
  'share.session.timeout.ms': key('share.session.timeout.ms', 'int', '45000', 'A member of this share group without a heartbeat for this long is removed.', { validator: atLeast(1), brokerSynonym: 'group.share.session.timeout.ms' }),
  'share.heartbeat.interval.ms': key('share.heartbeat.interval.ms', 'int', '5000', 'The heartbeat interval the members of this share group are told.', { validator: atLeast(1), brokerSynonym: 'group.share.heartbeat.interval.ms' }),
  'share.record.lock.duration.ms': key('share.record.lock.duration.ms', 'int', '30000', 'How long a record acquired by a member of this share group stays locked to it.', { validator: atLeast(1000), brokerSynonym: 'group.share.record.lock.duration.ms' }),
  'share.delivery.count.limit': key('share.delivery.count.limit', 'int', '5', 'How many times a record is delivered to this share group before it is archived.', { validator: atLeast(2), brokerSynonym: 'group.share.delivery.count.limit' }),
  'share.partition.max.record.locks': key('share.partition.max.record.locks', 'int', '2000', 'The most records in flight per share-partition of this group (at most 10000, as the broker default: it bounds the memory a share-partition holds).', { validator: between(100, 10000), brokerSynonym: 'group.share.partition.max.record.locks' }),
  'share.auto.offset.reset': key('share.auto.offset.reset', 'string', 'latest', 'Where a share-partition without state starts: latest, earliest, or by_duration:<ISO-8601 duration> (the first record no older than that, by ListOffsets on the record timestamps).', { validator: SHARE_AUTO_OFFSET_RESET }),
  'errors.deadletterqueue.topic.name': key('errors.deadletterqueue.topic.name', 'string', '', 'The dead-letter topic of this share group (KIP-1191): records a consumer rejects, and those archived at share.delivery.count.limit, are written there with headers naming the group, topic, partition, offset, reason and delivery count. Empty: none. The topic must exist.'),
  'errors.deadletterqueue.copy.record.enable': key('errors.deadletterqueue.copy.record.enable', 'boolean', 'false', 'Whether a dead letter carries the record itself (key, value, headers, timestamp) besides the context headers.'),
  'share.isolation.level': key('share.isolation.level', 'string', 'read_uncommitted', 'read_committed: records of aborted transactions are archived, never delivered, and nothing past the last stable offset is acquired.', { validator: oneOf('read_committed', 'read_uncommitted') }),
  'share.renew.acknowledge.enable': key('share.renew.acknowledge.enable', 'boolean', 'true', 'Accepted, not used: acknowledgements cannot renew a record lock here. (Kafka trunk after 4.2.)', { unused: true }),
  'streams.session.timeout.ms': key('streams.session.timeout.ms', 'int', '45000', 'Accepted, not used: Logline has no streams groups (KIP-1071) yet.', { validator: atLeast(1), brokerSynonym: 'group.streams.session.timeout.ms', unused: true }),
  'streams.heartbeat.interval.ms': key('streams.heartbeat.interval.ms', 'int', '5000', 'Accepted, not used: Logline has no streams groups (KIP-1071) yet.', { validator: atLeast(1), brokerSynonym: 'group.streams.heartbeat.interval.ms', unused: true }),
  'streams.num.standby.replicas': key('streams.num.standby.replicas', 'int', '0', 'Accepted, not used: Logline has no streams groups (KIP-1071) yet.', { validator: atLeast(0), brokerSynonym: 'group.streams.num.standby.replicas', unused: true }),
  'streams.initial.rebalance.delay.ms': key('streams.initial.rebalance.delay.ms', 'int', '3000', 'Accepted, not used: Logline has no streams groups (KIP-1071) yet.', { validator: atLeast(0), brokerSynonym: 'group.streams.initial.rebalance.delay.ms', unused: true }),
} as const;

/** Client-metrics keys (Kafka's ClientMetricsConfigs, KIP-714): set per subscription with a CLIENT_METRICS resource. */
export const CLIENT_METRICS_KEYS = {
  'metrics': key('metrics', 'list', '', 'Accepted, not used: Logline serves no client telemetry (KIP-714), so no client is told to push these metrics.', { unused: true }),
  'interval.ms': key('interval.ms', 'int', '300000', 'Accepted, not used: Logline serves no client telemetry (KIP-714).', { validator: between(100, 3600000), unused: true }),
  'match': key('match', 'list', '', 'Accepted, not used: Logline serves no client telemetry (KIP-714).', { unused: true }),
} as const;

export const GROUP_KEY_LIST: readonly ConfigKeyDef[] = Object.values(GROUP_KEYS);
export const CLIENT_METRICS_KEY_LIST: readonly ConfigKeyDef[] = Object.values(CLIENT_METRICS_KEYS);

const ZOOKEEPER_GONE = 'ZooKeeper mode is gone in Kafka 4.0; Logline runs KRaft only';
const ZOOKEEPER_KEYS = [
  'zookeeper.connect', 'zookeeper.connection.timeout.ms', 'zookeeper.session.timeout.ms', 'zookeeper.max.in.flight.requests',
  'zookeeper.set.acl', 'zookeeper.clientCnxnSocket', 'zookeeper.metadata.migration.enable', 'zookeeper.ssl.client.enable',
  'zookeeper.ssl.keystore.location', 'zookeeper.ssl.keystore.password', 'zookeeper.ssl.keystore.type',
  'zookeeper.ssl.truststore.location', 'zookeeper.ssl.truststore.password', 'zookeeper.ssl.truststore.type',
  'zookeeper.ssl.protocol', 'zookeeper.ssl.enabled.protocols', 'zookeeper.ssl.cipher.suites',
  'zookeeper.ssl.endpoint.identification.algorithm', 'zookeeper.ssl.crl.enable', 'zookeeper.ssl.ocsp.enable',
];
/**
 * Keys Kafka knows or knew that Logline refuses, with the reason the error gives: ZooKeeper mode's
 * (Kafka 4.0 removed them with it) and the ones Kafka 4.0 removed outright. Accepting them would
 * pretend to a behaviour neither Kafka 4 nor Logline has.
 */
export const REFUSED_BROKER_KEYS: ReadonlyMap<string, string> = new Map([
  ...ZOOKEEPER_KEYS.map((k): [string, string] => [k, ZOOKEEPER_GONE]),
  ['broker.id.generation.enable', `${ZOOKEEPER_GONE}; set node.id`],
  ['reserved.broker.max.id', `${ZOOKEEPER_GONE}; set node.id`],
  ['control.plane.listener.name', `${ZOOKEEPER_GONE}; controllers are reached on controller.listener.names`],
  ['controlled.shutdown.max.retries', `${ZOOKEEPER_GONE}; a KRaft broker shuts down through its heartbeats`],
  ['controlled.shutdown.retry.backoff.ms', `${ZOOKEEPER_GONE}; a KRaft broker shuts down through its heartbeats`],
  ['log.message.format.version', 'removed in Kafka 4.0 (KIP-724): every record batch is written in format v2'],
  ['log.message.downconversion.enable', 'removed in Kafka 4.0 (KIP-724): Fetch answers old versions without down-conversion'],
  ['log.message.timestamp.difference.max.ms', 'removed in Kafka 4.0: use log.message.timestamp.before.max.ms and log.message.timestamp.after.max.ms'],
  ['offsets.commit.required.acks', 'removed in Kafka 4.0 (KIP-1041): offset commits wait for every in-sync replica'],
  ['delegation.token.master.key', 'removed in Kafka 4.0: its name is delegation.token.secret.key'],
]);
export const REFUSED_TOPIC_KEYS: ReadonlyMap<string, string> = new Map([
  ['message.format.version', 'removed in Kafka 4.0 (KIP-724): every record batch is written in format v2'],
  ['message.downconversion.enable', 'removed in Kafka 4.0 (KIP-724): Fetch answers old versions without down-conversion'],
  ['message.timestamp.difference.max.ms', 'removed in Kafka 4.0: use message.timestamp.before.max.ms and message.timestamp.after.max.ms'],
]);

/**
 * A cluster link's keys (Logline's LINK config resource, issue 35): how the target cluster's
 * brokers reach the source cluster, as Kafka client properties, and the group offset sync.
 */
export const LINK_KEYS = {
  'bootstrap.servers': key('bootstrap.servers', 'string', null, 'The source cluster\'s bootstrap addresses (host:port,...).', { validator: { kind: 'nonEmptyString' }, importance: 'high' }),
  'security.protocol': key('security.protocol', 'string', 'PLAINTEXT', 'How the link connects to the source: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.', { validator: oneOf('PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL') }),
  'sasl.mechanism': key('sasl.mechanism', 'string', 'PLAIN', 'SASL mechanism toward the source (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512).'),
  'sasl.jaas.config': key('sasl.jaas.config', 'password', null, 'PlainLoginModule or ScramLoginModule entry with username and password for the source.'),
  'sasl.username': key('sasl.username', 'string', null, 'librdkafka\'s SASL user name for the source.'),
  'sasl.password': key('sasl.password', 'password', null, 'librdkafka\'s SASL password for the source.'),
  'ssl.truststore.location': key('ssl.truststore.location', 'string', null, 'PEM file of the CAs the source\'s certificates are checked against.'),
  'ssl.truststore.type': key('ssl.truststore.type', 'string', 'PEM', 'Truststore type (PEM).'),
  'ssl.ca.location': key('ssl.ca.location', 'string', null, 'librdkafka\'s name for ssl.truststore.location.'),
  'ssl.keystore.location': key('ssl.keystore.location', 'string', null, 'PEM file with the link\'s certificate and key (mutual TLS).'),
  'ssl.keystore.type': key('ssl.keystore.type', 'string', 'PEM', 'Keystore type (PEM).'),
  'ssl.keystore.password': key('ssl.keystore.password', 'password', null, 'Password of the keystore\'s key.'),
  'ssl.key.password': key('ssl.key.password', 'password', null, 'Password of the key.'),
  'ssl.endpoint.identification.algorithm': key('ssl.endpoint.identification.algorithm', 'string', 'https', 'https: the source\'s certificate must name its host; empty: not checked.'),
  'consumer.offset.sync.enable': key('consumer.offset.sync.enable', 'boolean', 'true', 'Copy the source\'s committed group offsets of mirror topics to the target as they are (never past what the target holds).'),
  'consumer.offset.sync.ms': key('consumer.offset.sync.ms', 'int', '5000', 'How often group offsets are copied.', { validator: atLeast(100) }),
  'metadata.max.age.ms': key('metadata.max.age.ms', 'int', '300000', 'How often the source\'s partition counts are checked: a mirror topic grows to its source topic\'s count.', { validator: atLeast(100) }),
  'topic.config.sync.ms': key('topic.config.sync.ms', 'int', '5000', 'How often the source topics\' configs (retention, cleanup, compression, timestamps) are copied onto their mirror topics.', { validator: atLeast(100) }),
} as const;
export const LINK_KEY_LIST: readonly ConfigKeyDef[] = Object.values(LINK_KEYS);

/** The resource kinds whose keys this table holds, as DescribeConfigs and AlterConfigs name them. */
export type ConfigKind = 'broker' | 'topic' | 'group' | 'client-metrics' | 'link';

const KEYS_OF: Readonly<Record<ConfigKind, Readonly<Record<string, ConfigKeyDef>>>> = {
  broker: BROKER_KEYS, topic: TOPIC_KEYS, group: GROUP_KEYS, 'client-metrics': CLIENT_METRICS_KEYS, link: LINK_KEYS,
};
const REFUSED_OF: Readonly<Record<ConfigKind, ReadonlyMap<string, string>>> = {
  broker: REFUSED_BROKER_KEYS, topic: REFUSED_TOPIC_KEYS, group: new Map(), 'client-metrics': new Map(), link: new Map(),
};

/** A key of one kind (broker keys include listener.name.<l>. overrides), or undefined. */
export function keyOf(kind: ConfigKind, name: string): ConfigKeyDef | undefined {
  if (kind === 'broker') return brokerKey(name);
  return Object.hasOwn(KEYS_OF[kind], name) ? KEYS_OF[kind][name] : undefined;
}
export function keyNamesOf(kind: ConfigKind): string[] {
  return Object.keys(KEYS_OF[kind]);
}
/** Why Logline refuses a key Kafka knows (or knew), or undefined if it is not one of those. */
export function refusedReason(kind: ConfigKind, name: string): string | undefined {
  const listener = kind === 'broker' ? /^listener\.name\.[a-z0-9_]+\.(.+)$/.exec(name)?.[1] : undefined;
  return REFUSED_OF[kind].get(name) ?? (listener === undefined ? undefined : REFUSED_OF[kind].get(listener));
}
