// The table: every configuration key Logline knows, with Kafka 4.0's name, type, default and
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

/** Topic-level keys (Kafka's TopicConfig / LogConfig), all of them settable per topic. */
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
  'follower.replication.throttled.replicas': key('follower.replication.throttled.replicas', 'list', '', 'Replicas whose follower-side replication is throttled.', { validator: THROTTLED_REPLICAS, unused: true }),
  'index.interval.bytes': key('index.interval.bytes', 'int', '4096', 'Bytes between offset index entries.', { validator: atLeast(0), brokerSynonym: 'log.index.interval.bytes' }),
  'leader.replication.throttled.replicas': key('leader.replication.throttled.replicas', 'list', '', 'Replicas whose leader-side replication is throttled.', { validator: THROTTLED_REPLICAS, unused: true }),
  'local.retention.bytes': key('local.retention.bytes', 'long', '-2', 'Local bytes kept when tiered storage is on; -2 means retention.bytes.', { validator: atLeast(-2), brokerSynonym: 'log.local.retention.bytes' }),
  'local.retention.ms': key('local.retention.ms', 'long', '-2', 'Local time kept when tiered storage is on; -2 means retention.ms.', { validator: atLeast(-2), brokerSynonym: 'log.local.retention.ms' }),
  'max.compaction.lag.ms': key('max.compaction.lag.ms', 'long', LONG_MAX, 'Longest a record may stay uncompacted.', { validator: atLeast(1), brokerSynonym: 'log.cleaner.max.compaction.lag.ms' }),
  'max.message.bytes': key('max.message.bytes', 'int', '1048588', 'Largest record batch the topic accepts.', { validator: atLeast(0), brokerSynonym: 'message.max.bytes' }),
  'message.timestamp.after.max.ms': key('message.timestamp.after.max.ms', 'long', '3600000', 'How far in the future a CreateTime timestamp may be.', { validator: atLeast(0), brokerSynonym: 'log.message.timestamp.after.max.ms' }),
  'message.timestamp.before.max.ms': key('message.timestamp.before.max.ms', 'long', LONG_MAX, 'How far in the past a CreateTime timestamp may be.', { validator: atLeast(0), brokerSynonym: 'log.message.timestamp.before.max.ms' }),
  'message.timestamp.type': key('message.timestamp.type', 'string', 'CreateTime', 'Keep the producer timestamp or stamp the append time.', { validator: TIMESTAMP_TYPES, brokerSynonym: 'log.message.timestamp.type' }),
  'min.cleanable.dirty.ratio': key('min.cleanable.dirty.ratio', 'double', '0.5', 'Dirty share of the log that triggers compaction.', { validator: between(0, 1), brokerSynonym: 'log.cleaner.min.cleanable.ratio' }),
  'min.compaction.lag.ms': key('min.compaction.lag.ms', 'long', '0', 'Youngest a record may be and still be compacted.', { validator: atLeast(0), brokerSynonym: 'log.cleaner.min.compaction.lag.ms' }),
  'min.insync.replicas': key('min.insync.replicas', 'int', '1', 'Smallest ISR that may acknowledge an acks=all write.', { validator: atLeast(1), importance: 'high', brokerSynonym: 'min.insync.replicas' }),
  'preallocate': key('preallocate', 'boolean', 'false', 'Preallocate segment files on creation.', { brokerSynonym: 'log.preallocate' }),
  'remote.log.copy.disable': key('remote.log.copy.disable', 'boolean', 'false', 'Stop copying segments to remote storage.', { unused: true }),
  'remote.log.delete.on.disable': key('remote.log.delete.on.disable', 'boolean', 'false', 'Delete remote data when tiering is turned off.', { unused: true }),
  'remote.storage.enable': key('remote.storage.enable', 'boolean', 'false', 'Tier closed segments to remote storage.', { unused: true }),
  'retention.bytes': key('retention.bytes', 'long', '-1', 'Largest a partition may grow before old segments go; -1 is unlimited.', { importance: 'high', brokerSynonym: 'log.retention.bytes' }),
  'retention.ms': key('retention.ms', 'long', '604800000', 'Age after which closed segments are deleted; -1 keeps them forever.', { validator: atLeast(-1), importance: 'high', brokerSynonym: 'log.retention.ms' }),
  'segment.bytes': key('segment.bytes', 'int', '1073741824', 'Size at which a segment rolls.', { validator: atLeast(1024 * 1024), importance: 'high', brokerSynonym: 'log.segment.bytes' }),
  'segment.index.bytes': key('segment.index.bytes', 'int', '10485760', 'Size of each offset index file.', { validator: atLeast(4), brokerSynonym: 'log.index.size.max.bytes' }),
  'segment.jitter.ms': key('segment.jitter.ms', 'long', '0', 'Random jitter subtracted from segment.ms.', { validator: atLeast(0), brokerSynonym: 'log.roll.jitter.ms' }),
  'segment.ms': key('segment.ms', 'long', '604800000', 'Age at which a segment rolls even if not full.', { validator: atLeast(1), brokerSynonym: 'log.roll.ms' }),
  'unclean.leader.election.enable': key('unclean.leader.election.enable', 'boolean', 'false', 'Allow an out-of-sync replica to become leader (may lose data).', { brokerSynonym: 'unclean.leader.election.enable' }),
} as const;
export type TopicConfigName = keyof typeof TOPIC_KEYS;
