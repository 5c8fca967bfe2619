// `logline group ... --type share`: share groups (KIP-932), after kafka-share-groups.sh. list; describe
// shows the members and their partitions, and per share-partition the start offset, the log end
// offset and the lag (records from the start offset not yet acknowledged or archived: the broker's
// when it knows it, else up to the log end); reset-offsets prints its plan and sets it
// (AlterShareGroupOffsets) only with --execute, and only while the group has no members; delete-offsets
// makes the group forget topics; delete deletes groups with their share-partitions' state.
import { ClusterClient, KafkaError, coordinatorFor, describeShareGroup, listOffsets, shareGroupLag, type PartitionRef } from '../client/index.js';
import { ApiKey } from '../protocol/index.js';
import { partitionKey } from '../util/index.js';
import { UsageError } from './args.js';
import { table, toJson } from './output.js';

export const SHARE_USAGE = 'logline group <list|describe|reset-offsets|delete-offsets|delete> [GROUP...] --type share [options]';

export async function shareGroupCommand(client: ClusterClient, verb: string, groups: string[], flags: Record<string, unknown>, json: boolean,
  partitionsOf: (spec: string) => Promise<PartitionRef[]>): Promise<number> {
  const oneGroup = () => { if (groups.length !== 1) throw new UsageError(`group ${verb} needs one group id`); return groups[0]!; };
  switch (verb) {
    case 'list': {
      const c = await client.any();
      const r = await c.send(ApiKey.ListGroups, c.version(ApiKey.ListGroups, 5), { statesFilter: (flags.state as string[] | undefined) ?? [], typesFilter: ['share'] });
      if (r.errorCode !== 0) throw new KafkaError(r.errorCode);
      const rows = r.groups.map((g: any) => ({ group: g.groupId, state: g.groupState ?? '' })).sort((a: { group: string }, b: { group: string }) => (a.group < b.group ? -1 : 1));
      console.log(json ? toJson(rows) : table(rows));
      return 0;
    }
    case 'describe': {
      const group = oneGroup();
      const g = await describeShareGroup(await coordinatorFor(client, group), group);
      const partitions = await shareGroupLag(client, group);
      const members = g.members.map((m) => ({
        memberId: m.memberId, clientId: m.clientId, host: m.clientHost, epoch: m.memberEpoch,
        assignment: m.assignment.topicPartitions.map((t) => `${t.topicName}:${t.partitions.join(',')}`).join(' '),
      }));
      if (json) console.log(toJson({ group, type: 'share', state: g.state, epoch: g.epoch, members, partitions }));
      else {
        console.log(`group ${group}  type share  state ${g.state}  members ${members.length}\n`);
        console.log(table(partitions, ['topic', 'partition', 'startOffset', 'logEndOffset', 'lag']));
        if (members.length > 0) console.log(`\n${table(members, ['memberId', 'clientId', 'host', 'epoch', 'assignment'])}`);
      }
      return 0;
    }
    case 'reset-offsets':
      return resetShareOffsets(client, oneGroup(), flags, json, partitionsOf);
    case 'delete-offsets': {
      const group = oneGroup();
      const topics = (flags.topic as string[] | undefined) ?? [];
      if (topics.length === 0) throw new UsageError('group delete-offsets --type share needs --topic TOPIC (repeatable)');
      const c = await coordinatorFor(client, group);
      const r = await c.send(ApiKey.DeleteShareGroupOffsets, c.version(ApiKey.DeleteShareGroupOffsets, 0), { groupId: group, topics: topics.map((topicName) => ({ topicName })) });
      if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage ?? group);
      const rows = r.responses.map((t: any) => ({ topic: t.topicName, error: t.errorCode === 0 ? null : new KafkaError(t.errorCode).message }));
      console.log(json ? toJson({ group, topics: rows }) : table(rows));
      return rows.some((x: { error: string | null }) => x.error !== null) ? 1 : 0;
    }
    default:
      throw new UsageError(`unknown verb "${verb}" for share groups; ${SHARE_USAGE}`);
  }
}

async function resetShareOffsets(client: ClusterClient, group: string, flags: Record<string, unknown>, json: boolean, partitionsOf: (spec: string) => Promise<PartitionRef[]>): Promise<number> {
  const strategies = ['to-earliest', 'to-latest', 'to-offset', 'to-datetime'].filter((s) => flags[s] !== undefined && flags[s] !== false);
  if (strategies.length !== 1) throw new UsageError('reset-offsets --type share needs exactly one of --to-earliest, --to-latest, --to-offset, --to-datetime');
  const strategy = strategies[0]!;
  const datetimeMs = strategy === 'to-datetime' ? Date.parse(flags['to-datetime'] as string) : 0;
  if (Number.isNaN(datetimeMs)) throw new UsageError(`--to-datetime: cannot read "${flags['to-datetime']}" as a date (use ISO 8601)`);
  const c = await coordinatorFor(client, group);
  const current = await shareGroupLag(client, group);
  const specs = (flags.topic as string[] | undefined) ?? [];
  const refs = specs.length > 0 ? (await Promise.all(specs.map(partitionsOf))).flat() : current.map((p) => ({ topic: p.topic, partition: p.partition }));
  if (refs.length === 0) throw new UsageError(`group ${group} has no share-partitions: name them with --topic`);
  const earliest = await listOffsets(client, refs, -2n);
  const latest = await listOffsets(client, refs, -1n);
  const byTime = strategy === 'to-datetime' ? await listOffsets(client, refs, BigInt(datetimeMs)) : null;
  const plan = refs.map((ref) => {
    const k = partitionKey(ref.topic, ref.partition);
    const lo = earliest.get(k)!;
    const hi = latest.get(k)!;
    let target = strategy === 'to-earliest' ? lo : strategy === 'to-latest' ? hi : strategy === 'to-offset' ? BigInt(flags['to-offset'] as number) : byTime!.get(k)! < 0n ? hi : byTime!.get(k)!;
    if (target < lo) target = lo;
    if (target > hi) target = hi;
    const now = current.find((p) => p.topic === ref.topic && p.partition === ref.partition)?.startOffset ?? null;
    return { topic: ref.topic, partition: ref.partition, startOffset: now, newStartOffset: target };
  });
  if (flags.execute) {
    const topics = new Map<string, { partitionIndex: number; startOffset: bigint }[]>();
    for (const p of plan) topics.set(p.topic, [...topics.get(p.topic) ?? [], { partitionIndex: p.partition, startOffset: p.newStartOffset }]);
    const r = await c.send(ApiKey.AlterShareGroupOffsets, c.version(ApiKey.AlterShareGroupOffsets, 0), {
      groupId: group, topics: [...topics].map(([topicName, partitions]) => ({ topicName, partitions })),
    });
    if (r.errorCode !== 0) {
      console.error(`could not reset the offsets of share group ${group}: ${new KafkaError(r.errorCode, r.errorMessage ?? group).message}`);
      return 1;
    }
    for (const t of r.responses) for (const p of t.partitions) if (p.errorCode !== 0) throw new KafkaError(p.errorCode, `${t.topicName}-${p.partitionIndex}`);
  }
  if (json) console.log(toJson({ group, executed: flags.execute === true, plan }));
  else {
    console.log(table(plan));
    if (!flags.execute) console.log('\n(plan only: add --execute to set these start offsets)');
  }
  return 0;
}
