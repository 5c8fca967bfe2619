// A topic's configs through DescribeConfigs (any broker answers from its metadata), with where each
// value comes from, as kafka-configs --describe --all shows them.
import { ApiKey } from '../protocol/index.js';
import { KafkaError, type ClusterClient } from './cluster.js';

// Kafka's DescribeConfigsResponse.ConfigSource ids.
const SOURCES = ['UNKNOWN', 'DYNAMIC_TOPIC_CONFIG', 'DYNAMIC_BROKER_CONFIG', 'DYNAMIC_DEFAULT_BROKER_CONFIG', 'STATIC_BROKER_CONFIG', 'DEFAULT_CONFIG', 'DYNAMIC_BROKER_LOGGER_CONFIG', 'CLIENT_METRICS_CONFIG', 'GROUP_CONFIG'];

export type TopicConfig = { name: string; value: string | null; source: string; readOnly: boolean; sensitive: boolean };

export async function describeTopicConfigs(client: ClusterClient, topic: string): Promise<TopicConfig[]> {
  const c = await client.any();
  if (!c.versions.has(ApiKey.DescribeConfigs)) return [];
  const r = await client.admin(ApiKey.DescribeConfigs, { resources: [{ resourceType: 2, resourceName: topic, configurationKeys: null }], includeSynonyms: false, includeDocumentation: false }, 4);
  const res = r.results[0];
  if (res.errorCode !== 0) throw new KafkaError(res.errorCode, res.errorMessage);
  return res.configs.map((e: any) => ({ name: e.name, value: e.value, source: SOURCES[e.configSource] ?? String(e.configSource), readOnly: e.readOnly === true, sensitive: e.isSensitive === true }));
}
