// `logline link`: cluster links and mirror topics that keep the source's offsets (issue 35, part 2).
// A link lives in this (target) cluster's metadata as Logline's LINK config resource (type 64: the
// source's bootstrap.servers and client settings); a mirror topic is a topic with link.name set,
// created with the source topic's partition count. The brokers leading its partitions fetch the
// source's batches into it at the same offsets.
//   create NAME --source BOOTSTRAP [--source-config FILE]   the link (FILE: the source's client properties)
//   mirror NAME TOPIC... | --topics a,b                      mirror topics of the link
//   list                                                     mirror topics and their links
//   status [TOPIC]                                           per partition: source HW, target end, lag
//   promote TOPIC [--timeout-ms N]                           stop mirroring once caught up; writable
//   delete NAME [--force]                                    remove the link (refused while mirror topics use it, unless --force)
import { readFileSync } from 'node:fs';
import { ClusterClient, KafkaError, listOffsets } from '../client/index.js';
import { parseProperties } from '../config/index.js';
import { linkClientOptions } from '../link/index.js';
import { ApiKey, ErrorCode } from '../protocol/index.js';
import { partitionKey } from '../util/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, clientOptions, table, toJson } from './output.js';

const LINK_RESOURCE = 64;
const TOPIC_RESOURCE = 2;
const LINK_NAME = 'link.name';
const EPOCH_BASE = 'link.epoch.base';

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  source: { type: 'string', help: 'create: the source cluster\'s bootstrap servers (host:port,...)' },
  'source-config': { type: 'string', help: 'the source cluster\'s client properties (security.protocol, sasl.*, ssl.*), stored with the link; passwords given again here for mirror, status and promote' },
  topics: { type: 'string', help: 'mirror: comma-separated topics' },
  'replication-factor': { type: 'string', help: 'mirror: the mirror topics\' replication factor in this cluster (default: the broker default)' },
  'timeout-ms': { type: 'string', help: 'promote: how long to wait for the mirror to catch up with the source (default 30000)' },
  force: { type: 'boolean', help: 'delete: remove the link although mirror topics still use it (they stay read-only mirror topics, no longer fed, until promoted)' },
};

const USAGE = 'logline link <create|mirror|list|status|promote|delete> ...';

function readProps(file: unknown): Map<string, string> {
  if (typeof file !== 'string') return new Map();
  try {
    return new Map(parseProperties(readFileSync(file, 'utf8')));
  } catch (e) {
    throw new UsageError(`--source-config ${file}: ${(e as Error).message}`);
  }
}

/** The link's stored settings (sensitive ones come back null: --source-config gives them again). */
async function linkSettings(client: ClusterClient, name: string, extra: ReadonlyMap<string, string>): Promise<Map<string, string>> {
  const r = await client.admin(ApiKey.DescribeConfigs, { resources: [{ resourceType: LINK_RESOURCE, resourceName: name, configurationKeys: null }], includeSynonyms: false, includeDocumentation: false }, 4);
  const res = r.results[0];
  if (res.errorCode !== 0) throw new KafkaError(res.errorCode, res.errorMessage);
  const out = new Map<string, string>();
  for (const c of res.configs) if (c.value !== null && c.configSource !== 5) out.set(c.name, c.value);
  if ((out.get('bootstrap.servers') ?? '') === '') throw new UsageError(`no link named ${name} in this cluster (logline link create ${name} --source BOOTSTRAP)`);
  for (const [k, v] of extra) out.set(k, v);
  return out;
}

/** The keys the link stores (none: no such link). */
async function linkKeys(client: ClusterClient, name: string): Promise<string[]> {
  const r = await client.admin(ApiKey.DescribeConfigs, { resources: [{ resourceType: LINK_RESOURCE, resourceName: name, configurationKeys: null }], includeSynonyms: false, includeDocumentation: false }, 4);
  const res = r.results[0];
  if (res.errorCode !== 0) throw new KafkaError(res.errorCode, res.errorMessage);
  return res.configs.filter((c: any) => c.configSource !== 5).map((c: any) => c.name as string);
}

/** Every mirror topic of this cluster and its link. */
async function mirrorTopics(client: ClusterClient): Promise<Map<string, string>> {
  const names = (await client.metadata(null)).map((t) => t.name).filter((n) => !n.startsWith('__'));
  if (names.length === 0) return new Map();
  const r = await client.admin(ApiKey.DescribeConfigs, { resources: names.map((n) => ({ resourceType: TOPIC_RESOURCE, resourceName: n, configurationKeys: [LINK_NAME] })), includeSynonyms: false, includeDocumentation: false }, 4);
  const out = new Map<string, string>();
  for (const res of r.results) {
    const v = res.configs.find((c: any) => c.name === LINK_NAME)?.value;
    if (res.errorCode === 0 && typeof v === 'string' && v !== '') out.set(res.resourceName, v);
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * The smallest link.epoch.base with which every leader epoch of this cluster, now and later, is
 * above every (source) epoch in the mirror's logs: each leader's latest logged epoch
 * (OffsetForLeaderEpoch for the largest epoch answers it) against the partition's leader epoch.
 */
async function epochBase(client: ClusterClient, topic: string): Promise<number> {
  const t = await client.topic(topic);
  let base = 0;
  for (const p of t.partitions) {
    const conn = await client.broker(p.leader);
    const r = await conn.send(ApiKey.OffsetForLeaderEpoch, conn.version(ApiKey.OffsetForLeaderEpoch, 4), {
      replicaId: -1, topics: [{ topic, partitions: [{ partition: p.partition, currentLeaderEpoch: -1, leaderEpoch: 0x7fffffff }] }],
    });
    const e = r.topics[0].partitions[0];
    if (e.errorCode !== 0) throw new KafkaError(e.errorCode, `OffsetForLeaderEpoch of ${topic}-${p.partition}`);
    base = Math.max(base, e.leaderEpoch - p.leaderEpoch + 1);
  }
  return base;
}

interface PartitionLag { topic: string; partition: number; sourceHighWatermark: number | null; targetEnd: number; lag: number | null }

/** Per partition of `topic`: the source's high watermark (null: unreachable), the target's, the difference. */
async function lagOf(target: ClusterClient, source: ClusterClient | null, topic: string): Promise<PartitionLag[]> {
  const t = await target.topic(topic);
  const refs = t.partitions.map((p) => ({ topic, partition: p.partition }));
  const ends = await listOffsets(target, refs, -1n);
  let src: Map<string, bigint> | null = null;
  if (source !== null) {
    try { src = await listOffsets(source, refs, -1n); } catch { src = null; }
  }
  return refs.map((r) => {
    const k = partitionKey(r.topic, r.partition);
    const targetEnd = Number(ends.get(k) ?? -1n);
    const s = src?.get(k);
    return { ...r, sourceHighWatermark: s === undefined ? null : Number(s), targetEnd, lag: s === undefined ? null : Math.max(0, Number(s) - targetEnd) };
  });
}

export async function linkCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  const [verb, ...args] = positionals;
  if (flags.help || !verb) {
    console.log(helpText(USAGE, [
      'Cluster links: mirror topics holding a source cluster\'s records at the same offsets, read-only until promoted.',
      'While mirrored, a topic grows with its source topic\'s partitions (every metadata.max.age.ms of the link) and takes its',
      'retention, cleanup, compaction, compression and timestamp configs (every topic.config.sync.ms); set both in --source-config.',
      '',
      'commands:',
      '  create NAME --source BOOTSTRAP [--source-config FILE]  the link (FILE: the source\'s client properties, the link\'s settings)',
      '  mirror NAME TOPIC... | --topics a,b                   mirror topics of the link, with their source topics\' partition counts',
      '  list                                                  mirror topics and their links',
      '  status [TOPIC]                                        per partition: the source\'s high watermark, this cluster\'s end, the lag',
      '  promote TOPIC [--timeout-ms N]                        stop mirroring once caught up; the topic takes writes',
      '  delete NAME [--force]                                 remove the link; refused while mirror topics use it, unless --force',
    ].join('\n'), FLAGS));
    return verb || flags.help ? 0 : 2;
  }
  const client = new ClusterClient(clientOptions(flags));
  const extra = readProps(flags['source-config']);
  try {
    switch (verb) {
      case 'create': {
        const [name, more] = args;
        if (name === undefined || more !== undefined) throw new UsageError('link create NAME --source BOOTSTRAP [--source-config FILE]');
        if (typeof flags.source !== 'string') throw new UsageError('link create needs --source BOOTSTRAP (the source cluster)');
        const settings = new Map([...extra, ['bootstrap.servers', flags.source]]);
        linkClientOptions(name, settings); // bad client settings fail here, naming the key
        const r = await client.admin(ApiKey.IncrementalAlterConfigs, {
          resources: [{ resourceType: LINK_RESOURCE, resourceName: name, configs: [...settings].map(([k, v]) => ({ name: k, configOperation: 0, value: v })) }], validateOnly: false,
        }, 1);
        const res = r.responses[0];
        if (res.errorCode !== 0) throw new KafkaError(res.errorCode, res.errorMessage);
        console.log(flags.json ? toJson({ link: name, source: flags.source }) : `created link ${name} to ${flags.source}`);
        return 0;
      }
      case 'mirror': {
        const [name, ...topicArgs] = args;
        const topics = [...topicArgs, ...(typeof flags.topics === 'string' ? flags.topics.split(',').map((s) => s.trim()).filter((s) => s !== '') : [])];
        if (name === undefined || topics.length === 0) throw new UsageError('link mirror NAME TOPIC... (or --topics a,b)');
        const source = new ClusterClient(linkClientOptions(name, await linkSettings(client, name, extra)));
        try {
          const rf = typeof flags['replication-factor'] === 'string' ? Number(flags['replication-factor']) : -1;
          const rows = [];
          for (const topic of topics) {
            const [info] = await source.metadata([topic]);
            if (!info || info.errorCode !== 0) throw new KafkaError(info?.errorCode ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `source topic ${topic}`);
            const r = await client.admin(ApiKey.CreateTopics, {
              topics: [{ name: topic, numPartitions: info.partitions.length, replicationFactor: rf, assignments: [], configs: [{ name: LINK_NAME, value: name }] }], timeoutMs: 30000, validateOnly: false,
            }, 7);
            const t = r.topics[0];
            if (t.errorCode !== 0) throw new KafkaError(t.errorCode, t.errorMessage ?? `topic ${topic}`);
            rows.push({ topic, link: name, partitions: info.partitions.length });
          }
          console.log(flags.json ? toJson(rows) : rows.map((r) => `mirroring ${r.topic} (${r.partitions} partition(s)) from link ${r.link}`).join('\n'));
        } finally {
          source.close();
        }
        return 0;
      }
      case 'list': {
        const rows = [...await mirrorTopics(client)].map(([topic, link]) => ({ topic, link }));
        console.log(flags.json ? toJson(rows) : table(rows, ['topic', 'link']));
        return 0;
      }
      case 'status': {
        const [only] = args;
        const all = await mirrorTopics(client);
        if (only !== undefined && !all.has(only)) throw new UsageError(`${only} is not a mirror topic here`);
        const rows: (PartitionLag & { link: string })[] = [];
        const sources = new Map<string, ClusterClient>();
        try {
          for (const [topic, link] of all) {
            if (only !== undefined && topic !== only) continue;
            let source = sources.get(link) ?? null;
            if (source === null) {
              source = new ClusterClient(linkClientOptions(link, await linkSettings(client, link, extra)));
              sources.set(link, source);
            }
            for (const p of await lagOf(client, source, topic)) rows.push({ link, ...p });
          }
        } finally {
          for (const s of sources.values()) s.close();
        }
        console.log(flags.json ? toJson(rows) : table(rows.map((r) => ({ ...r, sourceHighWatermark: r.sourceHighWatermark ?? 'unreachable', lag: r.lag ?? '?' })), ['link', 'topic', 'partition', 'sourceHighWatermark', 'targetEnd', 'lag']));
        return 0;
      }
      case 'promote': {
        const [topic, more] = args;
        if (topic === undefined || more !== undefined) throw new UsageError('link promote TOPIC [--timeout-ms N]');
        const link = (await mirrorTopics(client)).get(topic);
        if (link === undefined) throw new UsageError(`${topic} is not a mirror topic here`);
        const timeoutMs = typeof flags['timeout-ms'] === 'string' ? Number(flags['timeout-ms']) : 30000;
        // A link removed since (its LINK resource deleted) cannot be asked: promote at what is here.
        const settings = await linkSettings(client, link, extra).catch((e: unknown) => (e instanceof UsageError ? null : Promise.reject(e)));
        const source = settings === null ? null : new ClusterClient({ ...linkClientOptions(link, settings), requestTimeoutMs: 10000 });
        let note = `link ${link} no longer exists: promoted at what this cluster holds (lag unknown)`;
        try {
          const deadline = Date.now() + timeoutMs;
          for (; source !== null;) {
            const lag = await lagOf(client, source, topic);
            if (lag.some((p) => p.sourceHighWatermark === null)) { note = 'the source is unreachable: promoted at what this cluster holds (lag unknown)'; break; }
            const behind = lag.reduce((n, p) => n + (p.lag ?? 0), 0);
            if (behind === 0) { note = `caught up with the source (${lag.map((p) => `${p.partition}@${p.targetEnd}`).join(', ')})`; break; }
            if (Date.now() > deadline) throw new UsageError(`${topic} is still ${behind} record(s) behind the source after ${timeoutMs} ms; not promoted (a larger --timeout-ms, or stop producing to the source)`);
            await new Promise((r) => setTimeout(r, 200));
          }
        } finally {
          source?.close();
        }
        // Clearing link.name stops the fetchers (every broker sees it in the metadata) and opens the
        // topic to producers; link.epoch.base keeps the epochs this cluster's leaders write from then
        // on above the source's that the log holds.
        const base = await epochBase(client, topic);
        const r = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: TOPIC_RESOURCE, resourceName: topic, configs: [
          { name: EPOCH_BASE, configOperation: 0, value: String(base) }, { name: LINK_NAME, configOperation: 1, value: null },
        ] }], validateOnly: false }, 1);
        const res = r.responses[0];
        if (res.errorCode !== 0) throw new KafkaError(res.errorCode, res.errorMessage);
        console.log(flags.json ? toJson({ topic, link, promoted: true, note }) : `promoted ${topic} (was mirrored by link ${link}): ${note}; it is writable now`);
        return 0;
      }
      case 'delete': {
        const [name, more] = args;
        if (name === undefined || more !== undefined) throw new UsageError('link delete NAME [--force]');
        const keys = await linkKeys(client, name);
        if (keys.length === 0) throw new UsageError(`no link named ${name} in this cluster`);
        // As Confluent's kafka-cluster-links --delete: refused while mirror topics still use the
        // link (promote them first), unless forced; forced, they keep link.name and stay read-only.
        const mirrors = [...await mirrorTopics(client)].filter(([, l]) => l === name).map(([t]) => t);
        if (mirrors.length > 0 && flags.force !== true) {
          throw new UsageError(`link ${name} still has ${mirrors.length} mirror topic(s): ${mirrors.join(', ')}; promote them first (logline link promote TOPIC), or delete with --force (they then stay read-only, no longer mirrored, until promoted)`);
        }
        // Every key in one change: the controller removes the LINK resource with its last key, and
        // each broker stops the link's fetchers when it applies that.
        const r = await client.admin(ApiKey.IncrementalAlterConfigs, {
          resources: [{ resourceType: LINK_RESOURCE, resourceName: name, configs: keys.map((k) => ({ name: k, configOperation: 1, value: null })) }], validateOnly: false,
        }, 1);
        const res = r.responses[0];
        if (res.errorCode !== 0) throw new KafkaError(res.errorCode, res.errorMessage);
        console.log(flags.json ? toJson({ link: name, deleted: true, mirrorTopics: mirrors })
          : `deleted link ${name}${mirrors.length === 0 ? '' : ` (its mirror topics ${mirrors.join(', ')} stay read-only until promoted)`}`);
        return 0;
      }
      default:
        throw new UsageError(`unknown link command "${verb}" (create, mirror, list, status, promote, delete)`);
    }
  } finally {
    client.close();
  }
}
