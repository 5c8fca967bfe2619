// The config room's door: the key table, the properties parser, broker and topic configs,
// DescribeConfigs entries and IncrementalAlterConfigs.
export {
  ConfigSource, ConfigTypeId, configTypeId, ConfigError,
  type ConfigType, type ConfigKeyDef, type ConfigProblem, type ConfigSourceId, type DynamicMode,
  type Importance, type Validator, type ValueOf, type JsTypeOf,
} from './types.js';
export {
  TOPIC_KEYS, BROKER_KEYS, TOPIC_KEY_LIST, BROKER_KEY_LIST, COMPRESSION_TYPES, topicKey, brokerKey, listenerPrefixedKey,
  GROUP_KEYS, CLIENT_METRICS_KEYS, GROUP_KEY_LIST, CLIENT_METRICS_KEY_LIST, LINK_KEYS, LINK_KEY_LIST, REFUSED_BROKER_KEYS, REFUSED_TOPIC_KEYS,
  keyOf, keyNamesOf, refusedReason, isoDurationMs, type ConfigKind,
  brokerConfigSynonyms, parseConnectionsPerIpOverrides, type TopicConfigName, type BrokerConfigName,
} from './table.js';
export { parseValue, formatValue, describeRule } from './values.js';
export { parseProperties, serializeProperties } from './properties.js';
export { closestKey } from './suggest.js';
export {
  parseBrokerConfig, listenerName, BrokerConfigError, SINGLE_NODE_DEFAULTS,
  type BrokerConfig, type ValueSource, type PropsInput,
} from './broker.js';
export {
  resolveTopicConfig, validateTopicConfigs, brokerDefaultForTopicKey, camelCaseOf, TopicConfigError,
  type TopicConfig, type TopicOverrides,
} from './topic.js';
export {
  describeTopicConfigs, describeBrokerConfigs, describeResourceConfigs, effectiveBrokerConfig, documentation,
  type DescribeConfigsEntry, type ConfigSynonymEntry, type DescribeOptions, type DynamicBrokerOverrides,
} from './describe.js';
export { validateGroupConfigs } from './group.js';
export { applyIncrementalOps, AlterConfigOp, type AlterConfigOpInput, type IncrementalResult, type IncrementalOptions } from './incremental.js';
export { renderConfigReference } from './reference.js';
