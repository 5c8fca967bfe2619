// The per-API authorization table, row by row, at every version the broker serves: with no rights
// each API is refused with its own authorization code in a response that encodes and decodes (a
// shape bug would close the client's connection instead); with every right nothing is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../src/node/index.js';
import { authorizeRequest } from '../../src/broker/authorization.js';
import type { Authz } from '../../src/broker/context.js';
import { ResourceType } from '../../src/security/index.js';
import { ApiKey, ErrorCode, apiInfo, decodeResponse, defaultMessage, encodeResponseFrame } from '../../src/protocol/index.js';

const E = ErrorCode;
const AUTH_CODES = new Set<number>([E.TOPIC_AUTHORIZATION_FAILED, E.GROUP_AUTHORIZATION_FAILED, E.CLUSTER_AUTHORIZATION_FAILED, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]);
const denyAll: Authz = { allowed: () => false, allowedAny: () => false };
const allowAll: Authz = { allowed: () => true, allowedAny: () => true };

const topicParts = (partitionsField: string, partition: object) => [{ name: 't', topic: 't', [partitionsField]: [partition] }];
/** A request of each API naming something to refuse (fields a version lacks are ignored by the rules). */
const SAMPLES: Record<number, object> = {
  [ApiKey.Produce]: { transactionalId: null, acks: 1, topicData: [{ name: 't', partitionData: [{ index: 0, records: null }] }] },
  [ApiKey.Fetch]: { replicaId: -1, replicaState: { replicaId: -1, replicaEpoch: -1n }, topics: [{ topic: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [{ partition: 0 }] }] },
  [ApiKey.ListOffsets]: { topics: topicParts('partitions', { partitionIndex: 0 }) },
  [ApiKey.Metadata]: { topics: [{ name: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: true },
  [ApiKey.OffsetCommit]: { groupId: 'g', topics: topicParts('partitions', { partitionIndex: 0 }) },
  [ApiKey.OffsetFetch]: { groupId: 'g', topics: [{ name: 't', partitionIndexes: [0] }], groups: [{ groupId: 'g', topics: [{ name: 't', partitionIndexes: [0] }] }] },
  [ApiKey.FindCoordinator]: { key: 'g', keyType: 0, coordinatorKeys: ['g'] },
  [ApiKey.JoinGroup]: { groupId: 'g' }, [ApiKey.Heartbeat]: { groupId: 'g' }, [ApiKey.LeaveGroup]: { groupId: 'g' }, [ApiKey.SyncGroup]: { groupId: 'g' },
  [ApiKey.DescribeGroups]: { groups: ['g'] },
  [ApiKey.CreateTopics]: { topics: [{ name: 't', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }] },
  [ApiKey.DeleteTopics]: { topicNames: ['t'], topics: [{ name: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }] },
  [ApiKey.DeleteRecords]: { topics: topicParts('partitions', { partitionIndex: 0, offset: 0n }) },
  [ApiKey.InitProducerId]: { transactionalId: 'tx' },
  [ApiKey.OffsetForLeaderEpoch]: { replicaId: -1, topics: [{ topic: 't', partitions: [{ partition: 0 }] }] },
  [ApiKey.AddPartitionsToTxn]: { v3AndBelowTransactionalId: 'tx', v3AndBelowTopics: [{ name: 't', partitions: [0] }], transactions: [] },
  [ApiKey.AddOffsetsToTxn]: { transactionalId: 'tx', groupId: 'g' },
  [ApiKey.EndTxn]: { transactionalId: 'tx' },
  [ApiKey.WriteTxnMarkers]: { markers: [{ producerId: 1n, topics: [{ name: 't', partitionIndexes: [0] }] }] },
  [ApiKey.TxnOffsetCommit]: { transactionalId: 'tx', groupId: 'g', topics: topicParts('partitions', { partitionIndex: 0 }) },
  [ApiKey.DescribeConfigs]: { resources: [{ resourceType: 2, resourceName: 't' }, { resourceType: 4, resourceName: '1' }, { resourceType: 32, resourceName: 'g' }] },
  [ApiKey.AlterConfigs]: { resources: [{ resourceType: 2, resourceName: 't', configs: [] }] },
  [ApiKey.IncrementalAlterConfigs]: { resources: [{ resourceType: 4, resourceName: '', configs: [] }] },
  [ApiKey.AlterClientQuotas]: { entries: [{ entity: [{ entityType: 'user', entityName: 'alice' }], ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }] }], validateOnly: false },
  [ApiKey.AlterUserScramCredentials]: { deletions: [{ name: 'alice', mechanism: 1 }], upsertions: [] },
  [ApiKey.CreatePartitions]: { topics: [{ name: 't', count: 2, assignments: null }] },
  [ApiKey.DeleteGroups]: { groupsNames: ['g'] },
  [ApiKey.OffsetDelete]: { groupId: 'g', topics: topicParts('partitions', { partitionIndex: 0 }) },
  [ApiKey.DescribeProducers]: { topics: [{ name: 't', partitionIndexes: [0] }] },
  [ApiKey.DescribeTransactions]: { transactionalIds: ['tx'] },
  [ApiKey.ConsumerGroupHeartbeat]: { groupId: 'g', subscribedTopicNames: ['t'] },
  [ApiKey.ConsumerGroupDescribe]: { groupIds: ['g'] },
  [ApiKey.ShareGroupDescribe]: { groupIds: ['g'] },
  [ApiKey.InitializeShareGroupState]: { groupId: 'g', topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [{ partition: 0, stateEpoch: 0, startOffset: 0n }] }] },
  [ApiKey.ReadShareGroupState]: { groupId: 'g', topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [{ partition: 0, leaderEpoch: 0 }] }] },
  [ApiKey.WriteShareGroupState]: { groupId: 'g', topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [{ partition: 0, stateEpoch: 0, leaderEpoch: 0, startOffset: 0n, stateBatches: [] }] }] },
  [ApiKey.DeleteShareGroupState]: { groupId: 'g', topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [{ partition: 0 }] }] },
  [ApiKey.ReadShareGroupStateSummary]: { groupId: 'g', topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [{ partition: 0, leaderEpoch: 0 }] }] },
  [ApiKey.DescribeShareGroupOffsets]: { groups: [{ groupId: 'g', topics: [{ topicName: 't', partitions: [0] }] }] },
  [ApiKey.AlterShareGroupOffsets]: { groupId: 'g', topics: [{ topicName: 't', partitions: [{ partitionIndex: 0, startOffset: 0n }] }] },
  [ApiKey.DeleteShareGroupOffsets]: { groupId: 'g', topics: [{ topicName: 't' }] },
  [ApiKey.DescribeTopicPartitions]: { topics: [{ name: 't' }] },
  [ApiKey.ElectLeaders]: { topicPartitions: [{ topic: 't', partitions: [0] }] },
};
/** What a handler answered, for the rules that check the answer (Fetch: partitions of a fetch session are not in the request). */
const ANSWERS: Record<number, object> = {
  [ApiKey.Fetch]: { responses: [{ topic: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [{ partitionIndex: 0, errorCode: 0, highWatermark: 5n, records: Buffer.alloc(0) }] }] },
};
/**
 * Rules that refuse nothing by design: the ACL APIs decide in their handlers; the list APIs filter
 * their answers; the SASL exchange comes before there is a principal to check (as in Kafka).
 */
const FILTERS_ONLY = new Set<number>([ApiKey.ApiVersions, ApiKey.DescribeAcls, ApiKey.CreateAcls, ApiKey.DeleteAcls, ApiKey.ListGroups, ApiKey.ListTransactions,
  ApiKey.SaslHandshake, ApiKey.SaslAuthenticate]);

function codesIn(value: unknown, out: number[] = []): number[] {
  if (Array.isArray(value)) for (const v of value) codesIn(v, out);
  else if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const [k, v] of Object.entries(value)) {
      if ((k === 'errorCode' || k === 'partitionErrorCode') && typeof v === 'number') out.push(v);
      else codesIn(v, out);
    }
  }
  return out;
}

test('every API the broker serves, at every version: refused with its authorization code without rights, in a response that encodes; nothing refused with every right', async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'] });
  const apis = server.broker!.router.supportedVersions();
  await server.close();
  const metadata = { topicById: () => ({ name: 't' }) };
  let checked = 0;
  for (const { apiKey, minVersion, maxVersion } of apis) {
    const info = apiInfo(apiKey)!;
    for (let v = minVersion; v <= maxVersion; v++) {
      const request = { ...defaultMessage<Record<string, unknown>>(info.request.name, v), ...SAMPLES[apiKey] };
      const ctx = { apiVersion: v, services: { metadata: () => metadata } } as any;
      const granted = authorizeRequest(apiKey, request, allowAll, ctx);
      assert.ok(granted === undefined || (granted !== 'unlisted' && !('respond' in granted)), `${info.name} v${v} refused with every right`);
      const outcome = authorizeRequest(apiKey, request, denyAll, ctx);
      assert.notEqual(outcome, 'unlisted', `${info.name} has no rule`);
      if (FILTERS_ONLY.has(apiKey)) continue;
      assert.ok(outcome !== undefined && outcome !== 'unlisted', `${info.name} v${v}: nothing refused without rights`);
      const body = 'respond' in outcome ? outcome.respond : outcome.after!({ ...defaultMessage<object>(info.response.name, v), ...ANSWERS[apiKey] });
      if (body === null) continue;
      const frame = Buffer.concat(encodeResponseFrame(apiKey, v, 7, body));
      const decoded = decodeResponse(apiKey, v, frame.subarray(4)).body;
      const codes = codesIn(decoded);
      // Versions without any error code answer with nothing instead, as Kafka does (DescribeLogDirs v0-2: no directories).
      const silent = apiKey === ApiKey.DescribeLogDirs && v < 3;
      assert.ok(codes.some((c) => AUTH_CODES.has(c)) || silent, `${info.name} v${v}: no authorization code in ${JSON.stringify(decoded, (_k, x) => typeof x === 'bigint' ? String(x) : x)}`);
      checked++;
    }
  }
  assert.ok(checked > 200, `only ${checked} API versions checked`);
});

test('group configs need the operation on the group, client-metrics configs on the cluster (Kafka\'s AuthHelper)', () => {
  const onlyGroups: Authz = { allowed: (_op, type) => type === ResourceType.GROUP, allowedAny: () => false };
  const request = { resources: [{ resourceType: 32, resourceName: 'g' }, { resourceType: 16, resourceName: 's' }, { resourceType: 2, resourceName: 't' }] };
  const outcome = authorizeRequest(ApiKey.DescribeConfigs, request, onlyGroups, {} as never) as { request: typeof request; after: (r: object) => { results: { resourceType: number; errorCode: number }[] } };
  assert.deepEqual(outcome.request.resources.map((r) => r.resourceType), [32]);
  assert.deepEqual(outcome.after({ results: [] }).results.map((r) => [r.resourceType, r.errorCode]), [[16, E.CLUSTER_AUTHORIZATION_FAILED], [2, E.TOPIC_AUTHORIZATION_FAILED]]);
});
