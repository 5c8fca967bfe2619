// Rules a group's overrides must meet beyond each key's own (Kafka's GroupConfig.validateValues):
// the session timeouts, heartbeat intervals and record lock duration a group may set lie within the
// bounds the broker's group.consumer.* and group.share.* min/max keys give, and a session outlasts
// its heartbeat interval. The controller checks them with its own (static) broker config, as
// Kafka's ControllerConfigurationValidator does.
import type { BrokerConfig } from './broker.js';
import { GROUP_KEYS, type BrokerConfigName } from './table.js';
import type { ConfigProblem } from './types.js';

type GroupKey = keyof typeof GROUP_KEYS;

/** A group key and the broker keys that bound it, in Kafka's order of checks. */
const BOUNDED: readonly [GroupKey, BrokerConfigName, BrokerConfigName][] = [
  ['consumer.heartbeat.interval.ms', 'group.consumer.min.heartbeat.interval.ms', 'group.consumer.max.heartbeat.interval.ms'],
  ['consumer.session.timeout.ms', 'group.consumer.min.session.timeout.ms', 'group.consumer.max.session.timeout.ms'],
  ['share.heartbeat.interval.ms', 'group.share.min.heartbeat.interval.ms', 'group.share.max.heartbeat.interval.ms'],
  ['share.session.timeout.ms', 'group.share.min.session.timeout.ms', 'group.share.max.session.timeout.ms'],
  ['share.record.lock.duration.ms', 'group.share.min.record.lock.duration.ms', 'group.share.max.record.lock.duration.ms'],
];

/** The first rule a group's overrides (already valid key by key) break, or null. Unset keys take the group defaults. */
export function validateGroupConfigs(overrides: ReadonlyMap<string, string>, broker: BrokerConfig): ConfigProblem | null {
  const value = (k: GroupKey): number => Number(overrides.get(k) ?? GROUP_KEYS[k].defaultValue);
  const problem = (name: string, message: string): ConfigProblem => ({ name, errorCode: 'INVALID_CONFIG', message });
  for (const [k, min, max] of BOUNDED) {
    if (value(k) < Number(broker.get(min))) return problem(k, `${k} must be greater than or equal to ${min}`);
    if (value(k) > Number(broker.get(max))) return problem(k, `${k} must be less than or equal to ${max}`);
  }
  if (value('consumer.session.timeout.ms') <= value('consumer.heartbeat.interval.ms')) {
    return problem('consumer.session.timeout.ms', 'consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms');
  }
  if (value('share.session.timeout.ms') <= value('share.heartbeat.interval.ms')) {
    return problem('share.session.timeout.ms', 'share.session.timeout.ms must be greater than share.heartbeat.interval.ms');
  }
  return null;
}
