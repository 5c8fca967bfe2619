// DescribeConfigs: entries with value, source and synonyms by Kafka's rules (ConfigHelper). A
// synonym list walks the layers in a fixed order — dynamic per-broker, dynamic cluster default,
// static, default — and within each layer the broker synonyms in order (log.retention.ms, .minutes,
// .hours); entries before the first one named like the key itself are then dropped, exactly as
// Kafka does. The entry's source is the first synonym's, or DEFAULT_CONFIG when there is none.
import { BROKER_KEY_LIST, TOPIC_KEY_LIST, brokerConfigSynonyms, brokerKey } from './table.js';
import { ConfigSource, configTypeId, type ConfigKeyDef, type ConfigSourceId } from './types.js';
import { formatValue } from './values.js';
import { parseBrokerConfig, type BrokerConfig } from './broker.js';
import { brokerDefaultForTopicKey, type TopicOverrides } from './topic.js';
import { parseValue } from './values.js';

export interface ConfigSynonymEntry { readonly name: string; readonly value: string | null; readonly source: ConfigSourceId }
export interface DescribeConfigsEntry {
  readonly name: string;
  readonly value: string | null;
  readonly readOnly: boolean;
  readonly source: ConfigSourceId;
  readonly isSensitive: boolean;
  readonly synonyms: readonly ConfigSynonymEntry[];
  readonly configType: number;
  readonly documentation: string | null;
}
export interface DescribeOptions {
  readonly includeSynonyms?: boolean;
  readonly includeDocumentation?: boolean;
  /** Only these keys; unknown names are left out, as Kafka does. Absent or null means all. */
  readonly keys?: readonly string[] | null;
}
/** Dynamic broker configs from the metadata log: for this broker, and the cluster-wide default. */
export interface DynamicBrokerOverrides {
  readonly perBroker?: ReadonlyMap<string, string>;
  readonly clusterDefault?: ReadonlyMap<string, string>;
}

const EMPTY = new Map<string, string>();

/** The broker config as it stands with dynamic overrides on top of the static ones. */
export function effectiveBrokerConfig(broker: BrokerConfig, dynamic: DynamicBrokerOverrides = {}): BrokerConfig {
  if ((dynamic.perBroker?.size ?? 0) === 0 && (dynamic.clusterDefault?.size ?? 0) === 0) return broker;
  return parseBrokerConfig(new Map([...broker.originals, ...(dynamic.clusterDefault ?? EMPTY), ...(dynamic.perBroker ?? EMPTY)]));
}

function configSynonyms(name: string, broker: BrokerConfig, dynamic: DynamicBrokerOverrides, sensitive: boolean): ConfigSynonymEntry[] {
  const names = brokerConfigSynonyms(name);
  const layers: [ReadonlyMap<string, string>, ConfigSourceId][] = [
    [dynamic.perBroker ?? EMPTY, ConfigSource.DYNAMIC_BROKER_CONFIG],
    [dynamic.clusterDefault ?? EMPTY, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    [broker.originals, ConfigSource.STATIC_BROKER_CONFIG],
  ];
  const out: ConfigSynonymEntry[] = [];
  for (const [map, source] of layers) {
    for (const n of names) {
      const v = map.get(n);
      if (v !== undefined) out.push({ name: n, value: sensitive ? null : v, source });
    }
  }
  for (const n of names) {
    const d = brokerKey(n)?.defaultValue;
    if (d !== undefined && d !== null) out.push({ name: n, value: sensitive ? null : d, source: ConfigSource.DEFAULT_CONFIG });
  }
  const first = out.findIndex((s) => s.name === name);
  return first < 0 ? [] : out.slice(first);
}

function wanted(defs: readonly ConfigKeyDef[], keys: readonly string[] | null | undefined): ConfigKeyDef[] {
  if (keys === undefined || keys === null) return [...defs];
  const set = new Set(keys);
  return defs.filter((d) => set.has(d.name));
}

export function describeTopicConfigs(
  overrides: TopicOverrides, broker: BrokerConfig, options: DescribeOptions = {}, dynamic: DynamicBrokerOverrides = {},
): DescribeConfigsEntry[] {
  const effective = effectiveBrokerConfig(broker, dynamic);
  const given = overrides instanceof Map ? overrides as ReadonlyMap<string, string> : new Map(Object.entries(overrides));
  return wanted(TOPIC_KEY_LIST, options.keys).map((def) => {
    const sensitive = def.type === 'password';
    const raw = given.get(def.name);
    const typed = raw === undefined ? brokerDefaultForTopicKey(def, effective) : parseValue(def, raw);
    const value = sensitive ? null : formatValue(def.type, typed);
    const synonyms = def.brokerSynonym === undefined ? [] : configSynonyms(def.brokerSynonym, broker, dynamic, sensitive);
    if (raw !== undefined) synonyms.unshift({ name: def.name, value, source: ConfigSource.DYNAMIC_TOPIC_CONFIG });
    return entry(def, value, false, synonyms, options);
  });
}

/**
 * DescribeConfigs for a broker resource. `resource: 'broker'` describes this broker (all keys);
 * `'cluster-default'` (an empty resource name) lists only the cluster-wide dynamic defaults.
 */
export function describeBrokerConfigs(
  broker: BrokerConfig, dynamic: DynamicBrokerOverrides = {}, options: DescribeOptions = {},
  resource: 'broker' | 'cluster-default' = 'broker',
): DescribeConfigsEntry[] {
  const perBroker = resource === 'broker';
  const effective = effectiveBrokerConfig(broker, dynamic);
  const defs = perBroker ? BROKER_KEY_LIST : BROKER_KEY_LIST.filter((d) => dynamic.clusterDefault?.has(d.name) === true);
  return wanted(defs, options.keys).map((def) => {
    const sensitive = def.type === 'password';
    const typed = perBroker ? effective.values.get(def.name) : parseValue(def, dynamic.clusterDefault!.get(def.name)!);
    const value = sensitive ? null : formatValue(def.type, typed);
    const synonyms = configSynonyms(def.name, broker, dynamic, sensitive)
      .filter((s) => perBroker || s.source === ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
    return entry(def, value, def.dynamic === 'read-only', synonyms, options);
  });
}

function entry(def: ConfigKeyDef, value: string | null, readOnly: boolean, synonyms: ConfigSynonymEntry[], o: DescribeOptions): DescribeConfigsEntry {
  return {
    name: def.name, value, readOnly,
    source: synonyms[0]?.source ?? ConfigSource.DEFAULT_CONFIG,
    isSensitive: def.type === 'password',
    synonyms: o.includeSynonyms === true ? synonyms : [],
    configType: configTypeId(def.type),
    documentation: o.includeDocumentation === true ? def.doc : null,
  };
}
