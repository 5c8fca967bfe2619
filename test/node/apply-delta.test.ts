// A broker follows each metadata delta (Kafka's ReplicaManager.applyDelta): partitions it leads are
// opened and served, a partition whose leadership moves to another broker becomes a follower and
// answers NOT_LEADER_OR_FOLLOWER, a deleted topic or a replica reassigned away is stopped and its
// directory deleted, topic configs reach that topic's partitions, and a snapshot that drops a topic
// deletes it. Everything here is the real node: the Raft metadata log, the controller, the broker
// and the storage engine, on a MemoryFileSystem (the in-memory server's own setup, without sockets).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Broker } from '../../src/node/broker.js';
import { diskBackend, type DiskBackend } from '../../src/node/disk-backend.js';
import type { LogMetadata } from '../../src/node/metadata-log.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import type { EmittedRecord } from '../../src/controller/index.js';
import { MetadataDelta, imageToRecords, metadataRecord, provenance, serializeMetadataRecord, type MetadataRecord } from '../../src/metadata/index.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync, iterateBatches, iterateRecords } from '../../src/records/index.js';
import { MemoryFileSystem } from '../../src/storage/index.js';
import { partitionKey, systemClock } from '../../src/util/index.js';

const DATA_DIR = '/logline';
const NODE_ID = 1;
/** Another broker of the cluster: it never runs here, it is only named as leader or replica. */
const OTHER = 2;

interface Node {
  broker: Broker;
  disk: DiskBackend;
  md: LogMetadata;
  fs: MemoryFileSystem;
  /** Calls of the LogFactory (partition logs opened) and of the topic config resolution. */
  calls: { openLog: number; topicConfig: number };
  errors: string[];
}

async function startNode(config: Record<string, string> = {}): Promise<Node> {
  const fs = new MemoryFileSystem();
  const errors: string[] = [];
  const logger = { info() {}, warn() {}, error: (m: string) => { errors.push(m); } };
  // No preferred-leader rebalance: the test moves leaderships itself.
  const brokerConfig = parseBrokerConfig({ 'node.id': String(NODE_ID), 'auto.leader.rebalance.enable': 'false', ...config });
  const disk = await diskBackend({ dataDir: DATA_DIR, fs, nodeId: NODE_ID, brokerConfig, clock: systemClock, logger });
  const calls = { openLog: 0, topicConfig: 0 };
  const broker = new Broker({
    ...disk, nodeId: NODE_ID, clock: systemClock,
    openLog: (topic, partition, topicId) => { calls.openLog++; return disk.openLog(topic, partition, topicId); },
    minInsyncReplicas: (topic) => { calls.topicConfig++; return disk.minInsyncReplicas(topic); },
  });
  await broker.replicasLoaded();
  await broker.register([{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9092, securityProtocol: 0 }]);
  return { broker, disk, md: disk.metadata, fs, calls, errors };
}

async function stopNode(n: Node): Promise<void> {
  n.broker.lifecycle?.close();
  n.broker.txn.close();
  n.broker.replicaManager.fetchPurgatory.dropAll();
  n.broker.replicaManager.producePurgatory.dropAll();
  await n.broker.settled();
  await n.disk.logs.removalsDone();
  await n.disk.close();
}

/** Commits records to the metadata log and waits until the broker has applied them. */
async function commit(n: Node, records: MetadataRecord[]): Promise<void> {
  await n.md.commit(records as unknown as EmittedRecord[]);
  await n.broker.settled();
}

function topicId(i: number): string {
  const id = Buffer.alloc(16, 0);
  id.writeUInt32BE(0x10000 + i, 12);
  return id.toString('base64url');
}

/**
 * A topic whose partitions have replicas on this broker and OTHER, led here (epoch 0). OTHER never
 * fetches in these tests, so only this broker is in the ISR: the high watermark follows its writes.
 */
function topicRecords(name: string, id: string, partitions: number): MetadataRecord[] {
  return [
    metadataRecord('TopicRecord', { name, topicId: id }),
    ...Array.from({ length: partitions }, (_, partitionId) => metadataRecord('PartitionRecord', {
      partitionId, topicId: id, replicas: [NODE_ID, OTHER], isr: [NODE_ID], leader: NODE_ID, leaderEpoch: 0, partitionEpoch: 0,
    })),
  ] as MetadataRecord[];
}

const moveLeader = (id: string, partitionId: number, leader: number) =>
  metadataRecord('PartitionChangeRecord', { topicId: id, partitionId, leader }) as MetadataRecord;

const batch = (...values: string[]) => buildRecordBatchSync({ records: values.map((v, i) => ({ key: null, value: Buffer.from(v), timestamp: 1_700_000_000_000 + i })) });

async function produce(n: Node, topic: string, partition: number, acks: number, ...values: string[]) {
  const out = await n.broker.replicaManager.produce(acks, 5000, [{ topic, partition, records: batch(...values) }]);
  return out.get(partitionKey(topic, partition))!;
}

async function fetchValues(n: Node, topic: string, partition: number): Promise<{ errorCode: number; values: string[] }> {
  const [r] = await n.broker.replicaManager.fetch({
    maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0,
    partitions: [{ topic, partition, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }],
  });
  const values: string[] = [];
  for (const b of iterateBatches(r!.records ?? Buffer.alloc(0))) {
    for (const rec of iterateRecords(b, b.bytes().subarray(61))) values.push(rec.value!.toString());
  }
  return { errorCode: r!.errorCode, values };
}

/** Directories of the log dir belonging to a partition (including one being deleted). */
function partitionDirs(n: Node, topic: string, partition: number): string[] {
  return n.fs.list(DATA_DIR).filter((d) => d === `${topic}-${partition}` || d.startsWith(`${topic}-${partition}.`));
}

test('a partition led here is opened and served; moved to another broker it follows and refuses Produce and Fetch; moved back it leads at the new epoch with its data', async () => {
  const n = await startNode();
  try {
    const id = topicId(1);
    await commit(n, topicRecords('moving', id, 2));
    const p = n.broker.replicaManager.partition('moving', 0)!;
    assert.ok(p.isLeader);
    assert.equal(p.leaderEpoch, 0);
    assert.deepEqual(p.isr, [NODE_ID], 'the ISR is the registration\'s');
    assert.equal((await produce(n, 'moving', 0, -1, 'a', 'b')).errorCode, 0);
    assert.deepEqual(await fetchValues(n, 'moving', 0), { errorCode: 0, values: ['a', 'b'] });

    await commit(n, [moveLeader(id, 0, OTHER)]);
    const follower = n.broker.replicaManager.partition('moving', 0)!;
    assert.equal(follower, p, 'the same replica, now a follower (its log stays open)');
    assert.equal(follower.isLeader, false);
    assert.equal(follower.leaderId, OTHER);
    assert.equal(follower.leaderEpoch, 1);
    assert.equal((await produce(n, 'moving', 0, 1, 'c')).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal((await fetchValues(n, 'moving', 0)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.ok(n.broker.replicaManager.partition('moving', 1)!.isLeader, 'the other partition is untouched');

    await commit(n, [moveLeader(id, 0, NODE_ID)]);
    assert.ok(p.isLeader);
    assert.equal(p.leaderEpoch, 2);
    assert.deepEqual(await fetchValues(n, 'moving', 0), { errorCode: 0, values: ['a', 'b'] }, 'the data written before is still there');
    assert.equal((await produce(n, 'moving', 0, -1, 'c')).baseOffset, 2n);
    assert.deepEqual((await fetchValues(n, 'moving', 0)).values, ['a', 'b', 'c']);
    assert.deepEqual(n.errors, []);
  } finally {
    await stopNode(n);
  }
});

test('an acks=all produce waiting on a partition is answered NOT_LEADER_OR_FOLLOWER when its leadership moves away', async () => {
  const n = await startNode();
  try {
    const id = topicId(2);
    await commit(n, topicRecords('waiting', id, 1));
    const p = n.broker.replicaManager.partition('waiting', 0)!;
    // Hold the high watermark back so the write waits in the produce purgatory, as it will once
    // followers must catch up.
    p.maybeAdvanceHighWatermark = () => false;
    const pending = produce(n, 'waiting', 0, -1, 'x');
    await new Promise((r) => setImmediate(r));
    assert.equal(n.broker.replicaManager.producePurgatory.pending, 1);
    await commit(n, [moveLeader(id, 0, OTHER)]);
    assert.equal((await pending).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(n.broker.replicaManager.producePurgatory.pending, 0);
  } finally {
    await stopNode(n);
  }
});

test('a deleted topic and a replica reassigned away are stopped and their directories deleted', async () => {
  const n = await startNode();
  try {
    const gone = topicId(3);
    const kept = topicId(4);
    await commit(n, [...topicRecords('gone', gone, 1), ...topicRecords('kept', kept, 2)]);
    assert.equal((await produce(n, 'gone', 0, 1, 'x')).errorCode, 0);
    assert.deepEqual(partitionDirs(n, 'gone', 0), ['gone-0']);

    await commit(n, [metadataRecord('RemoveTopicRecord', { topicId: gone }) as MetadataRecord]);
    assert.equal(n.broker.replicaManager.partition('gone', 0), undefined);
    assert.equal((await produce(n, 'gone', 0, 1, 'y')).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    await n.disk.logs.removalsDone();
    assert.deepEqual(partitionDirs(n, 'gone', 0), [], 'the directory is deleted');

    // Partition 1 of `kept` moves entirely to the other broker.
    await commit(n, [metadataRecord('PartitionChangeRecord', { topicId: kept, partitionId: 1, replicas: [OTHER], isr: [OTHER], leader: OTHER }) as MetadataRecord]);
    assert.equal(n.broker.replicaManager.partition('kept', 1), undefined);
    await n.disk.logs.removalsDone();
    assert.deepEqual(partitionDirs(n, 'kept', 1), []);
    assert.ok(n.broker.replicaManager.partition('kept', 0)!.isLeader, 'the rest of the topic stays');
    assert.deepEqual(partitionDirs(n, 'kept', 0), ['kept-0']);
  } finally {
    await stopNode(n);
  }
});

test('configs set on a topic apply to its partitions and logs only; set as the cluster default they apply to every topic that does not override them', async () => {
  const n = await startNode();
  try {
    await commit(n, [...topicRecords('strict', topicId(5), 2), ...topicRecords('lax', topicId(6), 1)]);
    // Single ISR member here, so min.insync.replicas=3 refuses acks=all.
    await commit(n, [metadataRecord('ConfigRecord', { resourceType: 2, resourceName: 'strict', name: 'min.insync.replicas', value: '3' }) as MetadataRecord]);
    for (const partition of [0, 1]) assert.equal((await produce(n, 'strict', partition, -1, 'x')).errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
    assert.equal((await produce(n, 'strict', 0, 1, 'x')).errorCode, 0, 'acks=1 still works');
    assert.equal((await produce(n, 'lax', 0, -1, 'x')).errorCode, 0);

    await commit(n, [metadataRecord('ConfigRecord', { resourceType: 2, resourceName: 'strict', name: 'min.insync.replicas', value: null }) as MetadataRecord]);
    assert.equal((await produce(n, 'strict', 1, -1, 'x')).errorCode, 0, 'removing the override restores the default');

    // The storage engine's logs follow their topic's configs too.
    const retentionMs = (topic: string) => n.disk.logs.logs.get(`${topic}-0`)!.config.retentionMs;
    await commit(n, [metadataRecord('ConfigRecord', { resourceType: 2, resourceName: 'strict', name: 'retention.ms', value: '60000' }) as MetadataRecord]);
    assert.equal(retentionMs('strict'), 60000);
    assert.equal(retentionMs('lax'), 604800000);

    // Cluster-wide dynamic defaults (IncrementalAlterConfigs on the broker resource '').
    await commit(n, [
      metadataRecord('ConfigRecord', { resourceType: 4, resourceName: '', name: 'min.insync.replicas', value: '3' }),
      metadataRecord('ConfigRecord', { resourceType: 4, resourceName: '', name: 'log.retention.ms', value: '120000' }),
    ] as MetadataRecord[]);
    assert.equal((await produce(n, 'lax', 0, -1, 'x')).errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
    assert.equal((await produce(n, 'strict', 1, -1, 'x')).errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
    assert.equal(retentionMs('lax'), 120000);
    assert.equal(retentionMs('strict'), 60000, 'the topic\'s own setting wins');
  } finally {
    await stopNode(n);
  }
});

test('a snapshot that no longer holds a topic deletes its partitions', async () => {
  const n = await startNode();
  try {
    const dropped = topicId(7);
    await commit(n, [...topicRecords('dropped', dropped, 1), ...topicRecords('stays', topicId(8), 1)]);
    assert.equal((await produce(n, 'dropped', 0, 1, 'x')).errorCode, 0);
    // The snapshot a follower would fetch from a leader that has seen the topic deleted.
    const current = n.md.image;
    const delta = new MetadataDelta(current);
    delta.replay(metadataRecord('RemoveTopicRecord', { topicId: dropped }) as MetadataRecord);
    const endOffset = current.provenance.lastContainedOffset + 2;
    const image = delta.apply(provenance(endOffset - 1, current.provenance.lastContainedEpoch));
    const data = buildRecordBatchSync({ records: imageToRecords(image).map((r) => ({ key: null, value: serializeMetadataRecord(r) })), baseTimestamp: -1 });
    (n.md as unknown as { restore(s: { id: { endOffset: number; epoch: number }; data: Uint8Array }): void })
      .restore({ id: { endOffset, epoch: current.provenance.lastContainedEpoch }, data: new Uint8Array(data) });
    await n.broker.settled();
    assert.equal(n.broker.replicaManager.partition('dropped', 0), undefined);
    await n.disk.logs.removalsDone();
    assert.deepEqual(partitionDirs(n, 'dropped', 0), []);
    assert.ok(n.broker.replicaManager.partition('stays', 0)!.isLeader, 'a topic the snapshot re-states is left as it is');
    assert.deepEqual(n.errors, []);
  } finally {
    await stopNode(n);
  }
});

test('with 10,000 partitions here, one PartitionChangeRecord or one topic config change touches only what it names', { timeout: 300_000 }, async () => {
  // Small index files: the memory file system holds each preallocated index in full (2 x 10 MiB a log by default).
  const n = await startNode({ 'log.index.size.max.bytes': '4096' });
  try {
    const TOPICS = 100;
    const PARTITIONS = 100;
    const records: MetadataRecord[] = [];
    for (let t = 0; t < TOPICS; t++) records.push(...topicRecords(`many-${t}`, topicId(100 + t), PARTITIONS));
    await commit(n, records);
    const rm = n.broker.replicaManager;
    assert.equal([...rm.allPartitions()].length, TOPICS * PARTITIONS);
    assert.equal(n.calls.openLog, TOPICS * PARTITIONS);
    assert.equal(n.calls.topicConfig, TOPICS, 'configs resolved once per topic, not per partition');
    const epochs = () => new Map([...rm.allPartitions()].map((p) => [partitionKey(p.topic, p.index), p.partitionEpoch]));
    const before = epochs();

    const opened = n.calls.openLog;
    const resolved = n.calls.topicConfig;
    await commit(n, [moveLeader(topicId(100 + 42), 7, OTHER)]);
    assert.equal(n.calls.openLog - opened, 0, 'no log opened');
    assert.equal(n.calls.topicConfig - resolved, 0, 'no topic config resolved (a rescan resolves each topic\'s)');
    const after = epochs();
    const changed = [...after].filter(([k, e]) => before.get(k) !== e).map(([k]) => k);
    assert.deepEqual(changed, [partitionKey('many-42', 7)], 'only the partition the record names changed');
    assert.equal(rm.partition('many-42', 7)!.isLeader, false);

    await commit(n, [metadataRecord('ConfigRecord', { resourceType: 2, resourceName: 'many-3', name: 'min.insync.replicas', value: '2' }) as MetadataRecord]);
    assert.equal(n.calls.topicConfig - resolved, 1, 'the changed topic\'s config is resolved once');
    const strict = [...rm.allPartitions()].filter((p) => p.minInsyncReplicas === 2).map((p) => p.topic);
    assert.equal(strict.length, PARTITIONS);
    assert.ok(strict.every((t) => t === 'many-3'));
  } finally {
    await stopNode(n);
  }
});
