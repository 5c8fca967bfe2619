// `logline topic create|list|describe|delete|alter-config|reassign` (reassign: ./reassign.ts).
import { ClusterClient, KafkaError, describeTopicConfigs, listOffsets, type TopicInfo } from '../client/index.js';
import { ApiKey, ErrorCode, ZERO_UUID } from '../protocol/index.js';
import { partitionKey } from '../util/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, bootstrapServers, table, toJson, clientOptions } from './output.js';
import { ongoing, reassignCommand } from './reassign.js';

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  partitions: { type: 'number', help: 'partitions for create (default: the broker\'s num.partitions)' },
  'replication-factor': { type: 'number', help: 'replication factor for create (default: the broker\'s)' },
  'replica-assignment': { type: 'string', help: 'create: each partition\'s replicas, preferred leader first, as kafka-topics.sh takes them (1:2:3,2:3:1 = partition 0 on 1,2,3 and partition 1 on 2,3,1)' },
  config: { type: 'string', repeatable: true, help: 'key=value topic config (create, alter-config)' },
  'delete-config': { type: 'string', repeatable: true, help: 'config key to remove (alter-config)' },
  'if-not-exists': { type: 'boolean', help: 'create: succeed when the topic exists' },
  'validate-only': { type: 'boolean', help: 'create: check without creating' },
  'include-internal': { type: 'boolean', help: 'list: also show internal topics (__consumer_offsets, __transaction_state)' },
  'under-replicated-partitions': { type: 'boolean', help: 'describe: only partitions whose ISR is smaller than their replicas (every topic when none is named)' },
  'unavailable-partitions': { type: 'boolean', help: 'describe: only partitions without a live leader (every topic when none is named)' },
  'under-min-isr-partitions': { type: 'boolean', help: 'describe: only partitions whose ISR is below min.insync.replicas (every topic when none is named)' },
};

const USAGE = 'logline topic <create|list|describe|delete|alter-config|reassign> [TOPIC] [options]';

/** `--replica-assignment 1:2:3,2:3:1` as CreateTopics assignments (kafka-topics.sh's format). */
function replicaAssignment(value: string): { partitionIndex: number; brokerIds: number[] }[] {
  return value.split(',').map((replicas, partitionIndex) => {
    const brokerIds = replicas.split(':').map(Number);
    if (brokerIds.some((id) => !Number.isInteger(id) || id < 0)) throw new UsageError(`--replica-assignment expects broker ids like 1:2:3,2:3:1, got "${value}"`);
    return { partitionIndex, brokerIds };
  });
}

function configPairs(values: unknown): { name: string; value: string }[] {
  return ((values as string[] | undefined) ?? []).map((kv) => {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--config expects key=value, got "${kv}"`);
    return { name: kv.slice(0, eq), value: kv.slice(eq + 1) };
  });
}

export async function topicCommand(argv: string[]): Promise<number> {
  if (argv[0] === 'reassign') return reassignCommand(argv.slice(1));
  const { positionals, flags } = parseArgs(argv, FLAGS);
  const [verb, name] = positionals;
  if (flags.help || !verb) {
    console.log(helpText(USAGE, 'Manage topics.', FLAGS));
    return verb || flags.help ? 0 : 2;
  }
  const client = new ClusterClient(clientOptions(flags));
  const json = flags.json === true;
  const needName = () => { if (!name) throw new UsageError(`topic ${verb} needs a topic name`); return name; };
  try {
    switch (verb) {
      case 'create': {
        const assignment = flags['replica-assignment'] as string | undefined;
        if (assignment !== undefined && (flags.partitions !== undefined || flags['replication-factor'] !== undefined)) {
          throw new UsageError('--replica-assignment gives the partitions and their replicas: not with --partitions or --replication-factor');
        }
        const r = await client.admin(ApiKey.CreateTopics, {
          topics: [{
            name: needName(), numPartitions: (flags.partitions as number) ?? -1, replicationFactor: (flags['replication-factor'] as number) ?? -1,
            assignments: assignment === undefined ? [] : replicaAssignment(assignment), configs: configPairs(flags.config),
          }],
          timeoutMs: 30000, validateOnly: flags['validate-only'] === true,
        }, 7);
        const t = r.topics[0];
        if (t.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS && flags['if-not-exists']) { if (!json) console.log(`topic ${name} already exists`); return 0; }
        if (t.errorCode !== 0) throw new KafkaError(t.errorCode, t.errorMessage);
        console.log(json ? toJson({ name, topicId: t.topicId, partitions: t.numPartitions, replicationFactor: t.replicationFactor })
          : `${flags['validate-only'] ? 'would create' : 'created'} topic ${name} (${t.numPartitions} partitions, replication factor ${t.replicationFactor})`);
        return 0;
      }
      case 'list': {
        const topics = (await client.metadata(null)).filter((t) => !t.isInternal || flags['include-internal'] === true).map((t) => ({ name: t.name, partitions: t.partitions.length, replicationFactor: t.partitions[0]?.replicas.length ?? 0, internal: t.isInternal }))
          .sort((a, b) => (a.name < b.name ? -1 : 1));
        console.log(json ? toJson(topics) : table(topics));
        return 0;
      }
      case 'describe': {
        const filters = (['under-replicated-partitions', 'unavailable-partitions', 'under-min-isr-partitions'] as const).filter((f) => flags[f] === true);
        if (filters.length > 0) return await describeFiltered(client, name, filters, json);
        const t = await topicMetadata(client, needName());
        // As kafka-topics.sh: adding/removing replicas of partitions being reassigned. They come from
        // the controller (ListPartitionReassignments); without one reachable the rest still shows.
        const moving = (await client.any()).versions.has(ApiKey.ListPartitionReassignments)
          ? await ongoing(client, [{ name: t.name, partitionIndexes: t.partitions.map((p) => p.partition) }]).catch(() => new Map()) : new Map();
        // As kafka-topics.sh with DescribeTopicPartitions: the eligible leader replicas (KIP-966),
        // shown when some partition of the topic has any.
        const found = await eligibleLeaderReplicas(client, t.name).catch(() => null);
        const elr = found !== null && [...found.values()].some((e) => e.elr.length > 0 || e.lastKnownElr.length > 0) ? found : null;
        const partitions = t.partitions.map((p) => {
          const m = moving.get(`${t.name}-${p.partition}`);
          const e = elr?.get(p.partition);
          const row = {
            partition: p.partition, leader: p.leader, leaderEpoch: p.leaderEpoch, replicas: p.replicas, isr: p.isr,
            ...(elr !== null ? { elr: e?.elr ?? [], lastKnownElr: e?.lastKnownElr ?? [] } : {}), offline: p.offlineReplicas,
          };
          return moving.size === 0 ? row : { ...row, adding: m?.adding ?? [], removing: m?.removing ?? [] };
        });
        const configs = await describeTopicConfigs(client, t.name);
        const tiered = configs.find((c) => c.name === 'remote.storage.enable')?.value === 'true' ? await tieredOffsets(client, t) : null;
        if (json) console.log(toJson({ name: t.name, topicId: t.topicId, partitions, ...(tiered !== null ? { tiered } : {}), configs }));
        else {
          const tieredTable = tiered === null ? '' : `\n\n${table(tiered, ['partition', 'earliest', 'earliestLocal', 'latestTiered', 'latest'])}`;
          console.log(`topic ${t.name}  id ${t.topicId}\n\n${table(partitions)}${tieredTable}\n\n${table(configs.filter((c) => c.source !== 'DEFAULT_CONFIG'), ['name', 'value', 'source'])}`);
        }
        return 0;
      }
      case 'delete': {
        // As kafka-topics.sh: deleting __consumer_offsets would lose every group's offsets.
        const [known] = await client.metadata([needName()]);
        if (known?.isInternal) {
          console.error(`Topic ${name} is a kafka internal topic and is not allowed to be marked for deletion.`);
          return 1;
        }
        const r = await client.admin(ApiKey.DeleteTopics, { topics: [{ name: needName(), topicId: ZERO_UUID }], topicNames: [name], timeoutMs: 30000 }, 6);
        const d = r.responses[0];
        if (d.errorCode !== 0) throw new KafkaError(d.errorCode, d.errorMessage);
        console.log(json ? toJson({ deleted: name }) : `deleted topic ${name}`);
        return 0;
      }
      case 'alter-config': {
        const ops = [...configPairs(flags.config).map((c) => ({ name: c.name, configOperation: 0, value: c.value })),
          ...((flags['delete-config'] as string[] | undefined) ?? []).map((k) => ({ name: k, configOperation: 1, value: null }))];
        if (ops.length === 0) throw new UsageError('alter-config needs --config key=value or --delete-config key');
        const r = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 2, resourceName: needName(), configs: ops }], validateOnly: false }, 1);
        const res = r.responses[0];
        if (res.errorCode !== 0) throw new KafkaError(res.errorCode, res.errorMessage);
        console.log(json ? toJson({ altered: name, ops: ops.length }) : `altered ${ops.length} config(s) of topic ${name}`);
        return 0;
      }
      default:
        throw new UsageError(`unknown verb "${verb}"; ${USAGE}`);
    }
  } finally {
    client.close();
  }
}

/**
 * A tiered topic's offsets per partition from its leader's ListOffsets, as kafka-get-offsets.sh
 * --time takes them: EARLIEST (-2, the log start, in the tier once segments are copied),
 * EARLIEST_LOCAL (-4, the first offset on the leader's disk), LATEST_TIERED (-5, the highest offset
 * copied; -1 none) and LATEST (-1, the high watermark). Below earliestLocal reads come from the tier.
 */
async function tieredOffsets(client: ClusterClient, t: TopicInfo): Promise<{ partition: number; earliest: bigint | null; earliestLocal: bigint | null; latestTiered: bigint | null; latest: bigint | null }[]> {
  const refs = t.partitions.filter((p) => p.leader >= 0).map((p) => ({ topic: t.name, partition: p.partition }));
  const at = async (ts: bigint) => listOffsets(client, refs, ts).catch(() => new Map<string, bigint>());
  const [earliest, local, tiered, latest] = [await at(-2n), await at(-4n), await at(-5n), await at(-1n)];
  return t.partitions.map((p) => {
    const k = partitionKey(t.name, p.partition);
    return { partition: p.partition, earliest: earliest.get(k) ?? null, earliestLocal: local.get(k) ?? null, latestTiered: tiered.get(k) ?? null, latest: latest.get(k) ?? null };
  });
}

/** A topic as Metadata describes it, partitions without a leader included (leader -1), as kafka-topics.sh shows them. */
async function topicMetadata(client: ClusterClient, name: string): Promise<TopicInfo> {
  const [t] = await client.metadata([name]);
  if (t === undefined || t.errorCode !== 0) throw new KafkaError(t?.errorCode ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `topic ${name}`);
  return t;
}

/** Per partition, the ELR and last known ELR from DescribeTopicPartitions; null when no broker offers it. */
async function eligibleLeaderReplicas(client: ClusterClient, topic: string): Promise<Map<number, { elr: number[]; lastKnownElr: number[] }> | null> {
  const c = await client.any();
  if (!c.versions.has(ApiKey.DescribeTopicPartitions)) return null;
  const out = new Map<number, { elr: number[]; lastKnownElr: number[] }>();
  let cursor: { topicName: string; partitionIndex: number } | null = null;
  // Bounded: each answer holds at least one partition and the cursor only moves forward.
  for (let page = 0; page < 10_000; page++) {
    const r: any = await c.send(ApiKey.DescribeTopicPartitions, 0, { topics: [{ name: topic }], responsePartitionLimit: 2000, cursor });
    for (const p of r.topics.find((x: any) => x.name === topic)?.partitions ?? []) {
      out.set(p.partitionIndex, { elr: p.eligibleLeaderReplicas ?? [], lastKnownElr: p.lastKnownElr ?? [] });
    }
    cursor = r.nextCursor;
    if (cursor === null || cursor.topicName !== topic) break;
  }
  return out;
}

type PartitionFilter = 'under-replicated-partitions' | 'unavailable-partitions' | 'under-min-isr-partitions';

/**
 * kafka-topics.sh --describe with its health filters: the partitions of one topic (or of every
 * topic) that match any of them. Unavailable: no leader, or a leader that is not live (an offline
 * replica). Under min ISR: fewer in-sync replicas than the topic's min.insync.replicas.
 */
async function describeFiltered(client: ClusterClient, name: string | undefined, filters: PartitionFilter[], json: boolean): Promise<number> {
  const topics = name !== undefined ? [await topicMetadata(client, name)] : (await client.metadata(null)).sort((a, b) => (a.name < b.name ? -1 : 1));
  const rows: { topic: string; partition: number; leader: number; leaderEpoch: number; replicas: number[]; isr: number[]; offline: number[] }[] = [];
  for (const t of topics) {
    const minIsr = filters.includes('under-min-isr-partitions')
      ? Number((await describeTopicConfigs(client, t.name)).find((c) => c.name === 'min.insync.replicas')?.value ?? 1) : 0;
    for (const p of t.partitions) {
      const match = (filters.includes('under-replicated-partitions') && p.isr.length < p.replicas.length)
        || (filters.includes('unavailable-partitions') && (p.leader < 0 || p.offlineReplicas.includes(p.leader)))
        || (filters.includes('under-min-isr-partitions') && p.isr.length < minIsr);
      if (match) rows.push({ topic: t.name, partition: p.partition, leader: p.leader, leaderEpoch: p.leaderEpoch, replicas: p.replicas, isr: p.isr, offline: p.offlineReplicas });
    }
  }
  console.log(json ? toJson(rows) : rows.length === 0 ? `no ${filters.join(' or ')}` : table(rows));
  return 0;
}

export { describeTopicConfigs };
