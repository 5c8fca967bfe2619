// Describe and alter configs of topics and of this broker. Reads come from the metadata view's
// dynamic configs over the static broker config; changes go to the controller (ControllerChannel),
// which validates them against its latest configs (planConfigChange) and commits ConfigRecords, so
// they live in the metadata like everything else.
import {
  applyIncrementalOps, describeBrokerConfigs, describeResourceConfigs, describeTopicConfigs, validateTopicConfigs,
  type BrokerConfig, type ConfigKind, type DescribeConfigsEntry,
} from '../config/index.js';
import { ErrorCode } from '../protocol/index.js';
import type { EmittedRecord } from '../controller/index.js';
import type { MetadataView } from './services.js';
import type { ConfigChange, ControllerChannel, ResourceResult } from './controller-channel.js';
import type { ForwardedFor } from './envelope.js';

export type { ResourceResult } from './controller-channel.js';

/** Kafka's ConfigResource.Type ids, and Logline's own LINK (64): a cluster link's settings (issue 35). */
export const ResourceType = { Topic: 2, Broker: 4, BrokerLogger: 8, ClientMetrics: 16, Group: 32, Link: 64 } as const;

/** The config kind of a resource type that has a key table (BROKER_LOGGER has none here). */
function kindOf(resourceType: number): ConfigKind | undefined {
  switch (resourceType) {
    case ResourceType.Topic: return 'topic';
    case ResourceType.Broker: return 'broker';
    case ResourceType.Group: return 'group';
    case ResourceType.ClientMetrics: return 'client-metrics';
    case ResourceType.Link: return 'link';
    default: return undefined;
  }
}
const CONFIG_RECORD = 4;

const ok: ResourceResult = { errorCode: 0, errorMessage: null };
const fail = (errorCode: number, errorMessage: string): ResourceResult => ({ errorCode, errorMessage });

export class ConfigAdmin {
  constructor(
    private readonly view: () => MetadataView,
    private readonly brokerConfig: () => BrokerConfig,
    private readonly nodeId: () => number,
    private readonly controller: () => ControllerChannel,
    /**
     * The controller's ConfigAdmin (controller listener): a change for any broker id is taken, as
     * Kafka's ControllerApis does; the broker that forwarded it checked that it names itself.
     */
    private readonly anyBroker = false,
  ) {}

  private brokerResource(name: string): 'broker' | 'cluster-default' | null {
    if (name === '') return 'cluster-default';
    return name === String(this.nodeId()) || (this.anyBroker && /^\d+$/.test(name)) ? 'broker' : null;
  }

  private dynamic() {
    const v = this.view();
    return { perBroker: v.configs(ResourceType.Broker, String(this.nodeId())), clusterDefault: v.configs(ResourceType.Broker, '') };
  }

  describe(resourceType: number, name: string, keys: string[] | null, includeSynonyms: boolean, includeDocumentation: boolean):
    ResourceResult & { entries: DescribeConfigsEntry[] } {
    const options = { keys, includeSynonyms, includeDocumentation };
    if (resourceType === ResourceType.Topic) {
      if (!this.view().topic(name)) return { ...fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${name} does not exist`), entries: [] };
      return { ...ok, entries: describeTopicConfigs(this.view().configs(ResourceType.Topic, name), this.brokerConfig(), options, this.dynamic()) };
    }
    if (resourceType === ResourceType.Broker) {
      const which = this.brokerResource(name);
      if (!which) return { ...fail(ErrorCode.INVALID_REQUEST, `Unexpected broker id ${name}; this is broker ${this.nodeId()}`), entries: [] };
      return { ...ok, entries: describeBrokerConfigs(this.brokerConfig(), this.dynamic(), options, which) };
    }
    const kind = kindOf(resourceType);
    if (kind === 'group' || kind === 'client-metrics' || kind === 'link') {
      if (name === '') return { ...fail(ErrorCode.INVALID_REQUEST, `A ${kind} resource needs a name`), entries: [] };
      return { ...ok, entries: describeResourceConfigs(kind, this.view().configs(resourceType, name), this.brokerConfig(), options, this.dynamic()) };
    }
    return { ...fail(ErrorCode.INVALID_REQUEST, `Unsupported resource type ${resourceType}`), entries: [] };
  }

  incrementalAlter(resourceType: number, name: string, ops: { name: string; configOperation: number; value: string | null }[], validateOnly: boolean, caller?: ForwardedFor): Promise<ResourceResult> {
    return this.send({ resourceType, resourceName: name, ops, replace: false, validateOnly }, caller);
  }

  /** Legacy AlterConfigs: the given set replaces every dynamic config of the resource. */
  alter(resourceType: number, name: string, configs: { name: string; value: string | null }[], validateOnly: boolean, caller?: ForwardedFor): Promise<ResourceResult> {
    const ops = configs.map((c) => ({ name: c.name, configOperation: c.value === null ? 1 : 0, value: c.value }));
    return this.send({ resourceType, resourceName: name, ops, replace: true, validateOnly }, caller);
  }

  private async send(change: ConfigChange, caller?: ForwardedFor): Promise<ResourceResult> {
    // Which broker a broker resource names is this broker's question (it answers for itself).
    if (change.resourceType === ResourceType.Broker && !this.brokerResource(change.resourceName)) {
      return fail(ErrorCode.INVALID_REQUEST, `Unexpected broker id ${change.resourceName}`);
    }
    return this.controller().alterConfigs(change, caller);
  }
}

/** What the controller reads to plan a config change: its latest state, not a broker's view. */
export interface ConfigState {
  topicExists(name: string): boolean;
  configs(resourceType: number, resourceName: string): ReadonlyMap<string, string>;
  /** The node's topic-config rules beyond the keys' own (tiered storage's); absent: only the keys' own. */
  validateTopic?(configs: ReadonlyMap<string, string>, current: ReadonlyMap<string, string>): { key: string; message: string } | null;
  /** A group's overrides against the controller's group.consumer.* and group.share.* bounds; absent: only the keys' own. */
  validateGroup?(configs: ReadonlyMap<string, string>): { key: string; message: string } | null;
}

/**
 * The controller's half of AlterConfigs / IncrementalAlterConfigs: validated against the latest
 * configs (so concurrent APPENDs to one list all land), the ConfigRecords that make the change.
 */
export function planConfigChange(state: ConfigState, change: ConfigChange): { records: EmittedRecord[]; response: ResourceResult } {
  const { resourceType, resourceName: name } = change;
  const refuse = (r: ResourceResult) => ({ records: [], response: r });
  const kind = kindOf(resourceType);
  if (kind === undefined) return refuse(fail(ErrorCode.INVALID_REQUEST, `Unsupported resource type ${resourceType}`));
  if (kind === 'topic' && !state.topicExists(name)) return refuse(fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${name} does not exist`));
  if ((kind === 'group' || kind === 'client-metrics') && name === '') return refuse(fail(ErrorCode.INVALID_REQUEST, `A ${kind} resource needs a name`));
  if (kind === 'link' && !/^[a-zA-Z0-9._-]{1,249}$/.test(name)) return refuse(fail(ErrorCode.INVALID_REQUEST, `Link name "${name}" must be 1 to 249 of a-z, A-Z, 0-9, '.', '_', '-'`));
  const current = state.configs(resourceType, name);
  const result = applyIncrementalOps(change.replace ? new Map() : current, change.ops.map((o) => ({ name: o.name, op: o.configOperation, value: o.value })), kind, { brokerScope: name === '' ? 'cluster-default' : 'broker' });
  if (!result.ok) return refuse(fail(ErrorCode[result.errors[0]!.errorCode], result.errors.map((e) => e.message).join('; ')));
  if (kind === 'link' && result.configs.size > 0 && (result.configs.get('bootstrap.servers') ?? '') === '') {
    return refuse(fail(ErrorCode.INVALID_CONFIG, `Link ${name} needs bootstrap.servers (the source cluster's addresses)`));
  }
  if (resourceType === ResourceType.Topic) {
    const [problem] = validateTopicConfigs(result.configs);
    if (problem) return refuse(fail(ErrorCode[problem.errorCode], problem.message));
    const refused = state.validateTopic?.(result.configs, current) ?? null;
    if (refused !== null) return refuse(fail(ErrorCode.INVALID_CONFIG, refused.message));
  } else if (kind === 'group') {
    const refused = state.validateGroup?.(result.configs) ?? null;
    if (refused !== null) return refuse(fail(ErrorCode.INVALID_CONFIG, refused.message));
  } else if (result.configs.get('max.connections.per.ip') === '0' && (result.configs.get('max.connections.per.ip.overrides') ?? '').trim() === '') {
    // Kafka's rule (checked here, where the change is made: a config that cannot start must never
    // be committed): nobody from anywhere only with the exceptions named alongside.
    return refuse(fail(ErrorCode.INVALID_CONFIG, 'max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides is set'));
  }
  return { records: change.validateOnly ? [] : diff(resourceType, name, current, result.configs), response: ok };
}

/** The records that turn `current` into `next` for one resource. */
function diff(resourceType: number, name: string, current: ReadonlyMap<string, string>, next: ReadonlyMap<string, string>): EmittedRecord[] {
  const records: EmittedRecord[] = [];
  for (const [k, v] of next) if (current.get(k) !== v) records.push({ type: CONFIG_RECORD, version: 0, data: { resourceType, resourceName: name, name: k, value: v } });
  for (const k of current.keys()) if (!next.has(k)) records.push({ type: CONFIG_RECORD, version: 0, data: { resourceType, resourceName: name, name: k, value: null } });
  return records;
}
