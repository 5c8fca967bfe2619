// min.insync.replicas as the controller reads it for KIP-966's eligible leader replicas.
import { ConfigResourceType, type MetadataImage } from '../metadata/index.js';

export const MIN_INSYNC_REPLICAS = 'min.insync.replicas';

/**
 * A topic's min.insync.replicas: its config, else the cluster's dynamic one, else the static
 * `staticDefault`. The ELR rule caps it at the partition's replica count (effectiveMinIsr).
 */
export function topicMinIsr(image: MetadataImage, topicName: string, staticDefault: number): number {
  const value = image.configs.topicConfigs(topicName).get(MIN_INSYNC_REPLICAS)
    ?? image.configs.configs(ConfigResourceType.BROKER, '').get(MIN_INSYNC_REPLICAS);
  const parsed = value === undefined ? NaN : Number(value);
  return Number.isInteger(parsed) && parsed >= 1 ? parsed : staticDefault;
}

/**
 * Kafka's effective min ISR: min.insync.replicas capped at the replication factor, so a partition
 * with fewer replicas is not held for ever. Kafka takes partition 0's replica count for the whole
 * topic; here each partition's own, which a reassignment of another partition does not change.
 */
export function effectiveMinIsr(minIsr: number, replicaCount: number): number {
  return Math.max(1, Math.min(minIsr, replicaCount));
}
