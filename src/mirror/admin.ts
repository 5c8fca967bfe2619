// The admin calls the mirror makes on either cluster, on src/client: create topics and partitions,
// read and copy topic configs, list groups, and read a topic to its end.
import { ApiKey, ErrorCode } from '../protocol/index.js';
import { Cluster, KafkaError, describeTopicConfigs, fetchCommitted, listOffsets, type ClusterClient, type FetchedRecord, type TopicInfo } from '../client/index.js';
import { limits, parsePartitionKey } from '../util/index.js';
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../security/index.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface TopicConfigEntry { name: string; value: string }

/** CreateTopics; a topic that exists already is fine (another flow or an earlier run made it). */
export async function ensureTopic(client: ClusterClient, name: string, partitions: number, replicationFactor: number, configs: TopicConfigEntry[] = []): Promise<boolean> {
  const r = await client.admin(ApiKey.CreateTopics, {
    topics: [{ name, numPartitions: partitions, replicationFactor, assignments: [], configs }], timeoutMs: 30_000, validateOnly: false,
  }, 7);
  const t = r.topics[0];
  if (t.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS) return false;
  if (t.errorCode !== 0) throw new KafkaError(t.errorCode, t.errorMessage ?? `create ${name}`);
  await client.retrying(() => client.topic(name));
  return true;
}

/** CreatePartitions up to `count` (a no-op when the topic has that many). */
export async function ensurePartitions(client: ClusterClient, name: string, count: number): Promise<void> {
  const r = await client.admin(ApiKey.CreatePartitions, { topics: [{ name, count, assignments: null }], timeoutMs: 30_000, validateOnly: false }, 3);
  const res = r.results[0];
  if (res.errorCode !== 0 && res.errorCode !== ErrorCode.INVALID_PARTITIONS) throw new KafkaError(res.errorCode, res.errorMessage);
  await client.retrying(() => client.topic(name));
}

/** The configs set on the topic itself (not defaults): what MirrorMaker 2 copies with use.defaults.from=target. */
export async function topicOverrides(client: ClusterClient, name: string): Promise<TopicConfigEntry[]> {
  return (await describeTopicConfigs(client, name))
    .filter((c) => c.source === 'DYNAMIC_TOPIC_CONFIG' && c.value !== null && !c.sensitive)
    .map((c) => ({ name: c.name, value: c.value! }));
}

/** IncrementalAlterConfigs SET of each entry. */
export async function setTopicConfigs(client: ClusterClient, name: string, configs: TopicConfigEntry[]): Promise<void> {
  if (configs.length === 0) return;
  const r = await client.admin(ApiKey.IncrementalAlterConfigs, {
    resources: [{ resourceType: 2, resourceName: name, configs: configs.map((c) => ({ name: c.name, configOperation: 0, value: c.value })) }], validateOnly: false,
  }, 1);
  const res = r.responses[0];
  if (res.errorCode !== 0) throw new KafkaError(res.errorCode, res.errorMessage);
}

/** Every topic's metadata. */
export async function listTopics(client: ClusterClient): Promise<TopicInfo[]> {
  return client.metadata(null);
}

/** ListGroups on every broker (each answers for the groups it coordinates). */
export async function listGroups(client: ClusterClient): Promise<string[]> {
  await client.metadata([]);
  const out = new Set<string>();
  for (const nodeId of client.brokers.keys()) {
    const c = await client.broker(nodeId);
    const r = await c.send(ApiKey.ListGroups, c.version(ApiKey.ListGroups, 4), { statesFilter: [], typesFilter: [] });
    if (r.errorCode !== 0) throw new KafkaError(r.errorCode);
    for (const g of r.groups) out.add(g.groupId);
  }
  return [...out].sort();
}

/**
 * Reads `topic` (read_committed) from `positions` up to the high watermark each partition had when
 * it was reached, calling `onRecord` in offset order per partition; returns the positions after.
 * Bounded by `deadlineMs`: a topic that cannot be read to its end by then is an error.
 */
export async function readToEnd(cluster: Cluster, topic: string, positions: Map<number, number>, deadlineMs: number,
  onRecord: (partition: number, record: FetchedRecord) => void): Promise<Map<number, number>> {
  const pending = new Map(positions);
  const out = new Map(positions);
  for (let rounds = 0; pending.size > 0; rounds++) {
    if (Date.now() > deadlineMs || rounds > limits.mirrorReadRoundsMax) throw new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `${topic} not read to its end in time`);
    let fetched;
    try {
      fetched = await fetchCommitted(cluster, new Map([[topic, pending]]), { maxWaitMs: 0, partitionMaxBytes: 1 << 20 });
    } catch (err) {
      if (!(err instanceof KafkaError && err.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE)) throw err;
      // Compaction or retention removed the start: read from the log start offset.
      for (const [p, offset] of await earliestOffsets(cluster.client, topic, [...pending.keys()])) pending.set(p, offset);
      fetched = await fetchCommitted(cluster, new Map([[topic, pending]]), { maxWaitMs: 0, partitionMaxBytes: 1 << 20 });
    }
    for (const f of fetched) {
      for (const r of f.records) onRecord(f.partition, r);
      out.set(f.partition, f.next);
      pending.set(f.partition, f.next);
      // At the end once the position reached the high watermark and no transaction is open below it.
      if (f.next >= f.highWatermark && f.lastStableOffset >= f.highWatermark) pending.delete(f.partition);
    }
    if (pending.size > 0 && fetched.every((f) => f.records.length === 0)) await sleep(50);
  }
  return out;
}

/** ListOffsets earliest (the log start offset) of some partitions of a topic. */
export async function earliestOffsets(client: ClusterClient, topic: string, partitions: number[]): Promise<Map<number, number>> {
  const found = await listOffsets(client, partitions.map((partition) => ({ topic, partition })), -2n);
  return new Map([...found].map(([key, offset]) => [parsePartitionKey(key).partition, Number(offset)]));
}

/** One ACL on a topic, as DescribeAcls answers it and CreateAcls takes it. */
export interface TopicAcl { topic: string; principal: string; host: string; operation: number; permissionType: number }

/**
 * Every ACL on a literal topic name (what MirrorMaker 2 syncs: prefixed and wildcard patterns are
 * not, as their names do not map through a replication policy). A cluster with no authorizer has
 * no ACLs to sync: null (DescribeAcls answers SECURITY_DISABLED).
 */
export async function literalTopicAcls(client: ClusterClient): Promise<TopicAcl[] | null> {
  const r = await client.admin(ApiKey.DescribeAcls, {
    resourceTypeFilter: ResourceType.TOPIC, resourceNameFilter: null, patternTypeFilter: PatternType.LITERAL,
    principalFilter: null, hostFilter: null, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY,
  });
  if (r.errorCode === ErrorCode.SECURITY_DISABLED) return null;
  if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage);
  const out: TopicAcl[] = [];
  for (const res of r.resources) {
    if (res.resourceType !== ResourceType.TOPIC || res.patternType !== PatternType.LITERAL) continue;
    for (const a of res.acls) out.push({ topic: res.resourceName, principal: a.principal, host: a.host, operation: a.operation, permissionType: a.permissionType });
  }
  return out;
}

/** CreateAcls of literal topic ACLs; the first refusal is an error. */
export async function createTopicAcls(client: ClusterClient, acls: TopicAcl[]): Promise<void> {
  if (acls.length === 0) return;
  const r = await client.admin(ApiKey.CreateAcls, {
    creations: acls.map((a) => ({
      resourceType: ResourceType.TOPIC, resourceName: a.topic, resourcePatternType: PatternType.LITERAL,
      principal: a.principal, host: a.host, operation: a.operation, permissionType: a.permissionType,
    })),
  });
  const failed = r.results.find((x: { errorCode: number }) => x.errorCode !== 0);
  if (failed !== undefined) throw new KafkaError(failed.errorCode, failed.errorMessage ?? 'CreateAcls');
}
