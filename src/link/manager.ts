// The link manager of one target node: for each cluster link (its settings from the metadata's
// LINK config resource) a client to the source cluster, a fetcher for each mirror partition this
// node leads, and the group offset sync of the links whose first mirror partition is led here.
// The node tells it what the metadata says after each delta (`update`); it starts and stops
// fetchers to match. Nothing here reads the metadata or the logs but through its inputs.
import { ApiKey, ErrorCode } from '../protocol/index.js';
import { ClusterClient, clientSecurityFromProperties, committedOffsets, coordinatorFor, listOffsets, type ClusterClientOptions } from '../client/index.js';
import { partitionKey, type Logger } from '../util/index.js';
import { LinkPartitionFetcher, type LinkFetcherOptions, type LinkPartitionStatus, type MirrorLog } from './fetcher.js';
import { TopicSync } from './topic-sync.js';
import { LinkBackgroundTask } from './background-task.js';

/** What the metadata says, as the node computes it after a delta. */
export interface LinkAssignments {
  /** Each link's settings (the LINK config resource's keys). */
  links: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** Mirror topics by link, every one of them (for the group offset sync). */
  topics: ReadonlyMap<string, readonly string[]>;
  /** The mirror partitions this node leads. */
  led: readonly { link: string; topic: string; partition: number }[];
  /** Links whose group offsets, partition counts and topic configs this node copies (it leads their first mirror topic's partition 0). */
  groupSync: ReadonlySet<string>;
}

export interface LinkManagerOptions extends LinkFetcherOptions {
  log: MirrorLog;
  /** How to reach this (target) cluster for the group offset sync: this node's own listener. */
  target: ClusterClientOptions | null;
  logger: Logger;
}

interface LinkRuntime {
  settingsKey: string;
  client: ClusterClient;
  fetchers: Map<string, LinkPartitionFetcher>;
  sync: GroupOffsetSync | null;
  topicSync: TopicSync | null;
}

/** A link's client options from its settings (Kafka client properties); throws naming a bad key. */
export function linkClientOptions(name: string, settings: ReadonlyMap<string, string>): ClusterClientOptions {
  const bootstrap = settings.get('bootstrap.servers') ?? '';
  if (bootstrap === '') throw new Error(`link ${name} has no bootstrap.servers`);
  return { bootstrap, clientId: `logline-link-${name}`, retries: 0, ...clientSecurityFromProperties(settings) };
}

export class LinkManager {
  private readonly runtimes = new Map<string, LinkRuntime>();
  private closed = false;
  private applying: Promise<void> = Promise.resolve();

  constructor(private readonly options: LinkManagerOptions) {}

  /** Matches the running fetchers to the assignments (queued behind the previous update). */
  update(a: LinkAssignments): Promise<void> {
    this.applying = this.applying.then(() => this.apply(a)).catch((e: unknown) => this.options.logger.error(`links: ${e instanceof Error ? e.message : String(e)}`));
    return this.applying;
  }

  private async apply(a: LinkAssignments): Promise<void> {
    if (this.closed) return;
    const wanted = new Map<string, Map<string, { topic: string; partition: number }>>();
    for (const l of a.led) {
      if (!a.links.has(l.link)) continue; // a mirror topic of a link that does not exist (yet): nothing to fetch from
      const m = wanted.get(l.link) ?? new Map();
      m.set(partitionKey(l.topic, l.partition), l);
      wanted.set(l.link, m);
    }
    for (const [name, rt] of [...this.runtimes]) {
      const settings = a.links.get(name);
      if (settings === undefined || (!wanted.has(name) && !a.groupSync.has(name)) || settingsKey(settings) !== rt.settingsKey) {
        await this.stopRuntime(rt);
        this.runtimes.delete(name);
      }
    }
    for (const name of new Set([...wanted.keys(), ...a.groupSync])) {
      const settings = a.links.get(name);
      if (settings === undefined) continue;
      let rt = this.runtimes.get(name);
      if (rt === undefined) {
        let client: ClusterClient;
        try {
          client = new ClusterClient(linkClientOptions(name, settings));
        } catch (e) {
          this.options.logger.error(`link ${name}: ${e instanceof Error ? e.message : String(e)}`);
          continue;
        }
        rt = { settingsKey: settingsKey(settings), client, fetchers: new Map(), sync: null, topicSync: null };
        this.runtimes.set(name, rt);
        this.options.logger.info(`link ${name}: source ${settings.get('bootstrap.servers')}`);
      }
      const want = wanted.get(name) ?? new Map();
      for (const [k, f] of [...rt.fetchers]) {
        if (!want.has(k)) {
          rt.fetchers.delete(k);
          await f.stop();
        }
      }
      for (const [k, tp] of want) {
        if (rt.fetchers.has(k)) continue;
        const f = new LinkPartitionFetcher(tp.topic, tp.partition, rt.client, this.options.log, this.options, this.options.logger);
        rt.fetchers.set(k, f);
        f.start();
      }
      const syncOn = a.groupSync.has(name) && settings.get('consumer.offset.sync.enable') !== 'false' && this.options.target !== null;
      if (syncOn && rt.sync === null) {
        rt.sync = new GroupOffsetSync(name, rt.client, this.options.target!, Number(settings.get('consumer.offset.sync.ms') ?? 5000), this.options.logger);
        rt.sync.start();
      } else if (!syncOn && rt.sync !== null) {
        await rt.sync.stop();
        rt.sync = null;
      }
      rt.sync?.setTopics(a.topics.get(name) ?? []);
      const topicSyncOn = a.groupSync.has(name) && this.options.target !== null;
      if (topicSyncOn && rt.topicSync === null) {
        rt.topicSync = new TopicSync(name, rt.client, this.options.target!, {
          metadataMaxAgeMs: Number(settings.get('metadata.max.age.ms') ?? 300_000), configSyncMs: Number(settings.get('topic.config.sync.ms') ?? 5000),
        }, this.options.logger);
        rt.topicSync.start();
      } else if (!topicSyncOn && rt.topicSync !== null) {
        await rt.topicSync.stop();
        rt.topicSync = null;
      }
      rt.topicSync?.setTopics(a.topics.get(name) ?? []);
    }
  }

  /** Every mirror partition led here, with its progress. */
  status(): (LinkPartitionStatus & { link: string })[] {
    const out: (LinkPartitionStatus & { link: string })[] = [];
    for (const [link, rt] of this.runtimes) for (const f of rt.fetchers.values()) out.push({ link, ...f.status });
    return out.sort((x, y) => (x.topic < y.topic ? -1 : x.topic > y.topic ? 1 : x.partition - y.partition));
  }

  /** The mirror partitions led here in Prometheus' text format: the source's high watermark as last seen, this log's end, the lag. */
  prometheus(): string {
    const rows = this.status();
    if (rows.length === 0) return '';
    const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
    const lines: string[] = [];
    const family = (name: string, help: string, value: (r: (typeof rows)[number]) => number) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
      for (const r of rows) lines.push(`${name}{link="${esc(r.link)}",topic="${esc(r.topic)}",partition="${r.partition}"} ${value(r)}`);
    };
    family('logline_link_source_high_watermark', 'The source partition\'s high watermark as the link fetcher last saw it (-1 before its first fetch).', (r) => r.sourceHighWatermark);
    family('logline_link_log_end_offset', 'The mirror partition\'s log end offset here.', (r) => r.logEndOffset);
    family('logline_link_lag_records', 'Records at the source (as last seen) not in the mirror yet.', (r) => r.sourceHighWatermark < 0 ? 0 : Math.max(0, r.sourceHighWatermark - r.logEndOffset));
    return `${lines.join('\n')}\n`;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.applying;
    for (const rt of this.runtimes.values()) await this.stopRuntime(rt);
    this.runtimes.clear();
  }

  private async stopRuntime(rt: LinkRuntime): Promise<void> {
    await Promise.all([...rt.fetchers.values()].map((f) => f.stop()));
    rt.fetchers.clear();
    await rt.sync?.stop();
    await rt.topicSync?.stop();
    rt.client.close();
  }
}

function settingsKey(settings: ReadonlyMap<string, string>): string {
  return JSON.stringify([...settings].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * Copies the source's committed offsets of the link's mirror topics to the same groups on the
 * target, as they are: a mirror topic holds the same offsets. Never past what the target holds
 * (its high watermark), so a consumer moved early re-reads rather than skipping; a group with
 * members on the target refuses the commit, and is left alone (its consumers commit themselves).
 */
class GroupOffsetSync extends LinkBackgroundTask {
  private topics = new Set<string>();

  constructor(link: string, source: ClusterClient, targetOptions: ClusterClientOptions, private readonly intervalMs: number, logger: Logger) {
    super(link, source, targetOptions, logger, { name: 'group offset sync', clientSuffix: 'groups' });
  }

  setTopics(topics: readonly string[]): void { this.topics = new Set(topics); }

  protected tickMs(): number { return this.intervalMs; }

  protected round(): Promise<void> { return this.syncOnce(); }

  private async syncOnce(): Promise<void> {
    if (this.topics.size === 0) return;
    const target = this.targetClient();
    for (const group of await listGroups(this.source)) {
      if (this.stopped) return;
      const committed = [...(await committedOffsets(await coordinatorFor(this.source, group), group)).values()].filter((c) => this.topics.has(c.ref.topic));
      if (committed.length === 0) continue;
      const ends = await listOffsets(target, committed.map((c) => c.ref), -1n, { skipUnknown: true });
      const coordinator = await coordinatorFor(target, group);
      const current = await committedOffsets(coordinator, group);
      const byTopic = new Map<string, { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; commitTimestamp: bigint; committedMetadata: string }[]>();
      for (const c of committed) {
        const k = partitionKey(c.ref.topic, c.ref.partition);
        const end = ends.get(k);
        if (end === undefined) continue;
        const offset = c.offset < end ? c.offset : end;
        if (current.get(k)?.offset === offset) continue;
        const list = byTopic.get(c.ref.topic) ?? [];
        list.push({ partitionIndex: c.ref.partition, committedOffset: offset, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: c.metadata });
        byTopic.set(c.ref.topic, list);
      }
      if (byTopic.size === 0) continue;
      const r = await coordinator.send(ApiKey.OffsetCommit, coordinator.version(ApiKey.OffsetCommit, 8), {
        groupId: group, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1n,
        topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
      });
      const failed = r.topics.flatMap((t: any) => t.partitions.map((p: any) => p.errorCode)).find((e: number) => e !== ErrorCode.NONE);
      if (failed !== undefined && failed !== ErrorCode.UNKNOWN_MEMBER_ID && failed !== ErrorCode.ILLEGAL_GENERATION && failed !== ErrorCode.STALE_MEMBER_EPOCH) {
        this.logger.warn(`link ${this.link}: offsets of group ${group} not copied: error ${failed}`);
      }
    }
  }
}

/** Every consumer group of a cluster (ListGroups to each broker). */
async function listGroups(client: ClusterClient): Promise<string[]> {
  await client.metadata([]);
  const out = new Set<string>();
  for (const id of client.brokers.keys()) {
    const c = await client.broker(id);
    const r = await c.send(ApiKey.ListGroups, c.version(ApiKey.ListGroups, 4), { statesFilter: [], typesFilter: [] });
    if (r.errorCode !== 0) continue;
    for (const g of r.groups) out.add(g.groupId);
  }
  return [...out].sort();
}
