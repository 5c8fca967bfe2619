// This broker's config as dynamic changes leave it: the static config, then the cluster-wide
// default, then its own dynamic configs from the metadata log (Kafka's DynamicBrokerConfig layers).
import { effectiveBrokerConfig, type BrokerConfig } from '../config/index.js';
import type { MetadataImage } from '../metadata/index.js';
import type { Logger } from '../util/index.js';

/**
 * Calls `apply` with the effective config each time a metadata delta changes either dynamic layer
 * of `nodeId`. A combination that does not parse is logged (as `what`) and skipped.
 */
export function onBrokerConfigChange(
  metadata: { onDelta(listener: (delta: unknown, image: MetadataImage) => void): void },
  nodeId: number, staticConfig: BrokerConfig, log: Logger, what: string, apply: (config: BrokerConfig) => void,
): void {
  let lastPerBroker: unknown = null;
  let lastDefault: unknown = null;
  metadata.onDelta((_delta, image) => {
    const perBroker = image.configs.brokerConfigs(nodeId);
    const clusterDefault = image.configs.brokerConfigs('');
    if (perBroker === lastPerBroker && clusterDefault === lastDefault) return;
    lastPerBroker = perBroker;
    lastDefault = clusterDefault;
    let config: BrokerConfig;
    try {
      config = effectiveBrokerConfig(staticConfig, { perBroker, clusterDefault });
    } catch (e) {
      log.error(`${what}: dynamic broker configs do not parse: ${(e as Error).message}`);
      return;
    }
    apply(config);
  });
}
