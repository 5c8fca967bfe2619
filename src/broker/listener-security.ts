// What each listener's security protocol asks of the network: TLS settings for an SSL listener
// (listener.name.<l>.ssl.* over ssl.*), and the TLS client settings the broker's own connections
// use towards another node's listener (inter-broker replication, the controller), as Kafka does:
// the settings of the listener they connect to, with the broker's own keystore and truststore.
import type { ConnectionOptions, TlsOptions } from 'node:tls';
import { effectiveBrokerConfig, type BrokerConfig, type BrokerConfigName } from '../config/index.js';
import type { MetadataImage } from '../metadata/index.js';
import { clientTls, listenerTls, type ListenerTls, type SslValue } from '../security/index.js';
import type { ListenerSpec, Logger, NetworkServer } from './network.js';

function settingsOf(config: BrokerConfig, listener: string): SslValue {
  return (key) => config.listenerValue(listener, key as BrokerConfigName);
}

function protocolOf(config: BrokerConfig, listener: string): string {
  const protocol = config.securityProtocolMap.get(listener.toUpperCase());
  if (protocol === undefined) throw new Error(`listener ${listener} is not in listener.security.protocol.map`);
  if (protocol !== 'PLAINTEXT' && protocol !== 'SSL') throw new Error(`listener ${listener}: security protocol ${protocol} is not supported yet (PLAINTEXT, SSL)`);
  return protocol;
}

/** The TLS settings of listener `name` (an SSL listener), errors naming the listener. */
export function listenerTlsOf(config: BrokerConfig, name: string): ListenerTls {
  try {
    return listenerTls(settingsOf(config, name));
  } catch (e) {
    throw new Error(`listener ${name}: ${(e as Error).message}`);
  }
}

/** A listener with what its security protocol needs (TLS settings for SSL). */
export function securedListener(spec: ListenerSpec, config: BrokerConfig): ListenerSpec {
  return protocolOf(config, spec.name) === 'SSL' ? { ...spec, tls: listenerTlsOf(config, spec.name) } : spec;
}

/** TLS client settings for connecting to another node's listener `name`, or undefined (PLAINTEXT). */
export function clientTlsFor(config: BrokerConfig, name: string): ConnectionOptions | undefined {
  // A name this node does not map (the inter-broker default PLAINTEXT where no listener has that
  // name) connects as before: plaintext, to the first endpoint the peer registered.
  if (!config.securityProtocolMap.has(name.toUpperCase()) || protocolOf(config, name) !== 'SSL') return undefined;
  try {
    return clientTls(settingsOf(config, name));
  } catch (e) {
    throw new Error(`listener ${name}: ${(e as Error).message}`);
  }
}

/** The controller listener's TLS (serving it when this node is a controller, reaching it always), or undefined. */
export function controllerTlsFor(config: BrokerConfig): { server?: TlsOptions; client: ConnectionOptions } | undefined {
  const name = config.controllerListenerNames[0];
  if (name === undefined) return undefined;
  const client = clientTlsFor(config, name);
  if (client === undefined) return undefined;
  const serves = config.processRoles.includes('controller');
  return { client, ...(serves ? { server: listenerTlsOf(config, name).server } : {}) };
}

/** The ssl.* values of a listener that a reload compares (the keystore and truststore it would load). */
function tlsFingerprint(config: BrokerConfig, name: string): string {
  return JSON.stringify(['ssl.keystore.type', 'ssl.keystore.location', 'ssl.keystore.password', 'ssl.key.password', 'ssl.keystore.certificate.chain', 'ssl.keystore.key',
    'ssl.truststore.type', 'ssl.truststore.location', 'ssl.truststore.password', 'ssl.truststore.certificates', 'ssl.enabled.protocols', 'ssl.cipher.suites']
    .map((k) => config.listenerValue(name, k as BrokerConfigName)));
}

/**
 * Kafka's dynamic keystore update: when this broker's dynamic configs change a TLS listener's
 * keystore or truststore (listener.name.<l>.ssl.keystore.location, ...), the listener loads the
 * new files; new connections get the new certificate, open ones keep theirs. A store that fails to
 * load is logged and the old one stays.
 */
export function reloadTlsOnConfigChange(
  metadata: { onDelta(listener: (delta: unknown, image: MetadataImage) => void): void },
  nodeId: number, staticConfig: BrokerConfig, network: NetworkServer<unknown>, log: Logger,
): void {
  const tlsListeners = network.bound.filter((l) => l.tls !== undefined).map((l) => l.name);
  if (tlsListeners.length === 0) return;
  const seen = new Map(tlsListeners.map((n) => [n, tlsFingerprint(staticConfig, n)]));
  let lastDynamic: unknown = null;
  metadata.onDelta((_delta, image) => {
    const perBroker = image.configs.brokerConfigs(nodeId);
    const clusterDefault = image.configs.brokerConfigs('');
    if (perBroker === lastDynamic) return;
    lastDynamic = perBroker;
    let config: BrokerConfig;
    try {
      config = effectiveBrokerConfig(staticConfig, { perBroker, clusterDefault });
    } catch (e) {
      log.error(`TLS reload: dynamic broker configs do not parse: ${(e as Error).message}`);
      return;
    }
    for (const name of tlsListeners) {
      const fingerprint = tlsFingerprint(config, name);
      if (fingerprint === seen.get(name)) continue;
      try {
        network.reloadTls(name, listenerTlsOf(config, name));
        seen.set(name, fingerprint);
        log.info(`listener ${name}: TLS keystore and truststore reloaded`);
      } catch (e) {
        log.error(`TLS reload of listener ${name} failed, keeping the current keystore: ${(e as Error).message}`);
      }
    }
  });
}
