// Describe and alter configs of topics and of this broker. Reads come from the metadata view's
// dynamic configs over the static broker config; changes become ConfigRecords committed through
// the controller path, so they live in the metadata like everything else.
import {
  applyIncrementalOps, describeBrokerConfigs, describeTopicConfigs, validateTopicConfigs,
  type BrokerConfig, type DescribeConfigsEntry,
} from '../config/index.js';
import { ErrorCode } from '../protocol/index.js';
import type { EmittedRecord } from '../controller/index.js';
import type { MetadataView } from './services.js';

export const ResourceType = { Topic: 2, Broker: 4, BrokerLogger: 8 } as const;
const CONFIG_RECORD = 4;

export interface ResourceResult { errorCode: number; errorMessage: string | null }
const ok: ResourceResult = { errorCode: 0, errorMessage: null };
const fail = (errorCode: number, errorMessage: string): ResourceResult => ({ errorCode, errorMessage });

export class ConfigAdmin {
  constructor(
    private readonly view: () => MetadataView,
    private readonly brokerConfig: () => BrokerConfig,
    private readonly nodeId: () => number,
    private readonly commit: (records: EmittedRecord[]) => Promise<void>,
    /**
     * Runs a change after every earlier controller operation has committed, so it reads and
     * validates the latest configs (two APPENDs to one list both land).
     */
    private readonly serialize: <T>(change: () => Promise<T>) => Promise<T> = (change) => change(),
  ) {}

  private brokerResource(name: string): 'broker' | 'cluster-default' | null {
    if (name === '') return 'cluster-default';
    return name === String(this.nodeId()) ? 'broker' : null;
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
    return { ...fail(ErrorCode.INVALID_REQUEST, `Unsupported resource type ${resourceType}`), entries: [] };
  }

  /** Computes the records that turn `current` into `next` for one resource. */
  private diff(resourceType: number, name: string, current: ReadonlyMap<string, string>, next: ReadonlyMap<string, string>): EmittedRecord[] {
    const records: EmittedRecord[] = [];
    for (const [k, v] of next) if (current.get(k) !== v) records.push({ type: CONFIG_RECORD, version: 0, data: { resourceType, resourceName: name, name: k, value: v } });
    for (const k of current.keys()) if (!next.has(k)) records.push({ type: CONFIG_RECORD, version: 0, data: { resourceType, resourceName: name, name: k, value: null } });
    return records;
  }

  private check(resourceType: number, name: string): ResourceResult | null {
    if (resourceType === ResourceType.Topic) return this.view().topic(name) ? null : fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${name} does not exist`);
    if (resourceType === ResourceType.Broker) return this.brokerResource(name) ? null : fail(ErrorCode.INVALID_REQUEST, `Unexpected broker id ${name}`);
    return fail(ErrorCode.INVALID_REQUEST, `Unsupported resource type ${resourceType}`);
  }

  private async finish(resourceType: number, name: string, next: ReadonlyMap<string, string>, validateOnly: boolean): Promise<ResourceResult> {
    if (resourceType === ResourceType.Topic) {
      const [problem] = validateTopicConfigs(next);
      if (problem) return fail(ErrorCode[problem.errorCode], problem.message);
    }
    if (!validateOnly) await this.commit(this.diff(resourceType, name, this.view().configs(resourceType, name), next));
    return ok;
  }

  incrementalAlter(resourceType: number, name: string, ops: { name: string; configOperation: number; value: string | null }[], validateOnly: boolean): Promise<ResourceResult> {
    return this.serialize(() => this.incrementalAlterNow(resourceType, name, ops, validateOnly));
  }

  private async incrementalAlterNow(resourceType: number, name: string, ops: { name: string; configOperation: number; value: string | null }[], validateOnly: boolean): Promise<ResourceResult> {
    const bad = this.check(resourceType, name);
    if (bad) return bad;
    const kind = resourceType === ResourceType.Topic ? 'topic' : 'broker';
    const result = applyIncrementalOps(this.view().configs(resourceType, name), ops.map((o) => ({ name: o.name, op: o.configOperation, value: o.value })), kind);
    if (!result.ok) return fail(ErrorCode[result.errors[0]!.errorCode], result.errors.map((e) => e.message).join('; '));
    return this.finish(resourceType, name, result.configs, validateOnly);
  }

  /** Legacy AlterConfigs: the given set replaces every dynamic config of the resource. */
  alter(resourceType: number, name: string, configs: { name: string; value: string | null }[], validateOnly: boolean): Promise<ResourceResult> {
    return this.serialize(() => this.alterNow(resourceType, name, configs, validateOnly));
  }

  private async alterNow(resourceType: number, name: string, configs: { name: string; value: string | null }[], validateOnly: boolean): Promise<ResourceResult> {
    const bad = this.check(resourceType, name);
    if (bad) return bad;
    const ops = configs.map((c) => ({ name: c.name, configOperation: c.value === null ? 1 : 0, value: c.value }));
    const kind = resourceType === ResourceType.Topic ? 'topic' : 'broker';
    const result = applyIncrementalOps(new Map(), ops.map((o) => ({ name: o.name, op: o.configOperation, value: o.value })), kind);
    if (!result.ok) return fail(ErrorCode[result.errors[0]!.errorCode], result.errors.map((e) => e.message).join('; '));
    return this.finish(resourceType, name, result.configs, validateOnly);
  }
}
