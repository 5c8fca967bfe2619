// Handlers are pure functions of (request, context): these tests call them with plain objects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { produceHandler } from '../../src/broker/handlers/00-produce.js';
import { metadataHandler, type MetadataServices } from '../../src/broker/handlers/03-metadata.js';
import { fetchHandler } from '../../src/broker/handlers/01-fetch.js';
import { FetchSessionCache } from '../../src/broker/fetch-sessions.js';
import type { MetadataView, TopicView, FetchParams, PartitionFetchResult } from '../../src/broker/services.js';
import { buildRecordBatch, Compression } from '../../src/records/index.js';
import { ErrorCode, defaultMessage, type FetchRequest } from '../../src/protocol/index.js';
import { ManualClock, partitionKey } from '../../src/util/index.js';

const ctx = (apiVersion: number, services: unknown) => ({
  header: { requestApiKey: 0, requestApiVersion: apiVersion, correlationId: 1, clientId: 'c' }, apiVersion,
  connectionId: 'c1', clientAddress: '127.0.0.1', listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', principal: 'User:ANONYMOUS', nowMs: 0, services,
}) as any;

function view(topics: TopicView[]): MetadataView {
  return {
    clusterId: 'cid', controllerId: 1,
    brokers: () => [{ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }],
    topics: () => topics, topic: (n) => topics.find((t) => t.name === n), topicById: (id) => topics.find((t) => t.id === id), configs: () => new Map(),
    features: () => ({ epoch: -1n, levels: new Map() }),
  };
}
const topicT: TopicView = { name: 't', id: 'AAAAAAAAAAAAAAAAAAAAAQ', isInternal: false, partitions: [{ partition: 0, leader: 1, leaderEpoch: 3, replicas: [1], isr: [1], offlineReplicas: [] }] };

test('Produce: acks=0 gets no response; bad acks, null records and zstd below v7 are per-partition errors', async () => {
  const seen: unknown[] = [];
  const services = { producePartitions: async (p: any) => { seen.push(p); return new Map(p.entries.map((e: any) => [partitionKey(e.topic, e.partition), { errorCode: 0, errorMessage: null, baseOffset: 7n, logAppendTimeMs: -1n, logStartOffset: 0n, recordErrors: [] }])); } };
  const plain = await buildRecordBatch({ records: [{ value: Buffer.from('x') }] });
  const zstd = await buildRecordBatch({ records: [{ value: Buffer.from('x') }], compression: Compression.Zstd });
  const req = (acks: number, records: (Buffer | null)[]) => ({ transactionalId: null, acks, timeoutMs: 100, topicData: [{ name: 't', partitionData: records.map((r, index) => ({ index, records: r })) }] });
  assert.equal(await produceHandler.handle(req(0, [plain]), ctx(7, services)), null);
  const r6: any = await produceHandler.handle(req(1, [plain, zstd, null]), ctx(6, services));
  assert.deepEqual(r6.responses[0].partitionResponses.map((p: any) => p.errorCode), [0, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, ErrorCode.CORRUPT_MESSAGE]);
  assert.equal(r6.responses[0].partitionResponses[0].baseOffset, 7n);
  const r7: any = await produceHandler.handle(req(1, [zstd]), ctx(7, services));
  assert.equal(r7.responses[0].partitionResponses[0].errorCode, 0, 'zstd is fine from v7');
  const bad: any = await produceHandler.handle(req(2, [plain]), ctx(7, services));
  assert.equal(bad.responses[0].partitionResponses[0].errorCode, ErrorCode.INVALID_REQUIRED_ACKS);
});

test('Metadata: all topics, unknown topics, auto-creation when allowed', async () => {
  let topics: TopicView[] = [topicT];
  const created: string[][] = [];
  const services: MetadataServices = {
    metadata: () => view(topics), autoCreateTopicsEnable: true,
    autoCreateTopics: async (names) => { created.push(names); topics = [...topics, ...names.map((name) => ({ ...topicT, name, id: 'AAAAAAAAAAAAAAAAAAAAAg' }))]; },
  };
  const all: any = await metadataHandler.handle({ topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }, ctx(12, services));
  assert.deepEqual(all.topics.map((t: any) => t.name), ['t']);
  assert.equal(all.topics[0].partitions[0].leaderEpoch, 3);
  assert.equal(all.clusterId, 'cid');
  const noAuto: any = await metadataHandler.handle({ topics: [{ name: 'new', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }, ctx(12, services));
  assert.equal(noAuto.topics[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const auto: any = await metadataHandler.handle({ topics: [{ name: 'new', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }, ctx(12, services));
  assert.equal(auto.topics[0].errorCode, 0);
  assert.deepEqual(created, [['new']]);
});

test('Fetch: v13 topic ids, unknown ids, and an incremental session answering only what changed', async () => {
  const reads: FetchParams[] = [];
  let hw = 5n;
  const services = {
    metadata: () => view([topicT]),
    fetchSessions: new FetchSessionCache(10, new ManualClock()),
    fetchPartitions: async (p: FetchParams): Promise<PartitionFetchResult[]> => {
      reads.push(p);
      return p.partitions.map(() => ({ errorCode: 0, highWatermark: hw, lastStableOffset: hw, logStartOffset: 0n, abortedTransactions: null, preferredReadReplica: -1, records: null }));
    },
  };
  const req = (sessionId: number, sessionEpoch: number, ids: string[]) => ({
    ...defaultMessage<FetchRequest>('FetchRequest', 13), sessionId, sessionEpoch, maxWaitMs: 0, minBytes: 1, maxBytes: 1000,
    topics: ids.map((topicId) => ({ topic: '', topicId, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 100, replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA' }] })),
  });
  const first: any = await fetchHandler.handle(req(0, 0, [topicT.id, 'AAAAAAAAAAAAAAAAAAAAAw']), ctx(13, services));
  assert.ok(first.sessionId > 0);
  assert.deepEqual(first.responses.map((t: any) => [t.topicId, t.partitions[0].errorCode]), [[topicT.id, 0], ['AAAAAAAAAAAAAAAAAAAAAw', ErrorCode.UNKNOWN_TOPIC_ID]]);
  assert.equal(reads[0]!.partitions[0]!.topic, 't', 'the replica manager reads by name');
  const same: any = await fetchHandler.handle(req(first.sessionId, 1, []), ctx(13, services));
  assert.deepEqual(same.responses.map((t: any) => t.topicId), ['AAAAAAAAAAAAAAAAAAAAAw'], 'only the erroring partition is repeated');
  hw = 6n;
  const moved: any = await fetchHandler.handle(req(first.sessionId, 2, []), ctx(13, services));
  assert.ok(moved.responses.some((t: any) => t.topicId === topicT.id && t.partitions[0].highWatermark === 6n));
  const stale: any = await fetchHandler.handle(req(first.sessionId, 1, []), ctx(13, services));
  assert.equal(stale.errorCode, ErrorCode.INVALID_FETCH_SESSION_EPOCH);
});

test('DescribeTopicPartitions pages through partitions with a cursor', async () => {
  const { describeTopicPartitionsHandler } = await import('../../src/broker/handlers/75-describe-topic-partitions.js');
  const mk = (name: string, n: number): TopicView => ({ ...topicT, name, partitions: Array.from({ length: n }, (_, partition) => ({ ...topicT.partitions[0]!, partition })) });
  const services = { metadata: () => view([mk('b', 3), mk('a', 2)]) };
  const first: any = describeTopicPartitionsHandler.handle({ topics: [], responsePartitionLimit: 4, cursor: null }, ctx(0, services));
  assert.deepEqual(first.topics.map((t: any) => [t.name, t.partitions.map((p: any) => p.partitionIndex)]), [['a', [0, 1]], ['b', [0, 1]]]);
  assert.deepEqual(first.nextCursor, { topicName: 'b', partitionIndex: 2 });
  const second: any = describeTopicPartitionsHandler.handle({ topics: [], responsePartitionLimit: 4, cursor: first.nextCursor }, ctx(0, services));
  assert.deepEqual(second.topics.map((t: any) => [t.name, t.partitions.map((p: any) => p.partitionIndex)]), [['b', [2]]]);
  assert.equal(second.nextCursor, null);
  const unknown: any = describeTopicPartitionsHandler.handle({ topics: [{ name: 'zz' }], responsePartitionLimit: 10, cursor: null }, ctx(0, services));
  assert.equal(unknown.topics[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  // KIP-966's fields: the partition's ELR and last known ELR, empty lists when it has none.
  const elr: TopicView = { ...topicT, name: 'e', partitions: [{ ...topicT.partitions[0]!, leader: -1, isr: [], elr: [2, 3], lastKnownElr: [3] }, { ...topicT.partitions[0]!, partition: 1 }] };
  const withElr: any = describeTopicPartitionsHandler.handle({ topics: [{ name: 'e' }], responsePartitionLimit: 10, cursor: null }, ctx(0, { metadata: () => view([elr]) }));
  assert.deepEqual(withElr.topics[0].partitions.map((p: any) => [p.eligibleLeaderReplicas, p.lastKnownElr]), [[[2, 3], [3]], [[], []]]);
});

test('ElectLeaders goes to the controller: v0 asks a preferred election, the controller\'s results and NOT_CONTROLLER are the answer', async () => {
  const { electLeadersHandler } = await import('../../src/broker/handlers/43-elect-leaders.js');
  const asked: number[] = [];
  const results = [{ topic: 't', partitionResult: [{ partitionId: 0, errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: null }] }];
  let active = true;
  const services = {
    controller: {
      electLeaders: async (request: { electionType: number }) => {
        asked.push(request.electionType);
        return active ? { errorCode: 0, results } : { errorCode: ErrorCode.NOT_CONTROLLER, results: [] };
      },
    } as never,
  };
  const v0: any = await electLeadersHandler.handle({ electionType: 1, topicPartitions: [{ topic: 't', partitions: [0] }], timeoutMs: 100 }, ctx(0, services));
  assert.deepEqual(v0.replicaElectionResults, results);
  const v2: any = await electLeadersHandler.handle({ electionType: 1, topicPartitions: null, timeoutMs: 100 }, ctx(2, services));
  assert.equal(v2.errorCode, 0);
  active = false;
  const refused: any = await electLeadersHandler.handle({ electionType: 0, topicPartitions: null, timeoutMs: 100 }, ctx(2, services));
  assert.equal(refused.errorCode, ErrorCode.NOT_CONTROLLER);
  assert.deepEqual(asked, [0, 1, 0], 'v0 has no election type: preferred');
});
