// `logline group list|describe|delete|reset-offsets`, after kafka-consumer-groups; with
// `--type share` the share groups' commands (group-share.ts), after kafka-share-groups.
// describe shows per partition the committed offset, the log end offset, the lag and the member
// that owns it; reset-offsets prints its plan and commits it only with --execute, and only while
// the group has no active members (Kafka's rule: offsets of a live group belong to its members).
import { ClusterClient, KafkaError, committedOffsets, coordinatorFor, describeGroup, listOffsets, type PartitionRef } from '../client/index.js';
import { groupLag } from '../http/index.js';
import { ApiKey } from '../protocol/index.js';
import { partitionKey, partitionName } from '../util/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, bootstrapServers, table, toJson, clientOptions } from './output.js';
import { SHARE_USAGE, shareGroupCommand } from './group-share.js';

// doctor reads these from here.
export { committedOffsets, coordinatorFor, listOffsets, type PartitionRef };

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  topic: { type: 'string', repeatable: true, help: 'reset-offsets: TOPIC or TOPIC:P,P,... (default: every topic the group committed)' },
  'to-earliest': { type: 'boolean', help: 'reset-offsets: to the log start offset' },
  'to-latest': { type: 'boolean', help: 'reset-offsets: to the log end offset' },
  'to-offset': { type: 'number', help: 'reset-offsets: to this offset (kept within the log)' },
  'to-datetime': { type: 'string', help: 'reset-offsets: to the first record at or after this time (ISO 8601, e.g. 2026-12-01T10:00:00Z)' },
  'shift-by': { type: 'number', help: 'reset-offsets: move the committed offset by N (negative goes back; kept within the log)' },
  execute: { type: 'boolean', help: 'reset-offsets: commit the plan (without it only the plan is printed)' },
  state: { type: 'string', repeatable: true, help: 'list: only groups in this state (Stable, Empty, ...)' },
  type: { type: 'string', help: 'share: share groups (KIP-932): list, describe, reset-offsets, delete-offsets (--topic), delete' },
  config: { type: 'string', repeatable: true, help: 'alter-config: key=value group config (share.auto.offset.reset, errors.deadletterqueue.topic.name, ...)' },
  'delete-config': { type: 'string', repeatable: true, help: 'alter-config: group config key to remove' },
};

const key = partitionKey;
/** The GROUP config resource type (Kafka's ConfigResource.Type.GROUP). */
const GROUP_RESOURCE = 32;

const USAGE = 'logline group <list|describe|delete|reset-offsets|alter-config> [GROUP...] [options]';

async function partitionsOf(client: ClusterClient, spec: string): Promise<PartitionRef[]> {
  const colon = spec.lastIndexOf(':');
  const topic = colon < 0 ? spec : spec.slice(0, colon);
  if (colon >= 0) {
    const parts = spec.slice(colon + 1).split(',').map((p) => Number(p.trim()));
    if (parts.some((p) => !Number.isInteger(p) || p < 0)) throw new UsageError(`--topic ${spec}: partitions must be non-negative integers`);
    return parts.map((partition) => ({ topic, partition }));
  }
  const t = await client.topic(topic);
  return t.partitions.map((p) => ({ topic, partition: p.partition }));
}

export async function groupCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  const [verb, ...groups] = positionals;
  if (flags.help || !verb) {
    console.log(helpText(`${USAGE}\n       ${SHARE_USAGE}`, 'Manage consumer groups and their committed offsets, and share groups and their start offsets.', FLAGS));
    return verb || flags.help ? 0 : 2;
  }
  const client = new ClusterClient(clientOptions(flags));
  const json = flags.json === true;
  const oneGroup = () => { if (groups.length !== 1) throw new UsageError(`group ${verb} needs one group id`); return groups[0]!; };
  try {
    if (flags.type !== undefined && flags.type !== 'share' && flags.type !== 'consumer') throw new UsageError(`--type ${String(flags.type)}: expected share or consumer`);
    if (verb === 'alter-config') return await alterGroupConfig(client, oneGroup(), flags, json);
    if (flags.type === 'share' && verb !== 'delete') return await shareGroupCommand(client, verb, groups, flags, json, (spec) => partitionsOf(client, spec));
    switch (verb) {
      case 'list': {
        const c = await client.any();
        const states = (flags.state as string[] | undefined) ?? [];
        const r = await c.send(ApiKey.ListGroups, c.version(ApiKey.ListGroups, 5), { statesFilter: states, typesFilter: [] });
        if (r.errorCode !== 0) throw new KafkaError(r.errorCode);
        const rows = r.groups.map((g: any) => ({ group: g.groupId, state: g.groupState ?? '', type: g.groupType ?? 'classic', protocolType: g.protocolType }))
          .sort((a: { group: string }, b: { group: string }) => (a.group < b.group ? -1 : 1));
        console.log(json ? toJson(rows) : table(rows));
        return 0;
      }
      case 'describe': {
        const group = oneGroup();
        const g = await groupLag(client, group);
        const rows = g.partitions.map((p) => ({
          topic: p.topic, partition: p.partition, currentOffset: p.committedOffset, logEndOffset: p.logEndOffset, lag: p.lag,
          memberId: p.memberId, clientId: p.clientId, host: p.host,
        }));
        if (json) console.log(toJson({ group, state: g.state, type: g.type, protocol: g.protocol, members: g.members.length, partitions: rows }));
        else {
          console.log(`group ${group}  state ${g.state}  type ${g.type}  members ${g.members.length}${g.protocol ? `  assignor ${g.protocol}` : ''}\n`);
          console.log(table(rows, ['topic', 'partition', 'currentOffset', 'logEndOffset', 'lag', 'memberId', 'clientId', 'host']));
        }
        return 0;
      }
      case 'delete': {
        if (groups.length === 0) throw new UsageError('group delete needs at least one group id');
        let failed = 0;
        const results: { group: string; error: string | null }[] = [];
        for (const group of groups) {
          const coordinator = await coordinatorFor(client, group);
          const r = await coordinator.send(ApiKey.DeleteGroups, coordinator.version(ApiKey.DeleteGroups, 2), { groupsNames: [group] });
          const res = r.results[0];
          const error = res.errorCode === 0 ? null : new KafkaError(res.errorCode).message;
          if (error) failed++;
          results.push({ group, error });
        }
        if (json) console.log(toJson(results));
        else for (const r of results) console.log(r.error ? `could not delete group ${r.group}: ${r.error}` : `deleted group ${r.group}`);
        return failed > 0 ? 1 : 0;
      }
      case 'reset-offsets':
        return await resetOffsets(client, oneGroup(), flags, json);
      default:
        throw new UsageError(`unknown verb "${verb}"; ${USAGE}`);
    }
  } finally {
    client.close();
  }
}

async function resetOffsets(client: ClusterClient, group: string, flags: Record<string, unknown>, json: boolean): Promise<number> {
  const strategies = ['to-earliest', 'to-latest', 'to-offset', 'to-datetime', 'shift-by'].filter((s) => flags[s] !== undefined && flags[s] !== false);
  if (strategies.length !== 1) throw new UsageError('reset-offsets needs exactly one of --to-earliest, --to-latest, --to-offset, --to-datetime, --shift-by');
  const strategy = strategies[0]!;
  let datetimeMs = 0;
  if (strategy === 'to-datetime') {
    datetimeMs = Date.parse(flags['to-datetime'] as string);
    if (Number.isNaN(datetimeMs)) throw new UsageError(`--to-datetime: cannot read "${flags['to-datetime']}" as a date (use ISO 8601)`);
  }
  const coordinator = await coordinatorFor(client, group);
  const g = await describeGroup(coordinator, group);
  if (flags.execute && g.members.length > 0) {
    console.error(`group ${group} has ${g.members.length} active member(s) (state ${g.state}): offsets can only be reset while the group is inactive`);
    return 1;
  }
  const committed = await committedOffsets(coordinator, group);
  const specs = (flags.topic as string[] | undefined) ?? [];
  const refs = specs.length > 0
    ? (await Promise.all(specs.map((s) => partitionsOf(client, s)))).flat()
    : [...committed.values()].map((c) => c.ref);
  if (refs.length === 0) throw new UsageError(`group ${group} has no committed offsets: name the partitions with --topic`);
  const earliest = await listOffsets(client, refs, -2n);
  const latest = await listOffsets(client, refs, -1n);
  const byTime = strategy === 'to-datetime' ? await listOffsets(client, refs, BigInt(datetimeMs)) : null;
  const plan = refs.map((ref) => {
    const k = key(ref.topic, ref.partition);
    const lo = earliest.get(k)!;
    const hi = latest.get(k)!;
    const current = committed.get(k)?.offset ?? null;
    let target: bigint;
    switch (strategy) {
      case 'to-earliest': target = lo; break;
      case 'to-latest': target = hi; break;
      case 'to-offset': target = BigInt(flags['to-offset'] as number); break;
      case 'to-datetime': target = byTime!.get(k)! < 0n ? hi : byTime!.get(k)!; break;
      default: target = (current ?? lo) + BigInt(flags['shift-by'] as number);
    }
    // Like kafka-consumer-groups: an offset outside the log is moved to its nearest end.
    if (target < lo) target = lo;
    if (target > hi) target = hi;
    return { topic: ref.topic, partition: ref.partition, currentOffset: current, newOffset: target };
  });
  if (flags.execute) {
    const topics = new Map<string, { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; commitTimestamp: bigint; committedMetadata: string | null }[]>();
    for (const p of plan) {
      const list = topics.get(p.topic) ?? [];
      list.push({ partitionIndex: p.partition, committedOffset: p.newOffset, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' });
      topics.set(p.topic, list);
    }
    const r = await coordinator.send(ApiKey.OffsetCommit, coordinator.version(ApiKey.OffsetCommit, 8), {
      groupId: group, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1n,
      topics: [...topics].map(([name, partitions]) => ({ name, partitions })),
    });
    for (const t of r.topics) {
      for (const p of t.partitions) {
        if (p.errorCode !== 0) throw new KafkaError(p.errorCode, partitionName(t.name, p.partitionIndex));
      }
    }
  }
  if (json) console.log(toJson({ group, executed: flags.execute === true, plan }));
  else {
    console.log(table(plan));
    if (!flags.execute) console.log('\n(plan only: add --execute to commit these offsets)');
  }
  return 0;
}


/** Group configs (the GROUP resource of IncrementalAlterConfigs, as `kafka-configs.sh --entity-type groups`). */
async function alterGroupConfig(client: ClusterClient, group: string, flags: Record<string, unknown>, json: boolean): Promise<number> {
  const sets = ((flags.config as string[] | undefined) ?? []).map((kv) => {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--config ${kv}: expected key=value`);
    return { name: kv.slice(0, eq), configOperation: 0, value: kv.slice(eq + 1) };
  });
  const deletes = ((flags['delete-config'] as string[] | undefined) ?? []).map((name) => ({ name, configOperation: 1, value: null }));
  if (sets.length + deletes.length === 0) throw new UsageError('group alter-config needs --config key=value or --delete-config key');
  const c = await client.any();
  const r = await c.send(ApiKey.IncrementalAlterConfigs, c.version(ApiKey.IncrementalAlterConfigs, 1), {
    resources: [{ resourceType: GROUP_RESOURCE, resourceName: group, configs: [...sets, ...deletes] }], validateOnly: false,
  });
  const res = r.responses[0];
  if (res.errorCode !== 0) {
    console.error(`could not alter the configs of group ${group}: ${new KafkaError(res.errorCode, res.errorMessage ?? group).message}`);
    return 1;
  }
  console.log(json ? toJson({ group, set: sets.map((x) => x.name), deleted: deletes.map((x) => x.name) }) : `altered ${sets.length + deletes.length} config(s) of group ${group}`);
  return 0;
}
