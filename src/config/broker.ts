// The broker's configuration: server.properties plus --set overrides, every key resolved to a typed
// value with the source it came from, and Kafka's derived settings (retention in ms from minutes or
// hours, advertised listeners from listeners). The result is frozen; dynamic changes make a new one.
import { BROKER_KEYS, BROKER_KEY_LIST, brokerKey, listenerPrefixedKey, type BrokerConfigName } from './table.js';
import { ConfigError, type ConfigKeyDef, type ConfigProblem, type ValueOf } from './types.js';
import { parseValue } from './values.js';
import { unknownKeyMessage } from './suggest.js';

export type ValueSource = 'default' | 'static' | 'override';
export type PropsInput = ReadonlyMap<string, string> | Readonly<Record<string, string>>;

/** Thrown by parseBrokerConfig with every problem found, not just the first. */
export class BrokerConfigError extends ConfigError {
  override name = 'BrokerConfigError';
  constructor(readonly problems: readonly ConfigProblem[]) {
    super(problems.map((p) => p.message).join('\n'), problems[0]?.name ?? '');
  }
}

export interface BrokerConfig {
  /** Every broker key's typed value (null where Kafka has no default and none was set). */
  readonly values: ReadonlyMap<string, unknown>;
  readonly sources: ReadonlyMap<string, ValueSource>;
  /** The strings that were set (file, then overrides), as DescribeConfigs reports static configs. */
  readonly originals: ReadonlyMap<string, string>;
  get<K extends BrokerConfigName>(name: K): ValueOf<(typeof BROKER_KEYS)[K]>;
  source(name: string): ValueSource;
  readonly nodeId: number;
  readonly processRoles: readonly ('broker' | 'controller')[];
  readonly listeners: readonly string[];
  /** advertised.listeners, or listeners without the controller ones when unset. */
  readonly advertisedListeners: readonly string[];
  readonly controllerListenerNames: readonly string[];
  /** listener.security.protocol.map with Kafka's default for controller listeners missing from it. */
  readonly securityProtocolMap: ReadonlyMap<string, string>;
  /** The listener brokers reach each other on: inter.broker.listener.name, else the one named after security.inter.broker.protocol. */
  readonly interBrokerListenerName: string;
  /** A per-listener setting: listener.name.<listener>.<key> when set, else <key>. */
  listenerValue(listener: string, key: BrokerConfigName): unknown;
  readonly logDirs: readonly string[];
  readonly logRetentionMs: number;
  readonly logRollMs: number;
  readonly logRollJitterMs: number;
  readonly logFlushIntervalMs: number;
}

function entriesOf(props: PropsInput | undefined): [string, string][] {
  if (props === undefined) return [];
  return props instanceof Map ? [...props] : Object.entries(props as Record<string, string>);
}

export function parseBrokerConfig(props: PropsInput, overrides?: PropsInput): BrokerConfig {
  const problems: ConfigProblem[] = [];
  const originals = new Map<string, string>();
  const sources = new Map<string, ValueSource>();
  const plugins = pluginPrefixes(props, overrides);
  for (const [source, input] of [['static', props], ['override', overrides]] as const) {
    for (const [name, raw] of entriesOf(input)) {
      // Settings for the remote storage and metadata managers (rsm.config.*, rlmm.config.*) are
      // theirs to check; they are kept as strings in originals (src/tiered reads them).
      if (brokerKey(name) === undefined && !plugins.some((p) => name.startsWith(p) && name.length > p.length)) {
        problems.push({ name, errorCode: 'INVALID_CONFIG', message: unknownKeyMessage(name, 'broker') });
        continue;
      }
      originals.set(name, raw);
      sources.set(name, source);
    }
  }
  const values = new Map<string, unknown>();
  for (const def of BROKER_KEY_LIST) {
    const raw = originals.get(def.name) ?? def.defaultValue;
    if (!sources.has(def.name)) sources.set(def.name, 'default');
    try {
      values.set(def.name, raw === null ? null : parseValue(def as ConfigKeyDef, raw));
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      problems.push({ name: def.name, errorCode: 'INVALID_CONFIG', message: e.message });
    }
  }
  // Per-listener overrides (listener.name.<l>.ssl.*) are typed like the key they override.
  for (const [name, raw] of originals) {
    if (listenerPrefixedKey(name) === undefined) continue;
    try {
      values.set(name, parseValue(brokerKey(name)!, raw));
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      problems.push({ name, errorCode: 'INVALID_CONFIG', message: e.message });
    }
  }
  if (problems.length === 0) checkCrossKeyRules(values, originals, problems);
  if (problems.length > 0) throw new BrokerConfigError(problems);
  return buildConfig(values, sources, originals);
}

/** The prefixes of remote storage and metadata manager settings, as set or by default. */
function pluginPrefixes(props: PropsInput, overrides: PropsInput | undefined): string[] {
  const given = new Map([...entriesOf(props), ...entriesOf(overrides)]);
  return ['remote.log.storage.manager.impl.prefix', 'remote.log.metadata.manager.impl.prefix']
    .map((k) => (given.get(k) ?? (BROKER_KEYS[k as BrokerConfigName].defaultValue as string)).trim())
    .filter((p) => p !== '');
}

function checkCrossKeyRules(values: Map<string, unknown>, originals: Map<string, string>, problems: ConfigProblem[]): void {
  const bad = (name: string, message: string): void => { problems.push({ name, errorCode: 'INVALID_CONFIG', message }); };
  const nodeId = values.get('node.id') as number;
  const brokerId = values.get('broker.id') as number;
  if (originals.has('node.id') && originals.has('broker.id') && nodeId !== brokerId) {
    bad('broker.id', `broker.id (${brokerId}) must match node.id (${nodeId}) when both are set`);
  }
  checkListenerNames(values, originals, bad);
  const roles = values.get('process.roles') as string[];
  if (roles.length === 0) return;
  if (Math.max(nodeId, brokerId) < 0) bad('node.id', 'node.id must be set to a non-negative id when process.roles is set');
  if (new Set(roles).size !== roles.length) bad('process.roles', `process.roles has duplicate roles: ${roles.join(',')}`);
  const voters = values.get('controller.quorum.voters') as string[];
  const bootstrap = values.get('controller.quorum.bootstrap.servers') as string[];
  if (voters.length === 0 && bootstrap.length === 0) {
    bad('controller.quorum.voters', 'one of controller.quorum.voters or controller.quorum.bootstrap.servers must be set');
  }
  for (const v of voters) {
    if (!/^\d+@.+:\d+$/.test(v)) bad('controller.quorum.voters', `controller.quorum.voters entry ${JSON.stringify(v)} is not id@host:port`);
  }
  const controllerNames = splitNames(values.get('controller.listener.names') as string | null);
  if (controllerNames.length === 0) bad('controller.listener.names', 'controller.listener.names must be set when process.roles is set');
  const listenerNames = (values.get('listeners') as string[]).map(listenerName);
  if (roles.includes('controller')) {
    for (const n of controllerNames) if (!listenerNames.includes(n)) bad('listeners', `listeners must include the controller listener ${n}`);
  }
  if (roles.includes('broker') && !roles.includes('controller')) {
    for (const n of controllerNames) if (listenerNames.includes(n)) bad('listeners', `a broker-only node must not listen on controller listener ${n}`);
  }
  if (roles.includes('broker')) {
    // Clients must never be sent to a controller endpoint (Kafka refuses this too).
    const advertised = ((values.get('advertised.listeners') as string[] | null) ?? []).map(listenerName);
    for (const n of controllerNames) {
      if (advertised.includes(n)) bad('advertised.listeners', `advertised.listeners must not contain the controller listener ${n} (controller.listener.names)`);
    }
  }
  const id = Math.max(nodeId, brokerId);
  const voterIds = voters.map((v) => Number(v.slice(0, v.indexOf('@'))));
  if (roles.includes('controller') && voters.length > 0 && id >= 0 && !voterIds.includes(id)) {
    bad('controller.quorum.voters', `node.id ${id} has the controller role but is not in controller.quorum.voters (${voters.join(',')})`);
  }
}

function securityProtocolMap(values: ReadonlyMap<string, unknown>, bad?: (name: string, message: string) => void): Map<string, string> {
  const map = new Map<string, string>();
  // As Kafka: a controller listener missing from the map speaks the protocol it is named after, or PLAINTEXT.
  for (const n of splitNames(values.get('controller.listener.names') as string | null)) {
    map.set(n.toUpperCase(), SECURITY_PROTOCOL_NAMES.includes(n.toUpperCase()) ? n.toUpperCase() : 'PLAINTEXT');
  }
  for (const pair of splitNames(values.get('listener.security.protocol.map') as string)) {
    const [name, protocol] = pair.split(':').map((x) => x.trim().toUpperCase());
    if (name === undefined || protocol === undefined || name === '' || !SECURITY_PROTOCOL_NAMES.includes(protocol)) {
      bad?.('listener.security.protocol.map', `listener.security.protocol.map entry ${JSON.stringify(pair)} is not NAME:PROTOCOL with a known protocol`);
    } else map.set(name, protocol);
  }
  return map;
}

function checkListenerNames(values: Map<string, unknown>, originals: Map<string, string>, bad: (name: string, message: string) => void): void {
  const map = securityProtocolMap(values, bad);
  const listeners = [...(values.get('listeners') as string[]), ...((values.get('advertised.listeners') as string[] | null) ?? [])];
  for (const l of listeners) {
    if (!/^[A-Za-z0-9_]+:\/\/(\[[0-9a-fA-F:.]+\]|[^:/\s]*):\d+$/.test(l)) bad('listeners', `listener ${JSON.stringify(l)} is not NAME://host:port`);
    else if (!map.has(listenerName(l))) bad('listener.security.protocol.map', `listener name ${listenerName(l)} is not in listener.security.protocol.map`);
  }
  if (originals.has('inter.broker.listener.name') && originals.has('security.inter.broker.protocol')) {
    bad('inter.broker.listener.name', 'Only one of inter.broker.listener.name and security.inter.broker.protocol may be set');
  }
  for (const name of originals.keys()) {
    const p = listenerPrefixedKey(name);
    if (p !== undefined && !map.has(p.listener)) bad(name, `${name}: listener ${p.listener} is not in listener.security.protocol.map`);
  }
}

const SECURITY_PROTOCOL_NAMES = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

function splitNames(s: string | null): string[] {
  return s === null ? [] : s.split(',').map((x) => x.trim()).filter((x) => x !== '');
}

/** The listener name of a name://host:port entry. */
export function listenerName(listener: string): string {
  const i = listener.indexOf('://');
  return (i < 0 ? listener : listener.slice(0, i)).toUpperCase();
}

function buildConfig(values: Map<string, unknown>, sources: Map<string, ValueSource>, originals: Map<string, string>): BrokerConfig {
  const v = <T>(name: string): T => values.get(name) as T;
  const nodeId = originals.has('node.id') || !originals.has('broker.id') ? v<number>('node.id') : v<number>('broker.id');
  const controllerListenerNames = splitNames(v<string | null>('controller.listener.names'));
  const listeners = v<string[]>('listeners');
  const advertised = v<string[] | null>('advertised.listeners') ?? listeners;
  const logDirsRaw = v<string | null>('log.dirs') ?? v<string>('log.dir');
  const hourMs = 3_600_000;
  const protocols = securityProtocolMap(values);
  const config: BrokerConfig = {
    values, sources, originals,
    get: (name) => values.get(name) as never,
    source: (name) => sources.get(name) ?? 'default',
    nodeId,
    processRoles: Object.freeze([...v<('broker' | 'controller')[]>('process.roles')]),
    listeners,
    advertisedListeners: Object.freeze(advertised.filter((l) => !controllerListenerNames.includes(listenerName(l)))),
    controllerListenerNames: Object.freeze(controllerListenerNames),
    securityProtocolMap: protocols,
    interBrokerListenerName: (v<string | null>('inter.broker.listener.name') ?? v<string>('security.inter.broker.protocol')).toUpperCase(),
    listenerValue: (listener, key) => {
      const prefixed = `listener.name.${listener.toLowerCase()}.${key}`;
      return values.has(prefixed) ? values.get(prefixed) : values.get(key);
    },
    logDirs: Object.freeze(splitNames(logDirsRaw)),
    logRetentionMs: retentionMs(v('log.retention.ms'), v('log.retention.minutes'), v('log.retention.hours')),
    logRollMs: v<number | null>('log.roll.ms') ?? v<number>('log.roll.hours') * hourMs,
    logRollJitterMs: v<number | null>('log.roll.jitter.ms') ?? v<number>('log.roll.jitter.hours') * hourMs,
    logFlushIntervalMs: v<number | null>('log.flush.interval.ms') ?? v<number>('log.flush.scheduler.interval.ms'),
  };
  for (const x of values.values()) if (Array.isArray(x)) Object.freeze(x);
  Object.freeze(values); Object.freeze(sources); Object.freeze(originals);
  return Object.freeze(config);
}

function retentionMs(ms: number | null, minutes: number | null, hours: number): number {
  const value = ms ?? (minutes !== null ? minutes * 60_000 : hours * 3_600_000);
  return value < 0 ? -1 : value;
}

/** What `logline server` with no arguments runs: one process that is broker and controller. */
export const SINGLE_NODE_DEFAULTS: Readonly<Record<string, string>> = Object.freeze({
  'process.roles': 'broker,controller',
  'node.id': '1',
  'listeners': 'PLAINTEXT://:9092,CONTROLLER://:9093',
  'advertised.listeners': 'PLAINTEXT://localhost:9092',
  'controller.listener.names': 'CONTROLLER',
  'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL',
  'controller.quorum.voters': '1@localhost:9093',
  'offsets.topic.replication.factor': '1',
  'transaction.state.log.replication.factor': '1',
  'transaction.state.log.min.isr': '1',
});
