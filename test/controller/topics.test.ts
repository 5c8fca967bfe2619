import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  createTopics, deleteTopics, createPartitions, placeReplicas, topicNameError, RecordType,
  type ControllerView, type TopicSummary, type PlacementBroker,
} from '../../src/controller/index.js';
import { ErrorCode, ZERO_UUID, type CreateTopicsRequest } from '../../src/protocol/index.js';
import { Prng } from '../../src/util/index.js';

function view(topics: TopicSummary[], brokers: PlacementBroker[] = [{ id: 1, rack: null }]): ControllerView {
  return {
    topic: (n) => topics.find((t) => t.name === n),
    topicById: (id) => topics.find((t) => t.id === id),
    topicNames: () => topics.map((t) => t.name),
    usableBrokers: () => brokers,
  };
}
const defaults = { numPartitions: 1, defaultReplicationFactor: 1, partitionsPerRequestMax: 10_000 };
const noConfigErrors = () => null;
const topic = (name: string, extra: Partial<CreateTopicsRequest['topics'][number]> = {}) =>
  ({ name, numPartitions: -1, replicationFactor: -1, assignments: [], configs: [], ...extra });
const request = (topics: CreateTopicsRequest['topics'], validateOnly = false): CreateTopicsRequest => ({ topics, timeoutMs: 1000, validateOnly });

test('topic names: legal characters, 249 characters, "." and ".." refused', () => {
  assert.equal(topicNameError('orders.v1_x-2'), null);
  assert.equal(topicNameError('a'.repeat(249)), null);
  assert.match(topicNameError('a'.repeat(250))!, /longer than 249/);
  assert.ok(topicNameError('.'));
  assert.ok(topicNameError('..'));
  assert.ok(topicNameError(''));
  assert.ok(topicNameError('a b'));
  assert.ok(topicNameError('ü'));
});

test('CreateTopics emits a TopicRecord, ConfigRecords and one PartitionRecord per partition', () => {
  const out = createTopics(request([topic('orders', { numPartitions: 3, configs: [{ name: 'retention.ms', value: '1000' }] })]), view([]), defaults, noConfigErrors, new Prng(1));
  assert.equal(out.topics[0]!.errorCode, 0);
  assert.equal(out.topics[0]!.numPartitions, 3);
  assert.notEqual(out.topics[0]!.topicId, ZERO_UUID);
  assert.deepEqual(out.records.map((r) => r.type), [RecordType.Topic, RecordType.Config, RecordType.Partition, RecordType.Partition, RecordType.Partition]);
  const p = out.records[2]!.data;
  assert.deepEqual([p.partitionId, p.leader, p.leaderEpoch, p.replicas, p.isr], [0, 1, 0, [1], [1]]);
});

test('CreateTopics errors: exists, collision, duplicate, bad counts, too few brokers, bad config; validate-only writes nothing', () => {
  const v = view([{ id: 'x', name: 'a.b', partitionCount: 1 }]);
  const out = createTopics(request([
    topic('a.b'), topic('a_b'), topic('dup'), topic('dup'), topic('zero', { numPartitions: 0 }),
    topic('rf', { replicationFactor: 3 }), topic('cfg', { configs: [{ name: 'nope', value: '1' }] }), topic('bad name'),
  ]), v, defaults, (c) => (c.has('nope') ? { key: 'nope', message: 'Unknown topic config name: nope' } : null), new Prng(2));
  assert.deepEqual(out.topics.map((t) => t.errorCode), [
    ErrorCode.TOPIC_ALREADY_EXISTS, ErrorCode.INVALID_TOPIC_EXCEPTION, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST,
    ErrorCode.INVALID_PARTITIONS, ErrorCode.INVALID_REPLICATION_FACTOR, ErrorCode.INVALID_CONFIG, ErrorCode.INVALID_TOPIC_EXCEPTION,
  ]);
  assert.equal(out.records.length, 0);
  const dry = createTopics(request([topic('fine', { numPartitions: 4 })], true), view([]), defaults, noConfigErrors, new Prng(3));
  assert.equal(dry.topics[0]!.errorCode, 0);
  assert.equal(dry.topics[0]!.numPartitions, 4);
  assert.equal(dry.records.length, 0);
});

test('a new topic never gets an existing topic\'s id, even from a generator that repeats (two controllers seeded alike)', () => {
  // What a restarted controller seeded like the last one did: its next ids were ones already in use.
  const first = createTopics(request([topic('a'), topic('b')]), view([]), defaults, noConfigErrors, new Prng(42));
  const existing = first.topics.map((t) => ({ name: t.name, id: t.topicId, partitionCount: 1 }));
  assert.notEqual(existing[0]!.id, existing[1]!.id);
  const again = createTopics(request([topic('c'), topic('d')]), view(existing), defaults, noConfigErrors, new Prng(42));
  const ids = again.topics.map((t) => t.topicId);
  for (const id of ids) assert.ok(!existing.some((e) => e.id === id), `id ${id} is ${existing.find((e) => e.id === id)?.name}'s`);
  assert.equal(new Set(ids).size, 2);
  const records = again.records.filter((r) => r.type === RecordType.Topic).map((r) => (r.data as { topicId: string }).topicId);
  assert.deepEqual(records, ids, 'the TopicRecords carry the ids answered');
});

test('explicit assignments are honoured and checked', () => {
  const brokers = [1, 2, 3].map((id) => ({ id, rack: null }));
  const ok = createTopics(request([topic('t', { assignments: [{ partitionIndex: 0, brokerIds: [3, 1] }, { partitionIndex: 1, brokerIds: [2, 3] }] })]), view([], brokers), defaults, noConfigErrors, new Prng(4));
  assert.equal(ok.topics[0]!.errorCode, 0);
  assert.deepEqual(ok.records.filter((r) => r.type === RecordType.Partition).map((r) => r.data.replicas), [[3, 1], [2, 3]]);
  for (const assignments of [[{ partitionIndex: 1, brokerIds: [1] }], [{ partitionIndex: 0, brokerIds: [1, 1] }], [{ partitionIndex: 0, brokerIds: [9] }]]) {
    const bad = createTopics(request([topic('t', { assignments })]), view([], brokers), defaults, noConfigErrors, new Prng(5));
    assert.equal(bad.topics[0]!.errorCode, ErrorCode.INVALID_REPLICA_ASSIGNMENT);
  }
  const both = createTopics(request([topic('t', { numPartitions: 2, assignments: [{ partitionIndex: 0, brokerIds: [1] }] })]), view([], brokers), defaults, noConfigErrors, new Prng(6));
  assert.equal(both.topics[0]!.errorCode, ErrorCode.INVALID_REQUEST);
});

test('DeleteTopics by name and by id; unknown ones get the matching error', () => {
  const v = view([{ id: 'AAAAAAAAAAAAAAAAAAAAAQ', name: 't', partitionCount: 1 }]);
  const out = deleteTopics([{ name: 't', topicId: ZERO_UUID }, { name: 'nope', topicId: ZERO_UUID }, { name: null, topicId: 'AAAAAAAAAAAAAAAAAAAAAg' }], v);
  assert.deepEqual(out.results.map((r) => r.errorCode), [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_ID]);
  assert.deepEqual(out.records, [{ type: RecordType.RemoveTopic, version: 0, data: { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ' } }]);
});

test('CreatePartitions only grows, numbering the new partitions after the old', () => {
  const v = view([{ id: 'id1', name: 't', partitionCount: 2 }]);
  const out = createPartitions([{ name: 't', count: 4, assignments: null }, { name: 't2', count: 4, assignments: null }], false, v, () => 1, new Prng(7), 1000);
  assert.deepEqual(out.results.map((r) => r.errorCode), [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
  assert.deepEqual(out.records.map((r) => r.data.partitionId), [2, 3]);
  const shrink = createPartitions([{ name: 't', count: 2, assignments: null }], false, v, () => 1, new Prng(7), 1000);
  assert.equal(shrink.results[0]!.errorCode, ErrorCode.INVALID_PARTITIONS);
});

test('property: placement gives distinct replicas, spreads leaders evenly and racks apart', () => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 60 }), fc.integer({ min: 0, max: 100 }),
    (brokerCount, rackCount, partitions, start) => {
      const brokers = Array.from({ length: brokerCount }, (_, i) => ({ id: i + 1, rack: `r${i % rackCount}` }));
      const rf = Math.min(3, brokerCount);
      const placed = placeReplicas(brokers, partitions, rf, start);
      const leaders = new Map<number, number>();
      for (const replicas of placed) {
        assert.equal(new Set(replicas).size, rf);
        leaders.set(replicas[0]!, (leaders.get(replicas[0]!) ?? 0) + 1);
        const racks = new Set(replicas.map((id) => brokers[id - 1]!.rack));
        assert.equal(racks.size, Math.min(rf, Math.min(rackCount, brokerCount)), `racks of ${replicas}`);
      }
      const counts = [...leaders.values()];
      assert.ok(Math.max(...counts) - Math.min(...counts) <= 1 || leaders.size < brokerCount);
    }));
});
