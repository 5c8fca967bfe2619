// DescribeConfigs: entries with value, source and synonyms by Kafka's rules (ConfigHelper). A
// synonym list walks the layers in a fixed order — dynamic per-broker, dynamic cluster default,
// static, default — and within each layer the broker synonyms in order (log.retention.ms, .minutes,
// .hours); entries before the first one named like the key itself are then dropped, exactly as
// Kafka does. The entry's source is the first synonym's, or DEFAULT_CONFIG when there is none.
import {
  BROKER_KEY_LIST, CLIENT_METRICS_KEY_LIST, GROUP_KEY_LIST, LINK_KEY_LIST, TOPIC_KEY_LIST, brokerConfigSynonyms, brokerKey, listenerPrefixedKey,
} from './table.js';
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
  // A listener override's synonym is its base key (DynamicBrokerConfig.brokerConfigSynonyms with
  // matchListenerOverride), so the base key's layers follow the override's.
  const prefixed = listenerPrefixedKey(name);
  const names = prefixed === undefined ? brokerConfigSynonyms(name) : [name, prefixed.key];
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
    if (listenerPrefixedKey(n) !== undefined) continue; // an override has no default of its own
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
  const defs = perBroker ? [...BROKER_KEY_LIST, ...listenerOverrides(broker, dynamic)] : [...BROKER_KEY_LIST, ...listenerOverrides(broker, { clusterDefault: dynamic.clusterDefault })]
    .filter((d) => dynamic.clusterDefault?.has(d.name) === true);
  return wanted(defs, options.keys).map((def) => {
    const sensitive = def.type === 'password';
    const typed = perBroker ? effective.values.get(def.name) : parseValue(def, dynamic.clusterDefault!.get(def.name)!);
    const value = sensitive ? null : formatValue(def.type, typed);
    const synonyms = configSynonyms(def.name, broker, dynamic, sensitive)
      .filter((s) => perBroker || s.source === ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
    return entry(def, value, def.dynamic === 'read-only', synonyms, options);
  });
}

/** The listener.name.<l>. overrides set in any layer; Kafka describes them beside the base keys. */
function listenerOverrides(broker: BrokerConfig, dynamic: DynamicBrokerOverrides): ConfigKeyDef[] {
  const names = new Set([...broker.originals.keys(), ...(dynamic.perBroker?.keys() ?? []), ...(dynamic.clusterDefault?.keys() ?? [])]);
  return [...names].filter((n) => listenerPrefixedKey(n) !== undefined).sort().map((n) => brokerKey(n)!);
}

/**
 * DescribeConfigs for a GROUP or CLIENT_METRICS resource: each key's override (source GROUP_CONFIG
 * or CLIENT_METRICS_CONFIG), else for a group key its broker synonym's value, else the default.
 */
export function describeResourceConfigs(
  kind: 'group' | 'client-metrics' | 'link', overrides: ReadonlyMap<string, string>, broker: BrokerConfig,
  options: DescribeOptions = {}, dynamic: DynamicBrokerOverrides = {},
): DescribeConfigsEntry[] {
  const effective = effectiveBrokerConfig(broker, dynamic);
  const source = kind === 'group' ? ConfigSource.GROUP_CONFIG : kind === 'link' ? ConfigSource.UNKNOWN : ConfigSource.CLIENT_METRICS_CONFIG;
  return wanted(kind === 'group' ? GROUP_KEY_LIST : kind === 'link' ? LINK_KEY_LIST : CLIENT_METRICS_KEY_LIST, options.keys).map((def) => {
    const raw = overrides.get(def.name);
    const typed = raw !== undefined ? parseValue(def, raw)
      : def.brokerSynonym !== undefined ? effective.values.get(def.brokerSynonym) : def.defaultValue === null ? null : parseValue(def, def.defaultValue);
    // A password (a link's sasl.jaas.config, sasl.password, ...) is never sent back, as Kafka's DescribeConfigs.
    const sensitive = def.type === 'password';
    const synonyms = def.brokerSynonym === undefined ? [] : configSynonyms(def.brokerSynonym, broker, dynamic, sensitive);
    if (raw !== undefined) synonyms.unshift({ name: def.name, value: sensitive ? null : raw, source });
    return entry(def, sensitive ? null : formatValue(def.type, typed), false, synonyms, options);
  });
}

function entry(def: ConfigKeyDef, value: string | null, readOnly: boolean, synonyms: ConfigSynonymEntry[], o: DescribeOptions): DescribeConfigsEntry {
  return {
    name: def.name, value, readOnly,
    source: synonyms[0]?.source ?? ConfigSource.DEFAULT_CONFIG,
    isSensitive: def.type === 'password',
    synonyms: o.includeSynonyms === true ? synonyms : [],
    configType: configTypeId(def.type),
    documentation: o.includeDocumentation === true ? documentation(def) : null,
  };
}

/** A key's documentation; an unused key's says so, whatever its doc line starts with. */
export function documentation(def: ConfigKeyDef): string {
  return def.unused === true && !def.doc.startsWith('Accepted') ? `Accepted, not used by Logline. ${def.doc}` : def.doc;
}
