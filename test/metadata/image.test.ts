import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MetadataLoader, MetadataImage, imageToRecords, loadSnapshot, metadataRecord, provenance,
  serializeMetadataRecord, deserializeMetadataRecord, type MetadataDelta, type MetadataRecord,
} from '../../src/metadata/index.js';
import { T1, T2, topic, partition, broker } from './helpers.js';

function build(records: MetadataRecord[]): MetadataImage {
  const loader = new MetadataLoader();
  return loader.handleCommit([{ baseOffset: 0, epoch: 1, records }]);
}

test('replaying topics, partition changes, configs and removals gives the image a user expects', () => {
  const image = build([
    broker(1, 10n, false),
    topic('orders', T1), partition(T1, 0, [1]), partition(T1, 1, [1]),
    topic('gone', T2), partition(T2, 0, [1]),
    metadataRecord('PartitionChangeRecord', { topicId: T1, partitionId: 1, leader: -1 }),
    metadataRecord('ConfigRecord', { resourceType: 2, resourceName: 'orders', name: 'retention.ms', value: '1000' }),
    metadataRecord('RemoveTopicRecord', { topicId: T2 }),
  ]);
  assert.equal(image.provenance.lastContainedOffset, 8);
  assert.equal(image.topics.topicsByName.get('orders')?.id, T1);
  assert.equal(image.topics.topicsByName.has('gone'), false);
  assert.equal(image.topics.getPartition(T1, 0)?.leader, 1);
  const p1 = image.topics.getPartition(T1, 1)!;
  assert.equal(p1.leader, -1);
  assert.ok(p1.leaderEpoch > 0, 'a leader change bumps the leader epoch');
  assert.equal(image.cluster.brokers.get(1)?.fenced, false);
});

test('an image written as snapshot records and read back is equal, record for record', () => {
  const image = build([
    broker(1, 10n, false), broker(2, 11n),
    topic('a', T1), partition(T1, 0, [1, 2]), partition(T1, 1, [2, 1]),
    metadataRecord('ConfigRecord', { resourceType: 2, resourceName: 'a', name: 'cleanup.policy', value: 'compact' }),
    metadataRecord('ProducerIdsRecord', { brokerId: 1, brokerEpoch: 10n, nextProducerId: 5000n }),
  ]);
  const records = imageToRecords(image).map((r) => deserializeMetadataRecord(serializeMetadataRecord(r)));
  const again = loadSnapshot(records, image.provenance);
  const bytes = (i: MetadataImage) => imageToRecords(i).map((r) => serializeMetadataRecord(r).toString('hex'));
  assert.deepEqual(bytes(again), bytes(image));
  assert.equal(again.producerIds.nextProducerId, 5000n);
});

test('the loader publishes each commit once, and a late publisher gets the whole image first', () => {
  const loader = new MetadataLoader();
  const seen: string[] = [];
  loader.installPublisher({ name: 'early', onMetadataUpdate: (_d: MetadataDelta, i, m) => { seen.push(`early:${m.kind}:${i.provenance.lastContainedOffset}`); } });
  loader.handleCommit([{ baseOffset: 0, epoch: 1, records: [topic('a', T1), partition(T1, 0, [1])] }]);
  loader.installPublisher({ name: 'late', onMetadataUpdate: (d, _i, m) => { seen.push(`late:${m.kind}:${d.topics?.createdTopicIds.has(T1)}`); } });
  loader.handleCommit([{ baseOffset: 2, epoch: 1, records: [partition(T1, 1, [1])] }]);
  assert.deepEqual(seen, ['early:log:1', 'late:snapshot:true', 'early:log:2', 'late:log:false']);
  assert.throws(() => loader.handleCommit([{ baseOffset: 1, epoch: 1, records: [topic('b', T2)] }]), /below the next offset/);
  assert.equal(loader.image.topics.topicsById.get(T1)?.partitions.size, 2);
  assert.equal(provenance(2, 1).lastContainedOffset, 2);
});

test('control records move the loader\'s position and nothing else: an empty image stays empty, nothing is published, the next batch comes after them', () => {
  const loader = new MetadataLoader();
  let published = 0;
  loader.installPublisher({ name: 'count', onMetadataUpdate: () => { published++; } });
  // A new cluster's log opens with the leader's epoch-start control record.
  loader.handleControl(0, 1);
  assert.equal(loader.image.provenance.lastContainedOffset, 0);
  assert.ok(loader.image.isEmpty, 'no record changed the image: the controller still bootstraps it');
  loader.handleCommit([{ baseOffset: 1, epoch: 1, records: [broker(1, 1n, true)] }]);
  // Leader changes after it: a broker that replayed them holds everything up to offset 3.
  loader.handleControl(3, 2);
  assert.deepEqual([loader.image.provenance.lastContainedOffset, loader.image.provenance.lastContainedEpoch], [3, 2]);
  assert.equal(loader.image.cluster.broker(1)?.fenced, true);
  loader.handleControl(2, 2);
  assert.equal(loader.image.provenance.lastContainedOffset, 3, 'never backwards');
  assert.throws(() => loader.handleCommit([{ baseOffset: 3, epoch: 2, records: [topic('a', T1)] }]), /below the next offset/);
  loader.handleCommit([{ baseOffset: 4, epoch: 2, records: [topic('a', T1)] }]);
  assert.equal(published, 2, 'only the data batches were published');
});
