// Kafka's dynamic keystore update: a TLS listener loads new keystore and truststore files when
// this broker's dynamic configs (or the cluster-wide default) change them.
import { statSync } from 'node:fs';
import type { BrokerConfig, BrokerConfigName } from '../config/index.js';
import type { MetadataImage } from '../metadata/index.js';
import { listenerTlsOf, type NetworkServer } from '../network/index.js';
import type { Logger } from '../util/index.js';
import { onBrokerConfigChange } from './dynamic-broker-config.js';

/**
 * The ssl.* values of a listener that a reload compares (the keystore and truststore it would load),
 * with the store files' size and modification time: as in Kafka, setting a store's location to the
 * path it already has reloads it when the file there was replaced.
 */
function tlsFingerprint(config: BrokerConfig, name: string): string {
  const values = ['ssl.keystore.type', 'ssl.keystore.location', 'ssl.keystore.password', 'ssl.key.password', 'ssl.keystore.certificate.chain', 'ssl.keystore.key',
    'ssl.truststore.type', 'ssl.truststore.location', 'ssl.truststore.password', 'ssl.truststore.certificates', 'ssl.enabled.protocols', 'ssl.cipher.suites']
    .map((k) => config.listenerValue(name, k as BrokerConfigName));
  const files = ['ssl.keystore.location', 'ssl.truststore.location'].map((k) => {
    const path = config.listenerValue(name, k as BrokerConfigName);
    if (typeof path !== 'string' || path === '') return null;
    try {
      const st = statSync(path);
      return [st.size, st.mtimeMs];
    } catch {
      return 'missing';
    }
  });
  return JSON.stringify([values, files]);
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
  onBrokerConfigChange(metadata, nodeId, staticConfig, log, 'TLS reload', (config) => {
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
