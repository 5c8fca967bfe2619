// `logline topic reassign`: kafka-reassign-partitions.sh.
//   --generate --topics a,b (or --topics-to-move-json-file F) --broker-list 1,2,3: the current
//     assignment and a proposed one over those brokers (same replication factor, placed as the
//     controller places new topics), as reassignment JSON.
//   --execute --reassignment-json-file F [--throttle BYTES/s]: prints the current assignment (to
//     roll back with), and with a throttle first sets leader/follower.replication.throttled.rate on
//     every broker involved and leader.replication.throttled.replicas (the current replicas) /
//     follower.replication.throttled.replicas (the added ones) on the topics, as Kafka's tool does;
//     then submits AlterPartitionReassignments (refused while another is in progress, unless
//     --additional).
//   --verify --reassignment-json-file F: per partition, complete / in progress / differs; once all
//     are complete the throttles are removed (unless --preserve-throttles).
//   --list: the reassignments in progress.  --cancel --reassignment-json-file F: cancels them
//     (and removes the throttles unless --preserve-throttles).
import { readFileSync } from 'node:fs';
import { ClusterClient, KafkaError, type TopicInfo } from '../client/index.js';
import { placeReplicas } from '../controller/index.js';
import { ApiKey, ErrorCode } from '../protocol/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, bootstrapServers, table, toJson, clientOptions } from './output.js';
import { Progress } from './progress.js';

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  generate: { type: 'boolean', help: 'propose an assignment of --topics over --broker-list' },
  execute: { type: 'boolean', help: 'start the reassignment in --reassignment-json-file' },
  verify: { type: 'boolean', help: 'report the reassignment in --reassignment-json-file; removes throttles once it is complete' },
  list: { type: 'boolean', help: 'list the reassignments in progress' },
  cancel: { type: 'boolean', help: 'cancel the reassignment in --reassignment-json-file' },
  topics: { type: 'string', help: 'generate: comma-separated topics to move' },
  'topics-to-move-json-file': { type: 'string', help: 'generate: {"topics":[{"topic":"a"}],"version":1}' },
  'broker-list': { type: 'string', help: 'generate: comma-separated broker ids to place replicas on' },
  'reassignment-json-file': { type: 'string', help: 'execute/verify/cancel: {"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[1,2]}]}' },
  throttle: { type: 'number', help: 'execute: replication throttle in bytes/s for the move (leader and follower rates on the brokers involved)' },
  wait: { type: 'boolean', help: 'verify: ask again every second until no partition is in progress, showing progress on stderr' },
  'preserve-throttles': { type: 'boolean', help: 'verify/cancel: keep the throttles' },
  additional: { type: 'boolean', help: 'execute: start these moves although other reassignments are in progress' },
};

const USAGE = 'logline topic reassign --generate|--execute|--verify|--list|--cancel [options]';

export interface PartitionMove { topic: string; partition: number; replicas: number[] }
export interface ReassignmentJson { version: 1; partitions: (PartitionMove & { log_dirs: string[] })[] }

const RATE_KEYS = ['leader.replication.throttled.rate', 'follower.replication.throttled.rate'] as const;
const LEADER_REPLICAS = 'leader.replication.throttled.replicas';
const FOLLOWER_REPLICAS = 'follower.replication.throttled.replicas';
const ResourceType = { TOPIC: 2, BROKER: 4 } as const;
const Op = { SET: 0, DELETE: 1 } as const;

function toJsonFile(moves: PartitionMove[]): ReassignmentJson {
  return { version: 1, partitions: moves.map((m) => ({ topic: m.topic, partition: m.partition, replicas: m.replicas, log_dirs: m.replicas.map(() => 'any') })) };
}

function readMoves(file: unknown): PartitionMove[] {
  if (typeof file !== 'string') throw new UsageError('--reassignment-json-file is required');
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { partitions?: unknown };
  if (!Array.isArray(parsed.partitions)) throw new UsageError(`${file}: no "partitions" list`);
  return parsed.partitions.map((p: any) => {
    if (typeof p?.topic !== 'string' || !Number.isInteger(p?.partition) || !Array.isArray(p?.replicas) || !p.replicas.every(Number.isInteger)) {
      throw new UsageError(`${file}: each partition needs "topic", "partition" and "replicas"`);
    }
    return { topic: p.topic, partition: p.partition, replicas: p.replicas };
  });
}

function currentMoves(topics: TopicInfo[], only?: PartitionMove[]): PartitionMove[] {
  const out: PartitionMove[] = [];
  for (const t of topics) {
    for (const p of [...t.partitions].sort((a, b) => a.partition - b.partition)) {
      if (only === undefined || only.some((m) => m.topic === t.name && m.partition === p.partition)) out.push({ topic: t.name, partition: p.partition, replicas: [...p.replicas] });
    }
  }
  return out;
}

async function topicsOf(client: ClusterClient, names: string[]): Promise<TopicInfo[]> {
  const topics = await client.metadata([...new Set(names)]);
  for (const t of topics) if (t.errorCode !== 0) throw new KafkaError(t.errorCode, `topic ${t.name}`);
  return topics;
}

export async function reassignCommand(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv, FLAGS);
  const modes = (['generate', 'execute', 'verify', 'list', 'cancel'] as const).filter((m) => flags[m] === true);
  if (flags.help || modes.length !== 1) {
    console.log(helpText(USAGE, 'Move partition replicas between brokers (kafka-reassign-partitions.sh).', FLAGS));
    return flags.help ? 0 : 2;
  }
  const client = new ClusterClient(clientOptions(flags));
  const json = flags.json === true;
  try {
    switch (modes[0]) {
      case 'generate': return await generate(client, flags, json);
      case 'execute': return await execute(client, readMoves(flags['reassignment-json-file']), flags.throttle as number | undefined, flags.additional === true, json);
      case 'verify': return await verify(client, readMoves(flags['reassignment-json-file']), flags['preserve-throttles'] === true, json, flags.wait === true);
      case 'list': return await list(client, json);
      default: return await cancel(client, readMoves(flags['reassignment-json-file']), flags['preserve-throttles'] === true, json);
    }
  } finally {
    client.close();
  }
}

async function generate(client: ClusterClient, flags: Record<string, unknown>, json: boolean): Promise<number> {
  let names: string[];
  if (typeof flags.topics === 'string') names = flags.topics.split(',').map((s) => s.trim()).filter((s) => s !== '');
  else if (typeof flags['topics-to-move-json-file'] === 'string') {
    const parsed = JSON.parse(readFileSync(flags['topics-to-move-json-file'], 'utf8')) as { topics?: { topic: string }[] };
    names = (parsed.topics ?? []).map((t) => t.topic);
  } else throw new UsageError('--generate needs --topics or --topics-to-move-json-file');
  if (typeof flags['broker-list'] !== 'string') throw new UsageError('--generate needs --broker-list');
  const brokerIds = flags['broker-list'].split(',').map((s) => Number(s.trim()));
  if (brokerIds.length === 0 || !brokerIds.every(Number.isInteger)) throw new UsageError(`--broker-list: not a list of broker ids: ${flags['broker-list']}`);
  const topics = await topicsOf(client, names);
  const brokers = brokerIds.map((id) => ({ id, rack: client.brokers.get(id)?.rack ?? null }));
  const proposed: PartitionMove[] = [];
  for (const t of topics) {
    const rf = t.partitions[0]?.replicas.length ?? 1;
    if (rf > brokers.length) throw new UsageError(`topic ${t.name} has replication factor ${rf}, more than the ${brokers.length} brokers listed`);
    // Kafka's tool starts at a random broker; a fixed start per topic keeps the plan repeatable.
    const start = [...t.name].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 0) % brokers.length;
    const lists = placeReplicas(brokers, t.partitions.length, rf, start);
    lists.forEach((replicas, partition) => proposed.push({ topic: t.name, partition, replicas }));
  }
  const current = toJsonFile(currentMoves(topics));
  const plan = toJsonFile(proposed);
  if (json) console.log(toJson({ current, proposed: plan }));
  else console.log(`Current partition replica assignment\n${JSON.stringify(current)}\n\nProposed partition reassignment configuration\n${JSON.stringify(plan)}`);
  return 0;
}

/** Kafka's calculateLeaderThrottles / calculateFollowerThrottles: per topic, "partition:broker" entries. */
function throttledReplicas(current: PartitionMove[], moves: PartitionMove[]): Map<string, { leader: string[]; follower: string[] }> {
  const out = new Map<string, { leader: string[]; follower: string[] }>();
  for (const m of moves) {
    const now = current.find((c) => c.topic === m.topic && c.partition === m.partition)?.replicas ?? [];
    if (now.length === m.replicas.length && now.every((r, i) => r === m.replicas[i])) continue;
    let t = out.get(m.topic);
    if (t === undefined) out.set(m.topic, t = { leader: [], follower: [] });
    for (const r of now) t.leader.push(`${m.partition}:${r}`);
    for (const r of m.replicas) if (!now.includes(r)) t.follower.push(`${m.partition}:${r}`);
  }
  return out;
}

async function alterConfigs(client: ClusterClient, resourceType: number, resourceName: string, configs: { name: string; configOperation: number; value: string | null }[]): Promise<void> {
  // A broker's own configs go to that broker (as Kafka's admin client sends them).
  const body = { resources: [{ resourceType, resourceName, configs }], validateOnly: false };
  const r = resourceType === ResourceType.BROKER
    ? await client.broker(Number(resourceName)).then((c) => c.send<any>(ApiKey.IncrementalAlterConfigs, c.version(ApiKey.IncrementalAlterConfigs, 1), body))
    : await client.admin(ApiKey.IncrementalAlterConfigs, body, 1);
  const res = r.responses[0];
  if (res.errorCode !== 0) throw new KafkaError(res.errorCode, res.errorMessage ?? `configs of ${resourceName}`);
}

async function execute(client: ClusterClient, moves: PartitionMove[], throttle: number | undefined, additional: boolean, json: boolean): Promise<number> {
  // As Kafka's tool: one reassignment at a time unless asked, so throttles are not mixed up.
  if (!additional && (await ongoing(client, null)).size > 0) {
    console.error('Cannot execute because there is an existing partition assignment. Use --additional to override this and create a new partition assignment in addition to the existing one.');
    return 1;
  }
  const topics = await topicsOf(client, moves.map((m) => m.topic));
  const current = currentMoves(topics, moves);
  if (throttle !== undefined) {
    if (!(throttle > 0)) throw new UsageError('--throttle must be a positive number of bytes/s');
    const brokers = new Set<number>();
    for (const m of [...current, ...moves]) for (const r of m.replicas) brokers.add(r);
    for (const b of [...brokers].sort((x, y) => x - y)) {
      await alterConfigs(client, ResourceType.BROKER, String(b), RATE_KEYS.map((name) => ({ name, configOperation: Op.SET, value: String(Math.floor(throttle)) })));
    }
    for (const [topic, t] of throttledReplicas(current, moves)) {
      await alterConfigs(client, ResourceType.TOPIC, topic, [
        { name: LEADER_REPLICAS, configOperation: Op.SET, value: t.leader.join(',') },
        { name: FOLLOWER_REPLICAS, configOperation: Op.SET, value: t.follower.join(',') },
      ]);
    }
  }
  const byTopic = new Map<string, { partitionIndex: number; replicas: number[] }[]>();
  for (const m of moves) byTopic.set(m.topic, [...(byTopic.get(m.topic) ?? []), { partitionIndex: m.partition, replicas: m.replicas }]);
  const r = await client.admin(ApiKey.AlterPartitionReassignments, { timeoutMs: 30_000, topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })) }, 0);
  if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage ?? 'AlterPartitionReassignments');
  const failed = (r.responses as any[]).flatMap((t) => t.partitions.filter((p: any) => p.errorCode !== 0).map((p: any) => ({ topic: t.name, partition: p.partitionIndex, error: p.errorMessage ?? String(p.errorCode) })));
  if (json) console.log(toJson({ current: toJsonFile(current), started: moves.length - failed.length, failed, throttle: throttle ?? null }));
  else {
    console.log(`Current partition replica assignment\n\n${JSON.stringify(toJsonFile(current))}\n\nSave this to use as the --reassignment-json-file option during rollback`);
    if (throttle !== undefined) console.log(`Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.\nThe inter-broker throttle limit was set to ${Math.floor(throttle)} B/s`);
    console.log(failed.length === 0 ? `Successfully started partition reassignment${moves.length === 1 ? '' : 's'} for ${moves.map((m) => `${m.topic}-${m.partition}`).join(',')}`
      : `Error reassigning partition(s):\n${failed.map((f) => `${f.topic}-${f.partition}: ${f.error}`).join('\n')}`);
  }
  return failed.length === 0 ? 0 : 1;
}

/** The reassignments in progress, keyed "topic-partition". */
export async function ongoing(client: ClusterClient, topics: { name: string; partitionIndexes: number[] }[] | null): Promise<Map<string, { replicas: number[]; adding: number[]; removing: number[] }>> {
  const r = await client.admin(ApiKey.ListPartitionReassignments, { timeoutMs: 30_000, topics }, 0);
  if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage ?? 'ListPartitionReassignments');
  const out = new Map<string, { replicas: number[]; adding: number[]; removing: number[] }>();
  for (const t of r.topics) for (const p of t.partitions) out.set(`${t.name}-${p.partitionIndex}`, { replicas: p.replicas, adding: p.addingReplicas, removing: p.removingReplicas });
  return out;
}

function topicPartitions(moves: PartitionMove[]): { name: string; partitionIndexes: number[] }[] {
  const m = new Map<string, number[]>();
  for (const x of moves) m.set(x.topic, [...(m.get(x.topic) ?? []), x.partition]);
  return [...m].map(([name, partitionIndexes]) => ({ name, partitionIndexes }));
}

/** Removes every throttle a reassignment set: the rates on all brokers and the replica lists on the topics. */
async function clearThrottles(client: ClusterClient, topics: string[]): Promise<void> {
  await client.metadata(null);
  for (const b of [...client.brokers.keys()].sort((x, y) => x - y)) {
    await alterConfigs(client, ResourceType.BROKER, String(b), RATE_KEYS.map((name) => ({ name, configOperation: Op.DELETE, value: null })));
  }
  for (const topic of new Set(topics)) {
    await alterConfigs(client, ResourceType.TOPIC, topic, [LEADER_REPLICAS, FOLLOWER_REPLICAS].map((name) => ({ name, configOperation: Op.DELETE, value: null })));
  }
}

type VerifyRow = { topic: string; partition: number; status: string; replicas: number[]; target: number[] };

/** Each move's state now: complete, in progress or differs (from the target). */
async function verifyRows(client: ClusterClient, moves: PartitionMove[]): Promise<VerifyRow[]> {
  const running = await ongoing(client, topicPartitions(moves));
  const topics = await topicsOf(client, moves.map((m) => m.topic));
  return moves.map((m) => {
    const key = `${m.topic}-${m.partition}`;
    const now = topics.find((t) => t.name === m.topic)?.partitions.find((p) => p.partition === m.partition)?.replicas ?? [];
    const done = !running.has(key) && now.length === m.replicas.length && now.every((r, i) => r === m.replicas[i]);
    // The metadata may show the widened replica list a moment after the controller finished.
    const moving = running.has(key) || (now.length > m.replicas.length && m.replicas.every((r, i) => now[i] === r));
    const status = done ? 'complete' : moving ? 'in progress' : 'differs';
    return { topic: m.topic, partition: m.partition, status, replicas: running.get(key)?.replicas ?? now, target: m.replicas };
  });
}

/** How often --verify --wait asks again. */
const WAIT_POLL_MS = 1000;

async function verify(client: ClusterClient, moves: PartitionMove[], preserve: boolean, json: boolean, wait: boolean): Promise<number> {
  let rows = await verifyRows(client, moves);
  if (wait) {
    const complete = () => rows.filter((r) => r.status === 'complete').length;
    const bar = new Progress({ label: 'reassign', total: rows.length, unit: 'partitions complete' });
    while (rows.some((r) => r.status === 'in progress')) {
      bar.update(complete());
      await new Promise((r) => setTimeout(r, WAIT_POLL_MS));
      rows = await verifyRows(client, moves);
    }
    bar.finish(complete());
  }
  const done = rows.every((r) => r.status === 'complete');
  const clear = done && !preserve;
  if (clear) await clearThrottles(client, moves.map((m) => m.topic));
  if (json) console.log(toJson({ partitions: rows, complete: done, throttlesRemoved: clear }));
  else {
    console.log(`Status of partition reassignment:\n${table(rows)}`);
    if (clear) console.log('\nClearing broker-level throttles and topic-level throttles');
  }
  return rows.some((r) => r.status === 'differs') ? 1 : 0;
}

async function list(client: ClusterClient, json: boolean): Promise<number> {
  const rows = [...await ongoing(client, null)].map(([key, r]) => ({ partition: key, replicas: r.replicas, adding: r.adding, removing: r.removing }));
  console.log(json ? toJson(rows) : rows.length === 0 ? 'No partition reassignments found.' : `Current partition reassignments:\n${table(rows)}`);
  return 0;
}

async function cancel(client: ClusterClient, moves: PartitionMove[], preserve: boolean, json: boolean): Promise<number> {
  const r = await client.admin(ApiKey.AlterPartitionReassignments, {
    timeoutMs: 30_000, topics: topicPartitions(moves).map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, replicas: null })) })),
  }, 0);
  if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage ?? 'AlterPartitionReassignments');
  const results = (r.responses as any[]).flatMap((t) => t.partitions.map((p: any) => ({
    topic: t.name, partition: p.partitionIndex, result: p.errorCode === 0 ? 'cancelled' : p.errorCode === ErrorCode.NO_REASSIGNMENT_IN_PROGRESS ? 'none in progress' : (p.errorMessage ?? String(p.errorCode)),
  })));
  if (!preserve) await clearThrottles(client, moves.map((m) => m.topic));
  console.log(json ? toJson(results) : table(results));
  return results.some((x) => x.result !== 'cancelled' && x.result !== 'none in progress') ? 1 : 0;
}
