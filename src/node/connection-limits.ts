// Kafka's connection quotas from the broker config: max.connections, max.connections.per.ip and
// its overrides, max.connection.creation.rate, and listener.name.<l>.max.connections and
// .max.connection.creation.rate, at start and again whenever this broker's dynamic configs (or the
// cluster-wide default) change them, as Kafka reconfigures its ConnectionQuotas. Limits apply to
// connections made after them (src/network/connection-quotas.ts enforces them).
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { parseConnectionsPerIpOverrides, type BrokerConfig, type BrokerConfigName } from '../config/index.js';
import { onBrokerConfigChange } from './dynamic-broker-config.js';
import type { ClientQuotasImage, MetadataImage } from '../metadata/index.js';
import { connectionAddress, type ConnectionLimits, type NetworkServer } from '../network/index.js';
import type { Logger } from '../util/index.js';

/**
 * The connection limits `config` sets for `listeners` (their names). A host name in the overrides
 * counts for every address it resolves to now (Kafka resolves them when the config is applied);
 * one that does not resolve is logged and left out.
 */
export async function connectionLimitsOf(config: BrokerConfig, listeners: readonly string[], log: Logger): Promise<ConnectionLimits> {
  const overrides = new Map<string, number>();
  for (const [host, count] of parseConnectionsPerIpOverrides(config.get('max.connections.per.ip.overrides') as string)) {
    if (isIP(host) !== 0) {
      overrides.set(connectionAddress(host), count);
      continue;
    }
    try {
      for (const a of await lookup(host, { all: true })) overrides.set(connectionAddress(a.address), count);
    } catch (e) {
      log.warn(`max.connections.per.ip.overrides: ${host} does not resolve (${(e as Error).message}); its entry is left out`);
    }
  }
  const perListener = (key: string) => {
    const out = new Map<string, number>();
    for (const name of listeners) {
      const prefixed = `listener.name.${name.toLowerCase()}.${key}` as BrokerConfigName;
      if (config.values.has(prefixed)) out.set(name.toUpperCase(), config.get(prefixed) as number);
    }
    return out;
  };
  return {
    connectionsMax: config.get('max.connections') as number,
    connectionsPerIpMax: config.get('max.connections.per.ip') as number,
    connectionsPerIpOverrides: overrides,
    listenerConnectionsMax: perListener('max.connections'),
    connectionCreationRateMax: config.get('max.connection.creation.rate') as number,
    listenerConnectionCreationRateMax: perListener('max.connection.creation.rate'),
    interBrokerListener: config.interBrokerListenerName,
  };
}

/** Applies dynamic changes of the connection limits to `network` as the metadata log brings them. */
export function applyConnectionLimitsOnConfigChange(
  metadata: { onDelta(listener: (delta: unknown, image: MetadataImage) => void): void },
  nodeId: number, staticConfig: BrokerConfig, network: NetworkServer<unknown>, log: Logger,
): void {
  const listeners = network.bound.map((l) => l.name);
  const relevant = (config: BrokerConfig) => JSON.stringify(
    [...config.values].filter(([k]) => k.startsWith('max.connection') || (k.startsWith('listener.name.') && /\.max\.connection(s|\.creation\.rate)$/.test(k))),
  );
  let applied = relevant(staticConfig);
  // Resolving host names takes a moment: changes are applied in the order they came.
  let chain = Promise.resolve();
  onBrokerConfigChange(metadata, nodeId, staticConfig, log, 'connection limits', (config) => {
    const wanted = relevant(config);
    if (wanted === applied) return;
    applied = wanted;
    chain = chain.then(async () => {
      network.setConnectionLimits(await connectionLimitsOf(config, listeners, log));
      log.info(`connection limits now max.connections=${config.get('max.connections')}, max.connections.per.ip=${config.get('max.connections.per.ip')}`
        + `${(config.get('max.connections.per.ip.overrides') as string) === '' ? '' : ` (overrides ${config.get('max.connections.per.ip.overrides')})`}`
        + `, max.connection.creation.rate=${config.get('max.connection.creation.rate')}`);
    }).catch((e) => log.error(`connection limits: ${(e as Error).message}`));
  });
}

/**
 * The connection_creation_rate client quota of an address, else of the default address (Kafka's IP
 * quotas, KIP-612), or null; addresses as the network layer writes them (connectionAddress). The
 * table is built again for each new quotas image.
 */
export function addressConnectionRates(image: () => ClientQuotasImage): (address: string) => number | null {
  let rates: { image: ClientQuotasImage; byAddress: Map<string, number>; fallback: number | null } | null = null;
  return (address) => {
    const now = image();
    if (now.isEmpty) return null;
    if (rates?.image !== now) {
      const byAddress = new Map<string, number>();
      let fallback: number | null = null;
      for (const { entity, quotas } of now.entities.values()) {
        const rate = quotas.get('connection_creation_rate');
        if (rate === undefined || entity.length !== 1 || entity[0]!.entityType !== 'ip') continue;
        if (entity[0]!.entityName === null) fallback = rate;
        else byAddress.set(connectionAddress(entity[0]!.entityName), rate);
      }
      rates = { image: now, byAddress, fallback };
    }
    return rates.byAddress.get(address) ?? rates.fallback;
  };
}
