// What each API asks the authorizer, in one table (Kafka spreads it over KafkaApis and AuthHelper).
// A rule sees the decoded request and a check bound to the caller's principal and host, and
// returns one of: nothing (the handler runs as is), a whole response (the handler does not run), or
// a narrowed request plus a function that puts the refused items back into the handler's response
// with their error codes. Handlers themselves know nothing of ACLs, except the ACL APIs (29-31).
//
// Forwarded changes (CreateTopics, AlterConfigs, ...) are checked twice with the client's
// principal, as Kafka does: on the broker the client talked to, and at the controller, which takes
// the principal from the Envelope the broker wrapped the request in (so a broker cannot lend a
// client its own rights). The controller listener's own APIs (Raft RPCs, DescribeQuorum, Envelope)
// have their rules in CONTROLLER_LISTENER_RULES below; the rest of that listener shares this table.
import { ApiKey, ErrorCode, apiInfo, defaultMessage } from '../protocol/index.js';
import { AclOperation as Op, CLUSTER_RESOURCE_NAME, ResourceType as R, type AclIndex } from '../security/index.js';
import type { Authz, RequestContext } from './context.js';

export type RuleOutcome =
  | undefined
  | { readonly respond: object }
  | {
    readonly request: object; readonly after?: (response: any) => any;
    /** Topics the handler may read; `after` refuses the others, so reading them would be wasted (RequestContext.readableTopic). */
    readonly readableTopic?: (topic: string) => boolean;
  };

type Rule = (request: any, az: Authz, ctx: RequestContext<any>) => RuleOutcome;

/** Kafka compares hosts as InetAddress strings: an IPv4 client on a dual-stack socket is its IPv4 address. */
export function aclHost(clientAddress: string): string {
  return clientAddress.startsWith('::ffff:') ? clientAddress.slice(7) : clientAddress;
}

export function bindAuthz(index: AclIndex, principal: string, clientAddress: string): Authz {
  return index.bind(principal, aclHost(clientAddress));
}

const cluster = (az: Authz, op: number): boolean => az.allowed(op, R.CLUSTER, CLUSTER_RESOURCE_NAME);
const E = ErrorCode;

/** Splits `items` into those `ok` allows and the rest, keeping their order. */
function split<T>(items: readonly T[], ok: (item: T) => boolean): { allowed: T[]; denied: T[] } {
  const allowed: T[] = [];
  const denied: T[] = [];
  for (const item of items) (ok(item) ? allowed : denied).push(item);
  return { allowed, denied };
}

/**
 * The common shape: `field` of the request lists items; refused ones are answered in the
 * response's `responseField` as `deny(item)`. A response of null (Produce acks=0) stays null.
 */
function perItem<T>(request: any, field: string, responseField: string, ok: (item: T) => boolean, deny: (item: T) => object): RuleOutcome {
  const items: T[] | null = request[field];
  if (items === null || items === undefined) return undefined;
  // The usual case allocates nothing: every item allowed.
  let i = 0;
  while (i < items.length && ok(items[i]!)) i++;
  if (i === items.length) return undefined;
  const { allowed, denied } = split(items, ok);
  return {
    request: { ...request, [field]: allowed },
    after: (response: any) => {
      if (response === null) return null;
      return { ...response, [responseField]: [...(response[responseField] ?? []), ...denied.map(deny)] };
    },
  };
}

/** A topic's partitions, each answered with `errorCode` (plus whatever else the entry needs). */
const topicPartitions = (nameField: string, partsField: string, indexOf: (p: any) => number, outParts: string, outIndex: string, errorCode: number, extra: object = {}) =>
  (t: any) => ({ [nameField === 'topic' ? 'topic' : 'name']: t[nameField], [outParts]: (t[partsField] as any[]).map((p) => ({ [outIndex]: indexOf(p), errorCode, ...extra })) });

const clusterOnly = (op: number, respond: (code: number) => object): Rule =>
  (_req, az) => cluster(az, op) ? undefined : { respond: respond(E.CLUSTER_AUTHORIZATION_FAILED) };

/**
 * The share coordinator's RPCs (83-87): CLUSTER_ACTION, broker to broker. Refused, every partition
 * asked about answers CLUSTER_AUTHORIZATION_FAILED (as Kafka's error response does), so the sender
 * sees why rather than an answer without its partitions.
 */
const shareStateRule = (fields: object): Rule => (req, az) => cluster(az, Op.CLUSTER_ACTION) ? undefined : {
  respond: { results: (req.topics ?? []).map((t: any) => ({ topicId: t.topicId, partitions: (t.partitions ?? []).map((p: any) => ({ partition: p.partition, errorCode: E.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null, ...fields })) })) },
};

const groupOnly = (op: number, respond: (code: number) => object): Rule =>
  (req, az) => az.allowed(op, R.GROUP, req.groupId) ? undefined : { respond: respond(E.GROUP_AUTHORIZATION_FAILED) };

const fetchReplicaId = (req: any, version: number): number => version >= 15 ? req.replicaState?.replicaId ?? -1 : req.replicaId;

const produceFailed = (code: number) => (t: any) => ({ name: t.name, partitionResponses: t.partitionData.map((p: any) => ({
  index: p.index, errorCode: code, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [], errorMessage: null,
})) });
const produceTopicFailed = produceFailed(E.TOPIC_AUTHORIZATION_FAILED);

const produce: Rule = (req, az) => {
  if (req.transactionalId !== null && !az.allowed(Op.WRITE, R.TRANSACTIONAL_ID, req.transactionalId)) {
    return req.acks === 0 ? { respond: null as never }
      : { respond: { responses: (req.topicData as any[]).map(produceFailed(E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)), throttleTimeMs: 0 } };
  }
  return perItem(req, 'topicData', 'responses', (t: any) => az.allowed(Op.WRITE, R.TOPIC, t.name), produceTopicFailed);
};

/**
 * Fetch: followers need CLUSTER_ACTION; consumers READ on each topic. Checked on the response, not
 * the request: partitions of a fetch session are served without being named in the request, and a
 * grant deleted meanwhile must stop them too. The handler does not read refused topics (as Kafka
 * leaves them out of the read), so their records neither cost a read nor end a long poll early.
 */
const fetch: Rule = (req, az, ctx) => {
  const follower = fetchReplicaId(req, ctx.apiVersion) >= 0;
  if (follower && cluster(az, Op.CLUSTER_ACTION)) return undefined;
  const nameOf = (t: any): string | undefined => ctx.apiVersion >= 13 ? ctx.services.metadata?.().topicById(t.topicId)?.name : t.topic;
  const readableTopic = (name: string) => !follower && az.allowed(Op.READ, R.TOPIC, name);
  const ok = (t: any) => { const n = nameOf(t); return n === undefined ? !follower : readableTopic(n); };
  return {
    request: req,
    readableTopic,
    after: (response: any) => response === null ? null : {
      ...response,
      responses: response.responses.map((t: any) => ok(t) ? t : {
        ...t, partitions: t.partitions.map((p: any) => ({
          partitionIndex: p.partitionIndex, errorCode: E.TOPIC_AUTHORIZATION_FAILED, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n,
          abortedTransactions: null, preferredReadReplica: -1, records: null,
        })),
      }),
    },
  };
};

const metadata: Rule = (req, az, ctx) => {
  const describable = (name: string) => az.allowed(Op.DESCRIBE, R.TOPIC, name);
  // Metadata v0 asks for every topic with an empty list.
  if (req.topics === null || (ctx.apiVersion === 0 && req.topics.length === 0)) {
    return { request: req, after: (r: any) => ({ ...r, topics: r.topics.filter((t: any) => t.name === null || describable(t.name)) }) };
  }
  const named = req.topics as { name: string | null; topicId: string }[];
  const { allowed, denied } = split(named, (t) => t.name === null || describable(t.name));
  // Auto-creation needs CREATE on the cluster or the topic; without it a missing topic is refused as unauthorized.
  const noCreate = req.allowAutoTopicCreation && !cluster(az, Op.CREATE)
    ? new Set(allowed.filter((t) => t.name !== null && !az.allowed(Op.CREATE, R.TOPIC, t.name)).map((t) => t.name!)) : new Set<string>();
  if (denied.length === 0 && noCreate.size === 0) return undefined;
  const deniedOut = denied.map((t) => ({ errorCode: E.TOPIC_AUTHORIZATION_FAILED, name: t.name, topicId: t.topicId, isInternal: false, partitions: [], topicAuthorizedOperations: -2147483648 }));
  return {
    request: { ...req, topics: allowed, allowAutoTopicCreation: req.allowAutoTopicCreation && noCreate.size === 0 },
    // Filtered again on the way out: Metadata v0 reads an empty list as "all topics".
    after: (r: any) => ({
      ...r,
      topics: [...r.topics.filter((t: any) => t.name === null || describable(t.name))
        .map((t: any) => t.errorCode === E.UNKNOWN_TOPIC_OR_PARTITION && noCreate.has(t.name) ? { ...t, errorCode: E.TOPIC_AUTHORIZATION_FAILED } : t), ...deniedOut],
    }),
  };
};

const offsetCommit: Rule = (req, az) => {
  const fail = (code: number) => topicPartitions('name', 'partitions', (p) => p.partitionIndex, 'partitions', 'partitionIndex', code);
  if (!az.allowed(Op.READ, R.GROUP, req.groupId)) return { respond: { throttleTimeMs: 0, topics: req.topics.map(fail(E.GROUP_AUTHORIZATION_FAILED)) } };
  return perItem(req, 'topics', 'topics', (t: any) => az.allowed(Op.READ, R.TOPIC, t.name), fail(E.TOPIC_AUTHORIZATION_FAILED));
};

/** OffsetFetch: READ on the group; topics without DESCRIBE are refused when named, left out when all were asked for. */
const offsetFetch: Rule = (req, az, ctx) => {
  const readable = (name: string) => az.allowed(Op.DESCRIBE, R.TOPIC, name);
  const filterTopics = (topics: any[], askedAll: boolean) => askedAll
    ? topics.filter((t) => readable(t.name))
    : topics.map((t) => readable(t.name) ? t : { ...t, partitions: t.partitions.map((p: any) => ({ ...p, committedOffset: -1n, metadata: null, errorCode: E.TOPIC_AUTHORIZATION_FAILED })) });
  if (ctx.apiVersion < 8) {
    if (!az.allowed(Op.READ, R.GROUP, req.groupId)) {
      // v0-1 have no top-level error code: each partition asked for carries it.
      const topics = ((req.topics ?? []) as any[]).map((t) => ({ name: t.name, partitions: (t.partitionIndexes as number[]).map((partitionIndex) => ({
        partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: null, errorCode: E.GROUP_AUTHORIZATION_FAILED })) }));
      return { respond: { throttleTimeMs: 0, topics, errorCode: E.GROUP_AUTHORIZATION_FAILED } };
    }
    return { request: req, after: (r: any) => ({ ...r, topics: filterTopics(r.topics, req.topics === null) }) };
  }
  const { allowed, denied } = split(req.groups as any[], (g) => az.allowed(Op.READ, R.GROUP, g.groupId));
  const askedAll = new Map((req.groups as any[]).map((g) => [g.groupId, g.topics === null]));
  return {
    request: { ...req, groups: allowed },
    after: (r: any) => ({
      ...r,
      groups: [...r.groups.map((g: any) => ({ ...g, topics: filterTopics(g.topics, askedAll.get(g.groupId) ?? false) })),
        ...denied.map((g) => ({ groupId: g.groupId, topics: [], errorCode: E.GROUP_AUTHORIZATION_FAILED }))],
    }),
  };
};

const findCoordinator: Rule = (req, az, ctx) => {
  const txn = req.keyType === 1;
  const ok = (key: string) => az.allowed(Op.DESCRIBE, txn ? R.TRANSACTIONAL_ID : R.GROUP, key);
  const code = txn ? E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED : E.GROUP_AUTHORIZATION_FAILED;
  if (ctx.apiVersion < 4) return ok(req.key) ? undefined : { respond: { throttleTimeMs: 0, errorCode: code, errorMessage: null, nodeId: -1, host: '', port: -1 } };
  return perItem(req, 'coordinatorKeys', 'coordinators', ok, (key: string) => ({ key, nodeId: -1, host: '', port: -1, errorCode: code, errorMessage: null }));
};

const initProducerId: Rule = (req, az) => {
  if (req.transactionalId !== null) {
    return az.allowed(Op.WRITE, R.TRANSACTIONAL_ID, req.transactionalId) ? undefined
      : { respond: { throttleTimeMs: 0, errorCode: E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 } };
  }
  // Idempotent producers (Kafka 3.0+, KIP-679): IDEMPOTENT_WRITE on the cluster, or WRITE on any topic.
  return cluster(az, Op.IDEMPOTENT_WRITE) || az.allowedAny(Op.WRITE, R.TOPIC) ? undefined
    : { respond: { throttleTimeMs: 0, errorCode: E.CLUSTER_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 } };
};

/** AddPartitionsToTxn v0-3 from producers: WRITE on the id and on every topic, or nothing is added; v4+ batches come from brokers. */
const addPartitionsToTxn: Rule = (req, az, ctx) => {
  if (ctx.apiVersion >= 4) return cluster(az, Op.CLUSTER_ACTION) ? undefined : { respond: { throttleTimeMs: 0, errorCode: E.CLUSTER_AUTHORIZATION_FAILED, resultsByTransaction: [] } };
  const topics: any[] = req.v3AndBelowTopics;
  const answer = (codeOf: (t: any) => number) => ({ respond: { throttleTimeMs: 0, resultsByTopicV3AndBelow: topics.map((t) => ({
    name: t.name, resultsByPartition: (t.partitions as number[]).map((p) => ({ partitionIndex: p, partitionErrorCode: codeOf(t) })),
  })) } });
  if (!az.allowed(Op.WRITE, R.TRANSACTIONAL_ID, req.v3AndBelowTransactionalId)) return answer(() => E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  const refused = new Set(topics.filter((t) => !az.allowed(Op.WRITE, R.TOPIC, t.name)).map((t) => t.name));
  return refused.size === 0 ? undefined : answer((t) => refused.has(t.name) ? E.TOPIC_AUTHORIZATION_FAILED : E.OPERATION_NOT_ATTEMPTED);
};

const txnOffsetCommit: Rule = (req, az) => {
  const fail = (code: number) => topicPartitions('name', 'partitions', (p) => p.partitionIndex, 'partitions', 'partitionIndex', code);
  const whole = (code: number) => ({ respond: { throttleTimeMs: 0, topics: req.topics.map(fail(code)) } });
  if (!az.allowed(Op.WRITE, R.TRANSACTIONAL_ID, req.transactionalId)) return whole(E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  if (!az.allowed(Op.READ, R.GROUP, req.groupId)) return whole(E.GROUP_AUTHORIZATION_FAILED);
  return perItem(req, 'topics', 'topics', (t: any) => az.allowed(Op.READ, R.TOPIC, t.name), fail(E.TOPIC_AUTHORIZATION_FAILED));
};

/** Broker (4) and broker-logger (8) configs are the cluster's; topic (2) configs the topic's. */
// Topic configs need the operation on the topic, group configs on the group (as Kafka's
// AuthHelper), everything else (broker, client-metrics) on the cluster.
const configResource = (op: number, responseField: string): Rule => (req, az) => perItem(req, 'resources', responseField,
  (r: any) => r.resourceType === 2 ? az.allowed(op, R.TOPIC, r.resourceName) : r.resourceType === 32 ? az.allowed(op, R.GROUP, r.resourceName) : cluster(az, op),
  (r: any) => ({
    errorCode: r.resourceType === 2 ? E.TOPIC_AUTHORIZATION_FAILED : r.resourceType === 32 ? E.GROUP_AUTHORIZATION_FAILED : E.CLUSTER_AUTHORIZATION_FAILED,
    errorMessage: null, resourceType: r.resourceType, resourceName: r.resourceName, configs: [] }));

const topicNameOf = (ctx: RequestContext<any>, t: { name: string | null; topicId: string }): string | undefined =>
  t.name ?? ctx.services.metadata?.().topicById(t.topicId)?.name;

const deleteTopics: Rule = (req, az, ctx) => {
  if (ctx.apiVersion < 6) {
    return perItem(req, 'topicNames', 'responses', (n: string) => az.allowed(Op.DELETE, R.TOPIC, n),
      (n: string) => ({ name: n, errorCode: E.TOPIC_AUTHORIZATION_FAILED, errorMessage: null }));
  }
  return perItem(req, 'topics', 'responses', (t: any) => { const n = topicNameOf(ctx, t); return n === undefined || az.allowed(Op.DELETE, R.TOPIC, n); },
    (t: any) => ({ name: t.name, topicId: t.topicId, errorCode: E.TOPIC_AUTHORIZATION_FAILED, errorMessage: null }));
};

const NONE: Rule = () => undefined;

/**
 * Every API a broker serves, and what it needs. An API missing here needs ALTER on the cluster (a
 * test keeps the table complete for the handlers that exist).
 */
export const AUTHORIZATION_RULES: ReadonlyMap<number, Rule> = new Map<number, Rule>([
  [ApiKey.Produce, produce],
  [ApiKey.Fetch, fetch],
  [ApiKey.ListOffsets, (req, az) => perItem(req, 'topics', 'topics', (t: any) => az.allowed(Op.DESCRIBE, R.TOPIC, t.name),
    topicPartitions('name', 'partitions', (p) => p.partitionIndex, 'partitions', 'partitionIndex', E.TOPIC_AUTHORIZATION_FAILED, { timestamp: -1n, offset: -1n, leaderEpoch: -1 }))],
  [ApiKey.Metadata, metadata],
  [ApiKey.OffsetCommit, offsetCommit],
  [ApiKey.OffsetFetch, offsetFetch],
  [ApiKey.FindCoordinator, findCoordinator],
  [ApiKey.JoinGroup, groupOnly(Op.READ, (errorCode) => ({ throttleTimeMs: 0, errorCode, generationId: -1, protocolName: '', leader: '', memberId: '', members: [] }))],
  [ApiKey.Heartbeat, groupOnly(Op.READ, (errorCode) => ({ throttleTimeMs: 0, errorCode }))],
  [ApiKey.LeaveGroup, groupOnly(Op.READ, (errorCode) => ({ throttleTimeMs: 0, errorCode, members: [] }))],
  [ApiKey.SyncGroup, groupOnly(Op.READ, (errorCode) => ({ throttleTimeMs: 0, errorCode, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) }))],
  [ApiKey.DescribeGroups, (req, az) => perItem(req, 'groups', 'groups', (g: string) => az.allowed(Op.DESCRIBE, R.GROUP, g),
    (g: string) => ({ errorCode: E.GROUP_AUTHORIZATION_FAILED, groupId: g, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: -2147483648 }))],
  [ApiKey.ListGroups, (req, az) => cluster(az, Op.DESCRIBE) ? undefined
    : { request: req, after: (r: any) => ({ ...r, groups: r.groups.filter((g: any) => az.allowed(Op.DESCRIBE, R.GROUP, g.groupId)) }) }],
  [ApiKey.ApiVersions, NONE],
  [ApiKey.CreateTopics, (req, az) => cluster(az, Op.CREATE) ? undefined : perItem(req, 'topics', 'topics', (t: any) => az.allowed(Op.CREATE, R.TOPIC, t.name),
    (t: any) => ({ name: t.name, errorCode: E.TOPIC_AUTHORIZATION_FAILED, errorMessage: null, numPartitions: -1, replicationFactor: -1, configs: null }))],
  [ApiKey.DeleteTopics, deleteTopics],
  [ApiKey.DeleteRecords, (req, az) => perItem(req, 'topics', 'topics', (t: any) => az.allowed(Op.DELETE, R.TOPIC, t.name),
    topicPartitions('name', 'partitions', (p) => p.partitionIndex, 'partitions', 'partitionIndex', E.TOPIC_AUTHORIZATION_FAILED, { lowWatermark: -1n }))],
  [ApiKey.InitProducerId, initProducerId],
  [ApiKey.OffsetForLeaderEpoch, (req, az) => {
    if (req.replicaId >= 0) return cluster(az, Op.CLUSTER_ACTION) ? undefined
      : { respond: { throttleTimeMs: 0, topics: req.topics.map(topicPartitions('topic', 'partitions', (p) => p.partition, 'partitions', 'partition', E.CLUSTER_AUTHORIZATION_FAILED, { leaderEpoch: -1, endOffset: -1n })) } };
    return perItem(req, 'topics', 'topics', (t: any) => az.allowed(Op.DESCRIBE, R.TOPIC, t.topic),
      topicPartitions('topic', 'partitions', (p) => p.partition, 'partitions', 'partition', E.TOPIC_AUTHORIZATION_FAILED, { leaderEpoch: -1, endOffset: -1n }));
  }],
  [ApiKey.AddPartitionsToTxn, addPartitionsToTxn],
  [ApiKey.AddOffsetsToTxn, (req, az) => !az.allowed(Op.WRITE, R.TRANSACTIONAL_ID, req.transactionalId)
    ? { respond: { throttleTimeMs: 0, errorCode: E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED } }
    : az.allowed(Op.READ, R.GROUP, req.groupId) ? undefined : { respond: { throttleTimeMs: 0, errorCode: E.GROUP_AUTHORIZATION_FAILED } }],
  [ApiKey.EndTxn, (req, az) => az.allowed(Op.WRITE, R.TRANSACTIONAL_ID, req.transactionalId) ? undefined
    : { respond: { throttleTimeMs: 0, errorCode: E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED } }],
  [ApiKey.WriteTxnMarkers, (req, az) => cluster(az, Op.CLUSTER_ACTION) ? undefined : { respond: { markers: req.markers.map((m: any) => ({
    producerId: m.producerId, topics: m.topics.map((t: any) => ({ name: t.name, partitions: t.partitionIndexes.map((p: number) => ({ partitionIndex: p, errorCode: E.CLUSTER_AUTHORIZATION_FAILED })) })),
  })) } }],
  [ApiKey.TxnOffsetCommit, txnOffsetCommit],
  [ApiKey.DescribeConfigs, configResource(Op.DESCRIBE_CONFIGS, 'results')],
  [ApiKey.AlterConfigs, configResource(Op.ALTER_CONFIGS, 'responses')],
  [ApiKey.IncrementalAlterConfigs, configResource(Op.ALTER_CONFIGS, 'responses')],
  [ApiKey.DescribeLogDirs, clusterOnly(Op.DESCRIBE, (errorCode) => ({ throttleTimeMs: 0, errorCode, results: [] }))],
  [ApiKey.CreatePartitions, (req, az) => perItem(req, 'topics', 'results', (t: any) => az.allowed(Op.ALTER, R.TOPIC, t.name),
    (t: any) => ({ name: t.name, errorCode: E.TOPIC_AUTHORIZATION_FAILED, errorMessage: null }))],
  [ApiKey.DeleteGroups, (req, az) => perItem(req, 'groupsNames', 'results', (g: string) => az.allowed(Op.DELETE, R.GROUP, g),
    (g: string) => ({ groupId: g, errorCode: E.GROUP_AUTHORIZATION_FAILED }))],
  // v0 has no top-level error code: each partition asked for carries it.
  [ApiKey.ElectLeaders, (req, az) => cluster(az, Op.ALTER) ? undefined : { respond: { throttleTimeMs: 0, errorCode: E.CLUSTER_AUTHORIZATION_FAILED,
    replicaElectionResults: ((req.topicPartitions ?? []) as any[]).map((t) => ({ topic: t.topic,
      partitionResult: (t.partitions as number[]).map((partitionId) => ({ partitionId, errorCode: E.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null })) })) } }],
  [ApiKey.AlterPartitionReassignments, clusterOnly(Op.ALTER, (errorCode) => ({ throttleTimeMs: 0, errorCode, errorMessage: null, responses: [] }))],
  [ApiKey.ListPartitionReassignments, clusterOnly(Op.DESCRIBE, (errorCode) => ({ throttleTimeMs: 0, errorCode, errorMessage: null, topics: [] }))],
  [ApiKey.OffsetDelete, (req, az) => {
    if (!az.allowed(Op.DELETE, R.GROUP, req.groupId)) return { respond: { errorCode: E.GROUP_AUTHORIZATION_FAILED, throttleTimeMs: 0, topics: [] } };
    return perItem(req, 'topics', 'topics', (t: any) => az.allowed(Op.READ, R.TOPIC, t.name),
      topicPartitions('name', 'partitions', (p) => p.partitionIndex, 'partitions', 'partitionIndex', E.TOPIC_AUTHORIZATION_FAILED));
  }],
  [ApiKey.DescribeQuorum, clusterOnly(Op.DESCRIBE, (errorCode) => ({ throttleTimeMs: 0, errorCode, errorMessage: null, topics: [], nodes: [] }))],
  [ApiKey.DescribeCluster, clusterOnly(Op.DESCRIBE, (errorCode) => ({ throttleTimeMs: 0, errorCode, errorMessage: null, clusterId: '', controllerId: -1, brokers: [] }))],
  [ApiKey.DescribeProducers, (req, az) => perItem(req, 'topics', 'topics', (t: any) => az.allowed(Op.READ, R.TOPIC, t.name),
    (t: any) => ({ name: t.name, partitions: t.partitionIndexes.map((p: number) => ({ partitionIndex: p, errorCode: E.TOPIC_AUTHORIZATION_FAILED, errorMessage: null, activeProducers: [] })) }))],
  [ApiKey.DescribeTransactions, (req, az) => perItem(req, 'transactionalIds', 'transactionStates', (id: string) => az.allowed(Op.DESCRIBE, R.TRANSACTIONAL_ID, id),
    (id: string) => ({ errorCode: E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, transactionalId: id, transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1n, producerId: -1n, producerEpoch: -1, topics: [] }))],
  [ApiKey.ListTransactions, (req, az) => ({ request: req, after: (r: any) => ({ ...r, transactionStates: r.transactionStates.filter((t: any) => az.allowed(Op.DESCRIBE, R.TRANSACTIONAL_ID, t.transactionalId)) }) })],
  // KIP-848 heartbeats: READ on the group, and DESCRIBE on every topic subscribed to by name.
  [ApiKey.ConsumerGroupHeartbeat, (req, az) => {
    const refuse = (errorCode: number) => ({ respond: { throttleTimeMs: 0, errorCode, errorMessage: null, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null } });
    if (!az.allowed(Op.READ, R.GROUP, req.groupId)) return refuse(E.GROUP_AUTHORIZATION_FAILED);
    const names: string[] | null = req.subscribedTopicNames;
    return names !== null && names.some((n) => !az.allowed(Op.DESCRIBE, R.TOPIC, n)) ? refuse(E.TOPIC_AUTHORIZATION_FAILED) : undefined;
  }],
  [ApiKey.ConsumerGroupDescribe, (req, az) => perItem(req, 'groupIds', 'groups', (g: string) => az.allowed(Op.DESCRIBE, R.GROUP, g),
    (g: string) => ({ errorCode: E.GROUP_AUTHORIZATION_FAILED, errorMessage: null, groupId: g, groupState: '', groupEpoch: -1, assignmentEpoch: -1, assignorName: '', members: [], authorizedOperations: -2147483648 }))],
  // KIP-932: a share group's heartbeat as a consumer group's; ShareFetch and ShareAcknowledge READ
  // on the group, and READ on each topic, which the handlers check per partition as they resolve
  // topic ids (TOPIC_AUTHORIZATION_FAILED; nothing is acquired there); the share coordinator's RPCs
  // are broker to broker (CLUSTER_ACTION, as Kafka).
  [ApiKey.ShareGroupHeartbeat, (req, az) => {
    const refuse = (errorCode: number) => ({ respond: { throttleTimeMs: 0, errorCode, errorMessage: null, memberId: null, memberEpoch: -1, heartbeatIntervalMs: 0, assignment: null } });
    if (!az.allowed(Op.READ, R.GROUP, req.groupId)) return refuse(E.GROUP_AUTHORIZATION_FAILED);
    const names: string[] | null = req.subscribedTopicNames;
    return names !== null && names.some((n) => !az.allowed(Op.DESCRIBE, R.TOPIC, n)) ? refuse(E.TOPIC_AUTHORIZATION_FAILED) : undefined;
  }],
  [ApiKey.ShareGroupDescribe, (req, az) => perItem(req, 'groupIds', 'groups', (g: string) => az.allowed(Op.DESCRIBE, R.GROUP, g),
    (g: string) => ({ errorCode: E.GROUP_AUTHORIZATION_FAILED, errorMessage: null, groupId: g, groupState: '', groupEpoch: -1, assignmentEpoch: -1, assignorName: '', members: [], authorizedOperations: -2147483648 }))],
  [ApiKey.ShareFetch, (req, az) => az.allowed(Op.READ, R.GROUP, req.groupId ?? '') ? { request: req, readableTopic: (n: string) => az.allowed(Op.READ, R.TOPIC, n) }
    : { respond: { throttleTimeMs: 0, errorCode: E.GROUP_AUTHORIZATION_FAILED, errorMessage: null, acquisitionLockTimeoutMs: 0, responses: [], nodeEndpoints: [] } }],
  [ApiKey.ShareAcknowledge, (req, az) => az.allowed(Op.READ, R.GROUP, req.groupId ?? '') ? { request: req, readableTopic: (n: string) => az.allowed(Op.READ, R.TOPIC, n) }
    : { respond: { throttleTimeMs: 0, errorCode: E.GROUP_AUTHORIZATION_FAILED, errorMessage: null, responses: [], nodeEndpoints: [] } }],
  // The admin APIs as Kafka checks them: DESCRIBE (90), READ (91) or DELETE (92) on the group; a
  // topic the caller may not DESCRIBE (90) or READ (91, 92) refuses the request.
  [ApiKey.DescribeShareGroupOffsets, (req, az) => perItem(req, 'groups', 'groups',
    (g: any) => az.allowed(Op.DESCRIBE, R.GROUP, g.groupId) && (g.topics ?? []).every((t: any) => az.allowed(Op.DESCRIBE, R.TOPIC, t.topicName)),
    (g: any) => ({ groupId: g.groupId, topics: [], errorCode: az.allowed(Op.DESCRIBE, R.GROUP, g.groupId) ? E.TOPIC_AUTHORIZATION_FAILED : E.GROUP_AUTHORIZATION_FAILED, errorMessage: null }))],
  [ApiKey.AlterShareGroupOffsets, (req, az) => {
    const refuse = (errorCode: number) => ({ respond: { throttleTimeMs: 0, errorCode, errorMessage: null, responses: [] } });
    if (!az.allowed(Op.READ, R.GROUP, req.groupId)) return refuse(E.GROUP_AUTHORIZATION_FAILED);
    return req.topics.every((t: any) => az.allowed(Op.READ, R.TOPIC, t.topicName)) ? undefined : refuse(E.TOPIC_AUTHORIZATION_FAILED);
  }],
  [ApiKey.DeleteShareGroupOffsets, (req, az) => {
    const refuse = (errorCode: number) => ({ respond: { throttleTimeMs: 0, errorCode, errorMessage: null, responses: [] } });
    if (!az.allowed(Op.DELETE, R.GROUP, req.groupId)) return refuse(E.GROUP_AUTHORIZATION_FAILED);
    return req.topics.every((t: any) => az.allowed(Op.READ, R.TOPIC, t.topicName)) ? undefined : refuse(E.TOPIC_AUTHORIZATION_FAILED);
  }],
  [ApiKey.InitializeShareGroupState, shareStateRule({})],
  [ApiKey.ReadShareGroupState, shareStateRule({ stateEpoch: -1, startOffset: -1n, stateBatches: [] })],
  [ApiKey.WriteShareGroupState, shareStateRule({})],
  [ApiKey.DeleteShareGroupState, shareStateRule({})],
  [ApiKey.ReadShareGroupStateSummary, shareStateRule({ stateEpoch: -1, startOffset: -1n })],
  // An empty list asks for every topic, so the answer is filtered too.
  [ApiKey.DescribeTopicPartitions, (req, az) => {
    const describable = (name: string) => az.allowed(Op.DESCRIBE, R.TOPIC, name);
    const { allowed, denied } = split(req.topics as { name: string }[], (t) => describable(t.name));
    if (denied.length > 0 && allowed.length === 0) {
      return { respond: { throttleTimeMs: 0, nextCursor: null, topics: denied.map((t) => ({ errorCode: E.TOPIC_AUTHORIZATION_FAILED, name: t.name, isInternal: false, partitions: [], topicAuthorizedOperations: -2147483648 })) } };
    }
    return { request: { ...req, topics: allowed }, after: (r: any) => ({ ...r, topics: [...r.topics.filter((t: any) => t.name === null || describable(t.name)),
      ...denied.map((t) => ({ errorCode: E.TOPIC_AUTHORIZATION_FAILED, name: t.name, isInternal: false, partitions: [], topicAuthorizedOperations: -2147483648 }))] }) };
  }],
  // The ACL APIs check CLUSTER rights in their handlers: they also answer SECURITY_DISABLED without an authorizer.
  [ApiKey.DescribeAcls, NONE],
  [ApiKey.CreateAcls, NONE],
  [ApiKey.DeleteAcls, NONE],
  // Served by other rooms (SASL, quotas, SCRAM): what Kafka checks for them.
  [ApiKey.SaslHandshake, NONE],
  [ApiKey.SaslAuthenticate, NONE],
  [ApiKey.DescribeClientQuotas, clusterOnly(Op.DESCRIBE_CONFIGS, (errorCode) => ({ throttleTimeMs: 0, errorCode, errorMessage: null, entries: null }))],
  [ApiKey.AlterClientQuotas, (req, az) => cluster(az, Op.ALTER_CONFIGS) ? undefined : { respond: { throttleTimeMs: 0,
    entries: req.entries.map((e: any) => ({ errorCode: E.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null, entity: e.entity.map((x: any) => ({ entityType: x.entityType, entityName: x.entityName })) })) } }],
  [ApiKey.DescribeUserScramCredentials, clusterOnly(Op.DESCRIBE, (errorCode) => ({ throttleTimeMs: 0, errorCode, errorMessage: null, results: [] }))],
  [ApiKey.AlterUserScramCredentials, (req, az) => cluster(az, Op.ALTER) ? undefined : { respond: { throttleTimeMs: 0,
    results: [...req.deletions, ...req.upsertions].map((u: any) => ({ user: u.name, errorCode: E.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null })) } }],
  [ApiKey.UpdateFeatures, clusterOnly(Op.ALTER, (errorCode) => ({ throttleTimeMs: 0, errorCode, errorMessage: null, results: [] }))],
  // Brokers' and controllers' own APIs: only other nodes of the cluster may send them.
  [ApiKey.BrokerRegistration, clusterOnly(Op.CLUSTER_ACTION, (errorCode) => ({ throttleTimeMs: 0, errorCode, brokerEpoch: -1n }))],
  [ApiKey.BrokerHeartbeat, clusterOnly(Op.CLUSTER_ACTION, (errorCode) => ({ throttleTimeMs: 0, errorCode, isCaughtUp: false, isFenced: true, shouldShutDown: false }))],
  [ApiKey.AlterPartition, clusterOnly(Op.CLUSTER_ACTION, (errorCode) => ({ throttleTimeMs: 0, errorCode, topics: [] }))],
  [ApiKey.AllocateProducerIds, clusterOnly(Op.CLUSTER_ACTION, (errorCode) => ({ throttleTimeMs: 0, errorCode, producerIdStart: -1n, producerIdLen: 0 }))],
]);

/**
 * The rule's outcome for one request. An API without a rule is allowed to principals with ALTER on
 * the cluster; others get its default response with CLUSTER_AUTHORIZATION_FAILED where it has a
 * top-level error code, or a closed connection ('unlisted') where it has none.
 */
export function authorizeRequest(apiKey: number, request: object, az: Authz, ctx: RequestContext<any>,
  rules: ReadonlyMap<number, Rule> = AUTHORIZATION_RULES): RuleOutcome | 'unlisted' {
  const rule = rules.get(apiKey);
  if (rule !== undefined) return rule(request, az, ctx);
  if (cluster(az, Op.ALTER)) return undefined;
  const name = apiInfo(apiKey)?.response.name;
  if (name === undefined) return 'unlisted';
  const body = defaultMessage<Record<string, unknown>>(name, ctx.apiVersion);
  return 'errorCode' in body ? { respond: { ...body, errorCode: E.CLUSTER_AUTHORIZATION_FAILED } } : 'unlisted';
}

/** The API's default response with `errorCode` at the top (every controller-listener API has one). */
const clusterRefusal = (op: number): Rule => (_req, az, ctx) => {
  if (cluster(az, op)) return undefined;
  const body = defaultMessage<Record<string, unknown>>(apiInfo(ctx.header.requestApiKey)!.response.name, ctx.apiVersion);
  return { respond: { ...body, errorCode: E.CLUSTER_AUTHORIZATION_FAILED } };
};

/**
 * The controller listener (Kafka's ControllerApis): what only other nodes may send needs
 * CLUSTER_ACTION on the cluster — the quorum's RPCs, and the Envelope a broker forwards a client's
 * request in (whose inner request is then checked with the client's principal by the rest of the
 * table); DescribeQuorum needs DESCRIBE, adding or removing a voter ALTER, as in Kafka. Fetch here
 * is a voter or observer replicating the metadata log, never a consumer.
 */
export const CONTROLLER_LISTENER_RULES: ReadonlyMap<number, Rule> = new Map<number, Rule>([
  ...AUTHORIZATION_RULES,
  [ApiKey.Vote, clusterRefusal(Op.CLUSTER_ACTION)],
  [ApiKey.BeginQuorumEpoch, clusterRefusal(Op.CLUSTER_ACTION)],
  [ApiKey.EndQuorumEpoch, clusterRefusal(Op.CLUSTER_ACTION)],
  [ApiKey.Fetch, clusterRefusal(Op.CLUSTER_ACTION)],
  [ApiKey.FetchSnapshot, clusterRefusal(Op.CLUSTER_ACTION)],
  [ApiKey.UpdateRaftVoter, clusterRefusal(Op.CLUSTER_ACTION)],
  [ApiKey.AddRaftVoter, clusterRefusal(Op.ALTER)],
  [ApiKey.RemoveRaftVoter, clusterRefusal(Op.ALTER)],
  [ApiKey.DescribeQuorum, clusterRefusal(Op.DESCRIBE)],
  [ApiKey.Envelope, clusterOnly(Op.CLUSTER_ACTION, (errorCode) => ({ responseData: null, errorCode }))],
]);
