// Dynamic configurations by resource (type + name) and their delta. A ConfigRecord with a null
// value deletes the key; a resource left with no keys disappears from the image.
import type { ConfigRecord } from '../protocol/index.js';

/** Kafka's ConfigResource.Type ids as they appear in ConfigRecord.resourceType; LINK (64) is Logline's cluster links (issue 35). */
export const ConfigResourceType = { UNKNOWN: 0, TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8, CLIENT_METRICS: 16, GROUP: 32, LINK: 64 } as const;

export interface ConfigResource {
  readonly type: number;
  /** The topic name, broker id as a string, or "" for the cluster-wide broker default. */
  readonly name: string;
  readonly entries: ReadonlyMap<string, string>;
}

export function configResourceKey(type: number, name: string): string {
  return `${type}:${name}`;
}

const EMPTY_ENTRIES: ReadonlyMap<string, string> = new Map();

export class ConfigurationsImage {
  static readonly EMPTY = new ConfigurationsImage(new Map());

  /** Resources by `configResourceKey(type, name)`. */
  constructor(readonly resources: ReadonlyMap<string, ConfigResource>) {
    Object.freeze(this);
  }

  get isEmpty(): boolean { return this.resources.size === 0; }

  configs(type: number, name: string): ReadonlyMap<string, string> {
    return this.resources.get(configResourceKey(type, name))?.entries ?? EMPTY_ENTRIES;
  }

  topicConfigs(topicName: string): ReadonlyMap<string, string> {
    return this.configs(ConfigResourceType.TOPIC, topicName);
  }

  /** Per-broker dynamic configs; `brokerConfigs('')` is the cluster-wide default. */
  brokerConfigs(brokerId: number | ''): ReadonlyMap<string, string> {
    return this.configs(ConfigResourceType.BROKER, String(brokerId));
  }
}

export class ConfigurationsDelta {
  /** Working copies of every resource this delta touched. */
  private readonly touched = new Map<string, { type: number; name: string; entries: Map<string, string> }>();

  constructor(readonly image: ConfigurationsImage) {}

  /** Keys of the resources this delta changed. */
  changedResources(): string[] { return [...this.touched.keys()]; }

  /**
   * Topics whose effective configs this delta may have changed on broker `brokerId`: all of them
   * when a broker config they inherit changed (the cluster default, or that broker's own), else
   * the topics whose own configs changed (including removed topics).
   */
  topicConfigChanges(brokerId: number): { all: boolean; topics: string[] } {
    const topics: string[] = [];
    for (const w of this.touched.values()) {
      if (w.type === ConfigResourceType.BROKER && (w.name === '' || w.name === String(brokerId))) return { all: true, topics: [] };
      if (w.type === ConfigResourceType.TOPIC) topics.push(w.name);
    }
    return { all: false, topics };
  }

  private working(type: number, name: string): Map<string, string> {
    const key = configResourceKey(type, name);
    let w = this.touched.get(key);
    if (w === undefined) {
      w = { type, name, entries: new Map(this.image.resources.get(key)?.entries ?? []) };
      this.touched.set(key, w);
    }
    return w.entries;
  }

  replay(r: ConfigRecord): void {
    const entries = this.working(r.resourceType, r.resourceName);
    if (r.value === null) entries.delete(r.name);
    else entries.set(r.name, r.value);
  }

  /** A removed topic takes its configs with it. */
  deleteTopicConfigs(topicName: string): void {
    this.working(ConfigResourceType.TOPIC, topicName).clear();
  }

  apply(): ConfigurationsImage {
    if (this.touched.size === 0) return this.image;
    const resources = new Map(this.image.resources);
    for (const [key, w] of this.touched) {
      if (w.entries.size === 0) resources.delete(key);
      else resources.set(key, Object.freeze({ type: w.type, name: w.name, entries: w.entries }));
    }
    return new ConfigurationsImage(resources);
  }
}
