// ReplicaManager.applyDelta on real metadata deltas: the order of its work (deletes before leaders),
// the seam where follower fetching plugs in (the ReplicaFetchers port), and the leader-epoch
// invariant of a Partition. The broker-level behaviour (Produce/Fetch answers, directories
// deleted, configs) is in test/node/apply-delta.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Partition, ReplicaManager, realScheduler, type ReplicaDeltaPorts, type ReplicaFetchers } from '../../src/replication/index.js';
import { MetadataDelta, MetadataImage, metadataRecord, provenance, type MetadataRecord } from '../../src/metadata/index.js';
import { AssertionError, systemClock } from '../../src/util/index.js';
import { storageLog, metadataApplier } from './helpers.js';

const ME = 1;
const OTHER = 2;
const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
const TOPIC_ID_2 = 'AAAAAAAAAAAAAAAAAAAAAg';

function harness() {
  const events: string[] = [];
  const fetchers: ReplicaFetchers = {
    addFetcherForPartitions: (ps) => { for (const p of ps) events.push(`fetch ${p.topic}-${p.index} from ${p.leaderId} at epoch ${p.leaderEpoch}`); },
    removeFetcherForPartitions: (ps) => { for (const p of ps) events.push(`stop fetching ${p.topic}-${p.index}`); },
  };
  const rm = new ReplicaManager(ME, systemClock, realScheduler, { fetchPurgatoryOperationsMax: 100, producePurgatoryOperationsMax: 100 }, fetchers);
  const ports: ReplicaDeltaPorts = {
    openLog: async (topic, partition) => { events.push(`open ${topic}-${partition}`); return storageLog(); },
    deleteLog: async (topic, partition) => { events.push(`delete ${topic}-${partition}`); },
    topicConfig: () => ({ minInsyncReplicas: 1, maxMessageBytes: undefined }),
  };
  const apply = metadataApplier(rm, ports, () => { events.length = 0; });
  return { rm, events, apply };
}

const topic = (name: string, topicId: string, leader: number) => [
  metadataRecord('TopicRecord', { name, topicId }),
  metadataRecord('PartitionRecord', { partitionId: 0, topicId, replicas: [ME, OTHER], isr: [ME, OTHER], leader, leaderEpoch: 0, partitionEpoch: 0 }),
] as MetadataRecord[];
const leaderOf = (topicId: string, leader: number) => metadataRecord('PartitionChangeRecord', { topicId, partitionId: 0, leader }) as MetadataRecord;

test('a partition led elsewhere is handed to the replica fetchers with its leader and epoch; leading it again stops the fetch', async () => {
  const { rm, events, apply } = harness();
  const created = await apply(...topic('t', TOPIC_ID, OTHER));
  assert.deepEqual(events, ['open t-0', 'stop fetching t-0', 'fetch t-0 from 2 at epoch 0']);
  assert.deepEqual({ followers: created.followers, leaders: created.leaders, opened: created.opened }, { followers: 1, leaders: 0, opened: 1 });
  assert.equal(rm.partition('t', 0)!.isLeader, false);

  await apply(leaderOf(TOPIC_ID, ME));
  assert.deepEqual(events, ['stop fetching t-0']);
  assert.ok(rm.partition('t', 0)!.isLeader);
  assert.equal(rm.partition('t', 0)!.leaderEpoch, 1);

  // No leader at all: a follower with no one to fetch from until an election.
  await apply(leaderOf(TOPIC_ID, -1));
  assert.deepEqual(events, ['stop fetching t-0']);
  assert.equal(rm.partition('t', 0)!.leaderId, -1);
  await apply(leaderOf(TOPIC_ID, OTHER));
  assert.deepEqual(events, ['stop fetching t-0', 'fetch t-0 from 2 at epoch 3']);
});

test('an ISR change at the same leader epoch updates the leader without restarting anything', async () => {
  const { rm, events, apply } = harness();
  await apply(...topic('t', TOPIC_ID, ME));
  const p = rm.partition('t', 0)!;
  const r = await apply(metadataRecord('PartitionChangeRecord', { topicId: TOPIC_ID, partitionId: 0, isr: [ME] }) as MetadataRecord);
  assert.equal(r.leaders, 1);
  assert.deepEqual(events, []);
  assert.equal(rm.partition('t', 0), p);
  assert.deepEqual(p.isr, [ME]);
  assert.equal(p.leaderEpoch, 0);
  assert.equal(p.partitionEpoch, 1);
});

test('a topic deleted and re-created under the same name in one delta loses its old data before the new partition opens', async () => {
  const { rm, events, apply } = harness();
  await apply(...topic('t', TOPIC_ID, ME));
  const old = rm.partition('t', 0)!;
  await apply(metadataRecord('RemoveTopicRecord', { topicId: TOPIC_ID }) as MetadataRecord, ...topic('t', TOPIC_ID_2, ME));
  assert.deepEqual(events.filter((e) => !e.startsWith('stop fetching')), ['delete t-0', 'open t-0']);
  assert.notEqual(rm.partition('t', 0), old);
  assert.equal(old.isLeader, false, 'the old replica is stopped');
  assert.ok(rm.partition('t', 0)!.isLeader);
});

test('a delta touching nothing hosted here does nothing here', async () => {
  const { events, apply } = harness();
  await apply(...topic('t', TOPIC_ID, ME));
  const elsewhere = await apply(
    metadataRecord('TopicRecord', { name: 'far', topicId: TOPIC_ID_2 }) as MetadataRecord,
    metadataRecord('PartitionRecord', { partitionId: 0, topicId: TOPIC_ID_2, replicas: [OTHER], isr: [OTHER], leader: OTHER, leaderEpoch: 0, partitionEpoch: 0 }) as MetadataRecord,
  );
  assert.deepEqual(events, []);
  assert.deepEqual(elsewhere, { deleted: 0, leaders: 0, followers: 0, opened: 0, reconfigured: 0, failed: [] });
});

test('a log that will not open is reported and the rest of the delta still applies', async () => {
  const { rm } = harness();
  const ports: ReplicaDeltaPorts = {
    openLog: async (t) => { if (t === 'bad') throw new Error('disk on fire'); return storageLog(); },
    deleteLog: async () => {},
    topicConfig: () => ({ minInsyncReplicas: 1, maxMessageBytes: undefined }),
  };
  const delta = new MetadataDelta(MetadataImage.EMPTY);
  for (const r of [...topic('bad', TOPIC_ID, ME), ...topic('good', TOPIC_ID_2, ME)]) delta.replay(r);
  const r = await rm.applyDelta(delta, delta.apply(provenance(3, 1)), ports);
  assert.deepEqual(r.failed.map((f) => `${f.topic}-${f.partition}: ${(f.error as Error).message}`), ['bad-0: disk on fire']);
  assert.equal(rm.partition('bad', 0), undefined);
  assert.ok(rm.partition('good', 0)!.isLeader);
});

test('a leader epoch never goes backwards on a partition', () => {
  const p = new Partition('t', 0, storageLog(), -1, -1, ME, 1);
  p.makeLeader({ leader: ME, leaderEpoch: 3, partitionEpoch: 3, isr: [ME] });
  assert.throws(() => p.makeFollower({ leader: OTHER, leaderEpoch: 2, partitionEpoch: 4, isr: [OTHER] }), AssertionError);
  assert.ok(p.isLeader, 'the refused state is not applied');
  assert.equal(p.leaderEpoch, 3);
  assert.throws(() => p.makeLeader({ leader: OTHER, leaderEpoch: 4, partitionEpoch: 4, isr: [OTHER] }), AssertionError, 'makeLeader names this broker');
});

test('a produce to a partition the metadata lists but whose log is still opening gets a retriable NOT_LEADER_OR_FOLLOWER, and succeeds once it is open; nothing is appended twice or lost', async () => {
  const { buildRecordBatchSync } = await import('../../src/records/index.js');
  const { ErrorCode, isRetriable } = await import('../../src/protocol/index.js');
  const { partitionKey } = await import('../../src/util/index.js');
  const rm = new ReplicaManager(ME, systemClock, realScheduler, { fetchPurgatoryOperationsMax: 100, producePurgatoryOperationsMax: 100 });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => { release = resolve; });
  const ports: ReplicaDeltaPorts = {
    // Partition 1's log takes a while to open (a large creation on a loaded disk).
    openLog: async (_topic, partition) => { if (partition === 1) await gate; return storageLog(); },
    deleteLog: async () => {},
    topicConfig: () => ({ minInsyncReplicas: 1, maxMessageBytes: undefined }),
  };
  const delta = new MetadataDelta(MetadataImage.EMPTY);
  for (const r of [
    metadataRecord('TopicRecord', { name: 'slow', topicId: TOPIC_ID }),
    ...[0, 1].map((partitionId) => metadataRecord('PartitionRecord', { partitionId, topicId: TOPIC_ID, replicas: [ME], isr: [ME], leader: ME, leaderEpoch: 0, partitionEpoch: 0 })),
  ] as MetadataRecord[]) delta.replay(r);
  const image = delta.apply(provenance(3, 1));
  const applying = rm.applyDelta(delta, image, ports);
  const records = () => buildRecordBatchSync({ records: [{ key: null, value: Buffer.from('v'), timestamp: 1 }], baseOffset: 0, producerId: -1, producerEpoch: -1, baseSequence: -1, isTransactional: false });
  const produce = async (partition: number) => (await rm.produce(-1, 1000, [{ topic: 'slow', partition, records: records() }])).get(partitionKey('slow', partition))!;
  await new Promise((r) => setImmediate(r));
  const early = await produce(1);
  assert.equal(early.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER, 'listed in the metadata, not open here yet');
  assert.ok(isRetriable(early.errorCode), 'a client retries it');
  assert.equal((await produce(0)).errorCode, 0, 'the partition already open takes writes meanwhile');
  release();
  await applying;
  const late = await produce(1);
  assert.equal(late.errorCode, 0);
  assert.equal(late.baseOffset, 0n, 'the refused attempt appended nothing');
  assert.equal(rm.partition('slow', 1)!.log.logEndOffset, 1);
  assert.equal((await produce(7)).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'a partition the metadata does not have');
});

test('a restarted broker does not lead at the epoch its previous process led: until its own registration is in the image the partition has no leader here', async () => {
  const { rm, events, apply } = harness();
  rm.localIncarnationId = 'AAAAAAAAAAAAAAAAAAAAAw';
  const register = (incarnationId: string, brokerEpoch: bigint) => metadataRecord('RegisterBrokerRecord', {
    brokerId: ME, isMigratingZkBroker: false, incarnationId, brokerEpoch, endPoints: [], features: [], rack: null, fenced: true, inControlledShutdown: false, logDirs: [],
  }) as MetadataRecord;
  // The metadata as the crashed process left it: this broker (another incarnation) leads at epoch 0.
  await apply(register('AAAAAAAAAAAAAAAAAAAABA', 1n), ...topic('t', TOPIC_ID, ME));
  const p = rm.partition('t', 0)!;
  assert.equal(p.isLeader, false);
  assert.equal(p.leaderId, -1);
  assert.deepEqual(events, ['open t-0', 'stop fetching t-0']);
  const produced = await rm.produce(1, 1000, [{ topic: 't', partition: 0, records: Buffer.alloc(0) }]);
  assert.equal([...produced.values()][0]!.errorCode, 6, 'NOT_LEADER_OR_FOLLOWER');
  // This process registers; the controller moved the leadership away in the same batch.
  await apply(register('AAAAAAAAAAAAAAAAAAAAAw', 5n), leaderOf(TOPIC_ID, OTHER));
  assert.deepEqual(events, ['stop fetching t-0', 'fetch t-0 from 2 at epoch 1']);
  // Leadership given back at a new epoch is taken.
  await apply(leaderOf(TOPIC_ID, ME));
  assert.ok(p.isLeader);
  assert.equal(p.leaderEpoch, 2);
});

test('partitions named led here before any registration of this broker (a data directory from before registrations) are led once its registration arrives, if the image still says so', async () => {
  const { rm, apply } = harness();
  rm.localIncarnationId = 'AAAAAAAAAAAAAAAAAAAAAw';
  await apply(...topic('t', TOPIC_ID, ME), ...topic('u', TOPIC_ID_2, ME));
  assert.equal(rm.partition('t', 0)!.isLeader, false);
  // The registration comes alone (no earlier one to replace, so no leadership moved), then u moves away.
  await apply(metadataRecord('RegisterBrokerRecord', {
    brokerId: ME, isMigratingZkBroker: false, incarnationId: 'AAAAAAAAAAAAAAAAAAAAAw', brokerEpoch: 7n, endPoints: [], features: [], rack: null, fenced: true, inControlledShutdown: false, logDirs: [],
  }) as MetadataRecord);
  assert.ok(rm.partition('t', 0)!.isLeader);
  assert.equal(rm.partition('t', 0)!.leaderEpoch, 0);
  assert.ok(rm.partition('u', 0)!.isLeader);
});
