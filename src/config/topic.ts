// Topic configuration: a topic's own overrides layered over the broker's log defaults (through
// each key's broker synonym), and the checks CreateTopics / AlterConfigs run on overrides.
import { TOPIC_KEYS, TOPIC_KEY_LIST, topicKey, type TopicConfigName } from './table.js';
import { ConfigError, type ConfigKeyDef, type ConfigProblem } from './types.js';
import { parseValue } from './values.js';
import { unknownKeyMessage } from './suggest.js';
import type { BrokerConfig } from './broker.js';

export type TopicOverrides = ReadonlyMap<string, string> | Readonly<Record<string, string>>;

export interface TopicConfig {
  readonly cleanupPolicy: readonly ('compact' | 'delete')[];
  readonly compressionType: 'uncompressed' | 'zstd' | 'lz4' | 'snappy' | 'gzip' | 'producer';
  readonly compressionGzipLevel: number;
  readonly compressionLz4Level: number;
  readonly compressionZstdLevel: number;
  readonly confluentKeySchemaValidation: boolean;
  readonly confluentKeySubjectNameStrategy: string;
  readonly confluentValueSchemaValidation: boolean;
  readonly confluentValueSubjectNameStrategy: string;
  readonly deleteRetentionMs: number;
  readonly fileDeleteDelayMs: number;
  readonly flushMessages: number;
  readonly flushMs: number;
  readonly followerReplicationThrottledReplicas: readonly string[];
  readonly indexIntervalBytes: number;
  readonly leaderReplicationThrottledReplicas: readonly string[];
  readonly linkEpochBase: number;
  readonly linkName: string;
  readonly localRetentionBytes: number;
  readonly localRetentionMs: number;
  readonly maxCompactionLagMs: number;
  readonly maxMessageBytes: number;
  readonly messageTimestampAfterMaxMs: number;
  readonly messageTimestampBeforeMaxMs: number;
  readonly messageTimestampType: 'CreateTime' | 'LogAppendTime';
  readonly minCleanableDirtyRatio: number;
  readonly minCompactionLagMs: number;
  readonly minInsyncReplicas: number;
  readonly preallocate: boolean;
  readonly remoteLogCopyDisable: boolean;
  readonly remoteLogDeleteOnDisable: boolean;
  readonly remoteStorageEnable: boolean;
  readonly retentionBytes: number;
  readonly retentionMs: number;
  readonly segmentBytes: number;
  readonly segmentIndexBytes: number;
  readonly segmentJitterMs: number;
  readonly segmentMs: number;
  readonly uncleanLeaderElectionEnable: boolean;
}

/** retention.ms → retentionMs. */
export function camelCaseOf(name: string): string {
  return name.replace(/\.([a-z])/g, (_, c: string) => c.toUpperCase());
}

export class TopicConfigError extends ConfigError {
  override name = 'TopicConfigError';
  constructor(readonly problems: readonly ConfigProblem[]) {
    super(problems.map((p) => p.message).join('\n'), problems[0]?.name ?? '');
  }
}

function entriesOf(m: ReadonlyMap<string, string | null> | Readonly<Record<string, string | null>>): [string, string | null][] {
  return m instanceof Map ? [...m] : Object.entries(m as Record<string, string | null>);
}

/**
 * Checks topic overrides as CreateTopics, AlterConfigs and IncrementalAlterConfigs receive them.
 * Returns one problem per rejected key; an empty list means the overrides are acceptable.
 */
export function validateTopicConfigs(overrides: ReadonlyMap<string, string | null> | Readonly<Record<string, string | null>>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const parsed = new Map<string, unknown>();
  for (const [name, raw] of entriesOf(overrides)) {
    const def = topicKey(name);
    if (def === undefined) {
      problems.push({ name, errorCode: 'INVALID_CONFIG', message: unknownKeyMessage(name, 'topic') });
    } else if (raw === null) {
      problems.push({ name, errorCode: 'INVALID_CONFIG', message: `Null value not supported for topic configs: ${name}` });
    } else {
      try { parsed.set(name, parseValue(def, raw)); } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        problems.push({ name, errorCode: 'INVALID_CONFIG', message: e.message });
      }
    }
  }
  if (problems.length === 0) problems.push(...crossKeyProblems(parsed));
  return problems;
}

/** Rules between keys of one topic (Kafka's LogConfig.validateValues), on the keys given. */
function crossKeyProblems(p: Map<string, unknown>): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const num = (k: TopicConfigName): number => (p.get(k) ?? Number(TOPIC_KEYS[k].defaultValue)) as number;
  if (num('min.compaction.lag.ms') > num('max.compaction.lag.ms')) {
    out.push({ name: 'min.compaction.lag.ms', errorCode: 'INVALID_CONFIG', message: `conflict topic config setting min.compaction.lag.ms (${num('min.compaction.lag.ms')}) > max.compaction.lag.ms (${num('max.compaction.lag.ms')})` });
  }
  // Tiering's rules need the broker's settings and the topic's previous ones: src/tiered's
  // validateTieredTopicConfig, which the node runs where topic configs are validated.
  return out;
}

/** The broker-side value a topic key falls back to, after Kafka's derived broker defaults. */
export function brokerDefaultForTopicKey(def: ConfigKeyDef, broker: BrokerConfig): unknown {
  switch (def.brokerSynonym) {
    case undefined: return parseValue(def, def.defaultValue as string);
    case 'log.retention.ms': return broker.logRetentionMs;
    case 'log.roll.ms': return broker.logRollMs;
    case 'log.roll.jitter.ms': return broker.logRollJitterMs;
    case 'log.flush.interval.ms': return broker.logFlushIntervalMs;
    default: return broker.values.get(def.brokerSynonym);
  }
}

/** Resolves every topic key: the topic's override, else the broker's default. Throws TopicConfigError. */
export function resolveTopicConfig(overrides: TopicOverrides, broker: BrokerConfig): TopicConfig {
  const problems = validateTopicConfigs(overrides);
  if (problems.length > 0) throw new TopicConfigError(problems);
  const given = new Map(entriesOf(overrides));
  const out: Record<string, unknown> = {};
  for (const def of TOPIC_KEY_LIST) {
    const raw = given.get(def.name);
    const value = raw === undefined || raw === null ? brokerDefaultForTopicKey(def, broker) : parseValue(def, raw);
    out[camelCaseOf(def.name)] = Array.isArray(value) ? Object.freeze([...value]) : value;
  }
  return Object.freeze(out) as unknown as TopicConfig;
}
