// Fetch (key 1), v0-17. Kafka 4.0's floor is v4; v0-3 are listed only because librdkafka's
// feature map needs them to enable compression (see 00-produce.ts); they return the same v2
// batches. kafkajs sends v11, @platformatic/kafka 12+.
// Topics by name up to v12, by topic id from v13 (unknown id → UNKNOWN_TOPIC_ID). Fetch sessions
// (KIP-227, v7+) decide which partitions are read and which are answered; the replica manager
// reads whole batches up to the high watermark (or the last stable offset for read_committed)
// and long-polls through the fetch purgatory for min_bytes / max_wait_ms. A follower's fetch
// (replica id >= 0; v15+ in ReplicaState with its broker epoch) reads up to the log end offset,
// reports its progress to the leader and may be answered with a DivergingEpoch (v12+).
// Follower fetching (KIP-392, v11+): a consumer's fetch carries its rack; a follower replica serves
// it up to its own high watermark, and the leader may answer it with no records and a
// preferredReadReplica (replica.selector.class) for the consumer to fetch from instead.
// consumer_byte_rate bounds a consumer's max_bytes to what its quota window can hold; a fetch that
// takes it over its quota is answered without records and throttled (src/broker/quotas.ts).
import { ErrorCode, ZERO_UUID, type FetchRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { FetchSessionCache, SessionPartition } from '../fetch-sessions.js';
import { fetchFailure, type FetchParams, type FetchPartitionParams, type MetadataView, type PartitionFetchResult } from '../services.js';

export interface FetchServices {
  metadata(): MetadataView;
  /** A consumer's fetch is no larger than its consumer_byte_rate could ever let through (Kafka's maxValueInQuotaWindow). */
  clientQuotaManager?: { maxFetchBytes(principal: string, clientId: string): number };
  /** fetch.max.bytes: the most a consumer's fetch returns, whatever it asks (followers are not held to it). */
  fetchMaxBytes?: number;
  fetchSessions: FetchSessionCache;
  fetchPartitions(params: FetchParams): Promise<PartitionFetchResult[]>;
}

const TOPIC_IDS_MIN_VERSION = 13;
const EMPTY_RECORDS = Buffer.alloc(0);
const SESSIONS_MIN_VERSION = 7;
const REPLICA_STATE_MIN_VERSION = 15;
const RACK_ID_MIN_VERSION = 11;

/** One partition's answer with what the fetch session compares against what it sent last. */
interface Answered {
  topic: string; partition: number; errorCode: number; highWatermark: bigint; lastStableOffset: bigint; logStartOffset: bigint;
  recordsBytes: number; mustRespond: boolean; result: PartitionFetchResult;
}

/** Each partition's topic name (by id from v13), looked up once per run of the same topic. */
function topicNames(partitions: readonly SessionPartition[], byId: boolean, view: MetadataView): (string | undefined)[] {
  const names: (string | undefined)[] = new Array(partitions.length);
  let lastKey: string | null = null;
  let lastName: string | undefined;
  for (let i = 0; i < partitions.length; i++) {
    const k = partitions[i]!.topic;
    if (k !== lastKey) {
      lastKey = k;
      lastName = byId ? view.topicById(k)?.name : k;
    }
    names[i] = lastName;
  }
  return names;
}

export const fetchHandler: HandlerSpec<FetchServices, 1> = {
  apiKey: 1,
  minVersion: 0,
  maxVersion: 17,
  async handle(request: FetchRequest, ctx) {
    const s = ctx.services;
    const view = s.metadata();
    const byId = ctx.apiVersion >= TOPIC_IDS_MIN_VERSION;
    const requested: SessionPartition[] = [];
    for (const t of request.topics) {
      const topicKey = byId ? t.topicId : t.topic;
      for (const p of t.partitions) {
        requested.push({
          topic: topicKey, partition: p.partition, fetchOffset: p.fetchOffset, partitionMaxBytes: p.partitionMaxBytes,
          logStartOffset: p.logStartOffset, currentLeaderEpoch: p.currentLeaderEpoch, lastFetchedEpoch: p.lastFetchedEpoch,
        });
      }
    }
    const forgotten = request.forgottenTopicsData.flatMap((f) => f.partitions.map((partition) => ({ topic: byId ? f.topicId : f.topic, partition })));
    const sessionId = ctx.apiVersion >= SESSIONS_MIN_VERSION ? request.sessionId : 0;
    const sessionEpoch = ctx.apiVersion >= SESSIONS_MIN_VERSION ? request.sessionEpoch : -1;
    const outcome = s.fetchSessions.begin(sessionId, sessionEpoch, requested, forgotten);
    if (outcome.context === null) {
      return { throttleTimeMs: 0, errorCode: outcome.errorCode, sessionId: 0, responses: [] };
    }
    // Everything below runs for every partition of the session on every fetch (an incremental
    // fetch of 100 idle partitions included), so it builds one object per partition and no more.
    const partitions = outcome.context.partitions;
    const names = topicNames(partitions, byId, view);
    const readable: FetchPartitionParams[] = [];
    // Partitions of topics the authorizer refuses (answered TOPIC_AUTHORIZATION_FAILED, not read).
    const refused = ctx.readableTopic === undefined ? null : new Uint8Array(partitions.length);
    for (let i = 0; i < partitions.length; i++) {
      const name = names[i];
      if (name === undefined) continue;
      if (refused !== null && !ctx.readableTopic!(name)) {
        refused[i] = 1;
        continue;
      }
      const p = partitions[i]!;
      readable.push({
        topic: name, partition: p.partition, fetchOffset: p.fetchOffset, partitionMaxBytes: p.partitionMaxBytes,
        currentLeaderEpoch: p.currentLeaderEpoch, lastFetchedEpoch: p.lastFetchedEpoch, logStartOffset: p.logStartOffset,
      });
    }
    const replicaId = ctx.apiVersion >= REPLICA_STATE_MIN_VERSION ? request.replicaState.replicaId : request.replicaId;
    // Kafka's KafkaApis: a consumer gets at most fetch.max.bytes and what its quota window allows, and waits for no more than that.
    const maxBytes = replicaId < 0
      ? Math.min(request.maxBytes, ctx.services.fetchMaxBytes ?? Infinity, ctx.services.clientQuotaManager?.maxFetchBytes(ctx.principal, ctx.header.clientId ?? '') ?? Infinity)
      : request.maxBytes;
    const params: FetchParams = {
      replicaId,
      replicaEpoch: ctx.apiVersion >= REPLICA_STATE_MIN_VERSION ? request.replicaState.replicaEpoch : -1n,
      maxWaitMs: request.maxWaitMs, minBytes: Math.min(request.minBytes, maxBytes),
      maxBytes,
      isolationLevel: request.isolationLevel, partitions: readable,
      // Kafka's ClientMetadata: consumers (negative replica ids) of v11+.
      ...(ctx.apiVersion >= RACK_ID_MIN_VERSION && replicaId < 0 ? { clientMetadata: { rackId: request.rackId, listenerName: ctx.listenerName } } : {}),
      ...(ctx.responseBytes ? { alloc: ctx.responseBytes } : {}),
    };
    const read = readable.length > 0 ? await s.fetchPartitions(params) : [];
    const unknown = fetchFailure(byId ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const unauthorized = fetchFailure(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    const results: Answered[] = [];
    let next = 0;
    for (let i = 0; i < partitions.length; i++) {
      const p = partitions[i]!;
      const r = names[i] === undefined ? unknown : refused?.[i] === 1 ? unauthorized : read[next++]!;
      results.push({
        topic: p.topic, partition: p.partition, errorCode: r.errorCode, highWatermark: r.highWatermark,
        lastStableOffset: r.lastStableOffset, logStartOffset: r.logStartOffset, recordsBytes: r.records?.length ?? 0,
        // An incremental session still names these (Kafka's CachedPartition): the client must learn them.
        mustRespond: r.divergingEpoch !== undefined || r.preferredReadReplica >= 0, result: r,
      });
    }
    const answered = outcome.context.filter(results);
    // Group by topic, keeping the order in which topics first appear.
    const topics = new Map<string, Answered[]>();
    for (const a of answered) {
      const list = topics.get(a.topic);
      if (list) list.push(a);
      else topics.set(a.topic, [a]);
    }
    return {
      throttleTimeMs: 0, errorCode: 0, sessionId: outcome.context.sessionId,
      responses: [...topics.entries()].map(([topic, list]) => ({
        topic: byId ? '' : topic,
        topicId: byId ? topic : ZERO_UUID,
        partitions: list.map(({ partition, result: r }) => ({
          partitionIndex: partition, errorCode: r.errorCode, highWatermark: r.highWatermark, lastStableOffset: r.lastStableOffset,
          logStartOffset: r.logStartOffset, abortedTransactions: r.abortedTransactions, preferredReadReplica: r.preferredReadReplica,
          // Always bytes, never null: Kafka sends an empty record set, and librdkafka rejects a -1 size.
          records: r.records ?? EMPTY_RECORDS, ...(r.divergingEpoch ? { divergingEpoch: r.divergingEpoch } : {}),
        })),
      })),
    };
  },
};
