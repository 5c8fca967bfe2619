// The admin API's operations that go through the Kafka APIs, sent by this node's own client to its
// own Kafka listener: a topic created here is a CreateTopics request (forwarded to the active
// controller, validated and placed exactly as a client's), a config change is
// IncrementalAlterConfigs, a test message is a Produce to the partition's leader, browsing is
// ListOffsets and Fetch. So the console can do nothing a Kafka client could not, and no second copy
// of any broker logic lives here.
import { ClusterClient, KafkaError, describeTopicConfigs, partitionForKey, type TopicConfig } from '../client/index.js';
import { ApiKey, ErrorCode, ZERO_UUID } from '../protocol/index.js';
import { buildRecordBatch, decompressBatchBody, forEachRecord, iterateBatches } from '../records/index.js';
import { limits, partitionKey, partitionName } from '../util/index.js';
import type { TopicRow } from './admin.js';
import { groupLag, shareGroupView } from './group-lag.js';
import type { NodeHandle } from './node-handle.js';

/** A request the API refuses before asking Kafka (a missing or malformed field). */
export class BadRequest extends Error {
  override name = 'BadRequest';
}

export interface GroupListing { groupId: string; state: string; type: string; protocolType: string; members: number; totalLag: number | null; coordinator: number }

/** Every group of the cluster: ListGroups on each broker (each lists the groups it coordinates), with members and lag. */
export async function listGroups(client: ClusterClient, node: NodeHandle | null = null): Promise<GroupListing[]> {
  await client.metadata([]);
  const out: GroupListing[] = [];
  for (const id of [...client.brokers.keys()].sort((a, b) => a - b)) {
    const c = await client.broker(id);
    const r = await c.send(ApiKey.ListGroups, c.version(ApiKey.ListGroups, 5), { statesFilter: [], typesFilter: [] });
    if (r.errorCode !== 0) throw new KafkaError(r.errorCode);
    for (const g of r.groups) {
      if (out.length >= limits.httpGroupsLagMax) break;
      const lag = await (g.groupType === 'share' ? shareGroupView(client, g.groupId, node) : groupLag(client, g.groupId)).catch(() => null);
      out.push({
        groupId: g.groupId, state: lag?.state ?? g.groupState ?? '', type: g.groupType ?? 'classic', protocolType: g.protocolType,
        members: lag?.members.length ?? 0, totalLag: lag?.totalLag ?? null, coordinator: id,
      });
    }
  }
  return out.sort((a, b) => (a.groupId < b.groupId ? -1 : 1));
}

/**
 * Each partition's size on its leader's disk: DescribeLogDirs on every broker, as kafka-log-dirs
 * and the consoles ask. A broker that does not answer leaves its partitions' sizes null.
 */
export async function fillSizes(client: ClusterClient, topics: TopicRow[]): Promise<TopicRow[]> {
  await client.metadata([]);
  const sizes = new Map<string, number>();
  // In parallel, each bounded: a broker that hangs costs the page at most SIZES_WAIT_MS.
  await Promise.all([...client.brokers.keys()].map((id) => withTimeout(SIZES_WAIT_MS, (async () => {
    const c = await client.broker(id);
    const r = await c.send(ApiKey.DescribeLogDirs, c.version(ApiKey.DescribeLogDirs, 4), { topics: null });
    for (const d of r.results) {
      for (const t of d.topics) for (const p of t.partitions) sizes.set(`${id}\0${partitionKey(t.name, p.partitionIndex)}`, Number(p.partitionSize));
    }
  })()).catch(() => { /* its sizes stay unknown */ })));
  for (const t of topics) for (const p of t.partitions) p.sizeBytes = sizes.get(`${p.leader}\0${partitionKey(t.name, p.partition)}`) ?? null;
  return topics;
}

const SIZES_WAIT_MS = 5000;

function withTimeout<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms); });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

export function topicConfigs(client: ClusterClient, topic: string): Promise<TopicConfig[]> {
  return describeTopicConfigs(client, topic);
}

export interface CreateTopic { name: string; partitions?: number; replicationFactor?: number; configs?: Record<string, string> }

export async function createTopic(client: ClusterClient, body: CreateTopic): Promise<{ name: string; topicId: string; partitions: number; replicationFactor: number }> {
  if (typeof body.name !== 'string' || body.name === '') throw new BadRequest('name is required');
  const int = (v: unknown, what: string) => {
    if (v === undefined || v === null || v === '') return -1;
    if (!Number.isInteger(Number(v))) throw new BadRequest(`${what} must be an integer`);
    return Number(v);
  };
  const r = await client.admin(ApiKey.CreateTopics, {
    topics: [{
      name: body.name, numPartitions: int(body.partitions, 'partitions'), replicationFactor: int(body.replicationFactor, 'replicationFactor'),
      assignments: [], configs: Object.entries(stringMap(body.configs, 'configs')).map(([name, value]) => ({ name, value })),
    }],
    timeoutMs: 30_000, validateOnly: false,
  }, 7);
  const t = r.topics[0];
  if (t.errorCode !== 0) throw new KafkaError(t.errorCode, t.errorMessage);
  return { name: body.name, topicId: t.topicId, partitions: t.numPartitions, replicationFactor: t.replicationFactor };
}

export async function deleteTopic(client: ClusterClient, name: string): Promise<{ deleted: string }> {
  // As kafka-topics.sh: deleting __consumer_offsets would lose every group's offsets.
  const [known] = await client.metadata([name]);
  if (known?.isInternal) throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, `${name} is an internal topic`);
  const r = await client.admin(ApiKey.DeleteTopics, { topics: [{ name, topicId: ZERO_UUID }], topicNames: [name], timeoutMs: 30_000 }, 6);
  const d = r.responses[0];
  if (d.errorCode !== 0) throw new KafkaError(d.errorCode, d.errorMessage);
  return { deleted: name };
}

/** `set` values and `delete` keys, as kafka-configs --alter --add-config / --delete-config. */
export async function alterTopicConfigs(client: ClusterClient, topic: string, body: { set?: Record<string, string>; delete?: string[] }): Promise<{ altered: number }> {
  const del = body.delete ?? [];
  if (!Array.isArray(del) || del.some((k) => typeof k !== 'string')) throw new BadRequest('delete must be a list of config names');
  const ops = [
    ...Object.entries(stringMap(body.set, 'set')).map(([name, value]) => ({ name, configOperation: 0, value })),
    ...del.map((name) => ({ name, configOperation: 1, value: null })),
  ];
  if (ops.length === 0) throw new BadRequest('nothing to alter: give set or delete');
  const r = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 2, resourceName: topic, configs: ops }], validateOnly: false }, 1);
  const res = r.responses[0];
  if (res.errorCode !== 0) throw new KafkaError(res.errorCode, res.errorMessage);
  return { altered: ops.length };
}

/** Bytes as the API carries them: UTF-8 text unless `encoding` is base64 (binary keys and values). */
export interface ProduceMessage {
  partition?: number;
  key?: string | null;
  value?: string | null;
  headers?: { key: string; value: string | null }[];
  encoding?: 'text' | 'base64';
}

/** One record, acks=all, to the partition given, or murmur2 of the key, or partition 0 (a test message). */
export async function produceMessage(client: ClusterClient, topic: string, body: ProduceMessage): Promise<{ topic: string; partition: number; offset: number }> {
  const enc = body.encoding === 'base64' ? 'base64' : 'utf8';
  const bytes = (v: unknown, what: string): Buffer | null => {
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string') throw new BadRequest(`${what} must be a string or null`);
    return Buffer.from(v, enc);
  };
  const headers = (body.headers ?? []).map((h, i) => {
    if (typeof h?.key !== 'string') throw new BadRequest(`headers[${i}].key must be a string`);
    return { key: h.key, value: bytes(h.value, `headers[${i}].value`) };
  });
  const key = bytes(body.key, 'key');
  const meta = await client.topic(topic);
  const partition = body.partition !== undefined && body.partition !== null ? Number(body.partition) : key !== null ? partitionForKey(key, meta.partitions.length) : 0;
  if (!meta.partitions.some((p) => p.partition === partition)) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, partitionName(topic, partition));
  const records = await buildRecordBatch({ records: [{ key, value: bytes(body.value, 'value'), headers, timestamp: Date.now() }] });
  const leader = await client.leaderFor(topic, partition);
  const r = await leader.send(ApiKey.Produce, leader.version(ApiKey.Produce, 9), {
    transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  });
  const p = r.responses[0].partitionResponses[0];
  if (p.errorCode !== 0) throw new KafkaError(p.errorCode, p.errorMessage ?? partitionName(topic, partition));
  return { topic, partition, offset: Number(p.baseOffset) };
}

export interface MessageRow {
  partition: number;
  offset: number;
  timestamp: number;
  /** Base64 (bytes may be anything; the console shows them as text, JSON or hex). */
  key: string | null;
  value: string | null;
  headers: { key: string; value: string | null }[];
  /** Bytes of key, value and headers. */
  size: number;
}

export interface MessagesQuery {
  partition: number | null;
  /** Start reading here... */
  offset: number | null;
  /** ...or at the first record at or after this time (ListOffsets); neither: the newest records. */
  timestamp: number | null;
  count: number;
}

export interface MessagesPage { topic: string; messages: MessageRow[]; partitions: { partition: number; logStartOffset: number; highWatermark: number }[] }

/** Reads a query from URL parameters, with count capped at httpMessagesMax. */
export function messagesQuery(params: URLSearchParams): MessagesQuery {
  const num = (name: string): number | null => {
    const v = params.get(name);
    if (v === null || v === '') return null;
    const n = Number(v);
    if (!Number.isSafeInteger(n)) throw new BadRequest(`${name} must be an integer`);
    return n;
  };
  const count = num('count') ?? 50;
  if (count < 1) throw new BadRequest('count must be at least 1');
  return { partition: num('partition'), offset: num('offset'), timestamp: num('timestamp'), count: Math.min(count, limits.httpMessagesMax) };
}

/**
 * Records of one partition (or of each), newest first. Without offset or timestamp: the last
 * `count` below the high watermark; otherwise `count` from the start point forward. Bounded by
 * httpMessagesMax records and httpMessagesBytesMax bytes of keys, values and headers.
 */
export async function readMessages(client: ClusterClient, topic: string, q: MessagesQuery): Promise<MessagesPage> {
  const meta = await client.topic(topic);
  const partitions = q.partition === null ? meta.partitions.map((p) => p.partition) : [q.partition];
  if (q.partition !== null && !meta.partitions.some((p) => p.partition === q.partition)) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, partitionName(topic, q.partition));
  const budget = { bytes: limits.httpMessagesBytesMax };
  const messages: MessageRow[] = [];
  const bounds: MessagesPage['partitions'] = [];
  for (const partition of partitions) {
    const start = await offsetAt(client, topic, partition, -2n);
    const end = await offsetAt(client, topic, partition, -1n);
    bounds.push({ partition, logStartOffset: start, highWatermark: end });
    let from: number;
    if (q.offset !== null) from = Math.max(start, q.offset);
    else if (q.timestamp !== null) {
      const at = await offsetAt(client, topic, partition, BigInt(q.timestamp));
      from = at < 0 ? end : at;
    } else from = Math.max(start, end - q.count);
    messages.push(...await readRange(client, topic, partition, from, end, q.count, budget));
  }
  // Newest first: by timestamp across partitions, by offset within one.
  messages.sort((a, b) => b.timestamp - a.timestamp || b.offset - a.offset || a.partition - b.partition);
  return { topic, messages: messages.slice(0, q.count), partitions: bounds };
}

async function offsetAt(client: ClusterClient, topic: string, partition: number, timestamp: bigint): Promise<number> {
  const conn = await client.leaderFor(topic, partition);
  const r = await conn.send(ApiKey.ListOffsets, conn.version(ApiKey.ListOffsets, 7), {
    replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp, maxNumOffsets: 1 }] }],
  });
  const p = r.topics[0].partitions[0];
  if (p.errorCode !== 0) throw new KafkaError(p.errorCode, partitionName(topic, partition));
  return Number(p.offset);
}

async function readRange(client: ClusterClient, topic: string, partition: number, from: number, end: number, count: number, budget: { bytes: number }): Promise<MessageRow[]> {
  const out: MessageRow[] = [];
  let offset = from;
  while (offset < end && out.length < count && budget.bytes > 0) {
    const conn = await client.leaderFor(topic, partition);
    const r = await conn.send(ApiKey.Fetch, conn.version(ApiKey.Fetch, 11), {
      replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: limits.httpMessagesBytesMax, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: BigInt(offset), logStartOffset: -1n, partitionMaxBytes: limits.httpMessagesBytesMax }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const p = r.responses[0]?.partitions[0];
    if (p === undefined) break;
    if (p.errorCode !== 0) throw new KafkaError(p.errorCode, partitionName(topic, partition));
    if (!p.records || p.records.length === 0) break;
    const before = offset;
    for (const batch of iterateBatches(p.records, { allowPartialTail: true })) {
      if (!batch.isControl) {
        const body = await decompressBatchBody(batch);
        forEachRecord(batch, body, (rec) => {
          if (rec.offset < offset || rec.offset >= end || out.length >= count || budget.bytes <= 0) return;
          const key = rec.key();
          const value = rec.value();
          const headers = rec.headers();
          const size = (key?.length ?? 0) + (value?.length ?? 0) + headers.reduce((n, h) => n + h.key.length + (h.value?.length ?? 0), 0);
          budget.bytes -= size;
          out.push({
            partition, offset: rec.offset, timestamp: rec.timestamp, size,
            key: key === null ? null : key.toString('base64'), value: value === null ? null : value.toString('base64'),
            headers: headers.map((h) => ({ key: h.key, value: h.value === null ? null : h.value.toString('base64') })),
          });
        });
      }
      offset = Math.max(offset, batch.lastOffset + 1);
    }
    if (offset === before) break;
  }
  return out;
}

function stringMap(v: unknown, what: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new BadRequest(`${what} must be an object of name: value`);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = String(x);
  return out;
}
